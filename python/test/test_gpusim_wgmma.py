"""wgmma.mma_async in the PTX simulator, from hand-written PTX checked against numpy.

The expected register contents come from the PTX ISA's wgmma tables, written out here, never from the
simulator: with g = laneid / 4 and t = laneid % 4, accumulator element i of a thread of warp w (of the warpgroup)
is D[16w + g + 8 * ((i / 2) % 2)][8 * (i / 4) + 2t + i % 2], one f32/s32 element per register, two f16 elements
per register (element 2r in the low half); register r of an A fragment holds A[16w + g + 8 * (r % 2)]
[(r / 2) * K / 2 + t * e + j] (j < e = 32 / element bits). Shared-memory operands are laid out in the ISA's
canonical layouts (K-major and MN-major, no swizzle and 32/64/128-byte swizzles: 16-byte chunk bits [4, 4+b)
of the address XORed with bits [7, 7+b)), addressed through matrix descriptors (start, leading and stride byte
offsets >> 4 in bits 0-13, 16-29, 32-45; swizzle in bits 62-63: 1 = 128B, 2 = 64B, 3 = 32B).
"""
import numpy as np
import pytest

from tessel import gpusim

SWIZZLE_CODE = {0: 0, 128: 1, 64: 2, 32: 3}


def desc(start, lbo, sbo, swizzle):
    return (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | SWIZZLE_CODE[swizzle] << 62


def swizzled(addr, swizzle):
    if not swizzle:
        return addr
    bits = {32: 1, 64: 2, 128: 3}[swizzle]
    return addr ^ (((addr >> 7) & ((1 << bits) - 1)) << 4)


def place(image, elems, k_major, swizzle, lbo, sbo, start=0):
    """Writes `elems` (rows = M or N, columns = K; an unsigned array of the element bits) into the byte array
    `image` in the ISA's canonical layout: core matrices of 8 rows x 16 bytes (K-major: rows are M/N, 16 bytes
    along K; MN-major: rows are K, 16 bytes along M/N), or swizzle atoms of 8 rows x swizzle bytes."""
    size = elems.dtype.itemsize
    per16 = 16 // size
    rows, kdim = elems.shape
    for r in range(rows):
        for k in range(kdim):
            if k_major and not swizzle:      # core matrix (r // 8, k // per16): row r % 8, bytes along k
                off = (r // 8) * sbo + (k // per16) * lbo + (r % 8) * 16 + (k % per16) * size
            elif k_major:                    # atom rows are `swizzle` bytes of K; atoms of 8 rows at sbo
                off = (r // 8) * sbo + (r % 8) * swizzle + k * size
            elif not swizzle:                # core matrix (r // per16, k // 8): row k % 8, bytes along r
                off = (r // per16) * sbo + (k // 8) * lbo + (k % 8) * 16 + (r % per16) * size
            else:                            # atom rows are `swizzle` bytes of M/N; atoms along M/N at lbo
                per = swizzle // size
                off = (r // per) * lbo + (k // 8) * sbo + (k % 8) * swizzle + (r % per) * size
            a = swizzled(start + off, swizzle)
            image[a:a + size] = np.frombuffer(elems[r, k].tobytes(), np.uint8)


def d_index(n, per_reg=1):
    """(thread, register, half) -> (row, col) of D per the ISA's accumulator table."""
    rows = np.zeros((128, n // 2), np.int64)
    cols = np.zeros((128, n // 2), np.int64)
    for tid in range(128):
        w, lane = divmod(tid, 32)
        g, t = divmod(lane, 4)
        for i in range(n // 2):
            rows[tid, i] = 16 * w + g + 8 * ((i // 2) % 2)
            cols[tid, i] = 8 * (i // 4) + 2 * t + i % 2
    return rows, cols


def kernel(shape, types, nregs, image_bytes, *, a_regs=False, operands="1, 1, 0, 0", d_type="f32",
           store_before_wait=False, extra_before="", scale_pred=True):
    """A 128-thread kernel: copies `image` into shared memory, loads the accumulator registers from `init`
    (thread t, register i at t * nregs + i), runs one wgmma on descriptors da/db (their start fields relative to
    the shared array), waits and stores the registers to `out` the same way."""
    d_regs = ",".join(f"%d{i}" for i in range(nregs))
    lines = [".version 8.0", ".target sm_90a", ".address_size 64",
             ".visible .entry wg(.param .u64 img, .param .u64 init, .param .u64 out, .param .u64 early,",
             "  .param .u64 da, .param .u64 db, .param .u64 afrag, .param .u32 scale)", "{",
             f"  .reg .b32 %d<{nregs}>;", "  .reg .b32 %r<32>;", "  .reg .b32 %a<4>;", "  .reg .b64 %rd<32>;",
             "  .reg .pred %p<4>;", f"  .shared .align 1024 .b8 smem[{image_bytes}];",
             "  ld.param.u64 %rd1, [img];", "  ld.param.u64 %rd2, [init];", "  ld.param.u64 %rd3, [out];",
             "  ld.param.u64 %rd4, [da];", "  ld.param.u64 %rd5, [db];", "  ld.param.u64 %rd14, [early];",
             "  ld.param.u32 %r9, [scale];", "  setp.ne.b32 %p1, %r9, 0;",
             "  mov.u32 %r1, %tid.x;", "  mul.wide.u32 %rd6, %r1, 16;", "  add.s64 %rd7, %rd1, %rd6;",
             "  mov.u32 %r2, smem;", "  shl.b32 %r3, %r1, 4;", "  add.u32 %r3, %r3, %r2;"]
    for off in range(0, image_bytes, 2048):
        lines += [f"  ld.global.v4.b32 {{%r4, %r5, %r6, %r7}}, [%rd7+{off}];",
                  f"  st.shared.v4.b32 [%r3+{off}], {{%r4, %r5, %r6, %r7}};"]
    lines += ["  bar.sync 0;", f"  mul.wide.u32 %rd8, %r1, {4 * nregs};", "  add.s64 %rd9, %rd2, %rd8;",
              "  add.s64 %rd10, %rd3, %rd8;", "  add.s64 %rd15, %rd14, %rd8;"]
    lines += [f"  ld.global.b32 %d{i}, [%rd9+{4 * i}];" for i in range(nregs)]
    if a_regs:
        lines += ["  ld.param.u64 %rd16, [afrag];", "  mul.wide.u32 %rd17, %r1, 16;", "  add.s64 %rd16, %rd16, %rd17;",
                  "  ld.global.v4.b32 {%a0, %a1, %a2, %a3}, [%rd16];"]
    lines += ["  cvt.u64.u32 %rd11, %r2;", "  shr.u64 %rd11, %rd11, 4;", "  add.s64 %rd12, %rd4, %rd11;",
              "  add.s64 %rd13, %rd5, %rd11;", extra_before, "  wgmma.fence.sync.aligned;"]
    a = "{%a0, %a1, %a2, %a3}" if a_regs else "%rd12"
    scale = "%p1" if scale_pred else "1"
    sep = ", " if operands else ""
    lines += [f"  wgmma.mma_async.sync.aligned.{shape}.{d_type}.{types} {{{d_regs}}}, {a}, %rd13, {scale}"
              f"{sep}{operands};", "  wgmma.commit_group.sync.aligned;"]
    if store_before_wait:
        lines += [f"  st.global.b32 [%rd15+{4 * i}], %d{i};" for i in range(nregs)]
    lines += ["  wgmma.wait_group.sync.aligned 0;"]
    lines += [f"  st.global.b32 [%rd10+{4 * i}], %d{i};" for i in range(nregs)]
    lines += ["  ret;", "}"]
    return "\n".join(lines)


def run(ptx, image, nregs, da, db, init=None, afrag=None, scale=1):
    init = np.zeros((128, nregs), np.uint32) if init is None else init
    out = np.zeros((128, nregs), np.uint32)
    early = np.zeros((128, nregs), np.uint32)
    afrag = np.zeros((128, 4), np.uint32) if afrag is None else afrag
    counters = gpusim.launch(ptx, "wg", 1, num_warps=4, args=[image, init, out, early, da, db, afrag, scale])
    return out, early, counters


def f16_bits(x):
    return np.asarray(x, np.float16).view(np.uint16)


def random_f16(rng, shape):
    return (rng.integers(-8, 9, shape) / 4).astype(np.float16)  # exact products and sums


def gather_d(out_f32, n):
    rows, cols = d_index(n)
    d = np.full((64, n), np.nan, np.float64)
    d[rows, cols] = out_f32
    return d


@pytest.mark.parametrize("n", [8, 16, 64])
def test_accumulator_fragment_layout(rng, n):
    """Each thread's registers hold the D elements of the ISA's table (f32 accumulators, K-major A and B)."""
    a = random_f16(rng, (64, 16))
    b = random_f16(rng, (16, n))
    image = np.zeros(8192, np.uint8)
    place(image, f16_bits(a), True, 0, lbo=128, sbo=256)               # A: 64 x 16 at 0 (2 KiB)
    place(image, f16_bits(b.T.copy()), True, 0, lbo=128, sbo=256, start=4096)  # B as N x K at 4096
    init = (rng.integers(-4, 5, (128, n // 2)) / 2).astype(np.float32)
    ptx = kernel(f"m64n{n}k16", "f16.f16", n // 2, len(image))
    out, _, counters = run(ptx, image, n // 2, desc(0, 128, 256, 0), desc(4096, 128, 256, 0), init.view(np.uint32))
    rows, cols = d_index(n)
    expected = (a.astype(np.float64) @ b.astype(np.float64))[rows, cols] + init
    np.testing.assert_array_equal(out.view(np.float32), expected.astype(np.float32))
    assert counters["inst_tensor_core"] == 4 * 4  # fence, mma, commit, wait per warp


@pytest.mark.parametrize("swizzle", [0, 32, 64, 128])
@pytest.mark.parametrize("a_kmajor,b_kmajor", [(True, True), (False, False), (True, False), (False, True)])
def test_descriptor_layouts_and_swizzles(rng, swizzle, a_kmajor, b_kmajor):
    """K-major and MN-major operands (imm-trans-a/b) in every swizzle mode, with padded strides."""
    n = 32
    a = random_f16(rng, (64, 16))
    b = random_f16(rng, (16, n))
    image = np.zeros(16384, np.uint8)

    def layout(kmajor, rows):
        # (lbo, sbo) for a rows x 16 fp16 operand, leaving gaps where a stride is free.
        if kmajor and not swizzle:
            return 128, 384                       # K chunk at +128, groups of 8 rows 384 apart
        if kmajor:
            return 16, 8 * swizzle                # lbo unused; atoms of 8 rows
        if not swizzle:
            return 1024 + 256 * (rows // 64), 128  # 8 K-rows per core matrix; M/N chunks 128 apart
        return 2 * 8 * swizzle, 8 * swizzle       # atoms along M/N after the two 8-row K groups

    la, sa = layout(a_kmajor, 64)
    lb, sb = layout(b_kmajor, n)
    place(image, f16_bits(a), a_kmajor, swizzle, la, sa, start=0)
    place(image, f16_bits(b.T.copy()), b_kmajor, swizzle, lb, sb, start=8192)
    ptx = kernel(f"m64n{n}k16", "f16.f16", n // 2, len(image),
                 operands=f"1, 1, {int(not a_kmajor)}, {int(not b_kmajor)}")
    out, _, _ = run(ptx, image, n // 2, desc(0, la, sa, swizzle), desc(8192, lb, sb, swizzle))
    np.testing.assert_array_equal(gather_d(out.view(np.float32), n), a.astype(np.float64) @ b.astype(np.float64))


@pytest.mark.parametrize("kslice", [0, 1, 2, 3])
def test_k_slices_inside_a_128b_swizzle_row(rng, kslice):
    """Triton's pattern: a 64-wide K tile in 128B-swizzled rows, one k16 slice per wgmma by moving the start
    address 32 bytes along the row."""
    a = random_f16(rng, (64, 64))
    b = random_f16(rng, (64, 16))
    image = np.zeros(16384, np.uint8)
    place(image, f16_bits(a), True, 128, 16, 1024)
    place(image, f16_bits(b.T.copy()), True, 128, 16, 1024, start=8192)
    ptx = kernel("m64n16k16", "f16.f16", 8, len(image))
    out, _, _ = run(ptx, image, 8, desc(32 * kslice, 16, 1024, 128), desc(8192 + 32 * kslice, 16, 1024, 128))
    ks = slice(16 * kslice, 16 * kslice + 16)
    np.testing.assert_array_equal(gather_d(out.view(np.float32), 16),
                                  a[:, ks].astype(np.float64) @ b[ks].astype(np.float64))


def a_fragment(a_bits, k):
    """The A register fragment of every thread (ISA table), as 4 x 32-bit words per thread."""
    size = a_bits.dtype.itemsize
    e = 4 // size
    frag = np.zeros((128, 4), np.uint32)
    for tid in range(128):
        w, lane = divmod(tid, 32)
        g, t = divmod(lane, 4)
        for r in range(4):
            row = 16 * w + g + 8 * (r % 2)
            col = (r // 2) * (k // 2) + t * e
            word = 0
            for j in range(e):
                word |= int(a_bits[row, col + j]) << (8 * size * j)
            frag[tid, r] = word
    return frag


def test_register_a_and_n_major_b(rng):
    n = 24
    a = random_f16(rng, (64, 16))
    b = random_f16(rng, (16, n))
    image = np.zeros(4096, np.uint8)
    place(image, f16_bits(b.T.copy()), False, 64, 2048, 512)
    ptx = kernel(f"m64n{n}k16", "f16.f16", n // 2, len(image), a_regs=True, operands="1, 1, 1")
    out, _, _ = run(ptx, image, n // 2, 0, desc(0, 2048, 512, 64), afrag=a_fragment(f16_bits(a), 16))
    np.testing.assert_array_equal(gather_d(out.view(np.float32), n), a.astype(np.float64) @ b.astype(np.float64))


def test_f16_accumulators_scale_d_and_negated_a(rng):
    """.f16 accumulators (two per register, element 2r low); scale-d false drops D; imm-scale-a -1 negates A."""
    n = 16
    a = random_f16(rng, (64, 16))
    b = random_f16(rng, (16, n))
    image = np.zeros(8192, np.uint8)
    place(image, f16_bits(a), True, 0, 128, 256)
    place(image, f16_bits(b.T.copy()), True, 0, 128, 256, start=4096)
    init = random_f16(rng, (128, n // 2))
    ptx = kernel(f"m64n{n}k16", "f16.f16", n // 4, len(image), d_type="f16", operands="-1, 1, 0, 0")
    da, db = desc(0, 128, 256, 0), desc(4096, 128, 256, 0)
    rows, cols = d_index(n)
    prod = -(a.astype(np.float64) @ b.astype(np.float64))[rows, cols]
    for scale in (1, 0):
        out, _, _ = run(ptx, image, n // 4, da, db, init=init.view(np.uint32), scale=scale)
        expected = (prod + scale * init.astype(np.float64)).astype(np.float16)
        np.testing.assert_array_equal(out.view(np.float16), expected)


def test_accumulators_change_only_at_wait_group(rng):
    """The MMA is performed when wgmma.wait_group retires its group: stores before the wait see the old D."""
    a = random_f16(rng, (64, 16))
    b = random_f16(rng, (16, 8))
    image = np.zeros(8192, np.uint8)
    place(image, f16_bits(a), True, 0, 128, 256)
    place(image, f16_bits(b.T.copy()), True, 0, 128, 256, start=4096)
    init = np.full((128, 4), 7.0, np.float32)
    ptx = kernel("m64n8k16", "f16.f16", 4, len(image), store_before_wait=True)
    out, early, _ = run(ptx, image, 4, desc(0, 128, 256, 0), desc(4096, 128, 256, 0), init=init.view(np.uint32))
    np.testing.assert_array_equal(early.view(np.float32), init)
    np.testing.assert_array_equal(gather_d(out.view(np.float32), 8), a.astype(np.float64) @ b.astype(np.float64) + 7)


def bf16_bits(x):
    return (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)  # exact for these values


def e4m3_value(bits):
    s = np.where(bits & 0x80, -1.0, 1.0)
    e = (bits >> 3) & 15
    m = bits & 7
    return s * np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * 2.0 ** (e.astype(np.int64) - 7))


def e5m2_value(bits):
    s = np.where(bits & 0x80, -1.0, 1.0)
    e = (bits >> 2) & 31
    m = bits & 3
    return s * np.where(e == 0, m / 4 * 2.0 ** -14, (1 + m / 4) * 2.0 ** (e.astype(np.int64) - 15))


@pytest.mark.parametrize("kind", ["bf16", "tf32", "e4m3.e5m2", "s8", "u8.s8"])
def test_other_input_types(rng, kind):
    n = 16
    if kind == "bf16":
        k, d_type, ops = 16, "f32", "1, 1, 0, 0"
        av, bv = random_f16(rng, (64, k)).astype(np.float32), random_f16(rng, (k, n)).astype(np.float32)
        abits, bbits = bf16_bits(av), bf16_bits(bv)
        types = "bf16.bf16"
    elif kind == "tf32":
        k, d_type, ops = 8, "f32", "1, 1"
        av = rng.standard_normal((64, k)).astype(np.float32)
        bv = rng.standard_normal((k, n)).astype(np.float32)
        abits, bbits = av.view(np.uint32), bv.view(np.uint32)
        # tf32 keeps 10 mantissa bits: the hardware ignores the low 13.
        av = (abits & 0xFFFFE000).view(np.float32)
        bv = (bbits & 0xFFFFE000).view(np.float32)
        types = "tf32.tf32"
    elif kind == "e4m3.e5m2":
        k, d_type, ops = 32, "f32", "1, 1"
        abits = rng.integers(0, 256, (64, k)).astype(np.uint8)
        abits[(abits & 0x7F) == 0x7F] = 0x3F  # no NaN
        bbits = rng.integers(0, 256, (k, n)).astype(np.uint8)
        bbits[(bbits & 0x7C) == 0x7C] = 0x3C  # no Inf/NaN
        av, bv = e4m3_value(abits), e5m2_value(bbits)
        types = "e4m3.e5m2"
    else:
        k, d_type, ops = 32, "s32", ""
        types = "s8.s8" if kind == "s8" else "u8.s8"
        lo = -128 if kind == "s8" else 0
        av = rng.integers(lo, lo + 256, (64, k))
        bv = rng.integers(-128, 128, (k, n))
        abits = av.astype(np.int8 if kind == "s8" else np.uint8).view(np.uint8)
        bbits = bv.astype(np.int8).view(np.uint8)
    span = 32  # K bytes per row: 32 for every type here
    assert k * abits.dtype.itemsize == span
    image = np.zeros(8192, np.uint8)
    place(image, abits, True, 32, 16, 256)
    place(image, bbits.T.copy(), True, 32, 16, 256, start=4096)
    ptx = kernel(f"m64n{n}k{k}", types, n // 2, len(image), d_type=d_type, operands=ops)
    out, _, _ = run(ptx, image, n // 2, desc(0, 16, 256, 32), desc(4096, 16, 256, 32))
    ref = np.asarray(av, np.float64) @ np.asarray(bv, np.float64)
    if d_type == "s32":
        np.testing.assert_array_equal(gather_d(out.view(np.int32).astype(np.float64), n), ref)
    else:
        np.testing.assert_allclose(gather_d(out.view(np.float32), n), ref, rtol=1e-6, atol=1e-6)


def test_register_a_tf32_fragment(rng):
    n, k = 8, 8
    av = (rng.integers(-8, 9, (64, k)) / 8).astype(np.float32)
    bv = (rng.integers(-8, 9, (k, n)) / 8).astype(np.float32)
    image = np.zeros(2048, np.uint8)
    place(image, bv.T.copy().view(np.uint32), True, 32, 16, 256)
    ptx = kernel(f"m64n{n}k{k}", "tf32.tf32", n // 2, len(image), a_regs=True, operands="1, 1")
    out, _, _ = run(ptx, image, n // 2, 0, desc(0, 16, 256, 32), afrag=a_fragment(av.view(np.uint32), k))
    np.testing.assert_array_equal(gather_d(out.view(np.float32), n), av.astype(np.float64) @ bv.astype(np.float64))


# ---------------------------------------------------------------------------------------------- errors

def test_descriptor_outside_shared_memory(rng):
    image = np.zeros(4096, np.uint8)
    ptx = kernel("m64n8k16", "f16.f16", 4, len(image))
    with pytest.raises(gpusim.SimulatorError, match=r"matrix B .* outside the CTA's 4096 bytes of shared memory"
                                                    r"(.|\n)*wgmma.mma_async of PTX line"):
        run(ptx, image, 4, desc(0, 128, 256, 0), desc(4000, 128, 256, 0))


def test_descriptor_with_base_offset_is_rejected():
    image = np.zeros(4096, np.uint8)
    ptx = kernel("m64n8k16", "f16.f16", 4, len(image))
    with pytest.raises(gpusim.SimulatorError, match="non-zero matrix base offset"):
        run(ptx, image, 4, desc(0, 128, 256, 0) | 1 << 49, desc(2048, 128, 256, 0))


def test_wgmma_in_divergent_code():
    image = np.zeros(4096, np.uint8)
    ptx = kernel("m64n8k16", "f16.f16", 4, len(image), extra_before="  setp.lt.u32 %p2, %r1, 16;\n  @%p2 bra SKIP;")
    ptx = ptx.replace("  wgmma.fence.sync.aligned;", "  wgmma.fence.sync.aligned;\nSKIP:", 1)
    with pytest.raises(gpusim.SimulatorError, match=r"must be executed by all 32 threads of the warp"):
        run(ptx, image, 4, desc(0, 128, 256, 0), desc(2048, 128, 256, 0))


@pytest.mark.parametrize("shape,types,nregs,ops,message", [
    ("m64n12k16", "f16.f16", 6, "1, 1, 0, 0", "N must be a multiple of 8"),
    ("m64n8k8", "f16.f16", 4, "1, 1, 0, 0", "is k16"),
    ("m64n8k16", "f16.f16", 8, "1, 1, 0, 0", "vector of 4 registers"),
    ("m64n8k16", "f16.f16", 4, "1, 1, 0", "expected 8 operands"),
    ("m64n8k16", "f16.f16", 4, "2, 1, 0, 0", "imm-scale-a must be 1 or -1"),
    ("m64n8k16", "bf16.f16", 4, "1, 1, 0, 0", "not a valid type combination"),
])
def test_wgmma_decode_errors(shape, types, nregs, ops, message):
    ptx = kernel(shape, types, nregs, 2048, operands=ops)
    with pytest.raises(gpusim.SimulatorError, match=message):
        run(ptx, np.zeros(2048, np.uint8), nregs, 0, 0)


def test_unknown_sm100_instruction_is_named():
    ptx = kernel("m64n8k16", "f16.f16", 4, 2048, extra_before="  tcgen05.fence::before_thread_sync;")
    with pytest.raises(gpusim.SimulatorError, match=r"PTX line \d+: unknown instruction 'tcgen05'"):
        run(ptx, np.zeros(2048, np.uint8), 4, 0, 0)


def test_integer_wgmma_shapes():
    ok = kernel("m64n24k32", "s8.s8", 12, 2048, d_type="s32", operands="")
    run(ok, np.zeros(2048, np.uint8), 12, desc(0, 16, 256, 32), desc(1024, 16, 256, 32))
    bad = kernel("m64n40k32", "s8.s8", 20, 2048, d_type="s32", operands="")
    with pytest.raises(gpusim.SimulatorError, match="N must be 8, 16, 24 or a multiple of 16"):
        run(bad, np.zeros(2048, np.uint8), 20, 0, 0)


def test_mma_async_needs_a_wgmma_fence_first():
    ptx = kernel("m64n8k16", "f16.f16", 4, 2048).replace("  wgmma.fence.sync.aligned;\n", "", 1)
    with pytest.raises(gpusim.SimulatorError, match="wgmma.mma_async before any wgmma.fence"):
        run(ptx, np.zeros(2048, np.uint8), 4, desc(0, 128, 256, 0), desc(1024, 128, 256, 0))
