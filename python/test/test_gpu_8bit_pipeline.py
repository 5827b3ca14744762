"""8-bit dots (int8, and 8-bit floats on sm_89 and newer) in a pipelined K loop: mma.sync m16n8k32 reads its
fragments from the slots cp.async fills, 4 elements consecutive along K per register. Where K is contiguous in
memory (A row-major, B column-major) a register is one 4-byte word of a K-major slot; where it is not (B
row-major, A column-major) the slot is a `gather` slot and each register is gathered a byte at a time, from rows
4 apart that the slot's swizzle puts on different banks. Each case runs in the simulator against numpy, with its
shared-memory bank counters."""
import numpy as np
import pytest

import tessel
import tessel.language as tl
from tessel import gpusim, knobs
from test_fp8 import _random_fp8, as_fp8, values, torch

# (target, kind): int8 on every architecture; 8-bit floats where the tensor cores take them (sm_80 multiplies them
# as fp16 after widening them in registers, which test_gpu_fp8.py covers).
CASES = [("sim:sm_80", "int8"), ("sim:sm_89", "int8"), ("sim:sm_90a", "int8"), ("sim:sm_89", "fp8"),
         ("sim:sm_90a", "fp8")]


@pytest.fixture(name="target")
def each_architecture(case, monkeypatch):
    monkeypatch.setattr(knobs, "target", case[0])
    monkeypatch.setenv("TESSEL_TARGET", case[0])
    return case[0]


@tessel.jit
def matmul_8bit(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                BK: tl.constexpr, A_COLUMNS: tl.constexpr, B_COLUMNS: tl.constexpr, ACC: tl.constexpr):
    # A is M x K and B K x N, each row-major or (A_COLUMNS, B_COLUMNS) column-major.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    if A_COLUMNS:
        a_ptrs = A + rm[:, None] + rk[None, :] * M
    else:
        a_ptrs = A + rm[:, None] * K + rk[None, :]
    if B_COLUMNS:
        b_ptrs = B + rk[:, None] + rn[None, :] * K
    else:
        b_ptrs = B + rk[:, None] * N + rn[None, :]
    acc = tl.zeros([BM, BN], dtype=ACC)
    for k in range(0, K, BK):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc, out_dtype=ACC)
        a_ptrs += BK * M if A_COLUMNS else BK
        b_ptrs += BK if B_COLUMNS else BK * N
    tl.store(C + rm[:, None] * N + rn[None, :], acc)


def _operands(rng, kind, M, N, K, a_columns, b_columns):
    """(A and B as the kernel reads them, as launched and as numpy bytes; the float64 product; C; the
    instruction)."""
    if kind == "int8":
        a, b = rng.integers(-128, 128, (M, K)).astype(np.int8), rng.integers(-128, 128, (K, N)).astype(np.int8)
        want = a.astype(np.float64) @ b.astype(np.float64)
        c = np.zeros((M, N), np.int32)
        instruction = "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"
    else:
        a, b = _random_fp8(rng, (M, K), "e4m3"), _random_fp8(rng, (K, N), "e5m2")
        want = values("e4m3")[a] @ values("e5m2")[b]
        c = np.zeros((M, N), np.float32)
        instruction = "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32"
    a_mem = np.ascontiguousarray(a.T if a_columns else a)
    b_mem = np.ascontiguousarray(b.T if b_columns else b)
    if kind == "int8":
        launched = [torch.from_numpy(a_mem), torch.from_numpy(b_mem)]
    else:
        launched = [as_fp8(a_mem, "e4m3"), as_fp8(b_mem, "e5m2")]
    return launched, [a_mem.view(np.uint8), b_mem.view(np.uint8)], want, c, instruction


@pytest.mark.parametrize("case", CASES, ids=["-".join(c) for c in CASES])
@pytest.mark.parametrize("a_columns,b_columns", [(False, False), (False, True), (True, False)],
                         ids=["row-row", "row-col", "col-row"])
@pytest.mark.parametrize("shape,blocks,num_warps", [
    ((128, 128, 128), (64, 64, 32), 4),     # 64-byte rows of B
    ((128, 256, 128), (128, 128, 64), 8),   # 128-byte rows of B, two K steps per iteration
], ids=["64x64x32", "128x128x64-w8"])
def test_pipelined_8bit_matmul(rng, case, target, a_columns, b_columns, shape, blocks, num_warps):
    kind = case[1]
    M, N, K = shape
    BM, BN, BK = blocks
    launched, raw, want, c, instruction = _operands(rng, kind, M, N, K, a_columns, b_columns)
    acc = tl.int32 if kind == "int8" else tl.float32
    kernel = matmul_8bit.warmup(*launched, torch.from_numpy(c), M=M, N=N, K=K, BM=BM, BN=BN, BK=BK,
                                A_COLUMNS=a_columns, B_COLUMNS=b_columns, ACC=acc, grid=(M // BM, N // BN),
                                num_warps=num_warps, num_stages=3)
    ptx = kernel.asm["ptx"]
    shared = int(dict(f.split("=", 1) for f in kernel.asm["launch"].split() if "=" in f)["shared"])
    counters = gpusim.launch(ptx, kernel.name, (M // BM, N // BN), num_warps=num_warps, shared_bytes=shared,
                             args=[*raw, c])
    if kind == "int8":
        np.testing.assert_array_equal(c, want.astype(np.int64))
    else:
        # Products of 8-bit floats are exact in fp32; the sums differ from float64's by a few ulps.
        np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4 * np.abs(want).max())
    assert instruction in ptx
    # Both operands move with cp.async and are read in place: the program's shared memory is its slots (3 each,
    # from 1024-byte boundaries) or, after the loop, the 4-byte accumulator on its way to the store's layout;
    # nothing is staged for the dot besides.
    assert "cp.async.cg.shared.global" in ptx and "cp.async.wait_group" in ptx
    assert shared == max(sum(3 * ((n + 1023) // 1024 * 1024) for n in (BM * BK, BK * BN)), BM * BN * 4)
    # Gathered registers are read a byte at a time, the others a word at a time.
    assert ("ld.shared.b8" in ptx) == (a_columns or not b_columns)
    # No bank conflicts: the gather swizzle separates the 4 rows one byte load reaches.
    assert counters["shared_load_bank_conflicts"] == 0, counters
