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


SHORT_POINTERS = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
 .local .align 4 .b8 depot[16];
 .shared .align 4 .b8 buf[16];
 .reg .b32 %r<8>; .reg .b64 %rd<4>;
 mov.u32 %r0, depot;            // 32-bit local and shared addresses (LLVM's short pointers)
 add.s32 %r1, %r0, -4;          // one element before the array ...
 st.local.u32 [%r1+8], 11;      // ... plus 8 bytes: depot[1]
 mov.u32 %r2, buf;
 add.s32 %r3, %r2, -8;
 st.shared.u32 [%r3+12], 22;    // buf[1]
 ld.local.u32 %r4, [%r0+4];
 ld.shared.u32 %r5, [%r2+4];
 ld.param.u64 %rd0, [out];
 st.global.v2.u32 [%rd0], {%r4, %r5};
 ret;
}
"""


def test_32_bit_addresses_wrap_in_32_bits():
    # [reg + offset] with a 32-bit register is computed in 32 bits: a register holding an address minus 4 (below
    # zero, so a large unsigned 32-bit value) plus an offset of 8 is the address plus 4, not 2^32 past it.
    out = np.zeros(2, np.uint32)
    gpusim.launch(SHORT_POINTERS, "k", 1, block=1, args=[out])
    np.testing.assert_array_equal(out, [11, 22])
