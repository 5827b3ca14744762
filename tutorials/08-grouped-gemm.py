"""
Tutorial 8: grouped matrix multiplication
=========================================

C_g = A_g @ B_g for a list of G independent products of different sizes (M_g x K_g times K_g x N_g), all in one
launch. Mixture-of-experts layers need exactly this: each expert multiplies the tokens routed to it by its own
weights, and how many tokens each expert gets changes from batch to batch.

One launch per product would pay a launch per product and leave most of the machine idle while a small product
runs. Here a fixed number of programs, one per streaming multiprocessor (one per worker thread on the CPU), share
the work instead. Number the output tiles of all the products one after the other: the tiles of C_0 first, then
those of C_1, and so on. Program p takes tiles p, p + P, p + 2P, ... (P programs in all): it walks the groups in
order, reads each one's sizes, and computes the tiles of that group that fall on its stride before moving to the
next group. No host-side work list is needed, and every program ends up with about the same number of tiles.

Where the operands are. The kernel reads, for each group, its sizes (M, N, K), its leading dimensions (the row
strides of A, B and C) and where its three matrices start, from small tables in memory. Two ways to say "where":

* Offsets (``grouped_matmul_kernel``): the A matrices are packed one after the other in one array, as are the Bs
  and the Cs, and the tables give each group's element offset into them. The kernel's pointer arguments are the
  three arrays; a group's matrix is ``base + offset``. Ragged-batch and mixture-of-experts kernels use this layout,
  and it works wherever the arrays are: CPU, GPU or simulator.
* Addresses (``grouped_matmul_addresses_kernel``, the form of Triton's own tutorial): the tables hold each
  matrix's raw address as an int64, and the kernel turns one into a pointer with ``.to(tl.pointer_type(...))``.
  The matrices can be anywhere, but the addresses must be valid where the kernel runs. On the CPU they are (the
  kernel runs in this process); on a real GPU they must be device addresses (``tensor.data_ptr()`` of CUDA
  tensors). Tessel's GPU simulator copies each *array argument* into its own simulated memory before a launch, so
  a host address written inside a table points nowhere there (the simulator stops at the first such load with an
  out-of-bounds error): this variant runs on the CPU target only, and check() runs it there.

New here:

* a persistent grid: the number of programs comes from the device (``get_device_properties``), not from the
  problem, and each program loops over the tiles it owns;
* a ``while`` loop whose trip count depends on values loaded from memory;
* scalar loads of sizes, strides and offsets from tables, and int64 addresses cast to pointers.

Run: ``python tutorials/08-grouped-gemm.py``
"""
import os

import numpy as np

import tessel as triton
import tessel.language as tl


def num_programs() -> int:
    """One program per streaming multiprocessor of the GPU (per thread of the pool on the CPU)."""
    return triton.runtime.driver.active.utils.get_device_properties(0)["multiprocessor_count"]


def tile_sizes():
    # (BLOCK_M, BLOCK_N, BLOCK_K): 64 x 128 tiles for the CPU; 64 x 64 ones for the simulated GPUs (a whole
    # warpgroup's MMA on sm_90a, and short simulator runs).
    return (64, 64, 32) if triton.knobs.target.startswith("sim") else (64, 128, 32)


