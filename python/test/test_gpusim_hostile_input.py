"""Tessel's PTX simulator runs whatever PTX a user or a cache hands it: broken or
hostile input is a SimulatorError naming what is wrong, never gigabytes of
simulator state, a size or immediate that silently wraps, an endless run that
Ctrl-C cannot stop, or a nonsense number in a message."""
import os
import signal
import threading
import time

import numpy as np
import pytest

from tessel import gpusim

HEADER = ".version 8.7\n.target sm_80\n.address_size 64\n"


def kernel(body, decls="", params=".param .u64 p0", module=""):
    return (HEADER + module + f".visible .entry k({params})\n{{\n .reg .b32 %r<8>;\n .reg .b64 %rd<8>;\n"
            f"{decls}{body}\n ret;\n}}\n")


# Registers: ptxas gives a thread at most 255 32-bit registers, but PTX declares virtual
# registers; the simulator allows 131072 a kernel (the largest kernels of the tests declare about 25000:
# Tessel's fully unrolled reduction of a 256 x 1 fp64 block).

def test_a_huge_register_declaration_is_refused_before_it_is_made():
    with pytest.raises(gpusim.SimulatorError) as e:
        gpusim.launch(kernel("", " .reg .b32 %q<100000000>;\n"), "k", 1, num_warps=32, args=[None])
    msg = str(e.value)
    assert "PTX line 8" in msg
    assert "'.reg .b32 %q<100000000>' declares 100000000 registers" in msg
    assert "at most 131072 (16 before this)" in msg


def test_registers_just_past_the_bound_are_refused_and_at_it_run():
    # kernel() declares 16 registers: 131056 more is exactly the bound.
    out = np.zeros(1, np.uint32)
    body = " ld.param.u64 %rd1, [p0];\n mov.u32 %q131055, 7;\n st.global.u32 [%rd1], %q131055;"
    gpusim.launch(kernel(body, " .reg .b32 %q<131056>;\n"), "k", 1, num_warps=1, args=[out])
    assert out[0] == 7
    # The count is per kernel, over every declaration: the one past it is named.
    with pytest.raises(gpusim.SimulatorError,
                       match=r"PTX line 9: '.reg .pred %p<2>' declares 2 registers: "
                             r"a kernel may declare at most 131072 \(131071 before this\)"):
        gpusim.launch(kernel("", " .reg .b32 %q<131055>;\n .reg .pred %p<2>;\n"), "k", 1, num_warps=1, args=[None])


# Sizes: computed in 64 bits with overflow checks, so 4 GiB is not 0 bytes and 4 GiB + 4 not 4.

@pytest.mark.parametrize("decl,needs", [
    (" .shared .b8 a[2147483648];\n", 2147483648),
    (" .shared .b8 a[4294967296];\n", 4294967296),
    (" .shared .b8 a[4294967300];\n", 4294967300),
    (" .shared .b32 a[65536][16384];\n", 4294967296),  # dimensions and element size multiplied
    (" .shared .b8 a[2147483648];\n .shared .b8 b[2147483648];\n", 4294967296),  # a sum that wrapped
])
def test_shared_arrays_of_4_gib_are_refused(decl, needs):
    with pytest.raises(gpusim.SimulatorError,
                       match=f"the kernel needs {needs} bytes of shared memory per CTA, more than 228 KiB"):
        gpusim.launch(kernel("", decl), "k", 1, num_warps=1, args=[None])


@pytest.mark.parametrize("decl,needs", [
    (" .local .b8 a[2147483648];\n", 2147483648),
    (" .local .b8 a[4294967296];\n", 4294967296),
    (" .local .b8 a[4294967300];\n", 4294967312),  # local memory is laid out in 16-byte units
    (" .local .b64 a[536870912];\n", 4294967296),
    (" .local .align 8 .b8 a[524289];\n", 524304),  # one byte past ptxas's 512 KiB
])
def test_local_arrays_past_512_kib_are_refused(decl, needs):
    with pytest.raises(gpusim.SimulatorError,
                       match=f"the kernel needs {needs} bytes of local memory per thread, more than 512 KiB"):
        gpusim.launch(kernel("", decl), "k", 1, num_warps=1, args=[None])


def test_local_memory_at_512_kib_runs():
    body = (" mov.u64 %rd2, a;\n mov.u32 %r1, 5;\n st.local.u32 [%rd2+524284], %r1;\n"
            " ld.local.u32 %r2, [%rd2+524284];\n ld.param.u64 %rd1, [p0];\n st.global.u32 [%rd1], %r2;")
    out = np.zeros(1, np.uint32)
    gpusim.launch(kernel(body, " .local .align 4 .b8 a[524288];\n"), "k", 1, num_warps=1, args=[out])
    assert out[0] == 5


