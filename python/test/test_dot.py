"""tl.dot on single blocks, and a tiled matmul (2-D grid, K loop with masks) for
fp32, fp16 and int8 inputs, against numpy. On NVIDIA GPUs an fp32 dot multiplies
tf32 values (Triton's default, and input_precision="tf32"); "tf32x3" (three tf32
parts) and "ieee" are as close as fp32. The CPU computes every dot in full fp32."""
import numpy as np
import pytest

import tessel as triton
import tessel.language as tl

f16, f32 = np.float16, np.float32


def _reference(a, b):
    """float32 matmul of the inputs as the kernel sees them (fp16 already rounded)."""
    return a.astype(f32) @ b.astype(f32)


@triton.jit
def _block_dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, PRECISION: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    # Accumulate onto an existing block through acc=, and again with +.
    acc = tl.full((M, N), 1.0, tl.float32)
    c = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.static_assert(c.dtype == tl.float32)
    c += tl.dot(a, b, input_precision=PRECISION)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


@pytest.mark.parametrize("mnk", [(16, 16, 16), (32, 64, 16), (64, 16, 32)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dt", [f32, f16], ids=["f32", "f16"])
def test_block_dot(rand, dt, mnk):
    M, N, K = mnk
    a = rand((M, K), dt, -1, 1)
    b = rand((K, N), dt, -1, 1)
    c = np.zeros((M, N), f32)
    # ieee: full fp32 products for fp32 inputs (the default, tf32, may round them).
    _block_dot_kernel[(1,)](a, b, c, M, N, K, PRECISION="ieee")
    np.testing.assert_allclose(c, 1.0 + 2 * _reference(a, b), rtol=1e-4, atol=1e-4)


@triton.jit
def _matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PRECISION: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        k_left = K - k * BK
        # Rows/columns beyond M/N are masked too: their addresses may lie outside the arrays.
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _matmul(a, b, precision, BM=32, BN=32, BK=16):
    M, K = a.shape
    _, N = b.shape
    c = np.zeros((M, N), f32)
    sa = [s // a.itemsize for s in a.strides]
    sb = [s // b.itemsize for s in b.strides]
    sc = [s // c.itemsize for s in c.strides]
    grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
    _matmul_kernel[grid](a, b, c, M, N, K, *sa, *sb, *sc, BM=BM, BN=BN, BK=BK, PRECISION=precision)
    return c


# M, N and K are not multiples of the 32 x 32 x 16 blocks (except the last case).
MATMUL_SHAPES = [(1, 1, 1), (37, 53, 71), (100, 17, 200), (64, 96, 48)]


@pytest.mark.parametrize("shape", MATMUL_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize(
    "dt,precision,tol",
    [
        (f32, "ieee", 1e-4),
        # The default for fp32 is tf32 (10-bit mantissa products) on GPUs; a CPU
        # backend may compute in full fp32. Either passes this tolerance.
        (f32, None, 2e-2),
        # fp16 products are exact in fp32; only the fp32 accumulation order differs.
        (f16, None, 1e-3),
    ],
    ids=["f32-ieee", "f32-default", "f16"],
)
def test_matmul(rand, dt, precision, tol, shape):
    M, N, K = shape
    a = rand((M, K), dt, -1, 1)
    b = rand((K, N), dt, -1, 1)
    c = _matmul(a, b, precision)
    np.testing.assert_allclose(c, _reference(a, b), rtol=tol, atol=tol * np.sqrt(K))


def tf32(x):
    """fp32 values rounded to tf32 (10 mantissa bits): to nearest, ties away from zero, on the 13 dropped bits."""
    bits = np.asarray(x, f32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x1000) & 0xFFFFE000).astype(np.uint32).view(f32)


@pytest.mark.parametrize("precision", [None, "tf32", "ieee", "tf32x3"])
def test_fp32_dot_precision(rng, target, precision):
    # Full-width fp32 inputs: rounding them to tf32 moves a sum of 32 products by about 2^-11 of its terms, far
    # more than fp32 accumulation does, so the result tells which inputs were multiplied.
    M, N, K = 32, 64, 32
    a = rng.standard_normal((M, K)).astype(f32)
    b = rng.standard_normal((K, N)).astype(f32)
    c = np.zeros((M, N), f32)
    _block_dot_kernel[(1,)](a, b, c, M, N, K, PRECISION=precision)
    c = (c - 1.0) / 2  # the kernel computes 1 + 2 a b
    exact = a.astype(np.float64) @ b
    rounded = tf32(a).astype(np.float64) @ tf32(b)
    # NVIDIA's tensor cores take tf32; the AMD backend multiplies fp32 exactly (no xf32 MFMA yet).
    uses_tf32 = target.startswith(("sim:sm", "cuda:")) and precision in (None, "tf32")
    np.testing.assert_allclose(c, rounded if uses_tf32 else exact, rtol=1e-5, atol=1e-5)
    assert np.abs(rounded - exact).max() > 1e-3  # the two references are told apart


@triton.jit
def _int8_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.int32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K),
                    other=0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N),
                    other=0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize("shape,blocks", [((37, 53, 71), (32, 32, 32)), ((64, 96, 128), (64, 32, 64))],
                         ids=["37x53x71", "64x96x128"])
def test_int8_matmul(rng, shape, blocks):
    # int8 products summed in int32 are exact, on tensor cores too.
    M, N, K = shape
    BM, BN, BK = blocks
    a = rng.integers(-128, 128, (M, K)).astype(np.int8)
    b = rng.integers(-128, 128, (K, N)).astype(np.int8)
    c = np.zeros((M, N), np.int32)
    _int8_matmul_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](a, b, c, M, N, K, BM=BM, BN=BN, BK=BK)
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


def test_matmul_transposed_operand(rand):
    # B given as a transposed view (column-major): only the strides change.
    M, N, K = 45, 30, 70
    a = rand((M, K), f32, -1, 1)
    b = rand((N, K), f32, -1, 1).T
    c = _matmul(a, b, "ieee")
    np.testing.assert_allclose(c, _reference(a, b), rtol=1e-4, atol=1e-4 * np.sqrt(K))
