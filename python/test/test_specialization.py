"""Specialization on argument values (part of the cache key, as in Triton): ints equal to 1
are compiled in as constants, ints and pointers that are multiples of 16 carry a mark the
backends use, and do_not_specialize / do_not_specialize_on_alignment opt out."""
import numpy as np
import pytest

import tessel
import tessel.language as tl


def _scaled_copy(src, dst, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs * stride, mask=mask), mask=mask)


scaled_copy = tessel.jit(_scaled_copy)
scaled_copy_no_spec = tessel.jit(do_not_specialize=["stride", 2])(_scaled_copy)
scaled_copy_no_align = tessel.jit(do_not_specialize_on_alignment=[0, "dst"])(_scaled_copy)


def _launch(kernel, src, dst, n, stride):
    return kernel[(tessel.cdiv(n, 64),)](src, dst, n, stride, BLOCK=64)


def _function_signature(kernel) -> str:
    ttir = kernel.asm["ttir"]
    return next(line for line in ttir.splitlines() if "func.func" in line)


def test_int_one_becomes_a_constant(rand):
    src = rand(200, np.float32)
    dst = np.zeros(100, np.float32)
    k = _launch(scaled_copy, src, dst, 100, 1)
    np.testing.assert_array_equal(dst, src[:100])
    assert k.signature == ["*fp32", "*fp32", "i32"]  # stride is gone: compiled in
    dst2 = np.zeros(100, np.float32)
    k2 = _launch(scaled_copy, src, dst2, 100, 2)
    np.testing.assert_array_equal(dst2, src[:200:2])
    assert k2.signature == ["*fp32", "*fp32", "i32", "i32"]
    assert k is not k2


def test_multiples_of_16_are_marked(rand):
    src = rand(64 * 3, np.float32)  # the kernel reads src[3 * i] for i < 64
    dst = np.zeros(64, np.float32)
    assert src.ctypes.data % 16 == 0 and dst.ctypes.data % 16 == 0
    k = _launch(scaled_copy, src, dst, 64, 3)
    sig = _function_signature(k)
    # Both pointers and n=64 are multiples of 16; stride=3 is not.
    assert sig.count("tile.divisibility = 16") == 3, sig
    np.testing.assert_array_equal(dst, src[::3])
    k_odd = _launch(scaled_copy, src, dst, 63, 3)
    assert _function_signature(k_odd).count("tile.divisibility = 16") == 2
    assert k_odd is not k


def test_misaligned_pointer_is_not_marked(rand):
    buf = rand(65, np.float32)
    src = buf[1:]  # 4 bytes past a 16-byte boundary
    assert src.ctypes.data % 16 == 4
    dst = np.zeros(64, np.float32)
    k = _launch(scaled_copy, src, dst, 64, 1)
    sig = _function_signature(k)
    arg0 = sig.split("%arg0: ")[1].split(", %arg1")[0]
    assert "tile.divisibility" not in arg0 and "tile.divisibility" in sig, sig
    np.testing.assert_array_equal(dst, src)


def test_do_not_specialize(rand):
    src = rand(64, np.float32)
    dst = np.zeros(64, np.float32)
    k = _launch(scaled_copy_no_spec, src, dst, 64, 1)
    # stride (by name) and n (by index) stay run-time values without marks, even when 1 or a multiple of 16.
    assert k.signature == ["*fp32", "*fp32", "i32", "i32"]
    sig = _function_signature(k)
    assert sig.count("tile.divisibility = 16") == 2, sig
    np.testing.assert_array_equal(dst, src)


def test_do_not_specialize_on_alignment(rand):
    src = rand(64, np.float32)
    dst = np.zeros(64, np.float32)
    k = _launch(scaled_copy_no_align, src, dst, 64, 1)
    sig = _function_signature(k)
    # Only n keeps its mark; stride == 1 is still compiled in (value specialization stays on).
    assert sig.count("tile.divisibility = 16") == 1, sig
    assert k.signature == ["*fp32", "*fp32", "i32"]
    np.testing.assert_array_equal(dst, src)


def test_unknown_parameter_in_do_not_specialize():
    with pytest.raises(ValueError, match="not a parameter"):
        tessel.jit(do_not_specialize=["nope"])(_scaled_copy)
