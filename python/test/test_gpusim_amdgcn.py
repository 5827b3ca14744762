"""Triton 3.6's own AMDGCN (gfx942, and gfx90a/gfx950 where noted) runs in Tessel's simulator and matches numpy.

Triton is a test-time reference only: its AMD code is known to be right on real GPUs, so these tests check the
simulator's AMDGCN front end (kernel descriptor, argument segment, SALU/VALU/DPP/LDS/global/buffer semantics, MFMA
layouts, s_waitcnt timing), independently of Tessel's AMD backend. The assembly comes from triton.compile with a
GPUTarget("hip", chip, 64) in a child process (triton_ptx_kernels.py), without a GPU.
"""
import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

from tessel import gpusim

_CODE: dict = {}


@pytest.fixture(params=["sim:gfx942"])
def target(request, monkeypatch):
    """Overrides the suite's per-target fixture: these tests run Triton's code, whatever Tessel's target."""
    return request.param


KERNELS = pathlib.Path(__file__).with_name("triton_ptx_kernels.py")


def amdgcn(kernel, signature, constexprs, chip="gfx942", num_warps=4, num_stages=2, divisible_by_16=(), debug=False,
           kernels=KERNELS):
    request = json.dumps({"kernel": kernel, "signature": signature, "constexprs": constexprs, "num_warps": num_warps,
                          "num_stages": num_stages, "divisible_by_16": list(divisible_by_16), "chip": chip,
                          "debug": debug}, sort_keys=True)
    if (request, str(kernels)) not in _CODE:
        env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
        result = subprocess.run([sys.executable, str(kernels), request], capture_output=True, text=True, env=env,
                                timeout=300)
        assert result.returncode == 0, result.stderr[-3000:]
        _CODE[request, str(kernels)] = json.loads(result.stdout)
    return _CODE[request, str(kernels)]


SCRATCH = [None, None]  # Triton 3.6's global and profile scratch pointers: unused by these kernels
ADD_SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}


@pytest.mark.parametrize("chip", ["gfx90a", "gfx942", "gfx950"])
@pytest.mark.parametrize("n", [1, 1000, 4096 + 3])
def test_vector_add(rng, chip, n):
    code = amdgcn("add_kernel", ADD_SIG, {"BLOCK": 1024}, chip=chip)
    x, y = rng.standard_normal((2, n)).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    c = gpusim.launch(code["amdgcn"], "add_kernel", (n + 1023) // 1024, num_warps=code["num_warps"],
                      shared_bytes=code["shared"], args=[x, y, out, n] + SCRATCH)
    np.testing.assert_array_equal(out, x + y)  # one f32 add: exact
    assert c["ctas"] == (n + 1023) // 1024 and c["warps"] == 4 * c["ctas"]
    assert c["global_store_bytes"] == 4 * n and c["global_load_bytes"] == 8 * n


def test_vector_add_reads_stale_registers_without_the_wait(rng):
    # Loads land in their registers at the s_waitcnt that covers them. Without it, the add reads what the
    # registers held before (the addresses and indices of the kernel): a wrong sum, as on the hardware.
    code = amdgcn("add_kernel", ADD_SIG, {"BLOCK": 1024})
    broken, waits = re.subn(r"s_waitcnt vmcnt\(0\)", "s_nop 0", code["amdgcn"])
    assert waits >= 1
    x, y = rng.standard_normal((2, 2048)).astype(np.float32)
    out = np.zeros(2048, np.float32)
    gpusim.launch(broken, "add_kernel", 2, num_warps=4, args=[x, y, out, 2048] + SCRATCH)
    assert not np.any(out == x + y)
    gpusim.launch(code["amdgcn"], "add_kernel", 2, num_warps=4, args=[x, y, out, 2048] + SCRATCH)
    np.testing.assert_array_equal(out, x + y)


