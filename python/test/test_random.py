"""tl.rand / randn / randint / rand4x / randn4x / randint4x / philox and tl.umulhi on every target, against OpenAI
Triton 3.6's interpreter: the integer streams and the uniform floats bit for bit (seeds as int32, int64 and uint64
kernel arguments or tensors; offsets of several integer types and shapes, loaded values included), normals to a few
ulps (each target's own log/sqrt/cos/sin) and as a standard normal distribution."""
import math

import numpy as np
import pytest

from triton_oracle import Both, bits

import tessel
import tessel.language as tl

SEEDS = [0, 1, 12345, -7, 2**31 + 5, 2**40 + 3, 2**63 + 11]


def _randint4x_kernel(seed, offsets_ptr, out_ptr, N: tl.constexpr, FROM_MEMORY: tl.constexpr,
                      DTYPE: tl.constexpr, ROUNDS: tl.constexpr):
    pid = tl.program_id(0)
    idx = pid * N + tl.arange(0, N)
    if FROM_MEMORY:
        offsets = tl.load(offsets_ptr + idx)
    else:
        offsets = idx.to(DTYPE) * 3 - 17
    a, b, c, d = tl.randint4x(seed, offsets, ROUNDS)
    total = N * tl.num_programs(0)
    tl.store(out_ptr + idx, a)
    tl.store(out_ptr + total + idx, b)
    tl.store(out_ptr + 2 * total + idx, c)
    tl.store(out_ptr + 3 * total + idx, d)
    tl.store(out_ptr + 4 * total + idx, tl.randint(seed, offsets, ROUNDS))


def _uniform_kernel(seed, offsets_ptr, out_ptr, N: tl.constexpr):
    idx = tl.arange(0, N)
    offsets = tl.load(offsets_ptr + idx)
    u1, u2, u3, u4 = tl.rand4x(seed, offsets)
    tl.store(out_ptr + idx, tl.rand(seed, offsets))
    tl.store(out_ptr + N + idx, u1)
    tl.store(out_ptr + 2 * N + idx, u2)
    tl.store(out_ptr + 3 * N + idx, u3)
    tl.store(out_ptr + 4 * N + idx, u4)


def _uniform_2d_kernel(seed, out_ptr, M: tl.constexpr, N: tl.constexpr):
    # A 2-D offset block, as a dropout over a tile makes it.
    offsets = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(out_ptr + offsets, tl.random.rand(seed, offsets))


def _seed_from_memory_kernel(seed_ptr, out_ptr, N: tl.constexpr):
    seed = tl.load(seed_ptr)
    idx = tl.arange(0, N)
    tl.store(out_ptr + idx, tl.randint(seed, idx))


def _philox_kernel(seed, c_ptr, out_ptr, N: tl.constexpr):
    idx = tl.arange(0, N)
    c0 = tl.load(c_ptr + idx)
    c1 = tl.load(c_ptr + N + idx)
    c2 = tl.load(c_ptr + 2 * N + idx)
    c3 = tl.load(c_ptr + 3 * N + idx)
    r0, r1, r2, r3 = tl.philox(seed, c0, c1, c2, c3)
    tl.store(out_ptr + idx, r0)
    tl.store(out_ptr + N + idx, r1)
    tl.store(out_ptr + 2 * N + idx, r2)
    tl.store(out_ptr + 3 * N + idx, r3)


def _normal_kernel(seed, out_ptr, N: tl.constexpr):
    pid = tl.program_id(0)
    idx = pid * N + tl.arange(0, N)
    n1, n2, n3, n4 = tl.randn4x(seed, idx)
    total = N * tl.num_programs(0)
    tl.store(out_ptr + idx, tl.randn(seed, idx))
    tl.store(out_ptr + total + idx, n1)
    tl.store(out_ptr + 2 * total + idx, n2)
    tl.store(out_ptr + 3 * total + idx, n3)
    tl.store(out_ptr + 4 * total + idx, n4)


def _umulhi_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    idx = tl.arange(0, N)
    tl.store(out_ptr + idx, tl.umulhi(tl.load(x_ptr + idx), tl.load(y_ptr + idx)))


def _umulhi_literal_kernel(x_ptr, out_ptr, N: tl.constexpr, LIT: tl.constexpr):
    idx = tl.arange(0, N)
    tl.store(out_ptr + idx, tl.math.umulhi(LIT, tl.load(x_ptr + idx)))


