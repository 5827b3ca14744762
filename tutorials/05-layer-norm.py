"""
Tutorial 5: layer normalization, forward and backward
=====================================================

y = (x - mean(x)) / sqrt(var(x) + eps) * w + b for every row x of a matrix, and its gradients.

Forward: one program per row, like the fused softmax of tutorial 2; it also keeps each row's mean and 1/std
(``rstd``) for the backward pass.

Backward: dx is per row again,

    xhat = (x - mean) * rstd,  g = dy * w,  dx = (g - mean(xhat * g) * xhat - mean(g)) * rstd,

but dw = sum over rows of dy * xhat and db = sum over rows of dy are sums over *all* rows, which one program per
row cannot compute alone. Here every program adds its row's contribution to one of GROUP_M partial sums, chosen by
``row % GROUP_M``; a spin lock per partial (``tl.atomic_cas`` to take it, ``tl.atomic_xchg`` to release it) makes
the read-add-write of a partial exclusive, and a small second kernel adds the GROUP_M partials up. GROUP_M trades
contention on the locks for the size of that last sum.

New here: ``tl.atomic_cas`` and ``tl.atomic_xchg`` as a lock, a ``while`` loop, and a first-writer flag (a count
next to each lock) so that partials start from the first row's values instead of a cleared buffer.

Run: ``python tutorials/05-layer-norm.py``
"""
import numpy as np

import tessel as triton
import tessel.language as tl


@triton.jit
def layer_norm_forward(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, n_cols, eps,
                       BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    inside = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=inside, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    centered = tl.where(inside, x - mean, 0.0)
    rstd = 1 / tl.sqrt(tl.sum(centered * centered, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=inside)
    b = tl.load(b_ptr + cols, mask=inside)
    y = centered * rstd * w + b
    tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=inside)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def layer_norm_backward_dx(dx_ptr, dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, partial_dw_ptr, partial_db_ptr,
                           locks_ptr, stride, n_cols, GROUP_M: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    inside = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=inside, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * stride + cols, mask=inside, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=inside).to(tl.float32)
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    xhat = tl.where(inside, (x - mean) * rstd, 0.0)
    g = tl.where(inside, dy * w, 0.0)
    c1 = tl.sum(xhat * g, axis=0) / n_cols
    c2 = tl.sum(g, axis=0) / n_cols
    dx = (g - (xhat * c1 + c2)) * rstd
    tl.store(dx_ptr + row * stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=inside)

    # This row's share of dw and db, added to partial sum `group` under its lock.
    dw = dy * xhat
    db = dy
    group = row % GROUP_M
    lock = locks_ptr + group
    count = locks_ptr + GROUP_M + group  # 0 until the partial has a first row in it
    partial_dw = partial_dw_ptr + group * n_cols + cols
    partial_db = partial_db_ptr + group * n_cols + cols
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    if tl.load(count) == 0:
        tl.atomic_xchg(count, 1)
    else:
        dw += tl.load(partial_dw, mask=inside)
        db += tl.load(partial_db, mask=inside)
    tl.store(partial_dw, dw, mask=inside)
    tl.store(partial_db, db, mask=inside)
    tl.atomic_xchg(lock, 0)


@triton.jit
def layer_norm_backward_dwdb(partial_dw_ptr, partial_db_ptr, dw_ptr, db_ptr, n_groups, n_cols,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    dw = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    db = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    for start in range(0, n_groups, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < n_groups) & (cols[None, :] < n_cols)
        offsets = rows[:, None] * n_cols + cols[None, :]
        dw += tl.load(partial_dw_ptr + offsets, mask=mask, other=0.0)
        db += tl.load(partial_db_ptr + offsets, mask=mask, other=0.0)
    tl.store(dw_ptr + cols, tl.sum(dw, axis=0), mask=cols < n_cols)
    tl.store(db_ptr + cols, tl.sum(db, axis=0), mask=cols < n_cols)


def layer_norm(x, w, b, eps=1e-5):
    """Forward: (y, mean, rstd) for x [M, N] (rows contiguous) and w, b [N]."""
    M, N = x.shape
    y = np.empty_like(x)
    mean = np.empty(M, np.float32)
    rstd = np.empty(M, np.float32)
    layer_norm_forward[(M,)](x, y, w, b, mean, rstd, x.strides[0] // x.itemsize, N, eps,
                             BLOCK_N=triton.next_power_of_2(N))
    return y, mean, rstd


def layer_norm_backward(dy, x, w, mean, rstd, group_m=16):
    """Backward: (dx, dw, db)."""
    M, N = x.shape
    dx = np.empty_like(x)
    partial_dw = np.empty((group_m, N), np.float32)
    partial_db = np.empty((group_m, N), np.float32)
    locks = np.zeros(2 * group_m, np.int32)  # the locks, then the first-writer counts
    layer_norm_backward_dx[(M,)](dx, dy, x, w, mean, rstd, partial_dw, partial_db, locks, x.strides[0] // x.itemsize,
                                 N, GROUP_M=group_m, BLOCK_N=triton.next_power_of_2(N))
    dw = np.empty(N, np.float32)
    db = np.empty(N, np.float32)
    layer_norm_backward_dwdb[(triton.cdiv(N, 64),)](partial_dw, partial_db, dw, db, min(group_m, M), N, BLOCK_M=16,
                                                    BLOCK_N=64)
    return dx, dw, db


def numpy_layer_norm(x, w, b, dy, eps=1e-5):
    """Forward and backward in float64: (y, dx, dw, db)."""
    x, w, b, dy = (a.astype(np.float64) for a in (x, w, b, dy))
    mean = x.mean(1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(1, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    g = dy * w
    dx = (g - xhat * (xhat * g).mean(1, keepdims=True) - g.mean(1, keepdims=True)) * rstd
    return xhat * w + b, dx, (dy * xhat).sum(0), dy.sum(0)


# %%
# Correctness: fp32 and fp16 inputs, a row length that is not a power of two, more rows than partial sums (so
# programs contend for the locks); the output and the three gradients against numpy in float64.

def check() -> None:
    rng = np.random.default_rng(0)
    sim = triton.knobs.target.startswith("sim")
    shapes = [(48, 100)] if sim else [(1151, 300), (64, 4096)]
    for dtype, tol in [(np.float32, 1e-4), (np.float16, 2e-2)]:
        for M, N in shapes:
            x = (rng.standard_normal((M, N)) * 2 + 1).astype(dtype)
            w = rng.standard_normal(N).astype(np.float32)
            b = rng.standard_normal(N).astype(np.float32)
            dy = rng.standard_normal((M, N)).astype(dtype)
            y, mean, rstd = layer_norm(x, w, b)
            dx, dw, db = layer_norm_backward(dy, x, w, mean, rstd)
            ry, rdx, rdw, rdb = numpy_layer_norm(x, w, b, dy)
            for name, got, want in (("y", y, ry), ("dx", dx, rdx), ("dw", dw, rdw), ("db", db, rdb)):
                scale = max(1.0, float(np.abs(want).max()))
                np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol * scale,
                                           err_msg=f"{name} {dtype.__name__} {M}x{N}")
    print("OK")


def main() -> None:
    check()


if __name__ == "__main__":
    main()
