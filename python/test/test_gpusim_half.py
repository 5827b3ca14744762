"""16-bit float arithmetic (f16, bf16, packed x2) and the 8-bit float conversions in Tessel's PTX simulator.

References are computed independently: float64 arithmetic rounded to the 16-bit format once (numpy's float16
conversion; a ties-to-even rounding written here for bf16), and for e4m3/e5m2 the nearest value in the format's
table of every finite value, built here from the formats' definitions.
"""
import numpy as np
import pytest

from test_gpusim_triton import compile_ptx, scratch_args
from tessel import gpusim

HEADER = ".version 8.7\n.target sm_89\n.address_size 64\n"


def run(body, *inputs, out_dtype=np.uint32):
    """One lane per element: %a %b %c are b32 inputs, %d the b32 result."""
    n = len(inputs[0])
    loads = []
    for i, name in enumerate("abc"[:len(inputs)]):
        loads.append(f"ld.param.u64 %rd{i}, [p{i}]; add.s64 %rd{i}, %rd{i}, %off; ld.global.b32 %{name}, [%rd{i}];")
    ptx = HEADER + f""".visible .entry k(.param .u64 p0, .param .u64 p1, .param .u64 p2, .param .u64 p3)
{{
 .reg .b32 %t, %a, %b, %c, %d;
 .reg .b16 %ha, %hb, %hc, %hd;
 .reg .b64 %rd<4>, %off;
 mov.u32 %t, %tid.x;
 mul.wide.u32 %off, %t, 4;
 {chr(10).join(loads)}
 {body}
 ld.param.u64 %rd3, [p3];
 add.s64 %rd3, %rd3, %off;
 st.global.b32 [%rd3], %d;
 ret;
}}
"""
    out = np.zeros(n, np.uint32)
    args = [np.ascontiguousarray(x, np.uint32) for x in inputs] + [None] * (3 - len(inputs)) + [out]
    gpusim.launch(ptx, "k", 1, block=n, args=args)
    return out


def bf16_round(x):
    """float64 -> bfloat16 bits, round to nearest even (normal range)."""
    x = np.asarray(x, np.float64)
    m, e = np.frexp(x)  # x = m * 2^e, 0.5 <= |m| < 1
    r = np.ldexp(np.rint(np.ldexp(m, 8)), e - 8)  # 8 significant bits, ties to even
    return (r.astype(np.float32).view(np.uint32) >> 16).astype(np.uint32)


def bf16_value(bits):
    return (np.asarray(bits, np.uint32) << 16).view(np.float32).astype(np.float64)


def f16_bits(x):
    return np.asarray(x, np.float64).astype(np.float16).view(np.uint16).astype(np.uint32)


def f16_value(bits):
    return np.asarray(bits, np.uint16).view(np.float16).astype(np.float64)


REFS = {"add": lambda a, b, c: a + b, "sub": lambda a, b, c: a - b, "mul": lambda a, b, c: a * b,
        "fma.rn": lambda a, b, c: a * b + c}


@pytest.mark.parametrize("op", ["add", "sub", "mul", "fma.rn"])
@pytest.mark.parametrize("fmt", ["f16", "bf16"])
def test_scalar_and_packed_arith(rng, op, fmt):
    n = 128
    vals = rng.standard_normal((3, 2, n)) * 4
    if fmt == "f16":
        bits = f16_bits(vals)
        value, rnd = f16_value, f16_bits
    else:
        bits = bf16_round(vals)
        value, rnd = bf16_value, bf16_round
    packed = bits[:, 0] | bits[:, 1] << 16
    three = op == "fma.rn"
    srcs = "%a, %b, %c" if three else "%a, %b"
    out = run(f"{op}.{fmt}x2 %d, {srcs};", *packed)
    x = [value(bits[i]) for i in range(3)]
    ref = rnd(REFS[op](*[v for v in x]))
    np.testing.assert_array_equal(out & 0xFFFF, ref[0])
    np.testing.assert_array_equal(out >> 16, ref[1])
    # The scalar form on the low halves.
    hs = "%ha, %hb, %hc" if three else "%ha, %hb"
    out = run(f"mov.b32 {{%ha, %hd}}, %a; mov.b32 {{%hb, %hd}}, %b; mov.b32 {{%hc, %hd}}, %c;\n"
              f" {op}.{fmt} %hd, {hs};\n mov.b32 %d, {{%hd, %hd}};", *packed)
    np.testing.assert_array_equal(out & 0xFFFF, ref[0])


