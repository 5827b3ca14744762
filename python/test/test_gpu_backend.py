"""Tessel's own NVIDIA backend: kernels compiled to PTX (and cubins through ptxas) for sm_80 and sm_90a, run in the
PTX simulator (targets sim:sm_80 and sim:sm_90a) and checked against numpy. The simulator itself is validated on
Triton's PTX (test_gpusim_triton*.py), independently of this backend."""
import pathlib
import re
import sys

import numpy as np
import pytest

import tessel
import tessel.language as tl
from tessel import knobs

from test_dot import tf32

from simulated_gpus import each_simulated_gpu  # noqa: F401 -- this module's `target` fixture


@pytest.fixture
def sim(target):
    return target


@tessel.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@tessel.jit
def softmax_kernel(in_ptr, out_ptr, n_cols, in_stride, out_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * in_stride + cols, mask=cols < n_cols, other=float("-inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


@tessel.jit
def reduce2d_kernel(x_ptr, sums_ptr, maxs_ptr, argmax_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    K: tl.constexpr = N if AXIS == 0 else M
    out = tl.arange(0, K)
    tl.store(sums_ptr + out, tl.sum(x, axis=AXIS))
    tl.store(maxs_ptr + out, tl.max(x, axis=AXIS))
    tl.store(argmax_ptr + out, tl.argmax(x, axis=AXIS))


@tessel.jit
def row_norm_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    # A loop carrying a block, a scalar reduction, broadcasting back.
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
        acc += v * v
    rnorm = 1.0 / tl.sqrt(tl.sum(acc, axis=0))
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
        tl.store(y_ptr + row * N + cols, v * rnorm, mask=cols < N)


@tessel.jit
def transpose_kernel(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    t = tl.trans(x)
    tl.store(y_ptr + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :], t)


def test_vector_add_matches_numpy(sim, rng):
    n = 3000  # not a multiple of the block: the last program is masked
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    kernel = add_kernel[(3,)](x, y, out, n, BLOCK=1024)
    np.testing.assert_array_equal(out, x + y)
    # The PTX went through ptxas for the simulated architecture.
    assert kernel.target == sim
    assert "ptxas" in kernel.asm and "Used" in kernel.asm["ptxas"]
    assert ".local" not in kernel.asm["ptx"]


@pytest.mark.parametrize("n_cols", [1, 100, 128, 781])
def test_softmax_matches_numpy(sim, rng, n_cols):
    rows = 5
    x = (rng.standard_normal((rows, n_cols)) * 3).astype(np.float32)
    out = np.zeros_like(x)
    block = max(32, 1 << (n_cols - 1).bit_length())
    softmax_kernel[(rows,)](x, out, n_cols, x.shape[1], out.shape[1], BLOCK=block)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("shape", [(16, 64), (64, 16), (128, 128), (4, 8), (1, 32)])
@pytest.mark.parametrize("axis", [0, 1])
def test_2d_reductions_match_numpy(sim, rng, shape, axis):
    m, n = shape
    x = rng.standard_normal(shape).astype(np.float32)
    k = n if axis == 0 else m
    sums, maxs, arg = np.zeros(k, np.float32), np.zeros(k, np.float32), np.zeros(k, np.int32)
    reduce2d_kernel[(1,)](x, sums, maxs, arg, M=m, N=n, AXIS=axis)
    np.testing.assert_allclose(sums, x.sum(axis=axis), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(maxs, x.max(axis=axis))
    np.testing.assert_array_equal(arg, x.argmax(axis=axis))


def test_loops_and_scalar_math(sim, rng):
    rows, n = 3, 1000
    x = rng.standard_normal((rows, n)).astype(np.float32)
    y = np.zeros_like(x)
    row_norm_kernel[(rows,)](x, y, n, BLOCK=256)
    np.testing.assert_allclose(y, x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(32, 64), (8, 128)])
def test_transpose_through_shared_memory(sim, rng, shape):
    x = rng.standard_normal(shape).astype(np.float32)
    y = np.zeros(shape[::-1], np.float32)
    transpose_kernel[(1,)](x, y, M=shape[0], N=shape[1])
    np.testing.assert_array_equal(y, x.T)


def test_torch_tensors_and_views(sim):
    import torch
    x = torch.arange(4096, dtype=torch.float32)
    # Two views of one tensor: the output overlaps the input shifted by one block.
    add_kernel[(2,)](x, x, x[1024:], 2048, BLOCK=1024)
    want = torch.arange(4096, dtype=torch.float32)
    assert torch.equal(x[:1024], want[:1024])
    assert torch.equal(x[1024:2048], 2 * want[:1024])


def test_cuda_target_compiles_without_a_gpu(monkeypatch, rng):
    monkeypatch.setattr(knobs, "target", "cuda:90a")
    x = np.zeros(16, np.float32)
    kernel = add_kernel.warmup(x, x, x, 16, BLOCK=1024, grid=(1,))
    assert kernel.target == "cuda:90a"
    assert ".target sm_90a" in kernel.asm["ptx"]
    assert "Used" in kernel.asm["ptxas"]
    with pytest.raises(Exception, match="compiled for cuda:90a .*cannot run here: the CUDA driver .*cannot be loaded"):
        add_kernel[(1,)](x, x, x, 16, BLOCK=1024)


def test_shared_memory_over_the_limit_is_a_compile_error(monkeypatch):
    monkeypatch.setattr(knobs, "target", "cuda:80")
    x = np.zeros(1, np.float32)
    # A 256x256 fp32 transpose goes through 256 KiB of shared memory: more than sm_80's 163 KiB.
    with pytest.raises(Exception, match="shared memory"):
        transpose_kernel.warmup(x, x, M=256, N=256, grid=(1,))


@tessel.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # Tiled over the grid and over K, masked at the edges (Triton's tutorial 03 shape).
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@tessel.jit
def matmul_f16_result_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # matmul_kernel carrying its sums in fp16 between iterations (out_dtype=tl.float16), as some fp16 and fp8
    # kernels ask.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float16)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        acc = tl.dot(a, b, acc, out_dtype=tl.float16)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize("shape,blocks,num_warps", [
    ((64, 64, 64), (64, 64, 32), 4),
    ((100, 80, 72), (64, 32, 16), 4),       # masked edges on every side
    ((128, 64, 128), (128, 64, 64), 8),
    ((32, 32, 64), (32, 32, 64), 1),
], ids=["64x64x64", "100x80x72", "128x64x128-w8", "32x32x64-w1"])
def test_fp16_result_dot_runs_on_tensor_cores(sim, rng, shape, blocks, num_warps):
    # fp16 x fp16 into fp16 runs on the tensor cores, pipelined with cp.async: mma.sync m16n8k16, and on sm_90a
    # with whole warpgroups wgmma; each dot sums in fp32 accumulators and rounds once to fp16, as the CPU backend
    # does (not once per instruction, as fp16 accumulators would): at most one fp16 rounding of the sum per
    # iteration here.
    M, N, K = shape
    BM, BN, BK = blocks
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    kernel = matmul_f16_result_kernel[(triton_cdiv(M, BM), triton_cdiv(N, BN))](
        a, b, c, M, N, K, BM=BM, BN=BN, BK=BK, num_warps=num_warps, num_stages=3)
    want = a.astype(np.float64) @ b.astype(np.float64)
    bound = (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)).max()
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=0, atol=triton_cdiv(K, BK) * 2.0 ** -11 * bound)
    ptx = kernel.asm["ptx"]
    if sim == "sim:sm_90a" and num_warps % 4 == 0:
        assert "wgmma.mma_async.sync.aligned" in ptx and ".f32.f16.f16" in ptx and "mma.sync" not in ptx
    else:
        assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx and "wgmma" not in ptx
    assert "cp.async" in ptx


