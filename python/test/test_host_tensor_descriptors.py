"""Tensor descriptors made on the host (tessel.tools.tensor_descriptor.TensorDescriptor, and Triton's own class) and
passed as kernel arguments, on every target, against numpy: blocks at any offsets read the elements inside the
described view and zero (or NaN) for the rest, and write only the elements inside it. One kernel also runs under
OpenAI Triton's interpreter with Triton's TensorDescriptor (the semantic oracle). Bad descriptors are ValueErrors."""
import dataclasses
import os
import re
import types
from typing import Any

import numpy as np
import pytest

import tessel as triton
import tessel.language as tl
from tessel.tools.tensor_descriptor import TensorDescriptor

from test_tensor_descriptors import block_of


@triton.jit
def shifted_copy(X, Y, shift_m, shift_n, BM: tl.constexpr, BN: tl.constexpr):
    # Each program moves the block at (program * block - shift) from X's view to Y's, doubled.
    om = tl.program_id(0) * BM - shift_m
    on = tl.program_id(1) * BN - shift_n
    Y.store([om, on], X.load([om, on]) * 2)


@pytest.mark.parametrize("M,N,BM,BN,shift", [
    (64, 64, 32, 32, (0, 0)),     # whole blocks
    (37, 70, 16, 32, (3, 5)),     # ragged edges, blocks starting before the view
    (5, 200, 8, 64, (0, 9)),      # fewer rows than a block
], ids=["whole", "ragged", "thin"])
def test_views_of_numpy_arrays(rng, M, N, BM, BN, shift):
    # The descriptors describe M x N views of wider arrays (rows of 16-byte multiples): the columns past N are not
    # theirs.
    width = -(-N // 4) * 4
    x = rng.standard_normal((M, width + 12)).astype(np.float32)
    y = np.full((M, width + 4), -1.0, np.float32)
    x_desc = TensorDescriptor(x, [M, N], [x.shape[1], 1], [BM, BN])
    y_desc = TensorDescriptor(y, [M, N], [y.shape[1], 1], [BM, BN])
    grid = (triton.cdiv(M + shift[0], BM), triton.cdiv(N + shift[1], BN))
    shifted_copy[grid](x_desc, y_desc, shift[0], shift[1], BM=BM, BN=BN)
    want = np.full_like(y, -1.0)
    want[:, :N] = 2 * x[:, :N]
    np.testing.assert_array_equal(y, want)


@triton.jit
def read_block(X, Out, o0, o1, o2, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr):
    # The raw block at (o0, o1, o2), padding included, written to Out contiguously.
    block = X.load([o0, o1, o2])
    i = tl.arange(0, B0)[:, None, None] * (B1 * B2) + tl.arange(0, B1)[None, :, None] * B2 + tl.arange(0, B2)[None,
                                                                                                            None, :]
    tl.store(Out + i, block)


@pytest.mark.parametrize("padding,fill", [("zero", 0.0), ("nan", np.nan)])
@pytest.mark.parametrize("offsets", [(0, 0, 0), (-1, 3, -8), (2, 5, 24)], ids=["origin", "before", "past"])
def test_three_dimensional_torch_descriptor(rng, padding, fill, offsets):
    torch = pytest.importorskip("torch")
    x = torch.from_numpy(rng.standard_normal((3, 7, 40)).astype(np.float16))
    desc = TensorDescriptor.from_tensor(x, [2, 4, 16], padding=padding)
    out = torch.full((2 * 4 * 16,), 5.0, dtype=torch.float16)
    read_block[(1,)](desc, out, *offsets, B0=2, B1=4, B2=16)
    want = block_of(x.numpy(), offsets, (2, 4, 16), fill)
    np.testing.assert_array_equal(out.numpy().reshape(2, 4, 16), want)


@triton.jit
def _add_block(desc, value, om, on):
    # A @jit helper taking a descriptor: read, add, write back.
    desc.store([om, on], desc.load([om, on]) + value)


@triton.jit
def add_through_helper(X, value, BM: tl.constexpr, BN: tl.constexpr):
    _add_block(X, value, tl.program_id(0) * BM, tl.program_id(1) * BN)


def test_descriptors_pass_to_jit_helpers(rng):
    x = rng.integers(-100, 100, (40, 48)).astype(np.int32)
    want = x + 7
    add_through_helper[(3, 2)](TensorDescriptor.from_tensor(x, [16, 32]), 7, BM=16, BN=32)
    np.testing.assert_array_equal(x, want)


@triton.jit
def matmul_host_descriptors(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                            B_TRANSPOSED: tl.constexpr):
    # The tutorials' descriptor matmul: A, B and C come from the host; B is K x N, or (B_TRANSPOSED, the
    # persistent-matmul tutorial's form) N x K read by blocks and transposed for the dot.
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        if B_TRANSPOSED:
            b = b_desc.load([on, k * BK]).T
        else:
            b = b_desc.load([k * BK, on])
        acc = tl.dot(a_desc.load([om, k * BK]), b, acc)
    c_desc.store([om, on], acc)


@pytest.mark.parametrize("b_transposed", [False, True], ids=["b", "b.T"])
@pytest.mark.parametrize("M,N,K", [(128, 64, 64), (96, 80, 160)], ids=["whole", "ragged"])
def test_matmul_through_host_descriptors(rng, target, M, N, K, b_transposed):
    # The dot's operands are prefetched into 3 slots, no global load left in the loop. On sm_90a the copy engine
    # fills the slots: 2 copies in the prologue and one in the loop each, waited for on mbarriers, of a tensor map
    # one swizzle atom wide (A: 32 fp16 of K, 64 bytes; B given N x K the same; B given K x N: 64 fp16 of N, 128
    # bytes). Elsewhere both are cp.async copies. The fp32 sums are stored into an fp16 C (the store converts).
    torch = pytest.importorskip("torch")
    a = torch.from_numpy(rng.standard_normal((M, K)).astype(np.float16))
    b = torch.from_numpy(rng.standard_normal((N, K) if b_transposed else (K, N)).astype(np.float16))
    c = torch.zeros((M, N), dtype=torch.float16)
    b_block = [64, 32] if b_transposed else [32, 64]
    descs = [TensorDescriptor.from_tensor(t, block) for t, block in ((a, [64, 32]), (b, b_block), (c, [64, 64]))]
    kernel = matmul_host_descriptors[(triton.cdiv(M, 64), triton.cdiv(N, 64))](
        *descs, K, BM=64, BN=64, BK=32, B_TRANSPOSED=b_transposed, num_stages=3)
    want = a.double().numpy() @ (b.double().numpy().T if b_transposed else b.double().numpy())
    np.testing.assert_allclose(c.double().numpy(), want, rtol=2e-3, atol=2e-2)
    if target.startswith("sim:gfx"):
        assert "v_mfma" in kernel.asm["amdgcn"]  # the matrix cores
    elif target.startswith("sim:"):
        ptx = kernel.asm["ptx"]
        assert "ld.global" not in ptx
        tma_loads = ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global")
        maps = [line for line in kernel.asm["launch"].splitlines() if line.startswith("tensor_map=")]
        if target == "sim:sm_90a":
            assert "wgmma.mma_async" in ptx and "mbarrier.try_wait.parity" in ptx
            assert tma_loads == 6 and "cp.async.cg.shared.global" not in ptx
            assert maps[:2] == ["tensor_map=0 f16 0 64x32 64",
                                "tensor_map=4 f16 0 64x32 64" if b_transposed else "tensor_map=4 f16 0 32x64 128"]
            # C's block is stored by TMA from a scratch swizzled as the slots are (rows of 128 bytes).
            assert "tensor_map=8 f16 0 64x64 128" in maps
            assert "cp.async.bulk.tensor.2d.global.shared::cta" in ptx
        else:
            assert "cp.async.cg.shared.global" in ptx and "mma.sync" in ptx
            assert tma_loads == 0 and not maps


@triton.jit
def matmul_bt_descriptors(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                          ACC: tl.constexpr):
    # The persistent-matmul tutorial's operands: A is M x K, B is N x K (both K-contiguous), B's blocks transposed.
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    acc = tl.zeros([BM, BN], dtype=ACC)
    for k in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(a_desc.load([om, k * BK]), b_desc.load([on, k * BK]).T, acc)
    c_desc.store([om, on], acc)


@pytest.mark.parametrize("dtype,M,N,K,BN,BK,stages", [
    ("float16", 128, 64, 200, 64, 32, 3),  # ragged K, 64-byte swizzle
    ("float16", 64, 72, 128, 64, 16, 4),  # 32-byte swizzle, 8 iterations through 4 slots, ragged N
    ("bfloat16", 100, 128, 512, 128, 128, 2),  # 128-byte swizzle, 2 atoms (copies) per block, ragged M
    ("float8_e4m3fn", 64, 64, 320, 64, 64, 3),
    ("float8_e5m2", 128, 64, 512, 64, 128, 3),
    ("int8", 64, 128, 320, 64, 64, 3),
], ids=["f16-bk32", "f16-bk16", "bf16-bk128", "e4m3-bk64", "e5m2-bk128", "i8-bk64"])
def test_pipelined_copy_engine_matmul(rng, target, dtype, M, N, K, BN, BK, stages):
    # On sm_90a the copy engine fills every slot of both operands (BK * element bytes: the slots' swizzle, one
    # copy per 128-byte atom of a row), with slots wrapping several times (each slot's mbarrier phase flips on each
    # refill); the ragged edges of every block land as zeros. The sums are exact where the inputs are small
    # integers (8-bit types) and are compared against float64 otherwise.
    torch = pytest.importorskip("torch")
    BM = 64
    if dtype.startswith("float8") or dtype == "int8":
        a_np = rng.integers(-4, 5, (M, K)).astype(np.float32)
        b_np = rng.integers(-4, 5, (N, K)).astype(np.float32)
    else:
        a_np = rng.standard_normal((M, K)).astype(np.float32)
        b_np = rng.standard_normal((N, K)).astype(np.float32)
    a = torch.from_numpy(a_np).to(getattr(torch, dtype))
    b = torch.from_numpy(b_np).to(getattr(torch, dtype))
    integer = dtype == "int8"
    c = torch.zeros((M, N), dtype=torch.int32 if integer else torch.float32)
    descs = [TensorDescriptor.from_tensor(a, [BM, BK]), TensorDescriptor.from_tensor(b, [BN, BK]),
             TensorDescriptor.from_tensor(c, [BM, BN])]
    kernel = matmul_bt_descriptors[(triton.cdiv(M, BM), triton.cdiv(N, BN))](
        *descs, K, BM=BM, BN=BN, BK=BK, ACC=tl.int32 if integer else tl.float32, num_stages=stages)
    want = a.double().numpy() @ b.double().numpy().T
    if integer or dtype.startswith("float8"):
        np.testing.assert_array_equal(c.double().numpy(), want)
    else:
        np.testing.assert_allclose(c.double().numpy(), want, rtol=1e-4, atol=1e-3 * np.sqrt(K))
    if target == "sim:sm_90a":
        ptx = kernel.asm["ptx"]
        size = a.element_size()
        swizzle = min(128, BK * size)
        maps = [line for line in kernel.asm["launch"].splitlines() if line.startswith("tensor_map=")]
        element = {"float16": "f16", "bfloat16": "bf16"}.get(dtype, "u8")
        assert maps[:2] == [f"tensor_map=0 {element} 0 {BM}x{swizzle // size} {swizzle}",
                            f"tensor_map=4 {element} 0 {BN}x{swizzle // size} {swizzle}"]
        assert "wgmma.mma_async" in ptx and "cp.async.cg" not in ptx and "ld.global" not in ptx
        assert "mbarrier.try_wait.parity" in ptx and "mbarrier.inval" in ptx
        # One group of MMAs stays in flight across iterations; the last retires after the loop.
        assert re.findall(r"wgmma\.wait_group\.sync\.aligned\s+(\d+);", ptx) == ["1", "0"]
        # A and B's copies: (stages - 1) in the prologue and one in the loop, each of BK * size / swizzle boxes
        # (stages may drop to fit shared memory: never below 2).
        boxes = ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global")
        per_copy = 2 * BK * size // swizzle
        assert boxes % per_copy == 0 and 2 <= boxes // per_copy <= stages


@triton.jit
def matmul_mn_major_descriptors(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # Operands contiguous along M and N: A given K x M (its blocks transposed), B given K x N.
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(a_desc.load([k * BK, om]).T, b_desc.load([k * BK, on]), acc)
    c_desc.store([om, on], acc)


@pytest.mark.parametrize("dtype,M,N,K,BM,BN,BK,stages", [
    ("float16", 64, 64, 200, 64, 64, 32, 3),  # one 128-byte atom column per block, ragged K
    ("bfloat16", 200, 136, 256, 128, 128, 64, 3),  # two atom columns (copies) per block, ragged M and N
    ("float16", 128, 32, 96, 64, 32, 16, 4),  # B's instructions 32 columns wide: 64-byte swizzle
], ids=["f16-1col", "bf16-2col", "f16-b64"])
def test_pipelined_copy_engine_mn_major(rng, target, dtype, M, N, K, BM, BN, BK, stages):
    # On sm_90a blocks contiguous along M or N fill mn_major slots: columns of swizzle atoms along the contiguous
    # dimension, each all the block's rows of K, one box each.
    torch = pytest.importorskip("torch")
    a = torch.from_numpy(rng.standard_normal((K, M)).astype(np.float32)).to(getattr(torch, dtype))
    b = torch.from_numpy(rng.standard_normal((K, N)).astype(np.float32)).to(getattr(torch, dtype))
    c = torch.zeros((M, N), dtype=torch.float32)
    descs = [TensorDescriptor.from_tensor(a, [BK, BM]), TensorDescriptor.from_tensor(b, [BK, BN]),
             TensorDescriptor.from_tensor(c, [BM, BN])]
    kernel = matmul_mn_major_descriptors[(triton.cdiv(M, BM), triton.cdiv(N, BN))](
        *descs, K, BM=BM, BN=BN, BK=BK, num_stages=stages)
    want = a.double().numpy().T @ b.double().numpy()
    np.testing.assert_allclose(c.double().numpy(), want, rtol=1e-4, atol=1e-3 * np.sqrt(K))
    if target == "sim:sm_90a":
        ptx = kernel.asm["ptx"]
        element = {"float16": "f16", "bfloat16": "bf16"}[dtype]
        b_swizzle = min(128, BN * 2)
        maps = [line for line in kernel.asm["launch"].splitlines() if line.startswith("tensor_map=")]
        assert maps[:2] == [f"tensor_map=0 {element} 0 {BK}x64 128",
                            f"tensor_map=4 {element} 0 {BK}x{b_swizzle // 2} {b_swizzle}"]
        assert "wgmma.mma_async" in ptx and "cp.async.cg" not in ptx and "ld.global" not in ptx
        boxes = ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global")
        per_copy = BM * 2 // 128 + BN * 2 // b_swizzle
        assert boxes % per_copy == 0 and 2 <= boxes // per_copy <= stages


@triton.jit
def persistent_matmul_descriptors(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                                  BK: tl.constexpr, PROGRAMS: tl.constexpr):
    # The persistent-matmul tutorial's shape: each program loops over output tiles, a K loop in each.
    tiles_n = tl.cdiv(N, BN)
    for tile in range(tl.program_id(0), tl.cdiv(M, BM) * tiles_n, PROGRAMS):
        om = (tile // tiles_n) * BM
        on = (tile % tiles_n) * BN
        acc = tl.zeros([BM, BN], dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            acc = tl.dot(a_desc.load([om, k * BK]), b_desc.load([on, k * BK]).T, acc)
        c_desc.store([om, on], acc.to(tl.float16))


def test_persistent_matmul_through_host_descriptors(rng, target):
    # 3 programs over 3 x 3 ragged tiles: on sm_90a each tile's K loop has its own pipeline (the slots' mbarriers
    # initialized before it and invalidated after it, once per tile), C stored by TMA between them.
    torch = pytest.importorskip("torch")
    M, N, K = 320, 192, 200
    a = torch.from_numpy(rng.standard_normal((M, K)).astype(np.float16))
    b = torch.from_numpy(rng.standard_normal((N, K)).astype(np.float16))
    c = torch.full((M, N), float("nan"), dtype=torch.float16)
    kernel = persistent_matmul_descriptors[(3,)](
        TensorDescriptor.from_tensor(a, [128, 64]), TensorDescriptor.from_tensor(b, [64, 64]),
        TensorDescriptor.from_tensor(c, [128, 64]), M, N, K, BM=128, BN=64, BK=64, PROGRAMS=3, num_stages=3)
    want = a.double().numpy() @ b.double().numpy().T
    np.testing.assert_allclose(c.double().numpy(), want, rtol=2e-3, atol=2e-2)
    if target == "sim:sm_90a":
        ptx = kernel.asm["ptx"]
        assert ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global") == 6  # 2 prologue + 1 loop, A and B
        assert ptx.count("mbarrier.init") == 3 and ptx.count("mbarrier.inval") == 3  # one per slot


def test_shapes_and_strides_specialize_like_ints(rng, target):
    # The shape of a descriptor is specialized by divisibility as int arguments are (its strides are 16-byte
    # multiples by the descriptor's rule): a view whose extents are multiples of 16 is copied in 16-byte vectors.
    x = rng.standard_normal((64, 128)).astype(np.float32)
    y = np.zeros_like(x)
    kernel = shifted_copy[(2, 2)](TensorDescriptor.from_tensor(x, [32, 64]), TensorDescriptor.from_tensor(y, [32, 64]),
                                  0, 0, BM=32, BN=64)
    np.testing.assert_array_equal(y, 2 * x)
    ragged = shifted_copy[(2, 2)](TensorDescriptor(x, [60, 127], [128, 1], [32, 64]),
                                  TensorDescriptor(y, [60, 127], [128, 1], [32, 64]), 0, 0, BM=32, BN=64)
    assert ragged is not kernel  # another specialization
    if target.startswith("sim:sm"):
        ptx = kernel.asm["ptx"]
        # sm_90a moves the blocks with TMA (its shared-memory accesses are 16-byte vectors too).
        if target == "sim:sm_90a":
            assert "ld.shared.v4" in ptx and "st.shared.v4" in ptx
        else:
            assert "ld.global.v4" in ptx and "st.global.v4" in ptx


@triton.jit
def row_sums(X, Out, n_blocks, BM: tl.constexpr, BN: tl.constexpr):
    # Each program sums its rows over n_blocks blocks of columns: a descriptor load per loop iteration.
    om = tl.program_id(0) * BM
    acc = tl.zeros([BM], dtype=tl.float32)
    for j in range(n_blocks):
        acc += tl.sum(X.load([om, j * BN]).to(tl.float32), axis=1)
    tl.store(Out + om + tl.arange(0, BM), acc)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
def test_loads_in_a_loop(rng, target, dtype):
    # On sm_90a each load is a TMA copy waited on by an mbarrier (initialized and invalidated per copy); the
    # ragged last block reads zeros past the view.
    M, N, BM, BN = 64, 200, 16, 32
    if dtype == "int8":
        x = rng.integers(-100, 100, (M, 208)).astype(np.int8)
    else:
        x = rng.uniform(-1, 1, (M, 208)).astype(dtype)
    out = np.zeros(M, np.float32)
    kernel = row_sums[(M // BM,)](TensorDescriptor(x, [M, N], [208, 1], [BM, BN]), out, triton.cdiv(N, BN),
                                  BM=BM, BN=BN)
    np.testing.assert_allclose(out, x[:, :N].astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-4)
    if target == "sim:sm_90a":
        ptx = kernel.asm["ptx"]
        assert "cp.async.bulk.tensor.2d.shared::cluster.global" in ptx and "mbarrier.try_wait.parity" in ptx
        assert kernel.asm["launch"].count("tensor_map=") == 1
    elif target.startswith("sim:sm"):
        assert "cp.async.bulk" not in kernel.asm["ptx"]


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "bfloat16",
                                   "float32", "float64", "float8_e4m3fn", "float8_e5m2"])
def test_every_element_type(rng, target, dtype):
    # Blocks of every element type (on sm_90a TMA moves 1-, 2-, 4- and 8-byte elements; 8-bit floats as bytes),
    # starting before the view and reaching past it; the rows beyond the view's columns stay untouched.
    torch = pytest.importorskip("torch")
    M, N = 21, 90
    if dtype.startswith("float8"):
        # Finite values whose doubles are exact (exponent fields well below the top), either sign.
        codes = rng.integers(0, 0x60, (M, 96)) | (rng.integers(0, 2, (M, 96)) << 7)
        x = torch.from_numpy(codes.astype(np.uint8)).view(getattr(torch, dtype))
    else:
        x = (torch.from_numpy(rng.integers(-120, 120, (M, 96))) * 3).to(getattr(torch, dtype))
    y = torch.zeros(M, 96, dtype=x.dtype)
    BN = max(16, 32 // x.element_size())
    kernel = shifted_copy[(triton.cdiv(M + 3, 8), triton.cdiv(N + 5, BN))](
        TensorDescriptor(x, [M, N], [96, 1], [8, BN]), TensorDescriptor(y, [M, N], [96, 1], [8, BN]), 3, 5,
        BM=8, BN=BN)
    wide = torch.float64 if x.dtype.is_floating_point else torch.int64
    want = torch.zeros(M, 96, dtype=wide)
    want[:, :N] = x[:, :N].to(wide) * 2
    want = want.to(x.dtype)  # bools: True * 2 stored is True; ints wrap as the kernel's do
    if dtype.startswith("float8"):  # torch compares 8-bit floats by their bits
        y, want = y.view(torch.uint8), want.view(torch.uint8)
    assert torch.equal(y, want)
    if target == "sim:sm_90a":
        assert "cp.async.bulk.tensor" in kernel.asm["ptx"]


@triton.jit
def store_then_load(X, Y, BM: tl.constexpr, BN: tl.constexpr):
    # Every thread's stores to X land before the block is read back (on sm_90a by TMA: a proxy fence and a barrier
    # order the stores before the copy engine's read).
    X.store([0, 0], tl.full([BM, BN], 3.0, tl.float32))
    Y.store([0, 0], X.load([0, 0]) + 1)


def test_stores_before_a_load_are_seen(target):
    x = np.zeros((16, 64), np.float32)
    y = np.zeros((16, 64), np.float32)
    kernel = store_then_load[(1,)](TensorDescriptor.from_tensor(x, [16, 64]), TensorDescriptor.from_tensor(y, [16, 64]),
                                   BM=16, BN=64)
    np.testing.assert_array_equal(y, np.full((16, 64), 4.0, np.float32))
    if target == "sim:sm_90a":
        assert "fence.proxy.async;" in kernel.asm["ptx"] and "cp.async.bulk.tensor" in kernel.asm["ptx"]


def test_dot_operands_use_tma_without_pipelining(rng, target):
    # With num_stages=1 the dot's operand loads are not pipelined: on sm_90a they are TMA copies (two maps).
    torch = pytest.importorskip("torch")
    a = torch.from_numpy(rng.standard_normal((96, 72)).astype(np.float16))
    b = torch.from_numpy(rng.standard_normal((72, 80)).astype(np.float16))
    c = torch.zeros((96, 80), dtype=torch.float16)
    descs = [TensorDescriptor.from_tensor(t, block) for t, block in ((a, [64, 32]), (b, [32, 64]), (c, [64, 64]))]
    kernel = matmul_host_descriptors[(2, 2)](*descs, 72, BM=64, BN=64, BK=32, B_TRANSPOSED=False, num_stages=1)
    np.testing.assert_allclose(c.double().numpy(), a.double().numpy() @ b.double().numpy(), rtol=2e-3, atol=2e-2)
    if target == "sim:sm_90a":
        ptx = kernel.asm["ptx"]
        assert ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global") == 2  # A and B
        assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta") == 1  # C
        assert kernel.asm["launch"].count("tensor_map=") == 3


def _copy_src(X, Y, om, on):
    # Written once, run by Triton's interpreter and by tessel on the same Triton TensorDescriptor objects.
    Y.store([om, on], X.load([om, on]) * 3)


@pytest.mark.parametrize("padding", ["zero", "nan"])
@pytest.mark.parametrize("offsets", [(0, 0), (-5, 8), (16, 32), (20, -8)])
def test_tritons_descriptors_match_tritons_interpreter(rng, padding, offsets):
    torch = pytest.importorskip("torch")
    triton_ref = pytest.importorskip("triton")
    from triton.tools.tensor_descriptor import TensorDescriptor as TritonDescriptor
    os.environ["TRITON_INTERPRET"] = "1"  # read when Triton decorates a kernel
    import triton.language as ttl
    clone = types.FunctionType(_copy_src.__code__, dict(_copy_src.__globals__, tl=ttl), "_copy_src")
    reference = triton_ref.jit(clone)
    x = torch.from_numpy(rng.standard_normal((24, 40)).astype(np.float32))
    want = torch.full((24, 40), 7.0)
    reference[(1,)](TritonDescriptor.from_tensor(x, [16, 16], padding=padding),
                    TritonDescriptor.from_tensor(want, [16, 16]), *offsets)
    got = torch.full((24, 40), 7.0)
    triton.jit(_copy_src)[(1,)](TritonDescriptor.from_tensor(x, [16, 16], padding=padding),
                                TritonDescriptor.from_tensor(got, [16, 16]), *offsets)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("make,message", [
    (lambda x: TensorDescriptor(x[:, 1:], [4, 31], [32, 1], [4, 16]), "multiple of 16 bytes"),
    (lambda x: TensorDescriptor(x, [4, 32], [30, 1], [4, 16]), "strides[0] must be a multiple of 16 bytes"),
    (lambda x: TensorDescriptor(x, [32, 4], [4, 32], [16, 4]), "last dimension must be contiguous"),
    (lambda x: TensorDescriptor(x, [4, 32], [32, 1], [3, 16]), "block dimension 0 must be a power of 2"),
    (lambda x: TensorDescriptor(x, [0, 32], [32, 1], [4, 16]), "shape[0] must be positive"),
    (lambda x: TensorDescriptor(x, [4, 32], [32, 1], [4, 16], padding="inf"), "padding is 'zero' or 'nan'"),
    (lambda x: TensorDescriptor(x.astype(np.int32), [4, 32], [32, 1], [4, 16], padding="nan"),
     "needs a floating-point array"),
    (lambda x: TensorDescriptor(x, [4, 32], [32, 1, 1], [4, 16]), "3 strides"),
    (lambda x: TensorDescriptor(x, [], [], []), "1 to 5 dimensions"),
], ids=["misaligned", "stride", "last-stride", "block", "shape", "padding", "nan-ints", "rank-mismatch", "rank-0"])
def test_bad_descriptors_are_refused_when_made(make, message):
    x = np.zeros((4, 32), np.float32)
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        make(x)


@dataclasses.dataclass
class UncheckedDescriptor:
    """A descriptor class that checks nothing: what the launcher checks itself."""
    base: Any
    shape: list
    strides: list
    block_shape: list
    padding: str = "zero"


@triton.jit
def copy_one_block(X, Y):
    Y.store([0, 0], X.load([0, 0]))


@pytest.mark.parametrize("x_desc,message", [
    (lambda x: UncheckedDescriptor(x, [4, 32], [32, 1], [4, 2]), "must span at least 16 bytes, got 2 x 4"),
    (lambda x: UncheckedDescriptor(x[:, 1:], [4, 31], [32, 1], [4, 16]), "address must be a multiple of 16"),
    (lambda x: UncheckedDescriptor(x, [4, 32], [33, 1], [4, 16]), "strides[0] must be a multiple of 16 bytes"),
    (lambda x: UncheckedDescriptor(x, [4, 2**31], [32, 1], [4, 16]), "shape[1] must be in [1, 2^31)"),
    (lambda x: UncheckedDescriptor(x, [4, 32], [32, 1], [4, 16], "nan!"), "padding is 'zero' or 'nan'"),
    (lambda x: UncheckedDescriptor(x, [4, 32], [32, 1], [4, 16, 1]), "3 block dimensions"),
    (lambda x: UncheckedDescriptor(x, [4, 32.5], [32, 1], [4, 16]), "non-integer"),
    (lambda x: UncheckedDescriptor(7, [4, 32], [32, 1], [4, 16]), "base is not an array"),
], ids=["narrow-block", "misaligned", "stride", "huge-shape", "padding", "rank", "float-shape", "base"])
def test_launcher_checks_descriptors_of_any_class(x_desc, message):
    x = np.zeros((4, 32), np.float32)
    y = np.zeros((4, 32), np.float32)
    with pytest.raises((ValueError, TypeError)) as info:
        copy_one_block[(1,)](x_desc(x), TensorDescriptor.from_tensor(y, [4, 16]))
    assert message in str(info.value), str(info.value)
    assert "'X'" in str(info.value), str(info.value)


@pytest.mark.parametrize("kind", ["numpy", "torch"])
@pytest.mark.parametrize("shape,strides,reach", [([8, 32], [32, 1], "[0, 1024)"), ([4, 64], [32, 1], "[0, 640)"),
                                                 ([4, 32], [64, 1], "[0, 896)")], ids=["rows", "columns", "stride"])
def test_a_descriptor_larger_than_its_array_is_refused(kind, shape, strides, reach):
    """Every element a host-made descriptor names must be inside its array: the targets trust it (the CPU stored 256
    elements past an array)."""
    import torch
    x = np.ones((4, 32), np.float32)
    guard = np.zeros(512, np.float32)  # the descriptors reach into the rest
    y = guard[:128].reshape(4, 32)
    base = torch.from_numpy(y) if kind == "torch" else y
    with pytest.raises(ValueError) as info:
        copy_one_block[(1,)](TensorDescriptor.from_tensor(x, [4, 16]), TensorDescriptor(base, shape, strides, [4, 16]))
    message = str(info.value)
    assert "'Y'" in message and f"reach bytes {reach}" in message and "holds bytes [0, 512)" in message, message
    assert not guard.any()


def test_read_only_base_is_refused_for_stores():
    x = np.ones((4, 32), np.float32)
    y = np.zeros((4, 32), np.float32)
    y.setflags(write=False)
    with pytest.raises(ValueError, match="argument 'Y' is a read-only array"):
        copy_one_block[(1,)](TensorDescriptor.from_tensor(x, [4, 16]), TensorDescriptor.from_tensor(y, [4, 16]))


@triton.jit
def load_descriptor_as_pointer(X, Y):
    tl.store(Y, tl.load(X))


def test_descriptor_used_as_pointer_is_a_compile_error():
    x = np.ones((4, 32), np.float32)
    with pytest.raises(triton.CompilationError) as info:
        load_descriptor_as_pointer[(1,)](TensorDescriptor.from_tensor(x, [4, 16]), np.zeros(1, np.float32))
    assert "tl.load(X)" in str(info.value), str(info.value)
