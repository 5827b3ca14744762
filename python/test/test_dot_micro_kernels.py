"""The CPU's dot micro-kernels (tessel-cpu-dot-micro-kernels) against numpy in float64: blocks of C held as one or
two vectors a row, fp64, fp32, fp16 (widened), bf16 (vdpbf16ps where the CPU has AVX512-BF16) and int8 (vpdpbusd
where it has AVX512-VNNI); with accumulators, transposed operands and batches. The register tiles of smaller blocks,
which no tl.dot makes (its blocks are 16 and more in every dimension), are lit-tested. The same kernels run on every target of the suite; on the CPU they
also run for the baseline AVX-512 model, whose code widens bf16 and int8 instead, and the instructions each CPU model
gets are checked in the LLVM IR."""
import numpy as np
import pytest

import tessel as triton
import tessel.language as tl
from tessel import _C


@triton.jit
def _dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, TRANS_B: tl.constexpr,
                ACC: tl.constexpr, PRECISION: tl.constexpr = None):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    if TRANS_B:
        # B stored as N x K: its transpose is the operand.
        b = tl.trans(tl.load(b_ptr + rn[:, None] * K + rk[None, :]))
    else:
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    acc = tl.load(c_ptr + rm[:, None] * N + rn[None, :]).to(ACC)
    acc = tl.dot(a, b, acc, input_precision=PRECISION)
    # A second dot onto the first's result: the accumulator updated in place.
    acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def _operands(rng, dtype, M, N, K, trans_b):
    import torch
    if dtype == "int8":
        a = rng.integers(-128, 128, (M, K)).astype(np.int8)
        b = rng.integers(-128, 128, (N, K) if trans_b else (K, N)).astype(np.int8)
        return a, b, a.astype(np.float64), b.astype(np.float64)
    if dtype == "bfloat16":
        a = torch.from_numpy(rng.uniform(-2, 2, (M, K)).astype(np.float32)).to(torch.bfloat16)
        b = torch.from_numpy(rng.uniform(-2, 2, (N, K) if trans_b else (K, N)).astype(np.float32)).to(torch.bfloat16)
        return a, b, a.float().numpy().astype(np.float64), b.float().numpy().astype(np.float64)
    a = rng.uniform(-2, 2, (M, K)).astype(dtype)
    b = rng.uniform(-2, 2, (N, K) if trans_b else (K, N)).astype(dtype)
    return a, b, a.astype(np.float64), b.astype(np.float64)


def _check(rng, dtype, M, N, K, trans_b):
    a, b, a64, b64 = _operands(rng, dtype, M, N, K, trans_b)
    if trans_b:
        b64 = b64.T
    if dtype == "int8":
        c = rng.integers(-1000, 1000, (M, N)).astype(np.int32)
        expected = c.astype(np.int64) + 2 * (a64 @ b64).astype(np.int64)
        _dot_kernel[(1,)](a, b, c, M, N, K, TRANS_B=trans_b, ACC=tl.int32)
        np.testing.assert_array_equal(c, expected.astype(np.int32))
        return
    wide = dtype == "float64"
    c = rng.uniform(-1, 1, (M, N)).astype(np.float64 if wide else np.float32)
    expected = c.astype(np.float64) + 2 * (a64 @ b64)
    # fp32 sums of exact products (fp16 and bf16 products are exact in fp32; fp32 ones round once each).
    # fp32 in full fp32 products ("ieee"; NVIDIA's default would round them to tf32).
    _dot_kernel[(1,)](a, b, c, M, N, K, TRANS_B=trans_b, ACC=tl.float64 if wide else tl.float32,
                      PRECISION="ieee" if dtype == "float32" else None)
    np.testing.assert_allclose(c, expected, rtol=1e-12 if wide else 1e-5, atol=(1e-12 if wide else 1e-5) * K)


