"""mbarrier objects, TMA copies (cp.async.bulk.tensor, cp.async.bulk) and the small sm_90 instructions around them
(elect.sync, setmaxnreg, proxy fences), from hand-written PTX checked against numpy and the PTX ISA's rules:

* an mbarrier phase completes when its pending arrivals reach zero and its transaction count is zero; waits with
  .parity P are true once the phase of parity P completed (the current phase then has the other parity);
* a TMA tile load copies the box at the given coordinates (innermost dimension first), boxDim / elementStride
  elements per dimension, densely into shared memory, elements outside the tensor read as zeros, and signals
  complete_tx of the box's bytes on its mbarrier; swizzle modes permute the 16-byte chunks of the shared address
  (bits [4, 4+b) ^= bits [7, 7+b), b = 1, 2, 3 for 32B, 64B, 128B); stores write only the elements inside.
"""
import numpy as np
import pytest

from tessel import gpusim

HEADER = ".version 8.0\n.target sm_90a\n.address_size 64\n"


def launch(ptx, args, num_warps=1, **kw):
    return gpusim.launch(HEADER + ptx, "k", 1, num_warps=num_warps, args=args, **kw)


# ----------------------------------------------------------------------------------------------- mbarrier

PHASES = """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<20>; .reg .b64 %rd<20>; .reg .pred %p<20>;
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, bar;
  mbarrier.init.shared::cta.b64 [%r1], 2;
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%r1], 0;      // phase 0 not complete
  mbarrier.arrive.shared::cta.b64 %rd2, [%r1];                   // state: phase 0
  mbarrier.test_wait.parity.shared::cta.b64 %p2, [%r1], 0;      // one arrival pending
  mbarrier.arrive.release.cta.shared::cta.b64 %rd3, [%r1];       // phase 0 completes
  mbarrier.test_wait.parity.shared::cta.b64 %p3, [%r1], 0;      // true
  mbarrier.test_wait.parity.shared::cta.b64 %p4, [%r1], 1;      // phase 1 not complete
  mbarrier.test_wait.shared::cta.b64 %p5, [%r1], %rd2;           // the state's phase completed
  mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p6, [%r1], 1;  // nobody can arrive: times out, false
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 64;        // phase 1: 1 pending, 64 bytes expected
  mbarrier.arrive.shared::cta.b64 %rd4, [%r1];                   // 0 pending, tx 64
  mbarrier.test_wait.parity.shared::cta.b64 %p7, [%r1], 1;      // false: transactions pending
  mbarrier.complete_tx.shared::cta.b64 [%r1], 48;
  mbarrier.test_wait.parity.shared::cta.b64 %p8, [%r1], 1;      // false: 16 bytes left
  mbarrier.complete_tx.shared::cta.b64 [%r1], 16;
  mbarrier.try_wait.parity.shared::cta.b64 %p9, [%r1], 1;       // true
  mbarrier.arrive.shared::cta.b64 %rd5, [%r1], 2;                // count 2 completes phase 2
  mbarrier.test_wait.parity.shared::cta.b64 %p10, [%r1], 0;     // phase 2 has parity 0: true
  selp.u32 %r2, 1, 0, %p1;  st.global.u32 [%rd1], %r2;
  selp.u32 %r2, 1, 0, %p2;  st.global.u32 [%rd1+4], %r2;
  selp.u32 %r2, 1, 0, %p3;  st.global.u32 [%rd1+8], %r2;
  selp.u32 %r2, 1, 0, %p4;  st.global.u32 [%rd1+12], %r2;
  selp.u32 %r2, 1, 0, %p5;  st.global.u32 [%rd1+16], %r2;
  selp.u32 %r2, 1, 0, %p6;  st.global.u32 [%rd1+20], %r2;
  selp.u32 %r2, 1, 0, %p7;  st.global.u32 [%rd1+24], %r2;
  selp.u32 %r2, 1, 0, %p8;  st.global.u32 [%rd1+28], %r2;
  selp.u32 %r2, 1, 0, %p9;  st.global.u32 [%rd1+32], %r2;
  selp.u32 %r2, 1, 0, %p10; st.global.u32 [%rd1+36], %r2;
  mbarrier.inval.shared::cta.b64 [%r1];
  ret;
}
"""


