"""tl.program_id and tl.num_programs on 1-D, 2-D and 3-D grids: every program of the
grid runs exactly once and sees its own coordinates and the grid's size."""
import numpy as np
import pytest

import tessel as triton
import tessel.language as tl


@triton.jit
def _grid_kernel(ids_ptr, counts_ptr, sizes_ptr):
    x = tl.program_id(0)
    y = tl.program_id(1)
    z = tl.program_id(axis=2)
    nx = tl.num_programs(0)
    ny = tl.num_programs(1)
    nz = tl.num_programs(axis=2)
    flat = (z * ny + y) * nx + x
    tl.store(ids_ptr + flat, x + 100 * y + 10000 * z)
    # Each program owns its slot, so a program run twice (or never) shows up as a
    # count other than 1 without needing atomics.
    tl.store(counts_ptr + flat, tl.load(counts_ptr + flat) + 1)
    tl.store(sizes_ptr + flat * 3, nx)
    tl.store(sizes_ptr + flat * 3 + 1, ny)
    tl.store(sizes_ptr + flat * 3 + 2, nz)


# Odd sizes: the threads' shares of the grid start inside rows and planes (each share carries its programs'
# coordinates from its first one's).
@pytest.mark.parametrize("grid", [(1,), (37,), (3, 5), (2, 3, 4), (1, 1, 6), (7, 5, 3), (129, 33, 2), (1, 97, 5)],
                         ids=str)
def test_program_id_and_num_programs(grid):
    full = tuple(grid) + (1,) * (3 - len(grid))
    nx, ny, nz = full
    count = nx * ny * nz
    ids = np.full(count, -1, np.int32)
    counts = np.zeros(count, np.int32)
    sizes = np.full((count, 3), -1, np.int32)
    _grid_kernel[grid](ids, counts, sizes)
    z, y, x = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    np.testing.assert_array_equal(ids, (x + 100 * y + 10000 * z).ravel())
    np.testing.assert_array_equal(counts, np.ones(count))
    np.testing.assert_array_equal(sizes, np.tile(np.array(full, np.int32), (count, 1)))