@pytest.mark.parametrize("rows,cols", [(1, 1), (5, 1000), (7, 1024)])
def test_softmax(rng, rows, cols):
    code = amdgcn("softmax_kernel", {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_stride": "i32", "out_stride": "i32",
                                     "n_cols": "i32", "BLOCK": "constexpr"}, {"BLOCK": 1024})
    asm = code["amdgcn"]
    assert "_dpp" in asm and "v_readlane_b32" in asm and "s_barrier" in asm and "buffer_load_dword" in asm
    x = (rng.standard_normal((rows, cols)) * 4).astype(np.float32)
    out = np.zeros_like(x)
    c = gpusim.launch(asm, "softmax_kernel", rows, num_warps=code["num_warps"], shared_bytes=code["shared"],
                      args=[out, x, cols, cols, cols] + SCRATCH)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-7)
    assert c["inst_warp"] > 0 and c["barriers"] >= rows


@pytest.mark.parametrize("rows,n", [(3, 700), (4, 2500)])
def test_layer_norm(rng, rows, n):
    code = amdgcn("layer_norm_fwd", {"X": "*fp32", "Y": "*fp32", "W": "*fp32", "B": "*fp32", "Mean": "*fp32",
                                     "Rstd": "*fp32", "stride": "i32", "N": "i32", "eps": "fp32",
                                     "BLOCK_SIZE": "constexpr"}, {"BLOCK_SIZE": 1024})
    x = (rng.standard_normal((rows, n)) * 2 + 0.5).astype(np.float32)
    w, b = rng.standard_normal((2, n)).astype(np.float32)
    y = np.zeros_like(x)
    mean, rstd = np.zeros((2, rows), np.float32)
    gpusim.launch(code["amdgcn"], "layer_norm_fwd", rows, num_warps=code["num_warps"], shared_bytes=code["shared"],
                  args=[x, y, w, b, mean, rstd, n, n, 1e-5] + SCRATCH)
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=1)
    rs = 1 / np.sqrt(((x64 - mu[:, None]) ** 2).mean(axis=1) + 1e-5)
    np.testing.assert_allclose(mean, mu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rstd, rs, rtol=1e-5)
    np.testing.assert_allclose(y, (x64 - mu[:, None]) * rs[:, None] * w + b, rtol=1e-4, atol=1e-5)


MATMUL_SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
              "stride_am": "i32", "stride_ak": "constexpr", "stride_bk": "i32", "stride_bn": "constexpr",
              "stride_cm": "i32", "stride_cn": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr",
              "BLOCK_K": "constexpr", "GROUP_M": "constexpr"}


def matmul_code(dtype, chip="gfx942"):
    sig = dict(MATMUL_SIG, a_ptr=f"*{dtype}", b_ptr=f"*{dtype}", c_ptr=f"*{dtype}")
    consts = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32,
              "GROUP_M": 8}
    return amdgcn("matmul_kernel", sig, consts, chip=chip,
                  divisible_by_16=["a_ptr", "b_ptr", "c_ptr", "stride_am", "stride_bk", "stride_cm"])


