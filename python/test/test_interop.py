"""CPU torch tensors as kernel arguments: dtypes, in-place outputs, strided views,
and torch and numpy arguments mixed in one launch."""
import numpy as np
import pytest

import tessel as triton
import tessel.language as tl

torch = pytest.importorskip("torch")


@triton.jit
def _axpy_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + y, mask=mask)


@triton.jit
def _fma_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * y + x, mask=mask)


# bf16 has no numpy dtype: torch is how users pass it.
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=["f32", "f16", "bf16"])
def test_torch_tensors(dtype):
    g = torch.Generator().manual_seed(0)
    n = 1000
    x = torch.randn(n, generator=g).to(dtype)
    y = torch.randn(n, generator=g).to(dtype)
    out = torch.empty_like(x)
    _fma_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    assert out.dtype == dtype
    ref = x.float() * y.float() + x.float()
    # Two roundings in the low-precision types (after * and after +) are allowed.
    tol = {torch.float32: 1e-6, torch.float16: 2e-3, torch.bfloat16: 2e-2}[dtype]
    torch.testing.assert_close(out.float(), ref, rtol=tol, atol=tol)


def test_torch_in_place_and_mixed_with_numpy():
    n = 300
    x = torch.arange(n, dtype=torch.float32)
    y = np.linspace(-1, 1, n, dtype=np.float32)
    # The output aliases an input: the kernel updates x in place.
    _axpy_kernel[(triton.cdiv(n, 128),)](x, y, x, n, 0.5, BLOCK=128)
    np.testing.assert_allclose(x.numpy(), 0.5 * np.arange(n, dtype=np.float32) + y, rtol=1e-6)


@triton.jit
def _transpose_kernel(x_ptr, out_ptr, M, N, stride_xm, stride_xn, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :] * stride_xn, mask=mask)
    tl.store(out_ptr + rn[None, :] * M + rm[:, None], x, mask=mask)


def test_torch_strided_views():
    g = torch.Generator().manual_seed(1)
    base = torch.randn(40, 90, generator=g)
    # A transposed view of a column slice whose storage offset is not zero.
    x = base[:, 5:70].t()
    M, N = x.shape
    out = torch.zeros(N, M)
    grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
    _transpose_kernel[grid](x, out, M, N, x.stride(0), x.stride(1), BM=32, BN=32)
    torch.testing.assert_close(out, x.t().contiguous(), rtol=0, atol=0)


def test_repeated_launches_with_tensors_of_several_dtypes():
    # After the first launch, tensors take the launcher's fast path: results, types and addresses must stay right.
    for dtype in (torch.float32, torch.float16, torch.float32, torch.float64, torch.float16):
        for n in (5, 100):
            x = torch.arange(n, dtype=dtype)
            y = torch.ones(n, dtype=dtype)
            out = torch.zeros(n, dtype=dtype)
            _fma_kernel[(triton.cdiv(n, 64),)](x, y, out, n, BLOCK=64)
            torch.testing.assert_close(out, x * y + x)


def test_tensors_off_the_cpu_are_rejected_after_cpu_ones():
    x = torch.ones(16)
    out = torch.zeros(16)
    _fma_kernel[(1,)](x, x, out, 16, BLOCK=16)  # float32 tensors are now known to the launcher
    meta = torch.empty(16, device="meta")
    with pytest.raises(RuntimeError, match="(?i)gpu|device|cpu"):
        _fma_kernel[(1,)](meta, x, out, 16, BLOCK=16)