def test_mbarrier_phases_parity_and_transactions():
    out = np.full(10, 7, np.uint32)
    one_thread = PHASES.replace("{\n", "{\n", 1)
    launch(one_thread, [out], block=(1,))
    assert out.tolist() == [0, 0, 1, 0, 1, 0, 0, 0, 1, 1]


PRODUCER_CONSUMER = """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<20>; .reg .b64 %rd<20>; .reg .pred %p<20>;
  .shared .align 8 .b64 bar;
  .shared .align 16 .b32 data[32];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, bar;
  mov.u32 %r2, %tid.x;
  and.b32 %r3, %r2, 31;
  setp.eq.u32 %p1, %r2, 0;
  @%p1 mbarrier.init.shared::cta.b64 [%r1], 32;
  fence.mbarrier_init.release.cluster;
  bar.sync 0;
  setp.lt.u32 %p2, %r2, 32;
  @%p2 bra CONSUMER;
  // Warp 1 produces: data[lane] = lane * lane + 5, then every lane arrives.
  mul.lo.u32 %r4, %r3, %r3;
  add.u32 %r4, %r4, 5;
  mov.u32 %r5, data;
  shl.b32 %r6, %r3, 2;
  add.u32 %r5, %r5, %r6;
  st.shared.u32 [%r5], %r4;
  mbarrier.arrive.release.cta.shared::cta.b64 _, [%r1];
  bra DONE;
CONSUMER:
  // Warp 0 runs first and must wait for warp 1 (no bar.sync in between).
  {
    .reg .pred complete;
  WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 complete, [%r1], 0;
    @!complete bra.uni WAIT;
  }
  mov.u32 %r5, data;
  xor.b32 %r7, %r3, 31;
  shl.b32 %r6, %r7, 2;
  add.u32 %r5, %r5, %r6;
  ld.shared.u32 %r4, [%r5];
  mul.wide.u32 %rd2, %r3, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
  {
    .reg .pred complete;
  WAIT:
    mbarrier.test_wait.parity.shared::cta.b64 complete, [%r1], 0;
    @!complete bra.uni WAIT;
  }
DONE:
  ret;
}
"""


def test_try_wait_blocks_the_warp_until_another_warp_arrives():
    """Warp 0 waits on an mbarrier that warp 1 completes later: the waiting warp yields instead of spinning (a
    small instruction limit proves it), then reads what warp 1 wrote, ordered by the barrier (no race reported).
    The wait loops use labels local to their { } blocks, as Triton's inline assembly does."""
    out = np.zeros(32, np.uint32)
    launch(PRODUCER_CONSUMER, [out], num_warps=2, instruction_limit=2000)
    lanes = np.arange(32)
    np.testing.assert_array_equal(out, (31 - lanes) ** 2 + 5)


def test_deadlocked_wait_is_reported():
    ptx = PRODUCER_CONSUMER.replace("mbarrier.arrive.release.cta.shared::cta.b64 _, [%r1];", "")
    with pytest.raises(gpusim.SimulatorError, match=r"deadlock: mbarrier.try_wait can never complete"):
        launch(ptx, [np.zeros(32, np.uint32)], num_warps=2)


MISUSE = """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>; .reg .b64 %rd<4>; .reg .pred %p<4>;
  .shared .align 8 .b64 bar[2];
  mov.u32 %r1, bar;
  BODY
  ret;
}
"""