# Dot blocks are 16 and more in every dimension (as Triton's): C rows of one or two zmm vectors (fp32, int32) or of
# two and more (fp64); K of one and several steps of each micro-kernel.
SHAPES = [(16, 16, 16), (16, 32, 16), (32, 64, 32), (64, 16, 64), (128, 32, 16)]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16", "int8"])
@pytest.mark.parametrize("mnk", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_dot_shapes(rng, dtype, mnk):
    M, N, K = mnk
    _check(rng, dtype, M, N, K, trans_b=False)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int8"])
def test_dot_transposed_operand(rng, dtype):
    _check(rng, dtype, 32, 64, 32, trans_b=True)


@pytest.mark.parametrize("dtype", ["bfloat16", "int8"])
def test_dot_without_dot_product_instructions(rng, monkeypatch, target, dtype):
    # The baseline AVX-512 model (no AVX512-BF16 or VNNI) widens the operands: the same numbers.
    if not target.startswith("cpu"):
        return
    if not _C.target_can_run("cpu:x86-64-v4"):
        pytest.skip("this machine has no AVX-512")
    monkeypatch.setattr(triton.knobs, "target", "cpu:x86-64-v4")
    _check(rng, dtype, 32, 64, 32, trans_b=False)
    _check(rng, dtype, 16, 16, 64, trans_b=True)


@triton.jit
def _batched_kernel(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rb = tl.arange(0, B)[:, None, None]
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rb * M * K + rm[None, :, None] * K + rk[None, None, :])
    b = tl.load(b_ptr + rb * K * N + rk[None, :, None] * N + rn[None, None, :])
    tl.store(c_ptr + rb * M * N + rm[None, :, None] * N + rn[None, None, :], tl.dot(a, b))


@pytest.mark.parametrize("dtype", ["bfloat16", "int8"])
def test_batched_dot(rng, dtype):
    import torch
    B, M, N, K = 2, 16, 32, 32
    if dtype == "int8":
        a = rng.integers(-128, 128, (B, M, K)).astype(np.int8)
        b = rng.integers(-128, 128, (B, K, N)).astype(np.int8)
        c = np.zeros((B, M, N), np.int32)
        _batched_kernel[(1,)](a, b, c, B, M, N, K)
        np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))
        return
    a = torch.from_numpy(rng.uniform(-2, 2, (B, M, K)).astype(np.float32)).to(torch.bfloat16)
    b = torch.from_numpy(rng.uniform(-2, 2, (B, K, N)).astype(np.float32)).to(torch.bfloat16)
    c = np.zeros((B, M, N), np.float32)
    _batched_kernel[(1,)](a, b, c, B, M, N, K)
    np.testing.assert_allclose(c, a.double().numpy() @ b.double().numpy(), rtol=1e-5, atol=1e-5 * K)


# What each CPU model's dots compile to (compiled only: the models need not be this machine's).
@pytest.mark.parametrize("model,bf16,vnni", [("znver4", True, True), ("sapphirerapids", True, True),
                                             ("cascadelake", False, True), ("skylake-avx512", False, False),
                                             ("x86-64-v3", False, False)])
def test_dot_instructions_per_cpu_model(monkeypatch, target, model, bf16, vnni):
    import torch
    if not target.startswith("cpu"):
        return
    monkeypatch.setattr(triton.knobs, "target", f"cpu:{model}")
    a16 = torch.zeros((32, 32), dtype=torch.bfloat16)
    c32 = np.zeros((32, 64), np.float32)
    ir = _dot_kernel.warmup(a16, torch.zeros((32, 64), dtype=torch.bfloat16), c32, 32, 64, 32, TRANS_B=False,
                            ACC=tl.float32, grid=(1,)).asm["llvmir"]
    assert ("llvm.x86.avx512bf16.dpbf16ps.512" in ir) == bf16
    a8 = np.zeros((32, 32), np.int8)
    ir = _dot_kernel.warmup(a8, np.zeros((32, 64), np.int8), np.zeros((32, 64), np.int32), 32, 64, 32, TRANS_B=False,
                            ACC=tl.int32, grid=(1,)).asm["llvmir"]
    assert ("llvm.x86.avx512.vpdpbusd.512" in ir) == vnni
