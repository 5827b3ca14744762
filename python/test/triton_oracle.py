"""OpenAI Triton 3.6's interpreter as the semantic oracle: one kernel source, run by Triton (TRITON_INTERPRET=1,
torch CPU tensors) and by tessel on the current target. Import this module before anything imports triton."""
import os
import types

import numpy as np
import pytest

os.environ["TRITON_INTERPRET"] = "1"  # read when Triton decorates a kernel
torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
import triton.language as ttl  # noqa: E402

import tessel  # noqa: E402
import tessel.language  # noqa: E402


def with_language(fn, language):
    """`fn` with the global `tl` bound to `language` (the same code object, so the same source and lines)."""
    scope = dict(fn.__globals__, tl=language)
    clone = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__annotations__ = dict(fn.__annotations__)
    return clone


class Both:
    """A kernel compiled by Triton (its interpreter) and by tessel. `run(grid, *args, **constexprs)` takes numpy
    arrays and scalars, launches both on copies of the arrays and returns (Triton's arrays, tessel's arrays), the
    arrays after the launch in argument order."""

    def __init__(self, fn):
        self.triton = triton.jit(with_language(fn, ttl))
        self.tessel = tessel.jit(fn)

    def run(self, grid, *args, **constexprs):
        ref_args = [torch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in args]
        self.triton[grid](*ref_args, **{k: _for_triton(v) for k, v in constexprs.items()})
        got_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        self.tessel[grid](*got_args, **constexprs)
        return ([a.numpy() for a in ref_args if isinstance(a, torch.Tensor)],
                [a for a in got_args if isinstance(a, np.ndarray)])


    def last(self, grid, *args, **constexprs):
        """`run`, returning only the last array argument (the output) of each."""
        want, got = self.run(grid, *args, **constexprs)
        return want[-1], got[-1]


def _for_triton(value):
    """A compile-time argument as Triton's kernels take it: tessel's dtypes become Triton's."""
    if isinstance(value, tessel.language.dtype):
        return ttl.dtype(value.name)
    return value


def bits(a: np.ndarray) -> np.ndarray:
    """The array's bits as unsigned integers of its width (floats compare bit for bit, NaNs included)."""
    return a.view(f"u{a.dtype.itemsize}")
