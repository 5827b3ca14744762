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
