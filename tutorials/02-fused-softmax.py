"""
Tutorial 2: a fused row-wise softmax
====================================

softmax(x)_j = exp(x_j - max(x)) / sum_k exp(x_k - max(x)), for every row of a matrix.

Written with numpy, this is several passes over the whole matrix: one for the row
maxima, one for the subtraction, one for the exponentials, one for the sums and one
for the division, each reading (and most writing) a full-size temporary. For a
matrix larger than the caches, every pass goes to main memory.

A *fused* kernel gives each program one row: it loads the row once, does all the
steps on the block while it sits in registers and cache, and writes the result
once. It moves the minimum possible amount of data, one read and one write, which
for a memory-bound operation is most of what speed is about.

New here:

* reductions over a block: ``tl.max`` and ``tl.sum``;
* a block size that must cover a whole row: blocks have power-of-two sizes, so the
  block is the next power of two at or above the row length, and the padding lanes
  are loaded as ``-inf`` so they change neither the maximum nor the sum
  (``exp(-inf) == 0``);
* row strides passed as arguments, so views (e.g. a column slice) work too.

Run: ``python tutorials/02-fused-softmax.py``
"""
import os

import numpy as np

import tessel as triton
import tessel.language as tl


@triton.jit
def softmax_kernel(in_ptr, out_ptr, n_cols, in_row_stride, out_row_stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    in_row = tl.load(in_ptr + row * in_row_stride + cols, mask=cols < n_cols, other=float("-inf"))
    # Subtracting the row maximum keeps exp() from overflowing; it cancels in the ratio.
    shifted = in_row - tl.max(in_row, axis=0)
    numerator = tl.exp(shifted)
    denominator = tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, numerator / denominator, mask=cols < n_cols)


def softmax(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Row-wise softmax of a 2-D fp32 array, computed by softmax_kernel."""
    n_rows, n_cols = x.shape
    if out is None:
        out = np.empty((n_rows, n_cols), x.dtype)
    # Strides are in elements: pointer arithmetic in a kernel counts elements, not bytes.
    softmax_kernel[(n_rows,)](
        x, out, n_cols, x.strides[0] // x.itemsize, out.strides[0] // out.itemsize,
        BLOCK_SIZE=triton.next_power_of_2(n_cols),
    )
    return out


def numpy_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# %%
# Correctness: odd row lengths (so rows are padded), a strided view, and a row as
# long as the benchmark's longest; compared with numpy in float64.

def check() -> None:
    rng = np.random.default_rng(0)
    max_err = 0.0
    for n_rows, n_cols in [(1, 1), (97, 781), (16, 8192)]:
        wide = rng.standard_normal((n_rows, n_cols + 5), dtype=np.float32) * 4
        x = wide[:, 3 : n_cols + 3]
        out = softmax(x)
        ref = numpy_softmax(x.astype(np.float64))
        max_err = max(max_err, float(np.max(np.abs(out - ref))))
        # Relative to each probability: small ones must be right too, not just the large.
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-8, err_msg=f"softmax {n_rows}x{n_cols}")
    print(f"max abs error vs numpy: {max_err:.3g}")
    print("OK")


# %%
# Speed, in effective bandwidth: the bytes the operation must move (the matrix read
# once and written once) divided by the median time. numpy moves far more than
# that; counting the same bytes for both makes the ratio a plain speed ratio.

N_ROWS = 4096
COLS = [128, 256, 512, 1024, 2048, 4096, 8192]


def median_seconds(fn) -> float:
    # triton.testing.do_bench warms up (the first call compiles), then returns the median
    # of repeated runs in milliseconds.
    return triton.testing.do_bench(fn, warmup=25, rep=300, return_mode="median") / 1e3


def benchmark() -> None:
    print(f"\nfp32 softmax over rows, {len(os.sched_getaffinity(0))} threads available; "
          "GB/s = 2 * bytes of the matrix / median time")
    print(f"{'rows x cols':>12}  {'Tessel GB/s':>12}  {'numpy GB/s':>11}  {'Tessel/numpy':>12}")
    rng = np.random.default_rng(1)
    for n_cols in COLS:
        # Fewer rows for the longest rows keeps the whole run short; rates do not
        # depend on the row count once there are many more rows than threads.
        n_rows = min(N_ROWS, 2**22 // n_cols)
        x = rng.standard_normal((n_rows, n_cols), dtype=np.float32)
        out = np.empty_like(x)
        gbytes = 2 * x.nbytes / 1e9
        tessel_gbs = gbytes / median_seconds(lambda: softmax(x, out))
        numpy_gbs = gbytes / median_seconds(lambda: numpy_softmax(x))
        print(f"{f'{n_rows}x{n_cols}':>12}  {tessel_gbs:>12.2f}  {numpy_gbs:>11.2f}  {tessel_gbs / numpy_gbs:>11.2f}x")


def main() -> None:
    check()
    benchmark()


if __name__ == "__main__":
    main()
