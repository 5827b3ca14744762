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


def slots_of_stages(target: str, stages: int | None) -> set[int]:
    """The slots a loop of `stages` stages gets: one per stage; on AMD, from 3 stages on, one fewer (an iteration
    refills the slot it read)."""
    if stages is None:
        return set()
    return {stages - 1 if target.startswith("sim:gfx") and stages >= 3 else stages}


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
    assert slots(kernel) == slots_of_stages(target, want)


def test_negative_stages_are_an_error_at_the_loop(target):
    f16 = np.dtype(np.float16)
    with pytest.raises(CompilationError, match="num_stages must not be negative") as info:
        matmul.warmup(f16, f16, np.dtype(np.float32), 64, 64, 64, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32,
                      LOOP_STAGES=-1, grid=(1, 1))
    assert "tl.range" in str(info.value)


@tessel.jit
def matmul_descriptors(a_desc, b_desc, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr, LOOP_STAGES: tl.constexpr):
    om, on = tl.program_id(0) * BLOCK_M, tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=LOOP_STAGES):
        acc += tl.dot(a_desc.load([om, k * BLOCK_K]), b_desc.load([k * BLOCK_K, on]))
    rm, rn = om + tl.arange(0, BLOCK_M), on + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize("kernel_stages,loop_stages", [(1, 3), (3, 1)])
def test_descriptor_loads_take_the_loops_stages(rng, target, kernel_stages, loop_stages):
    # Blocks of host-made descriptors feeding a dot in a loop: pipelined through slots when the loop's own stages
    # say so (whatever the kernel's), else left to the copy engine on sm_90a (fp32 blocks: warpgroup MMA's slots
    # take 8- and 16-bit ones only) or loaded in place elsewhere.
    from tessel.tools.tensor_descriptor import TensorDescriptor
    m, n, k = 70, 64, 200
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    kernel = matmul_descriptors[(2, 1)](TensorDescriptor.from_tensor(a, [64, 32]),
                                        TensorDescriptor.from_tensor(b, [32, 64]), c, m, n, k, BLOCK_M=64,
                                        BLOCK_N=64, BLOCK_K=32, LOOP_STAGES=loop_stages, num_stages=kernel_stages)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-2, atol=1e-2 * np.abs(ref).max())  # tf32 on the GPUs
    if target.startswith("cpu"):
        return
    assert slots(kernel) == slots_of_stages(target, loop_stages if loop_stages > 1 else None)
    if target == "sim:sm_90a":
        tma_loads = kernel.asm["ptx"].count("cp.async.bulk.tensor.2d.shared::cluster.global")
        # Not pipelined: A's block is one copy, B's (64 fp32 columns, 256 bytes) two of 128-byte boxes.
        assert tma_loads == (0 if loop_stages > 1 else 3)
