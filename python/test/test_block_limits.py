"""A block holds at most 2^20 elements (Triton's TRITON_MAX_TENSOR_NUMEL), whichever operation makes it: a bigger
one is a compile error at the kernel's line naming the operation and the limit, not a kernel that runs for a minute.
Every case is also rejected by Triton's interpreter (the oracle), and blocks of exactly 2^20 elements work."""
import os
import types

import numpy as np
import pytest

os.environ["TRITON_INTERPRET"] = "1"  # read by triton when a kernel is decorated; only the tests import triton
torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
import triton.language as ttl  # noqa: E402

import tessel  # noqa: E402
import tessel.language as tl  # noqa: E402

LIMIT = 2 ** 20


def _too_big_kernel(x_ptr, CASE: tl.constexpr):
    if CASE == "arange":
        v = tl.arange(0, 2 ** 30)
    elif CASE == "full":
        v = tl.full((2048, 1024), 1.0, tl.float32)
    elif CASE == "zeros":
        v = tl.zeros((2 ** 21,), tl.int32)
    elif CASE == "broadcast_to":
        v = tl.broadcast_to(tl.arange(0, 1024)[None, :], (2048, 1024))
    elif CASE == "binary":
        v = tl.arange(0, 2048)[:, None] + tl.arange(0, 1024)[None, :]
    elif CASE == "where":
        v = tl.where(tl.arange(0, 2048)[:, None] > 3, tl.arange(0, 1024)[None, :], 0)
    elif CASE == "reshape":
        v = tl.reshape(tl.load(x_ptr), (2 ** 21,))
    elif CASE == "pointer":
        v = tl.load(x_ptr + tl.arange(0, 2048)[:, None] * 1024 + tl.arange(0, 1024)[None, :])
    else:
        v = tl.dot(tl.zeros((65536, 16), tl.float32), tl.zeros((16, 65536), tl.float32))
    tl.store(x_ptr, tl.sum(tl.reshape(v, (v.numel,)), 0))


# case -> the start of the kernel line its error must show
CASES = {
    "arange": "v = tl.arange(0, 2 ** 30)",
    "full": "v = tl.full((2048, 1024)",
    "zeros": "v = tl.zeros((2 ** 21,)",
    "broadcast_to": "v = tl.broadcast_to(",
    "binary": "v = tl.arange(0, 2048)[:, None] + ",
    "where": "v = tl.where(",
    "reshape": "v = tl.reshape(",
    "pointer": "v = tl.load(x_ptr + ",
    "dot": "v = tl.dot(",
}


def _with_language(fn, language):
    scope = dict(fn.__globals__, tl=language)
    clone = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__annotations__ = dict(fn.__annotations__)
    return clone


_tessel_too_big = tessel.jit(_too_big_kernel)
_triton_too_big = triton.jit(_with_language(_too_big_kernel, ttl))


@pytest.mark.parametrize("case", CASES)
def test_block_over_the_limit_is_a_compile_error(case):
    with pytest.raises(Exception, match="numel|exceeds"):
        _triton_too_big[(1,)](torch.zeros(1, dtype=torch.float32), CASE=case)
    with pytest.raises(tessel.CompilationError) as info:
        _tessel_too_big[(1,)](np.zeros(1, np.float32), CASE=case)
    error = info.value
    assert "1048576 (2^20) elements per block" in error.error_message
    assert error.file == __file__ and error.source_line.strip().startswith(CASES[case]), str(error)


@tessel.jit
def _largest_blocks_kernel(out_ptr, scale_ptr):
    offs = tl.arange(0, 2 ** 20)
    a = tl.reshape(offs, (1024, 1024))
    b = tl.broadcast_to(tl.load(scale_ptr + tl.arange(0, 1024))[None, :], (1024, 1024))
    c = a + b + tl.full((1024, 1024), 1, tl.int32)
    tl.store(out_ptr + tl.reshape(offs, (1024, 1024)), c)


def test_blocks_of_exactly_the_limit_work(monkeypatch):
    # The language's limit, reached on the CPU; GPU backends stop sooner (registers per thread, shared memory),
    # with their own compile errors.
    monkeypatch.setattr(tessel.knobs, "target", "cpu")
    scale = np.arange(1024, dtype=np.int32) * 7
    out = np.zeros(LIMIT, np.int32)
    _largest_blocks_kernel[(1,)](out, scale)
    expected = np.arange(LIMIT, dtype=np.int32).reshape(1024, 1024) + scale[None, :] + 1
    np.testing.assert_array_equal(out.reshape(1024, 1024), expected)
