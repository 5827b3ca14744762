"""Triton 3.6's sm_80 tensor-core PTX runs in Tessel's PTX simulator and matches numpy.

Matmul (Triton's tutorial 03, fp16 and bf16, software-pipelined with cp.async over 3 and 4 stages) and flash
attention's forward pass (tutorial 06) compile to mma.sync, ldmatrix and cp.async; the tests check the PTX really
uses them, then run it on random inputs against numpy in float64.
"""
import re

import numpy as np
import pytest

from test_gpusim_triton import compile_ptx, scratch_args
from tessel import gpusim

MATMUL_SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
              "stride_am": "i32", "stride_ak": "constexpr", "stride_bk": "i32", "stride_bn": "constexpr",
              "stride_cm": "i32", "stride_cn": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr",
              "BLOCK_K": "constexpr", "GROUP_M": "constexpr"}
# What Triton's launcher would specialize for these arguments: 16-byte aligned arrays, K and the row strides
# multiples of 16 (N too). That is what lets Triton pipeline the loads with cp.async.
DIVISIBLE = ["a_ptr", "b_ptr", "c_ptr", "N", "K", "stride_am", "stride_bk", "stride_cm"]


def to_bf16_bits(x):
    """float32 -> bfloat16 bits (round to nearest even), as uint16."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def matmul_ptx(in_type, out_type, block, stages, group_m=8, capability=80):
    sig = dict(MATMUL_SIG, a_ptr=f"*{in_type}", b_ptr=f"*{in_type}", c_ptr=f"*{out_type}")
    bm, bn, bk = block
    consts = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk,
              "GROUP_M": group_m}
    return compile_ptx("matmul_kernel", sig, consts, num_warps=4, num_stages=stages, divisible_by_16=DIVISIBLE,
                       capability=capability)


def run_matmul(ptx, meta, a, b, c, block):
    m, k = a.shape
    n = b.shape[1]
    grid = -(-m // block[0]) * -(-n // block[1])
    return gpusim.launch(ptx, "matmul_kernel", grid, num_warps=meta.num_warps, shared_bytes=meta.shared,
                         args=[a, b, c, m, n, k, k, n, n] + scratch_args(ptx))


def assert_tensor_core_ptx(ptx, mma):
    assert f"mma.sync.aligned.{mma}" in ptx
    assert "ldmatrix.sync.aligned.m8n8.x4" in ptx
    assert "cp.async.cg.shared.global" in ptx and "cp.async.commit_group" in ptx and "cp.async.wait_group" in ptx


@pytest.mark.parametrize("m,n,k", [(128, 128, 96), (100, 80, 80)])
def test_matmul_fp16(rng, m, n, k):
    block = (64, 64, 32)
    ptx, meta = matmul_ptx("fp16", "fp16", block, stages=3)
    assert_tensor_core_ptx(ptx, "m16n8k16.row.col.f32.f16.f16.f32")
    assert "cvt.rn.f16x2.f32" in ptx
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    counters = run_matmul(ptx, meta, a, b, c, block)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    # f32 accumulation of exact f16 products, then one rounding to f16.
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-3)
    tiles = -(-m // 64) * -(-n // 64)
    k_steps = -(-k // 32)
    # Each 64x64x32 step of a CTA is 4 x 8 x 2 mma.m16n8k16, spread over its 4 warps.
    assert counters["inst_tensor_core"] == tiles * k_steps * 64
    # Every A and B element of every k step arrives through cp.async (masked ones zero-filled).
    assert counters["async_copy_bytes"] == tiles * (k_steps + 2) * (64 * 32 + 32 * 64) * 2


@pytest.mark.parametrize("m,n,k", [(64, 96, 128), (72, 48, 48)])
def test_matmul_bf16(rng, m, n, k):
    block = (64, 32, 32)
    ptx, meta = matmul_ptx("bf16", "fp32", block, stages=4, group_m=4)
    assert_tensor_core_ptx(ptx, "m16n8k16.row.col.f32.bf16.bf16.f32")
    a = to_bf16_bits(rng.standard_normal((m, k)))
    b = to_bf16_bits(rng.standard_normal((k, n)))
    c = np.full((m, n), np.nan, np.float32)
    run_matmul(ptx, meta, a, b, c, block)
    ref = bf16_value(a).astype(np.float64) @ bf16_value(b).astype(np.float64)
    # Exact bf16 products accumulated in f32: K roundings of relative size 2^-24 at most.
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.sqrt(k))


def e4m3_values(bits):
    """The value of each float8e4nv (e4m3) byte, from the format's definition (bias 7, no infinities)."""
    b = bits.astype(np.int64)
    e, m = (b >> 3) & 15, b & 7
    v = np.where(e == 0, m * 2.0 ** -9, (8 + m) * 2.0 ** (e - 10))
    return np.where(b & 0x80, -v, v)


