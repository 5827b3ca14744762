"""tl.fma / tl.math.fma on every target: x * y + z rounded once, against numpy computing exactly in float64 (the
narrow types' products and sums are exact there) and rounding once; promotion of mixed operands as Triton's."""
import numpy as np
import pytest
import torch

import tessel as triton
import tessel.language as tl


@triton.jit
def _fma(x_ptr, y_ptr, z_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.math.fma(tl.load(x_ptr + offs), tl.load(y_ptr + offs), tl.load(z_ptr + offs)))


def _exact(x, y, z):
    return x.astype(np.float64) * y.astype(np.float64) + z.astype(np.float64)


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_fma_rounds_once(rng, dtype):
    n = 512
    x, y, z = (rng.standard_normal(n).astype(dtype) for _ in range(3))
    # z near -x*y: the sum cancels, where rounding the product first would lose everything.
    z[::2] = (-(x[::2].astype(np.float64) * y[::2])).astype(dtype)
    out = np.zeros(n, dtype)
    _fma[(1,)](x, y, z, out, n)
    if dtype == np.float64:
        # Exact rational arithmetic, rounded once (Fraction to float rounds correctly); the cancelling half is the
        # product's rounding error, which a separate multiply would make zero.
        from fractions import Fraction
        want = np.array([float(Fraction(a) * Fraction(b) + Fraction(c)) for a, b, c in zip(x, y, z)])
        np.testing.assert_array_equal(out, want)
        assert (out[::2] != 0).any()
        return
    np.testing.assert_array_equal(out, _exact(x, y, z).astype(dtype))


def test_fma_bf16_rounds_once(rng):
    n = 256
    vals = [torch.from_numpy(rng.standard_normal(n).astype(np.float32)).bfloat16() for _ in range(3)]
    out = torch.zeros(n, dtype=torch.bfloat16)
    _fma[(1,)](*vals, out, n)
    x, y, z = (v.double().numpy() for v in vals)
    want = torch.from_numpy((x * y + z).astype(np.float32)).bfloat16()  # x*y+z exact in fp64, fp32 holds > 2x bf16
    np.testing.assert_array_equal(out.view(torch.int16).numpy(), want.view(torch.int16).numpy())


def test_fma_fp32(rng):
    n = 512
    x, y, z = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    out = np.zeros(n, np.float32)
    _fma[(1,)](x, y, z, out, n)
    # The exact sum is within half an fp32 ulp of the result (fp64 holds the product exactly).
    np.testing.assert_allclose(out, _exact(x, y, z), rtol=2**-24, atol=1e-30)


@triton.jit
def _fma_mixed(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)  # fp16
    tl.store(out_ptr + offs, tl.fma(x, 2.5, x.to(tl.float32)))


def test_fma_promotes_like_triton(rng):
    x = rng.standard_normal(64).astype(np.float16)
    out = np.zeros(64, np.float32)
    _fma_mixed[(1,)](x, out, 64)
    np.testing.assert_allclose(out, _exact(x, np.float16(2.5), x), rtol=2**-24)