@pytest.mark.parametrize("blocks,num_warps", [((64, 64, 32), 4), ((128, 128, 32), 8), ((64, 32, 32), 4)],
                         ids=["64x64", "128x128-w8", "64x32"])
def test_16_bit_sums_leave_the_accumulator_as_matrices(sim, rng, blocks, num_warps):
    # The fp16 sums go from the accumulator layout through shared memory to the store's layout; on sm_90a the
    # writes are stmatrix .x4 (16 bytes of a lane's registers per instruction, as Triton's epilogues) into a
    # layout where they are conflict free; on sm_80, which has no stmatrix, vector stores. The simulator runs
    # the PTX: the sums as numpy's, and no bank conflicts.
    from tessel import gpusim
    M, N, K = 128, 128, 64
    BM, BN, BK = blocks
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    kernel = matmul_f16_result_kernel.warmup(a, b, c, M, N, K, BM=BM, BN=BN, BK=BK, num_warps=num_warps,
                                             grid=(1,))
    ptx = kernel.asm["ptx"]
    shared = int(dict(f.split("=", 1) for f in kernel.asm["launch"].split() if "=" in f)["shared"])
    counters = gpusim.launch(ptx, kernel.name, (M // BM, N // BN), num_warps=num_warps, shared_bytes=shared,
                             args=[a, b, c, M, N, K])
    want = a.astype(np.float64) @ b.astype(np.float64)
    bound = (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)).max()
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=0, atol=triton_cdiv(K, BK) * 2.0 ** -11 * bound)
    stores = ptx.count("stmatrix.sync.aligned.m8n8.x4.shared.b16")
    if sim == "sim:sm_90a":
        # Each warp's 16 x BN accumulator tile (64 rows per warpgroup) in 8x8 matrices, four per instruction.
        assert stores == BM * BN // (num_warps * 32 * 8), stores
    else:
        assert stores == 0
    assert counters["shared_store_bank_conflicts"] == 0, counters


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("shape,blocks", [((64, 64, 64), (32, 32, 32)), ((100, 80, 72), (64, 32, 16))],
                         ids=["64x64x64", "100x80x72"])
