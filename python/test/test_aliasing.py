"""A load observes memory as it was when the load executed, whatever store follows it in the same program and however
the two address maps relate (broadcast, transposed, reshaped, reversed, in loops, through reductions, through two
arguments that are views of one array). The reference is numpy on a copy taken before the launch."""
import numpy as np
import pytest
import torch

import tessel as triton
import tessel.language as tl


@triton.jit
def _add_row_first(z_ptr, N: tl.constexpr):
    # The pattern: each row plus its first element, stored over the row.
    m = tl.arange(0, N)
    n = tl.arange(0, N)
    zp = z_ptr + m[:, None] * N + n[None, :]
    v = tl.load(zp) + tl.load(z_ptr + m * N)[:, None]
    tl.store(zp, v)


@pytest.mark.parametrize("n", [4, 16, 64])
def test_broadcast_load_then_store(rand, n):
    z = rand((n, n), np.float32)
    expected = z + z[:, :1]
    _add_row_first[(1,)](z, N=n)
    np.testing.assert_array_equal(z, expected)


@triton.jit
def _transpose_in_place(z_ptr, N: tl.constexpr):
    m = tl.arange(0, N)
    n = tl.arange(0, N)
    v = tl.load(z_ptr + m[:, None] * N + n[None, :])
    tl.store(z_ptr + m[:, None] * N + n[None, :], tl.trans(v))


@triton.jit
def _transpose_view_in_place(z_ptr, N: tl.constexpr):
    # The same through an expand_dims on the other axis: the load's address map is the store's, transposed.
    m = tl.arange(0, N)
    n = tl.arange(0, N)
    v = tl.load(z_ptr + m[None, :] * N + n[:, None])
    tl.store(z_ptr + m[:, None] * N + n[None, :], v)


@pytest.mark.parametrize("kernel", [_transpose_in_place, _transpose_view_in_place])
@pytest.mark.parametrize("n", [4, 32])
def test_transpose_in_place(rand, kernel, n):
    z = rand((n, n), np.float32)
    expected = z.T.copy()
    kernel[(1,)](z, N=n)
    np.testing.assert_array_equal(z, expected)


