"""mma.sync, ldmatrix/stmatrix and cp.async in Tessel's PTX simulator, against layouts written from the PTX ISA.

The fragment layouts below are transcribed from the PTX ISA's "Matrix Fragments for mma.m16n8kK" tables
(groupID = laneid >> 2, threadID_in_group = laneid % 4) and its ldmatrix description, independently of the
simulator's code: the test packs A, B and C into each lane's registers as the ISA says, runs one mma in a warp
and unpacks D the same way, then compares with numpy's A @ B + C.
"""
import numpy as np
import pytest

from tessel import gpusim

HEADER = ".version 8.7\n.target sm_89\n.address_size 64\n"


# --- The ISA's fragment tables ------------------------------------------------------------------------------
# Each function maps (lane, element index i) -> (row, col) of A (M x K), (row=k, col=n) of B, (row, col) of C/D.

def a_pos(shape, kind, lane, i):
    g, t = lane >> 2, lane % 4
    if kind == "tf32":
        if shape == "m16n8k4":  # a0: (g, t), a1: (g + 8, t)
            return (g if i == 0 else g + 8), t
        # m16n8k8: row g for a0, a2 and g + 8 for a1, a3; col t for a0, a1 and t + 4 for a2, a3
        return (g if i in (0, 2) else g + 8), (t if i < 2 else t + 4)
    if kind == "16bit":
        if shape == "m16n8k8":  # row g for a0, a1, g + 8 for a2, a3; col t*2 + (i & 1)
            return (g if i < 2 else g + 8), t * 2 + (i & 1)
        # m16n8k16: row g for 0 <= i < 2 or 4 <= i < 6, else g + 8; col t*2 + (i & 1) (+ 8 for i >= 4)
        row = g if (i < 2 or 4 <= i < 6) else g + 8
        return row, t * 2 + (i & 1) + (8 if i >= 4 else 0)
    # 8-bit
    if shape == "m16n8k16":  # row g for i < 4, else g + 8; col t*4 + (i & 3)
        return (g if i < 4 else g + 8), t * 4 + (i & 3)
    # m16n8k32: row g for 0 <= i < 4 or 8 <= i < 12, else g + 8; col t*4 + (i & 3) (+ 16 for i >= 8)
    row = g if (i < 4 or 8 <= i < 12) else g + 8
    return row, t * 4 + (i & 3) + (16 if i >= 8 else 0)


def b_pos(shape, kind, lane, i):
    g, t = lane >> 2, lane % 4
    if kind == "tf32":
        return (t if shape == "m16n8k4" else t + 4 * i), g  # b0: t, b1: t + 4
    if kind == "16bit":
        if shape == "m16n8k8":
            return t * 2 + i, g
        return t * 2 + (i & 1) + (8 if i >= 2 else 0), g  # b0, b1: t*2 + i; b2, b3: + 8
    if shape == "m16n8k16":
        return t * 4 + i, g
    return t * 4 + (i & 3) + (16 if i >= 4 else 0), g  # m16n8k32


def c_pos(lane, i):
    g, t = lane >> 2, lane % 4
    return (g if i < 2 else g + 8), t * 2 + (i & 1)


# --- Packing elements into 32-bit registers (lowest element in the lowest bits) ------------------------------

def pack(elems, bits):
    """elems: [lanes, n] unsigned ints of `bits` bits -> [lanes, n * bits / 32] uint32."""
    per = 32 // bits
    e = np.asarray(elems, np.uint64).reshape(32, -1, per)
    shifts = (np.arange(per, dtype=np.uint64) * np.uint64(bits))
    return (e << shifts).sum(axis=2).astype(np.uint32)


def unpack(regs, bits):
    per = 32 // bits
    r = np.asarray(regs, np.uint64)[:, :, None]
    shifts = (np.arange(per, dtype=np.uint64) * np.uint64(bits))
    return ((r >> shifts) & np.uint64((1 << bits) - 1)).reshape(32, -1)


