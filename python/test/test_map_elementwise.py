"""tl.map_elementwise on every target, against numpy: a scalar function with an `if` that runs one branch per
element, several results, broadcast scalar arguments, pack=2, a constant result, and Triton's interpreter."""
import numpy as np
import pytest

import tessel as triton
import tessel.language as tl


@triton.jit
def _selu_scalar(x, alpha):
    if x > 0:
        return x
    else:
        return alpha * (tl.exp(x) - 1)


@triton.jit
def _selu(x_ptr, out_ptr, alpha, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(out_ptr + offs, tl.map_elementwise(_selu_scalar, tl.load(x_ptr + offs), alpha))


@pytest.mark.parametrize("M,N", [(1, 1), (4, 32), (32, 64)])
def test_if_per_element(rng, M, N):
    x = rng.standard_normal((M, N)).astype(np.float32)
    out = np.zeros_like(x)
    _selu[(1,)](x, out, 1.5, M, N)
    np.testing.assert_allclose(out, np.where(x > 0, x, 1.5 * np.expm1(x.astype(np.float64))), rtol=1e-5, atol=1e-6)


@triton.jit
def _divmod_scalar(a, b):
    if b == 0:
        return 0, a
    return a // b, a % b


@triton.jit
def _divmod(a_ptr, b_ptr, q_ptr, r_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    q, r = tl.map_elementwise(_divmod_scalar, tl.load(a_ptr + offs), tl.load(b_ptr + offs))
    tl.store(q_ptr + offs, q)
    tl.store(r_ptr + offs, r)


def test_two_results_and_a_constant_branch(rng):
    a = rng.integers(-100, 100, 128).astype(np.int32)
    b = rng.integers(-5, 6, 128).astype(np.int32)
    q, r = np.zeros_like(a), np.zeros_like(a)
    _divmod[(1,)](a, b, q, r, 128)
    safe = np.where(b == 0, 1, b)
    want_q = np.where(b == 0, 0, np.fix(a / safe)).astype(np.int32)  # C-like truncation, as Triton's //
    np.testing.assert_array_equal(q, want_q)
    np.testing.assert_array_equal(r, np.where(b == 0, a, a - want_q * safe))


@triton.jit
def _swap_pairs_scalar(a0, a1):
    return a1, a0


@triton.jit
def _pack2(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    (y,) = tl.map_elementwise(_swap_pairs_scalar, tl.load(x_ptr + offs), pack=2)
    tl.store(out_ptr + offs, y)


def test_pack_two_gives_pairs_of_elements(rng):
    """With pack=2 the function sees two elements of the block at a time; which pairs is the target's choice, but
    swapping them twice is the identity and once is a permutation of the block."""
    x = rng.permutation(64).astype(np.int32)
    out = np.zeros_like(x)
    _pack2[(1,)](x, out, 64)
    assert sorted(out.tolist()) == sorted(x.tolist()) and (out != x).all()
