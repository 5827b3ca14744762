"""num_ctas > 1 (NVIDIA sm_90+): each program runs on a thread block cluster of num_ctas CTAs, each with a part of
the program's blocks (tile-split-program). Kernels run in the simulator on sim:sm_90a and are checked against
numpy: element-wise, row reductions, matmuls on wgmma (pointer loads and the TMA copy engine) and attention, whose
blocks are cut; whole-block reductions, which every CTA computes and CTA 0 stores; program ids and counts,
which are the cluster's."""
import re

import numpy as np
import pytest

import tessel
import tessel as triton
import tessel.language as tl
from tessel import knobs
from tessel.tools.tensor_descriptor import TensorDescriptor

from test_gpu_backend import _attention_kernel, add_kernel, matmul_kernel
from test_host_tensor_descriptors import matmul_bt_descriptors


@pytest.fixture
def target(monkeypatch):
    """Overrides the suite's per-target fixture: clusters are sm_90's, simulated."""
    monkeypatch.setattr(knobs, "target", "sim:sm_90a")
    monkeypatch.setenv("TESSEL_TARGET", "sim:sm_90a")
    return "sim:sm_90a"


def cluster_of(kernel):
    match = re.search(r"\.reqnctapercluster (\d+), 1, 1", kernel.asm["ptx"])
    return int(match.group(1)) if match else 1


@pytest.mark.parametrize("num_ctas", [2, 4, 8])
def test_vector_add(rng, num_ctas):
    n = 4000  # a multiple of 16 (vector accesses), not of the block (the last program is masked)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    kernel = add_kernel[(4,)](x, y, out, n, BLOCK=1024, num_ctas=num_ctas)
    np.testing.assert_array_equal(out, x + y)
    assert cluster_of(kernel) == num_ctas
    ptx = kernel.asm["ptx"]
    assert "%clusterid.x" in ptx and "%cluster_ctarank" in ptx and "%ctaid" not in ptx
    # Each CTA holds 1024 / num_ctas elements, 8 / num_ctas per thread: 16-byte loads (two per input with one CTA),
    # then 8-byte ones, then single elements.
    per_thread = 8 // num_ctas
    width = f"ld.global.v{min(4, per_thread)}" if per_thread > 1 else "ld.global.b32"
    assert ptx.count("ld.global") == ptx.count(width) == 2 * max(1, per_thread // 4), ptx


@tessel.jit
def row_softmax_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], e / tl.sum(e, axis=1)[:, None], mask=mask)


@pytest.mark.parametrize("num_ctas", [2, 4])
def test_row_softmax_cuts_rows(rng, num_ctas):
    M, N = 37, 100
    x = (rng.standard_normal((M, N)) * 3).astype(np.float32)
    out = np.zeros_like(x)
    kernel = row_softmax_kernel[(triton.cdiv(M, 16),)](x, out, M, N, BM=16, BN=128, num_ctas=num_ctas)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-7)
    # The rows are cut: each CTA reduces 16 / num_ctas rows.
    assert re.search(rf"tensor<{16 // num_ctas}x128xf32", kernel.asm["ttgir"])


@tessel.jit
def add_block_sum_kernel(x_ptr, BLOCK: tl.constexpr):
    # In place: x[i] += sum of the program's block. A sum of the whole block cannot be cut, so every CTA computes
    # it; were the CTAs other than 0 to store too, a later CTA would add the sum to values already updated.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, x + tl.sum(x, axis=0))


def test_a_block_that_cannot_be_cut_is_stored_once(rng):
    x = rng.integers(-8, 8, 512).astype(np.float32)
    want = x.reshape(4, 128)
    want = (want + want.sum(axis=1, keepdims=True)).reshape(-1)
    kernel = add_block_sum_kernel[(4,)](x, BLOCK=128, num_ctas=2)
    np.testing.assert_array_equal(x, want)
    assert cluster_of(kernel) == 2 and "%cluster_ctarank" in kernel.asm["ptx"]


@tessel.jit
def program_ids_kernel(out_ptr):
    pid0, pid1 = tl.program_id(0), tl.program_id(1)
    base = (pid1 * tl.num_programs(0) + pid0) * 4
    tl.store(out_ptr + base, pid0)
    tl.store(out_ptr + base + 1, pid1)
    tl.store(out_ptr + base + 2, tl.num_programs(0))
    tl.store(out_ptr + base + 3, tl.num_programs(1))


def test_program_ids_are_the_clusters():
    out = np.full((3, 5, 4), -1, np.int32)
    program_ids_kernel[(5, 3)](out, num_ctas=4)
    pid1, pid0 = np.meshgrid(np.arange(3), np.arange(5), indexing="ij")
    np.testing.assert_array_equal(out, np.stack([pid0, pid1, np.full_like(pid0, 5), np.full_like(pid0, 3)], -1))


@pytest.mark.parametrize("blocks,num_warps", [((64, 64, 32), 4), ((128, 128, 32), 8)])
def test_matmul_cuts_the_columns(rng, blocks, num_warps):
    M, N, K = 200, 136, 96
    BM, BN, BK = blocks
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    kernel = matmul_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](a, b, c, M, N, K, BM=BM, BN=BN, BK=BK,
                                                                    num_warps=num_warps, num_ctas=2)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)
    # Each CTA computes BM x BN / 2 on warpgroup MMA (as Triton's cluster layouts cut the columns), its operands
    # prefetched by cp.async.
    ptx = kernel.asm["ptx"]
    assert f"wgmma.mma_async.sync.aligned.m64n{BN // 2}k16" in ptx and "cp.async" in ptx


