"""Tessel's AMD code runs: the bench kernels (bench/gpu_static_kernels.py: the tutorials' vector add, softmax and
layer norm, the tiled matmul on MFMA, attention forward) compiled for gfx90a, gfx942 and gfx950 exactly as the hip
targets compile them, run by the simulator's AMDGCN front end (sim:gfx*), against numpy. test_gpusim_amdgcn.py
checks that front end on Triton's own AMDGCN."""
import pathlib
import re
import sys

import numpy as np
import pytest

import tessel
import tessel.language as tl
from tessel import knobs

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from bench import gpu_static_kernels as kernels  # noqa: E402
from test_amd_backend import dot_kernel  # noqa: E402  (a block's A @ B, stored)


@pytest.fixture(params=["sim:gfx90a", "sim:gfx942", "sim:gfx950"])
def target(request, monkeypatch):
    """Overrides the suite's per-target fixture: each AMD chip, simulated."""
    monkeypatch.setattr(knobs, "target", request.param)
    return request.param


@pytest.mark.parametrize("n", [1, 5000])
def test_vector_add(rng, n):
    x, y = rng.standard_normal((2, n)).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    kernels.add_kernel[((n + 1023) // 1024,)](x, y, out, n, BLOCK=1024)
    np.testing.assert_array_equal(out, x + y)


def test_softmax(rng):
    x = (rng.standard_normal((37, 1000)) * 4).astype(np.float32)
    out = np.zeros_like(x)
    kernels.softmax_kernel[(37,)](out, x, 1000, 1000, 1000, BLOCK=1024)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-7)


def test_layer_norm(rng):
    m, n = 19, 700
    x = (rng.standard_normal((m, n)) * 2 + 0.5).astype(np.float32)
    w, b = rng.standard_normal((2, n)).astype(np.float32)
    y = np.zeros_like(x)
    mean, rstd = np.zeros((2, m), np.float32)
    kernels.layer_norm_fwd[(m,)](x, y, w, b, mean, rstd, n, n, 1e-5, BLOCK_SIZE=256)
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=1)
    rs = 1 / np.sqrt(((x64 - mu[:, None]) ** 2).mean(axis=1) + 1e-5)
    np.testing.assert_allclose(mean, mu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rstd, rs, rtol=1e-5)
    np.testing.assert_allclose(y, (x64 - mu[:, None]) * rs[:, None] * w + b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("m,n,k", [(128, 96, 80), (64, 64, 32)])
def test_matmul_fp16_on_matrix_cores(rng, target, m, n, k):
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    grid = (-(-m // 64) * -(-n // 64),)
    kernel = kernels.matmul_kernel[grid](a, b, c, m, n, k, k, 1, n, 1, n, 1, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32,
                                         GROUP_M=8)
    # gfx950 takes its double-K form, 8 of K a lane.
    assert ("v_mfma_f32_32x32x16_f16" if target == "sim:gfx950" else "v_mfma_f32_32x32x8") in kernel.asm["amdgcn"]
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-3 * np.abs(ref).max())


def test_attention_forward(rng):
    z, n_ctx, d = 2, 128, 64
    q, k, v = rng.standard_normal((3, z, n_ctx, d)).astype(np.float16)
    out = np.full_like(q, np.nan)
    kernels.attn_fwd[(n_ctx // 64, z)](q, k, v, out, 0.125, n_ctx, HEAD_DIM=d, BLOCK_M=64, BLOCK_N=32)
    s = np.einsum("bmd,bnd->bmn", q.astype(np.float64), k.astype(np.float64)) * 0.125
    p = np.exp(s - s.max(axis=2, keepdims=True))
    ref = np.einsum("bmn,bnd->bmd", p / p.sum(axis=2, keepdims=True), v.astype(np.float64))
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=1e-2, atol=4e-3)


@tessel.jit
def one_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, CHAIN: tl.constexpr):
    m, n, k = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    if a.dtype == tl.int8:
        c = tl.dot(a, b, out_dtype=tl.int32)
    else:
        c = tl.dot(a, b, input_precision="ieee")
        if CHAIN:  # the product as the A operand of a second dot (N == K)
            c = tl.dot(c, b, input_precision="ieee")
    tl.store(c_ptr + m[:, None] * N + n[None, :], c)


# fp32 and int8 dots on the matrix cores: v_mfma_f32_32x32x2f32 (exact fp32 products) and each chip's int8 MFMA
# (gfx90a: 32x32x8, four per lane; CDNA3 on: 32x32x16, eight; gfx950 32x32x32, sixteen), with operands staged in LDS (K taken in runs of 16
# bytes per lane where the rows allow) or, chained, from registers.
@pytest.mark.parametrize("m,n,k,warps", [(32, 32, 16, 1), (64, 64, 32, 4), (128, 64, 64, 4), (64, 128, 16, 2),
                                         (32, 64, 128, 8)])
def test_int8_dots_on_matrix_cores(rng, target, m, n, k, warps):
    a = rng.integers(-128, 128, (m, k), dtype=np.int8)
    b = rng.integers(-128, 128, (k, n), dtype=np.int8)
    c = np.zeros((m, n), np.int32)
    kernel = one_dot[(1,)](a, b, c, M=m, N=n, K=k, CHAIN=False, num_warps=warps)
    want = ("v_mfma_i32_32x32x8i8" if target == "sim:gfx90a"
            else "v_mfma_i32_32x32x32_i8" if target == "sim:gfx950" and k % 32 == 0  # gfx950's double K, 16 a lane
            else "v_mfma_i32_32x32x16_i8")
    assert want in kernel.asm["amdgcn"]
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))