def test_f16_special_cases():
    one, big, sub_, nan, inf = 0x3C00, 0x7BFF, 0x0001, 0x7E00, 0x7C00
    a = np.array([big, sub_, one, nan, inf, 0x8000, 0x0000, 0x3800], np.uint32)
    b = np.array([big, sub_, nan, one, inf ^ 0x8000, 0x0000, 0x8000, 0x3800], np.uint32)
    out = run("mov.b32 {%ha, %hd}, %a; mov.b32 {%hb, %hd}, %b;\n add.f16 %hd, %ha, %hb;\n"
              " max.f16 %hc, %ha, %hb;\n mov.b32 %d, {%hd, %hc};", a, b)
    add, mx = out & 0xFFFF, out >> 16
    assert add[0] == 0x7C00  # 65504 + 65504 overflows to +inf
    assert add[1] == 0x0002  # subnormals add exactly without .ftz
    assert add[2] == 0x7FFF and add[3] == 0x7FFF and add[4] == 0x7FFF  # NaN results are canonical
    assert mx[2] == one and mx[3] == one  # max ignores one NaN
    assert mx[5] == 0x0000 and mx[6] == 0x0000  # max(-0, +0) = +0
    out = run("mov.b32 {%ha, %hd}, %a; mov.b32 {%hb, %hd}, %b;\n add.ftz.f16 %hd, %ha, %hb;\n"
              " min.NaN.f16 %hc, %ha, %hb;\n mov.b32 %d, {%hd, %hc};", a, b)
    assert (out[1] & 0xFFFF) == 0 and (out[2] >> 16) == 0x7FFF
    out = run("mov.b32 {%ha, %hd}, %a; mov.b32 {%hb, %hd}, %b;\n mul.sat.f16 %hd, %ha, %hb;\n"
              " fma.rn.relu.f16 %hc, %ha, %hb, %hb;\n mov.b32 %d, {%hd, %hc};", a, b)
    assert (out[0] & 0xFFFF) == one  # saturated to 1.0
    assert (out[7] & 0xFFFF) == 0x3400  # 0.5 * 0.5
    assert (out[4] >> 16) == 0  # relu(inf * -inf + -inf) = relu(-inf) = +0
    assert (out[2] >> 16) == 0x7FFF  # relu(NaN) stays (canonical) NaN


def test_neg_abs_keep_bits():
    a = np.array([0x3C00, 0xBC00, 0x0001, 0x7C00, 0x8000, 0xC000], np.uint32) | (0x3F80BC00 & 0xFFFF0000)
    out = run("neg.f16x2 %d, %a;", a)
    np.testing.assert_array_equal(out, a ^ 0x80008000)
    out = run("abs.bf16x2 %d, %a;", a)
    np.testing.assert_array_equal(out, a & 0x7FFF7FFF)


@pytest.mark.parametrize("fmt", ["f16", "bf16"])
def test_setp(rng, fmt):
    n = 256
    vals = rng.integers(-4, 4, (2, n)) / 2  # many equal pairs
    bits = f16_bits(vals) if fmt == "f16" else bf16_round(vals)
    nan = 0x7E00 if fmt == "f16" else 0x7FC0
    bits[0, :16] = nan
    bits[1, 8:24] = nan
    a, b = (f16_value(bits) if fmt == "f16" else bf16_value(bits))
    checks = {"lt": a < b, "ge": a >= b, "ne": ~np.isnan(a) & ~np.isnan(b) & (a != b),
              "gtu": np.isnan(a) | np.isnan(b) | (a > b), "nan": np.isnan(a) | np.isnan(b)}
    for cmp, ref in checks.items():
        out = run(f"mov.b32 {{%ha, %hd}}, %a; mov.b32 {{%hb, %hd}}, %b;\n .reg .pred %p, %q;\n"
                  f" setp.{cmp}.{fmt} %p|%q, %ha, %hb;\n selp.u32 %d, 1, 0, %p;\n selp.u32 %c, 2, 0, %q;\n"
                  f" or.b32 %d, %d, %c;", bits[0], bits[1])
        np.testing.assert_array_equal(out, np.where(ref, 1, 2), err_msg=cmp)