def e5m2_values(bits):
    """The value of each float8e5 (e5m2) byte: the top half of an fp16."""
    return (bits.astype(np.uint16) << 8).view(np.float16).astype(np.float64)


@pytest.mark.parametrize("capability,mma", [(89, "m16n8k32.row.col.f32.e5m2.e5m2.f32"),
                                            (80, "m16n8k16.row.col.f32.f16.f16.f32")])
def test_matmul_fp8_e5m2(rng, capability, mma):
    # sm_89 multiplies e5m2 on tensor cores; sm_80 has no fp8 MMA, and Triton widens the operands to fp16 first.
    block = (64, 64, 64)
    ptx, meta = matmul_ptx("fp8e5", "fp32", block, stages=3, capability=capability)
    assert_tensor_core_ptx(ptx, mma)
    m, n, k = 64, 128, 128
    a = rng.integers(0, 256, (m, k)).astype(np.uint8)
    b = rng.integers(0, 256, (k, n)).astype(np.uint8)
    a[(a & 0x7C) == 0x7C] ^= 0x04  # no infinities or NaNs (exponent all ones)
    b[(b & 0x7C) == 0x7C] ^= 0x04
    c = np.full((m, n), np.nan, np.float32)
    run_matmul(ptx, meta, a, b, c, block)
    ref = e5m2_values(a) @ e5m2_values(b)
    np.testing.assert_allclose(c, ref, rtol=1e-6, atol=1e-6 * np.abs(ref).max())


def test_matmul_fp8_e4m3_sm89(rng):
    # Triton compiles fp8 dots for sm_89 to mma.m16n8k32 with e4m3 inputs (fed by ldmatrix and prmt).
    block = (64, 64, 64)
    ptx, meta = matmul_ptx("fp8e4nv", "fp32", block, stages=3, capability=89)
    assert_tensor_core_ptx(ptx, "m16n8k32.row.col.f32.e4m3.e4m3.f32")
    m, n, k = 64, 128, 192
    a = rng.integers(0, 256, (m, k)).astype(np.uint8)
    b = rng.integers(0, 256, (k, n)).astype(np.uint8)
    a[(a & 0x7F) == 0x7F] ^= 0x01  # no NaN codes
    b[(b & 0x7F) == 0x7F] ^= 0x01
    c = np.full((m, n), np.nan, np.float32)
    counters = run_matmul(ptx, meta, a, b, c, block)
    ref = e4m3_values(a) @ e4m3_values(b)
    # Exact products, f32 accumulation.
    np.testing.assert_allclose(c, ref, rtol=1e-6, atol=1e-6 * np.abs(ref).max())
    assert counters["inst_tensor_core"] == (m // 64) * (n // 64) * (k // 64) * 4 * 8 * 2


def test_matmul_sees_stale_data_without_the_wait(rng):
    # The same PTX with every cp.async.wait_group turned into a wait for nothing-in-particular (a wait on more
    # groups than are ever pending) reads shared memory before the copies land: the simulator must produce a
    # wrong product, as hardware would, not the right one.
    block = (64, 64, 32)
    ptx, meta = matmul_ptx("fp16", "fp16", block, stages=3)
    broken, waits = re.subn(r"cp\.async\.wait_group\s+\d+;", "cp.async.wait_group 7;", ptx)
    assert waits >= 2
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    c = np.zeros((64, 64), np.float16)
    run_matmul(broken, meta, a, b, c, block)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert not np.allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-3)
    run_matmul(ptx, meta, a, b, c, block)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-3)


ATTN_SIG = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32", "N_CTX": "i32",
            "HEAD_DIM": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}