def mma_kernel(opcode, na, nb, nc, nd):
    def load(name, n, param):
        lines = [f"ld.param.u64 %rd0, [{param}];", f"mul.wide.u32 %rd1, %t, {4 * n};", "add.s64 %rd0, %rd0, %rd1;"]
        lines += [f"ld.global.b32 %{name}{j}, [%rd0+{4 * j}];" for j in range(n)]
        return "\n ".join(lines)

    def vec(name, n):
        return "{" + ", ".join(f"%{name}{j}" for j in range(n)) + "}"

    store = [f"st.global.b32 [%rd0+{4 * j}], %d{j};" for j in range(nd)]
    return HEADER + f""".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{{
 .reg .b32 %t, %a<16>, %b<8>, %c<4>, %d<4>;
 .reg .b64 %rd<4>;
 mov.u32 %t, %tid.x;
 {load("a", na, "pa")}
 {load("b", nb, "pb")}
 {load("c", nc, "pc")}
 {opcode} {vec("d", nd)}, {vec("a", na)}, {vec("b", nb)}, {vec("c", nc)};
 ld.param.u64 %rd0, [pd];
 mul.wide.u32 %rd1, %t, {4 * nd};
 add.s64 %rd0, %rd0, %rd1;
 {chr(10).join(store)}
 ret;
}}
"""


def e4m3_value(b):
    b = np.asarray(b, np.int64)
    s = np.where(b & 0x80, -1.0, 1.0)
    e, m = (b >> 3) & 15, b & 7
    return s * np.where(e == 0, m * 2.0 ** -9, (8 + m) * 2.0 ** (e - 10))


def e5m2_value(b):
    b = np.asarray(b, np.int64)
    s = np.where(b & 0x80, -1.0, 1.0)
    e, m = (b >> 2) & 31, b & 3
    return s * np.where(e == 0, m * 2.0 ** -16, (4 + m) * 2.0 ** (e - 17))


def bf16_bits(x):
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def random_operand(rng, kind, shape):
    """(bits of each element, their float64 values, element width)."""
    if kind == "f16":
        v = rng.standard_normal(shape).astype(np.float16)
        return v.view(np.uint16), v.astype(np.float64), 16
    if kind == "bf16":
        bits = bf16_bits(rng.standard_normal(shape))
        return bits, (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64), 16
    if kind == "tf32":
        bits = rng.standard_normal(shape).astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
        return bits, bits.view(np.float32).astype(np.float64), 32
    if kind in ("s8", "u8"):
        v = rng.integers(-128, 128, shape) if kind == "s8" else rng.integers(0, 256, shape)
        return (v & 0xFF).astype(np.uint8), v.astype(np.float64), 8
    if kind == "e4m3":
        bits = rng.integers(0, 256, shape).astype(np.uint8)
        bits[(bits & 0x7F) == 0x7F] = 0x38  # no NaN: 1.0
        return bits, e4m3_value(bits), 8
    if kind == "e5m2":
        bits = rng.integers(0, 256, shape).astype(np.uint8)
        bits[((bits >> 2) & 31) == 31] = 0x3C  # no inf/NaN: 1.0
        return bits, e5m2_value(bits), 8
    raise AssertionError(kind)


def run_mma(rng, shape, dtype, atype, btype, ctype, satfinite=False, c_values=None):
    k = int(shape.split("k")[1])
    kind_a = "tf32" if atype == "tf32" else "16bit" if atype in ("f16", "bf16") else "8bit"
    kind_b = "tf32" if btype == "tf32" else "16bit" if btype in ("f16", "bf16") else "8bit"
    a_bits, a_val, wa = random_operand(rng, atype, (16, k))
    b_bits, b_val, wb = random_operand(rng, btype, (k, 8))
    if ctype == "f32":
        c_val = rng.standard_normal((16, 8)).astype(np.float32)
        c_bits, wc = c_val.view(np.uint32), 32
    elif ctype == "f16":
        c_val = rng.standard_normal((16, 8)).astype(np.float16)
        c_bits, wc = c_val.view(np.uint16), 16
    else:
        c_val = (c_values if c_values is not None else rng.integers(-1000, 1000, (16, 8))).astype(np.int64)
        c_bits, wc = (c_val & 0xFFFFFFFF).astype(np.uint32), 32
    n_a, n_b = 16 * k // 32, k * 8 // 32
    a_frag = np.zeros((32, n_a), np.uint64)
    b_frag = np.zeros((32, n_b), np.uint64)
    c_frag = np.zeros((32, 4), np.uint64)
    for lane in range(32):
        for i in range(n_a):
            a_frag[lane, i] = a_bits[a_pos(shape, kind_a, lane, i)]
        for i in range(n_b):
            b_frag[lane, i] = b_bits[b_pos(shape, kind_b, lane, i)]
        for i in range(4):
            c_frag[lane, i] = c_bits[c_pos(lane, i)]
    ra, rb, rc = pack(a_frag, wa), pack(b_frag, wb), pack(c_frag, wc)
    nd = 2 if dtype == "f16" else 4
    out = np.zeros((32, nd), np.uint32)
    sat = ".satfinite" if satfinite else ""
    opcode = f"mma.sync.aligned.{shape}.row.col{sat}.{dtype}.{atype}.{btype}.{ctype}"
    counters = gpusim.launch(mma_kernel(opcode, ra.shape[1], rb.shape[1], rc.shape[1], nd), "k", 1, num_warps=1,
                             args=[ra, rb, rc, out])
    assert counters["inst_tensor_core"] == 1
    d_elems = unpack(out, 16 if dtype == "f16" else 32)
    d = np.zeros((16, 8), np.float64)
    for lane in range(32):
        for i in range(4):
            bits = int(d_elems[lane, i])
            if dtype == "f32":
                val = float(np.uint32(bits).view(np.float32))
            elif dtype == "f16":
                val = float(np.uint16(bits).view(np.float16))
            else:
                val = float(np.int64(bits) - (1 << 32) if bits >= 1 << 31 else bits)
            d[c_pos(lane, i)] = val
    return d, a_val @ b_val + c_val.astype(np.float64)


