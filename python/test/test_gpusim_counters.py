"""The simulator's shared-memory counters on the two classic ways to read a column of a 32x32 fp32 tile: stored
row-major, the 32 lanes of a warp hit one bank in 32 different words (32 wavefronts per request); with the XOR
swizzle (column ^ row), they hit 32 different banks (1 wavefront). Expected counts follow from the bank rule: 32
banks of 4 bytes, one wavefront per distinct word a bank serves."""
import numpy as np
import pytest

from tessel import gpusim

PTX = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{{
 .reg .pred %p;
 .reg .b32 %r<12>; .reg .b64 %rd<4>;
 .shared .align 16 .b8 tile[4096];
 mov.u32 %r0, %tid.x;                 // lane = row
 mov.u32 %r1, 0;                      // column loop
 // Fill the tile: element (row, col) = row * 32 + col, at its (possibly swizzled) place.
FILL:
 {place}
 mad.lo.u32 %r4, %r0, 32, %r1;
 st.shared.b32 [%r3], %r4;
 add.u32 %r1, %r1, 1;
 setp.lt.u32 %p, %r1, 32;
 @%p bra FILL;
 bar.sync 0;
 // Read column 5: lane r reads element (r, 5).
 mov.u32 %r1, 5;
 {place}
 ld.shared.b32 %r5, [%r3];
 ld.param.u64 %rd0, [out];
 mul.wide.u32 %rd1, %r0, 4;
 add.s64 %rd2, %rd0, %rd1;
 st.global.b32 [%rd2], %r5;
 ret;
}}
"""
ROW_MAJOR = "mad.lo.u32 %r2, %r0, 32, %r1;\n shl.b32 %r3, %r2, 2;"
SWIZZLED = "xor.b32 %r6, %r1, %r0;\n mad.lo.u32 %r2, %r0, 32, %r6;\n shl.b32 %r3, %r2, 2;"


@pytest.mark.parametrize("place,wavefronts", [(ROW_MAJOR, 32), (SWIZZLED, 1)], ids=["row-major", "swizzled"])
def test_column_read_bank_conflicts(place, wavefronts):
    out = np.zeros(32, np.int32)
    counters = gpusim.launch(PTX.format(place=place), "k", 1, num_warps=1, args=[out])
    np.testing.assert_array_equal(out, np.arange(32) * 32 + 5)
    # The column read is the last shared load: 1 request; the 32 fill stores were 32 requests of their own.
    assert counters["shared_load_requests"] == 1
    assert counters["shared_load_wavefronts"] == wavefronts
    assert counters["shared_store_requests"] == 32
    assert counters["shared_store_wavefronts"] == 32 * wavefronts
    # Bank conflicts: every wavefront past the first of each (single-phase, 4-byte) request.
    assert counters["shared_load_bank_conflicts"] == wavefronts - 1
    assert counters["shared_store_bank_conflicts"] == 32 * (wavefronts - 1)
