"""
Tutorial 1: adding two vectors
==============================

The smallest useful kernel: each program of a 1-D grid adds one block of two fp32
vectors. It shows the pieces every Tessel kernel is made of:

* ``@triton.jit`` turns a Python function into a kernel compiled for the device the
  arguments live on (here: host memory, so the CPU backend).
* The kernel is launched over a *grid* of programs; ``tl.program_id(0)`` tells each
  program which block is its own.
* ``tl.arange`` builds the block of element offsets; the block size is a
  ``tl.constexpr``, fixed when the kernel is compiled.
* ``tl.load`` / ``tl.store`` take a *mask*: lanes past the end of the vector do not
  touch memory, so the vector length need not be a multiple of the block.

The code is plain Triton: with ``import triton`` instead of ``import tessel as triton``
it runs on a GPU unchanged. numpy arrays (or CPU torch tensors) are passed directly.

Run: ``python tutorials/01-vector-add.py``
"""
import os

import numpy as np

import tessel as triton
import tessel.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    # Which block of the vectors this program handles.
    block_start = tl.program_id(axis=0) * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    # The last block may stick out past the end of the vectors: mask those lanes off.
    in_bounds = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=in_bounds)
    y = tl.load(y_ptr + offsets, mask=in_bounds)
    tl.store(out_ptr + offsets, x + y, mask=in_bounds)


def add(x: np.ndarray, y: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """x + y computed by add_kernel, written into `out` (allocated if not given)."""
    assert x.shape == y.shape and x.ndim == 1
    if out is None:
        out = np.empty_like(x)
    n = x.size
    # The grid may be a function of the launch's arguments, so it can follow a block
    # size chosen at launch (or by an autotuner) without repeating it here.
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)
    return out


# %%
# Correctness first: compare with numpy on a length that is not a multiple of the
# block size. Addition is exact, so the results must be identical.

def check() -> None:
    rng = np.random.default_rng(0)
    n = 98_437
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    out = add(x, y)
    max_err = float(np.max(np.abs(out - (x + y))))
    print(f"max abs error vs numpy: {max_err}")
    assert max_err == 0.0, "vector add does not match numpy"
    print("OK")


# %%
# Then speed. A kernel launch returns when the kernel is done, so timing the call is
# enough. Each measurement warms up first (the first call compiles), then takes the
# median of repeated runs: the median shrugs off the odd slow run on a busy machine.
# Bandwidth counts what the addition must move: two vectors read, one written.

SIZES = [2**k for k in range(12, 25)]


def median_seconds(fn) -> float:
    # triton.testing.do_bench warms up (the first call compiles), then returns the median
    # of repeated runs in milliseconds.
    return triton.testing.do_bench(fn, warmup=25, rep=250, return_mode="median") / 1e3


def benchmark() -> None:
    print(f"\nfp32 vector add, {len(os.sched_getaffinity(0))} threads available; GB/s = 3 * 4 bytes * n / median time")
    print(f"{'n':>10}  {'Tessel GB/s':>12}  {'numpy GB/s':>11}  {'Tessel/numpy':>12}")
    rng = np.random.default_rng(1)
    for n in SIZES:
        x = rng.standard_normal(n, dtype=np.float32)
        y = rng.standard_normal(n, dtype=np.float32)
        out = np.empty_like(x)
        gbytes = 3 * x.nbytes / 1e9
        tessel_gbs = gbytes / median_seconds(lambda: add(x, y, out))
        # numpy writes into a preallocated array too, so neither side pays for allocation.
        numpy_gbs = gbytes / median_seconds(lambda: np.add(x, y, out=out))
        print(f"{n:>10}  {tessel_gbs:>12.2f}  {numpy_gbs:>11.2f}  {tessel_gbs / numpy_gbs:>11.2f}x")


def main() -> None:
    check()
    benchmark()


if __name__ == "__main__":
    main()