@pytest.mark.parametrize("m,n,k,warps,chain", [(32, 32, 16, 1, False), (64, 64, 32, 4, False),
                                               (128, 64, 64, 4, False), (64, 128, 16, 2, False),
                                               (32, 64, 128, 8, False), (64, 32, 32, 2, True)])
def test_fp32_dots_on_matrix_cores(rng, target, m, n, k, warps, chain):
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    kernel = one_dot[(1,)](a, b, c, M=m, N=n, K=k, CHAIN=chain, num_warps=warps)
    assert re.search(r"v_mfma_f32_32x32x2_?f32", kernel.asm["amdgcn"])
    ref = a.astype(np.float64) @ b.astype(np.float64)
    if chain:
        ref = ref @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


# fp64 dots on the matrix cores: v_mfma_f64_16x16x4_f64 (gfx90a's v_mfma_f64_16x16x4f64), one f64 of A and B a lane,
# its results one row per register pair; staged in LDS, or chained (the transposed accumulator is the next dot's A
# in registers). Triton 3.6 picks the same instruction but cannot lower it (an assertion in its MFMA lowering).
@pytest.mark.parametrize("m,n,k,warps,chain", [(16, 16, 16, 1, False), (32, 32, 16, 1, False),
                                               (64, 64, 32, 4, False), (16, 64, 64, 2, False), (64, 32, 64, 8, False),
                                               (32, 16, 16, 2, True), (64, 32, 32, 4, True)])
def test_fp64_dots_on_matrix_cores(rng, target, m, n, k, warps, chain):
    a = rng.standard_normal((m, k))
    b = rng.standard_normal((k, n))
    c = np.full((m, n), np.nan)
    kernel = one_dot[(1,)](a, b, c, M=m, N=n, K=k, CHAIN=chain, num_warps=warps)
    mfmas = set(re.findall(r"\bv_mfma_\w+", kernel.asm["amdgcn"]))
    assert mfmas == {"v_mfma_f64_16x16x4f64" if target == "sim:gfx90a" else "v_mfma_f64_16x16x4_f64"}
    ref = a @ b
    if chain:
        ref = ref @ b
    np.testing.assert_allclose(c, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())


# Blocks with 16 rows or columns take the 16x16 instructions (v_mfma_f32_16x16x16f16, 16x16x16bf16_1k, 16x16x4f32,
# v_mfma_i32_16x16x16i8 on gfx90a, 16x16x32_i8 on CDNA3, which needs K a multiple of 32: below, an FMA loop), their
# operands staged or, chained, in registers.
@pytest.mark.parametrize("m,n,k,warps", [(16, 16, 16, 1), (32, 16, 32, 2), (16, 64, 64, 4), (16, 128, 32, 4)])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "int8"])
def test_sixteen_row_dots_on_matrix_cores(rng, target, m, n, k, warps, dtype):
    import torch
    if dtype == "int8":
        a = torch.from_numpy(rng.integers(-128, 128, (m, k), dtype=np.int8))
        b = torch.from_numpy(rng.integers(-128, 128, (k, n), dtype=np.int8))
        c = torch.zeros((m, n), dtype=torch.int32)
    else:
        tdt = getattr(torch, dtype)
        a = torch.from_numpy(rng.standard_normal((m, k)).astype(np.float32)).to(tdt)
        b = torch.from_numpy(rng.standard_normal((k, n)).astype(np.float32)).to(tdt)
        c = torch.full((m, n), float("nan"), dtype=torch.float32)
    kernel = one_dot[(1,)](a, b, c, M=m, N=n, K=k, CHAIN=False, num_warps=warps)
    on_cores = not (dtype == "int8" and target != "sim:gfx90a" and k % 32)
    assert ("_16x16x" in kernel.asm["amdgcn"]) == on_cores
    ref = a.double() @ b.double()
    if dtype == "int8":
        np.testing.assert_array_equal(c.numpy(), ref.numpy())
    else:
        tol = 1e-5 if dtype == "float32" else 1e-3
        np.testing.assert_allclose(c.numpy(), ref.numpy(), rtol=tol, atol=tol * ref.abs().max().item())


@pytest.mark.parametrize("m,k,warps", [(16, 32, 1), (16, 64, 2), (32, 16, 4)])
def test_chained_sixteen_row_dots(rng, target, m, k, warps):
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, k)).astype(np.float32)
    c = np.full((m, k), np.nan, np.float32)
    kernel = one_dot[(1,)](a, b, c, M=m, N=k, K=k, CHAIN=True, num_warps=warps)
    assert "v_mfma_f32_16x16x4" in kernel.asm["amdgcn"]
    ref = a.astype(np.float64) @ b.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