def test_matmul_matches_numpy(sim, rng, dtype, shape, blocks):
    import torch
    M, N, K = shape
    a = torch.from_numpy(rng.standard_normal((M, K)).astype(np.float32)).to(getattr(torch, dtype))
    b = torch.from_numpy(rng.standard_normal((K, N)).astype(np.float32)).to(getattr(torch, dtype))
    c = torch.zeros((M, N), dtype=torch.float32)
    BM, BN, BK = blocks
    kernel = matmul_kernel[(triton_cdiv(M, BM), triton_cdiv(N, BN))](a, b, c, M, N, K, BM=BM, BN=BN, BK=BK)
    # fp32 inputs are multiplied as tf32 (Triton's default on NVIDIA GPUs).
    if dtype == "float32":
        ref = tf32(a.numpy()).astype(np.float64) @ tf32(b.numpy())
    else:
        ref = a.double().numpy() @ b.double().numpy()
    np.testing.assert_allclose(c.numpy(), ref, rtol=1e-4, atol=1e-4)
    # fp16/bf16 dots run on wgmma on sm_90a, tf32 ones on mma.sync everywhere.
    ptx = kernel.asm["ptx"]
    if dtype == "float32":
        assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in ptx and "wgmma" not in ptx
    else:
        assert tensor_core_instruction(sim, BM, BN) in ptx
        assert "mma.sync" not in ptx or "wgmma" not in ptx


def test_a_sum_into_the_dot_keeps_its_mmas_in_flight(sim, rng):
    # matmul_kernel's `acc += tl.dot(a, b)` accumulates into the dot (tile.dot's canonicalization, as Triton combines
    # it); on sm_90a, with both operands prefetched into slots, the loop leaves each iteration's MMAs in flight and
    # waits for them after it (the sums as numpy's).
    M, N, K = 128, 128, 96
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    kernel = matmul_kernel[(2, 2)](a, b, c, M, N, K, BM=64, BN=64, BK=32)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-4)
    waits = re.findall(r"wgmma\.wait_group\.sync\.aligned\s+(\d+);", kernel.asm["ptx"])
    assert waits == (["1", "0"] if sim.endswith("sm_90a") else [])


@tessel.jit
def precision_dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                         PRECISION: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, input_precision=PRECISION))


