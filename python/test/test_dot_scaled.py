"""tl.dot_scaled (microscaling formats) on every target, against a numpy model of the OCP MX definition written
here: e2m1 codes packed two per byte (low nibble first, along K or along M/N), e4m3/e5m2 bytes, bf16/fp16, e8m0
scales (2^(s - 127); 0 is 2^-127, 255 is NaN) per 32 elements along K, e4m3 scales per 16 (nvfp4). As in Triton's
decomposition, the operands are multiplied in fp16 where either is fp16, else in bf16: the scaled values are rounded
to that type (exact for the 4- and 8-bit formats but where they overflow), the products are exact in fp32; only the
fp32 sums' order differs from numpy's."""
import numpy as np
import pytest
import torch

import tessel as triton
import tessel.language as tl

E2M1 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6])


def _fp8_values(codes: np.ndarray, fmt: str) -> np.ndarray:
    dt = torch.float8_e4m3fn if fmt == "e4m3" else torch.float8_e5m2
    return torch.from_numpy(codes.astype(np.uint8)).view(dt).float().numpy().astype(np.float64)


def _operand(rng, fmt: str, rows: int, cols: int, pack_axis: int):
    """(what the kernel loads, its values as float64 [rows, cols]) for one operand."""
    if fmt == "e2m1":
        codes = rng.integers(0, 16, (rows, cols))
        lo, hi = (codes[0::2, :], codes[1::2, :]) if pack_axis == 0 else (codes[:, 0::2], codes[:, 1::2])
        return (lo | (hi << 4)).astype(np.uint8), E2M1[codes]
    if fmt in ("e4m3", "e5m2"):
        codes = rng.integers(0, 256, (rows, cols)).astype(np.uint8)
        values = _fp8_values(codes, fmt)
        bad = ~np.isfinite(values)  # NaN and inf codes would make every sum NaN: use others
        codes[bad] = 0x38
        return codes, _fp8_values(codes, fmt)
    dtype = np.float16 if fmt == "fp16" else None
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    if fmt == "fp16":
        x = x.astype(np.float16)
        return x, x.astype(np.float64)
    t = torch.from_numpy(x).bfloat16()
    return t.view(torch.int16).numpy().view(np.uint16), t.float().numpy().astype(np.float64)


def _compute_type(fa: str, fb: str) -> torch.dtype:
    """The type Triton's decomposition multiplies in: fp16 where an operand is fp16, else bf16."""
    return torch.float16 if "fp16" in (fa, fb) else torch.bfloat16


def _scale_codes(fa: str, fb: str) -> tuple[int, int]:
    """e8m0 scale codes whose scaled values stay finite in the type the dot multiplies in (fp16 ends at 65504:
    e5m2's 57344 takes no factor above 1 there)."""
    return (118, 127) if _compute_type(fa, fb) == torch.float16 else (120, 135)


def _rounded(x: np.ndarray, compute: torch.dtype) -> np.ndarray:
    """x (exact in fp32 or beyond its range) rounded to `compute`, as float64."""
    with np.errstate(over="ignore"):
        return torch.from_numpy(x.astype(np.float32)).to(compute).double().numpy()


def _e8m0(codes: np.ndarray) -> np.ndarray:
    v = np.exp2(codes.astype(np.float64) - 127)
    return np.where(codes == 255, np.nan, v)


@triton.jit
def _scaled_kernel(a_ptr, sa_ptr, b_ptr, sb_ptr, acc_ptr, c_ptr,
                   AR: tl.constexpr, AC: tl.constexpr, BR: tl.constexpr, BC: tl.constexpr,
                   M: tl.constexpr, N: tl.constexpr, SK: tl.constexpr,
                   FA: tl.constexpr, FB: tl.constexpr, A_KPACK: tl.constexpr, B_KPACK: tl.constexpr,
                   SCALED_A: tl.constexpr, SCALED_B: tl.constexpr, ACC: tl.constexpr):
    a = tl.load(a_ptr + tl.arange(0, AR)[:, None] * AC + tl.arange(0, AC)[None, :])
    b = tl.load(b_ptr + tl.arange(0, BR)[:, None] * BC + tl.arange(0, BC)[None, :])
    sa = None
    sb = None
    if SCALED_A:
        sa = tl.load(sa_ptr + tl.arange(0, M)[:, None] * SK + tl.arange(0, SK)[None, :])
    if SCALED_B:
        sb = tl.load(sb_ptr + tl.arange(0, N)[:, None] * SK + tl.arange(0, SK)[None, :])
    out = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    if ACC:
        c = tl.dot_scaled(a, sa, FA, b, sb, FB, tl.load(acc_ptr + out), lhs_k_pack=A_KPACK, rhs_k_pack=B_KPACK)
    else:
        c = tl.dot_scaled(a, sa, FA, b, sb, FB, lhs_k_pack=A_KPACK, rhs_k_pack=B_KPACK)
    tl.store(c_ptr + out, c)