@pytest.mark.parametrize("body,message", [
    ("mbarrier.arrive.shared::cta.b64 %rd1, [%r1];", r"mbarrier.arrive on the mbarrier at shared address 0x0, "
                                                     r"which is not initialized"),
    ("mbarrier.init.shared::cta.b64 [%r1], 1;\n mbarrier.arrive.shared::cta.b64 %rd1, [%r1], 2;",
     "arrive with count 2 on the mbarrier at shared address 0x0, which has 1 pending arrivals"),
    ("mbarrier.init.shared::cta.b64 [%r1], 0;", r"count must be in \[1, 2\^20 - 1\], not 0"),
    ("mbarrier.init.shared::cta.b64 [%r1+4], 1;", "not aligned to 8 bytes"),
    ("mbarrier.init.shared::cta.b64 [%r1+16], 1;", "outside the CTA's 16 bytes of shared memory"),
    ("mbarrier.init.shared::cta.b64 [%r1], 1;\n mbarrier.inval.shared::cta.b64 [%r1];\n"
     " mbarrier.test_wait.parity.shared::cta.b64 %p1, [%r1], 0;", "test_wait on .* not initialized"),
    ("mbarrier.init.shared::cta.b64 [%r1], 1;\n mbarrier.expect_tx.shared::cta.b64 [%r1], 2000000;",
     "transaction count out of range"),
    ("mbarrier.init.shared::cta.b64 [%r1], 1;\n mbarrier.test_wait.parity.shared::cta.b64 %p1, [%r1], 2;",
     "parity must be 0 or 1"),
])
def test_mbarrier_misuse(body, message):
    with pytest.raises(gpusim.SimulatorError, match=message):
        launch(MISUSE.replace("BODY", body), [np.zeros(1, np.uint32)], block=(1,))


@pytest.mark.parametrize("body,message", [
    ("mbarrier.arrive.shared::cluster.b64 %rd1, [%r1];", "shared::cluster"),
    ("mbarrier.arrive.shared::cta.b32 %rd1, [%r1];", r"\.b64 objects"),
    ("mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1];", "waitComplete"),
    ("setmaxnreg.inc.sync.aligned.u32 250;", "multiple of 8"),
    ("fence.proxy.foo;", "unknown proxy fence"),
])
def test_decode_errors(body, message):
    with pytest.raises(gpusim.SimulatorError, match=message):
        launch(MISUSE.replace("BODY", body), [np.zeros(1, np.uint32)], block=(1,))


def test_elect_sync_setmaxnreg_and_fences():
    ptx = """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<10>; .reg .b64 %rd<10>; .reg .pred %p<4>;
  ld.param.u64 %rd1, [out];
  setmaxnreg.dec.sync.aligned.u32 40;
  setmaxnreg.inc.sync.aligned.u32 232;
  fence.proxy.async.shared::cta;
  fence.proxy.async.global;
  fence.proxy.async;
  mov.u32 %r1, %laneid;
  setp.ge.u32 %p1, %r1, 5;
  @!%p1 bra SKIP;
  elect.sync %r2|%p2, 0xffffffe0;
  selp.u32 %r3, 100, 0, %p2;
  add.u32 %r3, %r3, %r2;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
SKIP:
  ret;
}
"""
    out = np.full(32, 9, np.uint32)
    launch(ptx, [out])
    # Lanes 5..31 are the members: lane 5, the lowest, is elected; every lane gets its id.
    assert out[:5].tolist() == [9] * 5
    assert out[5] == 105 and (out[6:] == 5).all()
    # Every lane of the member mask must execute elect.sync together.
    with pytest.raises(gpusim.SimulatorError, match="elect.sync: lanes of the member mask are not converged"):
        launch(ptx.replace("0xffffffe0", "-1"), [out])


# ---------------------------------------------------------------------------------------------------- TMA

