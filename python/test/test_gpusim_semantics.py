"""Instruction semantics of Tessel's PTX simulator, one small kernel per case.

Each test runs one PTX instruction over 128 threads (4 warps) on operands loaded
from arrays, and compares with a reference computed independently: numpy, exact
rational arithmetic (fractions) rounded as the ISA specifies, or values derived
by hand from the PTX ISA's definitions.
"""
import math
from fractions import Fraction

import numpy as np
import pytest

from tessel import gpusim

N = 128

REG = {8: "b32", 16: "b16", 32: "b32", 64: "b64"}


def run(body, a, b=None, c=None, out_bits=32, in_bits=None, extra_regs="", out_dtype=None):
    """Runs `body` (using %a %b %c as inputs, %d as result, %p %q predicates) per thread."""
    ins = [x for x in (a, b, c) if x is not None]
    in_bits = in_bits or ins[0].dtype.itemsize * 8
    params = ", ".join(f".param .u64 p{i}" for i in range(4))
    loads = []
    for i, name in enumerate("abc"[:len(ins)]):
        w = ins[i].dtype.itemsize * 8
        loads.append(f"ld.param.u64 %rd{i}, [p{i}];\n mul.wide.u32 %rd{i + 4}, %tid, {w // 8};\n"
                     f" add.s64 %rd{i}, %rd{i}, %rd{i + 4};\n ld.global.b{w} %{name}, [%rd{i}];")
    w_out = out_bits
    ptx = f"""
.version 8.7
.target sm_80
.address_size 64
.visible .entry k({params})
{{
 .reg .pred %p, %q;
 .reg .b32 %tid, %t0, %t1;
 .reg .b64 %rd<10>;
 .reg .b{in_bits} %a, %b, %c;
 .reg .{REG[w_out]} %d;
 {extra_regs}
 mov.u32 %tid, %tid.x;
 {chr(10).join(loads)}
 {body}
 ld.param.u64 %rd3, [p3];
 mul.wide.u32 %rd7, %tid, {w_out // 8};
 add.s64 %rd3, %rd3, %rd7;
 st.global.b{w_out} [%rd3], %d;
 ret;
}}
"""
    out = np.zeros(len(ins[0]), dtype=out_dtype or np.dtype(f"u{w_out // 8}"))
    args = ins + [None] * (3 - len(ins)) + [out]
    gpusim.launch(ptx, "k", 1, num_warps=N // 32, args=args)
    return out


def f32(x):
    return np.asarray(x, np.float32)


def bits32(x):
    return f32(x).view(np.uint32)


def round_f32(q, mode):
    """The f32 nearest (or directed) to the exact rational q, per IEEE 754."""
    if q == 0:
        return np.float32(0)
    guess = np.float32(float(q))
    cands = {guess, np.nextafter(guess, np.float32(np.inf)), np.nextafter(guess, np.float32(-np.inf))}
    cands = sorted((c for c in cands if np.isfinite(c)), key=lambda c: Fraction(float(c)))
    lo = max((c for c in cands if Fraction(float(c)) <= q), key=lambda c: Fraction(float(c)))
    hi = min((c for c in cands if Fraction(float(c)) >= q), key=lambda c: Fraction(float(c)))
    if mode == "rz":
        return lo if q > 0 else hi
    if mode == "rm":
        return lo
    if mode == "rp":
        return hi
    dl, dh = q - Fraction(float(lo)), Fraction(float(hi)) - q
    if dl != dh:
        return lo if dl < dh else hi
    return lo if (lo.view(np.uint32) & 1) == 0 else hi


def randf(rng, n=N, scale=10.0):
    return (rng.standard_normal(n) * scale).astype(np.float32)


# ----------------------------------------------------------------- float arith

@pytest.mark.parametrize("op", ["add", "sub", "mul"])
@pytest.mark.parametrize("rnd", ["rn", "rz", "rm", "rp"])
def test_f32_arith_rounding(rng, op, rnd):
    a, b = randf(rng), randf(rng)
    b[:4] = [1e-8, -3e7, 0.1, 7.0]
    d = run(f"{op}.{rnd}.f32 %d, %a, %b;", a, b)
    fn = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y}[op]
    ref = [round_f32(fn(Fraction(float(x)), Fraction(float(y))), rnd) for x, y in zip(a, b)]
    np.testing.assert_array_equal(d, bits32(ref))


@pytest.mark.parametrize("rnd", ["rn", "rz", "rm", "rp"])
def test_fma_f32(rng, rnd):
    a, b, c = randf(rng), randf(rng), randf(rng)
    d = run(f"fma.{rnd}.f32 %d, %a, %b, %c;", a, b, c)
    ref = [round_f32(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)), rnd)
           for x, y, z in zip(a, b, c)]
    np.testing.assert_array_equal(d, bits32(ref))


def test_f32_ftz_and_sat():
    tiny = np.float32(1e-39)  # subnormal
    a = f32([tiny, -tiny, 0.75, 2.0] * 32)
    b = f32([0.0, -0.0, 0.5, -5.0] * 32)  # (-0) + (-0) keeps the sign
    d = run("add.ftz.f32 %d, %a, %b;", a, b).view(np.float32)
    assert d[0] == 0 and not np.signbit(d[0]) and d[1] == 0 and np.signbit(d[1])
    d = run("add.f32 %d, %a, %b;", a, b).view(np.float32)
    assert d[0] == tiny  # subnormals are kept without .ftz
    d = run("add.sat.f32 %d, %a, %b;", a, b).view(np.float32)
    np.testing.assert_array_equal(d[:4], f32([tiny, 0.0, 1.0, 0.0]))


def test_f32_nan_is_canonical():
    a = f32([np.inf, 1.0] * 64)
    b = f32([-np.inf, np.nan] * 64)
    d = run("add.f32 %d, %a, %b;", a, b)
    assert (d == 0x7FFFFFFF).all()