def run_matmul(code, a, b, c):
    m, k = a.shape
    n = b.shape[1]
    grid = -(-m // 64) * -(-n // 64)
    return gpusim.launch(code["amdgcn"], "matmul_kernel", grid, num_warps=code["num_warps"],
                         shared_bytes=code["shared"], args=[a, b, c, m, n, k, k, n, n] + SCRATCH)


@pytest.mark.parametrize("chip", ["gfx90a", "gfx942", "gfx950"])
@pytest.mark.parametrize("m,n,k", [(128, 128, 96), (100, 80, 80)])
def test_matmul_fp16(rng, chip, m, n, k):
    code = matmul_code("fp16", chip)
    assert re.search(r"v_mfma_f32_(32x32x8|16x16x16|32x32x16|16x16x32)_?f16", code["amdgcn"])
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    counters = run_matmul(code, a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-3 * np.abs(ref).max())
    assert counters["inst_tensor_core"] > 0


def test_matmul_bf16(rng):
    import torch
    code = matmul_code("bf16")
    a = torch.randn(96, 64).to(torch.bfloat16)
    b = torch.randn(64, 128).to(torch.bfloat16)
    c = torch.zeros(96, 128, dtype=torch.bfloat16)
    run_matmul(code, a.view(torch.int16).numpy(), b.view(torch.int16).numpy(), c.view(torch.int16).numpy())
    ref = a.double() @ b.double()
    np.testing.assert_allclose(c.double().numpy(), ref.numpy(), rtol=1e-2, atol=1e-2 * ref.abs().max().item())


# int8 into int32 on each chip's own instruction (gfx90a: 32x32x8i8, gfx942: 32x32x16_i8, gfx950: 32x32x32_i8), and
# fp32 where Triton takes the exact fp32 MFMA (gfx90a's 32x32x2f32, gfx950's 32x32x2_f32; gfx942's tf32 default is
# xf32, whose rounding the simulator does not model).
@pytest.mark.parametrize("chip,instruction", [("gfx90a", "v_mfma_i32_32x32x8i8"), ("gfx942", "v_mfma_i32_32x32x16_i8"),
                                              ("gfx950", "v_mfma_i32_32x32x32_i8")])
def test_matmul_int8(rng, chip, instruction):
    sig = dict(MATMUL_SIG, a_ptr="*i8", b_ptr="*i8", c_ptr="*i32")
    consts = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64,
              "GROUP_M": 8}
    code = amdgcn("matmul_kernel", sig, consts, chip=chip,
                  divisible_by_16=["a_ptr", "b_ptr", "c_ptr", "stride_am", "stride_bk", "stride_cm"])
    assert instruction in code["amdgcn"]
    m, n, k = 96, 128, 160
    a = rng.integers(-128, 128, (m, k), dtype=np.int8)
    b = rng.integers(-128, 128, (k, n), dtype=np.int8)
    c = np.zeros((m, n), np.int32)
    run_matmul(code, a, b, c)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))


# gfx950's transposed LDS reads: with 3 stages Triton reads the operand whose rows run along N (B, K x N) with
# ds_read_b64_tr_b16 (16-bit) or ds_read_b64_tr_b8 (8-bit), each lane getting its run of K from 16 lanes' reads.
@pytest.mark.parametrize("dtype,instruction", [("fp16", "ds_read_b64_tr_b16"), ("bf16", "ds_read_b64_tr_b16"),
                                               ("i8", "ds_read_b64_tr_b8")])
def test_matmul_transposed_lds_reads(rng, dtype, instruction):
    import torch
    integer = dtype == "i8"
    sig = dict(MATMUL_SIG, a_ptr=f"*{dtype}", b_ptr=f"*{dtype}", c_ptr="*i32" if integer else "*fp32")
    consts = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_M": 64, "BLOCK_N": 64,
              "BLOCK_K": 64 if integer else 32, "GROUP_M": 8}
    code = amdgcn("matmul_kernel", sig, consts, chip="gfx950", num_stages=3,  # sizes multiples of 16 too
                  divisible_by_16=["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"])
    assert instruction in code["amdgcn"]
    m, n, k = 96, 128, 160
    if integer:
        a = rng.integers(-128, 128, (m, k), dtype=np.int8)
        b = rng.integers(-128, 128, (k, n), dtype=np.int8)
        c = np.zeros((m, n), np.int32)
        run_matmul(code, a, b, c)
        np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))
        return
    torch_type = torch.float16 if dtype == "fp16" else torch.bfloat16
    a = torch.randn(m, k).to(torch_type)
    b = torch.randn(k, n).to(torch_type)
    c = np.full((m, n), np.nan, np.float32)
    run_matmul(code, a.view(torch.int16).numpy(), b.view(torch.int16).numpy(), c)
    ref = a.double().numpy() @ b.double().numpy()
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())  # fp32 sums of exact products


