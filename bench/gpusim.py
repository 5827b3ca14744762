"""The simulator's speed: millions of warp instructions per second running OpenAI Triton 3.6's sm_80 PTX for
an fp16 matmul (tutorial 03: mma.sync, ldmatrix, cp.async over 3 stages, 64x64x32 tiles, 4 warps), with CTAs on
every core against one thread; and millions of wave instructions per second running Triton's gfx942 AMDGCN for the
same kernel (MFMA, LDS, 2 stages; the AMDGCN front end runs workgroups on one thread).

The PTX comes from python/test/triton_ptx_kernels.py in a child process (Triton compiles without a GPU); every
result is checked against numpy before it is timed.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from tessel import gpusim

from .common import Report, measure, num_threads

NAME = "gpusim"
KERNELS = Path(__file__).resolve().parent.parent / "python" / "test" / "triton_ptx_kernels.py"
BLOCK = (64, 64, 32)


def triton_matmul(**target) -> dict:
    """Triton 3.6's code for tutorial 03's fp16 matmul (64x64x32 tiles, 4 warps), compiled for `target`'s keys of
    the triton_ptx_kernels.py request (an NVIDIA capability by default, or "chip" with "num_stages")."""
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_ak": "constexpr", "stride_bk": "i32", "stride_bn": "constexpr",
           "stride_cm": "i32", "stride_cn": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr",
           "BLOCK_K": "constexpr", "GROUP_M": "constexpr"}
    request = {"kernel": "matmul_kernel", "signature": sig, "num_warps": 4, "num_stages": 3,
               "constexprs": {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_M": BLOCK[0],
                              "BLOCK_N": BLOCK[1], "BLOCK_K": BLOCK[2], "GROUP_M": 8},
               "divisible_by_16": ["a_ptr", "b_ptr", "c_ptr", "N", "K", "stride_am", "stride_bk", "stride_cm"],
               **target}
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, str(KERNELS), json.dumps(request)], capture_output=True, text=True,
                         env=env, check=True, timeout=600)
    return json.loads(out.stdout)


def matmul_ptx():
    result = triton_matmul()
    ptx = result["ptx"]
    assert "mma.sync.aligned.m16n8k16" in ptx and "ldmatrix" in ptx and "cp.async" in ptx
    return ptx, result["num_warps"], result["shared"]


def matmul_amdgcn(chip: str = "gfx942"):
    result = triton_matmul(chip=chip, num_stages=2)
    assert "v_mfma" in result["amdgcn"]
    return result["amdgcn"], result["num_warps"], result["shared"]


def run_amdgcn(quick: bool) -> Report:
    code, warps, shared = matmul_amdgcn()
    one = "1 thread"
    report = Report("gpusim_amdgcn", "M wave instr/s", "fp16 matmul M=N=K (gfx942)", [one], subject=one, scale=1e6)
    rng = np.random.default_rng(0)
    for n in ([128] if quick else [256, 512]):
        a = rng.standard_normal((n, n)).astype(np.float16)
        b = rng.standard_normal((n, n)).astype(np.float16)
        c = np.zeros((n, n), np.float16)
        grid = (n // BLOCK[0]) * (n // BLOCK[1])

        def launch():
            return gpusim.launch(code, "matmul_kernel", grid, num_warps=warps, shared_bytes=shared,
                                 args=[a, b, c, n, n, n, n, n, n, None, None])

        counters = launch()
        np.testing.assert_allclose(c.astype(np.float64), a.astype(np.float64) @ b.astype(np.float64),
                                   rtol=2e-3, atol=2e-3 * np.sqrt(n / 64), err_msg=f"gfx942 matmul {n}")
        report.checked(str(n))
        if quick:
            continue
        timing = measure(launch, warmup=1, min_reps=3, max_reps=5, budget_s=0)
        report.add(str(n), counters["warp_instructions"], {one: timing})
        print(f"gpusim gfx942 matmul {n}^3: {counters['warp_instructions']} wave instructions "
              f"({counters['inst_tensor_core']} MFMA), {timing.median:.3f} s "
              f"({counters['warp_instructions'] / timing.median / 1e6:.2f} M wave instr/s)")
    return report


def run(quick: bool) -> list[Report]:
    return [run_ptx(quick), run_amdgcn(quick)]


def run_ptx(quick: bool) -> Report:
    ptx, warps, shared = matmul_ptx()
    cores = num_threads()
    many, one = f"{cores} threads", "1 thread"
    report = Report(NAME, "M warp instr/s", "fp16 matmul M=N=K", [many, one], subject=many, scale=1e6)
    rng = np.random.default_rng(0)
    for n in ([128] if quick else [256, 512]):
        a = rng.standard_normal((n, n)).astype(np.float16)
        b = rng.standard_normal((n, n)).astype(np.float16)
        c = np.zeros((n, n), np.float16)
        grid = (n // BLOCK[0]) * (n // BLOCK[1])

        def launch(threads):
            return gpusim.launch(ptx, "matmul_kernel", grid, num_warps=warps, shared_bytes=shared,
                                 args=[a, b, c, n, n, n, n, n, n, None, None], threads=threads)

        counters = launch(0)
        np.testing.assert_allclose(c.astype(np.float64), a.astype(np.float64) @ b.astype(np.float64),
                                   rtol=2e-3, atol=2e-3 * np.sqrt(n / 64), err_msg=f"matmul {n}")
        report.checked(str(n))
        if quick:
            continue
        timings = {many: measure(lambda: launch(0), warmup=1, min_reps=3, max_reps=5, budget_s=0),
                   one: measure(lambda: launch(1), warmup=1, min_reps=3, max_reps=5, budget_s=0)}
        report.add(str(n), counters["warp_instructions"], timings)
        print(f"gpusim matmul {n}^3: {counters['warp_instructions']} warp instructions "
              f"({counters['inst_tensor_core']} mma.sync), {timings[many].median:.3f} s on {cores} threads "
              f"({counters['warp_instructions'] / timings[many].median / 1e6:.2f} M warp instr/s), "
              f"{timings[one].median:.3f} s on 1")
    return report
