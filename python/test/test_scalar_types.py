"""The element types come from one C++ table (tessel._C.scalar_types()): the DSL's dtypes, the driver's readers of
numpy and torch arrays and the AOT tool's C types are all built from it. Checked here against numpy's and torch's
own descriptions of their dtypes."""
import numpy as np
import pytest
import torch

import tessel as triton
import tessel.language as tl
from tessel import _C
from tessel.tools import compile as aot

# (numpy dtype, torch dtype, tessel.language dtype) -> the type string, written out independently of the table.
CASES = [
    (np.bool_, torch.bool, tl.int1, "i1"), (np.int8, torch.int8, tl.int8, "i8"),
    (np.int16, torch.int16, tl.int16, "i16"), (np.int32, torch.int32, tl.int32, "i32"),
    (np.int64, torch.int64, tl.int64, "i64"), (np.uint8, torch.uint8, tl.uint8, "u8"),
    (np.uint16, torch.uint16, tl.uint16, "u16"), (np.uint32, torch.uint32, tl.uint32, "u32"),
    (np.uint64, torch.uint64, tl.uint64, "u64"), (None, torch.float8_e4m3fn, tl.float8e4nv, "fp8e4nv"),
    (None, torch.float8_e5m2, tl.float8e5, "fp8e5"), (None, None, tl.float8e4b15, "fp8e4b15"),
    (None, torch.float8_e4m3fnuz, tl.float8e4b8, "fp8e4b8"), (None, torch.float8_e5m2fnuz, tl.float8e5b16, "fp8e5b16"),
    (np.float16, torch.float16, tl.float16, "fp16"),
    (None, torch.bfloat16, tl.bfloat16, "bf16"), (np.float32, torch.float32, tl.float32, "fp32"),
    (np.float64, torch.float64, tl.float64, "fp64"),
]


@triton.jit
def _first(x_ptr, out_ptr):
    tl.store(out_ptr, tl.load(x_ptr).to(tl.float64))


def test_the_table_lists_every_type_once():
    names = [t["name"] for t in _C.scalar_types()]
    assert names == [case[3] for case in CASES]


@pytest.mark.parametrize("np_dtype, torch_dtype, tl_dtype, name", CASES)
def test_every_reader_agrees(np_dtype, torch_dtype, tl_dtype, name):
    assert tl_dtype.ir_name == name
    info = next(t for t in _C.scalar_types() if t["name"] == name)
    out = np.zeros(1, np.float64)
    if torch_dtype is None:
        # No torch type (Triton's fp8e4b15): uint8 codes reinterpreted; 0x78 is 1.0 (exponent 15 = the bias).
        assert info["bits"] == 8
        t = triton.reinterpret(torch.full((4,), 0x78, dtype=torch.uint8), tl_dtype)
    else:
        assert info["bits"] == torch.empty(0, dtype=torch_dtype).element_size() * 8 or name == "i1"
        t = torch.ones(4, dtype=torch_dtype)
    k = _first[(1,)](t, out)
    assert k.signature[0] == "*" + name and out[0] == 1
    if np_dtype is not None:
        a = np.ones(4, np_dtype)
        assert info["numpy_typestr"] == a.dtype.str[1:]
        k = _first[(1,)](a, out)
        assert k.signature[0] == "*" + name and out[0] == 1
    # The AOT tool's C type has the element's size.
    sizes = {"bool": 1, "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4,
             "int64_t": 8, "uint64_t": 8, "float": 4, "double": 8}
    assert sizes[aot._C_TYPES[name]] == max(1, info["bits"] // 8)