# 8-bit floats into fp32: gfx942 multiplies the fnuz formats (fp8e4b8 is e4m3fnuz, fp8e5b16 e5m2fnuz) on
# v_mfma_f32_32x32x16_{fp8,bf8}_{fp8,bf8}, which names src0's format first; gfx950 the OCP ones (fp8e4nv is e4m3fn,
# fp8e5 e5m2) on the same instructions where BLOCK_K is 32, on v_mfma_f32_32x32x64_f8f6f4 (cbsz and blgp name the
# formats) where it is 64. torch decodes the bytes.
# Triton 3.6 swaps the operands of its transposed MFMA layout but not the formats of a mixed fnuz pair
# (triton-lang/triton#9567, fixed in 3.7): its result is the product of A's bytes read as B's format and B's read as
# A's, which the simulator reproduces.
@pytest.mark.parametrize("chip,a_type,b_type,block_k,instruction", [
    ("gfx942", "fp8e4b8", "fp8e4b8", 64, "v_mfma_f32_32x32x16_fp8_fp8"),
    ("gfx942", "fp8e5b16", "fp8e5b16", 64, "v_mfma_f32_32x32x16_bf8_bf8"),
    ("gfx942", "fp8e5b16", "fp8e4b8", 64, "v_mfma_f32_32x32x16_bf8_fp8"),
    ("gfx950", "fp8e4nv", "fp8e4nv", 32, "v_mfma_f32_32x32x16_fp8_fp8"),
    ("gfx950", "fp8e5", "fp8e4nv", 32, "v_mfma_f32_32x32x16_bf8_fp8"),
    ("gfx950", "fp8e4nv", "fp8e5", 64, "v_mfma_f32_32x32x64_f8f6f4"),
    ("gfx950", "fp8e5", "fp8e4nv", 64, "v_mfma_f32_32x32x64_f8f6f4")])
def test_matmul_fp8(rng, chip, a_type, b_type, block_k, instruction):
    import torch
    torch_type = {"fp8e4b8": torch.float8_e4m3fnuz, "fp8e5b16": torch.float8_e5m2fnuz, "fp8e4nv": torch.float8_e4m3fn,
                  "fp8e5": torch.float8_e5m2}
    sig = dict(MATMUL_SIG, a_ptr=f"*{a_type}", b_ptr=f"*{b_type}", c_ptr="*fp32")
    consts = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": block_k,
              "GROUP_M": 8}
    code = amdgcn("matmul_kernel", sig, consts, chip=chip,
                  divisible_by_16=["a_ptr", "b_ptr", "c_ptr", "stride_am", "stride_bk", "stride_cm"])
    assert instruction in code["amdgcn"]
    m, n, k = 96, 128, 192

    def decode(bits, name):
        return torch.from_numpy(bits).view(torch_type[name]).double().numpy()

    def values(shape):  # bytes finite and at most 64 in magnitude in every format of the test
        codes = np.arange(256, dtype=np.uint8)
        ok = np.all([np.isfinite(decode(codes, t)) & (np.abs(decode(codes, t)) <= 64) for t in torch_type], axis=0)
        return rng.choice(codes[ok], shape).astype(np.uint8)

    a, b = values((m, k)), values((k, n))
    c = np.zeros((m, n), np.float32)
    run_matmul(code, a, b, c)
    swapped = "32x32x16" in instruction and a_type != b_type  # Triton 3.6's mixed-format bug
    ref = decode(a, b_type if swapped else a_type) @ decode(b, a_type if swapped else b_type)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


@pytest.mark.parametrize("chip,instruction", [("gfx90a", "v_mfma_f32_32x32x2f32"), ("gfx950", "v_mfma_f32_32x32x2_f32")])
def test_matmul_fp32(rng, chip, instruction):
    code = matmul_code("fp32", chip)
    assert instruction in code["amdgcn"]
    m, n, k = 96, 64, 80
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    run_matmul(code, a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)


def test_matmul_sees_stale_data_without_the_wait(rng):
    # The same code with every wait for memory turned into a wait for nothing (counts no kernel reaches) reads its
    # loads' registers before the data arrives: the simulator must give a wrong product, as the hardware would.
    code = dict(matmul_code("fp16"))
    broken, waits = re.subn(r"s_waitcnt[^\n;]*", "s_waitcnt vmcnt(63) lgkmcnt(15)",
                            code["amdgcn"])
    assert waits >= 2
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    c = np.zeros((64, 64), np.float16)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    try:
        run_matmul(dict(code, amdgcn=broken), a, b, c)
        stale_ok = not np.allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-3)
    except gpusim.SimulatorError as e:  # stale addresses may also point outside every array
        stale_ok = "out-of-bounds" in str(e) or "outside" in str(e)
    assert stale_ok
    run_matmul(code, a, b, c)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-3 * np.abs(ref).max())