@triton.jit
def matmul_tile(a_ptr, b_ptr, c_ptr, M, N, K, lda, ldb, ldc, tile_m, tile_n,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """One BLOCK_M x BLOCK_N tile of C = A @ B, for row-major A, B and C with row strides lda, ldb and ldc."""
    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rows[:, None] * lda + ks[None, :]
    b_ptrs = b_ptr + ks[:, None] * ldb + cols[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(rows[:, None] < M) & (ks[None, :] < K - k), other=0.0)
        b = tl.load(b_ptrs, mask=(ks[:, None] < K - k) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * ldb
    tl.store(c_ptr + rows[:, None] * ldc + cols[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def grouped_matmul_kernel(a_ptr, b_ptr, c_ptr, offsets_ptr, sizes_ptr, lds_ptr, group_count,
                          NUM_PROGRAMS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          BLOCK_K: tl.constexpr):
    # offsets, sizes and lds are [group_count, 3] tables: (A, B, C) element offsets, (M, N, K), (lda, ldb, ldc).
    tile = tl.program_id(0)  # the next tile this program computes, counted over all the groups
    first = 0  # the number of tiles in the groups before g
    for g in range(group_count):
        M = tl.load(sizes_ptr + 3 * g)
        N = tl.load(sizes_ptr + 3 * g + 1)
        K = tl.load(sizes_ptr + 3 * g + 2)
        tiles_n = tl.cdiv(N, BLOCK_N)
        end = first + tl.cdiv(M, BLOCK_M) * tiles_n
        while tile < end:
            # Read the group's tables only when this program has a tile in it.
            a = a_ptr + tl.load(offsets_ptr + 3 * g)
            b = b_ptr + tl.load(offsets_ptr + 3 * g + 1)
            c = c_ptr + tl.load(offsets_ptr + 3 * g + 2)
            local = tile - first
            matmul_tile(a, b, c, M, N, K, tl.load(lds_ptr + 3 * g), tl.load(lds_ptr + 3 * g + 1),
                        tl.load(lds_ptr + 3 * g + 2), local // tiles_n, local % tiles_n, BLOCK_M, BLOCK_N, BLOCK_K)
            tile += NUM_PROGRAMS
        first = end


@triton.jit
def grouped_matmul_addresses_kernel(addresses_ptr, sizes_ptr, lds_ptr, group_count, DTYPE: tl.constexpr,
                                    NUM_PROGRAMS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                    BLOCK_K: tl.constexpr):
    # The same walk; addresses is a [group_count, 3] int64 table of the matrices' addresses (A, B, C), all DTYPE.
    tile = tl.program_id(0)
    first = 0
    for g in range(group_count):
        M = tl.load(sizes_ptr + 3 * g)
        N = tl.load(sizes_ptr + 3 * g + 1)
        K = tl.load(sizes_ptr + 3 * g + 2)
        tiles_n = tl.cdiv(N, BLOCK_N)
        end = first + tl.cdiv(M, BLOCK_M) * tiles_n
        while tile < end:
            a = tl.load(addresses_ptr + 3 * g).to(tl.pointer_type(DTYPE))
            b = tl.load(addresses_ptr + 3 * g + 1).to(tl.pointer_type(DTYPE))
            c = tl.load(addresses_ptr + 3 * g + 2).to(tl.pointer_type(DTYPE))
            local = tile - first
            matmul_tile(a, b, c, M, N, K, tl.load(lds_ptr + 3 * g), tl.load(lds_ptr + 3 * g + 1),
                        tl.load(lds_ptr + 3 * g + 2), local // tiles_n, local % tiles_n, BLOCK_M, BLOCK_N, BLOCK_K)
            tile += NUM_PROGRAMS
        first = end


def _tables(a_list, b_list, c_list):
    """The (M, N, K) and (lda, ldb, ldc) tables of a group list (row-major matrices: unit column strides)."""
    for a, b, c in zip(a_list, b_list, c_list):
        if a.shape[1] != b.shape[0] or c.shape != (a.shape[0], b.shape[1]):
            raise ValueError(f"shapes do not chain: {a.shape} @ {b.shape} -> {c.shape}")
        if any(x.strides[1] != x.itemsize and x.size for x in (a, b, c)):
            raise ValueError("each matrix must have contiguous rows")
    sizes = np.array([(a.shape[0], b.shape[1], a.shape[1]) for a, b in zip(a_list, b_list)], np.int32)
    lds = np.array([[x.strides[0] // x.itemsize for x in group] for group in zip(a_list, b_list, c_list)], np.int32)
    return sizes, lds


def pack(matrices):
    """The matrices laid one after the other in one flat array, and each one's element offset in it."""
    offsets = np.cumsum([0] + [m.size for m in matrices])
    flat = np.concatenate([np.ascontiguousarray(m).ravel() for m in matrices])
    return flat, offsets[:-1]


def grouped_matmul_packed(a_flat, b_flat, c_flat, offsets, sizes, lds, programs=None):
    """The offsets form: a_flat, b_flat, c_flat hold the groups' matrices; offsets, sizes and lds are [G, 3]. The
    grid has `programs` programs (by default one per multiprocessor)."""
    block_m, block_n, block_k = tile_sizes()
    programs = programs or num_programs()
    grouped_matmul_kernel[(programs,)](a_flat, b_flat, c_flat, np.ascontiguousarray(offsets, np.int64),
                                       np.ascontiguousarray(sizes, np.int32), np.ascontiguousarray(lds, np.int32),
                                       len(sizes), NUM_PROGRAMS=programs, BLOCK_M=block_m, BLOCK_N=block_n,
                                       BLOCK_K=block_k)


def grouped_matmul(a_list, b_list, out_dtype=None, programs=None):
    """[a @ b for a, b in zip(a_list, b_list)] in one launch of grouped_matmul_kernel (packing the operands)."""
    out_dtype = out_dtype or a_list[0].dtype
    a_flat, a_off = pack(a_list)
    b_flat, b_off = pack(b_list)
    c_shapes = [(a.shape[0], b.shape[1]) for a, b in zip(a_list, b_list)]
    c_off = np.cumsum([0] + [m * n for m, n in c_shapes])
    c_flat = np.empty(c_off[-1], out_dtype)
    sizes = np.array([(m, n, a.shape[1]) for (m, n), a in zip(c_shapes, a_list)], np.int32)
    lds = np.array([(a.shape[1], n, n) for (m, n), a in zip(c_shapes, a_list)], np.int32)
    grouped_matmul_packed(a_flat, b_flat, c_flat, np.stack([a_off, b_off, c_off[:-1]], 1), sizes, lds, programs)
    return [c_flat[c_off[i]:c_off[i + 1]].reshape(shape) for i, shape in enumerate(c_shapes)]


_DTYPES = {np.dtype(np.float16): tl.float16, np.dtype(np.float32): tl.float32}


def grouped_matmul_addresses(a_list, b_list, c_list, programs=None):
    """c_list[g][:] = a_list[g] @ b_list[g] through a table of the matrices' addresses (host addresses: valid for
    the CPU target only, see the module's docstring). The matrices stay where they are: no packing."""
    if not triton.knobs.target.startswith("cpu"):
        raise RuntimeError(f"grouped_matmul_addresses passes host addresses, which the target "
                           f"{triton.knobs.target!r} cannot read; use grouped_matmul")
    sizes, lds = _tables(a_list, b_list, c_list)
    if len({x.dtype for x in (*a_list, *b_list, *c_list)}) != 1:
        raise ValueError("the address table's matrices must all have one element type (the kernel's DTYPE)")
    addresses = np.array([[x.__array_interface__["data"][0] for x in group]
                          for group in zip(a_list, b_list, c_list)], np.int64)
    block_m, block_n, block_k = tile_sizes()
    programs = programs or num_programs()
    # The kernel receives only the tables: the arrays must stay alive (they are, in the caller's lists) until it
    # has returned.
    grouped_matmul_addresses_kernel[(programs,)](addresses, sizes, lds, len(sizes), DTYPE=_DTYPES[a_list[0].dtype],
                                                 NUM_PROGRAMS=programs, BLOCK_M=block_m, BLOCK_N=block_n,
                                                 BLOCK_K=block_k)


# %%
# Correctness: groups of unrelated, ragged sizes (one smaller than a tile, one with a single row, one with no rows:
# an expert no token was routed to), fp16 and fp32, on as many programs as the device has (on a GPU, more than
# there are tiles: some programs have none) and on 3 (every program loops, over tiles of several groups); each
# product against numpy in float64.

def _problem(rng, sizes, dtype):
    a_list = [rng.standard_normal((m, k)).astype(dtype) for m, n, k in sizes]
    b_list = [rng.standard_normal((k, n)).astype(dtype) for m, n, k in sizes]
    return a_list, b_list


def check() -> None:
    rng = np.random.default_rng(0)
    sim = triton.knobs.target.startswith("sim")
    if sim:
        sizes = [(130, 72, 48), (1, 33, 16), (0, 40, 32), (96, 150, 80), (17, 5, 100), (64, 64, 64)]
    else:
        sizes = [(200, 136, 96), (1, 33, 16), (0, 40, 32), (96, 512, 80), (17, 5, 300), (256, 256, 256),
                 (64, 64, 64)]
    # fp32 dots run in TF32 on NVIDIA GPUs by default (Triton's rule): as few mantissa bits as fp16.
    for dtype, tol in [(np.float16, 2e-2), (np.float32, 2e-2 if sim else 1e-3)]:
        a_list, b_list = _problem(rng, sizes, dtype)
        refs = [a.astype(np.float64) @ b.astype(np.float64) for a, b in zip(a_list, b_list)]
        for programs in (None, 3):
            got = grouped_matmul(a_list, b_list, out_dtype=np.float32, programs=programs)
            for g, ref in enumerate(refs):
                np.testing.assert_allclose(got[g], ref, rtol=tol, atol=tol * np.sqrt(sizes[g][2]),
                                           err_msg=f"offsets, {dtype.__name__}, {programs} programs, group {g}")
            if triton.knobs.target.startswith("cpu"):
                # The address-table form: outputs where the caller wants them, here views of wider arrays.
                c_list = [np.full((m, n + 3), np.nan, dtype)[:, :n] for m, n, k in sizes]
                grouped_matmul_addresses(a_list, b_list, c_list, programs=programs)
                for g, ref in enumerate(refs):
                    np.testing.assert_allclose(c_list[g].astype(np.float64), ref, rtol=tol,
                                               atol=tol * np.sqrt(sizes[g][2]),
                                               err_msg=f"addresses, {dtype.__name__}, {programs} programs, group {g}")
    variants = "offsets and addresses" if triton.knobs.target.startswith("cpu") else "offsets"
    print(f"OK ({variants}, {len(sizes)} groups on {num_programs()} and on 3 programs)")


# %%
# Speed, in GFLOP/s (2 M N K flops per product, summed over the groups): one grouped launch against numpy's
# matmul called once per group, on fp32 inputs (numpy has no fast fp16 matmul).

def benchmark() -> None:
    rng = np.random.default_rng(1)
    print(f"\nfp32 grouped matmul, {num_programs()} programs ({len(os.sched_getaffinity(0))} threads available); "
          f"GFLOP/s = sum of 2 M N K / median time")
    print(f"{'groups (M=N=K)':>32}  {'Tessel':>8}  {'numpy':>8}  {'Tessel/numpy':>12}")
    for sizes in [[128] * 8, [64, 128, 256, 512], [512, 512, 512, 512], [1024, 256, 128, 64, 32, 16]]:
        a_list, b_list = _problem(rng, [(s, s, s) for s in sizes], np.float32)
        a_flat, a_off = pack(a_list)
        b_flat, b_off = pack(b_list)
        c_flat, c_off = pack([np.empty((s, s), np.float32) for s in sizes])
        offsets = np.stack([a_off, b_off, c_off], 1)
        table = np.array([(s, s, s) for s in sizes], np.int32)
        gflop = sum(2 * s**3 for s in sizes) / 1e9
        ms = triton.testing.do_bench(lambda: grouped_matmul_packed(a_flat, b_flat, c_flat, offsets, table, table),
                                     warmup=5, rep=200, return_mode="median")
        c_list = [np.empty((s, s), np.float32) for s in sizes]

        def numpy_loop():
            for a, b, c in zip(a_list, b_list, c_list):
                np.matmul(a, b, out=c)

        ms_np = triton.testing.do_bench(numpy_loop, warmup=5, rep=200, return_mode="median")
        label = " ".join(str(s) for s in sizes)
        print(f"{label:>32}  {gflop / ms * 1e3:>8.1f}  {gflop / ms_np * 1e3:>8.1f}  {ms_np / ms:>11.2f}x")


def main() -> None:
    check()
    benchmark()


if __name__ == "__main__":
    main()
