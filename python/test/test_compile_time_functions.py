"""Compile-time helpers of Triton's language on every target: @constexpr_function, tl.target_info (the kernel's own
target), must_use_result, while tl.condition(...), TRITON_MAX_TENSOR_NUMEL; checked by what the kernels compute
(numpy) and by the errors bad uses get."""
import math

import numpy as np
import pytest

import tessel as triton
import tessel.language as tl
from tessel.knobs import knobs


@triton.constexpr_function
def _log2(n):
    return int(math.log2(n))


@triton.constexpr_function
def _tile_for(dtype, width):
    # A dtype and a number in, a number out: the function sees plain values.
    return width // dtype.primitive_bitwidth


@triton.jit
def _bits_kernel(out, N: tl.constexpr):
    LOG: tl.constexpr = _log2(N)
    tl.static_assert(LOG == 4)
    offs = tl.arange(0, N)
    lanes: tl.constexpr = _tile_for(out.dtype.element_ty, 128)
    tl.store(out + offs, (offs >> LOG) + offs * lanes)


def test_constexpr_function_runs_at_compile_time():
    out = np.zeros(16, np.int32)
    _bits_kernel[(1,)](out, 16)
    np.testing.assert_array_equal(out, np.arange(16) * 4)
    assert _log2(1024) == 10  # host code calls it as a function
    assert _log2(tl.constexpr(8)) == 3


@triton.constexpr_function
def _twice(x):
    return 2 * x


@triton.jit
def _tensor_into_constexpr_function(out):
    tl.store(out, _twice(tl.load(out)))


def test_constexpr_function_refuses_tensors():
    with pytest.raises(triton.CompilationError, match="constexpr function"):
        _tensor_into_constexpr_function[(1,)](np.zeros(1, np.int32))


_SCALED_MODULE = """
import tessel as triton
import tessel.language as tl


@triton.constexpr_function
def scale():
    return {value}


@triton.jit
def scaled(out):
    tl.store(out, scale())
"""


def test_constexpr_function_source_is_part_of_the_key(tmp_path, monkeypatch):
    # Two modules whose kernels have the same source and whose constexpr functions differ: the second must not
    # reuse the first's kernel from the on-disk cache.
    import importlib
    monkeypatch.syspath_prepend(str(tmp_path))
    results = []
    for i, value in enumerate((3, 7)):
        (tmp_path / f"_scaled_{i}.py").write_text(_SCALED_MODULE.format(value=value))
        module = importlib.import_module(f"_scaled_{i}")
        out = np.zeros(1, np.int32)
        module.scaled[(1,)](out)
        results.append(int(out[0]))
    assert results == [3, 7]


@triton.jit
def _target_kernel(out):
    tl.store(out + 0, tl.target_info.is_cuda())
    tl.store(out + 1, tl.target_info.cuda_capability_geq(8))
    tl.store(out + 2, tl.target_info.cuda_capability_geq(9))
    tl.store(out + 3, tl.target_info.is_hip() or tl.target_info.is_hip_cdna3() or tl.target_info.is_hip_cdna4())
    if tl.target_info.cuda_capability_geq(9, 0):
        tl.store(out + 4, 90)
    elif tl.target_info.is_cuda():
        tl.store(out + 4, 80)
    else:
        tl.store(out + 4, -1)


def test_target_info_answers_for_the_kernel_target(target):
    out = np.zeros(5, np.int32)
    _target_kernel[(1,)](out)
    want = {"cpu": [0, 0, 0, 0, -1], "sim:sm_80": [1, 1, 0, 0, 80], "sim:sm_90a": [1, 1, 1, 0, 90],
            "sim:gfx90a": [0, 0, 0, 1, -1], "sim:gfx942": [0, 0, 0, 1, -1], "sim:gfx950": [0, 0, 0, 1, -1]}[target]
    np.testing.assert_array_equal(out, want)


def test_target_info_follows_the_compiled_target():
    # tessel.compile for another target than knobs.target: the functions answer for the one being compiled.
    from tessel.compiler import ASTSource
    other, want, not_want = ("cpu", "-1", "90") if knobs.target == "sim:sm_90a" else ("sim:sm_90a", "90", "-1")
    text = triton.compile(ASTSource(_target_kernel, signature={"out": "*i32"}), target=other).asm["ttir"]
    assert f"arith.constant {want} " in text and f"arith.constant {not_want} " not in text, text


@triton.jit
def _countdown_kernel(out, n):
    i = n
    total = 0
    while tl.condition(i > 0, disable_licm=True):
        total += i
        i -= 1
    tl.store(out, total)


@triton.jit
def _countdown_with_break(out, n, stop):
    i = n
    total = 0
    while tl.condition(i > 0):
        if i == stop:
            break
        total += i
        i -= 1
    tl.store(out, total)


def test_condition_wraps_a_while_condition():
    out = np.zeros(1, np.int32)
    _countdown_kernel[(1,)](out, 10)
    assert out[0] == 55
    _countdown_with_break[(1,)](out, 10, 7)
    assert out[0] == 10 + 9 + 8


@triton.jit
def _range_hint_kernel(out, n):
    total = 0
    for i in tl.range(0, n, disable_licm=True):
        total += i
    tl.store(out, total)


def test_range_accepts_disable_licm():
    out = np.zeros(1, np.int32)
    _range_hint_kernel[(1,)](out, 6)
    assert out[0] == 15


@triton.must_use_result("Assign it.")
@triton.jit
def _pure(x):
    return x + 1


@triton.jit
def _drops_result(out):
    _pure(tl.load(out))


@triton.jit
def _uses_result(out):
    tl.store(out, _pure(tl.load(out)))


def test_must_use_result():
    out = np.array([4], np.int32)
    _uses_result[(1,)](out)
    assert out[0] == 5
    with pytest.raises(triton.CompilationError, match="not being used. Assign it."):
        _drops_result[(1,)](out)


@triton.jit
def _block(out, N: tl.constexpr):
    tl.store(out + tl.arange(0, N), tl.arange(0, N))


def test_max_tensor_numel_is_the_builder_limit():
    assert tl.TRITON_MAX_TENSOR_NUMEL == 2**20
    with pytest.raises(triton.CompilationError, match=str(2 * tl.TRITON_MAX_TENSOR_NUMEL)):
        _block.warmup(tl.int32, 2 * tl.TRITON_MAX_TENSOR_NUMEL)
    if knobs.target == "cpu":  # a block of the maximum compiles (the simulators would take long to run it)
        out = np.zeros(tl.TRITON_MAX_TENSOR_NUMEL, np.int32)
        _block[(1,)](out, tl.TRITON_MAX_TENSOR_NUMEL)
        np.testing.assert_array_equal(out, np.arange(tl.TRITON_MAX_TENSOR_NUMEL))