@tessel.jit
def chained_dots(q_ptr, k_ptr, v_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, D: tl.constexpr):
    m, n, d = tl.arange(0, M), tl.arange(0, N), tl.arange(0, D)
    q = tl.load(q_ptr + m[:, None] * D + d[None, :])
    k = tl.load(k_ptr + d[:, None] * N + n[None, :])
    v = tl.load(v_ptr + n[:, None] * D + d[None, :])
    s = tl.dot(q, k)
    p = (s - tl.max(s, 1)[:, None]).to(q.dtype)
    tl.store(out_ptr + m[:, None] * D + d[None, :], tl.dot(p, v))


# Chained dots take the transposed MFMA accumulator (a row of the scores in one lane pair): the row reduction, and
# the scores as the second dot's A operand straight from registers where the waves allow it (all along M), staged
# through LDS where they do not (waves along the scores' columns).
@pytest.mark.parametrize("m,n,d,warps", [(32, 32, 32, 1), (64, 32, 64, 4), (64, 64, 32, 2), (128, 64, 64, 8),
                                         (32, 128, 32, 4), (128, 32, 32, 2)])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_chained_dots_on_matrix_cores(rng, target, m, n, d, warps, dtype):
    import torch
    tdt = getattr(torch, dtype)
    q, k, v = (torch.from_numpy(rng.standard_normal(shape).astype(np.float32)).to(tdt)
               for shape in [(m, d), (d, n), (n, d)])
    out = torch.full((m, d), float("nan"), dtype=torch.float32)
    kernel = chained_dots[(1,)](q, k, v, out, M=m, N=n, D=d, num_warps=warps)
    assert ("v_mfma_f32_32x32x16" if target == "sim:gfx950" else "v_mfma_f32_32x32x8") in kernel.asm["amdgcn"]
    s = q.double() @ k.double()
    p = (s - s.max(dim=1, keepdim=True).values).float().to(tdt).double()  # rounded as the kernel rounds it
    ref = (p @ v.double()).numpy()
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-3, atol=1e-2 * np.abs(ref).max())


@tessel.jit
def rows_times_weight(x_ptr, w_ptr, out_ptr, M, BM: tl.constexpr, K: tl.constexpr, N: tl.constexpr):
    rows, k, n = tl.arange(0, BM), tl.arange(0, K), tl.arange(0, N)
    w = tl.load(w_ptr + k[:, None] * N + n[None, :])
    for start in range(0, M, BM):
        x = tl.load(x_ptr + (start + rows)[:, None] * K + k[None, :])
        tl.store(out_ptr + (start + rows)[:, None] * N + n[None, :], tl.dot(x, w))


# The weight (B) does not change in the loop: it is converted to the MFMA operand layout once, before the loop,
# and every iteration's dot takes it from registers.
@pytest.mark.parametrize("warps", [1, 4])
def test_loop_invariant_dot_operand(rng, warps):
    m, k, n = 256, 64, 64
    x = rng.standard_normal((m, k)).astype(np.float16)
    w = rng.standard_normal((k, n)).astype(np.float16)
    out = np.full((m, n), np.nan, np.float32)
    rows_times_weight[(1,)](x, w, out, m, BM=64, K=k, N=n, num_warps=warps)
    ref = x.astype(np.float64) @ w.astype(np.float64)
    np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-3)


@tessel.jit
def scaled_halves(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, (x.to(tl.float32) * 1.0009765625).to(tl.float16))


def test_half_products_keep_the_sign_of_zero():
    # LLVM's AMDGPU backend makes fptrunc(fmul(fpext x, c)) one v_fma_mixlo_f16 with a +0 addend, turning -0 into
    # +0; the backend fences such products (amd-fence-half-products). Every fp16 value, against numpy.
    x = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    out = np.zeros_like(x)
    scaled_halves[(64,)](x, out, BLOCK=1024)
    with np.errstate(invalid="ignore", over="ignore"):
        want = (x.astype(np.float32) * np.float32(1.0009765625)).astype(np.float16)
    number = ~np.isnan(want)
    np.testing.assert_array_equal(out[number].view(np.uint16), want[number].view(np.uint16))
    assert np.isnan(out[~number]).all()


@tessel.jit
def uniform_half_products(out_ptr, x, BLOCK: tl.constexpr):
    tl.store(out_ptr, x * 3.0)
    tl.store(out_ptr + 1 + tl.arange(0, BLOCK), tl.full([BLOCK], 3.0, tl.float32) * x)


@pytest.mark.parametrize("x", [2.0, -0.0, -1.5])
def test_uniform_half_products(x):
    # The same fence on a product every lane shares (a kernel argument's): LLVM 22 could not select an
    # llvm.arithmetic.fence of a uniform value ("illegal VGPR to SGPR copy"; the fuzzer found it, seed 1513556999,
    # kernel 374). The sign of -0 * 3 stays.
    out = np.ones(33, np.float16)
    uniform_half_products[(1,)](out, x, BLOCK=32)
    want = np.full(33, np.float32(x) * np.float32(3.0), np.float32).astype(np.float16)
    np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))


