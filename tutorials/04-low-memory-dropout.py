"""
Tutorial 4: low-memory dropout
==============================

Dropout keeps each element of x with probability 1 - p (scaled by 1 / (1 - p)) and zeroes the rest. Its usual
implementation draws a random mask the size of x, keeps it in memory for the backward pass, and reads it back
there: one more full-size array written and read.

A counter-based generator makes the mask unnecessary. ``tl.rand(seed, offsets)`` is a pure function of the seed
and of each element's offset (Philox 4x32 with 10 rounds, the same streams as Triton's): calling it again with the
same seed gives the same numbers, so the backward pass recomputes the mask instead of loading it. The seed (one
int) is all that has to be kept.

New here: ``tl.rand`` (and its relatives ``tl.randint``, ``tl.randn``), and a kernel that is its own backward.

Run: ``python tutorials/04-low-memory-dropout.py``
"""
import numpy as np

import tessel as triton
import tessel.language as tl


@triton.jit
def seeded_dropout_kernel(x_ptr, out_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    in_bounds = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=in_bounds)
    # One uniform number in [0, 1) per element, determined by (seed, offset) alone.
    keep = tl.rand(seed, offsets) > p
    out = tl.where(keep, x / (1 - p), 0.0)
    tl.store(out_ptr + offsets, out, mask=in_bounds)


def seeded_dropout(x: np.ndarray, p: float, seed: int) -> np.ndarray:
    out = np.empty_like(x)
    n = x.size
    seeded_dropout_kernel[(triton.cdiv(n, 1024),)](x, out, n, p, seed, BLOCK_SIZE=1024)
    return out


# %%
# Correctness: the same seed gives the same mask (so a backward pass through the same function, applied to the
# gradient, zeroes exactly the dropped elements); another seed gives another mask; kept elements are scaled by
# 1 / (1 - p); the fraction kept is 1 - p within the binomial's spread.

def check() -> None:
    rng = np.random.default_rng(0)
    n, p = 100_003, 0.3
    x = rng.standard_normal(n).astype(np.float32) + 4  # never 0: a zero in the output means "dropped"
    a = seeded_dropout(x, p, seed=1234)
    b = seeded_dropout(x, p, seed=1234)
    c = seeded_dropout(x, p, seed=4321)
    np.testing.assert_array_equal(a, b)
    kept = a != 0
    np.testing.assert_allclose(a[kept], x[kept] / (1 - p), rtol=1e-6)
    assert (kept != (c != 0)).any(), "another seed should drop other elements"
    spread = 5 * np.sqrt(n * p * (1 - p))
    assert abs(kept.sum() - n * (1 - p)) < spread, kept.mean()
    # Backward: dropout's gradient is the same mask and scale, applied to the incoming gradient.
    grad = rng.standard_normal(n).astype(np.float32)
    np.testing.assert_array_equal(seeded_dropout(grad, p, 1234) != 0, kept & (grad != 0))
    print(f"kept {kept.mean():.4f} of the elements (expected {1 - p})")
    print("OK")


def main() -> None:
    check()


if __name__ == "__main__":
    main()
