"""Global loads and stores through buffer resources on AMD (amd-buffer-accesses): one scalar pointer plus i32 offsets
that MLIR's integer range analysis bounds become buffer_load/buffer_store, masked lanes moved past the resource's
range (zeros read, nothing written, no branch). Every chip, simulated, against numpy: every element type, masks with
and without `other`, vector widths, copies in the layout, and offsets the analysis cannot bound (global accesses)."""
import re

import numpy as np
import pytest

import tessel
import tessel.language as tl
from tessel import knobs


@pytest.fixture(params=["sim:gfx90a", "sim:gfx942", "sim:gfx950"])
def target(request, monkeypatch):
    """Overrides the suite's per-target fixture: each AMD chip, simulated."""
    monkeypatch.setattr(knobs, "target", request.param)
    return request.param


def instructions(kernel, name):
    return len(re.findall(rf"^\s*{name}\b", kernel.asm["amdgcn"], re.M))


@tessel.jit
def scale_rows(x_ptr, y_ptr, pad_ptr, stride, n, OTHER: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + offs, mask=offs < n, other=OTHER)
    tl.store(y_ptr + row * stride + offs, x * 3, mask=offs < n)
    tl.store(pad_ptr + row * BLOCK + offs, x)  # `other` where the mask is off


DTYPES = [np.float32, np.float16, np.float64, np.int8, np.uint8, np.int16, np.int32, np.int64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("other", [0, 7])
@pytest.mark.parametrize("n", [1, 100, 128])
def test_masked_rows(rng, dtype, other, n):
    rows, block, stride = 5, 128, 131
    x = (rng.standard_normal((rows, stride)) * 20).astype(dtype)
    y = np.full((rows, stride), 5, dtype)
    pad = np.full((rows, block), 9, dtype)
    k = scale_rows[(rows,)](x, y, pad, stride, n, OTHER=other, BLOCK=block)
    expected = np.full((rows, stride), 5, dtype)
    expected[:, :n] = x[:, :n] * dtype(3)
    np.testing.assert_array_equal(y, expected)
    expected_pad = np.full((rows, block), other, dtype)
    expected_pad[:, :n] = x[:, :n]
    np.testing.assert_array_equal(pad, expected_pad)
    # Every access of the rows (pad's too: row * BLOCK + offs is bounded) goes through a buffer resource.
    assert instructions(k, r"buffer_load_\w+") >= 1 and instructions(k, r"global_load_\w+") == 0
    assert instructions(k, r"buffer_store_\w+") >= 2 and instructions(k, r"global_store_\w+") == 0


@tessel.jit
def copy_block(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


@pytest.mark.parametrize("block,warps", [(1024, 4), (16, 4), (64, 1)])
def test_vectors_and_copies(rng, block, warps):
    # 1024 fp32 over 256 lanes: 16 bytes per access. 16 elements over 256 lanes: most lanes hold copies, which
    # must not write.
    x = rng.standard_normal(block).astype(np.float32)
    y = np.zeros(block, np.float32)
    k = copy_block[(1,)](x, y, BLOCK=block, num_warps=warps)
    np.testing.assert_array_equal(y, x)
    if block == 1024:
        assert instructions(k, "buffer_load_dwordx4") >= 1 and instructions(k, "buffer_store_dwordx4") >= 1


@tessel.jit
def shifted(x_ptr, y_ptr, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = x_ptr + offs
    x = tl.load(p + SHIFT, mask=(offs + SHIFT >= 0) & (offs + SHIFT < n), other=-1.0)  # two addptrs: summed
    tl.store(y_ptr + offs, x)


@pytest.mark.parametrize("shift", [3, -1])
def test_offsets_summed_or_negative(rng, shift):
    block = 256
    x = rng.standard_normal(block).astype(np.float32)
    y = np.zeros(block, np.float32)
    n = 200
    k = shifted[(1,)](x, y, n, SHIFT=shift, BLOCK=block)
    idx = np.arange(block) + shift
    np.testing.assert_array_equal(y, np.where((idx >= 0) & (idx < n), x[np.clip(idx, 0, block - 1)], -1.0))
    # Offsets that may be negative (masked or not) cannot go through a buffer resource: they are unsigned there.
    assert (instructions(k, r"buffer_load_\w+") > 0) == (shift >= 0)


@tessel.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + tl.load(y_ptr + offs, mask=offs < n),
             mask=offs < n)


@tessel.jit
def strided(x_ptr, y_ptr, stride, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs * stride))


def test_unbounded_offsets_stay_global(rng):
    # pid * BLOCK may exceed the range, and a stride is any int32: global accesses, still right.
    x, y = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
    out = np.zeros(1000, np.float32)
    k = add_kernel[(4,)](x, y, out, 1000, BLOCK=256)
    np.testing.assert_array_equal(out, x + y)
    assert instructions(k, r"buffer_load_\w+") == 0 and instructions(k, r"global_load_\w+") > 0
    z = np.zeros(64, np.float32)
    k = strided[(1,)](x, z, 3, BLOCK=64)
    np.testing.assert_array_equal(z, x[:192:3])
    assert instructions(k, r"buffer_load_\w+") == 0
