"""Block creation (arange, zeros, full) and memory access (load/store with masks,
`other`, 2-D strided blocks, gathers and scatters).

test_masked_access_next_to_guard_pages places arrays directly against inaccessible
pages, so a masked-off lane that touches memory crashes a child process instead of
reading a neighbour's bytes unnoticed. Running this file as a script is that child.
"""
import ctypes
import mmap
import os
import subprocess
import sys

import numpy as np
import pytest

import tessel as triton
import tessel.language as tl

f16, f32, i32 = np.float16, np.float32, np.int32


# ---------------------------------------------------------------------------
# creation
# ---------------------------------------------------------------------------


@triton.jit
def _creation_kernel(arange_ptr, shifted_ptr, zeros_ptr, full_ptr, full_int_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(arange_ptr + offs, offs)
    # A range not starting at zero (its length must still be a power of two).
    tl.store(shifted_ptr + offs, tl.arange(BLOCK, 2 * BLOCK))
    tl.store(zeros_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32))
    rows = tl.arange(0, 4)
    tile = rows[:, None] * BLOCK + offs[None, :]
    tl.store(full_ptr + tile, tl.full((4, BLOCK), 3.5, tl.float16))
    tl.store(full_int_ptr + offs, tl.full((BLOCK,), -7, tl.int32))


@pytest.mark.parametrize("block", [1, 16, 256])
def test_creation(block):
    arange = np.full(block, -1, i32)
    shifted = np.full(block, -1, i32)
    zeros = np.full(block, -1.0, f32)
    full = np.zeros((4, block), f16)
    full_int = np.zeros(block, i32)
    _creation_kernel[(1,)](arange, shifted, zeros, full, full_int, BLOCK=block)
    np.testing.assert_array_equal(arange, np.arange(block))
    np.testing.assert_array_equal(shifted, np.arange(block, 2 * block))
    np.testing.assert_array_equal(zeros, np.zeros(block))
    np.testing.assert_array_equal(full, np.full((4, block), 3.5, f16))
    np.testing.assert_array_equal(full_int, np.full(block, -7))


# ---------------------------------------------------------------------------
# masked loads and stores
# ---------------------------------------------------------------------------


@triton.jit
def _load_other_kernel(x_ptr, out_ptr, n, OTHER: tl.constexpr, BLOCK: tl.constexpr):
    # Writes the whole block, so the `other` value of every masked-off lane is visible.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=OTHER)
    tl.store(out_ptr + offs, x)


@pytest.mark.parametrize("n", [1, 37, 128, 200])
@pytest.mark.parametrize("dt,other", [(f32, -1.5), (f16, 2.0), (i32, -7)], ids=["f32", "f16", "i32"])
def test_load_mask_other(rand, dt, other, n):
    block = 128
    grid = triton.cdiv(n, block)
    x = rand(n, dt, -100, 100)
    out = np.zeros(grid * block, dt)
    _load_other_kernel[(grid,)](x, out, n, OTHER=other, BLOCK=block)
    ref = np.full(grid * block, other, dt)
    ref[:n] = x
    np.testing.assert_array_equal(out, ref)


@triton.jit
def _masked_store_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    # Two masks: the bound, and a non-contiguous one (every third element only).
    tl.store(out_ptr + offs, x * 2, mask=(offs < n) & (offs % 3 != 1))


@pytest.mark.parametrize("n", [1, 100, 1000])
@pytest.mark.parametrize("dt", [f32, f16, i32], ids=["f32", "f16", "i32"])
def test_masked_store(rand, dt, n):
    block = 128
    x = rand(n + 64, dt, -100, 100)
    sentinel = np.array(42, dt)
    out = np.full(n + 64, sentinel)
    _masked_store_kernel[(triton.cdiv(n, block),)](x, out, n, BLOCK=block)
    ref = np.full(n + 64, sentinel)
    keep = (np.arange(n) % 3) != 1
    ref[:n][keep] = (x[:n] * 2)[keep]
    np.testing.assert_array_equal(out, ref)


@triton.jit
def _copy_2d_kernel(x_ptr, out_ptr, M, N, stride_xm, stride_xn, stride_om, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :] * stride_xn, mask=mask)
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :], x + 1, mask=mask)


@pytest.mark.parametrize("shape", [(1, 1), (33, 70), (64, 32)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("view", ["contiguous", "column-slice", "transposed"])
def test_strided_2d(rand, shape, view):
    M, N = shape
    if view == "contiguous":
        x = rand((M, N), f32)
    elif view == "column-slice":
        x = rand((M, 2 * N + 3), f32)[:, 1 : 2 * N + 1 : 2]
    else:
        x = rand((N, M), f32).T
    out = np.zeros((M, N + 5), f32)
    stride = [s // x.itemsize for s in x.strides]
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 32))
    _copy_2d_kernel[grid](x, out, M, N, stride[0], stride[1], out.shape[1], BM=16, BN=32)
    np.testing.assert_array_equal(out[:, :N], x + 1)
    np.testing.assert_array_equal(out[:, N:], 0)


@triton.jit
def _gather_scatter_kernel(x_ptr, idx_ptr, gathered_ptr, scattered_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask)
    # Data-dependent addresses: no strided view can describe them.
    x = tl.load(x_ptr + idx, mask=mask)
    tl.store(gathered_ptr + offs, x, mask=mask)
    tl.store(scattered_ptr + idx, offs.to(tl.float32), mask=mask)


@pytest.mark.parametrize("n", [1, 300])
def test_gather_scatter(rand, rng, n):
    x = rand(n, f32)
    idx = rng.permutation(n).astype(i32)
    gathered = np.zeros(n, f32)
    scattered = np.zeros(n, f32)
    _gather_scatter_kernel[(triton.cdiv(n, 128),)](x, idx, gathered, scattered, n, BLOCK=128)
    np.testing.assert_array_equal(gathered, x[idx])
    ref = np.zeros(n, f32)
    ref[idx] = np.arange(n)
    np.testing.assert_array_equal(scattered, ref)


@triton.jit
def _bool_store_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) > 0, mask=mask)