ATTN_SIG = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32", "N_CTX": "i32",
            "HEAD_DIM": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}


@pytest.mark.parametrize("bh,n_ctx,head_dim", [(2, 128, 64), (1, 64, 32)])
def test_flash_attention_forward(rng, bh, n_ctx, head_dim):
    code = amdgcn("attn_fwd", ATTN_SIG, {"HEAD_DIM": head_dim, "BLOCK_M": 64, "BLOCK_N": 32},
                  divisible_by_16=["Q", "K", "V", "Out", "N_CTX"])
    q, k, v = (rng.standard_normal((3, bh, n_ctx, head_dim))).astype(np.float16)
    out = np.full((bh, n_ctx, head_dim), np.nan, np.float16)
    scale = 1 / np.sqrt(head_dim)
    counters = gpusim.launch(code["amdgcn"], "attn_fwd", (n_ctx // 64, bh), num_warps=code["num_warps"],
                             shared_bytes=code["shared"], args=[q, k, v, out, scale, n_ctx] + SCRATCH)
    s = np.einsum("bmd,bnd->bmn", q.astype(np.float64), k.astype(np.float64)) * scale
    p = np.exp(s - s.max(axis=2, keepdims=True))
    ref = np.einsum("bmn,bnd->bmd", p / p.sum(axis=2, keepdims=True), v.astype(np.float64))
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=1e-2, atol=4e-3)
    assert counters["inst_tensor_core"] > 0


def test_out_of_bounds_store_names_the_lane():
    # A grid larger than the arrays: Triton's mask keeps the loads in bounds but the launch passes a wrong n.
    code = amdgcn("add_kernel", ADD_SIG, {"BLOCK": 1024})
    x = y = np.zeros(1000, np.float32)
    out = np.zeros(1000, np.float32)
    with pytest.raises(gpusim.SimulatorError, match=r"(?s)out-of-bounds global load .* workgroup \(0,0,0\), wave 3, "
                                                    r"lane \d+ \(work-item \d+\), AMDGCN line \d+: global_load"):
        gpusim.launch(code["amdgcn"], "add_kernel", 1, num_warps=4, args=[x, y, out, 1024] + SCRATCH)


def test_unknown_instructions_name_their_line():
    code = amdgcn("add_kernel", ADD_SIG, {"BLOCK": 1024})["amdgcn"].replace("s_endpgm", "v_nonsense_b32 v0, v1", 1)
    with pytest.raises(gpusim.SimulatorError, match=r"AMDGCN line \d+: the simulator does not model v_nonsense_b32"):
        gpusim.launch(code, "add_kernel", 1, num_warps=4, args=[np.zeros(4, np.float32)] * 3 + [4] + SCRATCH)


# Lane swizzles as the ISA defines them, on code LLVM's AMDGPU backend makes from its intrinsics (llc, LLVM 22: the
# backend Tessel's hip targets use): ds_swizzle_b32 in quad mode (offset bit 15: lane 4 (l / 4) + field l % 4 of
# four 2-bit selectors) and bitmask mode (within 32 lanes, ((l & and) | or) ^ xor, the masks in offset bits 0-4,
# 5-9, 10-14), which LLVM prints as swizzle(QUAD_PERM|SWAP|REVERSE|BROADCAST|BITMASK_PERM, ...); and the DPP
# quad_perm move. The reference is numpy on those formulas.
SWIZZLES = [0x80B1, 0x80E4 ^ 0x3F, 0x101F, 0x201F, 0x401F, 0x1C1F, 0x7C1F, 0x0078, 0x0907, 0x03E0, 0x0CE3]
DPP_QUAD_PERMS = [0xB1, 0x4E, 0x1B, 0x00]


