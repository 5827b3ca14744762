"""Tiled matmul on the CPU: fp32 against numpy (OpenBLAS sgemm) and torch.mm, bf16 (fp32
accumulation, bf16 result) against torch.mm in bf16 (oneDNN), int8 into int32 against
torch._int_mm.

The kernel is the usual Triton matmul: a 2-D grid of output tiles, visited in groups
of GROUP_M tile-rows so that neighbouring programs share panels of A and B in cache,
and a K loop accumulating tl.dot in fp32 (int32 for int8).
"""
import numpy as np

import tessel as triton
import tessel.language as tl

from .common import Report, measure, optional_torch

NAME = "matmul"
BM, BN, BK, GROUP_M = 64, 64, 32, 8
# bf16 and int8 blocks as an autotuned kernel would pick them here: of 32-128 x 64-128 x 32-128, 64 x 128 x 64 was
# fastest for both at 2048 (bf16 +22% over 64 x 64 x 32, int8 +32%); a dot-product instruction does 2 or 4 K a step,
# so short K blocks leave the packing of B and the C tile's loads and stores less work to hide behind.
NARROW_BLOCKS = (64, 128, 64)


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr, ACC: tl.constexpr,
    PRECISION: tl.constexpr,
):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    # Program ids walk down GROUP_M tile-rows before moving to the next tile-column.
    group_size = GROUP_M * tiles_n
    first_m = (pid // group_size) * GROUP_M
    rows_in_group = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group_size) % rows_in_group
    pid_n = (pid % group_size) // rows_in_group

    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=ACC)
    for k in range(0, tl.cdiv(K, BK)):
        k_left = K - k * BK
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
        # fp32: full fp32 products, as sgemm computes them (the default would allow tf32).
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def tessel_matmul(a, b, c):
    """c = a @ b for numpy arrays or torch tensors (strides in elements either way)."""
    M, K = a.shape
    _, N = b.shape
    strides = [s // a.itemsize for s in a.strides] if isinstance(a, np.ndarray) else list(a.stride())
    strides += [s // b.itemsize for s in b.strides] if isinstance(b, np.ndarray) else list(b.stride())
    strides += [s // c.itemsize for s in c.strides] if isinstance(c, np.ndarray) else list(c.stride())
    integer = str(a.dtype).endswith("int8")
    fp32 = str(a.dtype).endswith("float32")
    bm, bn, bk = (BM, BN, BK) if fp32 else NARROW_BLOCKS
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    matmul_kernel[grid](
        a, b, c, M, N, K, *strides,
        BM=bm, BN=bn, BK=bk, GROUP_M=GROUP_M, ACC=tl.int32 if integer else tl.float32,
        PRECISION="ieee" if fp32 else None,
    )


def _sizes(quick):
    return [(1, 1, 1), (64, 64, 64), (100, 70, 130)] if quick else [(s, s, s) for s in (256, 512, 1000, 1024, 2048, 4096)]


def _label(M, N, K):
    return str(M) if M == N == K else f"{M}x{N}x{K}"


TIMING = dict(warmup=1, min_reps=3, budget_s=1.0)


def _fp32(quick, torch):
    impls = ["tessel", "numpy"] + (["torch"] if torch else [])
    report = Report(NAME, "GFLOP/s", "M=N=K", impls)
    rng = np.random.default_rng(0)
    for M, N, K in _sizes(quick):
        a = rng.standard_normal((M, K), dtype=np.float32)
        b = rng.standard_normal((K, N), dtype=np.float32)
        c = np.empty((M, N), np.float32)
        ref = np.empty_like(c)
        tessel_matmul(a, b, c)
        np.matmul(a, b, out=ref)
        # Both sum K fp32 products in different orders; entries are of size ~sqrt(K).
        np.testing.assert_allclose(c, ref, rtol=1e-3, atol=1e-4 * K, err_msg=f"matmul {M}x{N}x{K}")
        report.checked(_label(M, N, K))
        if quick:
            continue
        timings = {
            "tessel": measure(lambda: tessel_matmul(a, b, c), **TIMING),
            "numpy": measure(lambda: np.matmul(a, b, out=ref), **TIMING),
        }
        if torch:
            ta, tb, tc = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(ref)
            timings["torch"] = measure(lambda: torch.mm(ta, tb, out=tc), **TIMING)
        report.add(_label(M, N, K), 2.0 * M * N * K, timings)
    return report


def _bf16(quick, torch):
    """bf16 inputs and result, fp32 sums (as torch.mm in bf16): torch tensors on both sides."""
    report = Report(NAME + "_bf16", "GFLOP/s", "M=N=K", ["tessel", "torch"])
    rng = np.random.default_rng(1)
    for M, N, K in _sizes(quick):
        a = torch.from_numpy(rng.standard_normal((M, K), dtype=np.float32)).to(torch.bfloat16)
        b = torch.from_numpy(rng.standard_normal((K, N), dtype=np.float32)).to(torch.bfloat16)
        c = torch.empty((M, N), dtype=torch.bfloat16)
        ref = torch.empty_like(c)
        tessel_matmul(a, b, c)
        # numpy in float64 on the same bf16 values; the result is rounded to bf16 (8 bits of mantissa).
        exact = a.double().numpy() @ b.double().numpy()
        np.testing.assert_allclose(c.double().numpy(), exact, rtol=1e-2, atol=1e-3 * np.sqrt(K),
                                   err_msg=f"bf16 matmul {M}x{N}x{K}")
        report.checked(_label(M, N, K))
        if quick:
            continue
        timings = {
            "tessel": measure(lambda: tessel_matmul(a, b, c), **TIMING),
            "torch": measure(lambda: torch.mm(a, b, out=ref), **TIMING),
        }
        report.add(_label(M, N, K), 2.0 * M * N * K, timings)
    return report


def _int8(quick, torch):
    """int8 inputs, int32 sums and result, against torch._int_mm (its sizes: M > 16, K and N multiples of 8)."""
    report = Report(NAME + "_int8", "GOP/s", "M=N=K", ["tessel", "torch"])
    rng = np.random.default_rng(2)
    sizes = [(32, 64, 64), (64, 64, 128), (100, 72, 136)] if quick else [(s, s, s) for s in (256, 512, 1024, 2048, 4096)]
    for M, N, K in sizes:
        a = rng.integers(-128, 128, (M, K)).astype(np.int8)
        b = rng.integers(-128, 128, (K, N)).astype(np.int8)
        c = np.empty((M, N), np.int32)
        tessel_matmul(a, b, c)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        ref = torch._int_mm(ta, tb)
        # Exact on both sides; numpy checks torch's at the smallest size.
        if M * N * K <= 2 ** 27:
            np.testing.assert_array_equal(ref.numpy(), a.astype(np.int32) @ b.astype(np.int32))
        np.testing.assert_array_equal(c, ref.numpy(), err_msg=f"int8 matmul {M}x{N}x{K}")
        report.checked(_label(M, N, K))
        if quick:
            continue
        timings = {
            "tessel": measure(lambda: tessel_matmul(a, b, c), **TIMING),
            "torch": measure(lambda: torch._int_mm(ta, tb), **TIMING),
        }
        report.add(_label(M, N, K), 2.0 * M * N * K, timings)
    return report


def run(quick: bool) -> list[Report]:
    torch = optional_torch()
    reports = [_fp32(quick, torch)]
    if torch:
        reports += [_bf16(quick, torch), _int8(quick, torch)]
    return reports