@pytest.mark.parametrize("arch", ["sim:sm_80", "sim:sm_89", "sim:sm_90a"])
@pytest.mark.parametrize("dtype,precision,mma,count", [
    ("float32", None, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 32),
    ("float32", "tf32", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 32),
    ("float32", "tf32x3", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 3 * 32),
    ("float32", "ieee", None, 0),
    ("int8", None, "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", 8),
], ids=["f32-default", "f32-tf32", "f32-tf32x3", "f32-ieee", "int8"])
def test_dot_instruction(monkeypatch, rng, arch, dtype, precision, mma, count):
    # tf32 dots run on mma.sync from sm_80 on (sm_90a included: Tessel does not use wgmma's tf32), fp32 inputs
    # rounded to tf32 by cvt.rna first; "tf32x3" on three tf32 instructions per product (hi * lo, lo * hi,
    # hi * hi), as close to fp32 as "ieee", which is computed exactly, by FMA. 64 x 32 on 4 warps is 4 tiles of
    # 16 x 8 per warp: 8 K steps of tf32, 2 of int8. int8 runs on wgmma on sm_90a: one warpgroup's m64n32k32,
    # twice.
    monkeypatch.setattr(knobs, "target", arch)
    if dtype == "int8" and arch == "sim:sm_90a":
        mma, count = "wgmma.mma_async.sync.aligned.m64n32k32.s32.s8.s8", 2
    M, N, K = 64, 32, 64
    if dtype == "int8":
        a = rng.integers(-128, 128, (M, K)).astype(np.int8)
        b = rng.integers(-128, 128, (K, N)).astype(np.int8)
        c = np.zeros((M, N), np.int32)
    else:
        a = rng.standard_normal((M, K)).astype(np.float32)
        b = rng.standard_normal((K, N)).astype(np.float32)
        c = np.zeros((M, N), np.float32)
    kernel = precision_dot_kernel[(1,)](a, b, c, M=M, N=N, K=K, PRECISION=precision)
    ptx = kernel.asm["ptx"]
    if mma is None:
        assert "mma" not in ptx and "fma.rn.f32" in ptx
    else:
        assert ptx.count(mma) == count and ("wgmma" in ptx) == mma.startswith("wgmma")
        assert ("cvt.rna.tf32.f32" in ptx) == (dtype == "float32")
    if dtype == "int8":
        np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))
    elif precision in (None, "tf32"):
        np.testing.assert_allclose(c, tf32(a).astype(np.float64) @ tf32(b), rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
    assert "ptxas" in kernel.asm and arch[4:] in kernel.asm["ptxas"]


def tensor_core_instruction(target, BM, BN, num_warps=4):
    """The tensor-core instruction an fp16/bf16 dot into fp32 of a BM x BN block runs on: wgmma m64nNk16 on sm_90a
    where whole warpgroups (warps along M first, 16 rows each while rows remain, as Triton splits them) cover 64
    rows and at least 8 columns each, N the columns of a warpgroup up to 256; mma.sync m16n8k16 everywhere else."""
    if target.endswith("sm_90a") and num_warps % 4 == 0:
        wm, wn = 4, 1
        while wm * wn < num_warps:
            if BM > 16 * wm:
                wm *= 2
            else:
                wn *= 2
        if BM >= 16 * wm and BN >= 8 * wn:
            return f"wgmma.mma_async.sync.aligned.m64n{min(256, BN // wn)}k16"
    return "mma.sync.aligned.m16n8k16"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape,blocks,num_warps", [
    ((64, 16, 16), (64, 16, 16), 4),        # the 32-byte swizzle, n16
    ((64, 32, 32), (64, 32, 32), 8),        # the 64-byte swizzle; two warpgroups side by side along N, n16
    ((128, 64, 192), (64, 64, 64), 4),      # the 128-byte swizzle, a grid of two, three steps over K
    ((128, 128, 128), (128, 128, 64), 8),   # two warpgroups along M, n128
    ((64, 256, 128), (64, 256, 128), 4),    # n256; K of two swizzle atoms
    ((128, 256, 32), (128, 256, 32), 8),    # two warpgroups of n256
    ((192, 96, 64), (128, 32, 32), 4),      # one warpgroup repeating along M, masked edges
    ((100, 80, 72), (64, 32, 16), 4),       # masked edges on every side
], ids=["64x16x16", "64x32x32-w8", "128x64x192", "128x128x128-w8", "64x256x128", "128x256x32-w8", "192x96x64",
        "100x80x72"])
