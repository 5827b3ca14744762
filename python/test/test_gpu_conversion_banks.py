"""Layout conversions through shared memory, run in the simulator with its bank counters: a tensor-core
accumulator stored in fp32 moves from the mma layout (pairs of columns per thread) to the blocked layout of the
store (16-byte vectors along a row) through a shared buffer. Rows of 256 or 512 bytes span the 32 banks two or
four times, so a warp phase reading one row in 16-byte vectors meets itself in every bank unless the buffer's
swizzle separates the 128-byte pieces of a row. Every case must match numpy and cost no bank conflicts
(Nsight's l1tex__data_bank_conflicts_pipe_lsu_mem_shared, as the simulator counts them)."""
import numpy as np
import pytest

import tessel
import tessel.language as tl
from tessel import gpusim

from simulated_gpus import each_simulated_gpu  # noqa: F401  (every test on sim:sm_80 and sim:sm_90a)


@tessel.jit
def dot_store_fp32(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    offs_m = tl.arange(0, M)
    offs_n = tl.arange(0, N)
    offs_k = tl.arange(0, K)
    a = tl.load(A + offs_m[:, None] * K + offs_k[None, :])
    b = tl.load(B + offs_k[:, None] * N + offs_n[None, :])
    tl.store(C + offs_m[:, None] * N + offs_n[None, :], tl.dot(a, b))


@tessel.jit
def dot_add_fp16(A, B, X, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    # A residual added to the accumulator: the fp16 block loaded in 16-byte vectors (8 elements a thread) sets
    # the layout of the sum, and the fp32 accumulator converts to it.
    offs_m = tl.arange(0, M)
    offs_n = tl.arange(0, N)
    offs_k = tl.arange(0, K)
    a = tl.load(A + offs_m[:, None] * K + offs_k[None, :])
    b = tl.load(B + offs_k[:, None] * N + offs_n[None, :])
    x = tl.load(X + offs_m[:, None] * N + offs_n[None, :])
    out = tl.dot(a, b) + x.to(tl.float32)
    tl.store(C + offs_m[:, None] * N + offs_n[None, :], out.to(tl.float16))


def launch_shared_bytes(kernel) -> int:
    return int(dict(f.split("=", 1) for f in kernel.asm["launch"].split() if "=" in f)["shared"])


def run_counted(kernel_fn, args, M, N, K, num_warps):
    kernel = kernel_fn.warmup(*args, M=M, N=N, K=K, grid=(1,), num_warps=num_warps)
    ptx = kernel.asm["ptx"]
    assert "ld.shared.v4.b32" in ptx  # the accumulator is read back in 16-byte vectors
    return gpusim.launch(ptx, kernel.name, 1, num_warps=num_warps, shared_bytes=launch_shared_bytes(kernel),
                         args=list(args))


# (64 rows over 8 warps is left out: there wgmma's B operand, staged from the registers of its load, meets
# bank conflicts of its own, which this test is not about.)
SHAPES = pytest.mark.parametrize(
    "M,N,K,num_warps",
    [(32, 32, 32, 4), (64, 32, 32, 4), (64, 64, 32, 4), (128, 64, 32, 8), (128, 64, 16, 4), (64, 128, 32, 8),
     (64, 128, 16, 4), (16, 32, 16, 1)],
    ids=["rows128B-32", "rows128B", "rows256B", "rows256B-8warps", "rows256B-tall", "rows512B-8warps", "rows512B",
         "one-warp"])


@SHAPES
def test_fp32_store_has_no_bank_conflicts(target, rng, M, N, K, num_warps):
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    counters = run_counted(dot_store_fp32, (a, b, c), M, N, K, num_warps)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)
    assert counters["shared_load_bank_conflicts"] == 0
    assert counters["shared_store_bank_conflicts"] == 0


@SHAPES
def test_fp32_to_eight_per_thread_has_no_bank_conflicts(target, rng, M, N, K, num_warps):
    # Without a swizzle fit for both sides these cost 16 to 256 conflicts (rows of 128 bytes: the pairs the
    # accumulator writes meet in a bank, or the 32-byte strides of the reads; wider rows: their halves do).
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    x = rng.standard_normal((M, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    counters = run_counted(dot_add_fp16, (a, b, x, c), M, N, K, num_warps)
    want = a.astype(np.float32) @ b.astype(np.float32) + x.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), want, rtol=2e-3, atol=2e-3)
    assert counters["shared_load_bank_conflicts"] == 0
    assert counters["shared_store_bank_conflicts"] == 0
