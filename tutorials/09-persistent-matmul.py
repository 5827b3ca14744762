"""
Tutorial 9: persistent matrix multiplication
============================================

C = A @ B four ways, fp16 or fp8 inputs, an fp32 accumulator and an fp16 result:

1. ``matmul_kernel``: one program per output tile, as in tutorial 3. The grid grows with the problem, and the
   hardware (or the CPU's thread pool) hands programs to multiprocessors as earlier ones finish.
2. ``matmul_persistent_kernel``: as many programs as the machine has multiprocessors (``NUM_SMS``), each looping
   over tiles ``pid, pid + NUM_SMS, pid + 2 NUM_SMS, ...``. A program starts once and stays: no cost for starting
   each tile's program, and on a GPU the end of one tile's K loop can overlap the start of the next. The tile loop
   is a ``tl.range(..., flatten=True)``: on Hopper, Triton fuses that loop and the K loop inside it into one
   software-pipelined loop, so the loads of a tile's first K blocks are issued while the previous tile finishes.
   Tessel accepts the hint on every target (the result does not depend on it).
3. ``matmul_descriptor_persistent_kernel``: the persistent loop with the operands read through tensor descriptors
   made on the host (``TensorDescriptor``): a descriptor knows its matrix's shape and strides, so the kernel asks
   for "the block at (row, column)" and gets zeros past the edges, with no masks or pointer arithmetic. On sm_90a
   (Hopper) Tessel moves these blocks with the TMA copy engine, straight into the shared-memory slots the
   warpgroup MMA reads; elsewhere a descriptor access is lowered to masked loads and stores.
4. ``matmul_device_descriptor_persistent_kernel``: the same, the descriptors made inside the kernel with
   ``tl.make_tensor_descriptor`` from plain pointers, shapes and strides. Triton asks the program to register an
   allocator (``triton.set_allocator``) for the global scratch memory in which a GPU kernel writes such
   descriptors; Tessel keeps the allocator and never calls it, so the same program runs under both. (Tessel does
   not build tensor maps on the device yet: these descriptors become masked loads and stores on every target,
   pipelined with cp.async copies on the simulated GPUs.)

All four order the tiles the same way: consecutive tiles take GROUP_M tile rows column by column (tutorial 3), so
the programs running at one time share blocks of A and B in the cache.

8-bit floats. numpy has no fp8 type: an fp8 matrix is held as its uint8 codes (E4M3, ``tl.float8e4nv``), and
``triton.reinterpret(codes, tl.float8e4nv)`` hands it to kernels, and to ``TensorDescriptor``, as fp8. The dots
multiply fp8 values exactly and accumulate in fp32; B is stored transposed (N x K, K contiguous like A), the
layout fp8 tensor cores read and that of a linear layer's weights.

New here: persistent grids sized from ``get_device_properties``, ``tl.range`` with ``flatten``, host and in-kernel
tensor descriptors, ``triton.set_allocator``, fp8 inputs through ``triton.reinterpret``, a @jit helper returning
two values.

Run: ``python tutorials/09-persistent-matmul.py``
"""
import os

import numpy as np

import tessel as triton
import tessel.language as tl
from tessel.tools.tensor_descriptor import TensorDescriptor


def num_sms() -> int:
    """Multiprocessors of the GPU (threads of the pool on the CPU)."""
    return triton.runtime.driver.active.utils.get_device_properties(0)["multiprocessor_count"]


def tile_config():
    """Tile sizes and warps: 128 x 128 tiles were the fastest on the CPU we measured; the simulated GPUs get
    64 x 64 ones (a whole warpgroup's MMA on sm_90a, and short simulator runs)."""
    if triton.knobs.target.startswith("sim"):
        return dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=4, num_warps=4)
    return dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8, num_warps=8)


