"""Shared memory by liveness on Tessel's NVIDIA backend, run in the simulator (sim:sm_80, sim:sm_90a, race-checked)
against numpy: buffers and scratch that are never live at the same time share bytes, with the barriers and async-copy
waits that keep the reuse correct."""
import numpy as np
import pytest

import tessel
import tessel.language as tl

from simulated_gpus import each_simulated_gpu  # noqa: F401 -- this module's `target` fixture


@tessel.jit
def matmuls_kernel(a_ptr, b_ptr, d_ptr, e_ptr, c_ptr, M, N, K, TWO: tl.constexpr, BM: tl.constexpr,
                   BN: tl.constexpr, BK: tl.constexpr):
    # C = A @ B (+ D @ E with TWO): one pipelined K loop, or two after each other, then the epilogue's conversion.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(k + rk)[None, :] < K, other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=(k + rk)[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc)
    if TWO:
        for k in range(0, K, BK):
            d = tl.load(d_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(k + rk)[None, :] < K, other=0.0)
            e = tl.load(e_ptr + (k + rk)[:, None] * N + rn[None, :], mask=(k + rk)[:, None] < K, other=0.0)
            acc = tl.dot(d, e, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def test_two_pipelined_loops_share_their_buffers(target, rng):
    # Four K steps (the last masked): the first loop's last step reads slot 0, which the second loop's prologue
    # copies into, once every thread is past a barrier.
    M, N, K, BM, BN, BK = 128, 128, 112, 64, 64, 32
    a, d = (rng.standard_normal((M, K)).astype(np.float16) for _ in range(2))
    b, e = (rng.standard_normal((K, N)).astype(np.float16) for _ in range(2))
    c = np.full((M, N), np.nan, np.float16)
    run = dict(BM=BM, BN=BN, BK=BK, num_warps=4, num_stages=3)
    two = matmuls_kernel[(M // BM, N // BN)](a, b, d, e, c, M, N, K, TWO=1, **run)
    want = a.astype(np.float64) @ b.astype(np.float64) + d.astype(np.float64) @ e.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=2e-3, atol=2e-2)
    one = matmuls_kernel[(M // BM, N // BN)](a, b, d, e, c, M, N, K, TWO=0, **run)

    def shared(kernel):
        return int(dict(f.split("=", 1) for f in kernel.asm["launch"].split() if "=" in f)["shared"])
    # Three slots of A (64x32) and B (32x64) in fp16: 24 KiB, for one loop or two.
    assert shared(two) == shared(one) == 3 * 2 * 64 * 32 * 2