@pytest.mark.parametrize("shape,dtype,atype,ctype", [
    ("m16n8k16", "f32", "f16", "f32"),
    ("m16n8k8", "f32", "f16", "f32"),
    ("m16n8k16", "f32", "bf16", "f32"),
    ("m16n8k8", "f32", "bf16", "f32"),
    ("m16n8k8", "f32", "tf32", "f32"),
    ("m16n8k4", "f32", "tf32", "f32"),
    ("m16n8k32", "f32", "e4m3", "f32"),
    ("m16n8k32", "f32", "e5m2", "f32"),
])
def test_mma_float_fragments(rng, shape, dtype, atype, ctype):
    d, ref = run_mma(rng, shape, dtype, atype, atype, ctype)
    # Exact products summed in f32 (or better): one f32 rounding of each result, plus the ordering slack.
    np.testing.assert_allclose(d, ref, rtol=1e-6, atol=1e-6)


def test_mma_mixed_fp8(rng):
    d, ref = run_mma(rng, "m16n8k32", "f32", "e4m3", "e5m2", "f32")
    np.testing.assert_allclose(d, ref, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shape,ctype", [("m16n8k16", "f16"), ("m16n8k8", "f16"), ("m16n8k16", "f32")])
def test_mma_f16_accumulator(rng, shape, ctype):
    d, ref = run_mma(rng, shape, "f16", "f16", "f16", ctype)
    # The result is rounded to f16: within half an f16 ulp (2^-11 relative) of the exact value.
    np.testing.assert_allclose(d, ref, rtol=2 ** -10, atol=2 ** -14)


@pytest.mark.parametrize("shape,atype,btype", [("m16n8k16", "s8", "s8"), ("m16n8k32", "u8", "s8"),
                                               ("m16n8k32", "s8", "u8"), ("m16n8k16", "u8", "u8")])
def test_mma_integer_fragments(rng, shape, atype, btype):
    d, ref = run_mma(rng, shape, "s32", atype, btype, "s32")
    np.testing.assert_array_equal(d, ref)  # exact


def test_mma_integer_satfinite_and_wrap(rng):
    big = np.full((16, 8), 2 ** 31 - 5, np.int64)
    big[8:] = -(2 ** 31) + 5
    d, ref = run_mma(rng, "m16n8k32", "s32", "u8", "u8", "s32", satfinite=True, c_values=big)
    # u8 x u8 products are >= 0: the top half saturates at INT32_MAX (unless the row sums to < 5).
    np.testing.assert_array_equal(d, np.clip(ref, -(2 ** 31), 2 ** 31 - 1))
    assert (d[:8] == 2 ** 31 - 1).sum() >= 60
    d, ref = run_mma(rng, "m16n8k32", "s32", "u8", "u8", "s32", c_values=big)
    wrapped = (ref.astype(np.int64) + 2 ** 31) % 2 ** 32 - 2 ** 31  # without .satfinite the sum wraps
    np.testing.assert_array_equal(d, wrapped)


@pytest.mark.parametrize("opcode,vecs,message", [
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", (4, 4, 3, 4), "operand B must be a vector of 2"),
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", (4, 8, 2, 4), "operand A must be a vector of 4"),
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", (2, 4, 2, 4), "operand D must be a vector of 4"),
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", (4, 3, 2, 4), "operand A must be a vector of 4"),
    ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f16", (4, 4, 2, 2), "combination"),
    ("mma.sync.aligned.m16n8k16.col.row.f32.f16.f16.f32", (4, 4, 2, 4), "row.col"),
    ("mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32", (4, 4, 2, 4), "shape"),
    ("mma.sync.aligned.m16n8k16.row.col.satfinite.f32.f16.f16.f32", (4, 4, 2, 4), "satfinite"),
])
def test_mma_decode_errors(opcode, vecs, message):
    na, nb, nc, nd = vecs[1], vecs[2], vecs[3], vecs[0]
    ptx = mma_kernel(opcode, na if na <= 16 else 16, nb, nc, nd)
    with pytest.raises(gpusim.SimulatorError, match=message) as e:
        gpusim.launch(ptx, "k", 1, num_warps=1, args=[None] * 4)
    assert "PTX line" in str(e.value) and "mma.sync" in str(e.value)


def test_mma_needs_the_whole_warp():
    ptx = HEADER + """.visible .entry k()
{
 .reg .b32 %t, %a<4>, %b<2>, %c<4>;
 .reg .pred %p;
 mov.u32 %t, %tid.x;
 setp.lt.u32 %p, %t, 16;
 @%p mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%c0, %c1, %c2, %c3}, {%a0, %a1, %a2, %a3}, {%b0, %b1}, {%c0, %c1, %c2, %c3};
 ret;
}
"""
    with pytest.raises(gpusim.SimulatorError, match="all 32 lanes") as e:
        gpusim.launch(ptx, "k", 1, num_warps=1)
    assert "PTX line 10" in str(e.value)


# --- ldmatrix / stmatrix ---------------------------------------------------------------------------------------

def ldmatrix_kernel(op, num, space=".shared", base_offset=0):
    regs = "{" + ", ".join(f"%d{j}" for j in range(num)) + "}"
    return HEADER + f""".visible .entry k(.param .u64 init, .param .u64 rows, .param .u64 out)
{{
 .reg .b32 %t, %v, %s, %o, %d<4>, %i;
 .reg .b64 %rd<6>;
 .reg .pred %p;
 .shared .align 16 .b8 smem[2048];
 mov.u32 %t, %tid.x;
 // Each lane copies 64 bytes of init into shared memory.
 ld.param.u64 %rd0, [init];
 mul.wide.u32 %rd1, %t, 64;
 add.s64 %rd0, %rd0, %rd1;
 mov.u32 %s, smem;
 mad.lo.u32 %o, %t, 64, %s;
 mov.u32 %i, 0;
$copy:
 ld.global.b32 %v, [%rd0];
 st.shared.b32 [%o], %v;
 add.s64 %rd0, %rd0, 4;
 add.u32 %o, %o, 4;
 add.u32 %i, %i, 1;
 setp.lt.u32 %p, %i, 16;
 @%p bra $copy;
 bar.sync 0;
 // This lane's row address: smem + rows[lane] bytes.
 ld.param.u64 %rd2, [rows];
 mul.wide.u32 %rd3, %t, 4;
 add.s64 %rd2, %rd2, %rd3;
 ld.global.b32 %o, [%rd2];
 add.u32 %o, %o, %s;
 {op} {regs}, [%o+{base_offset}];
 ld.param.u64 %rd4, [out];
 mul.wide.u32 %rd5, %t, {4 * num};
 add.s64 %rd4, %rd4, %rd5;
 {chr(10).join(f"st.global.b32 [%rd4+{4 * j}], %d{j};" for j in range(num))}
 ret;
}}
"""


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_layout(rng, num, trans):
    smem = rng.integers(0, 2 ** 16, 1024, dtype=np.uint16)  # 2048 bytes of 16-bit elements
    rows = (rng.permutation(128)[:32] * 16).astype(np.uint32)  # 32 distinct 16-byte rows, scattered
    out = np.zeros((32, num), np.uint32)
    op = f"ldmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16"
    c = gpusim.launch(ldmatrix_kernel(op, num), "k", 1, num_warps=1, args=[smem, rows, out])
    # ISA: threads 8m..8m+7 give the rows of matrix m; each row is 8 consecutive b16 elements.
    mats = np.stack([np.stack([smem[rows[8 * m + r] // 2:rows[8 * m + r] // 2 + 8] for r in range(8)])
                     for m in range(num)])
    for lane in range(32):
        for m in range(num):
            # Lane l holds row l/4, elements 2(l%4), 2(l%4)+1 (transposed: column l/4 of rows 2(l%4), +1).
            r, c0 = lane // 4, 2 * (lane % 4)
            lo, hi = (mats[m][c0, r], mats[m][c0 + 1, r]) if trans else (mats[m][r, c0], mats[m][r, c0 + 1])
            assert out[lane, m] == int(lo) | int(hi) << 16, (lane, m)
    assert c["shared_load_requests"] >= 1


@pytest.mark.parametrize("stride,wavefronts", [(16, 1), (128, 8), (144, 1), (64, 4)])
def test_ldmatrix_bank_conflicts(rng, stride, wavefronts):
    # One 8x8 matrix: 8 rows of 16 bytes (4 banks each). Rows 16 bytes apart cover all 32 banks once; 128 bytes
    # apart they all start at bank 0 (8-way conflict); 144 = 128 + 16 shifts each row by 4 banks (no conflict);
    # 64 apart, rows alternate between banks 0-3 and 16-19 (4-way).
    smem = rng.integers(0, 2 ** 16, 1024, dtype=np.uint16)
    rows = (np.arange(32) % 8 * stride).astype(np.uint32)
    out = np.zeros((32, 1), np.uint32)
    base = gpusim.launch(ldmatrix_kernel("mov.u32", 1).replace("mov.u32 {%d0}, [%o+0];", "mov.u32 %d0, 0;"),
                         "k", 1, num_warps=1, args=[smem, rows, out])
    c = gpusim.launch(ldmatrix_kernel("ldmatrix.sync.aligned.m8n8.x1.shared.b16", 1), "k", 1, num_warps=1,
                      args=[smem, rows, out])
    assert c["shared_load_requests"] - base["shared_load_requests"] == 1
    assert c["shared_load_wavefronts"] - base["shared_load_wavefronts"] == wavefronts


def test_ldmatrix_errors(rng):
    smem = rng.integers(0, 2 ** 16, 1024, dtype=np.uint16)
    rows = (np.arange(32) * 16).astype(np.uint32)
    out = np.zeros((32, 4), np.uint32)
    op = "ldmatrix.sync.aligned.m8n8.x4.shared.b16"
    with pytest.raises(gpusim.SimulatorError, match="misaligned row address 0x8 .*16-byte aligned") as e:
        gpusim.launch(ldmatrix_kernel(op, 4, base_offset=8), "k", 1, num_warps=1, args=[smem, rows, out])
    assert "ldmatrix.sync" in str(e.value) and "lane 0" in str(e.value)
    far = rows.copy()
    far[13] = 2048  # one past the end
    with pytest.raises(gpusim.SimulatorError, match="out-of-bounds row .* 2048 bytes of shared memory") as e:
        gpusim.launch(ldmatrix_kernel(op, 4), "k", 1, num_warps=1, args=[smem, far, out])
    assert "lane 13" in str(e.value)
    with pytest.raises(gpusim.SimulatorError, match="vector of 4 registers"):
        gpusim.launch(ldmatrix_kernel(op, 2), "k", 1, num_warps=1, args=[smem, rows, out])


@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_inverts_ldmatrix(rng, trans):
    vals = rng.integers(0, 2 ** 32, (32, 4), dtype=np.uint64).astype(np.uint32)
    ptx = HEADER + f""".visible .entry k(.param .u64 vals, .param .u64 out)
{{
 .reg .b32 %t, %s, %o, %r<4>, %v;
 .reg .b64 %rd<4>;
 .shared .align 16 .b8 smem[512];
 mov.u32 %t, %tid.x;
 ld.param.u64 %rd0, [vals];
 mul.wide.u32 %rd1, %t, 16;
 add.s64 %rd0, %rd0, %rd1;
 ld.global.v4.b32 {{%r0, %r1, %r2, %r3}}, [%rd0];
 mov.u32 %s, smem;
 // Lane l gives row l: matrix l/8, row l%8, stored 16 bytes apart.
 mad.lo.u32 %o, %t, 16, %s;
 stmatrix.sync.aligned.m8n8.x4{'.trans' if trans else ''}.shared.b16 [%o], {{%r0, %r1, %r2, %r3}};
 bar.sync 0;
 ld.shared.v4.b32 {{%r0, %r1, %r2, %r3}}, [%o];
 ld.param.u64 %rd2, [out];
 add.s64 %rd2, %rd2, %rd1;
 st.global.v4.b32 [%rd2], {{%r0, %r1, %r2, %r3}};
 ret;
}}
"""
    out = np.zeros(256, np.uint16)
    gpusim.launch(ptx, "k", 1, num_warps=1, args=[vals, out])
    mats = out.reshape(4, 8, 8)  # matrix m, row r, element e (row r of matrix m at lane 8m + r)
    for lane in range(32):
        for m in range(4):
            r, c0 = lane // 4, 2 * (lane % 4)
            lo, hi = (mats[m][c0, r], mats[m][c0 + 1, r]) if trans else (mats[m][r, c0], mats[m][r, c0 + 1])
            assert vals[lane, m] == int(lo) | int(hi) << 16


# --- cp.async -----------------------------------------------------------------------------------------------

def cp_async_kernel(body, size=16):
    return HEADER + f""".visible .entry k(.param .u64 src, .param .u64 out, .param .u32 n)
{{
 .reg .b32 %t, %s, %o, %n, %v<8>;
 .reg .b64 %rd<6>, %pol;
 .reg .pred %p;
 .shared .align 16 .b8 smem[1024];
 mov.u32 %t, %tid.x;
 ld.param.u32 %n, [n];
 mov.u32 %s, smem;
 mad.lo.u32 %o, %t, 16, %s;
 mov.u32 %v0, 0x11111111;
 st.shared.v4.b32 [%o], {{%v0, %v0, %v0, %v0}};
 ld.param.u64 %rd0, [src];
 mul.wide.u32 %rd1, %t, 16;
 add.s64 %rd0, %rd0, %rd1;
 ld.param.u64 %rd2, [out];
 mul.wide.u32 %rd3, %t, 48;
 add.s64 %rd2, %rd2, %rd3;
 {body}
 ret;
}}
"""


def test_cp_async_lands_only_at_the_wait(rng):
    src = rng.integers(0, 2 ** 32, (32, 4), dtype=np.uint64).astype(np.uint32)
    out = np.zeros((32, 3, 4), np.uint32)
    body = """
 cp.async.cg.shared.global [%o], [%rd0], 16;
 ld.shared.v4.b32 {%v0, %v1, %v2, %v3}, [%o];
 st.global.v4.b32 [%rd2], {%v0, %v1, %v2, %v3};
 cp.async.commit_group;
 ld.shared.v4.b32 {%v0, %v1, %v2, %v3}, [%o];
 st.global.v4.b32 [%rd2+16], {%v0, %v1, %v2, %v3};
 cp.async.wait_group 0;
 ld.shared.v4.b32 {%v0, %v1, %v2, %v3}, [%o];
 st.global.v4.b32 [%rd2+32], {%v0, %v1, %v2, %v3};
"""
    c = gpusim.launch(cp_async_kernel(body), "k", 1, num_warps=1, args=[src, out, 16])
    assert (out[:, 0] == 0x11111111).all()  # before the commit: old data
    assert (out[:, 1] == 0x11111111).all()  # committed, not waited for: still old data
    np.testing.assert_array_equal(out[:, 2], src)  # after wait_group 0
    assert c["async_copy_bytes"] == 32 * 16
    assert c["inst_async_copy"] == 3
    assert c["global_load_sectors"] == 16  # 512 contiguous bytes


def test_cp_async_groups_retire_oldest_first(rng):
    src = rng.integers(0, 2 ** 32, (64, 4), dtype=np.uint64).astype(np.uint32)
    out = np.zeros((32, 3, 4), np.uint32)
    # Group 1 copies src rows [0, 32) to smem rows [0, 32); group 2 src rows [32, 64) to smem rows [32, 64).
    body = """
 cp.async.ca.shared.global [%o], [%rd0], 16;
 cp.async.commit_group;
 cp.async.ca.shared.global.L2::128B [%o+512], [%rd0+512], 16;
 cp.async.commit_group;
 cp.async.wait_group 1;
 ld.shared.v4.b32 {%v0, %v1, %v2, %v3}, [%o];
 st.global.v4.b32 [%rd2], {%v0, %v1, %v2, %v3};
 ld.shared.v4.b32 {%v0, %v1, %v2, %v3}, [%o+512];
 st.global.v4.b32 [%rd2+16], {%v0, %v1, %v2, %v3};
 cp.async.wait_all;
 ld.shared.v4.b32 {%v0, %v1, %v2, %v3}, [%o+512];
 st.global.v4.b32 [%rd2+32], {%v0, %v1, %v2, %v3};
"""
    gpusim.launch(cp_async_kernel(body), "k", 1, num_warps=1, args=[src, out, 16])
    np.testing.assert_array_equal(out[:, 0], src[:32])
    assert (out[:, 1] == 0).all()  # smem rows [32, 64) were never written before group 2 landed
    np.testing.assert_array_equal(out[:, 2], src[32:])


@pytest.mark.parametrize("src_size", [0, 5, 8, 16])
def test_cp_async_src_size_zero_fills(rng, src_size):
    src = rng.integers(1, 256, (32, 16), dtype=np.uint64).astype(np.uint8)
    out = np.zeros((32, 48), np.uint8)
    body = """
 mov.b64 %pol, 0;
 cp.async.cg.shared.global.L2::cache_hint [%o], [%rd0], 16, %n, %pol;
 cp.async.wait_all;
 ld.shared.v4.b32 {%v0, %v1, %v2, %v3}, [%o];
 st.global.v4.b32 [%rd2], {%v0, %v1, %v2, %v3};
"""
    gpusim.launch(cp_async_kernel(body), "k", 1, num_warps=1, args=[src, out, src_size])
    np.testing.assert_array_equal(out[:, :src_size], src[:, :src_size])
    assert (out[:, src_size:16] == 0).all()


def test_cp_async_ignore_src_and_small_sizes(rng):
    src = rng.integers(1, 2 ** 32, (32, 4), dtype=np.uint64).astype(np.uint32)
    out = np.zeros((32, 12), np.uint32)
    body = """
 and.b32 %v7, %t, 1;
 setp.eq.u32 %p, %v7, 1;
 cp.async.ca.shared.global [%o], [%rd0], 4, %p;
 cp.async.ca.shared.global [%o+8], [%rd0+8], 8;
 cp.async.wait_all;
 ld.shared.v4.b32 {%v0, %v1, %v2, %v3}, [%o];
 st.global.v4.b32 [%rd2], {%v0, %v1, %v2, %v3};
"""
    gpusim.launch(cp_async_kernel(body), "k", 1, num_warps=1, args=[src, out, 16])
    odd = np.arange(32) % 2 == 1
    np.testing.assert_array_equal(out[~odd, 0], src[~odd, 0])
    assert (out[odd, 0] == 0).all()  # ignore-src true: zero-filled
    assert (out[:, 1] == 0x11111111).all()  # not copied
    np.testing.assert_array_equal(out[:, 2:4], src[:, 2:4])


@pytest.mark.parametrize("body,message", [
    ("cp.async.cg.shared.global [%o], [%rd0], 8;", "cp.async.cg copies 16 bytes"),
    ("cp.async.ca.shared.global [%o], [%rd0], 12;", "4, 8 or 16"),
    ("cp.async.ca.shared.global [%o], [%rd0], 16, %n;\n cp.async.wait_all;", "src-size 17 is larger"),
    ("cp.async.ca.shared.global [%o+4], [%rd0], 16;", "misaligned destination"),
    ("cp.async.ca.shared.global [%o], [%rd0+4096], 16;", "out-of-bounds source"),
    ("cp.async.ca.global.shared [%o], [%rd0], 16;", "copies .shared"),
])
def test_cp_async_errors(rng, body, message):
    src = np.zeros((32, 4), np.uint32)
    out = np.zeros((32, 12), np.uint32)
    with pytest.raises(gpusim.SimulatorError, match=message) as e:
        gpusim.launch(cp_async_kernel(body), "k", 1, num_warps=1, args=[src, out, 17])
    assert "cp.async" in str(e.value) and "PTX line" in str(e.value)
