"""Tiled fp32 matmul on the CPU: GFLOP/s against numpy (OpenBLAS sgemm) and torch.mm.

The kernel is the usual Triton matmul: a 2-D grid of output tiles, visited in groups
of GROUP_M tile-rows so that neighbouring programs share panels of A and B in cache,
and a K loop accumulating tl.dot in fp32.
"""
import numpy as np

import tessel as triton
import tessel.language as tl

from .common import Report, measure, optional_torch

NAME = "matmul"
BM, BN, BK, GROUP_M = 64, 64, 32, 8


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr,
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
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        k_left = K - k * BK
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
        # Full fp32 products, as sgemm computes them (the default would allow tf32).
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def tessel_matmul(a, b, c):
    M, K = a.shape
    _, N = b.shape
    grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
    matmul_kernel[grid](
        a, b, c, M, N, K,
        a.strides[0] // 4, a.strides[1] // 4, b.strides[0] // 4, b.strides[1] // 4,
        c.strides[0] // 4, c.strides[1] // 4,
        BM=BM, BN=BN, BK=BK, GROUP_M=GROUP_M,
    )


def run(quick: bool) -> Report:
    torch = optional_torch()
    impls = ["tessel", "numpy"] + (["torch"] if torch else [])
    report = Report(NAME, "GFLOP/s", "M=N=K", impls)
    shapes = [(1, 1, 1), (64, 64, 64), (100, 70, 130)] if quick else [(s, s, s) for s in (256, 512, 1000, 1024, 2048, 4096)]
    rng = np.random.default_rng(0)
    for M, N, K in shapes:
        a = rng.standard_normal((M, K), dtype=np.float32)
        b = rng.standard_normal((K, N), dtype=np.float32)
        c = np.empty((M, N), np.float32)
        ref = np.empty_like(c)
        tessel_matmul(a, b, c)
        np.matmul(a, b, out=ref)
        # Both sum K fp32 products in different orders; entries are of size ~sqrt(K).
        np.testing.assert_allclose(c, ref, rtol=1e-3, atol=1e-4 * K, err_msg=f"matmul {M}x{N}x{K}")
        label = str(M) if M == N == K else f"{M}x{N}x{K}"
        report.checked(label)
        if quick:
            continue
        timing = dict(warmup=1, min_reps=3, budget_s=1.0)
        timings = {
            "tessel": measure(lambda: tessel_matmul(a, b, c), **timing),
            "numpy": measure(lambda: np.matmul(a, b, out=ref), **timing),
        }
        if torch:
            ta, tb, tc = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(ref)
            timings["torch"] = measure(lambda: torch.mm(ta, tb, out=tc), **timing)
        report.add(label, 2.0 * M * N * K, timings)
    return report