def _swizzle_source(offset: int, lane: np.ndarray) -> np.ndarray:
    if offset & 0x8000:
        return (lane & ~3) | ((offset >> (2 * (lane & 3))) & 3)
    a, o, x = offset & 0x1F, (offset >> 5) & 0x1F, (offset >> 10) & 0x1F
    return (lane & ~31) | (((lane & a) | o) ^ x)


def test_lane_swizzles_match_the_isa(rng, tmp_path):
    import shutil
    llc = shutil.which("llc-22") or "/usr/lib/llvm-22/bin/llc"
    n = len(SWIZZLES) + len(DPP_QUAD_PERMS)
    body = ["%id = call i32 @llvm.amdgcn.workitem.id.x()",
            "%src = getelementptr i32, ptr addrspace(1) %x, i32 %id", "%v = load i32, ptr addrspace(1) %src"]
    for i, off in enumerate(SWIZZLES):
        body.append(f"%s{i} = call i32 @llvm.amdgcn.ds.swizzle(i32 %v, i32 {off})")
    for j, ctrl in enumerate(DPP_QUAD_PERMS):
        body.append(f"%s{len(SWIZZLES) + j} = call i32 @llvm.amdgcn.update.dpp.i32(i32 poison, i32 %v, i32 {ctrl},"
                    " i32 15, i32 15, i1 false)")
    for i in range(n):
        body += [f"%i{i} = add i32 %id, {64 * i}", f"%p{i} = getelementptr i32, ptr addrspace(1) %out, i32 %i{i}",
                 f"store i32 %s{i}, ptr addrspace(1) %p{i}"]
    ir = "\n".join([
        'target triple = "amdgcn-amd-amdhsa"',
        "declare i32 @llvm.amdgcn.workitem.id.x()", "declare i32 @llvm.amdgcn.ds.swizzle(i32, i32)",
        "declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32, i32, i32, i1)",
        'define amdgpu_kernel void @swizzles(ptr addrspace(1) %x, ptr addrspace(1) %out) '
        '"amdgpu-flat-work-group-size"="64,64" {', *["  " + line for line in body], "  ret void", "}"])
    (tmp_path / "k.ll").write_text(ir)
    asm = subprocess.run([llc, "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942", str(tmp_path / "k.ll"), "-o", "-"],
                         capture_output=True, text=True, check=True).stdout
    for form in ("QUAD_PERM", "SWAP", "REVERSE", "BROADCAST", "BITMASK_PERM"):
        assert f"swizzle({form}," in asm, form
    x = rng.integers(0, 2**31, 64, dtype=np.int64).astype(np.int32)
    out = np.zeros(64 * n, np.int32)
    gpusim.launch(asm, "swizzles", 1, num_warps=1, args=[x, out])
    lane = np.arange(64)
    for i, off in enumerate(SWIZZLES):
        np.testing.assert_array_equal(out[64 * i:64 * (i + 1)], x[_swizzle_source(off, lane)], err_msg=hex(off))
    for j, ctrl in enumerate(DPP_QUAD_PERMS):
        src = (lane & ~3) | ((ctrl >> (2 * (lane & 3))) & 3)
        np.testing.assert_array_equal(out[64 * (len(SWIZZLES) + j):64 * (len(SWIZZLES) + j + 1)], x[src],
                                      err_msg=f"quad_perm {ctrl:#x}")


# Device printing and assertions: OCKL's hostcall printf (the kernel's hidden_hostcall_buffer, packets served at its
# s_sendmsg interrupt) and the assertion report Triton prints before s_trap. The lines are C's printf of Triton's
# format strings, computed here in Python.

PRINT_SIG = {"x_ptr": "*i32", "y_ptr": "*i16", "BLOCK": "constexpr"}


