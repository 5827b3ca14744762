"""Subnormal numbers are kept on every target, as the GPUs keep them (PTX's default, no .ftz): tests, arithmetic,
conversions and math near the bottom of each float type's range, against numpy (bf16 rounded from fp32 by its bits
here, independently of the kernels).

On the CPU these were flushed to zero: x86 rounds bf16 with VCVTNEPS2BF16 (which flushes) or calls __truncsfbf2 (which
the kernel loader lacks), a bf16 value crossing a branch was rounded back through fp32 that way, and MLIR's exp
polynomial returned 0 below 2^-126."""
import numpy as np
import pytest
import torch

import tessel as triton
import tessel.language as tl


def bf16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """Round to nearest even, subnormals included (NaN inputs are not used here)."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)
    return (rounded >> 16).astype(np.uint16)


def as_bf16(bits: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(bits.astype(np.uint16).view(np.int16)).view(torch.bfloat16)


def bits_of(t: torch.Tensor) -> np.ndarray:
    return t.view(torch.int16).numpy().view(np.uint16)


# Every bf16 subnormal magnitude class and its neighbours: 0x0001 (9.2e-41), 0x0040, 0x007F (largest subnormal),
# 0x0080 (smallest normal), negatives, zeros.
BF16_BITS = np.array([0x0001, 0x0002, 0x0040, 0x007F, 0x0080, 0x8001, 0x807F, 0x0000, 0x8000, 0x3F80], np.uint16)


@triton.jit
def _bf16_tests(x_ptr, positive_ptr, truth_ptr, branch_ptr, doubled_ptr, halved_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(positive_ptr + offs, (x > 0).to(tl.int32))
    tl.store(truth_ptr + offs, x.to(tl.int1).to(tl.int32))
    tl.store(doubled_ptr + offs, x * 2.0)
    tl.store(halved_ptr + offs, x * 0.5)
    # One element through a branch (the value crosses a phi on the CPU).
    v = tl.load(x_ptr)
    if v > 0:
        tl.store(branch_ptr, 1)
    else:
        tl.store(branch_ptr, 2)


def test_bf16_subnormals_compare_convert_and_compute():
    n = 16
    bits = np.zeros(n, np.uint16)
    bits[:len(BF16_BITS)] = BF16_BITS
    x = as_bf16(bits)
    positive, truth, branch = (np.full(n, -1, np.int32) for _ in range(3))
    doubled, halved = torch.zeros(n, dtype=torch.bfloat16), torch.zeros(n, dtype=torch.bfloat16)
    _bf16_tests[(1,)](x, positive, truth, branch, doubled, halved, N=n)
    xf = bf16_bits_to_f32(bits)
    np.testing.assert_array_equal(positive, (xf > 0).astype(np.int32))
    np.testing.assert_array_equal(truth, (xf != 0).astype(np.int32))
    assert branch[0] == 1  # 0x0001 > 0
    np.testing.assert_array_equal(bits_of(doubled), f32_to_bf16_bits(xf * np.float32(2)))
    np.testing.assert_array_equal(bits_of(halved), f32_to_bf16_bits(xf * np.float32(0.5)))


@triton.jit
def _bf16_mul_add(a_ptr, b_ptr, prod_ptr, sum_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(prod_ptr + offs, a * b)
    tl.store(sum_ptr + offs, a + b)


def test_bf16_products_and_sums_that_round_to_subnormals(rng):
    """Products of normals that land in the subnormal range round there (not to 0); sums of subnormals are exact."""
    n = 256
    a_bits = rng.integers(0x0001, 0x0300, n).astype(np.uint16)  # subnormal and small normal magnitudes
    b_bits = f32_to_bf16_bits(rng.uniform(0.01, 3.0, n).astype(np.float32))
    a_bits[::3] |= 0x8000
    prod, total = torch.zeros(n, dtype=torch.bfloat16), torch.zeros(n, dtype=torch.bfloat16)
    _bf16_mul_add[(1,)](as_bf16(a_bits), as_bf16(b_bits), prod, total, N=n)
    a, b = bf16_bits_to_f32(a_bits), bf16_bits_to_f32(b_bits)
    # fp32 holds bf16 products exactly and sums of these exactly: one rounding to bf16 is the reference.
    np.testing.assert_array_equal(bits_of(prod), f32_to_bf16_bits(a * b))
    np.testing.assert_array_equal(bits_of(total), f32_to_bf16_bits(a + b))
    assert (bits_of(prod) & 0x7F80 == 0).sum() > n // 8  # many results are subnormal


@triton.jit
def _unary(x_ptr, exp_ptr, log_ptr, log2_ptr, sqrt_ptr, div_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(exp_ptr + offs, tl.exp(x))
    tl.store(log_ptr + offs, tl.log(tl.abs(x)))
    tl.store(log2_ptr + offs, tl.log2(tl.abs(x)))
    tl.store(sqrt_ptr + offs, tl.sqrt(tl.abs(x)))
    tl.store(div_ptr + offs, x / 3.0e20)


def _ulps_apart(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in units of the last place of fp32 (subnormals included: the bits are consecutive integers)."""
    def ordered(a):
        i = a.astype(np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(ordered(got) - ordered(want))


def test_fp32_math_near_the_subnormal_range(rng):
    """exp of -88..-104 gives subnormals (e^-88 = 6.05e-39, not 0); log, log2 and sqrt of subnormals and division
    into them are as numpy's (float64, rounded) within a few units in the last place."""
    n = 512
    exp_in = np.linspace(-103.5, -86.0, n // 2).astype(np.float32)
    tiny = (rng.integers(1, 0x00800000, n // 2).astype(np.uint32)).view(np.float32)  # every fp32 subnormal range
    x = np.concatenate([exp_in, tiny]).astype(np.float32)
    x[0] = -88.0
    outs = [np.full(n, np.nan, np.float32) for _ in range(5)]
    _unary[(1,)](x, *outs, N=n)
    got_exp, got_log, got_log2, got_sqrt, got_div = outs
    x64 = x.astype(np.float64)
    want_exp = np.exp(x64).astype(np.float32)
    assert 6.05e-39 < got_exp[0] < 6.06e-39
    # The GPUs compute ex2.approx(x * log2(e)): the product's rounding (|x| * 2^-24 relative in the exponent) is
    # most of the error; a subnormal result carries fewer bits, so two steps of 2^-149 on top.
    slack = np.abs(want_exp) * (np.abs(x64) * 2.0**-22 + 2.0**-21) + 2 * 2.0**-149
    bad = np.abs(got_exp.astype(np.float64) - want_exp) > slack
    assert not bad.any(), list(zip(x[bad][:8], got_exp[bad][:8], want_exp[bad][:8]))
    assert (got_exp[:exp_in.size] > 0).all()
    np.testing.assert_allclose(got_log, np.log(np.abs(x64)).astype(np.float32), rtol=2e-6)
    np.testing.assert_allclose(got_log2, np.log2(np.abs(x64)).astype(np.float32), rtol=2e-6)
    np.testing.assert_array_equal(got_sqrt, np.sqrt(np.abs(x64)).astype(np.float32))
    assert (_ulps_apart(got_div, (x64 / 3.0e20).astype(np.float32)) <= 1).all()


@triton.jit
def _narrow_ops(h_ptr, d_ptr, h2_ptr, d2_ptr, d_to_h_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    h = tl.load(h_ptr + offs)
    d = tl.load(d_ptr + offs)
    tl.store(h2_ptr + offs, h * 0.75)
    tl.store(d2_ptr + offs, d * 0.25)
    tl.store(d_to_h_ptr + offs, d.to(tl.float16))


def test_fp16_and_fp64_subnormals(rng):
    n = 128
    h = (rng.integers(1, 0x0400, n).astype(np.uint16)).view(np.float16)  # fp16 subnormals
    d = np.concatenate([np.array([5e-324, 2.2250738585072014e-308, -1e-310]),
                        rng.uniform(-1e-7, 1e-7, n - 3)])  # fp64 subnormals; fp16 subnormals from fp64
    h2, d2, d_to_h = np.zeros(n, np.float16), np.zeros(n), np.zeros(n, np.float16)
    _narrow_ops[(1,)](h, d, h2, d2, d_to_h, N=n)
    # Subnormal products round in fp16 (fp32 holds the exact product).
    np.testing.assert_array_equal(h2, (h.astype(np.float32) * np.float32(0.75)).astype(np.float16))
    np.testing.assert_array_equal(d2, d * 0.25)
    np.testing.assert_array_equal(d_to_h, d.astype(np.float16))
    assert (d_to_h != 0).sum() > n // 2


@triton.jit
def _int_to_bf16(i_ptr, l_ptr, out_i_ptr, out_l_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_i_ptr + offs, tl.load(i_ptr + offs).to(tl.bfloat16))
    tl.store(out_l_ptr + offs, tl.load(l_ptr + offs).to(tl.bfloat16))


def _int_to_bf16_reference(values) -> np.ndarray:
    """Integers rounded once to bf16 (8 significant bits, ties to even), with Python's exact integers."""
    out = []
    for v in values:
        v = int(v)
        m = abs(v)
        if m == 0:
            out.append(0)
            continue
        shift = max(m.bit_length() - 8, 0)
        q, r = divmod(m, 1 << shift)
        half = 1 << shift >> 1
        if shift and (r > half or (r == half and q & 1)):
            q += 1
        f = np.float32(float(q << shift) * (1 if v > 0 else -1))
        out.append(int(f32_to_bf16_bits(np.array([f]))[0]))
    return np.array(out, np.uint16)


@pytest.mark.parametrize("dtype", ["int32", "uint32"])
def test_integers_to_bf16_round_once(dtype, rng):
    """2^24 + 2^16 + 1 is just above a bf16 midpoint: through fp32 it becomes the midpoint and then rounds down (as
    Triton 3.6's code does on an A100, which has no cvt.rn.bf16 from integers; tessel goes through fp64 there)."""
    n = 64
    special = [2**24 + 2**16 + 1, 2**24 + 2**16, 2**24 + 2**16 - 1, 2**30 + 2**22 + 1, 2**31 - 1, 1, 255, 257]
    ints = np.concatenate([special, rng.integers(0, 2**31 - 1, n - len(special))]).astype(dtype)
    if dtype == "int32":
        ints[len(special):][::2] *= -1
    longs = np.concatenate([[2**62 + 2**54 + 1, 2**62 + 2**54, -(2**62 + 2**54 + 1), 2**63 - 1, -2**63, 2**53 + 1],
                            rng.integers(-2**63, 2**63 - 1, n - 6, dtype=np.int64)]).astype(np.int64)
    out_i, out_l = torch.zeros(n, dtype=torch.bfloat16), torch.zeros(n, dtype=torch.bfloat16)
    _int_to_bf16[(1,)](ints, longs, out_i, out_l, N=n)
    np.testing.assert_array_equal(bits_of(out_i), _int_to_bf16_reference(ints))
    np.testing.assert_array_equal(bits_of(out_l), _int_to_bf16_reference(longs))
