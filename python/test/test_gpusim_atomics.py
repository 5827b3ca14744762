"""atom, red and redux.sync in Tessel's PTX simulator, against references computed in numpy.

Many CTAs (on the simulator's thread pool) hit the same global words, so a lost update would show as a wrong
count; per-lane results of atom are checked against the set of values the ISA allows.
"""
import numpy as np
import pytest

from test_gpusim_triton import compile_ptx, scratch_args
from tessel import gpusim

HEADER = ".version 8.7\n.target sm_90\n.address_size 64\n"


def kernel(body, regs=""):
    return HEADER + f""".visible .entry k(.param .u64 p0, .param .u64 p1, .param .u64 p2)
{{
 .reg .b32 %t, %c, %g, %r<8>;
 .reg .b64 %rd<8>, %x<4>;
 .reg .b16 %h<4>;
 .reg .f32 %f<4>;
 .reg .pred %p;
 {regs}
 mov.u32 %t, %tid.x;
 mov.u32 %c, %ctaid.x;
 mov.u32 %r7, %ntid.x;
 mad.lo.u32 %g, %c, %r7, %t;
 ld.param.u64 %rd0, [p0];
 ld.param.u64 %rd1, [p1];
 ld.param.u64 %rd2, [p2];
 mul.wide.u32 %rd3, %g, 4;
 add.s64 %rd4, %rd1, %rd3;
 add.s64 %rd5, %rd2, %rd3;
 {body}
 ret;
}}
"""