@tessel.jit
def quotients(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) / tl.load(y_ptr + offs))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_division_over_the_whole_range(rng, dtype):
    # LLVM divides with v_div_scale / v_rcp / fma / v_div_fmas / v_div_fixup: operands near the ends of the range
    # are scaled by 2^64 (2^128 for f64) and the quotient scaled back, denormal and overflowing quotients fixed up.
    # Random bit patterns (every exponent, denormals included) against numpy, bit for bit.
    bits = np.uint32 if dtype == np.float32 else np.uint64
    n = 8192
    x, y = (rng.integers(0, np.iinfo(bits).max, n, dtype=bits, endpoint=True).view(dtype) for _ in range(2))
    finite = np.isfinite(x) & np.isfinite(y)
    x, y = np.where(finite, x, dtype(1.5)), np.where(finite, y, dtype(3.0))
    out = np.zeros_like(x)
    quotients[(n // 256,)](x, y, out, BLOCK=256)
    with np.errstate(all="ignore"):
        want = x / y
    same = (out.view(bits) == want.view(bits)) | (np.isnan(out) & np.isnan(want))
    assert same.all(), (x[~same][:4], y[~same][:4], out[~same][:4], want[~same][:4])


@tessel.jit
def unmasked(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def test_out_of_bounds_is_an_error_naming_the_lane():
    # A buffer load (offsets 0..1023 fit its range) past the array: the hardware would read it, the simulator stops.
    x = np.zeros(1000, np.float32)
    out = np.zeros(1000, np.float32)
    with pytest.raises(RuntimeError, match=r"(?s)out-of-bounds global load .* workgroup \(0,0,0\), wave 3, lane 58 "
                                           r"\(work-item 250\), AMDGCN line \d+: buffer_load"):
        unmasked[(1,)](x, out, BLOCK=1024)


@tessel.jit
def column_sums(x_ptr, sum_ptr, max_ptr, M: tl.constexpr, N: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    x = tl.load(x_ptr + m[:, None] * N + n[None, :])
    tl.store(sum_ptr + n, tl.sum(x, 0))
    tl.store(max_ptr + n, tl.max(x, 0))


@pytest.mark.parametrize("m", [4, 8])
def test_cross_wave_reduction_reads_its_partials_before_the_barrier(rng, m):
    # The partial sums of the four waves go through LDS, then one wave adds them and writes the results over the
    # same bytes after a barrier. LLVM's machine sinking moved the LDS loads past that barrier, into the block of
    # the wave that adds, after its own first stores: columns 2 and 3 of every 4 came out wrong (f64, 4 waves).
    x = rng.standard_normal((m, 256))
    sums, maxes = np.zeros((2, 256))
    column_sums[(1,)](x, sums, maxes, M=m, N=256)
    np.testing.assert_allclose(sums, x.sum(axis=0), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(maxes, x.max(axis=0))


# Kernels of the language tests whose AMD code first ran wrong in the simulator (each a simulator bug): an fp16
# softmax (v_fma_mix with f32 sources), a negation folded into v_cndmask_b32 (-v2), int64 to bf16 (an f64 literal
# is a double's high half), int8 gathers (SDWA sext()).
def test_fp16_softmax(rng):
    from test_kernels import _softmax_ref, softmax_kernel
    x = rng.uniform(-10, 10, (4, 1000)).astype(np.float16)
    out = np.zeros_like(x)
    softmax_kernel[(4,)](x, out, 1000, 1000, 1000, BLOCK=1024)
    np.testing.assert_allclose(out, _softmax_ref(x), rtol=2e-3, atol=2e-6)


def test_negation_in_a_branch(rng):
    from test_control_flow import _runtime_if_kernel
    x = rng.standard_normal((9, 16)).astype(np.float32)
    flags = np.array([1, -1, 0, 5, -5, 0, 2, 0, -3], np.int32)
    out = np.zeros_like(x)
    _runtime_if_kernel[(9,)](x, flags, out, 0.5, BLOCK=16)
    ref = np.where(flags[:, None] > 0, x * 2, np.where(flags[:, None] < 0, -x, x + 100)) * np.float32(0.5)
    np.testing.assert_allclose(out, ref, rtol=1e-6)


def test_int64_to_bf16(rng):
    import torch
    from test_subnormals import _int_to_bf16, _int_to_bf16_reference, bits_of
    ints = rng.integers(-2**31, 2**31 - 1, 64).astype(np.int32)
    longs = np.array([2**62 + 2**54 + 1, 2**62 + 2**54, -(2**62 + 2**54 + 1), 2**63 - 1, -2**63, 2**53 + 1, 7, -9] * 8,
                     np.int64)
    out_i, out_l = torch.zeros(64, dtype=torch.bfloat16), torch.zeros(64, dtype=torch.bfloat16)
    _int_to_bf16[(1,)](ints, longs, out_i, out_l, N=64)
    np.testing.assert_array_equal(bits_of(out_i), _int_to_bf16_reference(ints))
    np.testing.assert_array_equal(bits_of(out_l), _int_to_bf16_reference(longs))


@pytest.mark.parametrize("magnitude", [1.0, 1e4, 1e30])
def test_sin_cos_are_accurate_at_every_magnitude(rng, magnitude):
    # LLVM's llvm.sin.f32 is v_sin_f32 of x / 2pi on AMD GPUs: 7e-4 wrong at 10^4. tl.sin and tl.cos call OCML.
    from test_fuzz_findings import _sin_cos
    x = (rng.uniform(-1, 1, 1024) * magnitude).astype(np.float32)
    s, c = np.zeros_like(x), np.zeros_like(x)
    _sin_cos[(1,)](x, s, c, N=1024)
    np.testing.assert_allclose(s, np.sin(x.astype(np.float64)), rtol=0, atol=2.5e-7)
    np.testing.assert_allclose(c, np.cos(x.astype(np.float64)), rtol=0, atol=2.5e-7)


@tessel.jit
def fp64_math(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.exp(x))
    tl.store(out_ptr + N + offs, tl.exp2(x))
    tl.store(out_ptr + 2 * N + offs, tl.log(tl.abs(x) + 1))
    tl.store(out_ptr + 3 * N + offs, tl.log2(tl.abs(x) + 1))
    tl.store(out_ptr + 4 * N + offs, tl.sin(x))
    tl.store(out_ptr + 5 * N + offs, tl.cos(x))


def test_fp64_math_is_ocmls(rng):
    # LLVM's AMDGPU backend has no fp64 exp, exp2, log, log2, sin or cos: they call OCML (found by the fuzzer on
    # sim:gfx942, where they did not compile); sin and cos reduce through v_trig_preop_f64.
    x = rng.uniform(-30, 30, 64)
    out = np.zeros(6 * 64)
    fp64_math[(1,)](x, out, N=64)
    ref = np.concatenate([np.exp(x), np.exp2(x), np.log(np.abs(x) + 1), np.log2(np.abs(x) + 1), np.sin(x),
                          np.cos(x)])
    np.testing.assert_allclose(out, ref, rtol=1e-15, atol=1e-15)


def test_noinline_functions_are_called(target):
    # @jit(noinline=True): one function per specialization, called with s_swappc_b64 (s_getpc_b64 and a relative
    # address), returning with s_setpc_b64; nested calls keep the return address on the scratch stack (s32/s33).
    import re
    from test_noinline import _loop, _sums
    x, y, out = np.ones(16, np.float32), np.full(16, 2, np.float32), np.zeros(3, np.float32)
    kernel = _sums.warmup(x, y, out, 16, grid=(1,))
    code = kernel.asm["amdgcn"]
    assert len(re.findall(r"^_scaled_sum_\d+:$", code, re.M)) == 2 and code.count("s_swappc_b64") == 3, code
    _sums[(1,)](x, y, out, 16)
    np.testing.assert_array_equal(out, [32, 64, 48])
    x = np.arange(64, dtype=np.float32)
    acc = np.zeros(64)
    for k in range(4):
        acc = k * x + acc + 1.0
    got = np.zeros_like(x)
    _loop[(1,)](x, got, 4, 64)
    np.testing.assert_allclose(got, 4 * x + acc, rtol=1e-6)
    assert "scratch_store" in _loop.warmup(x, got, 4, 64, grid=(1,)).asm["amdgcn"] or target == "sim:gfx90a"


def test_a_jump_outside_the_code_is_an_error(target):
    # A call whose address is not an instruction's is an error naming it, not a jump into nowhere.
    import re
    from tessel import gpusim
    from test_noinline import _sums
    x, y, out = np.ones(16, np.float32), np.ones(16, np.float32), np.zeros(3, np.float32)
    code = _sums.warmup(x, y, out, 16, grid=(1,)).asm["amdgcn"]
    broken = re.sub(r"(s_add_u32 (s\d+), \2, )_scaled_sum_0@rel32@lo\+4", r"\g<1>6", code, count=1)
    assert broken != code
    with pytest.raises(gpusim.SimulatorError, match="jumps to 0x.*, which is not an instruction"):
        gpusim.launch(broken, "_sums", 1, num_warps=4, args=[x, y, out])


@tessel.jit
def _spilling(x_ptr, y_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, tl.cumsum(x, axis=1) * tl.cumsum(y, axis=0) + x - y)


def test_spilled_registers_come_back(rng):
    # Two 128 x 128 blocks on one wave spill hundreds of VGPRs to scratch: gfx942/gfx950 with scratch_*, gfx90a
    # through the private segment buffer (buffer_store/load with s[0:3]), which the simulator dropped (reading
    # zeros back: off by 4409).
    N = 128
    x, y = rng.random((N, N), dtype=np.float32), rng.random((N, N), dtype=np.float32)
    out = np.zeros_like(x)
    code = _spilling.warmup(x, y, out, N, grid=(1,), num_warps=1).asm["amdgcn"]
    assert ("buffer_store_dword" if knobs.target == "sim:gfx90a" else "scratch_store") in code
    _spilling[(1,)](x, y, out, N, num_warps=1)
    np.testing.assert_allclose(out, np.cumsum(x, 1, dtype=np.float64) * np.cumsum(y, 0, dtype=np.float64) + x - y,
                               rtol=1e-5)


_CLZLL = {(tl.int64,): ("__nv_clzll", tl.int32)}


@tl.core.extern
def _clzll(x, _semantic=None):
    return tl.core.extern_elementwise("", "", [x], _CLZLL, is_pure=True, _semantic=_semantic)


@tessel.jit
def _count_leading_zeros(x_ptr, y_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(y_ptr + i, _clzll(tl.load(x_ptr + i)))


def test_saturating_integer_adds(rng):
    # 64-bit ctlz is min3(ffbh(hi), ffbh(lo) + 32 with clamp, 64): a zero low half's 0xffffffff must stay
    # saturated (the simulator ignored clamp on integer adds: clzll(0) was 31, not 64).
    x = rng.integers(-2**63, 2**63 - 1, 64, dtype=np.int64)
    x[:4] = [0, 1, 1 << 40, -1]
    y = np.zeros(64, np.int32)
    _count_leading_zeros[(1,)](x, y, 64)
    assert "clamp" in _count_leading_zeros.warmup(x, y, 64, grid=(1,)).asm["amdgcn"]
    np.testing.assert_array_equal(y, [64 - (int(v) & (2**64 - 1)).bit_length() for v in x])


def test_a_full_disk_is_an_error_not_an_exit(tmp_path, target):
    # The AMD compile writes the object LLD links: on a full disk (EFBIG) it ended the process with status 1 and
    # no message (raw_fd_ostream's fatal error); it is a BackendError saying so.
    import os
    import subprocess
    from test_cache import DISK_FULL_SCRIPT, KERNEL_SOURCE
    (tmp_path / "full_kernel.py").write_text(KERNEL_SOURCE.format(scale=2, helper_factor=3, kernel_extra=""))
    script = tmp_path / "full.py"
    script.write_text(DISK_FULL_SCRIPT.format(dir=str(tmp_path), limit=1000))
    env = dict(os.environ, TESSEL_CACHE_DIR=str(tmp_path / "cache"), TESSEL_TARGET=target,
               PYTHONPATH=os.pathsep.join(sys.path), PYTHONDONTWRITEBYTECODE="1")
    p = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("error BackendError") and "File too large" in p.stdout, p.stdout


@tessel.jit
def _packed_halves(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    pairs = [tl.inline_asm_elementwise("v_pk_mul_f16 $0, $1, $2", "=v,v,v", [x, y], dtype=tl.float16,
                                       is_pure=True, pack=2),
             tl.inline_asm_elementwise("v_pk_max_f16 $0, $1, $2", "=v,v,v", [x, y], dtype=tl.float16,
                                       is_pure=True, pack=2),
             tl.inline_asm_elementwise("v_pk_min_f16 $0, $1, $2", "=v,v,v", [x, y], dtype=tl.float16,
                                       is_pure=True, pack=2),
             # y negated in both halves (neg_lo, neg_hi): which elements share a register is the layout's, so
             # only per-element modifiers have a meaning here.
             tl.inline_asm_elementwise("v_pk_add_f16 $0, $1, $2 neg_lo:[0,1] neg_hi:[0,1]", "=v,v,v", [x, y],
                                       dtype=tl.float16, is_pure=True, pack=2)]
    for i in tl.static_range(4):
        tl.store(out_ptr + i * N + offs, pairs[i])


def test_packed_f16_math(rng):
    # v_pk_*_f16, each half rounded once, against numpy's float16 (maxNum/minNum: a NaN operand yields the other).
    N = 256
    x = (rng.standard_normal(N) * 30).astype(np.float16)
    y = (rng.standard_normal(N) * 30).astype(np.float16)
    x[:4] = [np.nan, 0.0, 65504, 1e-7]
    y[:4] = [1.0, -0.0, 2.0, 3e-7]
    out = np.zeros(4 * N, np.float16)
    _packed_halves[(1,)](x, y, out, N)
    with np.errstate(over="ignore"):  # 65504 * 2 is inf in float16, as on the GPU
        np.testing.assert_array_equal(out[:N], x * y)
    np.testing.assert_array_equal(out[N:2 * N], np.fmax(x, y))
    np.testing.assert_array_equal(out[2 * N:3 * N], np.fmin(x, y))
    np.testing.assert_array_equal(out[3 * N:], x - y)


_PACKED_INT16 = ["v_pk_add_u16 $0, $1, $2", "v_pk_sub_u16 $0, $1, $2", "v_pk_add_i16 $0, $1, $2 clamp",
                 "v_pk_sub_i16 $0, $1, $2 clamp", "v_pk_mul_lo_u16 $0, $1, $2", "v_pk_lshlrev_b16 $0, $1, $2",
                 "v_pk_lshrrev_b16 $0, $1, $2", "v_pk_ashrrev_i16 $0, $1, $2", "v_pk_max_i16 $0, $1, $2",
                 "v_pk_min_i16 $0, $1, $2", "v_pk_max_u16 $0, $1, $2", "v_pk_min_u16 $0, $1, $2",
                 "v_pk_add_u16 $0, $1, $2 clamp", "v_pk_sub_u16 $0, $1, $2 clamp"]


@tessel.jit
def _packed_int16(x_ptr, y_ptr, z_ptr, out_ptr, N: tl.constexpr, OP: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    z = tl.load(z_ptr + offs)
    if "$3" in OP:
        r = tl.inline_asm_elementwise(OP, "=v,v,v,v", [x, y, z], dtype=tl.int16, is_pure=True, pack=2)
    else:
        r = tl.inline_asm_elementwise(OP, "=v,v,v", [x, y], dtype=tl.int16, is_pure=True, pack=2)
    tl.store(out_ptr + offs, r)


@tessel.jit
def _packed_fma_f16(x_ptr, y_ptr, z_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    r = tl.inline_asm_elementwise("v_pk_fma_f16 $0, $1, $2, $3", "=v,v,v,v",
                                  [tl.load(x_ptr + offs), tl.load(y_ptr + offs), tl.load(z_ptr + offs)],
                                  dtype=tl.float16, is_pure=True, pack=2)
    tl.store(out_ptr + offs, r)


def test_packed_int16_math(rng):
    # The SLP vectorizer pairs 16-bit integer operations into v_pk_*_u16/i16/b16: each half against numpy (wrapping,
    # or saturating with clamp; shifts take the low 4 bits of the first source).
    N = 256
    x, y, z = (rng.integers(-2**15, 2**15, N).astype(np.int16) for _ in range(3))
    x[:4] = [32767, -32768, 5, 17]
    y[:4] = [1, 1, -7, 3]
    ops = _PACKED_INT16 + ["v_pk_mad_i16 $0, $1, $2, $3", "v_pk_mad_u16 $0, $1, $2, $3 clamp"]
    out = np.zeros((len(ops), N), np.int16)
    for row, op in zip(out, ops):
        _packed_int16[(1,)](x, y, z, row, N, OP=op)
    xi, yi, zi = (v.astype(np.int64) for v in (x, y, z))
    xu, yu, zu = (v.astype(np.uint16).astype(np.int64) for v in (x, y, z))
    wrap = lambda v: (v & 0xffff).astype(np.uint16).view(np.int16)  # noqa: E731
    s16 = lambda v: np.clip(v, -2**15, 2**15 - 1).astype(np.int16)  # noqa: E731
    u16 = lambda v: np.clip(v, 0, 2**16 - 1).astype(np.uint16).view(np.int16)  # noqa: E731
    sh = xu & 15
    expected = [wrap(xu + yu), wrap(xu - yu), s16(xi + yi), s16(xi - yi), wrap(xu * yu), wrap(yu << sh),
                wrap(yu >> sh), (yi >> sh).astype(np.int16), np.maximum(x, y), np.minimum(x, y),
                np.maximum(xu, yu).astype(np.uint16).view(np.int16), np.minimum(xu, yu).astype(np.uint16).view(np.int16),
                u16(xu + yu), u16(xu - yu), wrap(xi * yi + zi), u16(xu * yu + zu)]
    for got, want, name in zip(out, expected, ops):
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_packed_fma_f16(rng):
    # v_pk_fma_f16: each half's a*b+c rounded once, against the exact products in float64 rounded to float16.
    N = 256
    x, y, z = ((rng.standard_normal(N) * 8).astype(np.float16) for _ in range(3))
    out = np.zeros(N, np.float16)
    _packed_fma_f16[(1,)](x, y, z, out, N)
    np.testing.assert_array_equal(out, (x.astype(np.float64) * y + z).astype(np.float16))


@pytest.mark.parametrize("dtype,K", [("float16", 16), ("float16", 32), ("float16", 64), ("float16", 128),
                                     ("int8", 32), ("int8", 64), ("int8", 128)])
def test_staged_operands_have_no_bank_conflicts(target, rng, dtype, K):
    # Both MFMA operands go through LDS: A in rows along K (32 to 256 bytes), read a K run per lane in 16-byte
    # vectors; B as a row-major K x N block. Padding after each 128 bytes of rows keeps the writes and the reads
    # free of bank conflicts (the simulator's LDS model: 128 bytes a cycle in lane order), and the product exact.
    from tessel import gpusim
    M = N = 64
    if dtype == "int8":
        a, b = (rng.integers(-128, 128, s).astype(np.int8) for s in ((M, K), (K, N)))
        c, want = np.zeros((M, N), np.int32), a.astype(np.int64) @ b.astype(np.int64)
    else:  # small integers: every product and sum exact in fp32
        a, b = (rng.integers(-4, 5, s).astype(np.float16) for s in ((M, K), (K, N)))
        c, want = np.zeros((M, N), np.float32), a.astype(np.float64) @ b.astype(np.float64)
    kernel = dot_kernel.warmup(a, b, c, M=M, N=N, K=K, grid=(1,), num_warps=4)
    shared = int(dict(f.split("=", 1) for f in kernel.asm["launch"].split() if "=" in f)["shared"])
    counters = gpusim.launch(kernel.asm["amdgcn"], kernel.name, 1, num_warps=4, shared_bytes=shared,
                             args=[a, b, c])
    np.testing.assert_array_equal(c, want)
    assert "v_mfma" in kernel.asm["amdgcn"]
    assert counters["shared_store_bank_conflicts"] == 0, counters
    assert counters["shared_load_bank_conflicts"] == 0, counters


_FP8 = {"e4b8": "float8_e4m3fnuz", "e5b16": "float8_e5m2fnuz", "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}


def _fp8_operands(rng, shapes, formats):
    """Random bytes finite and at most 16 in magnitude in every format, as torch tensors of `formats`, and their
    values decoded by torch."""
    import torch
    codes = np.arange(256, dtype=np.uint8)
    decoded = [torch.from_numpy(codes).view(getattr(torch, t)).double().numpy() for t in _FP8.values()]
    ok = np.all([np.isfinite(d) & (np.abs(d) <= 16) for d in decoded], axis=0)
    out = []
    for shape, fmt in zip(shapes, formats):
        t = torch.from_numpy(rng.choice(codes[ok], shape).astype(np.uint8)).view(getattr(torch, _FP8[fmt]))
        out.append((t, t.double().numpy()))
    return out


@pytest.mark.parametrize("formats", [("e4b8", "e4b8"), ("e5b16", "e4b8"), ("e4m3", "e5m2"), ("e5m2", "e5m2")],
                         ids="x".join)
def test_fp8_dot_on_the_matrix_cores(target, rng, formats):
    # gfx942 multiplies its fnuz formats on v_mfma_f32_32x32x16_{fp8,bf8}_{fp8,bf8}, gfx950 the OCP ones (on its
    # f8f6f4 MFMA where K is a multiple of 64); other
    # pairs (and gfx90a, without 8-bit float MFMA) widen to fp16, which holds every value exactly. Products are
    # exact and sums of 64 of them exact in fp32 at these magnitudes.
    (a, av), (b, bv) = _fp8_operands(rng, [(64, 64), (64, 64)], formats)
    c = np.zeros((64, 64), np.float32)
    kernel = dot_kernel.warmup(a, b, c, M=64, N=64, K=64, grid=(1,))
    dot_kernel[(1,)](a, b, c, M=64, N=64, K=64)
    np.testing.assert_allclose(c, av @ bv, rtol=1e-6, atol=1e-6 * np.abs(av @ bv).max())
    family = "fnuz" if formats[0].startswith(("e4b", "e5b")) else "ocp"
    native = (target, family) in (("sim:gfx942", "fnuz"), ("sim:gfx950", "ocp"))
    name = {"e4b8": "fp8", "e4m3": "fp8", "e5b16": "bf8", "e5m2": "bf8"}
    if native and target == "sim:gfx950":  # K = 64 takes the f8f6f4 MFMA, 32 elements a lane
        assert "v_mfma_f32_32x32x64_f8f6f4" in kernel.asm["amdgcn"]
    elif native:
        assert f"v_mfma_f32_32x32x16_{name[formats[0]]}_{name[formats[1]]}" in kernel.asm["amdgcn"]
    else:  # gfx950: its double-K form
        assert re.search(r"v_mfma_f32_32x32x(8_?|16_)f16", kernel.asm["amdgcn"])


@tessel.jit
def _fp8_chained_dots(A, B, V, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    offs_m, offs_n, offs_k = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(A + offs_m[:, None] * K + offs_k[None, :])
    b = tl.load(B + offs_k[:, None] * N + offs_n[None, :])
    v = tl.load(V + offs_n[:, None] * N + offs_n[None, :])
    s = tl.dot(a, b)  # its accumulator is transposed: the operands' registers swap places
    tl.store(C + offs_m[:, None] * N + offs_n[None, :], tl.dot(s.to(tl.float16), v))


@pytest.mark.parametrize("K", [32, 64])
@pytest.mark.parametrize("formats", [("e5b16", "e4b8"), ("e4b8", "e5b16"), ("e5m2", "e4m3")], ids="x".join)
def test_fp8_mixed_formats_in_a_transposed_accumulator(target, rng, formats, K):
    # A chained dot's MFMAs take B's registers first: a mixed pair's formats swap with them (Triton 3.6 did not
    # swap them: triton-lang/triton#9567), on gfx950's f8f6f4 (K = 64) as on the 32x32x16 MFMAs.
    (a, av), (b, bv) = _fp8_operands(rng, [(32, K), (K, 32)], formats)
    v = rng.integers(-2, 3, (32, 32)).astype(np.float16)
    c = np.zeros((32, 32), np.float32)
    _fp8_chained_dots[(1,)](a, b, v, c, M=32, N=32, K=K)
    s = (av @ bv).astype(np.float16).astype(np.float64)
    np.testing.assert_allclose(c, s @ v.astype(np.float64), rtol=1e-5, atol=1e-5 * np.abs(s @ v).max())
