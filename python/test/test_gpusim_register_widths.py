"""Values narrower than their register: the PTX ISA extends them to the register's width (sign for .s8, zero for
.u8), and later instructions read the register at their own width. Hand-derived from the ISA's cvt and ld rules."""
import numpy as np

from tessel import gpusim

PTX = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 inp, .param .u64 out)
{
 .reg .b16 %h<4>; .reg .b32 %r<8>; .reg .b64 %rd<6>;
 mov.u32 %r0, %tid.x;
 ld.param.u64 %rd0, [inp]; ld.param.u64 %rd1, [out];
 mul.wide.u32 %rd2, %r0, 4; add.s64 %rd3, %rd0, %rd2;
 ld.global.b32 %r1, [%rd3];
 cvt.s8.s32 %h0, %r1;           // low byte, sign-extended into the 16-bit register
 cvt.u8.s32 %h1, %r1;           // low byte, zero-extended
 mul.wide.s16 %r2, %h0, %h0;    // reads %h0 as a signed 16-bit value
 cvt.s32.s16 %r3, %h1;
 mul.wide.u32 %rd2, %r0, 8; add.s64 %rd4, %rd1, %rd2;
 st.global.v2.b32 [%rd4], {%r2, %r3};
 ret;
}
"""


def test_cvt_to_8_bits_extends_to_the_register():
    x = np.arange(-128, 128, 8, dtype=np.int32)
    out = np.zeros((x.size, 2), np.int32)
    gpusim.launch(PTX, "k", 1, block=x.size, args=[x, out])
    low = x.astype(np.int8).astype(np.int32)
    np.testing.assert_array_equal(out[:, 0], low * low)
    np.testing.assert_array_equal(out[:, 1], x & 0xff)
