"""Errors of Tessel's PTX simulator: anything it does not know, out-of-bounds and
misaligned accesses, shared-memory races and divergent barriers raise
tessel.gpusim.SimulatorError naming the PTX line (and CTA/thread at run time)."""
import numpy as np
import pytest

from tessel import gpusim

HEADER = ".version 8.7\n.target sm_80\n.address_size 64\n"


def kernel(body, params=".param .u64 p0", regs=""):
    return (HEADER + f".visible .entry k({params})\n{{\n .reg .pred %p<4>;\n .reg .b32 %r<16>;\n"
            f" .reg .b64 %rd<16>;\n{regs}{body}\n ret;\n}}\n")


def test_simulator_error_is_a_runtime_error():
    assert issubclass(gpusim.SimulatorError, RuntimeError)


@pytest.mark.parametrize("body,words", [
    (" frobnicate.b32 %r1, %r2;", ["unknown instruction 'frobnicate'", "line 9"]),
    (" add.f32.bogus %r1, %r2, %r3;", ["unknown or unsupported modifier '.bogus'", "line 9"]),
    (" wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%r1,%r2,%r3,%r4}, {%r1,%r2,%r3,%r4}, {%r1,%r2}, {%r1,%r2,%r3,%r4};",
     ["unknown instruction 'wmma'", "line 9"]),
    (" movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2;", ["unknown instruction 'movmatrix'", "line 9"]),
    (" mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%r1,%r2,%r3,%r4}, {%r1,%r2}, {%r1,%r2}, {%r1,%r2,%r3,%r4};",
     ["mma shape not simulated", "line 9"]),
    (" cp.async.ca.shared.global.L2::weird [%r1], [%rd1], 16;", ["modifier '.L2::weird'", "line 9"]),
    (" .weird 3;", ["unknown directive '.weird'", "line 9"]),
    (" add.s32 %r1, %r2, %nosuch;", ["unknown register", "%nosuch"]),
    (" ld.global.b32 %r1, [%rd1+4+];", ["line 9"]),
    (" bra NOWHERE;", ["unknown label", "NOWHERE"]),
    (" mul.s32 %r1, %r2, %r3;", ["needs .lo, .hi or .wide"]),
    (" cvt.f32.s32 %r1, %r2;", ["needs .rn, .rz, .rm or .rp"]),
    (" prmt.b32.f4e %r1, %r2, %r3, %r4;", ["modifier '.f4e'"]),
    (" bar.arrive 1, 64;", ["only bar.sync"]),
    (" shfl.sync.bfly.b16 %r1, %r2, 1, 31, -1;", ["shfl.sync needs a mode and .b32"]),
])
def test_unknown_is_an_error_with_the_line(body, words):
    with pytest.raises(gpusim.SimulatorError) as e:
        gpusim.launch(kernel(body), "k", 1, num_warps=1, args=[None])
    for w in words:
        assert w in str(e.value)


def test_unknown_state_space_and_module_directive():
    with pytest.raises(gpusim.SimulatorError, match="unknown directive '.blah' at module level"):
        gpusim.launch(HEADER + ".blah 1;\n", "k", 1, args=[])
    with pytest.raises(gpusim.SimulatorError, match="line 9: unknown directive '.tex'"):
        gpusim.launch(kernel(" .tex .b32 t;"), "k", 1, num_warps=1, args=[None])
    with pytest.raises(gpusim.SimulatorError, match="line 9: unknown or unsupported modifier '.tex'"):
        gpusim.launch(kernel(" ld.tex.b32 %r1, [%rd1];"), "k", 1, num_warps=1, args=[None])


def test_unknown_kernel_and_argument_count():
    with pytest.raises(gpusim.SimulatorError, match="no kernel named 'nope'.*kernels: k"):
        gpusim.launch(kernel(""), "nope", 1, args=[None])
    with pytest.raises(gpusim.SimulatorError, match="takes 1 parameters, got 2"):
        gpusim.launch(kernel(""), "k", 1, args=[None, None])
    with pytest.raises(gpusim.SimulatorError, match="does not fit"):
        gpusim.launch(kernel("", params=".param .u32 p0"), "k", 1, args=[2 ** 40])
    with pytest.raises(gpusim.SimulatorError, match="64-bit pointer"):
        gpusim.launch(kernel("", params=".param .u32 p0"), "k", 1, args=[np.zeros(4)])


STORE_AT = """
 ld.param.u64 %rd1, [p0];
 mov.u32 %r1, %tid.x;
 mov.u32 %r2, %ctaid.x;
 mad.lo.u32 %r3, %r2, 64, %r1;
 mul.wide.u32 %rd2, %r3, 4;
 add.s64 %rd3, %rd1, %rd2;
 st.global.b32 [%rd3], %r3;"""


def test_out_of_bounds_store_names_cta_thread_line():
    out = np.zeros(100, np.int32)  # 2 CTAs x 64 threads write 128 elements
    with pytest.raises(gpusim.SimulatorError) as e:
        gpusim.launch(kernel(STORE_AT), "k", 2, num_warps=2, args=[out])
    msg = str(e.value)
    assert "out-of-bounds store of 4 bytes" in msg
    assert "0 bytes past the end of argument 0 (400 bytes)" in msg
    assert "CTA (1,0,0)" in msg and "thread (36,0,0)" in msg  # element 100 = CTA 1, thread 36
    assert "PTX line 16" in msg and "st.global.b32 [%rd3], %r3" in msg


def test_in_bounds_store_runs():
    out = np.zeros(128, np.int32)
    gpusim.launch(kernel(STORE_AT), "k", 2, num_warps=2, args=[out])
    np.testing.assert_array_equal(out, np.arange(128))