def _print_lines(pid, x, y):
    """The lines triton_ptx_kernels.print_kernel prints for one program (x, y: its 128 elements)."""
    head = [f"pid ({pid}, 0, 0) idx ({i:3d})" for i in range(128)]
    return ([f"{h} x: {v}" for h, v in zip(head, x)]
            + [f"{h} xy: (operand 0) 0x{int(v) & 0xFFFFFFFF:08x}" for h, v in zip(head, x)]
            + [f"{h} xy: (operand 1) 0x{int(v) & 0xFFFF:04x}" for h, v in zip(head, y)]
            + [f"{h} fp: {float(v) * 0.25:f}" for h, v in zip(head, y)])


@pytest.mark.parametrize("chip", ["gfx90a", "gfx942", "gfx950"])
def test_device_print(capfd, chip):
    """Triton's tl.device_print through the hostcall: every element's lines, each program's before the next one's
    (workgroups in grid order), nothing else; 128 elements on two waves of 64 lanes (no copies)."""
    code = amdgcn("print_kernel", PRINT_SIG, {"BLOCK": 128}, chip=chip, num_warps=2)
    x = np.arange(256, dtype=np.int32) * 7 - 900
    y = np.arange(256, dtype=np.int16) * 3
    gpusim.launch(code["amdgcn"], code["name"], 2, num_warps=code["num_warps"], shared_bytes=code["shared"],
                  args=[x, y] + SCRATCH)
    lines = capfd.readouterr().out.splitlines()
    assert len(lines) == 1024
    for pid in range(2):
        assert sorted(lines[512 * pid:512 * (pid + 1)]) == sorted(_print_lines(pid, x[128 * pid:][:128],
                                                                                 y[128 * pid:][:128]))


def test_device_print_lines_of_eight_arguments_and_long_formats(capfd):
    """A 4-D block printed with a long prefix: eight arguments a line (two append_args packets) and a format string
    sent in several packets, from four waves of two workgroups."""
    prefix = "a prefix long enough that the format string takes several hostcall packets of 56 bytes"
    code = amdgcn("print_4d_kernel", {"x_ptr": "*i32", "PREFIX": "constexpr"}, {"PREFIX": prefix}, num_warps=2)
    x = np.arange(256, dtype=np.int32) * -13 + 5
    gpusim.launch(code["amdgcn"], code["name"], 2, num_warps=code["num_warps"], shared_bytes=code["shared"],
                  args=[x] + SCRATCH)
    lines = capfd.readouterr().out.splitlines()
    expected = [f"pid ({p}, 0, 0) idx ({a}, {b}, {c}, {d:2d}) {prefix}: {x[p * 128 + a * 64 + b * 32 + c * 16 + d]}"
                for p in range(2) for a in range(2) for b in range(2) for c in range(2) for d in range(16)]
    assert sorted(lines) == sorted(expected)
    assert all(line.startswith("pid (0,") for line in lines[:128])


def test_device_assert(capfd):
    """Triton's tl.device_assert: a holding assertion lets the kernel finish; a failing one fails the launch with
    the PTX path's words for CUDA's __assertfail (file, line, function, lowest failing block and thread), and its
    report is not part of the output."""
    sig = {"x_ptr": "*i32", "n": "i32", "BLOCK": "constexpr"}
    code = amdgcn("assert_kernel", sig, {"BLOCK": 128}, num_warps=2, debug=True)
    x = np.arange(256, dtype=np.int32)
    gpusim.launch(code["amdgcn"], code["name"], 2, num_warps=code["num_warps"], shared_bytes=code["shared"],
                  args=[x, 1000] + SCRATCH)
    np.testing.assert_array_equal(x, np.arange(256) + 1)
    with pytest.raises(gpusim.SimulatorError, match=r"triton_ptx_kernels.py:\d+: unknown: block: \[1,0,0\], "
                                                    r"thread: \[4,0,0\] Assertion `x below n` failed") as info:
        gpusim.launch(code["amdgcn"], code["name"], 2, num_warps=code["num_warps"], shared_bytes=code["shared"],
                      args=[np.arange(256, dtype=np.int32), 132] + SCRATCH)
    assert "s_trap 2" in str(info.value)
    assert capfd.readouterr().out == ""


