"""Triton 3.6's sm_90a PTX (wgmma, TMA, mbarriers) runs in Tessel's PTX simulator and matches numpy.

Triton compiles capability 90 as sm_90a: its dots become wgmma.mma_async on shared-memory descriptors, tensor
descriptors become TMA copies (cp.async.bulk.tensor) completing on mbarriers. Host-side descriptors
(triton.tools.tensor_descriptor.TensorDescriptor) reach the kernel as 128-byte tensor maps, built here with
tessel.gpusim.TensorMap from the box and swizzle Triton's launcher would use (metadata.tensordesc_meta); device-side
ones (tl.make_tensor_descriptor) are written by the kernel itself with tensormap.replace into the global scratch
buffer. Each test checks the PTX really uses those instructions, then runs it on random inputs against numpy.
"""
import re

import numpy as np
import pytest

from test_gpusim_triton import compile_ptx
from test_gpusim_triton_mma import DIVISIBLE, MATMUL_SIG, bf16_value, to_bf16_bits
from tessel import gpusim


def wgmma_kinds(ptx):
    return set(re.findall(r"wgmma\.mma_async\.sync\.aligned\.[\w.]+", ptx))


@pytest.mark.parametrize("in_type,m,n,k", [("fp16", 128, 128, 64), ("fp16", 100, 72, 80), ("bf16", 128, 128, 64)])
def test_matmul_wgmma(rng, in_type, m, n, k):
    """Tutorial 03's matmul through pointers: loads to shared memory, wgmma on descriptors (A M-major here)."""
    out_type = "fp16" if in_type == "fp16" else "fp32"
    sig = dict(MATMUL_SIG, a_ptr=f"*{in_type}", b_ptr=f"*{in_type}", c_ptr=f"*{out_type}")
    block = (128, 128, 64)
    consts = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_M": block[0], "BLOCK_N": block[1],
              "BLOCK_K": block[2], "GROUP_M": 8}
    ptx, meta = compile_ptx("matmul_kernel", sig, consts, num_warps=4, num_stages=3, divisible_by_16=DIVISIBLE,
                            capability=90)
    assert ".target sm_90a" in ptx
    assert wgmma_kinds(ptx) == {f"wgmma.mma_async.sync.aligned.m64n128k16.f32.{in_type[:2]}{in_type[2:]}."
                                f"{in_type[:2]}{in_type[2:]}".replace("fp", "f")}
    assert "wgmma.commit_group.sync.aligned" in ptx and "wgmma.wait_group.sync.aligned" in ptx
    a32 = rng.standard_normal((m, k)).astype(np.float32)
    b32 = rng.standard_normal((k, n)).astype(np.float32)
    if in_type == "fp16":
        a, b = a32.astype(np.float16), b32.astype(np.float16)
        av, bv = a.astype(np.float64), b.astype(np.float64)
        c = np.full((m, n), np.nan, np.float16)
    else:
        a, b = to_bf16_bits(a32), to_bf16_bits(b32)
        av, bv = bf16_value(a).astype(np.float64), bf16_value(b).astype(np.float64)
        c = np.full((m, n), np.nan, np.float32)
    grid = -(-m // block[0]) * -(-n // block[1])
    counters = gpusim.launch(ptx, "matmul_kernel", grid, num_warps=meta.num_warps, shared_bytes=meta.shared,
                             args=[a, b, c, m, n, k, k, n, n, None, None])
    ref = av @ bv
    if in_type == "fp16":
        np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-3)
    else:
        np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.sqrt(k))
    # Per CTA and K step: 4 warps x 4 k16 slices x 2 m64 halves.
    assert counters["inst_tensor_core"] >= grid * -(-k // block[2]) * 4 * 4 * 2


def host_matmul_ptx(dtype="fp16", block=(128, 128, 64), stages=3):
    bm, bn, bk = block
    sig = {"a_desc": f"tensordesc<{dtype}[{bm}, {bk}]>", "b_desc": f"tensordesc<{dtype}[{bk}, {bn}]>",
           "c_desc": f"tensordesc<{dtype}[{bm}, {bn}]>", "K": "i32", "BLOCK_M": "constexpr",
           "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"}
    return compile_ptx("matmul_tma_host", sig, {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, num_warps=4,
                       num_stages=stages, capability=90)


def descriptor_args(array, meta):
    """What Triton's launcher passes for one host-side descriptor: the tensor map, then shape and strides."""
    tmap = gpusim.TensorMap(array, meta["block_size"], swizzle={0: None, 1: 32, 2: 64, 3: 128}[meta["swizzle"]])
    return [tmap, *array.shape, *(s // array.itemsize for s in array.strides)]


@pytest.mark.parametrize("m,n,k", [(256, 128, 192), (200, 136, 120)])
def test_matmul_tma_host_descriptors(rng, m, n, k):
    ptx, meta = host_matmul_ptx()
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes" in ptx
    assert "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group" in ptx
    assert "mbarrier.try_wait.parity" in ptx and "mbarrier.arrive.expect_tx" in ptx
    assert wgmma_kinds(ptx) == {"wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"}
    # Triton's launcher boxes: A [128, 64], B [64, 64] (twice per block: the 128-byte swizzle span), C [128, 64].
    assert [d["block_size"] for d in meta.tensordesc_meta] == [[128, 64], [64, 64], [128, 64]]
    assert all(d["swizzle"] == 3 for d in meta.tensordesc_meta)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    args = (descriptor_args(a, meta.tensordesc_meta[0]) + descriptor_args(b, meta.tensordesc_meta[1])
            + descriptor_args(c, meta.tensordesc_meta[2]) + [k, None, None])
    grid = (-(-m // 128), -(-n // 128))
    counters = gpusim.launch(ptx, "matmul_tma_host", grid, num_warps=meta.num_warps, shared_bytes=meta.shared,
                             args=args)
    # Boxes past the edges of A and B read zeros; C's stores are clipped to the array.
    np.testing.assert_allclose(c.astype(np.float64), a.astype(np.float64) @ b.astype(np.float64),
                               rtol=2e-3, atol=2e-3)
    k_steps = -(-k // 64)
    assert counters["async_copy_bytes"] == grid[0] * grid[1] * k_steps * (128 * 64 + 64 * 128) * 2


def device_matmul_ptx():
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
           "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"}
    return compile_ptx("matmul_tma_device", sig, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64},
                       num_warps=4, num_stages=3, divisible_by_16=["a_ptr", "b_ptr", "c_ptr"], capability=90)


@pytest.mark.parametrize("m,n,k", [(128, 256, 128), (136, 104, 72)])
def test_matmul_tma_device_descriptors(rng, m, n, k):
    ptx, meta = device_matmul_ptx()
    assert "tensormap.replace.tile.global_address" in ptx and "tensormap.cp_fenceproxy" in ptx
    assert "cp.async.bulk.tensor.2d.shared::cluster.global" in ptx and "wgmma.mma_async" in ptx
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    grid = (-(-m // 128), -(-n // 128))
    # The global scratch buffer: each CTA writes its three tensor maps there.
    scratch = np.zeros(meta.global_scratch_size * grid[0] * grid[1], np.uint8)
    assert meta.global_scratch_size >= 3 * 128
    gpusim.launch(ptx, "matmul_tma_device", grid, num_warps=meta.num_warps, shared_bytes=meta.shared,
                  args=[a, b, c, m, n, k, scratch, None])
    np.testing.assert_allclose(c.astype(np.float64), a.astype(np.float64) @ b.astype(np.float64),
                               rtol=2e-3, atol=2e-3)


def test_tma_rejects_unaligned_global_strides(rng):
    """TMA needs global strides that are multiples of 16 bytes: a 100-column fp16 matrix (200-byte rows) is
    rejected where the kernel first copies it, as cuTensorMapEncodeTiled would reject it."""
    ptx, meta = device_matmul_ptx()
    m, n, k = 128, 100, 64
    a = np.ones((m, k), np.float16)
    b = np.ones((k, n), np.float16)
    c = np.zeros((m, n), np.float16)
    scratch = np.zeros(meta.global_scratch_size, np.uint8)
    with pytest.raises(gpusim.SimulatorError, match=r"global stride 1 \(200 bytes\) is not a multiple of 16"):
        gpusim.launch(ptx, "matmul_tma_device", (1, 1), num_warps=meta.num_warps, shared_bytes=meta.shared,
                      args=[a, b, c, m, n, k, scratch, None])


def test_flash_attention_forward_sm90(rng):
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32", "N_CTX": "i32",
           "HEAD_DIM": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}
    ptx, meta = compile_ptx("attn_fwd", sig, {"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64}, num_warps=4,
                            num_stages=2, divisible_by_16=["Q", "K", "V", "Out", "N_CTX"], capability=90)
    assert wgmma_kinds(ptx) == {"wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"}
    z, n, d = 2, 256, 64
    q, k, v = [(rng.standard_normal((z, n, d)) * 0.7).astype(np.float16) for _ in range(3)]
    out = np.full_like(q, np.nan)
    gpusim.launch(ptx, "attn_fwd", (n // 128, z), num_warps=meta.num_warps, shared_bytes=meta.shared,
                  args=[q, k, v, out, 0.125, n, None, None])
    s = np.einsum("znd,zmd->znm", q.astype(np.float64), k.astype(np.float64)) * 0.125
    p = np.exp(s - s.max(-1, keepdims=True))
    ref = np.einsum("znm,zmd->znd", p / p.sum(-1, keepdims=True), v.astype(np.float64))
    # P is rounded to fp16 before the second dot, as in Triton.
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=0, atol=2e-3)


def test_flash_attention_forward_tma(rng):
    """Tutorial 06's forward pass through host-side descriptors: TMA loads of Q, K, V on mbarriers (two stages),
    Q @ K^T on shared-memory descriptors, P @ V with P in registers (wgmma's register-A form), a TMA store."""
    sig = {"desc_q": "tensordesc<fp16[128, 64]>", "desc_k": "tensordesc<fp16[64, 64]>",
           "desc_v": "tensordesc<fp16[64, 64]>", "desc_o": "tensordesc<fp16[128, 64]>", "sm_scale": "fp32",
           "N_CTX": "i32", "HEAD_DIM": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}
    ptx, meta = compile_ptx("attn_fwd_tma", sig, {"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64}, num_warps=4,
                            num_stages=2, capability=90)
    mma = [re.sub(r"\{[^}]*\}", "{}", line.strip()) for line in ptx.splitlines() if "wgmma.mma_async" in line]
    assert any(line.startswith("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {}, {}, %rd") for line in mma)
    assert any(re.match(r"wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 \{\}, %rd\d+, %rd", line)
               for line in mma)
    assert "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group" in ptx
    z, n, d = 2, 256, 64
    q, k, v = [(rng.standard_normal((z * n, d)) * 0.7).astype(np.float16) for _ in range(3)]
    out = np.full_like(q, np.nan)
    args = sum((descriptor_args(x, m) for x, m in zip((q, k, v, out), meta.tensordesc_meta)), [])
    gpusim.launch(ptx, "attn_fwd_tma", (n // 128, z), num_warps=meta.num_warps, shared_bytes=meta.shared,
                  args=args + [0.125, n, None, None])
    q3, k3, v3 = [x.reshape(z, n, d).astype(np.float64) for x in (q, k, v)]
    s = np.einsum("znd,zmd->znm", q3, k3) * 0.125
    p = np.exp(s - s.max(-1, keepdims=True))
    ref = np.einsum("znm,zmd->znd", p / p.sum(-1, keepdims=True), v3).reshape(z * n, d)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=0, atol=2e-3)


def e4m3_value(bits):
    e, m = (bits >> 3) & 15, bits & 7
    v = np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * 2.0 ** (e.astype(np.int64) - 7))
    return np.where(bits & 0x80, -v, v)


def e5m2_value(bits):
    e, m = (bits >> 2) & 31, bits & 3
    v = np.where(e == 0, m / 4 * 2.0 ** -14, (1 + m / 4) * 2.0 ** (e.astype(np.int64) - 15))
    return np.where(bits & 0x80, -v, v)


@pytest.mark.parametrize("in_type,wgmma_type", [("fp8e4nv", "e4m3"), ("fp8e5", "e5m2")])
def test_matmul_fp8_wgmma(rng, in_type, wgmma_type):
    """fp8 dots are k32 wgmmas on K-major operands (Triton transposes B in shared memory); every finite bit
    pattern, subnormals included."""
    sig = dict(MATMUL_SIG, a_ptr=f"*{in_type}", b_ptr=f"*{in_type}", c_ptr="*fp32")
    consts = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64,
              "GROUP_M": 8}
    ptx, meta = compile_ptx("matmul_kernel", sig, consts, num_warps=4, num_stages=3, divisible_by_16=DIVISIBLE,
                            capability=90)
    assert wgmma_kinds(ptx) == {f"wgmma.mma_async.sync.aligned.m64n128k32.f32.{wgmma_type}.{wgmma_type}"}
    m, n, k = 128, 128, 128
    a = rng.integers(0, 256, (m, k)).astype(np.uint8)
    b = rng.integers(0, 256, (k, n)).astype(np.uint8)
    special = 0x7F if wgmma_type == "e4m3" else 0x7C  # NaN (e4m3), Inf/NaN (e5m2)
    a[(a & special) == special] = 0x38
    b[(b & special) == special] = 0x38
    value = e4m3_value if wgmma_type == "e4m3" else e5m2_value
    c = np.full((m, n), np.nan, np.float32)
    gpusim.launch(ptx, "matmul_kernel", 1, num_warps=meta.num_warps, shared_bytes=meta.shared,
                  args=[a, b, c, m, n, k, k, n, n, None, None])
    ref = value(a) @ value(b)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max())


def test_matmul_tf32_wgmma(rng):
    """fp32 dots default to tf32 (k8 wgmma on K-major operands); tf32 keeps 10 mantissa bits."""
    sig = dict(MATMUL_SIG, a_ptr="*fp32", b_ptr="*fp32", c_ptr="*fp32")
    consts = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32,
              "GROUP_M": 8}
    ptx, meta = compile_ptx("matmul_kernel", sig, consts, num_warps=4, num_stages=3, divisible_by_16=DIVISIBLE,
                            capability=90)
    assert wgmma_kinds(ptx) == {"wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"}
    m, n, k = 128, 128, 64
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    gpusim.launch(ptx, "matmul_kernel", 1, num_warps=meta.num_warps, shared_bytes=meta.shared,
                  args=[a, b, c, m, n, k, k, n, n, None, None])
    tf32 = lambda x: (x.view(np.uint32) & 0xFFFFE000).view(np.float32).astype(np.float64)  # noqa: E731
    np.testing.assert_allclose(c, tf32(a) @ tf32(b), rtol=1e-5, atol=1e-5)
    assert np.abs(c - a.astype(np.float64) @ b.astype(np.float64)).max() > 1e-4  # not fp32 precision


def test_persistent_tma_matmul(rng):
    """Three programs loop over the 3 x 2 output tiles of a persistent kernel: one flattened pipeline, mbarrier
    phases carried across tiles, shared memory zero-filled with vector stores of immediate zeros."""
    sig = {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[128, 64]>",
           "c_desc": "tensordesc<fp16[128, 128]>", "M": "i32", "N": "i32", "K": "i32", "BLOCK_M": "constexpr",
           "BLOCK_N": "constexpr", "BLOCK_K": "constexpr", "NUM_SMS": "constexpr"}
    ptx, meta = compile_ptx("matmul_tma_persistent", sig,
                            {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "NUM_SMS": 3}, num_warps=4,
                            num_stages=3, capability=90)
    assert "cp.async.bulk.tensor.2d.shared::cluster.global" in ptx and "wgmma.mma_async" in ptx
    assert "{0, 0, 0, 0}" in ptx
    m, n, k = 320, 256, 128
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((n, k)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    args = sum((descriptor_args(x, d) for x, d in zip((a, b, c), meta.tensordesc_meta)), [])
    gpusim.launch(ptx, "matmul_tma_persistent", 3, num_warps=meta.num_warps, shared_bytes=meta.shared,
                  args=args + [m, n, k, None, None])
    np.testing.assert_allclose(c.astype(np.float64), a.astype(np.float64) @ b.T.astype(np.float64),
                               rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("block,swizzles", [((128, 32, 32), [2, 2, 2]), ((128, 16, 16), [1, 1, 1]),
                                            ((64, 64, 32), [2, 3, 3]), ((128, 64, 16), [1, 3, 3])])
def test_tma_matmul_swizzle_modes(rng, block, swizzles):
    """Narrower blocks make Triton pick 64- and 32-byte swizzles (codes 2 and 1) for its boxes and descriptors:
    TMA writes and wgmma reads (A K-major, B N-major) must agree on each."""
    ptx, meta = host_matmul_ptx(block=block)
    assert [d["swizzle"] for d in meta.tensordesc_meta] == swizzles
    assert wgmma_kinds(ptx) == {f"wgmma.mma_async.sync.aligned.m64n{block[1]}k16.f32.f16.f16"}
    m, n, k = 256, 128, 96
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    args = sum((descriptor_args(x, d) for x, d in zip((a, b, c), meta.tensordesc_meta)), [])
    gpusim.launch(ptx, "matmul_tma_host", (m // block[0], n // block[1]), num_warps=meta.num_warps,
                  shared_bytes=meta.shared, args=args + [k, None, None])
    np.testing.assert_allclose(c.astype(np.float64), a.astype(np.float64) @ b.astype(np.float64),
                               rtol=2e-3, atol=2e-3)


def test_matmul_tma_bf16(rng):
    ptx, meta = host_matmul_ptx(dtype="bf16")
    assert wgmma_kinds(ptx) == {"wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"}
    assert all(d["elem_type"] == 10 for d in meta.tensordesc_meta)  # bf16 in tensormap.replace's numbering
    m, n, k = 128, 256, 128
    a = to_bf16_bits(rng.standard_normal((m, k)))
    b = to_bf16_bits(rng.standard_normal((k, n)))
    c = np.zeros((m, n), np.uint16)
    args = [x for arr, d in zip((a, b, c), meta.tensordesc_meta)
            for x in [gpusim.TensorMap(arr, d["block_size"], swizzle=128, elem_type="bf16"), *arr.shape,
                      *(s // 2 for s in arr.strides)]]
    gpusim.launch(ptx, "matmul_tma_host", (m // 128, n // 128), num_warps=meta.num_warps, shared_bytes=meta.shared,
                  args=args + [k, None, None])
    ref = bf16_value(a).astype(np.float64) @ bf16_value(b).astype(np.float64)
    np.testing.assert_allclose(bf16_value(c), ref, rtol=2 ** -8, atol=1e-2)


@pytest.mark.parametrize("in_type,out_type,kind", [("fp16", "fp16", "f16.f16.f16"), ("i8", "i32", "s32.s8.s8")])
def test_dot_with_fp16_and_int32_accumulators(rng, in_type, out_type, kind):
    """tl.dot(out_dtype=fp16) accumulates in f16 registers (two per register), int8 dots in s32."""
    integer = in_type == "i8"
    sig = {"a_ptr": f"*{in_type}", "b_ptr": f"*{in_type}", "c_ptr": f"*{out_type}", "M": "constexpr",
           "N": "constexpr", "K": "constexpr", "INT": "constexpr"}
    ptx, meta = compile_ptx("dot_tile", sig, {"M": 64, "N": 64, "K": 64, "INT": integer}, capability=90,
                            divisible_by_16=["a_ptr", "b_ptr", "c_ptr"])
    k = 32 if integer else 16
    assert wgmma_kinds(ptx) == {f"wgmma.mma_async.sync.aligned.m64n64k{k}.{kind}"}
    if integer:
        a = rng.integers(-128, 128, (64, 64)).astype(np.int8)
        b = rng.integers(-128, 128, (64, 64)).astype(np.int8)
        c = np.zeros((64, 64), np.int32)
    else:  # halves, so that every partial sum is exact in fp16
        a = (rng.integers(-2, 3, (64, 64)) / 2).astype(np.float16)
        b = (rng.integers(-2, 3, (64, 64)) / 2).astype(np.float16)
        c = np.full((64, 64), np.nan, np.float16)
    gpusim.launch(ptx, "dot_tile", 1, num_warps=meta.num_warps, shared_bytes=meta.shared, args=[a, b, c, None, None])
    np.testing.assert_array_equal(c.astype(np.float64), a.astype(np.float64) @ b.astype(np.float64))