def test_tensor_core_matmul_matches_numpy(sim, rng, dtype, shape, blocks, num_warps):
    # The same fp16/bf16 matmuls through each target's tensor cores: wgmma with swizzled shared-memory operands on
    # sm_90a, mma.sync on sm_80; every block shape is checked against numpy and its PTX went through ptxas.
    import torch
    M, N, K = shape
    BM, BN, BK = blocks
    a = torch.from_numpy(rng.standard_normal((M, K)).astype(np.float32)).to(getattr(torch, dtype))
    b = torch.from_numpy(rng.standard_normal((K, N)).astype(np.float32)).to(getattr(torch, dtype))
    c = torch.zeros((M, N), dtype=torch.float32)
    kernel = matmul_kernel[(triton_cdiv(M, BM), triton_cdiv(N, BN))](a, b, c, M, N, K, BM=BM, BN=BN, BK=BK,
                                                                     num_warps=num_warps)
    np.testing.assert_allclose(c.numpy(), a.double().numpy() @ b.double().numpy(), rtol=1e-4, atol=1e-4)
    ptx = kernel.asm["ptx"]
    mma = tensor_core_instruction(sim, BM, BN, num_warps)
    assert mma in ptx
    assert ("wgmma" if mma.startswith("mma.sync") else "mma.sync") not in ptx
    if sim.endswith("sm_90a"):
        assert "ptxas" in kernel.asm and "sm_90a" in kernel.asm["ptxas"]


def test_int8_dot_matches_numpy(sim, rng):
    @tessel.jit
    def int8_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
        rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))

    a = rng.integers(-128, 128, (32, 64)).astype(np.int8)
    b = rng.integers(-128, 128, (64, 16)).astype(np.int8)
    c = np.zeros((32, 16), np.int32)
    int8_dot[(1,)](a, b, c, M=32, N=16, K=64)
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


def triton_cdiv(a, b):
    return (a + b - 1) // b


def test_contiguous_accesses_are_16_bytes(sim, rng):
    # n a multiple of 16: the bounds mask is constant over runs of 16, the arrays are 16-byte aligned, so each
    # thread's 4 consecutive floats move in one ld.global.v4 / st.global.v4.
    n = 4096
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    kernel = add_kernel[(n // 1024,)](x, y, out, n, BLOCK=1024)
    np.testing.assert_array_equal(out, x + y)
    ptx = kernel.asm["ptx"]
    assert ptx.count("ld.global.v4.b32") == 4 and ptx.count("st.global.v4.b32") == 2, ptx
    assert "ld.global.b32" not in ptx


def _attention_kernel():
    """Flash-attention forward (Triton's tutorial 06 without the causal stage): the kernel bench/gpu_static.py
    compares with Triton's, compiled here by Tessel."""
    root = pathlib.Path(__file__).resolve().parents[2]
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from bench.gpu_static_kernels import attn_fwd
    return attn_fwd


def test_attention_forward_matches_numpy(sim, rng):
    bh, n_ctx, d = 2, 128, 32
    q, k, v = (rng.standard_normal((bh, n_ctx, d)).astype(np.float16) for _ in range(3))
    out = np.zeros_like(q)
    scale = 1.0 / np.sqrt(d)
    kernel = _attention_kernel()[(n_ctx // 32, bh)](q, k, v, out, scale, n_ctx, HEAD_DIM=d, BLOCK_M=32,
                                                    BLOCK_N=32)
    s = (q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1)) * scale
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    # The kernel rounds P to fp16 before its second dot (as Triton's does): compare at fp16 precision.
    ref = (p / p.sum(axis=-1, keepdims=True)) @ v.astype(np.float64)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=2e-2, atol=2e-3)
    assert kernel.asm["ptx"].count("mma.sync.aligned.m16n8k16") >= 2


@pytest.mark.parametrize("d", [32, 64])
def test_attention_forward_on_warpgroups_matches_numpy(sim, rng, d):
    # 64 query rows per program: on sm_90a both dots (Q K^T and P V) run on wgmma, on sm_80 on mma.sync.
    bh, n_ctx = 2, 128
    q, k, v = (rng.standard_normal((bh, n_ctx, d)).astype(np.float16) for _ in range(3))
    out = np.zeros_like(q)
    scale = 1.0 / np.sqrt(d)
    kernel = _attention_kernel()[(n_ctx // 64, bh)](q, k, v, out, scale, n_ctx, HEAD_DIM=d, BLOCK_M=64, BLOCK_N=32,
                                                    num_warps=4)
    s = (q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1)) * scale
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    ref = (p / p.sum(axis=-1, keepdims=True)) @ v.astype(np.float64)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=2e-2, atol=2e-3)
    ptx = kernel.asm["ptx"]
    if sim.endswith("sm_90a"):
        assert ptx.count("wgmma.mma_async.sync.aligned.m64n32k16") >= 1, ptx
        assert ptx.count(f"wgmma.mma_async.sync.aligned.m64n{d}k16") >= 1
        assert "mma.sync" not in ptx
    else:
        assert ptx.count("mma.sync.aligned.m16n8k16") >= 2 and "wgmma" not in ptx