@pytest.mark.parametrize("module,match", [
    # 2^62 x 4 bytes is 2^64: it wrapped to an empty variable.
    (".global .b32 g[4611686018427387904][4];\n", "array 'g' has more than 2\\^64 bytes"),
    (".global .b8 g[1073741825];\n", ".global variable 'g' of 1073741825 bytes: the module's .global "
                                     "variables would need more than 1073741824 bytes"),
    (".const .b8 c[65536];\n.const .b8 d[4];\n", ".const variable 'd' of 4 bytes: the module's .const "
                                                 "variables would need more than 65536 bytes"),
])
def test_global_and_const_variables_are_bounded(module, match):
    line = 3 + module.count("\n")  # the last declaration's
    with pytest.raises(gpusim.SimulatorError, match=f"PTX line {line}: " + match):
        gpusim.launch(kernel("", module=module), "k", 1, num_warps=1, args=[None])


def test_parameter_arrays_do_not_wrap():
    with pytest.raises(gpusim.SimulatorError,
                       match="parameter 'q' ends past 32764 bytes, CUDA's limit on kernel parameters"):
        gpusim.launch(kernel("", params=".param .align 4 .b8 q[4294967300]"), "k", 1, num_warps=1, args=[None])
    with pytest.raises(gpusim.SimulatorError, match="bad alignment '4294967296'"):
        gpusim.launch(kernel("", " .shared .align 4294967296 .b8 a[4];\n"), "k", 1, num_warps=1, args=[None])


# Immediates: a literal must fit its operand's type, signed or unsigned: [-2^(w-1), 2^w - 1].

@pytest.mark.parametrize("inst,match", [
    ("mov.u32 %r1, 4294967296", "immediate 4294967296 does not fit a .u32 operand"),
    ("mov.u32 %r1, 0x1ffffffff", "immediate 8589934591 does not fit a .u32 operand"),
    ("mov.u32 %r1, 100000000000000000000", "integer literal '100000000000000000000' does not fit in 64 bits"),
    ("mov.u32 %r1, -2147483649", "immediate -2147483649 does not fit a .u32 operand"),
    ("mov.s32 %r1, 4294967296", "immediate 4294967296 does not fit a .s32 operand"),
    ("add.s32 %r1, %r2, -4294967296", "immediate -4294967296 does not fit a .s32 operand"),
    ("and.b16 %rs1, %rs1, 65536", "immediate 65536 does not fit a .b16 operand"),
    ("shl.b32 %r1, %r2, 4294967296", "immediate 4294967296 does not fit a .u32 operand"),
    ("setp.lt.u32 %p1, %r1, 0x100000000", "immediate 4294967296 does not fit a .u32 operand"),
    ("mov.u64 %rd1, 18446744073709551616", "integer literal '18446744073709551616' does not fit in 64 bits"),
    ("mov.s64 %rd1, -9223372036854775809", "integer literal '-9223372036854775809' does not fit in 64 bits"),
    ("mov.u32 %r1, 1e20", "floating-point immediate for a .u32 operand"),
])
def test_out_of_range_immediates_are_parse_errors(inst, match):
    decls = " .reg .b16 %rs<2>;\n .reg .pred %p<2>;\n"
    with pytest.raises(gpusim.SimulatorError, match="PTX line 10: " + match):
        gpusim.launch(kernel(f" {inst};", decls), "k", 1, num_warps=1, args=[None])


@pytest.mark.parametrize("inst,value", [
    ("mov.u32 %r1, -1", 0xFFFFFFFF),
    ("mov.u32 %r1, -2147483648", 0x80000000),
    ("mov.s32 %r1, 0xffffffff", 0xFFFFFFFF),
    ("mov.b32 %r1, 4294967295", 0xFFFFFFFF),
    ("mov.b32 %r1, 0f3F800000", 0x3F800000),
    ("mov.u32 %r1, 0", 0),
    ("add.s32 %r1, %r1, -2147483648", 0x80000000),
])
def test_immediates_that_fit_their_type_are_kept(inst, value):
    body = f" mov.u32 %r1, 0;\n {inst};\n ld.param.u64 %rd1, [p0];\n st.global.u32 [%rd1], %r1;"
    out = np.full(1, 12345, np.uint32)
    gpusim.launch(kernel(body), "k", 1, num_warps=1, args=[out])
    assert out[0] == value


