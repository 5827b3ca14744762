"""Bugs the differential fuzzer (tessel.tools.fuzz) found, each against an independent reference: fp64 -> fp16/bf16
conversions (they called runtime routines the kernel loader lacks), fp16 dots with fp16 results, erf on fp64, and
storing non-bool values to bool arrays (Triton stores the value cast to int8)."""
import math

import numpy as np
import pytest
import torch

import tessel as triton
import tessel.language as tl


@triton.jit
def _copy(x_ptr, out_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(out_ptr + o, tl.load(x_ptr + o))


def _hard_doubles(rng):
    """Doubles whose rounding to 16 bits is decided past fp32's precision (a naive fp64 -> fp32 -> fp16 double
    rounding gets them wrong), ties, overflow, underflow, signed zeros, infinities."""
    ulp16, ulp_bf16 = 2.0**-10, 2.0**-7
    special = [1 + ulp16 / 2 + 2**-40, 1 + ulp16 / 2 - 2**-40, 1 + ulp16 / 2, 1 + 3 * ulp16 / 2,
               1 + ulp_bf16 / 2 + 2**-40, 1 + ulp_bf16 / 2 - 2**-40, 1 + ulp_bf16 / 2,
               65504.0, 65519.99, 65520.0, 1e6, 3.3961e38, 3.3962e38, 1e300, 2.0**-24, 2.0**-25, 2.0**-25 + 2**-60,
               2.0**-133, 1e-300, 0.0, -0.0, np.inf, -np.inf]
    values = np.array(special + [-v for v in special], np.float64)
    return np.concatenate([values, rng.standard_normal(256 - len(values)) * 10.0 ** rng.integers(-6, 6, 256 -
                                                                                                len(values))])


def test_fp64_to_fp16_rounds_once(rng):
    x = _hard_doubles(rng)
    out = np.zeros(x.size, np.float16)
    with np.errstate(over="ignore"):
        expected = x.astype(np.float16)  # numpy rounds doubles to half directly, to nearest even
    _copy[(1,)](x, out, N=x.size)
    np.testing.assert_array_equal(out.view(np.uint16), expected.view(np.uint16))


def _bf16_nearest_even(v):
    """The bf16 nearest to the double v (ties to even), computed exactly (torch and numpy both convert doubles to
    bf16 through fp32, rounding twice)."""
    if not math.isfinite(v) or v == 0:
        return v
    _, e = math.frexp(v)  # |v| = m * 2**e, 0.5 <= m < 1
    quantum = 2.0 ** (max(e, -125) - 8)  # 8 significant bits; subnormals below 2**-126
    r = math.copysign(round(v / quantum) * quantum, v)  # v / quantum is exact; round() ties to even
    return r if abs(r) < 2.0**128 else math.copysign(math.inf, v)


def test_fp64_to_bf16_rounds_once(rng):
    x = _hard_doubles(rng)
    out = torch.zeros(x.size, dtype=torch.bfloat16)
    expected = torch.tensor([_bf16_nearest_even(v) for v in x], dtype=torch.float64).to(torch.bfloat16)  # exact
    _copy[(1,)](x, out, N=x.size)
    assert torch.equal(out.view(torch.int16), expected.view(torch.int16)), \
        [(v, int(a), int(b)) for v, a, b in zip(x, out.view(torch.int16), expected.view(torch.int16)) if a != b]


def test_fp64_nan_to_fp16_stays_nan():
    x = np.array([np.nan, -np.nan, 1.0, 2.0], np.float64)
    out = np.zeros(4, np.float16)
    _copy[(1,)](x, out, N=4)
    assert np.isnan(out[:2]).all() and (out[2:] == [1, 2]).all()


@triton.jit
def _dot_f16(a_ptr, b_ptr, out_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :])
    b = tl.load(b_ptr + r[:, None] * N + r[None, :])
    tl.store(out_ptr + r[:, None] * N + r[None, :], tl.dot(a, b, out_dtype=tl.float16))


@pytest.mark.parametrize("n", [16, 32, 64])
def test_dot_with_fp16_result(rng, n):
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    out = np.zeros((n, n), np.float16)
    _dot_f16[(1,)](a, b, out, N=n)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    # One rounding to fp16 of a sum accumulated at least as precisely as fp32.
    np.testing.assert_allclose(out.astype(np.float64), exact, rtol=2**-10, atol=n * 2**-20)


