"""Tessel's PTX simulator runs whatever PTX a user or a cache hands it: broken or
hostile input is a SimulatorError naming what is wrong, never gigabytes of
simulator state, a size or immediate that silently wraps, an endless run that
Ctrl-C cannot stop, or a nonsense number in a message."""
import numpy as np
import pytest

from tessel import gpusim

HEADER = ".version 8.7\n.target sm_80\n.address_size 64\n"


def kernel(body, decls="", params=".param .u64 p0", module=""):
    return (HEADER + module + f".visible .entry k({params})\n{{\n .reg .b32 %r<8>;\n .reg .b64 %rd<8>;\n"
            f"{decls}{body}\n ret;\n}}\n")


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
