"""Dots whose mma.sync fragments are read a 32-bit word at a time (int8, 8-bit floats on sm_89 and newer, tf32) in
a pipelined K loop, and 8-bit dots on sm_90a's wgmma.

On mma.sync (m16n8k32 for 8-bit, m16n8k8 for tf32) the fragments are read from the slots cp.async fills. Where K
is contiguous in memory (A row-major, B column-major) an 8-bit register is one 4-byte word of a K-major slot; where
it is not (B row-major, A column-major) the slot is a `gather` slot (gpu::gatherOperandLayout): rows of K laid out
so that the 4 rows of K one read instruction reaches fall on different banks, each 8-bit register gathered a byte
at a time from 4 consecutive rows, each tf32 word read from its row.

On sm_90a the warpgroups run wgmma m64nNk32, whose 8-bit operands must both be K-major in shared memory: an
operand whose K is contiguous in memory is pipelined into a K-major slot; the other (B row-major, A column-major)
is loaded into registers and stored K-major, as Triton does.

Each case runs in the simulator against numpy, with its shared-memory bank counters."""
import numpy as np
import pytest

import tessel
import tessel.language as tl
from tessel import gpusim, knobs
from test_fp8 import _random_fp8, as_fp8, values, torch

# (target, kind): int8 on every architecture; 8-bit floats where the tensor cores take them (sm_80 multiplies them
# as fp16 after widening them in registers, which test_gpu_fp8.py covers). The sm_90a cases run on wgmma.
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
    ((64, 64, 128), (32, 32, 64), 2),       # 32-byte rows (B's, and a column-major A's): 4 rows per bank window
], ids=["64x64x32", "128x128x64-w8", "32x32x64-w2"])
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
    slots = {"A": 3 * ((BM * BK + 1023) // 1024 * 1024), "B": 3 * ((BK * BN + 1023) // 1024 * 1024)}
    if target != "sim:sm_90a" or num_warps % 4:  # mma.sync: wgmma needs whole warpgroups
        assert instruction in ptx and "wgmma" not in ptx
        # Both operands move with cp.async and are read in place: the program's shared memory is its slots (3
        # each, from 1024-byte boundaries) or, after the loop, the 4-byte accumulator on its way to the store's
        # layout; nothing is staged for the dot besides.
        assert "cp.async.cg.shared.global" in ptx and "cp.async.wait_group" in ptx
        assert shared == max(slots["A"] + slots["B"], BM * BN * 4)
        # Gathered registers are read a byte at a time, the others a word at a time.
        assert ("ld.shared.b8" in ptx) == (a_columns or not b_columns)
        assert counters["shared_store_bank_conflicts"] == 0, counters
    else:
        # One warpgroup per 64 rows of the block, each instruction as wide as the block.
        types = "s32.s8.s8" if kind == "int8" else "f32.e4m3.e5m2"
        assert f"wgmma.mma_async.sync.aligned.m64n{BN}k32.{types}" in ptx and "mma.sync" not in ptx
        # The K-contiguous operands (A row-major, B column-major) are pipelined; the others are stored K-major
        # from registers, a byte at a time, in each iteration.
        pipelined = [name for name, k_contiguous in (("A", not a_columns), ("B", b_columns)) if k_contiguous]
        assert ptx.count("cp.async.cg.shared.global") > 0 if pipelined else "cp.async" not in ptx
        assert ("st.shared.b8" in ptx) == (len(pipelined) < 2)
        if len(pipelined) == 2:
            assert shared == max(slots["A"] + slots["B"], BM * BN * 4)
    # No bank conflicts on reads: the gather swizzle separates the 4 rows one byte load reaches, and the
    # accumulator's trip to the store's layout is conflict free.
    assert counters["shared_load_bank_conflicts"] == 0, counters


@tessel.jit
def dot_8bit_blocks(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, BK: tl.constexpr,
                    INVARIANT_A: tl.constexpr, ACC: tl.constexpr):
    # One program: C = A @ B over K in steps of BK; with INVARIANT_A the same M x BK block of A for every step
    # (C = A @ (sum of B's row blocks)), which the loop reads from one buffer written before it.
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, BK)
    acc = tl.zeros([M, N], dtype=ACC)
    a = tl.load(A + rm[:, None] * BK + rk[None, :])
    for k in range(0, K, BK):
        if not INVARIANT_A:
            a = tl.load(A + rm[:, None] * K + k + rk[None, :])
        acc = tl.dot(a, tl.load(B + (k + rk[:, None]) * N + rn[None, :]), acc, out_dtype=ACC)
    tl.store(C + rm[:, None] * N + rn[None, :], acc)


WGMMA_CASES = [c for c in CASES if c[0] == "sim:sm_90a"]


@pytest.mark.parametrize("case", WGMMA_CASES, ids=["-".join(c) for c in WGMMA_CASES])
@pytest.mark.parametrize("M,N,K,BK,num_warps,invariant_a,instruction_n", [
    (64, 16, 128, 128, 4, False, 16),   # 128-byte rows: four K steps inside one 128-byte swizzle atom
    (64, 256, 64, 64, 4, False, 256),   # the widest instruction, 128 accumulators a thread
    (64, 64, 128, 64, 8, False, 32),    # two warpgroups side by side along N
    (128, 64, 64, 32, 8, False, 64),    # two warpgroups along M
    (64, 64, 128, 32, 4, True, 64),     # A written once before the loop
], ids=["n16-k128", "n256", "w8-along-n", "w8-along-m", "invariant-a"])
def test_8bit_wgmma_shapes(rng, case, target, M, N, K, BK, num_warps, invariant_a, instruction_n):
    kind = case[1]
    a_k = BK if invariant_a else K
    if kind == "int8":
        a, b = rng.integers(-128, 128, (M, a_k)).astype(np.int8), rng.integers(-128, 128, (K, N)).astype(np.int8)
        fa, fb, c, launched = a.astype(np.float64), b.astype(np.float64), np.zeros((M, N), np.int32), [a, b]
        types, acc = "s32.s8.s8", tl.int32
    else:
        a, b = _random_fp8(rng, (M, a_k), "e4m3"), _random_fp8(rng, (K, N), "e5m2")
        fa, fb, c = values("e4m3")[a], values("e5m2")[b], np.zeros((M, N), np.float32)
        launched, types, acc = [as_fp8(a, "e4m3"), as_fp8(b, "e5m2")], "f32.e4m3.e5m2", tl.float32
    kernel = dot_8bit_blocks[(1,)](*launched, c, M=M, N=N, K=K, BK=BK, INVARIANT_A=invariant_a, ACC=acc,
                                   num_warps=num_warps, num_stages=3)
    if invariant_a:
        want = fa @ fb.reshape(K // BK, BK, N).sum(axis=0)
    else:
        want = fa @ fb
    if kind == "int8":
        np.testing.assert_array_equal(c, want.astype(np.int64))
    else:
        np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4 * np.abs(want).max())
    assert f"wgmma.mma_async.sync.aligned.m64n{instruction_n}k32.{types}" in kernel.asm["ptx"]


def _tf32(x: np.ndarray) -> np.ndarray:
    """fp32 values rounded to tf32 as mma.sync takes them (cvt.rna: to nearest, ties away from zero)."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)


TF32_TARGETS = ["sim:sm_80", "sim:sm_90a"]


@pytest.mark.parametrize("case", [(t, "tf32") for t in TF32_TARGETS], ids=TF32_TARGETS)
@pytest.mark.parametrize("a_columns", [False, True], ids=["a-rows", "a-columns"])
@pytest.mark.parametrize("BM,BN,BK,num_warps", [
    (64, 16, 16, 4),    # 64-byte rows of B: two per bank window
    (32, 32, 32, 2),    # 128-byte rows
    (64, 64, 16, 4),    # 256-byte rows
], ids=["bn16", "bn32", "bn64"])
def test_pipelined_tf32_gather_slots(rng, case, target, a_columns, BM, BN, BK, num_warps):
    # tf32 (fp32 dots' default on NVIDIA) runs on mma.sync m16n8k8 on both architectures: a row-major B, whose N is
    # contiguous, sits in a `gather` slot, and so does a column-major A; each fragment word is read from its row,
    # the 4 rows of K one read reaches on different banks.
    M, N, K = 2 * BM, 2 * BN, 4 * BK
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    a_mem = np.ascontiguousarray(a.T if a_columns else a)
    kernel = matmul_8bit.warmup(torch.from_numpy(a_mem), torch.from_numpy(b), torch.from_numpy(c), M=M, N=N, K=K,
                                BM=BM, BN=BN, BK=BK, A_COLUMNS=a_columns, B_COLUMNS=False, ACC=tl.float32,
                                grid=(M // BM, N // BN), num_warps=num_warps, num_stages=3)
    ptx = kernel.asm["ptx"]
    shared = int(dict(f.split("=", 1) for f in kernel.asm["launch"].split() if "=" in f)["shared"])
    counters = gpusim.launch(ptx, kernel.name, (M // BM, N // BN), num_warps=num_warps, shared_bytes=shared,
                             args=[a_mem, b, c])
    want = _tf32(a).astype(np.float64) @ _tf32(b).astype(np.float64)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in ptx and "cp.async.cg.shared.global" in ptx
    # The slots are all the program's shared memory (nothing staged), or the accumulator's trip to the store.
    assert shared == max(sum(3 * ((n * 4 + 1023) // 1024 * 1024) for n in (BM * BK, BK * BN)), BM * BN * 4)
    assert counters["shared_load_bank_conflicts"] == 0, counters