@triton.jit
def tile_position(tile, tiles_m, tiles_n, GROUP_M: tl.constexpr):
    """(tile row, tile column) of the tile-th tile in grouped order: down GROUP_M tile rows, column by column."""
    per_group = GROUP_M * tiles_n
    first_m = (tile // per_group) * GROUP_M
    rows_here = min(tiles_m - first_m, GROUP_M)
    return first_m + (tile % per_group) % rows_here, (tile % per_group) // rows_here


@triton.jit
def tile_product(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, tile_m, tile_n,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """The fp32 BLOCK_M x BLOCK_N tile (tile_m, tile_n) of A @ B, through pointers and masks."""
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
    return acc


@triton.jit
def store_tile(c_ptr, acc, M, N, stride_cm, stride_cn, tile_m, tile_n, BLOCK_M: tl.constexpr,
               BLOCK_N: tl.constexpr):
    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # One program per tile.
    tile_m, tile_n = tile_position(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    acc = tile_product(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, tile_m, tile_n,
                       BLOCK_M, BLOCK_N, BLOCK_K)
    store_tile(c_ptr, acc, M, N, stride_cm, stride_cn, tile_m, tile_n, BLOCK_M, BLOCK_N)


@triton.jit
def matmul_persistent_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                             stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                             GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
    # NUM_SMS programs (or fewer, when there are fewer tiles), each looping over every NUM_SMS-th tile.
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    for tile in tl.range(tl.program_id(0), tiles_m * tiles_n, NUM_SMS, flatten=True):
        tile_m, tile_n = tile_position(tile, tiles_m, tiles_n, GROUP_M)
        acc = tile_product(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, tile_m, tile_n,
                           BLOCK_M, BLOCK_N, BLOCK_K)
        store_tile(c_ptr, acc, M, N, stride_cm, stride_cn, tile_m, tile_n, BLOCK_M, BLOCK_N)


@triton.jit
def descriptor_tiles(a_desc, bt_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
    """The persistent loop over descriptors of A (M x K), B^T (N x K) and C (M x N): blocks past the edges read as
    zeros and are not written, so no masks."""
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    for tile in tl.range(tl.program_id(0), tiles_m * tiles_n, NUM_SMS, flatten=True):
        tile_m, tile_n = tile_position(tile, tiles_m, tiles_n, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            a = a_desc.load([tile_m * BLOCK_M, k])
            bt = bt_desc.load([tile_n * BLOCK_N, k])
            acc = tl.dot(a, bt.T, acc)
        c_desc.store([tile_m * BLOCK_M, tile_n * BLOCK_N], acc.to(c_desc.dtype))


@triton.jit
def matmul_descriptor_persistent_kernel(a_desc, bt_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr,
                                        BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                                        NUM_SMS: tl.constexpr):
    # The descriptors come from the host; their block shapes are those the host gave them.
    descriptor_tiles(a_desc, bt_desc, c_desc, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, NUM_SMS)


@triton.jit
def matmul_device_descriptor_persistent_kernel(a_ptr, bt_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr,
                                               BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                                               NUM_SMS: tl.constexpr):
    # Contiguous A (M x K), B^T (N x K) and C (M x N), described here.
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    bt_desc = tl.make_tensor_descriptor(bt_ptr, shape=[N, K], strides=[K, 1], block_shape=[BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    descriptor_tiles(a_desc, bt_desc, c_desc, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, NUM_SMS)


def _scratch(size: int, alignment: int, stream):
    """The allocator Triton calls for in-kernel descriptors' scratch memory (Tessel does not call it)."""
    return np.empty(size, np.int8)

VARIANTS = ("naive", "persistent", "descriptor", "device descriptor")


def matmul(a, bt, variant: str = "persistent", dtype: str = "fp16", programs: int | None = None) -> np.ndarray:
    """a @ bt.T in fp16, for a of M x K and bt of N x K (contiguous; fp16 arrays, or uint8 fp8 codes when dtype is
    "fp8"), with one of the VARIANTS; the persistent ones on `programs` programs (default: one per SM, at most one
    per tile)."""
    M, K = a.shape
    N, K2 = bt.shape
    if K != K2:
        raise ValueError(f"inner dimensions differ: {a.shape} @ {bt.shape}^T")
    config = tile_config()
    blocks = {name: config[name] for name in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")}
    c = np.empty((M, N), np.float16)
    if dtype == "fp8":
        a, bt = triton.reinterpret(a, tl.float8e4nv), triton.reinterpret(bt, tl.float8e4nv)
    tiles = triton.cdiv(M, config["BLOCK_M"]) * triton.cdiv(N, config["BLOCK_N"])
    programs = min(programs or num_sms(), tiles)
    if variant == "naive":
        matmul_kernel[(tiles,)](a, bt, c, M, N, K, K, 1, 1, K, N, 1, **blocks, num_warps=config["num_warps"])
    elif variant == "persistent":
        matmul_persistent_kernel[(programs,)](a, bt, c, M, N, K, K, 1, 1, K, N, 1, **blocks, NUM_SMS=programs,
                                              num_warps=config["num_warps"])
    elif variant == "descriptor":
        a_desc = TensorDescriptor.from_tensor(a, [config["BLOCK_M"], config["BLOCK_K"]])
        bt_desc = TensorDescriptor.from_tensor(bt, [config["BLOCK_N"], config["BLOCK_K"]])
        c_desc = TensorDescriptor.from_tensor(c, [config["BLOCK_M"], config["BLOCK_N"]])
        matmul_descriptor_persistent_kernel[(programs,)](a_desc, bt_desc, c_desc, M, N, K, **blocks,
                                                         NUM_SMS=programs, num_warps=config["num_warps"])
    elif variant == "device descriptor":
        triton.set_allocator(_scratch)
        matmul_device_descriptor_persistent_kernel[(programs,)](a, bt, c, M, N, K, **blocks, NUM_SMS=programs,
                                                                num_warps=config["num_warps"])
    else:
        raise ValueError(f"unknown variant {variant!r}; one of {VARIANTS}")
    return c


# %%
# fp8 E4M3 codes and their values, from the format's definition: 1 sign bit, 4 exponent bits (bias 7), 3 mantissa
# bits; exponent 0 is subnormal; 0x7F and 0xFF are NaN, there are no infinities.

def e4m3_values() -> np.ndarray:
    codes = np.arange(256)
    exponent, mantissa = (codes >> 3) & 0xF, codes & 0x7
    magnitude = np.where(exponent == 0, mantissa / 8 * 2.0**-6, (1 + mantissa / 8) * 2.0**(exponent - 7))
    magnitude = np.where((codes & 0x7F) == 0x7F, np.nan, magnitude)
    return np.where(codes & 0x80, -magnitude, magnitude)


def random_fp8(rng, shape) -> np.ndarray:
    """Random E4M3 codes of values in [-4, 4] (sums of their products stay well inside fp16's range)."""
    values = e4m3_values()
    return rng.choice(np.flatnonzero(np.abs(values) <= 4), shape).astype(np.uint8)


# %%
# Correctness: every variant, fp16 and fp8, on a ragged shape (no dimension a multiple of the tiles), on one
# program per SM and on 3 programs (each loops over several tiles); against numpy in float64. The descriptors need
# 16-byte aligned rows: K and N are multiples of 16 here.

def check() -> None:
    rng = np.random.default_rng(0)
    sim = triton.knobs.target.startswith("sim")
    M, N, K = (200, 80, 80) if sim else (300, 208, 176)
    for dtype in ("fp16", "fp8"):
        if dtype == "fp16":
            a = rng.standard_normal((M, K)).astype(np.float16)
            bt = rng.standard_normal((N, K)).astype(np.float16)
            ref = a.astype(np.float64) @ bt.astype(np.float64).T
        else:
            a, bt = random_fp8(rng, (M, K)), random_fp8(rng, (N, K))
            ref = e4m3_values()[a] @ e4m3_values()[bt].T
        for variant in VARIANTS:
            for programs in (None, 3):
                if variant == "naive" and programs:
                    continue
                c = matmul(a, bt, variant, dtype, programs)
                # fp32 sums rounded once to fp16 (half an ulp: 2^-11 relative).
                np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-2,
                                           err_msg=f"{variant}, {dtype}, {programs or 'NUM_SMS'} programs")
    print(f"OK ({', '.join(VARIANTS)}; fp16 and fp8; {M}x{N}x{K} on {num_sms()} and on 3 programs)")


# %%
# Speed, in GFLOP/s (2 M N K flops per product): every variant against numpy's matmul on fp32 copies of the
# inputs (numpy has no fast fp16 or fp8 matmul). On the CPU a program is a task of the thread pool and starting
# one costs little, so the persistent loop gains little over one program per tile; on a GPU its gain comes from
# overlapping one tile's epilogue with the next tile's loads.

def benchmark() -> None:
    rng = np.random.default_rng(1)
    print(f"\npersistent matmul, {num_sms()} programs ({len(os.sched_getaffinity(0))} threads available); "
          f"GFLOP/s = 2 M N K / median time")
    print(f"{'M=N=K':>6}  {'dtype':>5}  " + "  ".join(f"{v:>17}" for v in VARIANTS) + f"  {'numpy fp32':>10}")
    for size in (512, 1024, 2048):
        gflop = 2 * size**3 / 1e9
        numpy_rate = None  # numpy's fp32 product is the same work for both rows of a size: timed once
        for dtype in ("fp16", "fp8"):
            if dtype == "fp16":
                a = rng.standard_normal((size, size)).astype(np.float16)
                bt = rng.standard_normal((size, size)).astype(np.float16)
                a32, b32 = a.astype(np.float32), bt.T.astype(np.float32)
            else:
                a, bt = random_fp8(rng, (size, size)), random_fp8(rng, (size, size))
                a32, b32 = e4m3_values()[a].astype(np.float32), e4m3_values()[bt].T.astype(np.float32)
            rates = []
            for variant in VARIANTS:
                ms = triton.testing.do_bench(lambda: matmul(a, bt, variant, dtype), warmup=3, rep=100,
                                             return_mode="median")
                rates.append(gflop / ms * 1e3)
            if numpy_rate is None:
                c32 = np.empty((size, size), np.float32)
                ms_np = triton.testing.do_bench(lambda: np.matmul(a32, b32, out=c32), warmup=3, rep=100,
                                                return_mode="median")
                numpy_rate = gflop / ms_np * 1e3
            print(f"{size:>6}  {dtype:>5}  " + "  ".join(f"{r:>17.1f}" for r in rates) + f"  {numpy_rate:>10.1f}")


def main() -> None:
    check()
    benchmark()


if __name__ == "__main__":
    main()
