"""Tensor descriptors made in a kernel (tl.make_tensor_descriptor, desc.load / desc.store and the
tl.load_tensor_descriptor / tl.store_tensor_descriptor forms), on every target, against numpy: a block at any
offsets, negative ones included, reads the array's elements inside it and zero (or NaN) for the rest, and writes
only the elements inside the array. One kernel also runs under OpenAI Triton's interpreter (the semantic oracle)."""
import os
import types

import numpy as np
import pytest

import tessel as triton
import tessel.language as tl


def block_of(array: np.ndarray, offsets: tuple[int, ...], block: tuple[int, ...], fill: float) -> np.ndarray:
    """numpy's reading of the block of `array` at `offsets`: `fill` where an index falls outside the array."""
    out = np.full(block, fill, dtype=array.dtype)
    src, dst = [], []
    for offset, size, extent in zip(offsets, block, array.shape):
        lo, hi = max(offset, 0), min(offset + size, extent)
        if lo >= hi:
            return out
        src.append(slice(lo, hi))
        dst.append(slice(lo - offset, hi - offset))
    out[tuple(dst)] = array[tuple(src)]
    return out


@triton.jit
def scale_blocks_2d(X, Y, M, N, stride_x, stride_y, shift_m, shift_n, BM: tl.constexpr, BN: tl.constexpr):
    # Each program moves the block at (program * block - shift) from X to Y, doubled.
    x_desc = tl.make_tensor_descriptor(X, shape=[M, N], strides=[stride_x, 1], block_shape=[BM, BN])
    y_desc = tl.make_tensor_descriptor(Y, [M, N], [stride_y, 1], [BM, BN])
    om = tl.program_id(0) * BM - shift_m
    on = tl.program_id(1) * BN - shift_n
    y_desc.store([om, on], x_desc.load([om, on]) * 2)