def e4m3_table():
    codes = np.arange(128)
    e, m = codes >> 3, codes & 7
    v = np.where(e == 0, m * 2.0 ** -9, (8 + m) * 2.0 ** (e - 10))
    return codes[:127], v[:127]  # 0x7f is NaN


def e5m2_table():
    codes = np.arange(128)
    e, m = codes >> 2, codes & 3
    v = np.where(e == 0, m * 2.0 ** -16, (4 + m) * 2.0 ** (e - 17))
    return codes[:124], v[:124]  # exponent 31: inf and NaN


def nearest_code(x, table):
    codes, vals = table
    out = []
    for v in np.asarray(x, np.float64):
        a = min(abs(v), vals[-1])  # .satfinite
        d = np.abs(vals - a)
        best = np.flatnonzero(d == d.min())
        code = int(codes[best[0]] if len(best) == 1 else next(c for c in codes[best] if c % 2 == 0))
        out.append(code | (0x80 if np.signbit(v) and code else 0) | (0x80 if np.signbit(v) and not code else 0))
    return np.array(out, np.uint32)


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
def test_fp8_from_f32(rng, fmt):
    table = e4m3_table() if fmt == "e4m3" else e5m2_table()
    n = 256
    x = np.concatenate([rng.standard_normal(n // 2) * 30, rng.standard_normal(n // 4) * 1e-3,
                        table[1][rng.integers(1, len(table[1]) - 1, n // 4)] * rng.choice([1, -1], n // 4)])
    # Exact midpoints between neighbours (ties to even) and values past the largest one (saturation).
    x[:8] = (table[1][40:48] + table[1][41:49]) / 2
    x[8:10] = [table[1][-1] * 1.5, -1e30]
    y = rng.standard_normal(n) * 3
    xf, yf = x.astype(np.float32), y.astype(np.float32)
    out = run(f"cvt.rn.satfinite.{fmt}x2.f32 %hd, %a, %b;\n cvt.u32.u16 %d, %hd;",
              xf.view(np.uint32), yf.view(np.uint32))
    np.testing.assert_array_equal(out >> 8, nearest_code(xf, table))
    np.testing.assert_array_equal(out & 0xFF, nearest_code(yf, table))


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
def test_fp8_to_f16x2_every_code(fmt):
    codes = np.arange(256, dtype=np.uint32)
    table = e4m3_table() if fmt == "e4m3" else e5m2_table()
    lo, hi = codes, codes[::-1]
    out = run(f"cvt.u16.u32 %ha, %a;\n cvt.rn.f16x2.{fmt}x2 %d, %ha;", lo | hi << 8)
    value = dict(zip(table[0].tolist(), table[1].tolist()))
    for half, c in ((out & 0xFFFF, lo), (out >> 16, hi)):
        got = f16_value(half)
        for g, code in zip(got, c):
            mag = code & 0x7F
            if mag not in value:  # NaN (and e5m2 infinities)
                assert np.isnan(g) or (fmt == "e5m2" and mag == 0x7C and np.isinf(g))
            else:
                assert g == (-1 if code & 0x80 else 1) * value[mag], (fmt, code)


def test_fp8_from_f16x2(rng):
    x = (rng.standard_normal(128) * 20).astype(np.float16)
    y = (rng.standard_normal(128) * 0.05).astype(np.float16)
    packed = x.view(np.uint16).astype(np.uint32) << 16 | y.view(np.uint16).astype(np.uint32)
    out = run("cvt.rn.satfinite.e4m3x2.f16x2 %hd, %a;\n cvt.u32.u16 %d, %hd;", packed)
    np.testing.assert_array_equal(out >> 8, nearest_code(x.astype(np.float64), e4m3_table()))
    np.testing.assert_array_equal(out & 0xFF, nearest_code(y.astype(np.float64), e4m3_table()))


@pytest.mark.parametrize("body,message", [
    ("cvt.rn.e4m3x2.f32 %hd, %a, %b;", "needs .satfinite"),
    ("add.rz.f16x2 %d, %a, %b;", "rounds with .rn only"),
    ("add.ftz.bf16x2 %d, %a, %b;", ".ftz and .sat apply to .f16"),
    ("fma.f16x2 %d, %a, %b, %c;", "fma needs .rn"),
    ("div.rn.f16 %hd, %ha, %hb;", "not simulated"),
])
def test_half_errors(body, message):
    with pytest.raises(gpusim.SimulatorError, match=message) as e:
        run(body, np.zeros(32, np.uint32), np.zeros(32, np.uint32), np.zeros(32, np.uint32))
    assert "PTX line" in str(e.value)


HALF_SIG = {"x_ptr": "*fp16", "y_ptr": "*fp16", "out_ptr": "*fp16", "n": "i32", "BLOCK": "constexpr"}


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_triton_half_elementwise(rng, dtype):
    sig = {k: (v.replace("fp16", dtype)) for k, v in HALF_SIG.items()}
    ptx, meta = compile_ptx("half_ops", sig, {"BLOCK": 1024}, divisible_by_16=["x_ptr", "y_ptr", "out_ptr"])
    assert f"fma.rn.{dtype.replace('fp', 'f')}" in ptx
    n = 3000
    if dtype == "fp16":
        x, y = (rng.standard_normal((2, n)) * 3).astype(np.float16)
        xb, yb = x.view(np.uint16), y.view(np.uint16)
    else:
        xb, yb = bf16_round(rng.standard_normal((2, n)) * 3).astype(np.uint16)
    out = np.zeros(n, np.uint16)
    gpusim.launch(ptx, "half_ops", -(-n // 1024), num_warps=meta.num_warps, shared_bytes=meta.shared,
                  args=[xb, yb, out, n] + scratch_args(ptx))
    value, rnd = (f16_value, f16_bits) if dtype == "fp16" else (bf16_value, bf16_round)
    xv, yv = value(xb), value(yb)
    # r = fma(x, y, x) rounded; r = max(r, y) - |x| rounded (as the kernel's PTX computes it).
    r = value(rnd(xv * yv + xv))
    ref = rnd(np.maximum(r, yv) - np.abs(xv))
    np.testing.assert_array_equal(out, ref)


def test_triton_fp8_roundtrip(rng):
    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "q_ptr": "*fp8e4nv", "n": "i32", "BLOCK": "constexpr"}
    ptx, meta = compile_ptx("fp8_roundtrip", sig, {"BLOCK": 1024}, divisible_by_16=["x_ptr", "out_ptr", "q_ptr"],
                            capability=89)
    assert "e4m3x2" in ptx
    n = 2000
    x = (rng.standard_normal(n) * 50).astype(np.float32)
    out = np.zeros(n, np.float32)
    q = np.zeros(n, np.uint8)
    gpusim.launch(ptx, "fp8_roundtrip", -(-n // 1024), num_warps=meta.num_warps, shared_bytes=meta.shared,
                  args=[x, out, q, n] + scratch_args(ptx))
    # Triton goes through f16 (cvt.rz.f16.f32, then f16x2 -> e4m3x2 with .rn): the reference does the same.
    x16 = x.astype(np.float64)
    m, e = np.frexp(x16)
    x16 = np.ldexp(np.trunc(np.ldexp(m, 11)), e - 11)  # round toward zero to 11 significant bits
    codes = nearest_code(x16, e4m3_table())
    np.testing.assert_array_equal(q, codes)
    codes_v = dict(zip(*[t.tolist() for t in e4m3_table()]))
    ref = np.array([(-1 if c & 0x80 else 1) * codes_v[c & 0x7F] for c in codes], np.float32)
    np.testing.assert_array_equal(out, ref)
