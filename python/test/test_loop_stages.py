"""`tl.range(..., num_stages=N)`: a loop's own pipeline depth in place of the kernel's num_stages, as in Triton
(0 or 1: that loop is not pipelined). On every target against numpy; on the GPU targets the slots in the IR say how
many stages the loop got (NVIDIA: cp.async into swizzled slots; AMD: register copies into padded ones)."""
import re

import numpy as np
import pytest

import tessel
import tessel.language as tl
from tessel.compiler.errors import CompilationError


@tessel.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
           LOOP_STAGES: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=LOOP_STAGES):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def slots(kernel) -> set[int]:
    """The slot counts of the kernel's pipeline buffers."""
    return {int(n) for n in re.findall(r"local_alloc : !tilegpu\.shared<(\d+)x", kernel.asm.get("ttgir", ""))}


@pytest.mark.parametrize("kernel_stages,loop_stages,want", [(3, None, 3), (3, 1, None), (3, 0, None), (1, 2, 2),
                                                             (1, 4, 4), (3, 2, 2), (2, 3, 3)])
def test_a_loop_takes_its_own_stages(rng, target, kernel_stages, loop_stages, want):
    m, n, k = 70, 64, 200
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float32)
    kernel = matmul[(2, 1)](a, b, c, m, n, k, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, LOOP_STAGES=loop_stages,
                            num_stages=kernel_stages)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=2e-3, atol=2e-3 * np.abs(ref).max())
    if target.startswith("cpu"):
        return  # no pipeline: the CPU accepts and ignores num_stages
    assert slots(kernel) == (set() if want is None else {want})


def test_negative_stages_are_an_error_at_the_loop(target):
    f16 = np.dtype(np.float16)
    with pytest.raises(CompilationError, match="num_stages must not be negative") as info:
        matmul.warmup(f16, f16, np.dtype(np.float32), 64, 64, 64, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32,
                      LOOP_STAGES=-1, grid=(1, 1))
    assert "tl.range" in str(info.value)
