"""`tl.dot` on 3-D blocks ([B, M, K] x [B, K, N] -> [B, M, N]): the batch is halved until each part is one 2-D
dot, in the DSL (split and join along the batch), so every target runs batched dots as it runs 2-D ones, tensor
cores included. The checks of each 2-D dot are the builder's.
"""
from __future__ import annotations

from ..runtime.jit import jit
from . import core
from .joining import join, split


@jit
def _halves(x):
    """x [B, R, C] as its first and second halves along B, each [B / 2, R, C]."""
    B: core.constexpr = x.shape[0]
    pairs = core.permute(core.reshape(x, [2, B // 2, x.shape[1], x.shape[2]]), 1, 2, 3, 0)
    return split(pairs)


@jit
def _stacked(lo, hi):
    """The inverse of _halves: lo's batch, then hi's."""
    pairs = core.permute(join(lo, hi), 3, 0, 1, 2)  # [2, B / 2, R, C]
    return core.reshape(pairs, [2 * lo.shape[0], lo.shape[1], lo.shape[2]])


@jit
def batched_dot(a, b, acc, input_precision: core.constexpr, max_num_imprecise_acc: core.constexpr,
                out_dtype: core.constexpr):
    B: core.constexpr = a.shape[0]
    if B == 1:
        a2 = core.reshape(a, [a.shape[1], a.shape[2]])
        b2 = core.reshape(b, [b.shape[1], b.shape[2]])
        if acc is None:
            d = core.dot(a2, b2, input_precision=input_precision, max_num_imprecise_acc=max_num_imprecise_acc,
                         out_dtype=out_dtype)
        else:
            d = core.dot(a2, b2, core.reshape(acc, [acc.shape[1], acc.shape[2]]), input_precision=input_precision,
                         max_num_imprecise_acc=max_num_imprecise_acc, out_dtype=out_dtype)
        return core.reshape(d, [1, d.shape[0], d.shape[1]])
    else:
        a0, a1 = _halves(a)
        b0, b1 = _halves(b)
        if acc is None:
            c0 = None
            c1 = None
        else:
            c0, c1 = _halves(acc)
        return _stacked(batched_dot(a0, b0, c0, input_precision, max_num_imprecise_acc, out_dtype),
                        batched_dot(a1, b1, c1, input_precision, max_num_imprecise_acc, out_dtype))