@triton.jit
def _erf(x_ptr, out_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(out_ptr + o, tl.erf(tl.load(x_ptr + o)))


def test_erf_fp64(rng):
    x = rng.standard_normal(64) * 3
    out = np.zeros(64)
    _erf[(1,)](x, out, N=64)
    np.testing.assert_allclose(out, [math.erf(v) for v in x], rtol=1e-15, atol=1e-300)


@triton.jit
def _store_to_bool(x_ptr, out_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(out_ptr + o, tl.load(x_ptr + o))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int32, np.int64])
def test_store_to_bool_casts_to_int8_first(dtype):
    values = np.array([0.125, 0.5, 0.99, 1.0, 1.5, -0.5, -1.0, 0, 3, 256, 512, 257, -256, 1000, 255, 127], np.float64)
    x = values.astype(dtype)
    out = np.ones(16, bool)
    _store_to_bool[(1,)](x, out, N=16)
    # Triton treats a bool pointer as int8 and casts the value to int8 (floats truncate toward zero, ints wrap).
    if np.dtype(dtype).kind == "f":
        as_int8 = np.trunc(x.astype(np.float64)).astype(np.int64).astype(np.int8)
    else:
        as_int8 = x.astype(np.int8)
    np.testing.assert_array_equal(out, as_int8 != 0)


def test_fp32_to_bf16_keeps_subnormals(rng):
    # x86's conversion instruction flushes subnormals to zero; Triton's GPUs and the rounding rule do not.
    tiny = np.array([2.0**-133, 3 * 2.0**-134, 2.0**-127, 1.5 * 2.0**-127, 2.0**-126, 2.0**-140, 2.0**-149],
                    np.float32)
    x = np.concatenate([tiny, -tiny, rng.standard_normal(64 - 2 * tiny.size).astype(np.float32)])
    out = torch.zeros(64, dtype=torch.bfloat16)
    _copy[(1,)](x, out, N=64)
    expected = torch.tensor([_bf16_nearest_even(float(v)) for v in x], dtype=torch.float64).to(torch.bfloat16)
    assert torch.equal(out.view(torch.int16), expected.view(torch.int16)), \
        [(float(v), int(a), int(b)) for v, a, b in zip(x, out.view(torch.int16), expected.view(torch.int16)) if a != b]


@triton.jit
def _shift_by_reshaped(b0, b1, b2):
    # seed 7, kernel 1417: a reshape's index decomposition became b0[(j & 3) + i], which LLVM 22's loop vectorizer
    # read as consecutive in j.
    for i in range(0, 4):
        t4 = tl.load(b2 + (tl.arange(0, 32)[:, None] + i))
        tl.store(b2 + ((tl.arange(0, 32)[:, None] + tl.arange(0, 1)[None, :]) + 639), t4)
        shifted = tl.load(tl.reshape(b1 + tl.arange(0, 32) * 3, (8, 4))) << (tl.load(b0 + tl.arange(0, 4) + i) & 63)
        tl.store(b1 + ((tl.arange(0, 32)[:, None] + tl.arange(0, 1)[None, :]) + 679 + i * 16),
                 tl.reshape(shifted, (32, 1)))


def test_reshape_of_a_broadcast_in_a_loop(rng):
    b0 = rng.integers(0, 64, 1024).astype(np.int32)
    b1 = rng.integers(-4, 5, 1024).astype(np.int64)
    b2 = rng.standard_normal(1024)
    r1, r2 = b1.copy(), b2.copy()
    for i in range(4):
        r2[639 + np.arange(32)] = r2[np.arange(32) + i]
        v = r1[np.arange(32) * 3].reshape(8, 4) << (b0[np.arange(4) + i] & 63).astype(np.int64)
        r1[679 + i * 16 + np.arange(32)] = v.reshape(32)
    _shift_by_reshaped[(1,)](b0, b1, b2)
    np.testing.assert_array_equal(b1, r1)
    np.testing.assert_array_equal(b2, r2)


@triton.jit
def _masked_narrowing_store(b1, b3):
    # seed 7, kernel 1818: a constant mask with one lane left in the last vector became a scalar 8-byte store of
    # the untruncated element (x86 back end), writing three masked-off uint16 lanes.
    t1 = 1 >> (tl.load(b1 + tl.arange(0, 64)) & 63)
    tl.store(b3 + tl.arange(0, 64) + 329, t1, mask=tl.arange(0, 64) < 17)