def test_misaligned_and_null_access():
    body = """
 ld.param.u64 %rd1, [p0];
 ld.global.b32 %r1, [%rd1+2];"""
    with pytest.raises(gpusim.SimulatorError, match="misaligned load of 4 bytes"):
        gpusim.launch(kernel(body), "k", 1, num_warps=1, args=[np.zeros(4, np.int32)])
    body = """
 ld.param.u64 %rd1, [p0];
 ld.global.b32 %r1, [%rd1];"""
    with pytest.raises(gpusim.SimulatorError, match="out-of-bounds load of 4 bytes at global address 0x0: "):
        gpusim.launch(kernel(body), "k", 1, num_warps=1, args=[None])


SHARED = ".shared .align 4 .b8 smem[1024];\n"


def shared_kernel(body):
    return (HEADER + SHARED + ".visible .entry k(.param .u64 p0)\n{\n .reg .pred %p<4>;\n"
            " .reg .b32 %r<16>;\n .reg .b64 %rd<16>;\n mov.u32 %r1, %tid.x;\n mov.u32 %r2, smem;\n"
            f"{body}\n ret;\n}}\n")


def test_race_read_after_write_without_barrier():
    # Thread t writes word t, then reads word t+1 (written by thread t+1):
    # a race unless a bar.sync separates them.
    body = """
 shl.b32 %r3, %r1, 2;
 add.u32 %r4, %r2, %r3;
 st.shared.b32 [%r4], %r1;
 {bar}
 ld.shared.b32 %r5, [%r4+4];"""
    with pytest.raises(gpusim.SimulatorError) as e:
        gpusim.launch(shared_kernel(body.format(bar="")), "k", 1, num_warps=2, args=[None])
    msg = str(e.value)
    assert "write/read race on shared memory byte 4 with thread 1" in msg
    assert "thread (0,0,0)" in msg and "ld.shared.b32 %r5, [%r4+4]" in msg
    c = gpusim.launch(shared_kernel(body.format(bar="bar.sync 0;")), "k", 1, num_warps=2, args=[None])
    assert c["barriers"] == 1
    # The check can be switched off.
    gpusim.launch(shared_kernel(body.format(bar="")), "k", 1, num_warps=2, args=[None], race_check=False)


def test_race_write_after_read_across_warps():
    # Every thread reads word 0, then thread 40 (warp 1) overwrites it.
    body = """
 ld.shared.b32 %r5, [smem];
 setp.eq.u32 %p1, %r1, 40;
 @%p1 st.shared.b32 [smem], %r1;"""
    with pytest.raises(gpusim.SimulatorError, match="read/write race on shared memory byte 0"):
        gpusim.launch(shared_kernel(body), "k", 1, num_warps=2, args=[None])


def test_write_write_race_and_benign_same_value():
    body = """
 st.shared.b32 [smem], {val};"""
    with pytest.raises(gpusim.SimulatorError, match="write/write race"):
        gpusim.launch(shared_kernel(body.format(val="%r1")), "k", 1, num_warps=1, args=[None])
    # Every thread storing the same value is not reported.
    gpusim.launch(shared_kernel(body.format(val="7")), "k", 1, num_warps=1, args=[None])


def test_shared_bank_conflicts():
    # 32 lanes reading consecutive words: 1 wavefront. Stride of 32 words: all
    # lanes hit bank 0 in different words: 32 wavefronts. Same word: broadcast.
    body = """
 mul.lo.u32 %r3, %r1, {stride};
 add.u32 %r4, %r2, %r3;
 ld.shared.b32 %r5, [%r4];"""
    counts = {}
    for stride in (0, 4, 8, 128):
        c = gpusim.launch(shared_kernel(body.format(stride=stride)).replace("smem[1024]", "smem[4096]"),
                          "k", 1, num_warps=1, args=[None])
        counts[stride] = c["shared_load_wavefronts"] / c["shared_load_requests"]
    assert counts == {0: 1, 4: 1, 8: 2, 128: 32}


def test_divergent_shuffle_and_barrier_are_errors():
    body = """
 setp.lt.u32 %p1, %r1, 16;
 @%p1 bra SKIP;
 shfl.sync.bfly.b32 %r5, %r1, 1, 31, -1;
SKIP:"""
    with pytest.raises(gpusim.SimulatorError, match="not all converged"):
        gpusim.launch(shared_kernel(body), "k", 1, num_warps=1, args=[None])
    body = """
 setp.lt.u32 %p1, %r1, 16;
 @%p1 bra SKIP;
 bar.sync 0;
SKIP:"""
    with pytest.raises(gpusim.SimulatorError, match="bar.sync in divergent code"):
        gpusim.launch(shared_kernel(body), "k", 1, num_warps=1, args=[None])


def test_endless_loop_hits_the_instruction_limit():
    body = "LOOP:\n bra LOOP;"
    with pytest.raises(gpusim.SimulatorError, match="instruction limit"):
        gpusim.launch(shared_kernel(body), "k", 1, num_warps=1, args=[None], instruction_limit=10_000)


def test_python_argument_errors():
    with pytest.raises(gpusim.SimulatorError, match="C-contiguous"):
        gpusim.launch(kernel(""), "k", 1, args=[np.zeros((4, 4))[:, 1]])
    with pytest.raises(gpusim.SimulatorError, match="expected an array"):
        gpusim.launch(kernel(""), "k", 1, args=["x"])
    with pytest.raises(gpusim.SimulatorError, match="num_warps"):
        gpusim.launch(kernel(""), "k", 1, num_warps=0, args=[None])