def _run(rng, fa, fb, M=32, N=32, K=64, a_kpack=True, b_kpack=True, scaled=(True, True), acc=False,
         scale_codes=None, nvfp4=False):
    a, av = _operand(rng, fa, M, K, 1 if a_kpack else 0)
    b, bv = _operand(rng, fb, K, N, 0 if b_kpack else 1)
    group = 16 if nvfp4 else 32
    sa = sb = np.zeros(1, np.uint8)
    if nvfp4:
        def scales(rows):
            codes = rng.integers(0x30, 0x48, (rows, K // group)).astype(np.uint8)  # e4m3 values 0.125..3
            return torch.from_numpy(codes).view(torch.float8_e4m3fn), _fp8_values(codes, "e4m3")
    else:
        def scales(rows):
            codes = rng.integers(*(scale_codes or _scale_codes(fa, fb)), (rows, K // group),
                                 endpoint=True).astype(np.uint8)
            return codes, _e8m0(codes)
    # Scaled values are rounded to the type the dot multiplies in (exact but where they overflow it: 2^127 * 448 is
    # inf in bf16, as in Triton's decomposition); a bf16 operand multiplied in fp16 is rounded to fp16.
    compute = _compute_type(fa, fb)
    if scaled[0]:
        sa, factors = scales(M)
        av = av * np.repeat(factors, group, axis=1)
    if scaled[1]:
        sb, factors = scales(N)
        bv = bv * np.repeat(factors, group, axis=1).T
    av, bv = _rounded(av, compute), _rounded(bv, compute)
    acc0 = rng.standard_normal((M, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    _scaled_kernel[(1,)](a, sa, b, sb, acc0, c, *a.shape, *b.shape, M, N, K // group, fa, fb, a_kpack, b_kpack,
                         scaled[0], scaled[1], acc)
    with np.errstate(invalid="ignore"):
        want = av @ bv + (acc0.astype(np.float64) if acc else 0)
    return c, want


FORMATS = ["e2m1", "e4m3", "e5m2", "bf16", "fp16"]


@pytest.mark.parametrize("fa", FORMATS)
@pytest.mark.parametrize("fb", FORMATS)
def test_every_pair_of_formats(rng, fa, fb):
    scaled = (fa not in ("bf16", "fp16"), fb not in ("bf16", "fp16"))
    c, want = _run(rng, fa, fb, scaled=scaled)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("a_kpack,b_kpack", [(False, True), (True, False), (False, False)])
def test_mxfp4_packed_along_m_or_n(rng, a_kpack, b_kpack):
    c, want = _run(rng, "e2m1", "e2m1", a_kpack=a_kpack, b_kpack=b_kpack)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_accumulator_and_shapes(rng):
    for M, N, K in [(16, 16, 32), (64, 32, 128), (32, 64, 256)]:
        c, want = _run(rng, "e4m3", "e2m1", M=M, N=N, K=K, acc=True)
        np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_extreme_scales(rng):
    """e8m0 code 0 is 2^-127 (an fp32 subnormal, not 0); 255 is NaN, and 2^127 times large values overflows bf16:
    their rows and columns are NaN."""
    c, want = _run(rng, "e2m1", "e4m3", scale_codes=(0, 2))
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-30)
    assert np.abs(want).max() > 0
    c, want = _run(rng, "e4m3", "e4m3", scale_codes=(254, 255))
    np.testing.assert_array_equal(np.isnan(c), np.isnan(want))
    assert np.isnan(want).any()


def test_nvfp4_scales(rng):
    """e4m3 scales, one per 16 elements."""
    c, want = _run(rng, "e2m1", "e2m1", nvfp4=True)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@triton.jit
def _batched_kernel(a_ptr, sa_ptr, b_ptr, sb_ptr, acc_ptr, c_ptr, B: tl.constexpr,
                    AR: tl.constexpr, AC: tl.constexpr, BR: tl.constexpr, BC: tl.constexpr,
                    M: tl.constexpr, N: tl.constexpr, SK: tl.constexpr, SHARED: tl.constexpr,
                    FA: tl.constexpr, FB: tl.constexpr, A_KPACK: tl.constexpr, B_KPACK: tl.constexpr):
    i = tl.arange(0, B)[:, None, None]
    a = tl.load(a_ptr + i * AR * AC + tl.arange(0, AR)[None, :, None] * AC + tl.arange(0, AC)[None, None, :])
    b = tl.load(b_ptr + i * BR * BC + tl.arange(0, BR)[None, :, None] * BC + tl.arange(0, BC)[None, None, :])
    if SHARED:  # one scale block for every batch, Triton's shape
        sa = tl.load(sa_ptr + tl.arange(0, M)[:, None] * SK + tl.arange(0, SK)[None, :])
        sb = tl.load(sb_ptr + tl.arange(0, N)[:, None] * SK + tl.arange(0, SK)[None, :])
    else:
        sa = tl.load(sa_ptr + i * M * SK + tl.arange(0, M)[None, :, None] * SK + tl.arange(0, SK)[None, None, :])
        sb = tl.load(sb_ptr + i * N * SK + tl.arange(0, N)[None, :, None] * SK + tl.arange(0, SK)[None, None, :])
    out = i * M * N + tl.arange(0, M)[None, :, None] * N + tl.arange(0, N)[None, None, :]
    c = tl.dot_scaled(a, sa, FA, b, sb, FB, tl.load(acc_ptr + out), lhs_k_pack=A_KPACK, rhs_k_pack=B_KPACK)
    tl.store(c_ptr + out, c)


@pytest.mark.parametrize("fa,fb,a_kpack,b_kpack,shared", [
    ("e2m1", "e4m3", True, True, False), ("e5m2", "e2m1", True, True, True),
    ("e2m1", "e2m1", False, False, False), ("e4m3", "e2m1", True, False, True)])
def test_batched_3d(rng, fa, fb, a_kpack, b_kpack, shared):
    """3-D operands [B, M, K] x [B, K, N]: each batch its own product, with scales per batch or shared by all."""
    B, M, N, K, group = 2, 16, 16, 64, 32
    ops = [(_operand(rng, fa, M, K, 1 if a_kpack else 0), _operand(rng, fb, K, N, 0 if b_kpack else 1))
           for _ in range(B)]
    a = np.stack([o[0][0] for o in ops])
    b = np.stack([o[1][0] for o in ops])
    scale_shape = (lambda rows: (rows, K // group)) if shared else (lambda rows: (B, rows, K // group))
    sa = rng.integers(*_scale_codes(fa, fb), scale_shape(M), endpoint=True).astype(np.uint8)
    sb = rng.integers(*_scale_codes(fa, fb), scale_shape(N), endpoint=True).astype(np.uint8)
    acc0 = rng.standard_normal((B, M, N)).astype(np.float32)
    c = np.zeros((B, M, N), np.float32)
    _batched_kernel[(1,)](a, sa, b, sb, acc0, c, B, *a.shape[1:], *b.shape[1:], M, N, K // group, shared, fa, fb,
                          a_kpack, b_kpack)

    compute = _compute_type(fa, fb)
    for i, ((_, av), (_, bv)) in enumerate(ops):
        fa_i = _e8m0(sa if shared else sa[i])
        fb_i = _e8m0(sb if shared else sb[i])
        want = _rounded(av * np.repeat(fa_i, group, axis=1), compute) @ \
            _rounded(bv * np.repeat(fb_i, group, axis=1).T, compute) + acc0[i]
        np.testing.assert_allclose(c[i], want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@triton.jit
def _bad(a_ptr, b_ptr, s_ptr, WHICH: tl.constexpr):
    a = tl.load(a_ptr + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :])
    s = tl.load(s_ptr + tl.arange(0, 32)[:, None] * 2 + tl.arange(0, 2)[None, :])
    if WHICH == 0:
        c = tl.dot_scaled(a, s, "e3m3", a, s, "e4m3")
    elif WHICH == 1:
        c = tl.dot_scaled(a.to(tl.int32), s, "e4m3", a, s, "e4m3")
    elif WHICH == 2:
        c = tl.dot_scaled(a, s, "e4m3", a, s, "e4m3", lhs_k_pack=False)
    elif WHICH == 3:
        c = tl.dot_scaled(a, s, "e4m3", a, s, "e4m3", out_dtype=tl.float16)
    else:
        c = tl.dot_scaled(a, s, "e4m3", tl.reshape(a, [1, 32, 32]), s, "e4m3")
    tl.store(b_ptr + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :], c)


@pytest.mark.parametrize("which,message", [
    (0, "NYI: lhs_format e3m3"), (1, "Unexpected dtype for e4m3"),
    (2, "only mxfp4 inputs can be packed along a dimension different than K"),
    (3, "Only float32 is supported for out_dtype"),
    (4, "Both inputs must be either 2D or 3D"),
])
def test_tritons_errors_at_the_line(which, message):
    with pytest.raises(triton.CompilationError) as info:
        _bad[(1,)](np.zeros((32, 32), np.uint8), np.zeros((32, 32), np.float32), np.zeros((32, 2), np.uint8), which)
    assert message in str(info.value) and "tl.dot_scaled(" in str(info.value), str(info.value)
