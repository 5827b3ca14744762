"""Joining and splitting blocks along a new last dimension of size 2, as Triton 3.6 defines them: `tl.join`,
`tl.split`, `tl.interleave` and `tl.cat`. Written in the DSL over where, reduce, reshape and permute, so every target
runs them as it runs those.
"""
from __future__ import annotations

from ..runtime.jit import jit
from . import core


def _pair_shape(rank: int) -> list[int]:
    """[1, ..., 1, 2]: the index of the new last dimension, broadcast against blocks of `rank`."""
    return [1] * rank + [2]




@jit
def _with_last_unit_dim(x):
    if len(x.shape) == 0:
        return x
    else:
        return core.expand_dims(x, len(x.shape))


@jit
def join(a, b):
    """The block of a's and b's shape (broadcast together) with a new last dimension of size 2: a at index 0, b at
    index 1. Two scalars join into a block of 2."""
    rank: core.constexpr = max(len(a.shape), len(b.shape))
    pair = core.reshape(core.arange(0, 2), _pair_shape(rank))
    return core.where(pair == 0, _with_last_unit_dim(a), _with_last_unit_dim(b))


@jit
def _pick_halves(v0, i0, v1, i1, w0, j0, w1, j1):
    # (v0, i0) keeps the element of index 0 and (v1, i1) that of index 1, whichever operand holds them: selects,
    # so every bit pattern (NaNs, -0.0) goes through as it is, in either order of the operands.
    first = i0 == 0
    second = i1 == 1
    return core.where(first, v0, w0), core.where(first, i0, j0), core.where(second, v1, w1), core.where(second, i1, j1)


@jit
def split(a):
    """The inverse of join: a block whose last dimension has size 2 as its two halves (two scalars from a block of
    2)."""
    core.static_assert(len(a.shape) > 0 and a.shape[-1] == 2,
                       "tl.split() needs a block whose last dimension has size 2")
    rank: core.constexpr = len(a.shape)
    index = core.broadcast_to(core.reshape(core.arange(0, 2), _pair_shape(rank - 1)), a.shape)
    lhs, _, rhs, _ = core.reduce((a, index, a, index), rank - 1, _pick_halves)
    return lhs, rhs


@jit
def interleave(a, b):
    """a's and b's elements alternating along their last dimension (a first): join, then merge the last two
    dimensions. Two scalars interleave into a block of 2, as they join."""
    joined = join(a, b)
    if len(joined.shape) == 1:
        return joined
    else:
        return core.reshape(joined, joined.shape[:-2] + [joined.shape[-2] * 2])


@jit
def cat(input, other, can_reorder=False):
    """The concatenation of two 1-D blocks of one shape. Triton requires can_reorder=True (its compiler may reorder
    the elements); Tessel keeps them in order: input's, then other's."""
    core.static_assert(can_reorder, "current implementation of `cat` always may reorder elements")
    core.static_assert(len(input.shape) == 1, "tl.cat() concatenates 1-D blocks")
    return core.reshape(core.permute(join(input, other), 1, 0), [2 * input.shape[0]])


# Tensor methods, as Triton has them.
core.tensor.split = split
