"""tl.dot on 3-D blocks ([B, M, K] x [B, K, N]), on every target, against numpy: every operand type tl.dot takes,
accumulators, out_dtype, batch sizes 1 to 8, and the errors of mismatched operands."""
import numpy as np
import pytest

import tessel as triton
import tessel.language as tl


@triton.jit
def _bmm(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
         ACC: tl.constexpr, OUT: tl.constexpr):
    bi = tl.arange(0, B)[:, None, None]
    a = tl.load(a_ptr + bi * M * K + tl.arange(0, M)[None, :, None] * K + tl.arange(0, K)[None, None, :])
    b = tl.load(b_ptr + bi * K * N + tl.arange(0, K)[None, :, None] * N + tl.arange(0, N)[None, None, :])
    offs = bi * M * N + tl.arange(0, M)[None, :, None] * N + tl.arange(0, N)[None, None, :]
    if ACC:
        c = tl.dot(a, b, tl.load(c_ptr + offs))
    elif OUT is None:
        c = tl.dot(a, b)
    else:
        c = tl.dot(a, b, out_dtype=OUT)
    tl.store(c_ptr + offs, c)


@pytest.mark.parametrize("B", [1, 2, 4, 8])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8])
def test_batched_dot(rng, B, dtype):
    M, N, K = 16, 32, 32
    if dtype == np.int8:
        a = rng.integers(-100, 100, (B, M, K), dtype=np.int8)
        b = rng.integers(-100, 100, (B, K, N), dtype=np.int8)
        c = np.zeros((B, M, N), np.int32)
        _bmm[(1,)](a, b, c, B, M, N, K, False, None)
        np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))
        return
    a = rng.standard_normal((B, M, K)).astype(dtype)
    b = rng.standard_normal((B, K, N)).astype(dtype)
    c = np.zeros((B, M, N), np.float64 if dtype == np.float64 else np.float32)
    _bmm[(1,)](a, b, c, B, M, N, K, False, None)
    want = a.astype(np.float64) @ b.astype(np.float64)
    # fp32 may run on tf32 tensor cores (Triton's default input precision on GPUs).
    tol = {np.float16: 1e-5, np.float32: 2e-2, np.float64: 1e-12}[dtype]
    np.testing.assert_allclose(c, want, rtol=tol, atol=tol * np.sqrt(K))


def test_batched_dot_accumulates_and_rounds_to_out_dtype(rng):
    B, M, N, K = 4, 32, 16, 64
    a = rng.standard_normal((B, M, K)).astype(np.float16)
    b = rng.standard_normal((B, K, N)).astype(np.float16)
    c0 = rng.standard_normal((B, M, N)).astype(np.float32)
    c = c0.copy()
    _bmm[(1,)](a, b, c, B, M, N, K, True, None)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64) + c0, rtol=1e-5, atol=1e-4)
    h = np.zeros((B, M, N), np.float16)
    _bmm[(1,)](a, b, h, B, M, N, K, False, tl.float16)
    np.testing.assert_allclose(h.astype(np.float64), a.astype(np.float64) @ b.astype(np.float64), rtol=2e-3,
                               atol=2e-2)


@triton.jit
def _bad_bmm(a_ptr, c_ptr, WHICH: tl.constexpr):
    i = tl.arange(0, 2)[:, None, None] * 256 + tl.arange(0, 16)[None, :, None] * 16 + tl.arange(0, 16)[None, None, :]
    a = tl.load(a_ptr + i)
    if WHICH == 0:
        c = tl.dot(a, tl.reshape(a, [512, 1]).reshape(32, 16))
    else:
        c = tl.dot(a, tl.permute(tl.reshape(tl.load(a_ptr + i), [2, 16, 16]), 0, 2, 1), tl.zeros([16, 16], tl.float32))
    tl.store(c_ptr + tl.arange(0, 16), tl.sum(tl.sum(tl.reshape(c, [c.numel // 16, 16]), 0), 0))


@pytest.mark.parametrize("which,message", [(0, "batched operands must both be 3-D"),
                                           (1, "the accumulator of a batched dot must be 3-D")])
def test_mismatched_operands_are_errors_at_the_line(which, message):
    with pytest.raises(triton.CompilationError) as info:
        _bad_bmm[(1,)](np.zeros(512, np.float32), np.zeros(16, np.float32), which)
    assert message in str(info.value) and "tl.dot(a" in str(info.value), str(info.value)
