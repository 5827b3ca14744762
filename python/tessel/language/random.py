"""Random numbers from Philox 4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011), with
Triton 3.6's streams: for the same seed and offsets every target gives the bits Triton gives.

Philox is counter based: it maps a 128-bit counter and a 64-bit key to 128 random bits, with no state to carry. The
key is the seed; the counter is the offset (its low and high 32 bits, then two zero words), so each element of an
offset block draws its own numbers and any program can draw any part of a stream. Written in the DSL over integer
arithmetic that every target computes exactly (`tl.umulhi` included), so the integer streams and the uniform floats
made from them are bit-exact everywhere; normals go through log/sqrt/cos/sin, each target's own.
"""
from __future__ import annotations

from ..runtime.jit import jit
from . import core, standard

N_ROUNDS_DEFAULT = core.constexpr(10)


def _philox_constants(word: core.dtype) -> tuple[int, int, int, int]:
    """(key increment A, key increment B, round multiplier A, round multiplier B) for 32- or 64-bit words: the Weyl
    increments are the golden ratio's and sqrt(3) - 1's fractions, the multipliers those of the Philox paper."""
    if word == core.uint32:
        return 0x9E3779B9, 0xBB67AE85, 0xD2511F53, 0xCD9E8D57
    if word == core.uint64:
        return 0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B, 0xD2E7470EE14C6C93, 0xCA5A826395121157
    raise TypeError(f"philox: the counter words must be uint32 or uint64, got {word}")


# ---------------------------------------------------------------------------------------------------------- integers


@jit
def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds: core.constexpr = N_ROUNDS_DEFAULT):
    """`n_rounds` rounds of Philox on the counter (c0, c1, c2, c3) with the key (k0, k1), all uint32 or all
    uint64; returns the four words."""
    key_a, key_b, mul_a, mul_b = _philox_constants(c0.dtype)
    for _ in core.static_range(n_rounds):
        prev0, prev2 = c0, c2
        # Each round multiplies two words; the high halves of the products, mixed with the other words and the key,
        # become words 0 and 2, the low halves words 1 and 3 (both wrap in the word's width).
        c0 = standard.umulhi(mul_b, prev2) ^ c1 ^ k0
        c2 = standard.umulhi(mul_a, prev0) ^ c3 ^ k1
        c1 = prev2 * mul_b
        c3 = prev0 * mul_a
        k0 = k0 + key_a
        k1 = k1 + key_b
    return c0, c1, c2, c3


@jit
def philox(seed, c0, c1, c2, c3, n_rounds: core.constexpr = N_ROUNDS_DEFAULT):
    """Philox of the counter (c0, c1, c2, c3), 32- or 64-bit words of any type (taken bit for bit), keyed by the
    integer `seed` (widened to 64 bits: with 32-bit words its halves are the key, with 64-bit words it is the first
    key word and the second is 0)."""
    seed = core.to_tensor(seed)
    core.static_assert(seed.dtype.is_int(), "philox: the seed must be an integer")
    seed = seed.to(core.uint64)
    c0 = core.to_tensor(c0)
    c1 = core.to_tensor(c1)
    c2 = core.to_tensor(c2)
    c3 = core.to_tensor(c3)
    if c0.dtype.primitive_bitwidth == 32:
        word: core.constexpr = core.uint32
        key_hi = ((seed >> 32) & 0xFFFFFFFF).to(core.uint32)
        key_lo = (seed & 0xFFFFFFFF).to(core.uint32)
    else:
        core.static_assert(c0.dtype.primitive_bitwidth == 64, "philox: the counter words must be 32 or 64 bits")
        word: core.constexpr = core.uint64
        key_hi = core.full((1,), 0, dtype=word)
        key_lo = seed
    return philox_impl(c0.to(word, bitcast=True), c1.to(word, bitcast=True), c2.to(word, bitcast=True),
                       c3.to(word, bitcast=True), key_lo, key_hi, n_rounds)


@jit
def randint4x(seed, offset, n_rounds: core.constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of random uint32 for the `seed` (an integer scalar) and the integer block `offset`: Philox of
    the counter (low 32 bits of offset, its high 32 bits for a 64-bit offset else 0, 0, 0)."""
    low = offset.to(core.uint32)
    zero = low * 0
    if offset.dtype.primitive_bitwidth > 32:
        high = (offset >> 32).to(core.uint32)
    else:
        high = zero
    return philox(seed, low, high, zero, zero, n_rounds)


@jit
def randint(seed, offset, n_rounds: core.constexpr = N_ROUNDS_DEFAULT):
    """A block of random uint32: the first of `randint4x`'s four (which gives all four at the cost of one)."""
    first, _, _, _ = randint4x(seed, offset, n_rounds)
    return first


# ------------------------------------------------------------------------------------------------------------ floats


@jit
def uint_to_uniform_float(x):
    """Random 32- or 64-bit integers to fp32 uniform in [0, 1): read as signed, folded onto [0, 2^(N-1)) (x < 0
    becomes -x - 1) and scaled by the largest fp32 below 2^(1-N) for which the largest value stays below 1."""
    if x.dtype == core.uint32 or x.dtype == core.int32:
        x = x.to(core.int32, bitcast=True)
        scale = 4.6566127342e-10
    else:
        core.static_assert(x.dtype == core.uint64 or x.dtype == core.int64,
                           "uint_to_uniform_float: expected 32- or 64-bit integers")
        x = x.to(core.int64, bitcast=True)
        scale = 1.0842020432385337e-19
    x = core.where(x < 0, -x - 1, x)
    return x * scale


@jit
def rand(seed, offset, n_rounds: core.constexpr = N_ROUNDS_DEFAULT):
    """A block of random fp32 uniform in [0, 1), one per element of the integer block `offset`."""
    return uint_to_uniform_float(randint(seed, offset, n_rounds))


@jit
def rand4x(seed, offsets, n_rounds: core.constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of random fp32 uniform in [0, 1)."""
    i1, i2, i3, i4 = randint4x(seed, offsets, n_rounds)
    return uint_to_uniform_float(i1), uint_to_uniform_float(i2), uint_to_uniform_float(i3), uint_to_uniform_float(i4)


@jit
def pair_uniform_to_normal(u1, u2):
    """Box-Muller: two uniform blocks to two independent standard normal ones (u1 kept above 1e-7, so that its log
    is finite)."""
    u1 = core.maximum(1.0e-7, u1)
    theta = 6.283185307179586 * u2
    radius = core.sqrt(-2.0 * core.log(u1))
    return radius * core.cos(theta), radius * core.sin(theta)


@jit
def randn(seed, offset, n_rounds: core.constexpr = N_ROUNDS_DEFAULT):
    """A block of random fp32 from the standard normal distribution."""
    i1, i2, _, _ = randint4x(seed, offset, n_rounds)
    n1, _ = pair_uniform_to_normal(uint_to_uniform_float(i1), uint_to_uniform_float(i2))
    return n1


@jit
def randn4x(seed, offset, n_rounds: core.constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of random fp32 from the standard normal distribution."""
    u1, u2, u3, u4 = rand4x(seed, offset, n_rounds)
    n1, n2 = pair_uniform_to_normal(u1, u2)
    n3, n4 = pair_uniform_to_normal(u3, u4)
    return n1, n2, n3, n4