def test_min_max_f32():
    # ISA: if one operand is NaN the other is returned; both NaN give the
    # canonical NaN; .NaN propagates NaN; -0.0 is below +0.0.
    a = f32([1.0, np.nan, np.nan, -0.0, 3.0, -2.0, np.nan, 5.0] * 16)
    b = f32([2.0, 4.0, np.nan, 0.0, -1.0, np.inf, 1.0, 5.0] * 16)
    mx = run("max.f32 %d, %a, %b;", a, b)
    mn = run("min.f32 %d, %a, %b;", a, b)
    np.testing.assert_array_equal(mx[:8], bits32([2.0, 4.0, 0, 0.0, 3.0, np.inf, 1.0, 5.0])[:8] * [1, 1, 0, 1, 1, 1, 1, 1] + [0, 0, 0x7FFFFFFF, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(mn[:8], bits32([1.0, 4.0, 0, -0.0, -1.0, -2.0, 1.0, 5.0])[:8] * [1, 1, 0, 1, 1, 1, 1, 1] + [0, 0, 0x7FFFFFFF, 0, 0, 0, 0, 0])
    mxn = run("max.NaN.f32 %d, %a, %b;", a, b)
    assert mxn[1] == 0x7FFFFFFF and mxn[6] == 0x7FFFFFFF and mxn[0] == bits32(2.0)


def test_abs_neg_f32(rng):
    a = randf(rng)
    np.testing.assert_array_equal(run("abs.f32 %d, %a;", a), bits32(np.abs(a)))
    np.testing.assert_array_equal(run("neg.f32 %d, %a;", a), bits32(-a))


@pytest.mark.parametrize("rnd", ["rn", "rz", "rm", "rp"])
def test_div_rcp_sqrt_ieee(rng, rnd):
    a, b = randf(rng), randf(rng)
    d = run(f"div.{rnd}.f32 %d, %a, %b;", a, b)
    np.testing.assert_array_equal(d, bits32([round_f32(Fraction(float(x)) / Fraction(float(y)), rnd)
                                             for x, y in zip(a, b)]))
    d = run(f"rcp.{rnd}.f32 %d, %a;", a)
    np.testing.assert_array_equal(d, bits32([round_f32(1 / Fraction(float(x)), rnd) for x in a]))
    pos = np.abs(a)
    d = run(f"sqrt.{rnd}.f32 %d, %a;", pos).view(np.float32)
    for x, r in zip(pos, d):  # r is the right neighbour of sqrt(x) under the mode
        q = Fraction(float(x))
        lo, hi = Fraction(float(r)), Fraction(float(np.nextafter(r, np.float32(np.inf))))
        below = Fraction(float(np.nextafter(r, np.float32(-np.inf))))
        if rnd == "rn":
            assert (lo + below) ** 2 / 4 <= q <= (lo + hi) ** 2 / 4
        elif rnd in ("rz", "rm"):
            assert lo * lo <= q < hi * hi
        else:
            assert below * below < q <= lo * lo


def ulp_err(got, ref):
    ref = np.asarray(ref, np.float64)
    ulp = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    return np.abs(got.astype(np.float64) - ref) / ulp


@pytest.mark.parametrize("inst,fn,lo,hi,bound", [
    ("ex2.approx.f32", np.exp2, -100, 100, 2),
    ("ex2.approx.ftz.f32", np.exp2, -100, 100, 2),
    ("lg2.approx.f32", np.log2, 1e-30, 1e30, 2),
    ("rcp.approx.f32", lambda x: 1 / x, -1e6, 1e6, 1),
    ("rcp.approx.ftz.f32", lambda x: 1 / x, -1e6, 1e6, 1),
    ("sqrt.approx.f32", np.sqrt, 0, 1e6, 1),
    ("rsqrt.approx.f32", lambda x: 1 / np.sqrt(x), 1e-6, 1e6, 1),
    ("rsqrt.approx.ftz.f32", lambda x: 1 / np.sqrt(x), 1e-6, 1e6, 1),
])
def test_approx_within_isa_bound(rng, inst, fn, lo, hi, bound):
    a = rng.uniform(lo, hi, N).astype(np.float32)
    d = run(f"{inst} %d, %a;", a).view(np.float32)
    assert ulp_err(d, fn(a.astype(np.float64))).max() <= bound


def test_sin_cos_tanh_approx(rng):
    a = rng.uniform(-math.pi, math.pi, N).astype(np.float32)
    for inst, fn in (("sin", np.sin), ("cos", np.cos)):
        d = run(f"{inst}.approx.f32 %d, %a;", a).view(np.float32)
        assert np.abs(d - fn(a.astype(np.float64))).max() <= 2 ** -20.5
    d = run("tanh.approx.f32 %d, %a;", a).view(np.float32)
    ref = np.tanh(a.astype(np.float64))
    assert (np.abs(d - ref) / np.abs(ref)).max() <= 2 ** -10.987


def test_f64_rcp_and_rsqrt_approx(rng):
    # rcp.approx.ftz.f64 (PTX ISA): a gross approximation from the upper 32
    # bits of a (sign, exponent, 20 mantissa bits), the result's lower 32 bits
    # zero; subnormals flush to zero, so +-0 and +-subnormals give +-inf.
    a = rng.uniform(-1e6, 1e6, N)
    a[:8] = [3.0, -0.0, 0.0, np.inf, -np.inf, 5e-324, -5e-324, np.nan]
    d = run("rcp.approx.ftz.f64 %d, %a;", a, out_bits=64).view(np.float64)
    hi = (a.view(np.uint64) & np.uint64(0xFFFFFFFF00000000)).view(np.float64)
    assert ((d.view(np.uint64)[8:] & np.uint64(0xFFFFFFFF)) == 0).all()
    # The reciprocal of the truncated value, good to about the 20 mantissa
    # bits kept (the ISA gives no tighter bound).
    assert (np.abs(d[8:] * hi[8:] - 1) <= 2.0 ** -19).all()
    # 1/3 is 0x3FD5555555555555: its upper word 0x3FD55555, within one unit.
    assert abs(int(d.view(np.uint64)[0] >> np.uint64(32)) - 0x3FD55555) <= 1
    assert list(d[1:7]) == [-np.inf, np.inf, 0.0, -0.0, np.inf, -np.inf]
    assert np.signbit(d[4]) and not np.signbit(d[3]) and np.isnan(d[7])
    # The lower 32 bits of a are ignored.
    b = (np.full(N, 3.0).view(np.uint64) | np.uint64(0x12345678)).view(np.float64)
    assert (run("rcp.approx.ftz.f64 %d, %a;", b, out_bits=64) == d.view(np.uint64)[0]).all()
    # rsqrt.approx.f64 / rsqrt.approx.ftz.f64: 1/sqrt(a); exact for powers of 4.
    c = rng.uniform(1e-300, 1e300, N)
    c[:4] = [4.0, 0.25, 2.0 ** -1020, 1e-310]
    for inst in ("rsqrt.approx.f64", "rsqrt.approx.ftz.f64"):
        d = run(f"{inst} %d, %a;", c, out_bits=64).view(np.float64)
        ref = [1 / math.sqrt(x) for x in c]  # two roundings: well inside a 2^-50 bound
        assert d[0] == 0.5 and d[1] == 2.0 and d[2] == 2.0 ** 510
        assert all(abs(float(x) / r - 1) <= 2.0 ** -50 for x, r in zip(d[4:], ref[4:]))
        # 1e-310 is subnormal: .ftz flushes it to +0, whose rsqrt is +inf.
        assert d[3] == (np.inf if "ftz" in inst else 1 / math.sqrt(1e-310))


def test_ex2_special_values():
    a = f32([-np.inf, np.inf, 0.0, -0.0, 1.0, -150.0, 128.0, np.nan] * 16)
    d = run("ex2.approx.f32 %d, %a;", a).view(np.float32)
    assert d[0] == 0 and d[1] == np.inf and d[2] == 1 and d[3] == 1 and d[4] == 2
    assert d[5] == 0 and d[6] == np.inf and np.isnan(d[7])
    d = run("ex2.approx.ftz.f32 %d, %a;", f32([-140.0] * N)).view(np.float32)
    assert (d == 0).all()  # 2^-140 is subnormal: flushed


def test_div_full_and_approx(rng):
    a, b = randf(rng), randf(rng)
    for inst in ("div.full.f32", "div.approx.f32"):
        d = run(f"{inst} %d, %a, %b;", a, b).view(np.float32)
        assert ulp_err(d, a.astype(np.float64) / b).max() <= 2


@pytest.mark.parametrize("cmp,fn", [
    ("eq", lambda a, b: a == b), ("ne", lambda a, b: (a != b) & ~np.isnan(a) & ~np.isnan(b)),
    ("lt", np.less), ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal),
    ("equ", lambda a, b: (a == b) | np.isnan(a) | np.isnan(b)), ("neu", lambda a, b: a != b),
    ("ltu", lambda a, b: ~(a >= b)), ("geu", lambda a, b: ~(a < b)),
    ("num", lambda a, b: ~np.isnan(a) & ~np.isnan(b)), ("nan", lambda a, b: np.isnan(a) | np.isnan(b)),
])
def test_setp_f32(rng, cmp, fn):
    a = rng.integers(-2, 3, N).astype(np.float32)
    b = rng.integers(-2, 3, N).astype(np.float32)
    a[::7] = np.nan
    d = run(f"setp.{cmp}.f32 %p, %a, %b;\n selp.b32 %d, 1, 0, %p;", a, b)
    np.testing.assert_array_equal(d, fn(a, b).astype(np.uint32))


def test_setp_bool_combine_and_pair(rng):
    a, b = rng.integers(-3, 3, (2, N)).astype(np.int32)
    c = rng.integers(0, 2, N).astype(np.int32)
    body = ("setp.ne.s32 %q, %c, 0;\n setp.lt.and.s32 %p|%q, %a, %b, %q;\n"
            " selp.b32 %t0, 1, 0, %p;\n selp.b32 %t1, 2, 0, %q;\n or.b32 %d, %t0, %t1;")
    d = run(body, a, b, c)
    lt, cc = a < b, c != 0
    np.testing.assert_array_equal(d, (lt & cc) * 1 + (~lt & cc) * 2)


# --------------------------------------------------------------- integer arith

def ints(rng, dtype, n=N):
    info = np.iinfo(dtype)
    v = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    v[:6] = [0, 1, info.max, info.min, 2, 3] if info.min < 0 else [0, 1, info.max, 0, 2, 3]
    return v


@pytest.mark.parametrize("t,dt", [("s32", np.int32), ("u32", np.uint32), ("s64", np.int64),
                                  ("u64", np.uint64)])
def test_int_arith(rng, t, dt):
    a, b, c = ints(rng, dt), ints(rng, dt), ints(rng, dt)
    w = np.dtype(dt).itemsize * 8
    with np.errstate(over="ignore"):
        for inst, ref in (("add", a + b), ("sub", a - b), ("mul.lo", a * b), ("mad.lo", a * b + c),
                          ("min", np.minimum(a, b)), ("max", np.maximum(a, b))):
            ops = "%a, %b, %c" if inst.startswith("mad") else "%a, %b"
            d = run(f"{inst}.{t} %d, {ops};", a, b, c, out_bits=w, out_dtype=dt)
            np.testing.assert_array_equal(d, ref, err_msg=inst)
    ai, bi = [int(x) for x in a], [int(x) for x in b]
    hi = [((x * y) >> w) % (1 << w) for x, y in zip(ai, bi)]
    d = run(f"mul.hi.{t} %d, %a, %b;", a, b, out_bits=w, out_dtype=f"u{w // 8}")
    assert [int(x) for x in d] == hi
    bz = np.where(b == 0, 1, b).astype(dt)
    q = [(abs(x) // abs(y)) * (1 if (x < 0) == (y < 0) else -1) for x, y in zip(ai, [int(v) for v in bz])]
    r = [x - qq * y for x, qq, y in zip(ai, q, [int(v) for v in bz])]
    d = run(f"div.{t} %d, %a, %b;", a, bz, out_bits=w, out_dtype=f"u{w // 8}")
    assert [int(x) for x in d] == [v % (1 << w) for v in q]
    d = run(f"rem.{t} %d, %a, %b;", a, bz, out_bits=w, out_dtype=f"u{w // 8}")
    assert [int(x) for x in d] == [v % (1 << w) for v in r]


def test_mul_wide_and_mad_wide(rng):
    a, b = ints(rng, np.int32), ints(rng, np.int32)
    d = run("mul.wide.s32 %d, %a, %b;", a, b, out_bits=64, out_dtype=np.int64,
            extra_regs="")
    np.testing.assert_array_equal(d, a.astype(np.int64) * b)
    au, bu = a.view(np.uint32), b.view(np.uint32)
    d = run("mul.wide.u32 %d, %a, %b;", au, bu, out_bits=64, out_dtype=np.uint64)
    np.testing.assert_array_equal(d, au.astype(np.uint64) * bu)
    c = ints(rng, np.int32)
    d = run("cvt.s64.s32 %rd8, %c;\n mad.wide.s32 %d, %a, %b, %rd8;", a, b, c, out_bits=64, out_dtype=np.int64)
    np.testing.assert_array_equal(d, a.astype(np.int64) * b + c)


def test_add_sat_abs_neg(rng):
    a, b = ints(rng, np.int32), ints(rng, np.int32)
    d = run("add.sat.s32 %d, %a, %b;", a, b, out_dtype=np.int32)
    np.testing.assert_array_equal(d, np.clip(a.astype(np.int64) + b, -2 ** 31, 2 ** 31 - 1))
    d = run("sub.sat.s32 %d, %a, %b;", a, b, out_dtype=np.int32)
    np.testing.assert_array_equal(d, np.clip(a.astype(np.int64) - b, -2 ** 31, 2 ** 31 - 1))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(run("abs.s32 %d, %a;", a, out_dtype=np.int32), np.abs(a))
        np.testing.assert_array_equal(run("neg.s32 %d, %a;", a, out_dtype=np.int32), -a)


LIMBS = " .reg .b32 %a0, %a1, %b0, %b1, %y0, %y1, %y2, %y3;"
M64 = (1 << 64) - 1


def u64s(rng):
    """Random 64-bit values, the first ones chosen so every carry and borrow of a chain happens."""
    v = ints(rng, np.uint64)
    v[:8] = [0, 1, M64, 0xFFFFFFFF, 0x1_0000_0000, 0xFFFFFFFF_00000000, 2 ** 63, 0x0000_0001_FFFF_FFFF]
    return v


def pairs(rng):
    a, b = u64s(rng), u64s(rng)
    b[8:16] = [M64, 1, M64, 0xFFFFFFFF, 0xFFFFFFFF, 0x1_0000_0000, 2 ** 63, 1]
    return a, b


def test_add_sub_carry_chains(rng):
    # PTX ISA, extended-precision integer arithmetic: add.cc/addc add the carry
    # flag CC.CF in and write the carry out; sub.cc/subc subtract b + CC.CF and
    # write the borrow out. A 64-bit sum from 32-bit limbs must equal Python's.
    a, b = pairs(rng)
    ai, bi = [int(x) for x in a], [int(x) for x in b]
    split = "mov.b64 {%a0, %a1}, %a;\n mov.b64 {%b0, %b1}, %b;\n"
    d = run(split + "add.cc.u32 %y0, %a0, %b0;\n addc.cc.u32 %y1, %a1, %b1;\n mov.b64 %d, {%y0, %y1};",
            a, b, out_bits=64, extra_regs=LIMBS)
    assert [int(x) for x in d] == [(x + y) & M64 for x, y in zip(ai, bi)]
    # The carry out of the high limb: addc.u32 d, 0, 0 is CC.CF.
    d = run(split + "add.cc.u32 %y0, %a0, %b0;\n addc.cc.s32 %y1, %a1, %b1;\n addc.u32 %d, 0, 0;",
            a, b, extra_regs=LIMBS)
    assert [int(x) for x in d] == [(x + y) >> 64 for x, y in zip(ai, bi)]
    d = run(split + "sub.cc.u32 %y0, %a0, %b0;\n subc.cc.u32 %y1, %a1, %b1;\n mov.b64 %d, {%y0, %y1};",
            a, b, out_bits=64, extra_regs=LIMBS)
    assert [int(x) for x in d] == [(x - y) & M64 for x, y in zip(ai, bi)]
    # The borrow out: subc.u32 d, 0, 0 is 0 - CC.CF.
    d = run(split + "sub.cc.s32 %y0, %a0, %b0;\n subc.cc.u32 %y1, %a1, %b1;\n subc.u32 %d, 0, 0;",
            a, b, extra_regs=LIMBS)
    assert [int(x) for x in d] == [0xFFFFFFFF if x < y else 0 for x, y in zip(ai, bi)]
    # 64-bit limbs: the carry out of a 64-bit add, and a 128-bit a + b + a*2^64.
    d = run("add.cc.u64 %rd8, %a, %b;\n addc.u64 %d, 0, 0;", a, b, out_bits=64)
    assert [int(x) for x in d] == [(x + y) >> 64 for x, y in zip(ai, bi)]
    d = run("add.cc.s64 %rd8, %a, %b;\n addc.cc.u64 %rd9, %a, %b;\n addc.s64 %d, 0, 0;",
            a, b, out_bits=64)
    assert [int(x) for x in d] == [((x + y) * ((1 << 64) + 1)) >> 128 for x, y in zip(ai, bi)]
    d = run("sub.cc.u64 %rd8, %a, %b;\n subc.cc.s64 %d, %b, %a;", a, b, out_bits=64)
    assert [int(x) for x in d] == [(y - x - (x < y)) & M64 for x, y in zip(ai, bi)]
    # Without .cc the flag is left alone: the carry of the first add survives.
    d = run("add.cc.u64 %rd8, %a, %b;\n add.u64 %rd9, %a, %a;\n addc.u64 %rd9, %a, %a;\n"
            " sub.u64 %rd9, 0, 1;\n addc.u64 %d, 0, 0;", a, b, out_bits=64)
    assert [int(x) for x in d] == [(x + y) >> 64 for x, y in zip(ai, bi)]


def test_mad_carry_chain_full_product(rng):
    # The PTX ISA's own example for madc: [r3,r2,r1,r0] = [r5,r4] * [r7,r6],
    # a 64 x 64 -> 128-bit product from 32-bit limbs, checked against Python.
    a, b = pairs(rng)
    body = """mov.b64 {%a0, %a1}, %a;
 mov.b64 {%b0, %b1}, %b;
 mul.lo.u32 %y0, %a0, %b0;
 mul.hi.u32 %y1, %a0, %b0;
 mad.lo.cc.u32 %y1, %a1, %b0, %y1;
 madc.hi.u32 %y2, %a1, %b0, 0;
 mad.lo.cc.u32 %y1, %a0, %b1, %y1;
 madc.hi.cc.u32 %y2, %a0, %b1, %y2;
 addc.u32 %y3, 0, 0;
 mad.lo.cc.u32 %y2, %a1, %b1, %y2;
 madc.hi.u32 %y3, %a1, %b1, %y3;
 """
    prods = [int(x) * int(y) for x, y in zip(a, b)]
    d = run(body + "mov.b64 %d, {%y0, %y1};", a, b, out_bits=64, extra_regs=LIMBS)
    assert [int(x) for x in d] == [p & M64 for p in prods]
    d = run(body + "mov.b64 %d, {%y2, %y3};", a, b, out_bits=64, extra_regs=LIMBS)
    assert [int(x) for x in d] == [p >> 64 for p in prods]
    # 64-bit limbs: a*b + c as 128 bits with mad.lo.cc.u64 / madc.hi.u64.
    c = u64s(rng)[::-1].copy()
    d = run("mad.lo.cc.u64 %rd8, %a, %b, %c;\n madc.hi.u64 %d, %a, %b, 0;", a, b, c, out_bits=64)
    assert [int(x) for x in d] == [(p + int(z)) >> 64 for p, z in zip(prods, c)]


@pytest.mark.parametrize("t,dt", [("s32", np.int32), ("u32", np.uint32), ("s64", np.int64), ("u64", np.uint64)])
def test_madc_hi_lo_signed_and_unsigned(rng, t, dt):
    # madc.{lo,hi}.cc: d = (a*b).{lo,hi} + c + CC.CF; the product's high half is
    # signed for .s types; the carry out is that of the unsigned addition.
    a, b, c = ints(rng, dt), ints(rng, dt), ints(rng, dt)
    w = np.dtype(dt).itemsize * 8
    m = (1 << w) - 1
    ai, bi, ci = [int(x) for x in a], [int(x) for x in b], [int(x) for x in c]
    # Set CC.CF from c's top bit: c + c carries exactly when it is set.
    setcf = f"add.cc.u{w} %t{w}, %c, %c;\n "
    regs = f" .reg .b{w} %t{w};"
    for part in ("lo", "hi"):
        prod = [(x * y) & m if part == "lo" else ((x * y) >> w) & m for x, y in zip(ai, bi)]
        cf = [(z & m) >> (w - 1) for z in ci]
        total = [p + (z & m) + f for p, z, f in zip(prod, ci, cf)]
        d = run(setcf + f"madc.{part}.cc.{t} %d, %a, %b, %c;", a, b, c, out_bits=w,
                out_dtype=f"u{w // 8}", extra_regs=regs)
        assert [int(x) for x in d] == [s & m for s in total], part
        d = run(setcf + f"madc.{part}.cc.{t} %t{w}, %a, %b, %c;\n addc.u{w} %d, 0, 0;", a, b, c,
                out_bits=w, out_dtype=f"u{w // 8}", extra_regs=regs)
        assert [int(x) for x in d] == [s >> w for s in total], part
        d = run(setcf + f"mad.{part}.cc.{t} %t{w}, %a, %b, %c;\n addc.u{w} %d, 0, 0;", a, b, c,
                out_bits=w, out_dtype=f"u{w // 8}", extra_regs=regs)
        assert [int(x) for x in d] == [(p + (z & m)) >> w for p, z in zip(prod, ci)], part


def test_carry_flag_is_per_thread_and_guarded(rng):
    # CC.CF belongs to each thread: a lane whose guard is false keeps its flag.
    a, b = pairs(rng)
    ai, bi = [int(x) for x in a], [int(x) for x in b]
    d = run("add.cc.u64 %rd8, %a, %b;\n and.b32 %t0, %tid, 1;\n setp.eq.u32 %p, %t0, 1;\n"
            " @%p sub.cc.u64 %rd8, %a, %b;\n addc.u64 %d, 0, 0;", a, b, out_bits=64)
    assert [int(x) for x in d] == [int(x < y) if i % 2 else (x + y) >> 64
                                   for i, (x, y) in enumerate(zip(ai, bi))]


def test_negative_address_offsets(rng):
    # LLVM prints negative offsets as `[%rd+-4]`; hex offsets are numbers too.
    a = ints(rng, np.int32)
    d = run("add.s64 %rd5, %rd0, 16;\n ld.global.b32 %t0, [%rd5+-0x10];\n"
            " add.s64 %rd6, %rd0, 4;\n ld.global.b32 %t1, [%rd6+-4];\n"
            " add.s64 %rd6, %rd0, 12;\n ld.global.b32 %d, [%rd6+ -  12];\n"
            " xor.b32 %d, %d, %t0;\n xor.b32 %d, %d, %t1;", a, out_dtype=np.int32)
    np.testing.assert_array_equal(d, a)


def test_logic_and_shifts(rng):
    a, b = ints(rng, np.uint32), ints(rng, np.uint32)
    for inst, ref in (("and", a & b), ("or", a | b), ("xor", a ^ b)):
        np.testing.assert_array_equal(run(f"{inst}.b32 %d, %a, %b;", a, b), ref)
    np.testing.assert_array_equal(run("not.b32 %d, %a;", a), ~a)
    np.testing.assert_array_equal(run("cnot.b32 %d, %a;", a), (a == 0).astype(np.uint32))
    n = rng.integers(0, 40, N).astype(np.uint32)  # shifts past the width saturate
    shl = np.where(n >= 32, 0, (a.astype(np.uint64) << np.minimum(n, 31)) & 0xFFFFFFFF)
    np.testing.assert_array_equal(run("shl.b32 %d, %a, %b;", a, n), shl)
    np.testing.assert_array_equal(run("shr.u32 %d, %a, %b;", a, n), np.where(n >= 32, 0, a >> np.minimum(n, 31)))
    s = a.view(np.int32)
    np.testing.assert_array_equal(run("shr.s32 %d, %a, %b;", s, n, out_dtype=np.int32), s >> np.minimum(n, 31))


def test_popc_clz_brev(rng):
    a = ints(rng, np.uint32)
    ai = [int(x) for x in a]
    np.testing.assert_array_equal(run("popc.b32 %d, %a;", a), [bin(x).count("1") for x in ai])
    np.testing.assert_array_equal(run("clz.b32 %d, %a;", a), [32 - x.bit_length() for x in ai])
    np.testing.assert_array_equal(run("brev.b32 %d, %a;", a), [int(f"{x:032b}"[::-1], 2) for x in ai])
    a64 = ints(rng, np.uint64)
    d = run("popc.b64 %d, %a;", a64, out_bits=32)
    np.testing.assert_array_equal(d, [bin(int(x)).count("1") for x in a64])


def bfe_ref(x, pos, ln, signed, w=32):
    # PTX ISA bfe: bits [pos, pos+len) of a; the fill bit is the field's top
    # bit (clamped to the msb) for signed types, 0 for unsigned; len 0 gives 0.
    xb = [(x >> i) & 1 for i in range(w)]
    sbit = 0 if (not signed or ln == 0) else xb[min(pos + ln - 1, w - 1)]
    r = 0
    for i in range(w):
        bit = xb[pos + i] if (i < ln and pos + i <= w - 1) else sbit
        r |= bit << i
    return r


def test_bfe_bfi(rng):
    a = ints(rng, np.uint32)
    pos = rng.integers(0, 40, N).astype(np.uint32)
    ln = rng.integers(0, 40, N).astype(np.uint32)
    d = run("bfe.u32 %d, %a, %b, %c;", a, pos, ln)
    np.testing.assert_array_equal(d, [bfe_ref(int(x), int(p), int(l), False) for x, p, l in zip(a, pos, ln)])
    d = run("bfe.s32 %d, %a, %b, %c;", a.view(np.int32), pos, ln)
    np.testing.assert_array_equal(d, [bfe_ref(int(x), int(p), int(l), True) for x, p, l in zip(a, pos, ln)])
    b = ints(rng, np.uint32)
    d = run("bfi.b32 %d, %a, %b, 5, 9;", a, b)
    mask = ((1 << 9) - 1) << 5
    np.testing.assert_array_equal(d, (b & ~np.uint32(mask)) | ((a << 5) & mask))


def test_prmt_lop3_shf(rng):
    a, b = ints(rng, np.uint32), ints(rng, np.uint32)
    sel = rng.integers(0, 1 << 16, N).astype(np.uint32)
    d = run("prmt.b32 %d, %a, %b, %c;", a, b, sel)
    ref = []
    for x, y, s in zip(a, b, sel):
        by = int(x).to_bytes(4, "little") + int(y).to_bytes(4, "little")
        r = 0
        for i in range(4):
            n = (int(s) >> (4 * i)) & 0xF
            v = by[n & 7]
            if n & 8:
                v = 0xFF if v & 0x80 else 0
            r |= v << (8 * i)
        ref.append(r)
    np.testing.assert_array_equal(d, ref)
    c = ints(rng, np.uint32)
    # 0x96 is a ^ b ^ c, 0xE8 majority, 0xCA is (a & b) | (~a & c)
    np.testing.assert_array_equal(run("lop3.b32 %d, %a, %b, %c, 0x96;", a, b, c), a ^ b ^ c)
    np.testing.assert_array_equal(run("lop3.b32 %d, %a, %b, %c, 0xE8;", a, b, c), (a & b) | (a & c) | (b & c))
    np.testing.assert_array_equal(run("lop3.b32 %d, %a, %b, %c, 0xCA;", a, b, c), (a & b) | (~a & c))
    n = rng.integers(0, 40, N).astype(np.uint32)
    both = (b.astype(object) << 32) | a.astype(object)
    for mode, amt in (("wrap", n & 31), ("clamp", np.minimum(n, 32))):
        d = run(f"shf.l.{mode}.b32 %d, %a, %b, %c;", a, b, n)
        np.testing.assert_array_equal(d, [((v << int(k)) >> 32) & 0xFFFFFFFF for v, k in zip(both, amt)])
        d = run(f"shf.r.{mode}.b32 %d, %a, %b, %c;", a, b, n)
        np.testing.assert_array_equal(d, [(v >> int(k)) & 0xFFFFFFFF for v, k in zip(both, amt)])


def test_setp_int_and_selp(rng):
    a, b = ints(rng, np.int32), ints(rng, np.int32)
    b[::3] = a[::3]
    for cmp, fn in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
                    ("gt", np.greater), ("ge", np.greater_equal)):
        d = run(f"setp.{cmp}.s32 %p, %a, %b;\n selp.b32 %d, %a, %b, %p;", a, b, out_dtype=np.int32)
        np.testing.assert_array_equal(d, np.where(fn(a, b), a, b), err_msg=cmp)
    au, bu = a.view(np.uint32), b.view(np.uint32)
    for cmp, fn in (("lo", np.less), ("ls", np.less_equal), ("hi", np.greater), ("hs", np.greater_equal)):
        d = run(f"setp.{cmp}.u32 %p, %a, %b;\n selp.u32 %d, 1, 0, %p;", au, bu)
        np.testing.assert_array_equal(d, fn(au, bu).astype(np.uint32), err_msg=cmp)


def test_mov_pack_unpack(rng):
    a, b = ints(rng, np.uint32), ints(rng, np.uint32)
    d = run("mov.b64 %d, {%a, %b};", a, b, out_bits=64, out_dtype=np.uint64)
    np.testing.assert_array_equal(d, (b.astype(np.uint64) << 32) | a)
    regs = ".reg .b16 %h0, %h1;"
    d = run("mov.b32 {%h0, %h1}, %a;\n mov.b32 %d, {%h1, %h0};", a, extra_regs=regs)
    np.testing.assert_array_equal(d, (a >> 16) | ((a & 0xFFFF) << 16))
    d = run("mov.f32 %d, 0f3FC00000;", a)
    assert (d == bits32(1.5)).all()


# ------------------------------------------------------------------------ cvt

def test_cvt_f32_to_int_roundings_and_saturation(rng):
    a = (rng.standard_normal(N) * 4).astype(np.float32)
    a[:8] = [2.5, -2.5, 3.5, np.nan, 3e9, -3e9, 1e20, -0.5]
    for rnd, fn in (("rni", np.rint), ("rzi", np.trunc), ("rmi", np.floor), ("rpi", np.ceil)):
        d = run(f"cvt.{rnd}.s32.f32 %d, %a;", a, out_dtype=np.int32)
        ref = np.where(np.isnan(a), 0, np.clip(fn(a.astype(np.float64)), -2 ** 31, 2 ** 31 - 1)).astype(np.int64)
        np.testing.assert_array_equal(d, ref, err_msg=rnd)
        d = run(f"cvt.{rnd}.u32.f32 %d, %a;", a)
        ref = np.where(np.isnan(a), 0, np.clip(fn(a.astype(np.float64)), 0, 2 ** 32 - 1)).astype(np.int64)
        np.testing.assert_array_equal(d, ref, err_msg=rnd)


@pytest.mark.parametrize("rnd", ["rn", "rz", "rm", "rp"])
def test_cvt_int_to_f32(rng, rnd):
    a = ints(rng, np.int32)
    d = run(f"cvt.{rnd}.f32.s32 %d, %a;", a)
    np.testing.assert_array_equal(d, bits32([round_f32(Fraction(int(x)), rnd) for x in a]))
    u = ints(rng, np.uint64)
    d = run(f"cvt.{rnd}.f32.u64 %d, %a;", u, out_bits=32)
    np.testing.assert_array_equal(d, bits32([round_f32(Fraction(int(x)), rnd) for x in u]))


def test_cvt_f16_bf16(rng):
    a = (rng.standard_normal(N) * 100).astype(np.float32)
    a[:6] = [70000.0, -1e-9, 65520.0, np.inf, 1e-6, 2049.0]
    regs = ".reg .b16 %h;"
    d = run("cvt.rn.f16.f32 %h, %a;\n cvt.u32.u16 %d, %h;", a, extra_regs=regs)
    with np.errstate(over="ignore"):
        f16 = a.astype(np.float16)
    np.testing.assert_array_equal(d, f16.view(np.uint16))
    # f16 -> f32 is exact
    d = run("cvt.rn.f16.f32 %h, %a;\n cvt.f32.f16 %d, %h;", a, extra_regs=regs)
    np.testing.assert_array_equal(d, bits32(f16.astype(np.float32)))
    # rz never rounds away from zero
    d = run("cvt.rz.f16.f32 %h, %a;\n cvt.f32.f16 %d, %h;", a, extra_regs=regs).view(np.float32)
    fin = np.isfinite(a)
    assert (np.abs(d[fin]) <= np.abs(a[fin])).all()
    assert d[0] == 65504.0  # overflow under rz gives the largest finite value
    # bf16: round to nearest even on the upper 16 bits of the f32 pattern
    bits = bits32(a).astype(np.uint64)
    ref = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
    ref = np.where(np.isinf(a), bits >> 16, ref)
    d = run("cvt.rn.bf16.f32 %h, %a;\n cvt.u32.u16 %d, %h;", a, extra_regs=regs)
    np.testing.assert_array_equal(d, ref)
    # packed: d[31:16] from a, d[15:0] from b
    b = (rng.standard_normal(N)).astype(np.float32)
    d = run("cvt.rn.f16x2.f32 %d, %a, %b;", a, b)
    np.testing.assert_array_equal(d, (f16.view(np.uint16).astype(np.uint32) << 16)
                                  | b.astype(np.float16).view(np.uint16))


def test_cvt_int_widths(rng):
    a = ints(rng, np.int32)
    d = run("cvt.s64.s32 %d, %a;", a, out_bits=64, out_dtype=np.int64)
    np.testing.assert_array_equal(d, a.astype(np.int64))
    d = run("cvt.u64.u32 %d, %a;", a.view(np.uint32), out_bits=64, out_dtype=np.uint64)
    np.testing.assert_array_equal(d, a.view(np.uint32).astype(np.uint64))
    d = run("cvt.s8.s32 %t0, %a;\n cvt.s32.s8 %d, %t0;", a, out_dtype=np.int32)
    np.testing.assert_array_equal(d, a.astype(np.int8).astype(np.int32))
    d = run("cvt.sat.s8.s32 %t0, %a;\n cvt.s32.s8 %d, %t0;", a, out_dtype=np.int32)
    np.testing.assert_array_equal(d, np.clip(a, -128, 127))
    d = run("cvt.f64.f32 %rd8, %a;\n cvt.rn.f32.f64 %d, %rd8;", randf(rng))
    x = randf(rng)
    d = run("cvt.f64.f32 %rd8, %a;\n mul.rn.f64 %rd8, %rd8, 0d3FB999999999999A;\n cvt.rn.f32.f64 %d, %rd8;", x)
    np.testing.assert_array_equal(d, bits32((x.astype(np.float64) * 0.1).astype(np.float32)))


def tf32_nearest_away(x):
    """The tf32 (10 mantissa bits) value nearest to each finite f32 in x, ties away from zero, from the values:
    the candidates are x's magnitude cut to tf32 and the next tf32 above it."""
    mag = np.abs(x).astype(np.float32)
    low = (mag.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    # One unit in tf32's last place at low's exponent; below 2^-126 (subnormals) 2^-126 * 2^-10.
    ulp = np.where(low < 2.0 ** -126, 2.0 ** -136, np.ldexp(1.0, np.frexp(low)[1] - 11))
    high = low + ulp
    m = mag.astype(np.float64)
    r = np.where(m - low < high - m, low, high)
    return (np.copysign(r, x).astype(np.float32)).view(np.uint32)


def test_cvt_rna_tf32(rng):
    """cvt.rna.tf32.f32: round to tf32, ties away from zero; the result's low 13 bits are zero."""
    x = randf(rng)
    x[:8] = (bits32(x[:8]) & np.uint32(0xFFFFE000) | np.uint32(0x1000)).view(np.float32)  # exact ties
    x[8:12] = (bits32(x[8:12]) | np.uint32(0x1FFF)).view(np.float32)  # carries into the exponent's next binade
    x[12:16] = np.float32(1.5e-40) * np.arange(1, 5)  # subnormals
    specials = np.array([np.inf, -np.inf, np.float32(3.4028235e38), 0.0, -0.0], np.float32)
    x[16:16 + len(specials)] = specials
    d = run("cvt.rna.tf32.f32 %d, %a;", x)
    finite = np.isfinite(x) & (np.abs(x) < np.float32(3.4e38))
    np.testing.assert_array_equal(d[finite], tf32_nearest_away(x[finite]))
    # Infinities stay; the largest f32 rounds up past the largest tf32, to infinity.
    np.testing.assert_array_equal(d[16:19], bits32([np.inf, -np.inf, np.inf]))
    nan = run("cvt.rna.tf32.f32 %d, %a;", np.full(N, np.nan, np.float32)).view(np.float32)
    assert np.isnan(nan).all()


# ------------------------------------------------------------- warp-level ops

def shfl_ref(a, mode, b, c):
    # PTX ISA shfl.sync semantics, per 32-lane warp.
    out, pred = np.zeros_like(a), np.zeros(len(a), bool)
    for w in range(0, len(a), 32):
        for lane in range(32):
            cval, seg = c & 31, (c >> 8) & 31
            max_lane = (lane & seg) | (cval & ~seg)
            min_lane = lane & seg
            if mode == "up":
                j, ok = lane - b, lane - b >= max_lane
            elif mode == "down":
                j, ok = lane + b, lane + b <= max_lane
            elif mode == "bfly":
                j, ok = lane ^ b, (lane ^ b) <= max_lane
            else:
                j = min_lane | (b & ~seg)
                ok = j <= max_lane
            out[w + lane] = a[w + (j if ok else lane)]
            pred[w + lane] = ok
    return out, pred


@pytest.mark.parametrize("mode,b,c", [("bfly", 16, 31), ("bfly", 1, 31), ("up", 1, 0), ("up", 5, 0),
                                      ("down", 2, 31), ("down", 3, 0x1F0F ^ 0x1000), ("idx", 7, 31),
                                      ("idx", 3, 0x181F ^ 0x1000)])
def test_shfl_sync(rng, mode, b, c):
    a = ints(rng, np.uint32)
    d = run(f"shfl.sync.{mode}.b32 %d|%p, %a, {b}, {c}, -1;", a)
    ref, pred = shfl_ref(a, mode, b, c)
    np.testing.assert_array_equal(d, ref)
    d = run(f"shfl.sync.{mode}.b32 %t0|%p, %a, {b}, {c}, -1;\n selp.b32 %d, 1, 0, %p;", a)
    np.testing.assert_array_equal(d, pred.astype(np.uint32))


def test_vote_and_activemask(rng):
    a = (rng.random(N) < 0.5).astype(np.uint32)
    a[32:64] = 1
    a[64:96] = 0
    d = run("setp.ne.u32 %p, %a, 0;\n vote.sync.ballot.b32 %d, %p, -1;", a)
    ballots = [sum(int(a[w + i]) << i for i in range(32)) for w in range(0, N, 32)]
    np.testing.assert_array_equal(d, np.repeat(ballots, 32))
    for mode, fn in (("all", lambda m: m == 0xFFFFFFFF), ("any", lambda m: m != 0),
                     ("uni", lambda m: m in (0, 0xFFFFFFFF))):
        d = run(f"setp.ne.u32 %p, %a, 0;\n vote.sync.{mode}.pred %q, %p, -1;\n selp.b32 %d, 1, 0, %q;", a)
        np.testing.assert_array_equal(d, np.repeat([int(fn(m)) for m in ballots], 32), err_msg=mode)
    d = run("activemask.b32 %d;", a)
    assert (d == 0xFFFFFFFF).all()


def test_divergence_reconverges(rng):
    # Odd lanes take a branch, even lanes the other; both meet again and a
    # full-warp shuffle after the join sees every lane converged.
    a = ints(rng, np.uint32)
    body = """
 and.b32 %t0, %tid, 1;
 setp.eq.u32 %p, %t0, 1;
 @%p bra ODD;
 add.u32 %t1, %a, 100;
 bra JOIN;
ODD:
 mul.lo.u32 %t1, %a, 3;
JOIN:
 activemask.b32 %t0;
 shfl.sync.bfly.b32 %d, %t1, 1, 31, -1;
 xor.b32 %d, %d, %t0;
"""
    d = run(body, a)
    t1 = np.where(np.arange(N) % 2 == 1, a * np.uint32(3), a + np.uint32(100))
    partner = t1[np.arange(N) ^ 1]
    np.testing.assert_array_equal(d, partner ^ np.uint32(0xFFFFFFFF))


def test_loop_with_divergent_trip_counts(rng):
    # Each lane loops tid % 7 times: sum of a over the iterations.
    a = rng.integers(0, 1000, N).astype(np.uint32)
    body = """
 rem.u32 %t0, %tid, 7;
 mov.u32 %d, 0;
 setp.eq.u32 %p, %t0, 0;
 @%p bra DONE;
LOOP:
 add.u32 %d, %d, %a;
 sub.u32 %t0, %t0, 1;
 setp.ne.u32 %p, %t0, 0;
 @%p bra LOOP;
DONE:
 activemask.b32 %t1;
 setp.ne.u32 %q, %t1, -1;
 @%q mov.u32 %d, 0xdead;
"""
    d = run(body, a)
    np.testing.assert_array_equal(d, a * (np.arange(N) % 7))


def test_predicate_logic(rng):
    # Predicates are single bits: not.pred of true is false (a bitwise ~ of a stored 1 would be nonzero, "true"),
    # and and/or/xor.pred follow the truth tables.
    a = rng.integers(0, 2, N).astype(np.int32)
    b = rng.integers(0, 2, N).astype(np.int32)
    for op, fn in [("not", lambda x, y: ~x & 1), ("and", lambda x, y: x & y), ("or", lambda x, y: x | y),
                   ("xor", lambda x, y: x ^ y)]:
        operands = "%p, %p" if op == "not" else "%p, %p, %q"
        body = (f"setp.ne.s32 %p, %a, 0;\n setp.ne.s32 %q, %b, 0;\n {op}.pred {operands};\n"
                " selp.b32 %d, 1, 0, %p;")
        np.testing.assert_array_equal(run(body, a, b), fn(a, b).astype(np.uint32), err_msg=op)


# ---------------------------------------------------------------------- calls

CALLS_PTX = """
.version 8.7
.target sm_80
.address_size 64
.func (.param .b32 func_retval0) scaled(.param .b32 scaled_param_0, .param .b32 scaled_param_1);
.func (.param .align 8 .b8 func_retval0[8]) pair(.param .b32 pair_param_0)
{
 .local .align 4 .b8 __local_depot1[8];
 .reg .b64 %SPL;
 .reg .b32 %r<5>;
 mov.u64 %SPL, __local_depot1;
 ld.param.b32 %r1, [pair_param_0];
 st.local.b32 [%SPL], %r1;
 { // callseq 1
 .param .b32 param0;
 .param .b32 param1;
 .param .b32 retval0;
 st.param.b32 [param0], %r1;
 st.param.b32 [param1], 7;
 call.uni (retval0), scaled, (param0, param1);
 ld.param.b32 %r2, [retval0];
 }
 st.local.b32 [%SPL+4], %r2;
 ld.local.b32 %r3, [%SPL];
 ld.local.b32 %r4, [%SPL+4];
 st.param.b32 [func_retval0], %r4;
 st.param.b32 [func_retval0+4], %r3;
 ret;
}
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pout)
{
 .reg .pred %p<2>;
 .reg .b32 %r<8>;
 .reg .b64 %rd<10>;
 mov.u32 %r0, %tid.x;
 ld.param.u64 %rd1, [pa];
 mul.wide.u32 %rd2, %r0, 4;
 add.s64 %rd3, %rd1, %rd2;
 ld.global.u32 %r1, [%rd3];
 ld.param.u64 %rd4, [pb];
 add.s64 %rd5, %rd4, %rd2;
 ld.global.u32 %r2, [%rd5];
 { // callseq 0
 .param .b32 param0;
 .param .b32 param1;
 .param .b32 retval0;
 st.param.b32 [param0], %r1;
 st.param.b32 [param1], %r2;
 call.uni (retval0), scaled, (param0, param1);
 ld.param.b32 %r3, [retval0];
 }
 and.b32 %r4, %r0, 1;
 setp.eq.u32 %p1, %r4, 0;
 mov.u32 %r5, 0;
 mov.u32 %r6, 0;
 @%p1 bra SKIP;
 { // callseq 2
 .param .b32 param0;
 .param .align 8 .b8 retval0[8];
 st.param.b32 [param0], %r2;
 call.uni (retval0), pair, (param0);
 ld.param.v2.b32 {%r5, %r6}, [retval0];
 }
SKIP:
 activemask.b32 %r7;
 ld.param.u64 %rd6, [pout];
 mul.wide.u32 %rd7, %r0, 16;
 add.s64 %rd8, %rd6, %rd7;
 st.global.v4.b32 [%rd8], {%r3, %r5, %r6, %r7};
 ret;
}
// Defined after its callers, as LLVM prints libdevice's helpers.
.func (.param .b32 func_retval0) scaled(.param .b32 scaled_param_0, .param .b32 scaled_param_1)
{
 .reg .pred %p<2>;
 .reg .b32 %r<4>;
 ld.param.b32 %r1, [scaled_param_0];
 ld.param.b32 %r2, [scaled_param_1];
 setp.lt.u32 %p1, %r1, 10;
 @%p1 bra $L__small;
 mad.lo.s32 %r3, %r1, 3, %r2;
 st.param.b32 [func_retval0], %r3;
 ret;
$L__small:
 sub.s32 %r3, %r2, %r1;
 st.param.b32 [func_retval0], %r3;
 ret;
}
"""


def test_device_function_calls(rng):
    # Calls to .func bodies (libdevice's slow paths): arguments and results pass
    # through the call site's .param variables; a function returns from either
    # side of a divergent branch; calls nest; a function's .local variables are
    # its own; threads reconverge after a call made by half of them.
    a = rng.integers(0, 20, N).astype(np.uint32)
    b = rng.integers(0, 1 << 31, N).astype(np.uint32)
    out = np.zeros((N, 4), np.uint32)
    gpusim.launch(CALLS_PTX, "k", 1, num_warps=N // 32, args=[a, b, out])

    def scaled(x, y):
        return (x * 3 + y if x >= 10 else y - x) % (1 << 32)

    odd = np.arange(N) % 2 == 1
    assert [int(v) for v in out[:, 0]] == [scaled(int(x), int(y)) for x, y in zip(a, b)]
    assert [int(v) for v in out[:, 1]] == [scaled(int(y), 7) if o else 0 for y, o in zip(b, odd)]
    np.testing.assert_array_equal(out[:, 2], np.where(odd, b, 0))
    assert (out[:, 3] == 0xFFFFFFFF).all()


def test_min_max_relu_s32(rng):
    # PTX ISA (sm_90): min/max.relu.s32 clamp a negative result to 0.
    a = rng.integers(-1000, 1000, N).astype(np.int32)
    b = rng.integers(-1000, 1000, N).astype(np.int32)
    for op, fn in [("max", np.maximum), ("min", np.minimum)]:
        d = run(f"{op}.relu.s32 %d, %a, %b;", a, b, out_dtype=np.int32)
        np.testing.assert_array_equal(d, np.maximum(fn(a, b), 0), err_msg=op)