def test_global_add_from_many_ctas_returns_distinct_old_values():
    ctas, threads = 16, 128
    counter = np.zeros(1, np.uint32)
    old = np.zeros(ctas * threads, np.uint32)
    body = """
 atom.global.add.u32 %r0, [%rd0], 1;
 st.global.u32 [%rd4], %r0;
"""
    c = gpusim.launch(kernel(body), "k", ctas, num_warps=threads // 32, args=[counter, old, None])
    assert counter[0] == ctas * threads
    # Every increment saw a different value: together they are 0 .. n-1.
    np.testing.assert_array_equal(np.sort(old), np.arange(ctas * threads))
    assert c["inst_atomic"] == ctas * threads // 32


@pytest.mark.parametrize("op,typ,init,vals,ref", [
    ("min", "s32", 5, lambda g: (g % 17) - 8, lambda v, i: min(i, v.min())),
    ("max", "s32", -100, lambda g: (g * 7919) % 1000 - 500, lambda v, i: max(i, v.max())),
    ("min", "u32", 2 ** 32 - 1, lambda g: (g * 7919) % 100000 + 3, lambda v, i: min(i, v.min())),
    ("and", "b32", 2 ** 32 - 1, lambda g: ~(1 << (g % 32)) & 0xFFFFFFFF, lambda v, i: np.bitwise_and.reduce(v) & i),
    ("or", "b32", 0, lambda g: 1 << (g % 29), lambda v, i: np.bitwise_or.reduce(v) | i),
    ("xor", "b32", 0x1234, lambda g: g * 2654435761 % 2 ** 32, lambda v, i: np.bitwise_xor.reduce(v) ^ i),
])
def test_global_reductions(op, typ, init, vals, ref):
    n = 4 * 256
    dt = np.int32 if typ == "s32" else np.uint32
    v = np.array([vals(g) for g in range(n)], np.int64).astype(dt)
    target = np.array([init], np.int64).astype(dt)
    body = f"""
 ld.global.b32 %r1, [%rd4];
 red.global.{op}.{typ} [%rd0], %r1;
"""
    gpusim.launch(kernel(body), "k", 4, num_warps=8, args=[target, v, None])
    assert target[0] == dt(ref(v, dt(init)))


def test_float_adds():
    n = 8 * 128
    rng = np.random.default_rng(5)
    x = (rng.integers(-64, 64, n) / 8).astype(np.float32)  # exact in f32: the order of the adds cannot matter
    acc = np.zeros(2, np.float32)
    acc64 = np.zeros(1, np.float64)
    body = """
 ld.global.f32 %f0, [%rd4];
 atom.global.add.f32 %f1, [%rd0], %f0;
 red.global.add.f32 [%rd0+4], %f0;
 cvt.f64.f32 %x0, %f0;
 red.global.add.f64 [%rd2], %x0;
"""
    gpusim.launch(kernel(body, ".reg .f64 %x<2>;").replace(".reg .b64 %rd<8>, %x<4>;", ".reg .b64 %rd<8>;"),
                  "k", 8, num_warps=4, args=[acc, x, acc64])
    assert acc[0] == x.astype(np.float64).sum() and acc[1] == acc[0]
    assert acc64[0] == x.astype(np.float64).sum()


def test_f32_atomic_add_flushes_subnormals():
    acc = np.array([0], np.float32)
    x = np.full(32, 1e-40, np.float32)  # subnormal: atom.add.f32 flushes inputs to zero
    body = """
 ld.global.f32 %f0, [%rd4];
 red.global.add.f32 [%rd0], %f0;
"""
    gpusim.launch(kernel(body), "k", 1, num_warps=1, args=[acc, x, None])
    assert acc[0] == 0


def test_half_adds():
    lanes = 32
    rng = np.random.default_rng(7)
    x = (rng.integers(-8, 8, (lanes, 2)) / 4).astype(np.float16)  # sums stay exact in f16
    bx = x.astype(np.float32).view(np.uint32) >> 16  # the same values as bf16 (exact: few bits)
    acc = np.zeros(2, np.float16)
    bacc = np.zeros(2, np.uint16)
    body = """
 ld.global.b32 %r1, [%rd4];
 red.global.add.noftz.f16x2 [%rd0], %r1;
 add.s64 %rd6, %rd1, 128;
 add.s64 %rd6, %rd6, %rd3;
 ld.global.b32 %r2, [%rd6];
 atom.global.add.noftz.bf16x2 %r3, [%rd2], %r2;
 ld.global.b16 %h0, [%rd4];
 atom.global.add.noftz.f16 %h1, [%rd0], %h0;
"""
    both = np.concatenate([x.view(np.uint32).reshape(-1), (bx[:, 0] | bx[:, 1] << 16).astype(np.uint32)])
    gpusim.launch(kernel(body), "k", 1, num_warps=1, args=[acc, both, bacc])
    sums = x.astype(np.float64).sum(axis=0)
    assert acc[0] == sums[0] + x[:, 0].astype(np.float64).sum() and acc[1] == sums[1]
    bvals = (bacc.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(bvals, sums.astype(np.float32))


def test_cas_exch_inc_dec():
    n = 64
    words = np.array([0, 0, 0, 10], np.uint32)
    out = np.zeros((n, 4), np.uint32)
    # cas: a spin-free ticket: each lane tries to swap its id in if the word still holds 0.
    body = """
 add.u32 %r1, %g, 1;
 atom.global.cas.b32 %r2, [%rd0], 0, %r1;
 atom.global.exch.b32 %r3, [%rd0+4], %r1;
 atom.global.inc.u32 %r4, [%rd0+8], 4;
 atom.global.dec.u32 %r5, [%rd0+12], 20;
 mul.wide.u32 %rd6, %g, 16;
 add.s64 %rd6, %rd1, %rd6;
 st.global.v4.b32 [%rd6], {%r2, %r3, %r4, %r5};
"""
    gpusim.launch(kernel(body), "k", 2, num_warps=1, args=[words, out, None])
    winner = words[0]
    assert 1 <= winner <= n
    assert (out[:, 0] == 0).sum() == 1 and out[winner - 1, 0] == 0  # only the winner saw 0
    assert set(out[:, 0]) == {0, winner}
    # exch: the old values are 0 and every id but the last one stored, once each.
    assert sorted(out[:, 1].tolist()) == sorted([0] + [i for i in range(1, n + 1) if i != words[1]])
    # inc wraps to 0 after 4: 64 increments from 0 end at 64 % 5 = 4; dec from 10 wraps to 20 at 0.
    assert words[2] == n % 5
    assert sorted(out[:, 2].tolist()) == sorted([i % 5 for i in range(n)])
    seq, v = [], 10
    for _ in range(n):
        seq.append(v)
        v = 20 if v == 0 or v > 20 else v - 1
    assert words[3] == v and sorted(out[:, 3].tolist()) == sorted(seq)


def test_shared_atomics_and_generic_addresses():
    out = np.zeros(2, np.uint32)
    body = """
 .shared .align 4 .b32 counter[2];
 setp.eq.u32 %p, %t, 0;
 @%p st.shared.v2.u32 [counter], {%t, %t};
 bar.sync 0;
 atom.shared.add.u32 %r1, [counter], 3;
 mov.u64 %x0, counter;
 cvta.shared.u64 %x1, %x0;
 atom.add.u32 %r2, [%x1+4], 1;
 bar.sync 0;
 @%p ld.shared.v2.u32 {%r1, %r2}, [counter];
 @%p st.global.v2.u32 [%rd0], {%r1, %r2};
"""
    gpusim.launch(kernel(body), "k", 3, num_warps=4, args=[out, None, None])
    assert out.tolist() == [3 * 128, 128]  # per CTA; the last CTA's values


def test_redux_sync():
    n = 64
    rng = np.random.default_rng(3)
    x = rng.integers(-2 ** 20, 2 ** 20, n).astype(np.int32)
    out = np.zeros((n, 6), np.uint32)
    body = """
 ld.global.b32 %r1, [%rd4];
 redux.sync.add.s32 %r2, %r1, 0xffffffff;
 redux.sync.min.s32 %r3, %r1, 0xffffffff;
 redux.sync.max.u32 %r4, %r1, 0xffffffff;
 redux.sync.xor.b32 %r5, %r1, 0xffffffff;
 and.b32 %r6, %t, 1;
 setp.eq.u32 %p, %r6, 0;
 mov.u32 %r6, 0;
 @%p redux.sync.or.b32 %r6, %r1, 0x55555555;
 @!%p redux.sync.and.b32 %r6, %r1, 0xaaaaaaaa;
 mul.wide.u32 %rd6, %g, 24;
 add.s64 %rd6, %rd0, %rd6;
 st.global.v2.b32 [%rd6], {%r2, %r3};
 st.global.v2.b32 [%rd6+8], {%r4, %r5};
 st.global.b32 [%rd6+16], %r6;
"""
    gpusim.launch(kernel(body), "k", 1, num_warps=2, args=[out, x, None])
    for w in range(2):
        v = x[32 * w:32 * w + 32]
        o = out[32 * w:32 * w + 32]
        assert (o[:, 0].view(np.int32) == np.int32(v.astype(np.int64).sum())).all()
        assert (o[:, 1].view(np.int32) == v.min()).all()
        assert (o[:, 2] == v.view(np.uint32).max()).all()
        assert (o[:, 3] == np.bitwise_xor.reduce(v.view(np.uint32))).all()
        assert (o[0::2, 4] == np.bitwise_or.reduce(v[0::2].view(np.uint32))).all()
        assert (o[1::2, 4] == np.bitwise_and.reduce(v[1::2].view(np.uint32))).all()


@pytest.mark.parametrize("body,message", [
    ("atom.global.add.f16 %h1, [%rd0], %h0;", "need .noftz"),
    ("atom.global.inc.u64 %x0, [%rd0], %x1;", "not defined"),
    ("red.global.cas.b32 [%rd0], %r1, %r2;", "red has no .cas"),
    ("atom.global.add.u32 %r1, [%rd0+2], 1;", "misaligned atomic"),
    ("atom.global.add.u32 %r1, [%rd0+64], 1;", "out-of-bounds atomic"),
    ("atom.global.add.u32 %r1, [%rd0], 1, 2;", "expected 3 operands"),
    ("redux.sync.add.f32 %r1, %r2, 0xffffffff;", "not simulated"),
    ("setp.lt.u32 %p, %t, 8;\n @%p redux.sync.add.u32 %r1, %t, 0xffffffff;", "not all executing"),
])
def test_atomic_errors(body, message):
    with pytest.raises(gpusim.SimulatorError, match=message) as e:
        gpusim.launch(kernel(body), "k", 1, num_warps=1, args=[np.zeros(16, np.uint32), None, None])
    assert "PTX line" in str(e.value)


def test_triton_atomics(rng):
    sig = {"x_ptr": "*fp32", "idx_ptr": "*i32", "hist_ptr": "*i32", "fsum_ptr": "*fp32", "mx_ptr": "*i32",
           "h16_ptr": "*fp16", "n": "i32", "BLOCK": "constexpr"}
    ptx, meta = compile_ptx("atomics_kernel", sig, {"BLOCK": 256})
    for op in ("atom.global.gpu.acq_rel.add.u32", "atom.global.gpu.acq_rel.add.f32",
               "atom.global.gpu.acq_rel.max.s32", "atom.global.gpu.acq_rel.add.noftz.f16"):
        assert op in ptx
    n, bins = 3000, 40
    # Multiples of 1/4 in [-2, 2): with at most ~100 per bin every partial sum of a bin is a multiple of 1/4
    # below 512 in magnitude, exact in f16 and f32 whatever the order of the atomics.
    x = (rng.integers(-8, 8, n) / 4).astype(np.float32)
    idx = rng.integers(0, bins, n).astype(np.int32)
    assert np.bincount(idx).max() * 2 < 512
    hist = np.zeros(bins, np.int32)
    fsum = np.zeros(bins, np.float32)
    mx = np.full(bins, -2 ** 31, np.int32)
    h16 = np.zeros(bins, np.float16)
    gpusim.launch(ptx, "atomics_kernel", -(-n // 256), num_warps=meta.num_warps, shared_bytes=meta.shared,
                  args=[x, idx, hist, fsum, mx, h16, n] + scratch_args(ptx))
    np.testing.assert_array_equal(hist, np.bincount(idx, minlength=bins))
    ref = np.bincount(idx, weights=x.astype(np.float64), minlength=bins)
    np.testing.assert_array_equal(fsum, ref)
    np.testing.assert_array_equal(h16, ref.astype(np.float16))
    scaled = np.trunc(x * np.float32(1000)).astype(np.int32)
    np.testing.assert_array_equal(mx, [scaled[idx == b].max() for b in range(bins)])
