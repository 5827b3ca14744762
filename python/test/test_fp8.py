"""8-bit floats: tl.float8e4nv (e4m3: no infinities, 448 at most; torch.float8_e4m3fn), tl.float8e5 (e5m2,
IEEE-like; torch.float8_e5m2), their "fnuz" forms tl.float8e4b8 and tl.float8e5b16 (biases 8 and 16, no infinities, no
negative zero, NaN 0x80; torch.float8_e4m3fnuz and torch.float8_e5m2fnuz) and Triton's tl.float8e4b15 (e4m3 with bias
15: every code finite, 1.875 at most; no torch type: uint8 arrays through tessel.reinterpret). Conversions round to
nearest even and saturate to the largest finite value (infinities too, as PTX's cvt.rn.satfinite does); NaN becomes the
format's NaN code (0x7F, or 0x80 for fnuz; e4b15, without one, saturates it to 0x7F); arithmetic runs on the exact fp32
values and rounds each result back; dots multiply exactly and accumulate in fp32 (on sm_89 and newer on mma.sync
m16n8k32 with OCP 8-bit inputs). The reference is numpy: each format's values listed from its definition, nearest
values chosen by distance."""
import functools

import numpy as np
import pytest

import tessel
import tessel.language as tl

torch = pytest.importorskip("torch")

FORMATS = {
    # name: (tl dtype, torch dtype (None: uint8 reinterpreted), exponent bits, mantissa bits, bias, largest finite
    #        code, specials)
    "e4m3": (tl.float8e4nv, torch.float8_e4m3fn, 4, 3, 7, 0x7E, "fn"),
    "e5m2": (tl.float8e5, torch.float8_e5m2, 5, 2, 15, 0x7B, "ieee"),
    "e4b8": (tl.float8e4b8, torch.float8_e4m3fnuz, 4, 3, 8, 0x7F, "fnuz"),
    "e5b16": (tl.float8e5b16, torch.float8_e5m2fnuz, 5, 2, 16, 0x7F, "fnuz"),
    "e4b15": (tl.float8e4b15, None, 4, 3, 15, 0x7F, "none"),
}


def values(fmt):
    """The value of each of the 256 codes, from the format's definition (NaN where the code is not a number)."""
    _, _, e_bits, m_bits, bias, _, specials = FORMATS[fmt]
    codes = np.arange(256)
    mag = codes & 0x7F
    e, m = mag >> m_bits, mag & ((1 << m_bits) - 1)
    v = np.where(e == 0, m * 2.0 ** (1 - bias - m_bits), ((1 << m_bits) + m) * 2.0 ** (e - bias - m_bits))
    if specials == "fn":
        v = np.where(mag == 0x7F, np.nan, v)
    elif specials == "ieee":
        v = np.where(e == 31, np.where(m == 0, np.inf, np.nan), v)
    v = np.where(codes & 0x80, -v, v)
    if specials == "fnuz":
        v = np.where(codes == 0x80, np.nan, v)
    return v


def nearest_codes(x, fmt):
    """Round to nearest, ties to the even code; saturate past the largest finite value; NaN -> the format's NaN code
    (e4b15 has none: its largest value); fnuz formats have no negative zero."""
    largest, specials = FORMATS[fmt][5], FORMATS[fmt][6]
    finite = values(fmt)[:largest + 1]  # codes 0..largest, increasing
    x = np.asarray(x, np.float64)
    a = np.minimum(np.abs(x), finite[-1])
    d = np.abs(finite[None, :] - np.where(np.isnan(a), 0, a)[:, None])
    best = d.min(axis=1, keepdims=True)
    ties = d == best
    # The lowest even code among the nearest (two nearest codes are neighbours: one is even).
    even = np.where(ties & (np.arange(largest + 1) % 2 == 0), 1, 0).argmax(axis=1)
    first = ties.argmax(axis=1)
    code = np.where(ties.sum(axis=1) > 1, even, first)
    negative = np.signbit(x) & ((code != 0) if specials == "fnuz" else True)
    code = np.where(negative, code | 0x80, code)
    nan_code = {"fnuz": 0x80, "none": 0x7F}.get(specials, 0x7F)
    return np.where(np.isnan(x), nan_code, code).astype(np.uint8)


def as_fp8(codes, fmt):
    t = torch.from_numpy(np.ascontiguousarray(codes, np.uint8))
    return t.view(FORMATS[fmt][1]) if FORMATS[fmt][1] is not None else tessel.reinterpret(t, FORMATS[fmt][0])


