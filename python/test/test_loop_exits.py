"""`break` and `continue` in kernels (beyond Triton), on every target: for and while loops, nested loops, exits
under nested ifs, unrolled loops, block values carried across them; each kernel against the same function run as
plain Python on the same data."""
import numpy as np
import pytest

import tessel as triton
import tessel.language as tl


@triton.jit
def _scan_until_negative(x_ptr, out_ptr, n):
    total = 0.0
    count = 0
    for i in range(0, n):
        x = tl.load(x_ptr + i)
        if x < 0:
            break
        if x == 0:
            continue
        total += x
        count += 1
    tl.store(out_ptr, total)
    tl.store(out_ptr + 1, count.to(tl.float32))


def _scan_until_negative_py(x):
    total, count = 0.0, 0
    for v in x:
        if v < 0:
            break
        if v == 0:
            continue
        total += v
        count += 1
    return [total, count]


@pytest.mark.parametrize("data", [[1, 2, 0, 3, -1, 5], [0, 0, 0], [-1, 4], [3, 4, 5], []])
def test_for_with_break_and_continue(data):
    x = np.array(data + [0], np.float32)
    out = np.zeros(2, np.float32)
    _scan_until_negative[(1,)](x, out, len(data))
    np.testing.assert_array_equal(out, _scan_until_negative_py(data))


@triton.jit
def _while_exits(x_ptr, out_ptr, n, target):
    i = 0
    skipped = 0
    while i < n:
        v = tl.load(x_ptr + i)
        i += 1
        if v % 2 == 1:
            skipped += 1
            continue
        if v == target:
            break
    tl.store(out_ptr, i)
    tl.store(out_ptr + 1, skipped)


def _while_exits_py(x, target):
    i = skipped = 0
    while i < len(x):
        v = x[i]
        i += 1
        if v % 2 == 1:
            skipped += 1
            continue
        if v == target:
            break
    return [i, skipped]


@pytest.mark.parametrize("target", [4, 8, 100])
def test_while_with_break_and_continue(target):
    data = [1, 3, 2, 5, 4, 7, 8, 6]
    out = np.zeros(2, np.int32)
    _while_exits[(1,)](np.array(data, np.int32), out, len(data), target)
    np.testing.assert_array_equal(out, _while_exits_py(data, target))


@triton.jit
def _nested(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    # For each row, the index of its first negative element (N if none); rows that start with 0 are skipped (-1).
    for r in range(M):
        found = N
        if tl.load(x_ptr + r * N) == 0:
            tl.store(out_ptr + r, -1)
            continue
        for c in range(N):
            if tl.load(x_ptr + r * N + c) < 0:
                found = c
                break
        tl.store(out_ptr + r, found)


def test_nested_loops_each_with_its_exits(rng):
    x = rng.integers(-3, 10, (6, 8)).astype(np.int32)
    x[1, 0] = 0
    x[2] = np.abs(x[2]) + 1
    out = np.zeros(6, np.int32)
    _nested[(1,)](x, out, 6, 8)
    want = [-1 if row[0] == 0 else next((c for c, v in enumerate(row) if v < 0), 8) for row in x]
    np.testing.assert_array_equal(out, want)


@triton.jit
def _block_accumulate(x_ptr, out_ptr, LIMIT, N: tl.constexpr, STEPS: tl.constexpr):
    # Adds rows of a block until the running sum's maximum passes LIMIT; a block value is carried across the exit.
    acc = tl.zeros((N,), tl.float32)
    for s in range(STEPS):
        acc += tl.load(x_ptr + s * N + tl.arange(0, N))
        if tl.max(acc, 0) > LIMIT:
            break
    tl.store(out_ptr + tl.arange(0, N), acc)


def test_block_values_across_a_break(rng):
    x = rng.uniform(0, 1, (8, 16)).astype(np.float32)
    out = np.zeros(16, np.float32)
    _block_accumulate[(1,)](x, out, 2.5, 16, 8)
    acc = np.zeros(16, np.float32)
    for row in x:
        acc += row
        if acc.max() > 2.5:
            break
    np.testing.assert_allclose(out, acc, rtol=1e-6)


@triton.jit
def _static_break(out_ptr, STOP: tl.constexpr):
    total = 0
    for i in tl.static_range(8):
        if i == STOP:
            break
        total += i
    tl.store(out_ptr, total)


@pytest.mark.parametrize("stop", [0, 3, 100])
def test_unrolled_loop_breaks_at_compile_time(stop):
    out = np.zeros(1, np.int32)
    _static_break[(1,)](out, stop)
    assert out[0] == sum(range(min(stop, 8)))