def test_bool_array(rand):
    # numpy bool arrays are pointers to int1 (one byte per element).
    n = 50
    x = rand(n, f32)
    out = np.zeros(n, np.bool_)
    _bool_store_kernel[(1,)](x, out, n, BLOCK=64)
    np.testing.assert_array_equal(out, x > 0)


# ---------------------------------------------------------------------------
# masked-off lanes never touch memory
# ---------------------------------------------------------------------------


@triton.jit
def _shifted_copy_kernel(x_ptr, out_ptr, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    src = offs + SHIFT
    x = tl.load(x_ptr + src, mask=(src >= 0) & (src < n), other=-1.0)
    tl.store(out_ptr + offs, x, mask=offs < n)


@triton.jit
def _tile_copy_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], x * 3, mask=mask)


_PROT_NONE = 0  # <sys/mman.h>; Python's mmap module does not export it


def _guarded_array(n, dtype, at_end, keep):
    """n elements placed directly before (at_end) or after an inaccessible page."""
    page = mmap.PAGESIZE
    nbytes = n * np.dtype(dtype).itemsize
    pages = -(-nbytes // page)
    buf = mmap.mmap(-1, (pages + 2) * page)
    base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    for guard in (base, base + (pages + 1) * page):
        if libc.mprotect(guard, page, _PROT_NONE) != 0:
            raise OSError(ctypes.get_errno(), "mprotect failed")
    keep.append(buf)
    offset = (pages + 1) * page - nbytes if at_end else page
    return np.frombuffer(buf, dtype=dtype, count=n, offset=offset)


def _guard_page_child():
    keep = []
    for n in (1, 5, 100):
        block = triton.next_power_of_2(n) * 2  # always larger than n
        ref = np.arange(1, n + 1, dtype=f32)
        for shift, at_end in ((0, True), (1, True), (-1, False)):
            x = _guarded_array(n, f32, at_end, keep)
            x[:] = ref
            out = _guarded_array(n, f32, True, keep)
            _shifted_copy_kernel[(1,)](x, out, n, SHIFT=shift, BLOCK=block)
            src = np.arange(n) + shift
            expect = np.where((src >= 0) & (src < n), ref[np.clip(src, 0, n - 1)], -1.0)
            np.testing.assert_array_equal(out, expect, err_msg=f"n={n} shift={shift}")
    for M, N in ((1, 1), (3, 5), (17, 30)):
        x = _guarded_array(M * N, f32, True, keep)
        x[:] = np.arange(M * N)
        out = _guarded_array(M * N, f32, True, keep)
        _tile_copy_kernel[(1,)](x, out, M, N, BM=32, BN=32)
        np.testing.assert_array_equal(out, np.arange(M * N) * 3, err_msg=f"M={M} N={N}")
    print("guard pages ok")


@pytest.mark.skipif(sys.platform != "linux", reason="uses mmap + mprotect guard pages")
def test_masked_access_next_to_guard_pages():
    # A child process, because touching a guard page kills the process with SIGSEGV.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run(
        [sys.executable, __file__], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, (
        f"child exited with {proc.returncode} (negative: killed by that signal, -11 is SIGSEGV)\n"
        f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-4000:]}"
    )
    assert "guard pages ok" in proc.stdout


if __name__ == "__main__":
    _guard_page_child()


@triton.jit
def _store_addresses(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, x_ptr + 2 * offs)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_pointers_stored_as_their_addresses(target, dtype):
    # As Triton stores them: cast to the array's 64-bit integer type (the addresses).
    x = np.zeros(16, np.float32)
    out = np.zeros(8, dtype)
    _store_addresses[(1,)](x, out, 8)
    np.testing.assert_array_equal(out - out[0], 8 * np.arange(8))
    if target == "cpu":  # the host's own addresses (the simulators give their device's)
        assert int(out[0]) == x.ctypes.data


def test_pointers_into_a_narrower_array_are_an_error():
    with pytest.raises(triton.CompilationError, match=r"cannot store pointers \(\*fp32\[8\]\) into an array of "
                                                      r"i32: only a 64-bit integer array holds them"):
        _store_addresses[(1,)](np.zeros(16, np.float32), np.zeros(8, np.int32), 8)


@triton.jit
def _wrapping_mask(x_ptr, out_ptr, base, n, N: tl.constexpr):
    i = tl.arange(0, N)
    k = i + base  # int32: wraps past 2**31 - 1 for base near it
    m = k < n
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=m, other=-1.0), mask=m)


@pytest.mark.parametrize("base,n", [(2**31 - 8, 100), (0, 16), (0, 15), (-16, 0), (5, 21), (5, 20)])
def test_range_masks_all_true_or_not(base, n):
    # A mask `arange + base < n` that is all true lets the CPU's loops run without it; one whose range wraps
    # (base near 2**31: its first elements are large, its last negative) is not all true even though its last
    # element is below n.
    x = np.arange(16, dtype=np.float32) + 1
    out = np.full(16, 7.0, np.float32)
    _wrapping_mask[(1,)](x, out, base, n, N=16)
    k = (np.arange(16, dtype=np.int64) + base + 2**31) % 2**32 - 2**31  # int32 arithmetic
    m = k < n
    np.testing.assert_array_equal(out, np.where(m, x, 7.0))