RANDINT4X = Both(_randint4x_kernel)
UNIFORM = Both(_uniform_kernel)
UNIFORM_2D = Both(_uniform_2d_kernel)
SEED_FROM_MEMORY = Both(_seed_from_memory_kernel)
PHILOX = Both(_philox_kernel)
NORMAL = Both(_normal_kernel)
UMULHI = Both(_umulhi_kernel)
UMULHI_LITERAL = Both(_umulhi_literal_kernel)


def _offsets(rng, dtype, n):
    """n offsets of `dtype`: its extremes, 0, small and large values, random ones."""
    info = np.iinfo(dtype)
    special = np.array([0, 1, info.max, info.min, info.max // 2 + 1, info.min // 2], dtype=dtype)
    return np.concatenate([special, rng.integers(info.min, info.max, size=n - len(special), dtype=dtype,
                                                 endpoint=True)])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_randint4x_streams_match_triton(seed, dtype):
    programs, n = 2, 64
    out = np.zeros(5 * programs * n, np.uint32)
    want, got = RANDINT4X.last((programs,), seed, np.zeros(1, dtype), out, N=n, FROM_MEMORY=False,
                                    DTYPE=getattr(tl, dtype), ROUNDS=10)
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(got)) > 4 * programs * n * 0.99  # the four streams differ from each other


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint32", "uint64"])
def test_randint_of_loaded_offsets_matches_triton(rng, dtype):
    n = 128
    offsets = _offsets(rng, dtype, n)
    out = np.zeros(5 * n, np.uint32)
    want, got = RANDINT4X.last((1,), 2024, offsets, out, N=n, FROM_MEMORY=True, DTYPE=tl.int32, ROUNDS=10)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("rounds", [1, 7])
def test_other_round_counts_match_triton(rounds):
    n = 64
    out = np.zeros(5 * n, np.uint32)
    want, got = RANDINT4X.last((1,), 99, np.zeros(1, np.int32), out, N=n, FROM_MEMORY=False, DTYPE=tl.int32,
                                    ROUNDS=rounds)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", [0, 42, -1, 2**40 + 3])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_uniform_floats_match_triton_bit_for_bit(rng, seed, dtype):
    n = 256
    offsets = _offsets(rng, dtype, n)
    out = np.zeros(5 * n, np.float32)
    want, got = UNIFORM.last((1,), seed, offsets, out, N=n)
    np.testing.assert_array_equal(bits(got), bits(want))
    assert got.min() >= 0.0 and got.max() < 1.0


def test_uniform_floats_of_a_2d_offset_block_match_triton():
    out = np.zeros((16, 32), np.float32)
    want, got = UNIFORM_2D.last((1,), 7, out, M=16, N=32)
    np.testing.assert_array_equal(bits(got), bits(want))


@pytest.mark.parametrize("seed", [np.int64(-3), np.int64(2**45 + 1), np.int32(77), np.uint64(2**63 + 9)])
def test_seed_loaded_from_memory_matches_triton(seed):
    out = np.zeros(64, np.uint32)
    want, got = SEED_FROM_MEMORY.last((1,), np.array([seed]), out, N=64)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["uint32", "int32", "float32", "uint64", "int64"])
def test_philox_of_four_counter_words_matches_triton(rng, dtype):
    # 32-bit words take the seed's two halves as the key; 64-bit words the seed and 0 (their own constants).
    n = 64
    width = np.dtype(dtype).itemsize * 8
    words = rng.integers(0, 2**width, size=4 * n, dtype=np.uint64 if width == 64 else np.uint32,
                         endpoint=False).view(dtype)
    out = np.zeros(4 * n, np.uint64 if width == 64 else np.uint32)
    want, got = PHILOX.last((1,), 2**36 + 12345, words, out, N=n)
    np.testing.assert_array_equal(got, want)