def empty_fp8(n, fmt):
    return as_fp8(np.zeros(n, np.uint8), fmt)


def codes_of(t):
    return (t.base if isinstance(t, tessel.TensorWrapper) else t).view(torch.uint8).numpy()


@tessel.jit
def _convert_kernel(x_ptr, y_ptr, n, TO: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=i < n).to(TO), mask=i < n)


def convert(x, to, out):
    _convert_kernel[(-(-x.numel() // 256),)](x, out, x.numel(), TO=to, BLOCK=256)
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_code_to_fp32(fmt):
    x = as_fp8(np.arange(256), fmt)
    y = convert(x, tl.float32, torch.empty(256, dtype=torch.float32)).numpy()
    np.testing.assert_array_equal(y, values(fmt).astype(np.float32))  # NaNs at the same codes
    assert not np.signbit(y[0])
    if FORMATS[fmt][6] != "fnuz":
        assert np.signbit(y[128]) and y[128] == 0


def _interesting(fmt, rng, n=2048):
    """Random values over the whole range, every code's value, exact midpoints (ties), values just off them, past
    the largest value, subnormals, zeros of both signs, infinities and NaN."""
    v = values(fmt)
    finite = v[:FORMATS[fmt][5] + 1]
    mids = (finite[:-1] + finite[1:]) / 2
    parts = [rng.standard_normal(n) * 10.0 ** rng.integers(-4, 4, n), finite, -finite, mids, -mids,
             mids * (1 + 2.0 ** -20), mids * (1 - 2.0 ** -20), finite[-1] * np.array([1.03, 1.07, 1.2, 2, 1e6]),
             np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, finite[1] / 2, finite[1] / 2 * 1.01])]
    return np.concatenate(parts)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("src", ["fp32", "fp64", "fp16", "bf16"])
def test_round_to_fp8(rng, fmt, src):
    x = _interesting(fmt, rng)
    if src == "fp64":
        # Just above and below a midpoint by less than fp32 keeps: through fp32 they would round to the midpoint,
        # then to the even neighbour.
        mids = (values(fmt)[1:FORMATS[fmt][5] + 1] + values(fmt)[:FORMATS[fmt][5]]) / 2
        x = np.concatenate([x, mids * (1 + 2.0 ** -40), mids * (1 - 2.0 ** -40)])
    dtype = {"fp32": torch.float32, "fp64": torch.float64, "fp16": torch.float16, "bf16": torch.bfloat16}[src]
    xt = torch.from_numpy(x).to(dtype)
    exact = xt.double().numpy()  # the input as the kernel sees it
    out = convert(xt, FORMATS[fmt][0], empty_fp8(len(x), fmt))
    np.testing.assert_array_equal(codes_of(out), nearest_codes(exact, fmt))


def test_e4m3_matches_torch_on_finite_values(rng):
    # torch's fp32 -> float8_e4m3fn also rounds to nearest even and saturates finite values.
    x = torch.from_numpy(_interesting("e4m3", rng)).float()
    x = x[torch.isfinite(x)]
    out = convert(x, tl.float8e4nv, torch.empty(len(x), dtype=torch.float8_e4m3fn))
    np.testing.assert_array_equal(codes_of(out), codes_of(x.to(torch.float8_e4m3fn)))


@pytest.mark.parametrize("fmt", ["e4b8", "e5b16"])
def test_fnuz_matches_torch_in_range(rng, fmt):
    # torch's fp32 -> float8_e4m3fnuz / float8_e5m2fnuz round to nearest even too (past the range torch gives NaN
    # where Tessel saturates, so the comparison stays inside it).
    x = torch.from_numpy(_interesting(fmt, rng)).float()
    x = x[torch.isfinite(x) & (x.abs() <= float(values(fmt)[0x7F]))]
    out = convert(x, FORMATS[fmt][0], empty_fp8(len(x), fmt))
    np.testing.assert_array_equal(codes_of(out), codes_of(x.to(FORMATS[fmt][1])))


@tessel.jit
def _constants_kernel(out_ptr, T: tl.constexpr):
    i = tl.arange(0, 8)
    c = tl.where(i == 0, tl.full((8,), 1.25, T), tl.full((8,), 0.1, T))
    c = tl.where(i == 2, tl.full((8,), -3.0e5, T), c)
    c = tl.where(i == 3, tl.full((8,), -0.0, T), c)
    c = tl.where(i == 4, tl.zeros((8,), T) + 0.375, c)
    tl.store(out_ptr + i, c)


@pytest.mark.parametrize("fmt", FORMATS)
def test_constants(fmt):
    # Literals round as conversions from fp32 do (e4b15's too, though MLIR's carrier type has another bias).
    out = empty_fp8(8, fmt)
    _constants_kernel[(1,)](out, T=FORMATS[fmt][0])
    ref = nearest_codes(np.float32([1.25, 0.1, -3.0e5, -0.0, 0.375, 0.1, 0.1, 0.1]).astype(np.float64), fmt)
    np.testing.assert_array_equal(codes_of(out), ref)


@pytest.mark.parametrize("pair", [("e4m3", "e5m2"), ("e5m2", "e4m3"), ("e4b8", "e5b16"), ("e5b16", "e4b8"),
                                  ("e4b15", "e4m3"), ("e4m3", "e4b15"), ("e5m2", "e4b8"), ("e5b16", "e4b15")],
                         ids="-to-".join)
def test_fp8_to_fp8_and_integers(pair):
    src, dst = pair
    x = as_fp8(np.arange(256), src)
    out = convert(x, FORMATS[dst][0], empty_fp8(256, dst))
    np.testing.assert_array_equal(codes_of(out), nearest_codes(values(src), dst))
    ints = torch.tensor(np.arange(-600, 600, 7), dtype=torch.int32)
    out = convert(ints, FORMATS[src][0], empty_fp8(len(ints), src))
    np.testing.assert_array_equal(codes_of(out), nearest_codes(ints.numpy(), src))
    finite = np.flatnonzero(np.isfinite(values(src)))
    back = convert(as_fp8(finite, src), tl.int32, torch.empty(len(finite), dtype=torch.int32))
    np.testing.assert_array_equal(back.numpy(), np.trunc(values(src)[finite]).astype(np.int32))


@tessel.jit
def _arith_kernel(x_ptr, y_ptr, sum_ptr, prod_ptr, max_ptr, lt_ptr, sel_ptr, rowmax_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(x_ptr + i)
    y = tl.load(y_ptr + i)
    tl.static_assert(x.dtype == y.dtype)
    s = x + y
    tl.static_assert(s.dtype == x.dtype)
    tl.store(sum_ptr + i, s)
    tl.store(prod_ptr + i, x * 1.5)
    tl.store(max_ptr + i, tl.maximum(x, y))
    tl.store(lt_ptr + i, (x < y).to(tl.int8))
    tl.store(sel_ptr + i, tl.where(i % 2 == 0, x, 0.0))
    tl.store(rowmax_ptr + tl.arange(0, N // 16), tl.max(tl.reshape(x, (N // 16, 16)), axis=1))


@pytest.mark.parametrize("fmt", FORMATS)
def test_arithmetic_rounds_each_result(rng, fmt):
    v = values(fmt)
    finite = np.flatnonzero(np.isfinite(v) & (np.abs(v) < 64))
    N = 256
    xc, yc = rng.choice(finite, N).astype(np.uint8), rng.choice(finite, N).astype(np.uint8)
    x, y = v[xc], v[yc]
    outs = [empty_fp8(N, fmt) for _ in range(3)]
    lt = torch.empty(N, dtype=torch.int8)
    sel = empty_fp8(N, fmt)
    rowmax = empty_fp8(N // 16, fmt)
    _arith_kernel[(1,)](as_fp8(xc, fmt), as_fp8(yc, fmt), *outs, lt, sel, rowmax, N=N)
    np.testing.assert_array_equal(codes_of(outs[0]), nearest_codes(x + y, fmt))
    np.testing.assert_array_equal(codes_of(outs[1]), nearest_codes(x * 1.5, fmt))
    np.testing.assert_array_equal(codes_of(outs[2]), nearest_codes(np.maximum(x, y), fmt))
    np.testing.assert_array_equal(lt.numpy(), (x < y).astype(np.int8))
    np.testing.assert_array_equal(codes_of(sel), np.where(np.arange(N) % 2 == 0, xc, 0))
    np.testing.assert_array_equal(codes_of(rowmax), nearest_codes(x.reshape(-1, 16).max(axis=1), fmt))


@tessel.jit
def _promote_kernel(x_ptr, y_ptr, h_ptr, f_ptr, mixed_ptr, half_ptr, single_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(x_ptr + i)  # e4m3
    y = tl.load(y_ptr + i)  # e5m2
    mixed = x + y
    tl.static_assert(mixed.dtype == tl.float16)
    half = x * tl.load(h_ptr + i)
    tl.static_assert(half.dtype == tl.float16)
    single = y - tl.load(f_ptr + i)
    tl.static_assert(single.dtype == tl.float32)
    tl.store(mixed_ptr + i, mixed)
    tl.store(half_ptr + i, half)
    tl.store(single_ptr + i, single)


def test_promotion(rng):
    # Triton's rules: two different 8-bit floats meet in fp16, an 8-bit float and fp16 in fp16, and fp32 in fp32.
    N = 128
    xc = rng.choice(np.flatnonzero(np.abs(values("e4m3")) < 100), N).astype(np.uint8)
    yc = rng.choice(np.flatnonzero(np.abs(values("e5m2")) < 100), N).astype(np.uint8)
    x, y = values("e4m3")[xc], values("e5m2")[yc]
    h = rng.standard_normal(N).astype(np.float16)
    f = rng.standard_normal(N).astype(np.float32)
    mixed, half, single = np.zeros(N, np.float16), np.zeros(N, np.float16), np.zeros(N, np.float32)
    _promote_kernel[(1,)](as_fp8(xc, "e4m3"), as_fp8(yc, "e5m2"), h, f, mixed, half, single, N=N)
    np.testing.assert_array_equal(mixed, (x + y).astype(np.float16))
    np.testing.assert_array_equal(half, (x * h.astype(np.float64)).astype(np.float16))
    np.testing.assert_array_equal(single, (y - f.astype(np.float64)).astype(np.float32))


def test_fp8_and_integer_block_is_an_error():
    @tessel.jit
    def mix(x_ptr, i_ptr, out_ptr):
        r = tl.arange(0, 16)
        tl.store(out_ptr + r, tl.load(x_ptr + r) + tl.load(i_ptr + r))

    x = torch.zeros(16, dtype=torch.float8_e4m3fn)
    with pytest.raises(tessel.CompilationError,
                       match=r"unexpected type .*fp8e4nv.*no common type for them; cast one of them") as info:
        mix[(1,)](x, torch.zeros(16, dtype=torch.int32), torch.zeros(16, dtype=torch.float32))
    assert "tl.load(x_ptr + r) + tl.load(i_ptr + r)" in str(info.value)


@tessel.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                   OUT: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=OUT)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        acc = tl.dot(a, b, acc, out_dtype=OUT)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _random_fp8(rng, shape, fmt):
    v = values(fmt)
    return rng.choice(np.flatnonzero(np.isfinite(v) & (np.abs(v) <= 16)), shape).astype(np.uint8)


@pytest.mark.parametrize("fmts", [("e4m3", "e4m3"), ("e5m2", "e5m2"), ("e4m3", "e5m2"), ("e4b8", "e4b8"),
                                  ("e5b16", "e5b16"), ("e4b15", "e4b15"), ("e4b8", "e4m3")], ids="x".join)
@pytest.mark.parametrize("shape,blocks", [((37, 53, 71), (32, 32, 32)), ((64, 96, 128), (64, 32, 64))],
                         ids=["37x53x71", "64x96x128"])
def test_matmul(rng, fmts, shape, blocks):
    # Products of 8-bit floats are exact in fp32; sums of at most 128 of them differ from float64's by a few ulps.
    M, N, K = shape
    ac, bc = _random_fp8(rng, (M, K), fmts[0]), _random_fp8(rng, (K, N), fmts[1])
    c = np.zeros((M, N), np.float32)
    _matmul_kernel[(-(-M // blocks[0]), -(-N // blocks[1]))](as_fp8(ac, fmts[0]), as_fp8(bc, fmts[1]), c, M, N, K,
                                                           BM=blocks[0], BN=blocks[1], BK=blocks[2], OUT=tl.float32)
    ref = values(fmts[0])[ac] @ values(fmts[1])[bc]
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4 * np.abs(ref).max())


def test_matmul_into_fp16(rng):
    M, N, K = 32, 32, 64
    ac, bc = _random_fp8(rng, (M, K), "e4m3"), _random_fp8(rng, (K, N), "e4m3")
    c = np.zeros((M, N), np.float16)
    _matmul_kernel[(1, 1)](as_fp8(ac, "e4m3"), as_fp8(bc, "e4m3"), c, M, N, K, BM=32, BN=32, BK=32, OUT=tl.float16)
    ref = values("e4m3")[ac] @ values("e4m3")[bc]
    np.testing.assert_allclose(c, ref, rtol=2e-3, atol=2e-3 * np.abs(ref).max())


# ----------------------------------------------------------------------------- tl.extra.cuda.convert_custom_float8

@tessel.jit
def _e4b15_conversions(byte_ptr, half_ptr, up_ptr, down_ptr, down32_ptr, N: tl.constexpr, SM70: tl.constexpr):
    # The kernel of triton_ptx_kernels.e4b15_kernel, written the same way.
    offs = tl.program_id(0) * N + tl.arange(0, N)
    b = tl.load(byte_ptr + offs).to(tl.float8e4b15, bitcast=True)
    h = tl.load(half_ptr + offs)
    f = h.to(tl.float32) * 1.0009765625
    if SM70:
        tl.store(up_ptr + offs, tl.extra.cuda.convert_custom_float8_sm70(b, tl.float32))
        d = tl.extra.cuda.convert_custom_float8_sm70(h, tl.float8e4b15)
        d32 = tl.extra.cuda.convert_custom_float8_sm70(f, tl.float8e4b15)
    else:
        tl.store(up_ptr + offs, tl.extra.cuda.convert_custom_float8_sm80(b, tl.float32))
        d = tl.extra.cuda.convert_custom_float8_sm80(h, tl.float8e4b15)
        d32 = tl.extra.cuda.convert_custom_float8_sm80(f, tl.float8e4b15)
    tl.store(down_ptr + offs, d.to(tl.uint8, bitcast=True))
    tl.store(down32_ptr + offs, d32.to(tl.uint8, bitcast=True))


@functools.lru_cache(maxsize=None)
def _e4b15_reference(sm70):
    """What Triton 3.6's own PTX for these conversions (inline assembly) computes, run by the simulator on every
    fp16 bit pattern and every code: the reference (Triton's code is known to be right on hardware)."""
    from tessel import gpusim
    from test_gpusim_triton import compile_ptx
    n, block = 65536, 1024
    codes = np.arange(n, dtype=np.uint32).astype(np.uint8)
    halves = np.arange(n, dtype=np.uint32).astype(np.uint16).view(np.float16)
    outs = [np.zeros(n, np.float32), np.zeros(n, np.uint8), np.zeros(n, np.uint8)]
    ptx, meta = compile_ptx("e4b15_kernel", {"byte_ptr": "*u8", "half_ptr": "*fp16", "up_ptr": "*fp32",
                                             "down_ptr": "*u8", "down32_ptr": "*u8", "N": "constexpr",
                                             "SM70": "constexpr"}, {"N": block, "SM70": int(sm70)})
    gpusim.launch(ptx, "e4b15_kernel", n // block, num_warps=meta.num_warps, shared_bytes=meta.shared,
                  args=[codes, halves, *outs, None, None])
    return codes, halves, outs


@pytest.mark.parametrize("sm70", [False, True])
def test_convert_custom_float8_matches_tritons_code(sm70):
    # Both variants against Triton's sm80 code (its sm70 variant selects with setp.lt.f16x2 into two predicates,
    # which the simulator does not run; on every fp16 value it computes what the min.f16x2 of sm80 computes).
    codes, halves, (up, down, down32) = _e4b15_reference(False)
    mine = [np.zeros_like(up), np.zeros_like(down), np.zeros_like(down32)]
    _e4b15_conversions[(len(codes) // 1024,)](codes, halves, *mine, N=1024, SM70=sm70)
    np.testing.assert_array_equal(mine[0].view(np.uint32), up.view(np.uint32))
    np.testing.assert_array_equal(mine[1], down)
    # fp32 inputs come from a multiply: a NaN's sign after arithmetic is the target's (GPUs make it positive).
    number = ~np.isnan(halves)
    np.testing.assert_array_equal(mine[2][number], down32[number])
    # And what the format is: every code finite, 1.875 the largest, fp16 clamped to 1.75 and rounded half up.
    assert np.isfinite(up).all() and up.max() == 1.875 and up[0x80] == 0 and np.signbit(up[0x80])
    assert down[np.float16(1.0).view(np.uint16)] == 0x78 and down[np.float16(100.0).view(np.uint16)] == 0x7E
