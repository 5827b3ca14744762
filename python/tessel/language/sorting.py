"""Sorting along the last dimension: `tl.sort`, `tl.topk` and `tl.bitonic_merge`, as Triton 3.6 defines them,
written in the DSL as a bitonic network. A block of 2^n elements is viewed as an n-dimensional hypercube of 2s:
exchanging the two halves of axis i (x XOR the xor-sum of the pair) pairs each element with the one whose index
differs in bit i, and a compare-and-swap keeps the smaller or the larger, by position. Every target runs it as it
runs reshape, reduce and where.
"""
from __future__ import annotations

from ..runtime.jit import jit
from . import core
from .standard import _log2, _signed_int_of_width, max, min, xor_sum


def _unit_axis_shape(n_dims: int, j: int) -> list[int]:
    """[1, ..., 2, ..., 1]: n_dims axes, the 2 on the j-th innermost."""
    return [1] * (n_dims - j - 1) + [2] + [1] * j


def _hypercube(n_dims: int) -> list[int]:
    return [2] * n_dims if n_dims else [1]


@jit
def _position(n_dims: core.constexpr, j: core.constexpr):
    """Each element's bit j of its index (0 or 1), broadcastable over the hypercube."""
    return core.reshape(core.arange(0, 2), _unit_axis_shape(n_dims, j))


@jit
def _compare_and_swap(x, descending, i: core.constexpr):
    """One step of the network on the i-th innermost axis: each pair (positions 0 and 1 along it) is ordered,
    ascending where `descending` is 0, descending where it is 1 (a constant or a block of 0/1)."""
    n_dims: core.constexpr = _log2(x.numel)
    bits = x.to(_signed_int_of_width(x.dtype.primitive_bitwidth), bitcast=True)
    partner = (bits ^ xor_sum(bits, n_dims - 1 - i, True)).to(x.dtype, bitcast=True)
    second = _position(n_dims, i)
    return core.where((x > partner) != (descending ^ second), partner, x)


@jit
def _merge(x, stage: core.constexpr, order: core.constexpr):
    """Merges the bitonic sequences of 2^stage elements: order 0 ascending, 1 descending, 2 alternating by stage
    (the directions a full sort needs on its way)."""
    if order == 2:
        descending = _position(_log2(x.numel), stage)
    else:
        descending = order
    for i in core.static_range(stage):
        x = _compare_and_swap(x, descending, stage - 1 - i)
    return x


def _last_axis(shape: list[int], dim) -> int:
    axis = len(shape) - 1 if dim is None else dim
    if axis != len(shape) - 1:
        raise ValueError("only minor dimension is currently supported")
    return axis


@jit
def _sort(x, k: core.constexpr = None, dim: core.constexpr = None, descending: core.constexpr = 0):
    axis: core.constexpr = _last_axis(x.shape, dim)
    log_n: core.constexpr = _log2(x.shape[axis])
    log_k: core.constexpr = log_n if k is None else _log2(k)
    h = core.reshape(x, _hypercube(_log2(x.numel)))
    for i in core.static_range(1, log_k + 1):
        h = _merge(h, i, 2 if i < log_n else descending)
    # Top k: keep the better half of each pair of sorted runs of k, and merge again, until k are left.
    for i in core.static_range(log_k + 1, log_n + 1):
        if descending:
            h = max(h, _log2(h.numel) - 1 - log_k)
        else:
            h = min(h, _log2(h.numel) - 1 - log_k)
        h = _merge(h, log_k, 2 if i < log_n else descending)
    return core.reshape(h, x.shape[:-1] + [2**log_k])


@jit
def sort(x, dim: core.constexpr = None, descending: core.constexpr = 0):
    """x sorted along its last dimension (the only one supported, as in Triton)."""
    return _sort(x, dim=dim, descending=descending)


@jit
def topk(x, k: core.constexpr, dim: core.constexpr = None):
    """The k largest elements along the last dimension, largest first (k a power of 2)."""
    return _sort(x, k=k, dim=dim, descending=1)


@jit
def bitonic_merge(x, dim: core.constexpr = None, descending: core.constexpr = 0):
    """Merges a bitonic sequence along the last dimension into sorted order."""
    axis: core.constexpr = _last_axis(x.shape, dim)
    n_dims: core.constexpr = _log2(x.shape[axis])
    h = core.reshape(x, _hypercube(_log2(x.numel)))
    h = _merge(h, n_dims, descending)
    return core.reshape(h, x.shape)


for _fn in (sort, topk):
    setattr(core.tensor, _fn.__name__, _fn)
del _fn