def test_masked_store_of_a_narrowed_value_keeps_masked_lanes():
    b1 = np.arange(64, dtype=np.uint64)
    b3 = np.full(1024, 7, np.uint16)
    expected = b3.copy()
    expected[329:346] = (1 >> (b1[:17] & 63)).astype(np.uint16)
    _masked_narrowing_store[(1,)](b1, b3)
    np.testing.assert_array_equal(b3, expected)


@triton.jit
def _sin_cos(x_ptr, sin_ptr, cos_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(x_ptr + o)
    tl.store(sin_ptr + o, tl.sin(x))
    tl.store(cos_ptr + o, tl.cos(x))


@pytest.mark.parametrize("magnitude", [1.0, 1e2, 1e4, 1e6, 1e10, 1e30])
def test_sin_cos_accurate_for_large_arguments(rng, magnitude):
    # seed 8, kernel 1504: cos(1e10) gave -1.3e20 (the polynomial reduced the argument in fp32; its error grew
    # with it: 3e-4 at 1e4).
    x = (rng.uniform(-1, 1, 1024) * magnitude).astype(np.float32)
    s, c = np.zeros_like(x), np.zeros_like(x)
    _sin_cos[(1,)](x, s, c, N=1024)
    np.testing.assert_allclose(s, np.sin(x.astype(np.float64)), rtol=0, atol=2.5e-7)
    np.testing.assert_allclose(c, np.cos(x.astype(np.float64)), rtol=0, atol=2.5e-7)


@triton.jit
def _u64_to_float(x_ptr, big_ptr, f32_ptr, f64_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    v = tl.full([N], 1, tl.uint64) ^ tl.load(x_ptr + o)  # int32 sign-extended to uint64
    tl.store(f32_ptr + o, v.to(tl.float32))
    tl.store(f64_ptr + o, tl.load(big_ptr + o).to(tl.float64))


def test_uint64_to_float_of_sign_extended_values(rng):
    # seed 9, kernel 328: uitofp(sext i32 to i64) was narrowed by LLVM to a conversion of the zero-extended i32.
    x = rng.integers(-2**31, 2**31, 64).astype(np.int32)
    big = rng.integers(0, 2**64, 64, dtype=np.uint64)
    big[:4] = [2**63, 2**64 - 1, 2**63 + 1, 2**53 + 1]
    f32, f64 = np.zeros(64, np.float32), np.zeros(64, np.float64)
    _u64_to_float[(1,)](x, big, f32, f64, N=64)
    as_u64 = x.astype(np.int64).astype(np.uint64) ^ np.uint64(1)
    np.testing.assert_array_equal(f32, as_u64.astype(np.float32))
    np.testing.assert_array_equal(f64, big.astype(np.float64))


@triton.jit
def _i16_or_u32_to_float(x_ptr, out_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(out_ptr + o, tl.load(x_ptr + o) | tl.full([N], 3, tl.uint32))


def test_uint32_to_float_of_sign_extended_values(rng):
    # seed 11, kernel 135: int16 -1 promoted to uint32 (sign-extended: 0xFFFFFFFF) converted to float as 65535.
    x = rng.integers(-2**15, 2**15, 64).astype(np.int16)
    out = np.zeros(64, np.float32)
    _i16_or_u32_to_float[(1,)](x, out, N=64)
    expected = (x.astype(np.int64).astype(np.uint32) | np.uint32(3)).astype(np.float32)
    np.testing.assert_array_equal(out, expected)


@triton.jit
def _int8_dot_to_int8(a_ptr, b_ptr, out_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tile = i[:, None] * N + i[None, :]
    tl.store(out_ptr + tile, tl.dot(tl.load(a_ptr + tile), tl.load(b_ptr + tile)))


def test_int8_dot_stored_as_int8(rng):
    # seed 2062833018, kernel 12: only the low byte of each int32 sum is kept, so LLVM narrows the sums to bytes;
    # its AMDGPU backend crashed on the byte reduction the SLP vectorizer made of them.
    N = 16
    a = rng.integers(-128, 128, (N, N)).astype(np.int8)
    b = rng.integers(-128, 128, (N, N)).astype(np.int8)
    out = np.zeros((N, N), np.int8)
    _int8_dot_to_int8[(1,)](a, b, out, N=N)
    np.testing.assert_array_equal(out, (a.astype(np.int32) @ b.astype(np.int32)).astype(np.int8))



@triton.jit
def _shift_by_masked_amounts(b_ptr):
    r = tl.arange(0, 8)
    x = tl.load(b_ptr + r[:, None])
    s = tl.load(b_ptr + 722 + r[:, None] + r[None, :], mask=r[None, :] < 2, other=0)  # 0 in columns 2..7
    tl.store(b_ptr + 245 + r[:, None] * 8 + r[None, :], x << (((x >> (s & 7)) | r[None, :]) & 31))


def test_int8_arithmetic_shift_by_a_zero_amount():
    # LLVM 22 lowered this x >> 0 on int8 vectors through GFNI (znver4/5, Ice Lake and later) as x ^ (sign ? 0x7f : 0)
    x = np.array([6, -8, -1, -3, 5, 6, -3, -5], np.int8)
    s = np.array([-8, -6, -7, 7, -6, 6, 4, -3, 6, 6, 6, 5, 6, -2, 7], np.int8)
    b = np.zeros(1024, np.int8)
    b[:8], b[722:737] = x, s
    _shift_by_masked_amounts[(1,)](b)
    r = np.arange(8)
    amount = np.where(r[None, :] < 2, s[r[:, None] + r[None, :]], 0) & 7
    shift = ((x[:, None].astype(np.int32) >> amount) | r[None, :]) & 31
    expected = (x[:, None].astype(np.int64) << shift).astype(np.int8)  # Triton: shifts of 8+ bits leave 0
    np.testing.assert_array_equal(b[245:309].reshape(8, 8), expected)


def test_byte_to_int64_shifts_compile():
    # Fuzzed kernel 566 of seed 638294612 (int8 loads shifted by int64 amounts, stored to fp64): with AVX512-VBMI
    # (znver4/5, Ice Lake on) LLVM 22's SelectionDAG legalization never finished; the fuzzer's numpy model checks it.
    from tessel.tools import fuzz
    failures = fuzz.run_batch(638294612, [566], timeout=120.0, log=lambda *args: None)
    assert not failures, "\n".join(fuzz.report(638294612, i, prog, res) for i, prog, res in failures)


@triton.jit
def _divide_by_scalars(x_ptr, s_ptr, out_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(x_ptr + o)
    tl.store(out_ptr + o, x / tl.load(s_ptr))  # one divisor for the block: LLVM hoists what it can
    tl.store(out_ptr + N + o, x / tl.exp(tl.full([N], 1.0, tl.float32) - 90.0))  # a constant, e^-89


@pytest.mark.parametrize("divisor", [1e-39, 2.5e-39, 1e-45, 3e38])
def test_division_by_a_block_wide_divisor_out_of_reciprocal_range(divisor, monkeypatch):
    # On the CPU x / s with s the same for the whole block became x * (1 / s), which is inf for |s| < 2^-128 (and
    # loses bits for |s| > 2^126): a finite quotient came out inf (fuzz seed 1276210822 #169). CPU only: the GPUs'
    # approximate fp32 division has its own documented range.
    monkeypatch.setattr(triton.knobs, "target", "cpu")
    x = np.array([1e-42, -3e-41, 2e-40, 1e-38, 0.5, -2.0, 3e-39, 7e-45] * 4, np.float32)
    s = np.array([divisor], np.float32)
    out = np.zeros(64, np.float32)
    _divide_by_scalars[(1,)](x, s, out, N=32)
    with np.errstate(over="ignore", under="ignore"):
        want = np.concatenate([x / s[0], x / np.exp(np.float32(-89.0))])  # IEEE fp32 division, rounded once
    np.testing.assert_array_equal(out, want)


@triton.jit
def _load_then_overwrite(x_ptr, out_ptr):
    o = tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :]
    x = tl.load(x_ptr + o)
    tl.store(x_ptr + o + 169, tl.full([16, 16], 1, x.dtype))  # overwrites elements 169..255 of what was loaded
    tl.store(out_ptr + o, x)  # stored widened to int32: the loaded values sign-extended


@pytest.mark.parametrize("dtype", [np.int8, np.int16])
def test_sign_extended_load_stays_before_a_later_overwrite(dtype):
    # On AMD LLVM 22 folded the sign extension of a byte/short buffer load into a new load left out of the memory
    # order: it was scheduled past the barrier and another wave's store, reading 1s (fuzz seed 1933224617 #66).
    x = (np.arange(512) % 7 - 5).astype(dtype)
    want = x[:256].astype(np.int32)
    out = np.zeros(256, np.int32)
    _load_then_overwrite[(1,)](x, out)
    np.testing.assert_array_equal(out, want)