def tma_load_kernel(rank, smem_bytes, coords, swizzle_align=1024):
    """Thread 0 loads a box with TMA (the tensor map is a by-value parameter reached through cvta.param, as
    Triton does), everyone waits on the mbarrier, then the shared bytes are copied out verbatim."""
    regs = ", ".join(f"%c{i}" for i in range(rank))
    loads = "\n".join(f"  ld.param.s32 %c{i}, [c{i}];" for i in range(rank))
    params = ", ".join(f".param .s32 c{i}" for i in range(rank))
    words = smem_bytes // 4
    return f"""
.visible .entry k(.param .align 64 .b8 map[128], .param .u64 out, {params})
{{
  .reg .b32 %r<20>; .reg .b32 %c<5>; .reg .b64 %rd<20>; .reg .pred %p<20>;
  .shared .align {swizzle_align} .b8 box[{smem_bytes}];
  .shared .align 8 .b64 bar;
{loads}
  mov.b64 %rd1, map;
  cvta.param.u64 %rd2, %rd1;
  ld.param.u64 %rd3, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  mov.u32 %r3, box;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 mbarrier.init.shared::cta.b64 [%r2], 1;
  fence.mbarrier_init.release.cluster;
  bar.sync 0;
  prefetch.tensormap [%rd2];
  @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], {smem_bytes};
  @%p1 cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r3], [%rd2, {{{regs}}}], [%r2];
  {{
    .reg .pred complete;
  WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 complete, [%r2], 0;
    @!complete bra.uni WAIT;
  }}
  mov.u32 %r4, %r1;
LOOP:
  setp.ge.u32 %p2, %r4, {words};
  @%p2 bra END;
  shl.b32 %r5, %r4, 2;
  add.u32 %r6, %r3, %r5;
  ld.shared.u32 %r7, [%r6];
  cvt.u64.u32 %rd4, %r5;
  add.s64 %rd5, %rd3, %rd4;
  st.global.u32 [%rd5], %r7;
  add.u32 %r4, %r4, 32;
  bra LOOP;
END:
  ret;
}}
"""


def swizzled(addr, swizzle):
    if not swizzle:
        return addr
    bits = {32: 1, 64: 2, 128: 3}[swizzle]
    return addr ^ (((addr >> 7) & ((1 << bits) - 1)) << 4)