@tessel.jit
def scalar_to_int8_kernel(x_ptr, o_ptr):
    tl.store(o_ptr, tl.load(x_ptr).to(tl.int8))


@tessel.jit
def exp_kernel(x_ptr, out_ptr, x64_ptr, out64_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.exp(tl.load(x_ptr + offs)))
    tl.store(out64_ptr + offs, tl.exp(tl.load(x64_ptr + offs)))


def test_fp32_exp_is_triton_fast_exp(sim, rng):
    # As Triton on NVIDIA: fp32 exp(x) = ex2.approx(x * log2(e)), whose error is ex2's (2 ulp) plus the roundings
    # of log2(e) to fp32 and of the product, carried into the exponent (each at most |x * log2(e)| * 2^-24 * ln(2),
    # relative); fp64 stays exact (libdevice).
    x = np.concatenate([np.linspace(-87, 88, 512), rng.uniform(-2, 2, 512)]).astype(np.float32)
    out, out64 = np.zeros_like(x), np.zeros(x.size)
    kernel = exp_kernel[(1,)](x, out, x.astype(np.float64), out64, BLOCK=x.size)
    want = np.exp(x.astype(np.float64))
    tol = 2 * 2.0**-23 + np.abs(x * np.log2(np.e)) * 2.0**-23 * np.log(2)
    assert np.all(np.abs(out - want) <= tol * want), np.max(np.abs(out - want) / want / tol)
    np.testing.assert_allclose(out64, want, rtol=1e-15)
    ptx = kernel.asm["ptx"]
    assert ptx.count("ex2.approx.f32") >= 1 and "ex2.approx.ftz" not in ptx


@pytest.mark.parametrize("value", [300.0, -200.5, 127.9, 1e6])
def test_scalar_float_to_int8_wraps(sim, value):
    # As Triton's interpreter and the CPU backend: truncate toward zero, then wrap (PTX's cvt would saturate).
    x = np.array([value], np.float32)
    out = np.zeros(1, np.int8)
    scalar_to_int8_kernel[(1,)](x, out)
    assert out[0] == np.int64(np.trunc(x[0])).astype(np.int8)


@tessel.jit
def moving_store_kernel(x_ptr, ITERS: tl.constexpr):
    # Each iteration stores i + 1 over a window 16 elements further on: later iterations win where they overlap
    # (fuzzer seed 5, kernel 64, found the barrier between iterations missing).
    r = tl.arange(0, 256)
    for i in range(0, ITERS):
        tl.store(x_ptr + r + i * 16, tl.full([256], 0, tl.int32) + i + 1)


