"""Blocks whose addresses are contiguous along dimension 0 (column-major data) on Tessel's NVIDIA backend, run in the
simulator (sim:sm_80, sim:sm_90a) against numpy: the layout pass runs lanes and per-thread vectors down the
columns for them, and the pipeliner copies such dot operands (A M-contiguous, B K-contiguous) with cp.async into
slots that hold them transposed, read in place by ldmatrix (mma.sync) or descriptors (wgmma)."""
import re

import numpy as np
import pytest

import tessel
import tessel.language as tl

from simulated_gpus import each_simulated_gpu  # noqa: F401 -- this module's `target` fixture


@tessel.jit
def column_copy_kernel(x_ptr, y_ptr, M, N, ldx, ldy, ROW_OUT: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    # x is column-major (x[m, n] at m + n * ldx); y the same, or row-major (y[m, n] at m * ldy + n) with ROW_OUT.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] + rn[None, :] * ldx, mask=mask)
    if ROW_OUT:
        tl.store(y_ptr + rm[:, None] * ldy + rn[None, :], x * 2, mask=mask)
    else:
        tl.store(y_ptr + rm[:, None] + rn[None, :] * ldy, x * 2, mask=mask)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("row_out", [False, True], ids=["column-major", "to-row-major"])
@pytest.mark.parametrize("shape", [(128, 64), (100, 70)], ids=["aligned", "masked"])
def test_column_major_copies_match_numpy(target, rng, dtype, row_out, shape):
    M, N = shape
    BM, BN = 64, 32
    x_cm = rng.standard_normal((N, M)).astype(dtype)  # row n of x_cm is column n of x
    y = np.full((M, N) if row_out else (N, M), 7, dtype)
    kernel = column_copy_kernel[(-(-M // BM), -(-N // BN))](x_cm, y, M, N, M, N if row_out else M,
                                                           ROW_OUT=row_out, BM=BM, BN=BN)
    np.testing.assert_array_equal(y, (x_cm.T if row_out else x_cm) * 2)
    if shape == (128, 64) and not row_out:
        # M a multiple of 16: 16 bytes down each column per access, loads and stores alike.
        ptx = kernel.asm["ptx"]
        assert "ld.global.v4.b32" in ptx and "st.global.v4.b32" in ptx, ptx
        assert not re.search(r"ld\.global(\.nc)?\.(b16|b32|u16|f32) ", ptx), "a scalar load down a contiguous column"


@tessel.jit
def strided_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, lda, ldb, ldc, A_COL: tl.constexpr, B_COL: tl.constexpr,
                          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # A_COL: A[m, k] at m + k * lda (else m * lda + k); B_COL: B[k, n] at k + n * ldb (else k * ldb + n).
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    if A_COL:
        a_ptrs = a_ptr + rm[:, None] + rk[None, :] * lda
        a_step = BK * lda
    else:
        a_ptrs = a_ptr + rm[:, None] * lda + rk[None, :]
        a_step = BK
    if B_COL:
        b_ptrs = b_ptr + rk[:, None] + rn[None, :] * ldb
        b_step = BK
    else:
        b_ptrs = b_ptr + rk[:, None] * ldb + rn[None, :]
        b_step = BK * ldb
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k * BK), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < K - k * BK) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += a_step
        b_ptrs += b_step
    tl.store(c_ptr + rm[:, None] * ldc + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _operand(rng, rows, cols, column_major, dtype):
    """A rows x cols operand as numpy holds it for the kernel (column-major: its transpose, row-major) and as a
    float64 matrix."""
    import torch
    m = rng.standard_normal((rows, cols)).astype(np.float32)
    held = np.ascontiguousarray(m.T if column_major else m)
    t = torch.from_numpy(held).to(getattr(torch, dtype))
    exact = t.double().numpy()
    return t, exact.T if column_major else exact


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("a_col,b_col", [(True, False), (False, True), (True, True)], ids=["A-col", "B-col", "AB-col"])
@pytest.mark.parametrize("num_stages", [1, 3])
@pytest.mark.parametrize("shape,blocks,num_warps", [
    ((128, 64, 96), (64, 64, 32), 4),      # three K iterations, whole blocks
    ((100, 72, 80), (64, 32, 32), 4),      # masked edges on every side, a partial last K block
    ((128, 128, 64), (128, 64, 32), 8),    # 8 warps (two warpgroups along M on sm_90a)
], ids=["k3", "masked", "w8"])
def test_transposed_operand_dots_match_numpy(target, rng, dtype, a_col, b_col, num_stages, shape, blocks,
                                             num_warps):
    import torch
    M, N, K = shape
    BM, BN, BK = blocks
    a, a_exact = _operand(rng, M, K, a_col, dtype)
    b, b_exact = _operand(rng, K, N, b_col, dtype)
    c = torch.zeros((M, N), dtype=torch.float32)
    kernel = strided_matmul_kernel[(-(-M // BM), -(-N // BN))](
        a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), A_COL=a_col, B_COL=b_col, BM=BM, BN=BN, BK=BK,
        num_warps=num_warps, num_stages=num_stages)
    np.testing.assert_allclose(c.numpy(), a_exact @ b_exact, rtol=1e-4, atol=1e-4)
    ptx = kernel.asm["ptx"]
    assert ".local" not in ptx
    if shape[:2] == (128, 64) and num_stages == 3:
        # Whole 16-byte runs down the columns: every operand copy is a 16-byte cp.async, none narrower.
        copies = re.findall(r"cp\.async\.c[ag]\.shared\.global[^;]*", ptx)
        assert copies and all(c.rstrip().endswith(", 16") or ", 16," in c for c in copies), copies
        # Two copies per thread and operand (a 64 x 32 block of 16-bit elements on 128 threads), at three places:
        # the two iterations of the prologue and the loop's.
        assert len(copies) == 3 * 2 * 2, copies
        assert not re.search(r"ld\.global(\.nc)?\.(b16|u16) ", ptx), "a 2-byte load of a contiguous operand"
        if target.endswith("sm_80"):
            # ldmatrix transposes the matrices of an operand whose K is not contiguous: A M-major, B N-major.
            trans = re.findall(r"ldmatrix\.sync\.aligned\.m8n8\.x\d(\.trans)?", ptx)
            assert ("" in trans) == (not a_col or b_col) and (".trans" in trans) == (a_col or not b_col), trans
        else:
            # wgmma reads both operands from their slots, an MN-major one with its transpose flag (imm-trans-a,
            # imm-trans-b: the last two operands), and nothing is staged through registers but the result.
            flags = set(re.findall(r"wgmma\.mma_async[^;]*p,\s*1,\s*1,\s*(\d),\s*(\d);", ptx))
            assert flags == {(str(int(a_col)), str(int(not b_col)))}, flags
            assert not re.search(r"st\.shared\.(b16|u16)", ptx)


@tessel.jit
def matmul_bt_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # C = A @ B.T with A (M x K) and B (N x K) row-major: B's block is loaded N x K and transposed for the dot.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + rn[:, None] * K + (k + rk)[None, :], mask=(rn[:, None] < N) & ((k + rk)[None, :] < K),
                    other=0.0)
        acc = tl.dot(a, tl.trans(b), acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize("shape", [(128, 128, 128), (100, 72, 96)], ids=["aligned", "masked"])
def test_transposed_operand_is_pipelined(target, rng, shape):
    # b.T of a loaded block is a load of the transposed pointers (tile canonicalization), so both operands are
    # prefetched with cp.async (B K-contiguous, into a transposed slot): no global load is left in the loop. (K a
    # multiple of 16: the masks along K are as wide as the copies; M and N ragged.)
    M, N, K = shape
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (N, K)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    kernel = matmul_bt_kernel[(-(-M // 64), -(-N // 64))](a, b, c, M, N, K, BM=64, BN=64, BK=32, num_stages=3)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64).T, rtol=1e-3, atol=1e-3)
    ptx = kernel.asm["ptx"]
    assert "cp.async.cg.shared.global" in ptx and not re.search(r"ld\.global", ptx)
    assert ("wgmma.mma_async" if target == "sim:sm_90a" else "mma.sync") in ptx
