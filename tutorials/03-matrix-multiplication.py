"""
Tutorial 3: matrix multiplication
=================================

C = A @ B for A of M x K and B of K x N, one C tile per program, written as a Triton user writes it.

Each program owns a BLOCK_M x BLOCK_N tile of C. It walks K in steps of BLOCK_K: it loads a BLOCK_M x BLOCK_K tile
of A and a BLOCK_K x BLOCK_N tile of B, multiplies them with ``tl.dot`` and adds the product to an fp32
accumulator that stays in registers (on a GPU the dot runs on the tensor cores; on the CPU it is a register-blocked
vector loop). The tile is written once at the end, after an optional activation: fusing it costs nothing, as the
values are in registers anyway.

New here:

* ``tl.dot`` and a ``for`` loop over K that carries the accumulator and advances two blocks of pointers;
* masks on the ragged edges of M, N and K (``other=0.0``: zeros add nothing to the sums);
* the order in which programs visit tiles: consecutive program ids take a group of GROUP_M rows of tiles column by
  column, so that the tiles of A and B they read are shared by programs running at the same time (L2 reuse on a
  GPU, cache reuse on the CPU);
* ``@triton.autotune``: several tile shapes, the fastest picked the first time each (M, N, K) is seen;
* a fused activation, called as another @jit function.

Run: ``python tutorials/03-matrix-multiplication.py``
"""
import os

import numpy as np

import tessel as triton
import tessel.language as tl


def tile_configs():
    """Tile shapes worth trying. A simulated GPU runs slowly: it gets one small tile shape (autotuning would run
    every configuration in the simulator)."""
    if triton.knobs.target.startswith("sim"):
        return [triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 4}, num_warps=4,
                              num_stages=2)]
    return [
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=8, num_stages=4),
    ]


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.autotune(configs=tile_configs(), key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  ACTIVATION: tl.constexpr):
    # Which tile of C: programs go down a group of GROUP_M tile rows, one tile column after the other.
    pid = tl.program_id(axis=0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles_per_group = GROUP_M * tiles_n
    group = pid // tiles_per_group
    first_m = group * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % tiles_per_group) % group_rows
    tile_n = (pid % tiles_per_group) // group_rows

    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_ptrs = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(rows[:, None] < M) & (ks[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(ks[:, None] < k_left) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    if ACTIVATION == "leaky_relu":
        acc = leaky_relu(acc)
    c = acc.to(c_ptr.dtype.element_ty)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, c,
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a: np.ndarray, b: np.ndarray, activation: str = "", out_dtype=None) -> np.ndarray:
    """a @ b (2-D arrays, any strides), through matmul_kernel; the result has a's dtype unless told otherwise."""
    M, K = a.shape
    K2, N = b.shape
    if K != K2:
        raise ValueError(f"inner dimensions differ: {a.shape} @ {b.shape}")
    c = np.empty((M, N), out_dtype or a.dtype)
    # Strides in elements: pointer arithmetic in a kernel counts elements.
    sa, sb, sc = (np.array(x.strides) // x.itemsize for x in (a, b, c))
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)  # noqa: E731
    matmul_kernel[grid](a, b, c, M, N, K, sa[0], sa[1], sb[0], sb[1], sc[0], sc[1], ACTIVATION=activation)
    return c


# %%
# Correctness: ragged shapes (no dimension a multiple of the tiles), a transposed B (a view: strides, not a
# copy), fp16 and fp32 inputs, the fused activation; against numpy in float64.

def check() -> None:
    rng = np.random.default_rng(0)
    small = triton.knobs.target.startswith("sim")
    shapes = [(1, 1, 1), (33, 47, 61), (64, 64, 64)] if small else [(1, 1, 1), (97, 131, 203), (512, 384, 640)]
    for dtype, tol in [(np.float16, 2e-2), (np.float32, 1e-3)]:
        for M, N, K in shapes:
            a = rng.standard_normal((M, K)).astype(dtype)
            b_t = rng.standard_normal((N, K)).astype(dtype)
            b = b_t.T  # K x N, column-major
            ref = a.astype(np.float64) @ b.astype(np.float64)
            got = matmul(a, b, out_dtype=np.float32)
            np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * np.sqrt(K), err_msg=f"{dtype} {M}x{N}x{K}")
            got = matmul(a, b, activation="leaky_relu", out_dtype=np.float32)
            np.testing.assert_allclose(got, np.where(ref >= 0, ref, 0.01 * ref), rtol=tol, atol=tol * np.sqrt(K),
                                       err_msg=f"leaky_relu {dtype} {M}x{N}x{K}")
    print("OK")


# %%
# Speed, in GFLOP/s (2 M N K flops per product) against numpy's matmul (a BLAS library) on the same fp32 inputs.

def benchmark() -> None:
    print(f"\nfp32 matmul, {len(os.sched_getaffinity(0))} threads available; GFLOP/s = 2 M N K / median time")
    print(f"{'M=N=K':>6}  {'Tessel':>8}  {'numpy':>8}  {'Tessel/numpy':>12}")
    rng = np.random.default_rng(1)
    for size in [256, 512, 1024, 2048]:
        a = rng.standard_normal((size, size), dtype=np.float32)
        b = rng.standard_normal((size, size), dtype=np.float32)
        c = np.empty((size, size), np.float32)
        gflop = 2 * size**3 / 1e9
        ms = triton.testing.do_bench(lambda: matmul(a, b), warmup=5, rep=200, return_mode="median")
        ms_np = triton.testing.do_bench(lambda: np.matmul(a, b, out=c), warmup=5, rep=200, return_mode="median")
        print(f"{size:>6}  {gflop / ms * 1e3:>8.1f}  {gflop / ms_np * 1e3:>8.1f}  {ms_np / ms:>11.2f}x")


def main() -> None:
    check()
    benchmark()


if __name__ == "__main__":
    main()