@pytest.mark.parametrize("inst,value", [
    ("mov.u64 %rd2, -1", 2 ** 64 - 1),
    ("mov.u64 %rd2, 18446744073709551615", 2 ** 64 - 1),
    ("mov.s64 %rd2, -9223372036854775808", 2 ** 63),
    ("mov.b64 %rd2, 0d3FF0000000000000", 0x3FF0000000000000),
])
def test_64_bit_immediates_are_kept(inst, value):
    body = f" {inst};\n ld.param.u64 %rd1, [p0];\n st.global.u64 [%rd1], %rd2;"
    out = np.zeros(1, np.uint64)
    gpusim.launch(kernel(body), "k", 1, num_warps=1, args=[out])
    assert int(out[0]) == value


# Endless loops: a wall-clock limit next to the instruction limit, and Ctrl-C.

ENDLESS = HEADER + ".visible .entry k()\n{\nLOOP:\n bra LOOP;\n}\n"


@pytest.mark.parametrize("grid,threads", [(1, 1), (4, 2)])
def test_an_endless_loop_stops_at_the_time_limit(grid, threads):
    start = time.monotonic()
    with pytest.raises(gpusim.SimulatorError) as e:
        gpusim.launch(ENDLESS, "k", grid, num_warps=2, instruction_limit=10 ** 15, time_limit=0.3,
                      threads=threads)
    elapsed = time.monotonic() - start
    msg = str(e.value)
    assert "the simulation ran past its wall-clock limit of 0.3 s (time_limit" in msg
    assert "PTX line 7: 'bra LOOP;'" in msg
    assert 0.3 <= elapsed < 3, elapsed


def test_the_instruction_limit_names_itself():
    with pytest.raises(gpusim.SimulatorError,
                       match=r"reached its instruction limit of 10000 warp instructions \(instruction_limit"):
        gpusim.launch(ENDLESS, "k", 1, num_warps=1, instruction_limit=10_000)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "10", True])
def test_time_limit_must_be_a_positive_number(bad):
    with pytest.raises(gpusim.SimulatorError, match="time_limit must be a positive number of seconds or None"):
        gpusim.launch(ENDLESS, "k", 1, num_warps=1, time_limit=bad)


@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_interrupts_a_launch_within_a_second(threads):
    # The handler runs on the main thread; the signal comes from another one,
    # as a terminal's Ctrl-C arrives while the launch is running.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            gpusim.launch(ENDLESS, "k", 4, num_warps=4, instruction_limit=10 ** 15, time_limit=20,
                          threads=threads)
        elapsed = time.monotonic() - start
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert elapsed < 1.5, elapsed
    # The simulator is usable afterwards.
    out = np.zeros(1, np.uint32)
    gpusim.launch(kernel(" ld.param.u64 %rd1, [p0];\n mov.u32 %r1, 3;\n st.global.u32 [%rd1], %r1;"), "k", 1,
                  num_warps=1, args=[out])
    assert out[0] == 3


# Messages: an access that starts inside an array and runs off its end.

def test_a_v4_store_straddling_the_end_reports_its_real_offset():
    body = " ld.param.u64 %rd1, [p0];\n st.global.v4.u32 [%rd1+16], {%r1, %r1, %r1, %r1};"
    with pytest.raises(gpusim.SimulatorError) as e:
        gpusim.launch(kernel(body), "k", 1, num_warps=1, args=[np.zeros(6, np.uint32)])  # 24 bytes
    msg = str(e.value)
    assert "out-of-bounds store of 16 bytes" in msg
    assert "is byte 16 of argument 0 (24 bytes): the 16-byte access reaches 8 bytes past its end" in msg
    assert "18446744073709551608" not in msg


def test_accesses_starting_past_the_end_say_how_far():
    body = " ld.param.u64 %rd1, [p0];\n ld.global.v2.u32 {%r1, %r2}, [%rd1+40];"
    with pytest.raises(gpusim.SimulatorError, match=r"is 16 bytes past the end of argument 0 \(24 bytes\)"):
        gpusim.launch(kernel(body), "k", 1, num_warps=1, args=[np.zeros(6, np.uint32)])
    body = " ld.param.u64 %rd1, [p0];\n atom.global.add.u64 %rd2, [%rd1+16], 1;"
    with pytest.raises(gpusim.SimulatorError,
                       match=r"is byte 16 of argument 0 \(20 bytes\): the 8-byte access reaches 4 bytes past its end"):
        gpusim.launch(kernel(body), "k", 1, num_warps=1, args=[np.zeros(5, np.uint32)])