@pytest.mark.parametrize("M,N,BM,BN,shift", [
    (64, 64, 32, 32, (0, 0)),     # whole blocks
    (37, 70, 32, 32, (3, 5)),     # ragged edges, blocks starting before the array
    (5, 200, 8, 64, (0, 9)),      # fewer rows than a block
], ids=["whole", "ragged", "thin"])
def test_blocks_read_inside_and_write_inside(rng, M, N, BM, BN, shift):
    # Row strides beyond the descriptor's N, 16-byte multiples (4 floats) as descriptors need.
    x = rng.standard_normal((M, (N + 7 + 3) // 4 * 4)).astype(np.float32)
    y = np.full((M, (N + 3 + 3) // 4 * 4), -1.0, np.float32)
    grid = (triton.cdiv(M + shift[0], BM), triton.cdiv(N + shift[1], BN))
    scale_blocks_2d[grid](x, y, M, N, x.shape[1], y.shape[1], shift[0], shift[1], BM=BM, BN=BN)
    want = np.full_like(y, -1.0)
    want[:, :N] = 2 * x[:, :N]  # every element of the array is in exactly one block; the padding columns untouched
    np.testing.assert_array_equal(y, want)


@triton.jit
def copy_blocks(X, Y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    x_desc = tl.make_tensor_descriptor(X, [M, N], [N, 1], [BM, BN])
    y_desc = tl.make_tensor_descriptor(Y, [M, N], [N, 1], [BM, BN])
    om, on = tl.program_id(0) * BM, tl.program_id(1) * BN
    y_desc.store([om, on], x_desc.load([om, on]))


def test_aligned_blocks_move_in_16_byte_vectors(rng, target):
    # Blocks at multiples of their shape in an array whose row length is a multiple of 16 elements: the masked
    # accesses are as wide as plain ones (16-byte vectors on the GPU).
    x = rng.standard_normal((128, 256)).astype(np.float32)
    y = np.zeros_like(x)
    kernel = copy_blocks[(2, 4)](x, y, 128, 256, BM=64, BN=64)
    np.testing.assert_array_equal(y, x)
    if target.startswith("sim:sm"):
        ptx = kernel.asm["ptx"]
        assert "ld.global.v4" in ptx and "st.global.v4" in ptx
        assert "ld.global.b32" not in ptx and "ld.global.f32" not in ptx
    elif target.startswith("sim:gfx"):
        amdgcn = kernel.asm["amdgcn"]
        assert "global_load_dwordx4" in amdgcn and "global_store_dwordx4" in amdgcn
        assert "global_load_dword " not in amdgcn


@triton.jit
def read_block(X, Out, M, N, om, on, BM: tl.constexpr, BN: tl.constexpr, PADDING: tl.constexpr):
    desc = tl.make_tensor_descriptor(X, [M, N], [N, 1], [BM, BN], padding_option=PADDING)
    block = tl.load_tensor_descriptor(desc, [om, on])
    tl.store(Out + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], block)


@pytest.mark.parametrize("padding,fill", [("zero", 0.0), ("nan", np.nan)])
@pytest.mark.parametrize("offsets", [(0, 0), (-5, 3), (20, -8), (30, 40), (-16, 0)])
def test_padding_outside_the_array(rng, padding, fill, offsets):
    M, N, BM, BN = 24, 40, 16, 16
    x = rng.standard_normal((M, N)).astype(np.float32)
    out = np.full((BM, BN), 7.0, np.float32)
    read_block[(1,)](x, out, M, N, offsets[0], offsets[1], BM=BM, BN=BN, PADDING=padding)
    np.testing.assert_array_equal(out, block_of(x, offsets, (BM, BN), fill))


@triton.jit
def copy_1d(X, Y, n, BLOCK: tl.constexpr):
    src = tl.make_tensor_descriptor(X, [n], [1], [BLOCK])
    dst = tl.make_tensor_descriptor(Y, [n], [1], [BLOCK])
    start = tl.program_id(0) * BLOCK
    dst.store([start], src.load([start]) + 1)


def test_one_dimension(rng):
    x = rng.integers(-1000, 1000, 1000).astype(np.int32)
    y = np.zeros(1024, np.int32)
    copy_1d[(triton.cdiv(1000, 64),)](x, y, 1000, BLOCK=64)
    np.testing.assert_array_equal(y[:1000], x + 1)
    np.testing.assert_array_equal(y[1000:], 0)


@triton.jit
def sum_planes_3d(X, Out, D0, D1, D2, s0, s1, o0, o1, o2, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr):
    desc = tl.make_tensor_descriptor(X, [D0, D1, D2], [s0, s1, 1], [B0, B1, B2])
    block = desc.load([o0, o1, o2])
    plane = tl.sum(block, axis=0)
    tl.store(Out + tl.arange(0, B1)[:, None] * B2 + tl.arange(0, B2)[None, :], plane)


@pytest.mark.parametrize("offsets", [(0, 0, 0), (-1, 2, -3), (3, 5, 4)])
def test_three_dimensions(rng, offsets):
    D0, D1, D2 = 5, 9, 12
    x = rng.standard_normal((D0, D1, D2)).astype(np.float32)
    out = np.zeros((8, 8), np.float32)
    sum_planes_3d[(1,)](x, out, D0, D1, D2, D1 * D2, D2, *offsets, B0=4, B1=8, B2=8)
    want = block_of(x, offsets, (4, 8, 8), 0.0).astype(np.float64).sum(axis=0)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


@triton.jit
def matmul_descriptors(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # Triton's descriptor matmul: loads by descriptor in the K loop, the fp32 sums stored into an fp16 C (the
    # store converts to the descriptor's type).
    a_desc = tl.make_tensor_descriptor(A, [M, K], [K, 1], [BM, BK])
    b_desc = tl.make_tensor_descriptor(B, [K, N], [N, 1], [BK, BN])
    c_desc = tl.make_tensor_descriptor(C, [M, N], [N, 1], [BM, BN])
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(a_desc.load([om, k * BK]), b_desc.load([k * BK, on]), acc)
    c_desc.store([om, on], acc)


@pytest.mark.parametrize("M,N,K", [(128, 64, 64), (96, 80, 72)], ids=["whole", "ragged"])
def test_matmul_through_descriptors(rng, target, M, N, K):
    import torch
    a = torch.from_numpy(rng.standard_normal((M, K)).astype(np.float32)).half()
    b = torch.from_numpy(rng.standard_normal((K, N)).astype(np.float32)).half()
    c = torch.zeros((M, N), dtype=torch.float16)
    kernel = matmul_descriptors[(triton.cdiv(M, 64), triton.cdiv(N, 64))](a, b, c, M, N, K, BM=64, BN=64, BK=32,
                                                                          num_stages=3)
    want = a.double().numpy() @ b.double().numpy()
    np.testing.assert_allclose(c.double().numpy(), want, rtol=2e-3, atol=2e-2)
    if target.startswith("sim:gfx"):
        assert "v_mfma" in kernel.asm["amdgcn"]  # the matrix cores
    elif target.startswith("sim:"):
        # The blocks' masked loads are pipelined like any other operand loads (cp.async), and the dot runs on
        # the tensor cores.
        ptx = kernel.asm["ptx"]
        assert "cp.async.cg.shared.global" in ptx
        assert ("wgmma.mma_async" if target == "sim:sm_90a" else "mma.sync") in ptx


@triton.jit
def _last_stride_not_one(X, M, N):
    desc = tl.make_tensor_descriptor(X, [M, N], [1, N], [16, 16])
    tl.store(X, tl.sum(tl.sum(desc.load([0, 0]), 0), 0))


@triton.jit
def _narrow_block(X, M, N):
    desc = tl.make_tensor_descriptor(X, [M, N], [N, 1], [16, 2])
    tl.store(X, tl.sum(tl.sum(desc.load([0, 0]), 0), 0))


@triton.jit
def _block_not_power_of_two(X, M, N):
    desc = tl.make_tensor_descriptor(X, [M, N], [N, 1], [12, 16])
    tl.store(X, tl.sum(tl.sum(desc.load([0, 0]), 0), 0))


@triton.jit
def _wrong_offset_count(X, M, N):
    desc = tl.make_tensor_descriptor(X, [M, N], [N, 1], [16, 16])
    tl.store(X, tl.sum(tl.sum(desc.load([0]), 0), 0))


@triton.jit
def _store_shape_mismatch(X, M, N):
    desc = tl.make_tensor_descriptor(X, [M, N], [N, 1], [16, 16])
    desc.store([0, 0], tl.zeros([16, 32], dtype=tl.float32))


@triton.jit
def _nan_padding_of_ints(X, M, N):
    desc = tl.make_tensor_descriptor(X, [M, N], [N, 1], [16, 16], padding_option="nan")
    tl.store(X, tl.sum(tl.sum(desc.load([0, 0]), 0), 0))


@pytest.mark.parametrize("kernel,dtype,message", [
    (_last_stride_not_one, np.float32, "the last dimension must be contiguous"),
    (_narrow_block, np.float32, "must span at least 16 bytes"),
    (_block_not_power_of_two, np.float32, "must be a power of 2"),
    (_wrong_offset_count, np.float32, "expected 2 offsets"),
    (_store_shape_mismatch, np.float32, "is not the block shape"),
    (_nan_padding_of_ints, np.int32, "needs a floating-point array"),
], ids=["last-stride", "narrow-block", "block-not-pow2", "offset-count", "store-shape", "nan-ints"])
def test_bad_descriptors_are_compile_errors_at_their_line(kernel, dtype, message):
    with pytest.raises(triton.CompilationError) as info:
        kernel[(1,)](np.zeros((16, 16), dtype), 16, 16)
    text = str(info.value)
    assert message in text, text
    assert "tl.make_tensor_descriptor(" in text or "desc." in text, text


@triton.jit
def _constant_stride_of_12_bytes(X, M, N):
    desc = tl.make_tensor_descriptor(X, [M, N], [3, 1], [16, 16])
    tl.store(X, tl.sum(tl.sum(desc.load([0, 0]), 0), 0))


@triton.jit
def _base_4_bytes_off(X, M, N):
    desc = tl.make_tensor_descriptor(X + 1, [M, N], [N, 1], [16, 16])
    tl.store(X, tl.sum(tl.sum(desc.load([0, 0]), 0), 0))


@pytest.mark.parametrize("kernel,message", [
    (_constant_stride_of_12_bytes, "strides[0] must be a multiple of 16 bytes, got 3 elements of 4 bytes"),
    (_base_4_bytes_off, "the base's address must be a multiple of 16 bytes, got 4 bytes past one"),
], ids=["stride", "base"])
def test_misaligned_constants_are_compile_errors(kernel, message):
    """The host TensorDescriptor's 16-byte rules, for a descriptor made in the kernel: a constant that breaks them
    (and a base a constant away from an aligned argument) is refused where the descriptor is made."""
    with pytest.raises(triton.CompilationError) as info:
        kernel[(1,)](np.zeros((16, 16), np.float32), 16, 16)
    text = str(info.value)
    assert message in text and "tl.make_tensor_descriptor(X" in text, text


@triton.jit
def _strided_copy(X, Y, N, stride, STRIDE_TIMES: tl.constexpr):
    x_desc = tl.make_tensor_descriptor(X, [16, N], [stride * STRIDE_TIMES, 1], [16, 16])
    y_desc = tl.make_tensor_descriptor(Y, [16, N], [N, 1], [16, 16])
    y_desc.store([0, 0], x_desc.load([0, 0]))


_strided_copy_unspecialized = triton.jit(_strided_copy.fn, do_not_specialize=["stride"],
                                         do_not_specialize_on_alignment=["X"])


@pytest.mark.parametrize("kernel", [_strided_copy, _strided_copy_unspecialized], ids=["specialized", "not"])
@pytest.mark.parametrize("times", [1, 3])
def test_run_time_strides_and_bases_are_checked_at_launch(kernel, times):
    """Strides and bases known only at run time: multiples of an argument are checked by the launcher, which names
    the kernel line, the rule, the argument and its value; aligned ones run."""
    buf = np.arange(16 * 96 + 4, dtype=np.float32)
    y = np.zeros((16, 16), np.float32)
    for stride in (4, 8, 32):  # 16, 32, 128 bytes (times 3: 48, 96, 384)
        x = buf[:16 * stride * times].reshape(16, stride * times)
        n = min(16, stride * times)
        y[:] = 0
        kernel[(1,)](x, y, n, stride, STRIDE_TIMES=times)
        np.testing.assert_array_equal(y.ravel()[:16 * n].reshape(16, n), x[:, :n])
    for stride in (3, 5, 18):
        with pytest.raises(ValueError) as info:
            kernel[(1,)](buf, y, 16, stride, STRIDE_TIMES=times)
        text = str(info.value)
        assert "strides[0] must be a multiple of 16 bytes" in text and f"argument 'stride' is {stride}" in text, text
        assert "test_tensor_descriptors.py:" in text, text
    with pytest.raises(ValueError) as info:  # a base 4 bytes past a 16-byte boundary
        kernel[(1,)](buf[1:], y, 16, 32, STRIDE_TIMES=times)
    text = str(info.value)
    assert "the base's address must be a multiple of 16 bytes" in text and "argument 'X' is address 0x" in text, text


def _store_block_src(X, Out, M, N, om, on, BM: tl.constexpr, BN: tl.constexpr, PADDING: tl.constexpr):
    # Written once, run by Triton's interpreter and by tessel: Out's block at (om, on) takes X's, tripled.
    x_desc = tl.make_tensor_descriptor(X, [M, N], [N, 1], [BM, BN], padding_option=PADDING)
    out_desc = tl.make_tensor_descriptor(Out, [M, N], [N, 1], [BM, BN])
    out_desc.store([om, on], x_desc.load([om, on]) * 3)
    tl.store(Out + M * N + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], x_desc.load([om, on]))


# Offsets whose last one is 16-byte aligned (Triton's interpreter asserts it; tessel does not need it).
@pytest.mark.parametrize("padding", ["zero", "nan"])
@pytest.mark.parametrize("offsets", [(0, 0), (-5, 4), (20, -8), (30, 40), (9, 28)])
def test_matches_tritons_interpreter(rng, padding, offsets):
    os.environ["TRITON_INTERPRET"] = "1"  # read when Triton decorates a kernel
    torch = pytest.importorskip("torch")
    triton_ref = pytest.importorskip("triton")
    import triton.language as ttl
    scope = dict(_store_block_src.__globals__, tl=ttl)
    clone = types.FunctionType(_store_block_src.__code__, scope, "_store_block_src")
    clone.__annotations__ = dict(_store_block_src.__annotations__)
    reference = triton_ref.jit(clone)
    M, N, BM, BN = 24, 40, 16, 16
    x = rng.standard_normal((M, N)).astype(np.float32)
    # Out: the M x N array the descriptor writes, then the raw block read (padding included).
    want = torch.full((M * N + BM * BN,), 7.0)
    reference[(1,)](torch.from_numpy(x), want, M, N, offsets[0], offsets[1], BM=BM, BN=BN, PADDING=padding)
    got = np.full(M * N + BM * BN, 7.0, np.float32)
    triton.jit(_store_block_src)[(1,)](x, got, M, N, offsets[0], offsets[1], BM=BM, BN=BN, PADDING=padding)
    np.testing.assert_array_equal(got, want.numpy())


def test_launch_checks_come_back_from_the_disk_cache(tmp_path, monkeypatch):
    """A kernel loaded from the disk cache (no compile) checks its arguments as the compiled one did."""
    from tessel import _C, knobs
    monkeypatch.setattr(knobs, "cache_dir", tmp_path / "cache")
    compiled = []
    real = _C.compile
    monkeypatch.setattr(_C, "compile", lambda *a, **k: compiled.append(1) or real(*a, **k))
    buf = np.zeros(16 * 96, np.float32)
    y = np.zeros((16, 16), np.float32)
    for _ in range(2):
        fresh = triton.jit(_strided_copy.fn)  # an empty in-memory cache, as in a new process
        with pytest.raises(ValueError, match="argument 'stride' is 5"):
            fresh[(1,)](buf, y, 16, 5, STRIDE_TIMES=1)
    assert len(compiled) == 1
