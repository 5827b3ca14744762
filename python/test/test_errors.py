"""Invalid kernels fail at launch with tessel.CompilationError, and the message shows
the offending source line so the user can find it without a debugger."""
import numpy as np
import pytest

import tessel as triton
import tessel.language as tl

# Read by _global_read_kernel: a plain global, not a tl.constexpr, so a kernel may not
# depend on it (its value could change after the kernel was compiled).
_NOT_CONSTEXPR_SCALE = 3.0


@triton.jit
def _pointer_plus_pointer_kernel(x_ptr, y_ptr, out_ptr):
    bad = x_ptr + y_ptr
    tl.store(out_ptr, tl.load(bad))


@triton.jit
def _store_shape_mismatch_kernel(out_ptr):
    offs = tl.arange(0, 64)
    tl.store(out_ptr + offs, tl.zeros((32,), dtype=tl.float32))


@triton.jit
def _unknown_builtin_kernel(x_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, tl.no_such_function(x))


@triton.jit
def _undefined_name_kernel(x_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, no_such_helper(x))  # noqa: F821 -- deliberately undefined


@triton.jit
def _try_kernel(x_ptr):
    try:
        tl.store(x_ptr, 1.0)
    except Exception:
        pass


@triton.jit
def _global_read_kernel(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr) * _NOT_CONSTEXPR_SCALE)


def _f32(n):
    return np.ones(n, np.float32)


# (kernel, its arguments, text of the line the error must show)
CASES = {
    "pointer-plus-pointer": (_pointer_plus_pointer_kernel, lambda: (_f32(1), _f32(1), _f32(1)), "bad = x_ptr + y_ptr"),
    "store-shape-mismatch": (
        _store_shape_mismatch_kernel,
        lambda: (np.zeros(64, np.int32),),
        "tl.store(out_ptr + offs, tl.zeros((32,), dtype=tl.float32))",
    ),
    "unknown-builtin": (_unknown_builtin_kernel, lambda: (_f32(1),), "tl.store(x_ptr, tl.no_such_function(x))"),
    "undefined-function": (_undefined_name_kernel, lambda: (_f32(1),), "tl.store(x_ptr, no_such_helper(x))"),
    "try-block": (_try_kernel, lambda: (_f32(1),), "try:"),
    "non-constexpr-global": (
        _global_read_kernel,
        lambda: (_f32(1),),
        "tl.store(x_ptr, tl.load(x_ptr) * _NOT_CONSTEXPR_SCALE)",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_compilation_error_shows_source_line(case):
    kernel, make_args, line = CASES[case]
    with pytest.raises(triton.CompilationError) as excinfo:
        kernel[(1,)](*make_args())
    message = str(excinfo.value)
    assert line in message, f"the error does not show the offending line {line!r}:\n{message}"


@triton.jit
def _fill_kernel(out_ptr, N: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, 32), tl.zeros((N,), dtype=tl.float32) + 1)


def test_kernel_still_usable_after_a_failed_compile():
    # A failed specialization must not poison the kernel's cache: the same kernel
    # with a valid constexpr compiles and runs afterwards.
    with pytest.raises(triton.CompilationError):
        _fill_kernel[(1,)](np.zeros(64, np.float32), N=64)
    out = np.zeros(64, np.float32)
    _fill_kernel[(1,)](out, N=32)
    np.testing.assert_array_equal(out, np.r_[np.ones(32), np.zeros(32)])
