"""Python ints are typed by two rules in Triton 3.6, each written once in tessel: a literal inside a kernel is i32 if
it fits, else u32, else i64 (the C++ builder's literalType, _C.literal_type); an int passed as an argument is i32,
else i64, else u64 (the driver's argument_type). Checked against Triton's interpreter."""
import os

os.environ["TRITON_INTERPRET"] = "1"  # read by triton when a kernel is decorated; only the tests import triton

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import triton as real_triton  # noqa: E402
import triton.language as real_tl  # noqa: E402

import tessel  # noqa: E402
import tessel.language as tl  # noqa: E402
from tessel import _C  # noqa: E402
from tessel.runtime import driver  # noqa: E402


@pytest.mark.parametrize("value, literal, argument", [
    (0, "i32", "i32"), (-2**31, "i32", "i32"), (2**31 - 1, "i32", "i32"),
    (2**31, "u32", "i64"), (2**32 - 1, "u32", "i64"), (2**32, "i64", "i64"), (-2**31 - 1, "i64", "i64"),
    (2**63 - 1, "i64", "i64"), (True, "i1", "i1"), (1.5, "fp32", "fp32"),
])
def test_the_two_rules(value, literal, argument):
    assert _C.literal_type(value) == literal
    assert driver.argument_type(value) == argument


@real_triton.jit
def _triton_carried(out_ptr):
    acc = 4294967295  # 2**32 - 1: a u32 literal, so the loop wraps it
    for _ in range(2):
        acc = acc + 1
    real_tl.store(out_ptr, acc)


@tessel.jit
def _tessel_carried(out_ptr):
    acc = 4294967295  # 2**32 - 1: a u32 literal, so the loop wraps it
    for _ in range(2):
        acc = acc + 1
    tl.store(out_ptr, acc)


def test_a_literal_carried_by_a_loop_has_the_literal_type():
    expected = torch.zeros(1, dtype=torch.int64)
    _triton_carried[(1,)](expected)
    out = np.zeros(1, np.int64)
    _tessel_carried[(1,)](out)
    assert out[0] == expected.item() == 1  # (2**32 - 1) + 2 in uint32


@real_triton.jit
def _triton_arg(x, out_ptr):
    real_tl.store(out_ptr, x + 1)


@tessel.jit
def _tessel_arg(x, out_ptr):
    tl.store(out_ptr, x + 1)


@pytest.mark.parametrize("value", [2**31 - 1, 2**32 - 1, 2**40])
def test_an_int_argument_has_the_argument_type(value):
    # 2**31 - 1 is an i32 argument: + 1 wraps; 2**32 - 1 is i64 (not u32, as a literal would be): + 1 does not.
    expected = torch.zeros(1, dtype=torch.int64)
    _triton_arg[(1,)](value, expected)
    out = np.zeros(1, np.int64)
    _tessel_arg[(1,)](value, out)
    assert out[0] == expected.item()