@pytest.mark.parametrize("bh,n_ctx,head_dim", [(2, 128, 64), (1, 64, 32)])
def test_flash_attention_forward(rng, bh, n_ctx, head_dim):
    ptx, meta = compile_ptx("attn_fwd", ATTN_SIG, {"HEAD_DIM": head_dim, "BLOCK_M": 64, "BLOCK_N": 32},
                            num_warps=4, num_stages=3, divisible_by_16=["Q", "K", "V", "Out", "N_CTX"])
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx and "cp.async" in ptx
    assert "ex2.approx" in ptx and "shfl.sync.bfly" in ptx
    q, k, v = (rng.standard_normal((3, bh, n_ctx, head_dim))).astype(np.float16)
    out = np.full((bh, n_ctx, head_dim), np.nan, np.float16)
    scale = 1 / np.sqrt(head_dim)
    counters = gpusim.launch(ptx, "attn_fwd", (n_ctx // 64, bh), num_warps=meta.num_warps,
                             shared_bytes=meta.shared, args=[q, k, v, out, scale, n_ctx] + scratch_args(ptx))
    s = np.einsum("bmd,bnd->bmn", q.astype(np.float64), k.astype(np.float64)) * scale
    p = np.exp(s - s.max(axis=2, keepdims=True))
    ref = np.einsum("bmn,bnd->bmd", p / p.sum(axis=2, keepdims=True), v.astype(np.float64))
    # P is rounded to f16 before the second dot (as in the tutorial): about 2^-11 relative per term.
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=1e-2, atol=4e-3)
    assert counters["inst_tensor_core"] > 0 and counters["async_copy_bytes"] > 0


DOT_SIG = {"a_ptr": "*i8", "b_ptr": "*i8", "c_ptr": "*i32", "M": "constexpr", "N": "constexpr", "K": "constexpr",
           "PRECISION": "constexpr"}


def test_dot_int8(rng):
    ptx, meta = compile_ptx("dot_kernel", DOT_SIG, {"M": 64, "N": 64, "K": 64, "PRECISION": None},
                            divisible_by_16=["a_ptr", "b_ptr", "c_ptr"])
    assert "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32" in ptx and "ldmatrix" in ptx
    a = rng.integers(-128, 128, (64, 64)).astype(np.int8)
    b = rng.integers(-128, 128, (64, 64)).astype(np.int8)
    c = np.zeros((64, 64), np.int32)
    gpusim.launch(ptx, "dot_kernel", 1, num_warps=meta.num_warps, shared_bytes=meta.shared,
                  args=[a, b, c] + scratch_args(ptx))
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))  # exact


def test_dot_tf32(rng):
    sig = dict(DOT_SIG, a_ptr="*fp32", b_ptr="*fp32", c_ptr="*fp32")
    ptx, meta = compile_ptx("dot_kernel", sig, {"M": 64, "N": 64, "K": 64, "PRECISION": "tf32"},
                            divisible_by_16=["a_ptr", "b_ptr", "c_ptr"])
    assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in ptx
    # Inputs already tf32 (10 mantissa bits), so Triton's rounding of them (cvt.rna.tf32.f32, if any) is exact.
    a = (rng.standard_normal((64, 64)).astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    b = (rng.standard_normal((64, 64)).astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    c = np.zeros((64, 64), np.float32)
    gpusim.launch(ptx, "dot_kernel", 1, num_warps=meta.num_warps, shared_bytes=meta.shared,
                  args=[a, b, c] + scratch_args(ptx))
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)


def test_dot_tf32x3(rng):
    # Three tf32 MMAs per product (a_hi b_hi + a_hi b_lo + a_lo b_hi, the parts split by cvt.rna.tf32.f32): close
    # to an fp32 dot on inputs with all 24 mantissa bits, where one tf32 MMA is off by about 2^-11.
    sig = dict(DOT_SIG, a_ptr="*fp32", b_ptr="*fp32", c_ptr="*fp32")
    ptx, meta = compile_ptx("dot_kernel", sig, {"M": 64, "N": 64, "K": 64, "PRECISION": "tf32x3"},
                            divisible_by_16=["a_ptr", "b_ptr", "c_ptr"])
    assert ptx.count("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32") == 3 * 64
    assert "cvt.rna.tf32.f32" in ptx
    a = rng.standard_normal((64, 64)).astype(np.float32)
    b = rng.standard_normal((64, 64)).astype(np.float32)
    c = np.zeros((64, 64), np.float32)
    gpusim.launch(ptx, "dot_kernel", 1, num_warps=meta.num_warps, shared_bytes=meta.shared,
                  args=[a, b, c] + scratch_args(ptx))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b)
    assert np.abs(c - ref).max() / scale.max() < 2e-6