def test_the_philox_4x32_10_known_answer():
    """Random123's published known-answer vectors for philox4x32-10 (counter and key words as given), independent
    of Triton: counter 0 / key 0, all ones, and the pi digits."""
    vectors = [
        ([0, 0, 0, 0], [0, 0], [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
        ([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 2, [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
        ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0],
         [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
    ]
    n = 4
    counters = np.zeros(4 * n, np.uint32)
    want = np.zeros(4 * n, np.uint32)
    seeds = []
    for i, (ctr, key, result) in enumerate(vectors):
        counters[i::n][:4] = ctr
        want[i::n][:4] = result
        seeds.append(key[0] | key[1] << 32)
    # One launch per key (the key is the seed, one per launch).
    for i, seed in enumerate(seeds):
        out = np.zeros(4 * n, np.uint32)
        PHILOX.tessel[(1,)](seed, counters, out, N=n)
        np.testing.assert_array_equal(out[i::n], want[i::n], err_msg=f"vector {i}")


@pytest.mark.parametrize("seed", [3, 2**40 + 3])
def test_normals_match_triton_and_are_standard_normal(seed):
    programs, n = 4, 256
    out = np.zeros(5 * programs * n, np.float32)
    want, got = NORMAL.last((programs,), seed, out, N=n)
    # log, sqrt, cos and sin are each target's own: a few ulps from numpy's.
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
    np.testing.assert_array_equal(got[:programs * n], got[programs * n:2 * programs * n])  # randn is randn4x's first
    sample = got[programs * n:].astype(np.float64)  # the four streams, 4096 values
    assert abs(sample.mean()) < 4 / math.sqrt(sample.size)
    assert abs(sample.std() - 1) < 0.05
    # Kolmogorov-Smirnov distance to the standard normal's CDF, far below what a wrong transform gives.
    ordered = np.sort(sample)
    cdf = np.array([0.5 * (1 + math.erf(x / math.sqrt(2))) for x in ordered])
    steps = np.arange(1, ordered.size + 1) / ordered.size
    assert np.max(np.abs(cdf - steps)) < 1.63 / math.sqrt(ordered.size)  # the 1% critical value
    # Quarters of the stream are nearly uncorrelated.
    quarters = sample.reshape(4, -1)
    assert np.max(np.abs(np.corrcoef(quarters) - np.eye(4))) < 0.1


@pytest.mark.parametrize("dtype", ["uint32", "uint64", "int32", "int64"])
def test_umulhi_matches_triton(rng, dtype):
    # Non-negative values for the signed types: Triton's interpreter reads those as signed (its GPUs as unsigned).
    n = 64
    info = np.iinfo(dtype)
    low = 0
    x = np.concatenate([np.array([0, 1, info.max, info.max // 3], dtype),
                        rng.integers(low, info.max, size=n - 4, dtype=dtype, endpoint=True)])
    y = np.concatenate([np.array([info.max, info.max, info.max, 7], dtype),
                        rng.integers(low, info.max, size=n - 4, dtype=dtype, endpoint=True)])
    out = np.zeros(n, dtype)
    want, got = UMULHI.last((1,), x, y, out, N=n)
    np.testing.assert_array_equal(got, want)
    exact = [(int(a) * int(b)) >> (8 * x.itemsize) for a, b in zip(x, y)]
    np.testing.assert_array_equal(got, np.array(exact, dtype=np.uint64).astype(dtype))


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_umulhi_reads_signed_operands_as_unsigned(rng, dtype):
    """Negative operands: the high half of the unsigned product, as Triton's GPUs compute it (mul.hi.u32,
    __umul64hi); numpy's arbitrary-precision product of the unsigned readings is the reference."""
    n = 64
    info = np.iinfo(dtype)
    x = np.concatenate([np.array([-1, -1, info.min, -2], dtype), rng.integers(info.min, 0, size=n - 4, dtype=dtype)])
    y = np.concatenate([np.array([-1, 2, info.min, 3], dtype), rng.integers(info.min, info.max, size=n - 4,
                                                                            dtype=dtype)])
    out = np.zeros(n, dtype)
    tessel.jit(_umulhi_kernel)[(1,)](x, y, out, N=n)
    width = 8 * x.itemsize
    unsigned = [((int(a) % 2**width) * (int(b) % 2**width)) >> width for a, b in zip(x, y)]
    np.testing.assert_array_equal(out.view(f"u{x.itemsize}"), np.array(unsigned, dtype=f"u{x.itemsize}"))


@pytest.mark.parametrize("dtype,literal", [("uint32", 0xCD9E8D57), ("uint32", 5), ("int32", 12345),
                                           ("uint64", 0xCA5A826395121157), ("int64", 2**40 + 1)])
def test_umulhi_with_a_literal_matches_triton(rng, dtype, literal):
    n = 32
    x = rng.integers(0, np.iinfo(dtype).max, size=n, dtype=dtype, endpoint=True)
    out = np.zeros(n, dtype)
    want, got = UMULHI_LITERAL.last((1,), x, out, N=n, LIT=literal)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["int16", "uint8", "float32"])
def test_umulhi_of_other_types_is_an_error(dtype):
    n = 16
    x = np.ones(n, dtype)
    with pytest.raises(tessel.CompilationError, match=r"umulhi\(\): expected dtype .* but got") as info:
        tessel.jit(_umulhi_kernel)[(1,)](x, x, np.zeros(n, dtype), N=n)
    assert "tl.umulhi(tl.load(x_ptr + idx), tl.load(y_ptr + idx))" in str(info.value)
