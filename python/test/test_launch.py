"""The launch API: grid forms, re-launching with the same and different constexprs and
specializations, Python scalar arguments, keyword arguments, None arguments, GPU-only
launch options, and rejection of device (CUDA) memory."""
import numpy as np
import pytest

import tessel as triton
import tessel.language as tl

f16, f32, i32, i64 = np.float16, np.float32, np.int32, np.int64


@triton.jit
def _scale_kernel(x_ptr, out_ptr, n, FACTOR: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * FACTOR, mask=mask)


def test_grid_tuple_and_callable(rand):
    n = 1000
    x = rand(n, f32)
    out_tuple = np.zeros(n, f32)
    out_callable = np.zeros(n, f32)
    _scale_kernel[(triton.cdiv(n, 128),)](x, out_tuple, n, FACTOR=3, BLOCK=128)
    # The callable sees every bound argument by name, meta-parameters included.
    seen = {}

    def grid(meta):
        seen.update(meta)
        return (triton.cdiv(meta["n"], meta["BLOCK"]),)

    _scale_kernel[grid](x, out_callable, n, FACTOR=3, BLOCK=128)
    np.testing.assert_array_equal(out_tuple, x * 3)
    np.testing.assert_array_equal(out_callable, x * 3)
    assert seen["n"] == n and seen["BLOCK"] == 128 and seen["FACTOR"] == 3


def test_relaunch_same_and_different_constexprs(rand):
    n = 777
    x = rand(n, f32)
    configs = [(2, 64), (2, 64), (5, 64), (2, 256), (5, 256)]
    for factor, block in configs:
        out = np.zeros(n, f32)
        _scale_kernel[(triton.cdiv(n, block),)](x, out, n, FACTOR=factor, BLOCK=block)
        np.testing.assert_array_equal(out, x * factor, err_msg=f"FACTOR={factor} BLOCK={block}")


def test_relaunch_other_dtypes_and_specializations(rand):
    # Pointer dtypes, n == 1, n divisible by 16 or not, and a pointer that is not
    # 16-byte aligned each select a differently specialized kernel; a stale one
    # would give wrong results. fp32 comes back last: its cached variants must still
    # be the right ones after other dtypes were compiled.
    for dt in (f32, i32, f16, f32):
        for n in (1, 16, 1024, 1000):
            x = rand(n + 1, dt, -100, 100)
            for view in (x[:n], x[1:]):
                out = np.zeros(n + 1, dt)[1:]
                _scale_kernel[(triton.cdiv(n, 128),)](view, out, n, FACTOR=2, BLOCK=128)
                np.testing.assert_array_equal(out, view * dt(2), err_msg=f"{np.dtype(dt)} n={n}")


@triton.jit
def _axpb_kernel(x_ptr, out_ptr, n, alpha, beta, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    # alpha: Python float -> fp32 scalar; beta: Python int -> i32 scalar.
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha + beta, mask=mask)


@pytest.mark.parametrize("alpha,beta", [(0.5, 3), (-2.25, -17), (1.0, 0)])
def test_python_scalar_arguments(rand, alpha, beta):
    n = 300
    x = rand(n, f32, -100, 100)
    out = np.zeros(n, f32)
    _axpb_kernel[(triton.cdiv(n, 128),)](x, out, n, alpha, beta, BLOCK=128)
    np.testing.assert_allclose(out, x * f32(alpha) + f32(beta), rtol=1e-6, atol=1e-5)


@triton.jit
def _add_scalar_kernel(x_ptr, out_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + s, mask=mask)


@pytest.mark.parametrize("s", [7, -(2**31), 3 * 2**33], ids=["small", "int32-min", "beyond-int32"])
def test_python_int_argument_width(rand, s):
    # An int that does not fit 32 bits is passed as a 64-bit integer, not truncated.
    n = 64
    x = rand(n, i64, -1000, 1000)
    out = np.zeros(n, i64)
    _add_scalar_kernel[(1,)](x, out, n, s, BLOCK=64)
    np.testing.assert_array_equal(out, x + s)


def test_keyword_arguments_and_launch_options(rand):
    n = 500
    x = rand(n, f32)
    out = np.zeros(n, f32)
    # GPU launch options are accepted (and may be ignored) on every backend, so
    # kernels written for Triton launch unchanged.
    _scale_kernel[(triton.cdiv(n, 128),)](
        out_ptr=out, x_ptr=x, n=n, FACTOR=4, BLOCK=128, num_warps=8, num_stages=2
    )
    np.testing.assert_array_equal(out, x * 4)


@triton.jit
def _optional_bias_kernel(x_ptr, bias_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    # A pointer argument passed as None is a compile-time None.
    if bias_ptr is not None:
        x += tl.load(bias_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


def test_none_pointer_argument(rand):
    n = 200
    x = rand(n, f32)
    bias = rand(n, f32)
    out = np.zeros(n, f32)
    _optional_bias_kernel[(2,)](x, None, out, n, BLOCK=128)
    np.testing.assert_array_equal(out, x)
    _optional_bias_kernel[(2,)](x, bias, out, n, BLOCK=128)
    np.testing.assert_array_equal(out, x + bias)


class _FakeCudaArray:
    """Looks like a CUDA tensor from another library: device memory, not host memory."""

    def __init__(self, n):
        self.shape = (n,)
        self.dtype = np.dtype(np.float32)
        self.__cuda_array_interface__ = {
            "shape": (n,),
            "typestr": "<f4",
            "data": (0x7F0000000000, False),
            "version": 3,
        }

    def data_ptr(self):
        return self.__cuda_array_interface__["data"][0]


def test_cuda_array_is_rejected(rand):
    n = 16
    x = rand(n, f32)
    with pytest.raises(Exception, match=r"(?i)cuda|gpu"):
        _scale_kernel[(1,)](x, _FakeCudaArray(n), n, FACTOR=2, BLOCK=16)