def expected_box(tensor, start, box, estrides):
    """The box per the ISA: element j (innermost-first coordinates) is tensor[start + j * estride], zeros
    outside. `start`, `box`, `estrides` are innermost first; `tensor` is in numpy order."""
    counts = [-(-b // e) for b, e in zip(box, estrides)]
    out = np.zeros(counts[::-1], tensor.dtype)
    for idx in np.ndindex(*counts[::-1]):
        coord = [s + j * e for s, j, e in zip(start, idx[::-1], estrides)]
        if all(0 <= c < d for c, d in zip(coord, tensor.shape[::-1])):
            out[idx] = tensor[tuple(coord[::-1])]
    return out


def unswizzle(raw, nbytes, swizzle, itemsize):
    logical = np.zeros(nbytes, np.uint8)
    for off in range(0, nbytes, 16):
        p = swizzled(off, swizzle)
        logical[off:off + 16] = raw[p:p + 16]
    return logical


@pytest.mark.parametrize("swizzle", [None, 32, 64, 128])
@pytest.mark.parametrize("start", [(8, 3), (-5, -2), (60, 9)])
def test_tma_2d_box_load_with_oob_zero_fill_and_swizzle(rng, swizzle, start):
    cols = (swizzle or 64) // 2  # box rows of `swizzle` bytes (fp16)
    tensor = rng.standard_normal((12, 72)).astype(np.float16)
    box = (cols, 8)  # innermost first
    tmap = gpusim.TensorMap(tensor, box[::-1], swizzle=swizzle)
    nbytes = cols * 8 * 2
    out = np.zeros(nbytes // 4, np.uint32)
    counters = launch(tma_load_kernel(2, nbytes, start), [tmap, out, *start])
    got = unswizzle(out.view(np.uint8), nbytes, swizzle, 2).view(np.float16).reshape(8, cols)
    np.testing.assert_array_equal(got, expected_box(tensor, start, box, (1, 1)))
    assert counters["async_copy_bytes"] == nbytes


def test_tma_3d_box_with_element_strides(rng):
    tensor = rng.integers(0, 1 << 30, (3, 10, 8)).astype(np.int32)
    box, estrides, start = (4, 6, 2), (1, 2, 1), (2, 1, 1)  # innermost first
    tmap = gpusim.TensorMap(tensor, box[::-1], element_strides=estrides[::-1])
    nbytes = 4 * 3 * 2 * 4  # 4 x ceil(6 / 2) x 2 elements
    out = np.zeros(nbytes // 4, np.uint32)
    launch(tma_load_kernel(3, nbytes, start), [tmap, out, *start])
    np.testing.assert_array_equal(out.view(np.int32).reshape(2, 3, 4), expected_box(tensor, start, box, estrides))


def test_tma_coordinates_may_be_immediates(rng):
    # ptxas takes immediates among the coordinates ({-3, 2}: LLVM prints constant operands of inline asm so).
    tensor = rng.integers(0, 1 << 30, (6, 20)).astype(np.int32)
    box, start = (8, 4), (-3, 2)  # innermost first
    ptx = tma_load_kernel(2, 8 * 4 * 4, start).replace("{%c0, %c1}", "{-3, 2}")
    assert "{-3, 2}" in ptx
    out = np.zeros(8 * 4, np.uint32)
    launch(ptx, [gpusim.TensorMap(tensor, box[::-1]), out, 0, 0])
    np.testing.assert_array_equal(out.view(np.int32).reshape(4, 8), expected_box(tensor, start, box, (1, 1)))


def test_tma_5d_box(rng):
    tensor = rng.standard_normal((2, 3, 2, 3, 8)).astype(np.float32)
    box, start = (4, 2, 2, 2, 2), (5, 2, 1, 1, 1)  # innermost first
    tmap = gpusim.TensorMap(tensor, box[::-1])
    nbytes = 4 * 2 * 2 * 2 * 2 * 4
    out = np.zeros(nbytes // 4, np.uint32)
    launch(tma_load_kernel(5, nbytes, start), [tmap, out, *start])
    np.testing.assert_array_equal(out.view(np.float32).reshape(2, 2, 2, 2, 4),
                                  expected_box(tensor, start, box, (1,) * 5))


TMA_STORE = """
.visible .entry k(.param .align 64 .b8 map[128], .param .u64 src, .param .s32 x, .param .s32 y)
{
  .reg .b32 %r<20>; .reg .b64 %rd<20>; .reg .pred %p<20>;
  .shared .align 1024 .b8 box[SIZE];
  ld.param.u64 %rd3, [src];
  ld.param.s32 %r10, [x];
  ld.param.s32 %r11, [y];
  mov.b64 %rd1, map;
  cvta.param.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  mov.u32 %r3, box;
  mov.u32 %r4, %r1;
LOOP:
  setp.ge.u32 %p2, %r4, WORDS;
  @%p2 bra STORE;
  shl.b32 %r5, %r4, 2;
  cvt.u64.u32 %rd4, %r5;
  add.s64 %rd5, %rd3, %rd4;
  ld.global.u32 %r7, [%rd5];
  add.u32 %r6, %r3, %r5;
  st.shared.u32 [%r6], %r7;
  add.u32 %r4, %r4, 32;
  bra LOOP;
STORE:
  fence.proxy.async.shared::cta;
  bar.sync 0;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd2, {%r10, %r11}], [%r3];
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group.read 0;
  ret;
}
"""


@pytest.mark.parametrize("swizzle", [None, 128])
@pytest.mark.parametrize("start", [(0, 0), (50, 10), (-20, -3)])
def test_tma_2d_store_clips_to_the_tensor(rng, swizzle, start):
    cols = 64
    tensor = np.zeros((14, 104), np.float16)
    box = (cols, 8)
    values = rng.standard_normal((8, cols)).astype(np.float16)
    nbytes = values.nbytes
    # Shared memory holds the box in its swizzled arrangement.
    raw = np.zeros(nbytes, np.uint8)
    logical = values.view(np.uint8).reshape(-1)
    for off in range(0, nbytes, 16):
        p = swizzled(off, swizzle)
        raw[p:p + 16] = logical[off:off + 16]
    ptx = TMA_STORE.replace("SIZE", str(nbytes)).replace("WORDS", str(nbytes // 4))
    launch(ptx, [gpusim.TensorMap(tensor, box[::-1], swizzle=swizzle), raw.view(np.uint32), *start])
    expected = np.zeros_like(tensor)
    for r in range(8):
        for c in range(cols):
            y, x = start[1] + r, start[0] + c
            if 0 <= y < tensor.shape[0] and 0 <= x < tensor.shape[1]:
                expected[y, x] = values[r, c]
    np.testing.assert_array_equal(tensor, expected)


def test_bulk_copy_without_tensor_map(rng):
    ptx = """
.visible .entry k(.param .u64 src, .param .u64 dst)
{
  .reg .b32 %r<10>; .reg .b64 %rd<10>; .reg .pred %p<4>;
  .shared .align 128 .b8 buf[256];
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [dst];
  mov.u32 %r1, buf;
  mov.u32 %r2, bar;
  mbarrier.init.shared::cta.b64 [%r2], 1;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 256;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1+64], 256, [%r2];
W:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2], 0;
  @!%p1 bra W;
  cp.async.bulk.global.shared::cta.bulk_group [%rd2+32], [%r1], 256;
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group 0;
  ret;
}
"""
    src = rng.integers(0, 256, 512).astype(np.uint8)
    dst = np.zeros(512, np.uint8)
    counters = launch(ptx, [src, dst], block=(1,))
    expected = np.zeros(512, np.uint8)
    expected[32:288] = src[64:320]
    np.testing.assert_array_equal(dst, expected)
    assert counters["async_copy_bytes"] == 256


def test_tensor_map_from_a_triton_like_descriptor(rng):
    class Descriptor:  # the fields of triton.tools.tensor_descriptor.TensorDescriptor that matter
        def __init__(self, base):
            self.base, self.shape, self.strides, self.block_shape, self.padding = base, base.shape, (8, 1), [4, 8], "nan"

    tensor = rng.standard_normal((6, 8)).astype(np.float32)
    tmap = gpusim.TensorMap.from_triton(Descriptor(tensor), {"swizzle": 1, "elem_size": 4, "elem_type": 7,
                                                             "block_size": [4, 8], "fp4_padded": False})
    out = np.zeros(32, np.uint32)
    launch(tma_load_kernel(2, 128, (0, 4)), [tmap, out, 0, 4])
    got = unswizzle(out.view(np.uint8), 128, 32, 4).view(np.float32).reshape(4, 8)
    np.testing.assert_array_equal(got[:2], tensor[4:6])
    assert np.isnan(got[2:]).all()  # padding="nan": OOB elements read as NaN


@pytest.mark.parametrize("change,message", [
    (lambda t: setattr(t, "_blob", bytes(128)), "not a tensor map"),
    (lambda t: setattr(t, "_blob", t._blob[:12] + bytes([1]) + t._blob[13:]), r"a \.2d copy with a rank-1"),
    (lambda t: setattr(t, "_blob", t._blob[:72] + bytes([9, 0, 0, 0]) + t._blob[76:]),
     r"inner box dimension is 18 bytes, not a multiple of 16"),
])
def test_tma_errors(rng, change, message):
    tensor = np.zeros((8, 64), np.float16)
    tmap = gpusim.TensorMap(tensor, (8, 64), swizzle=128)
    change(tmap)
    with pytest.raises(gpusim.SimulatorError, match=message):
        launch(tma_load_kernel(2, 1024, (0, 0)), [tmap, np.zeros(256, np.uint32), 0, 0])


def test_tma_box_outside_shared_memory():
    tensor = np.zeros((8, 64), np.float16)
    with pytest.raises(gpusim.SimulatorError, match=r"cp.async.bulk.tensor destination: 1024 bytes at shared "
                                                    r"address 0x0 are outside the CTA's 520 bytes"):
        launch(tma_load_kernel(2, 512, (0, 0)), [gpusim.TensorMap(tensor, (8, 64), swizzle=128),
                                                  np.zeros(128, np.uint32), 0, 0])


def test_tma_decode_errors():
    ptx = tma_load_kernel(2, 1024, (0, 0)).replace("{%c0, %c1}", "{%c0, %c1, %c0}")
    with pytest.raises(gpusim.SimulatorError, match="coordinates must have 2 elements"):
        launch(ptx, [gpusim.TensorMap(np.zeros((8, 64), np.float16), (8, 64)), np.zeros(256, np.uint32), 0, 0])
    ptx = tma_load_kernel(2, 1024, (0, 0)).replace(".tile.mbarrier", ".im2col.mbarrier")
    with pytest.raises(gpusim.SimulatorError, match="only the .tile mode"):
        launch(ptx, [gpusim.TensorMap(np.zeros((8, 64), np.float16), (8, 64)), np.zeros(256, np.uint32), 0, 0])


def test_tensor_map_argument_checks():
    with pytest.raises(gpusim.SimulatorError, match="box_shape and element_strides need one entry per dimension"):
        gpusim.TensorMap(np.zeros((4, 4), np.float32), (4,))
    with pytest.raises(gpusim.SimulatorError, match="swizzle is None, 32, 64 or 128"):
        gpusim.TensorMap(np.zeros((4, 4), np.float32), (4, 4), swizzle=16)
    with pytest.raises(gpusim.SimulatorError, match=r"128 bytes need a \.b8 array parameter"):
        gpusim.launch(HEADER + ".visible .entry k(.param .u64 p) { ret; }", "k", 1,
                      args=[gpusim.TensorMap(np.zeros((4, 4), np.float32), (4, 4))])


def test_arrive_drop_lowers_the_expected_count():
    ptx = """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .pred %p<8>;
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, bar;
  mbarrier.init.shared::cta.b64 [%r1], 2;
  mbarrier.arrive_drop.shared::cta.b64 %rd2, [%r1];     // phase 0: 1 pending, 1 expected from now on
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%r1], 0;
  mbarrier.arrive.shared::cta.b64 %rd3, [%r1];          // completes phase 0
  mbarrier.test_wait.parity.shared::cta.b64 %p2, [%r1], 0;
  mbarrier.arrive.shared::cta.b64 %rd4, [%r1];          // one arrival completes phase 1
  mbarrier.test_wait.parity.shared::cta.b64 %p3, [%r1], 1;
  selp.u32 %r2, 1, 0, %p1; st.global.u32 [%rd1], %r2;
  selp.u32 %r2, 1, 0, %p2; st.global.u32 [%rd1+4], %r2;
  selp.u32 %r2, 1, 0, %p3; st.global.u32 [%rd1+8], %r2;
  mbarrier.test_wait.shared::cta.b64 %p4, [%r1], %rd4;  // the phase of that arrive completed
  selp.u32 %r2, 1, 0, %p4; st.global.u32 [%rd1+12], %r2;
  ret;
}
"""
    out = np.full(4, 7, np.uint32)
    launch(ptx, [out], block=(1,))
    assert out.tolist() == [0, 1, 1, 1]


def test_tensor_map_of_a_triton_descriptor_over_a_torch_bf16_tensor():
    import torch
    from triton.tools.tensor_descriptor import TensorDescriptor
    values = torch.arange(64, dtype=torch.float32).reshape(8, 8)
    base = values.to(torch.bfloat16)
    desc = TensorDescriptor.from_tensor(base, [4, 8])
    tmap = gpusim.TensorMap.from_triton(desc, {"swizzle": 0, "elem_size": 2, "elem_type": 10,
                                               "block_size": [4, 8], "fp4_padded": False})
    assert tmap.elem_type == "bf16"
    out = np.zeros(16, np.uint32)
    launch(tma_load_kernel(2, 64, (0, 2)), [tmap, out, 0, 2])
    got = (out.view(np.uint16).astype(np.uint32) << 16).view(np.float32).reshape(4, 8)
    np.testing.assert_array_equal(got, values[2:6].numpy())