def test_loop_stores_keep_program_order(sim):
    x = np.zeros(256 + 16 * 3, np.int32)
    moving_store_kernel[(1,)](x, ITERS=4)
    want = np.zeros_like(x)
    for i in range(4):
        want[i * 16:i * 16 + 256] = i + 1
    np.testing.assert_array_equal(x, want)


@tessel.jit
def pipelined_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                            BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # Triton's tutorial 03 loop: loop-carried pointers advanced by BK, the K edge masked; row strides multiples of 16
    # elements (as launches specialize them), so each thread's runs of fp16 are aligned and qualify for cp.async.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + (rm % M)[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + (rn % N)[None, :]
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("num_stages", [1, 2, 3, 4])
@pytest.mark.parametrize("shape,blocks,num_warps", [
    ((64, 32, 16), (64, 32, 16), 4),       # one K iteration: the prologue's second copy is masked off
    ((100, 72, 96), (64, 32, 16), 4),      # six K iterations, masked M and N edges
    ((128, 64, 144), (64, 64, 16), 8),     # nine K iterations, 8 warps
    ((96, 128, 80), (64, 64, 32), 4),      # three iterations with a partial last K block
    ((128, 128, 64), (128, 128, 32), 8),   # two iterations of big tiles (128-byte-swizzled B)
], ids=["k1", "k6-masked", "k9-w8", "k3-partial", "k2-w8-big"])
def test_pipelined_matmul_matches_numpy(sim, rng, dtype, num_stages, shape, blocks, num_warps):
    # num_stages > 1: A and B move from global to shared memory with cp.async, num_stages - 1 iterations ahead (the
    # simulator completes copies only at their wait, so a missing or early wait reads stale slots); mma.sync reads
    # its fragments with ldmatrix on sm_80, wgmma through descriptors on the slots on sm_90a; fp32 (tf32) dots run
    # mma.sync m16n8k8 on both, reading each fragment word from the slots and rounding it to tf32 there.
    import torch
    M, N, K = shape
    BM, BN, BK = blocks
    pad = lambda n: (n + 15) // 16 * 16  # row strides the launch specializes as multiples of 16
    a_full = torch.from_numpy(rng.standard_normal((M, pad(K))).astype(np.float32)).to(getattr(torch, dtype))
    b_full = torch.from_numpy(rng.standard_normal((K, pad(N))).astype(np.float32)).to(getattr(torch, dtype))
    c = torch.zeros((M, N), dtype=torch.float32)
    kernel = pipelined_matmul_kernel[(triton_cdiv(M, BM), triton_cdiv(N, BN))](
        a_full, b_full, c, M, N, K, a_full.stride(0), b_full.stride(0), c.stride(0), BM=BM, BN=BN, BK=BK,
        num_warps=num_warps, num_stages=num_stages)
    a64, b64 = a_full[:, :K].double().numpy(), b_full[:, :N].double().numpy()
    if dtype == "float32":  # multiplied as tf32
        a64, b64 = tf32(a64).astype(np.float64), tf32(b64).astype(np.float64)
    ref = a64 @ b64
    np.testing.assert_allclose(c.numpy(), ref, rtol=1e-4, atol=1e-4)
    ptx = kernel.asm["ptx"]
    assert ("cp.async.ca.shared.global" in ptx or "cp.async.cg.shared.global" in ptx) == (num_stages > 1)
    assert ("cp.async.wait_group" in ptx) == (num_stages > 1)
    stages = num_stages
    if num_stages > 1:
        stages = int(re.search(r"cp\.async\.wait_group\s+(\d+);", ptx).group(1)) + 2
        # fp32 slots take twice fp16's bytes: where num_stages of them do not fit the architecture's shared memory,
        # the pipeliner drops stages (down to 2).
        assert stages == num_stages or (dtype == "float32" and 2 <= stages < num_stages)
    if dtype == "float32":
        assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in ptx and "wgmma" not in ptx
        # Read in place: the program's shared memory is its slots (1024-byte aligned buffers), no scratch
        # for staging A and B besides.
        shared = int(dict(f.split("=", 1) for f in kernel.asm["launch"].split() if "=" in f)["shared"])
        slots = sum((stages * n * 4 + 1023) // 1024 * 1024 for n in (BM * BK, BK * BN))
        if num_stages > 1:
            assert shared == slots, (shared, slots)
        return
    mma = tensor_core_instruction(sim, BM, BN, num_warps)
    assert mma in ptx
    if mma.startswith("mma.sync"):
        # Pipelined operands are read from their slots, operands in registers staged in the same layouts first:
        # ldmatrix either way.
        assert "ldmatrix.sync.aligned" in ptx
    assert ".local" not in ptx
    assert "Used" in kernel.asm["ptxas"]


@tessel.jit
def invariant_operands_kernel(A, B, C, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    m = tl.arange(0, BM)
    n = tl.arange(0, BN)
    k = tl.arange(0, BK)
    a_ptrs = A + m[:, None] * BK + k[None, :]
    b_ptrs = B + k[:, None] * BN + n[None, :]
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(0, K, BK):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)  # the same blocks every iteration
    tl.store(C + m[:, None] * BN + n[None, :], acc)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_pipelined_loop_invariant_operands(sim, rng, dtype):
    # Loads whose pointers do not move are the first ops of the loop body: the pipeliner once erased them while
    # its builder still inserted before them (a crash of the whole process); now they are prefetched like any.
    a = rng.standard_normal((64, 16)).astype(dtype)
    b = rng.standard_normal((16, 32)).astype(dtype)
    c = np.zeros((64, 32), np.float32)
    kernel = invariant_operands_kernel[(1,)](a, b, c, 64, BM=64, BN=32, BK=16, num_stages=3)
    if dtype == np.float32:
        a, b = tf32(a), tf32(b)
    np.testing.assert_allclose(c, 4 * (a.astype(np.float64) @ b.astype(np.float64)), rtol=1e-3, atol=1e-3)
    assert "cp.async" in kernel.asm["ptx"]


def test_pipeline_leaves_unaligned_loads(sim, rng):
    # Row strides of 72 elements and a K edge mask against K = 72 are not known to be whole runs of 16 bytes: each
    # thread's loads are 2 bytes wide, narrower than cp.async's smallest copy (as in Triton, whose pipeliner also
    # keeps them), and the loop stays as it is (and still matches numpy).
    import torch
    M, N, K = 64, 64, 72
    a = torch.from_numpy(rng.standard_normal((M, K)).astype(np.float32)).to(torch.float16)
    b = torch.from_numpy(rng.standard_normal((K, N + 1)).astype(np.float32)).to(torch.float16)
    c = torch.zeros((M, N), dtype=torch.float32)
    kernel = pipelined_matmul_kernel[(1, 1)](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), BM=64, BN=64,
                                             BK=16, num_stages=3)
    np.testing.assert_allclose(c.numpy(), a.double().numpy() @ b[:, :N].double().numpy(), rtol=1e-4, atol=1e-4)
    assert "cp.async" not in kernel.asm["ptx"]


@pytest.mark.parametrize("num_stages", [1, 3])
def test_attention_forward_pipelined_matches_numpy(sim, rng, num_stages):
    # The attention kernel's K and V loads feed dots in its loop: with num_stages 3 both are prefetched with cp.async.
    bh, n_ctx, d = 2, 128, 64
    q, k, v = (rng.standard_normal((bh, n_ctx, d)).astype(np.float16) for _ in range(3))
    out = np.zeros_like(q)
    scale = 1.0 / np.sqrt(d)
    kernel = _attention_kernel()[(n_ctx // 64, bh)](q, k, v, out, scale, n_ctx, HEAD_DIM=d, BLOCK_M=64, BLOCK_N=32,
                                                    num_warps=4, num_stages=num_stages)
    s = (q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1)) * scale
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    ref = (p / p.sum(axis=-1, keepdims=True)) @ v.astype(np.float64)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=2e-2, atol=2e-3)
    ptx = kernel.asm["ptx"]
    assert ("cp.async.wait_group" in ptx) == (num_stages > 1)