def test_device_assert_message_of_whole_words(tmp_path, monkeypatch):
    # Triton's assertion message names the kernel's file, and Triton sends it without its NUL: where its length is a
    # multiple of 8, no padding puts one in, and the string ends with the message (as ROCclr reads it). (Triton's
    # cache would hand back the code of the same source at its usual path: a cache of its own.)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton-cache"))
    line = next(i for i, text in enumerate(KERNELS.read_text().splitlines(), 1) if "x below n" in text)
    for pad in range(8):
        kernels = tmp_path / ("d" * (pad + 1)) / KERNELS.name
        message = f"device assertion failed: 'x below n', in unknown at {kernels}:{line}\n"
        if len(message) % 8 == 0:
            break
    kernels.parent.mkdir()
    kernels.write_text(KERNELS.read_text())
    code = amdgcn("assert_kernel", {"x_ptr": "*i32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 128}, num_warps=2,
                  debug=True, kernels=kernels)
    assert f'{kernels}:{line}' in code["amdgcn"]
    with pytest.raises(gpusim.SimulatorError, match=r"triton_ptx_kernels.py:\d+: unknown: block: \[1,0,0\], "
                                                    r"thread: \[4,0,0\] Assertion `x below n` failed"):
        gpusim.launch(code["amdgcn"], code["name"], 2, num_warps=code["num_warps"], shared_bytes=code["shared"],
                      args=[np.arange(256, dtype=np.int32), 132] + SCRATCH)


# LDS bank conflicts as the simulator counts them: 32 banks of 4 bytes serve 128 bytes a cycle (32 lanes of a
# 4-byte access, 16 of an 8-byte one, in lane order, each half of the wave apart); a cycle per distinct dword of
# the busiest bank, those beyond one per group of lanes counted as conflicts. The reference is that rule in numpy.
def _bank_cycles(addrs, size):
    per = 32 if size <= 4 else 128 // size
    cycles = groups = 0
    for first in range(0, 64, per):
        words = {}
        for a in addrs[first:first + per]:
            for w in range(a // 4, (a + size - 1) // 4 + 1):
                words.setdefault(w % 32, set()).add(w)
        cycles += max(len(v) for v in words.values())
        groups += 1
    return cycles, cycles - groups


@pytest.mark.parametrize("stride,size", [(4, 4), (128, 4), (132, 4), (8, 8), (256, 8), (0, 4), (16, 16), (48, 16)])
def test_lds_bank_conflicts(tmp_path, stride, size):
    import shutil
    llc = shutil.which("llc-22") or "/usr/lib/llvm-22/bin/llc"
    ty = {4: "i32", 8: "i64", 16: "<4 x i32>"}[size]
    ir = "\n".join([
        'target triple = "amdgcn-amd-amdhsa"',
        "@lds = internal addrspace(3) global [8192 x i32] poison, align 16",
        "declare i32 @llvm.amdgcn.workitem.id.x()",
        'define amdgpu_kernel void @banks(ptr addrspace(1) %out) "amdgpu-flat-work-group-size"="64,64" {',
        "  %id = call i32 @llvm.amdgcn.workitem.id.x()",
        f"  %off = mul i32 %id, {stride}",
        "  %p = getelementptr i8, ptr addrspace(3) @lds, i32 %off",
        f"  %v = load volatile {ty}, ptr addrspace(3) %p, align {size}",
        "  %q = getelementptr i8, ptr addrspace(1) %out, i32 %off",
        f"  store {ty} %v, ptr addrspace(1) %q, align {size}",
        "  ret void", "}"])
    (tmp_path / "k.ll").write_text(ir)
    asm = subprocess.run([llc, "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942", str(tmp_path / "k.ll"), "-o", "-"],
                         capture_output=True, text=True, check=True).stdout
    assert f"ds_read_b{8 * size}" in asm
    out = np.zeros(64 * max(stride, size) // 4 + 16, np.int32)
    c = gpusim.launch(asm, "banks", 1, num_warps=1, args=[out])
    cycles, conflicts = _bank_cycles([lane * stride for lane in range(64)], size)
    assert c["shared_load_wavefronts"] == cycles
    assert c["shared_load_bank_conflicts"] == conflicts