@triton.jit
def _reverse_in_place(x_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(x_ptr + o, tl.load(x_ptr + (N - 1 - o)))


@triton.jit
def _reshape_rotate(x_ptr, N: tl.constexpr):
    # A 1-D load seen as 2-D through reshape, stored transposed over the same memory.
    o = tl.arange(0, N * N)
    v = tl.reshape(tl.load(x_ptr + o), (N, N))
    m = tl.arange(0, N)
    tl.store(x_ptr + m[None, :] * N + m[:, None], v)


def test_reverse_in_place(rand):
    x = rand(256, np.float32)
    expected = x[::-1].copy()
    _reverse_in_place[(1,)](x, N=256)
    np.testing.assert_array_equal(x, expected)


def test_reshape_then_store_transposed(rand):
    x = rand(64, np.float32)
    expected = x.reshape(8, 8).T.reshape(-1).copy()
    _reshape_rotate[(1,)](x, N=8)
    np.testing.assert_array_equal(x, expected)


@triton.jit
def _zero_then_sum(x_ptr, sum_ptr, N: tl.constexpr):
    # The reduction of a load runs after a store that zeroes what was loaded.
    o = tl.arange(0, N)
    v = tl.load(x_ptr + o)
    tl.store(x_ptr + o, tl.zeros((N,), tl.float32))
    tl.store(sum_ptr, tl.sum(v, 0))
    tl.store(sum_ptr + 1, tl.max(v, 0))


def test_reduction_after_store(rand):
    x = rand(128, np.float32)
    out = np.zeros(2, np.float32)
    expected = np.array([x.sum(), x.max()], np.float32)
    _zero_then_sum[(1,)](x, out, N=128)
    np.testing.assert_allclose(out, expected, rtol=1e-5)
    assert not x.any()


@triton.jit
def _shift_steps(x_ptr, STEPS: tl.constexpr, N: tl.constexpr):
    # Each iteration loads the block and stores it one element further: a chain of in-place shifts.
    o = tl.arange(0, N)
    for i in range(STEPS):
        v = tl.load(x_ptr + i + o)
        tl.store(x_ptr + i + 1 + o, v * 2)


def test_loop_load_then_overlapping_store(rand):
    x = rand(16 + 4, np.float32)
    expected = x.copy()
    for i in range(4):
        expected[i + 1:i + 17] = expected[i:i + 16] * 2
    _shift_steps[(1,)](x, STEPS=4, N=16)
    np.testing.assert_array_equal(x, expected)


@triton.jit
def _block_steps(x_ptr, n, STEP: tl.constexpr, BLOCK: tl.constexpr):
    # Blocks of BLOCK elements, STEP apart: each stores its start over its elements. With STEP < BLOCK a block
    # overwrites part of the previous one (the later block wins); with STEP == BLOCK the blocks never meet.
    o = tl.arange(0, BLOCK)
    for off in range(0, n, STEP):
        tl.store(x_ptr + off + o, tl.zeros([BLOCK], tl.int32) + off, mask=off + o < n)


@pytest.mark.parametrize("step", [1024, 1000, 512, 1])
def test_loop_block_steps(step):
    n = 3000
    x = np.full(n, -1, np.int32)
    expected = x.copy()
    for off in range(0, n, step):
        expected[off:off + 1024] = off
    _block_steps[(1,)](x, n, STEP=step, BLOCK=1024)
    np.testing.assert_array_equal(x, expected)


@triton.jit
def _store_then_load(x_ptr, y_ptr, N: tl.constexpr):
    # The other direction: a load after a store to the same memory sees the stored values.
    o = tl.arange(0, N)
    tl.store(x_ptr + o, o.to(tl.float32) * 3)
    tl.store(y_ptr + o, tl.load(x_ptr + (N - 1 - o)))


def test_load_after_store_sees_it(rand):
    x, y = rand(32, np.float32), np.zeros(32, np.float32)
    _store_then_load[(1,)](x, y, N=32)
    np.testing.assert_array_equal(y, (np.arange(32, dtype=np.float32) * 3)[::-1])


@triton.jit
def _scaled_copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(y_ptr + o, tl.load(x_ptr + o, mask=m) * 2, mask=m)


@triton.jit
def _reverse_copy(x_ptr, y_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(y_ptr + o, tl.load(x_ptr + (N - 1 - o)))


def test_overlapping_views_as_two_arguments(rand):
    # y is x shifted by one element: in one program, every element must be read before any is written.
    a = rand(65, np.float32)
    expected = a.copy()
    expected[1:] = a[:-1] * 2
    k = _scaled_copy[(1,)](a[:-1], a[1:], 64, BLOCK=64)
    np.testing.assert_array_equal(a, expected)
    # Overlapping arrays are compiled apart from disjoint ones (the specialization records it).
    assert _signature(k).count("tile.noalias") == 0, _signature(k)


def _signature(kernel):
    return kernel.asm["ttir"].split("func.func", 1)[1].split("\n", 1)[0]


def test_same_array_twice(rand):
    a = rand(64, np.float32)
    expected = a[::-1].copy()
    _reverse_copy[(1,)](a, a, N=64)
    np.testing.assert_array_equal(a, expected)


def test_overlapping_torch_views(rand):
    t = torch.from_numpy(rand(65, np.float32))
    expected = t.clone()
    expected[1:] = t[:-1] * 2
    _scaled_copy[(1,)](t[:-1], t[1:], 64, BLOCK=64)
    torch.testing.assert_close(t, expected, rtol=0, atol=0)
    # Strided views: a column spans every row, so it overlaps row 1 (torch and numpy layouts read from strides).
    m = rand((8, 8), np.float32)
    for column, row in ((m[:, 0], m[1]), (torch.from_numpy(m)[:, 0], torch.from_numpy(m)[1])):
        k = _scaled_copy.warmup(column, row, 8, BLOCK=8)
        assert _signature(k).count("tile.noalias") == 0, _signature(k)
    # ... but not a row after its last element.
    k = _scaled_copy.warmup(m[:7, 0], m[7, 1:], 7, BLOCK=8)
    assert _signature(k).count("tile.noalias") == 2, _signature(k)


def test_disjoint_slices_are_noalias(rand):
    # Two halves of one array do not overlap: the kernel is the fused one, and correct.
    a = rand(128, np.float32)
    expected = a.copy()
    expected[64:] = a[:64] * 2
    k = _scaled_copy[(1,)](a[:64], a[64:], 64, BLOCK=64)
    np.testing.assert_array_equal(a, expected)
    assert _signature(k).count("tile.noalias") == 2, _signature(k)


def test_disjoint_arrays_are_fused(rand, target):
    # Distinct arrays: no load is read into a buffer first (the fast path of every element-wise kernel) on the CPU,
    # and no barrier orders the threads' accesses on GPUs.
    x, y = rand(1024, np.float32), np.zeros(1024, np.float32)
    k = _scaled_copy[(1,)](x, y, 1024, BLOCK=1024)
    np.testing.assert_array_equal(y, x * 2)
    if target.startswith("cpu"):
        assert "memref.alloca" not in k.asm["loops"]
    else:
        barrier = "s_barrier" if target.startswith("sim:gfx") else "bar.sync"
        assert "tilegpu.barrier" not in k.asm["ttgir"]
        assert barrier not in k.asm["amdgcn" if target.startswith("sim:gfx") else "ptx"]