def test_copy_engine_matmul(rng):
    torch = pytest.importorskip("torch")
    M, N, K, BM, BN, BK = 128, 192, 256, 64, 128, 64
    a = torch.from_numpy(rng.standard_normal((M, K)).astype(np.float32)).to(torch.float16)
    b = torch.from_numpy(rng.standard_normal((N, K)).astype(np.float32)).to(torch.float16)
    c = torch.zeros((M, N), dtype=torch.float32)
    descs = [TensorDescriptor.from_tensor(a, [BM, BK]), TensorDescriptor.from_tensor(b, [BN, BK]),
             TensorDescriptor.from_tensor(c, [BM, BN])]
    kernel = matmul_bt_descriptors[(triton.cdiv(M, BM), triton.cdiv(N, BN))](
        *descs, K, BM=BM, BN=BN, BK=BK, ACC=tl.float32, num_stages=3, num_ctas=2)
    want = a.double().numpy() @ b.double().numpy().T
    np.testing.assert_allclose(c.double().numpy(), want, rtol=1e-4, atol=1e-3 * np.sqrt(K))
    # Each CTA's copy engine fetches its 64 rows of B (half the block) and the whole of A; it stores its half of C.
    maps = [line for line in kernel.asm["launch"].splitlines() if line.startswith("tensor_map=")]
    assert maps[:2] == ["tensor_map=0 f16 0 64x64 128", "tensor_map=4 f16 0 64x64 128"], maps
    assert "wgmma.mma_async.sync.aligned.m64n64k16" in kernel.asm["ptx"]


def test_attention_forward_cuts_the_query_rows(rng):
    bh, n_ctx, d = 2, 128, 64
    q, k, v = (rng.standard_normal((bh, n_ctx, d)).astype(np.float16) for _ in range(3))
    out = np.zeros_like(q)
    scale = 1.0 / np.sqrt(d)
    kernel = _attention_kernel()[(n_ctx // 128, bh)](q, k, v, out, scale, n_ctx, HEAD_DIM=d, BLOCK_M=128,
                                                     BLOCK_N=32, num_warps=4, num_ctas=2)
    s = (q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1)) * scale
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    ref = (p / p.sum(axis=-1, keepdims=True)) @ v.astype(np.float64)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=2e-2, atol=2e-3)
    # 64 query rows per CTA: one warpgroup's wgmma.
    assert "wgmma.mma_async.sync.aligned.m64n32k16" in kernel.asm["ptx"]


@tessel.jit
def _atomic_scatter_kernel(x_ptr, hist_ptr, old_ptr, count_ptr, BLOCK: tl.constexpr):
    # A cut block of atomics whose old values the program stores, and a scalar one nobody reads.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs)
    tl.store(old_ptr + offs, tl.atomic_add(hist_ptr + (v & 15), 1))
    tl.atomic_add(count_ptr, 1)


@pytest.mark.parametrize("num_ctas", [2, 4])
def test_atomics_cut_with_their_block(rng, num_ctas):
    # Each element is one atomic (made by the CTA holding it), and each program counts once, not once per CTA.
    programs, block = 8, 512
    x = rng.integers(0, 1 << 20, programs * block).astype(np.int32)
    hist, old, count = np.zeros(16, np.int32), np.full(programs * block, -1, np.int32), np.zeros(1, np.int32)
    kernel = _atomic_scatter_kernel[(programs,)](x, hist, old, count, BLOCK=block, num_ctas=num_ctas)
    assert cluster_of(kernel) == num_ctas
    np.testing.assert_array_equal(hist, np.bincount(x & 15, minlength=16))
    assert count[0] == programs
    # The old values of each bin's atomics are 0 .. n-1, once each, in some order.
    for b in range(16):
        np.testing.assert_array_equal(np.sort(old[(x & 15) == b]), np.arange(hist[b]))


@tessel.jit
def _cluster_lock_kernel(lock, acc, x, BLOCK: tl.constexpr):
    # A lock taken by the program: its old value decides every CTA's path, so the program runs whole on CTA 0.
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + tl.program_id(0) * BLOCK + offs)
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    tl.store(acc + offs, tl.load(acc + offs) + v)
    tl.atomic_xchg(lock, 0)


def test_lock_on_a_cluster(rng):
    programs, block = 16, 1024
    x = rng.integers(-100, 100, (programs, block)).astype(np.float32)
    lock, acc = np.zeros(1, np.int32), np.zeros(block, np.float32)
    kernel = _cluster_lock_kernel[(programs,)](lock, acc, x, BLOCK=block, num_ctas=2)
    assert cluster_of(kernel) == 2
    np.testing.assert_array_equal(acc, x.sum(axis=0))  # integers: exact in any order
    assert lock[0] == 0


def test_the_cpu_backend_runs_each_program_whole(monkeypatch, rng):
    monkeypatch.setattr(knobs, "target", "cpu")
    x = rng.standard_normal(1000).astype(np.float32)
    out = np.zeros_like(x)
    add_kernel[(1,)](x, x, out, 1000, BLOCK=1024, num_ctas=2)
    np.testing.assert_array_equal(out, 2 * x)


@pytest.mark.parametrize("target,num_ctas,message", [
    ("sim:sm_80", 2, r"num_ctas=2 runs a program on a thread block cluster, which sm_80 does not have"),
    ("sim:sm_90a", 3, r"num_ctas must be 1, 2, 4 or 8, got 3"),
    ("sim:sm_90a", 16, r"num_ctas must be 1, 2, 4 or 8, got 16"),
])
def test_unsupported_cluster_sizes_are_errors(monkeypatch, target, num_ctas, message):
    monkeypatch.setattr(knobs, "target", target)
    x = np.zeros(16, np.float32)
    with pytest.raises(Exception, match=message):
        add_kernel[(1,)](x, x, x, 16, BLOCK=1024, num_ctas=num_ctas)
