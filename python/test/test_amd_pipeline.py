"""Software pipelining of MFMA dot operands through LDS (tilegpu-pipeline with register copies, the AMD targets'
num_stages): each iteration of a K loop loads the blocks of iteration i + num_stages - 1 into registers, its dot
reads its own slot in place, and the loaded blocks are stored into their slot after the dot. Every chip, simulated,
against numpy: ragged K (masks), loops of no iteration, every operand order, dtypes and stage counts."""
import re

import numpy as np
import pytest

import tessel
import tessel.language as tl
from tessel import knobs


@pytest.fixture(params=["sim:gfx90a", "sim:gfx942", "sim:gfx950"])
def target(request, monkeypatch):
    """Overrides the suite's per-target fixture: each AMD chip, simulated."""
    monkeypatch.setattr(knobs, "target", request.param)
    return request.param


@tessel.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, OUT_INT: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32 if OUT_INT else c_ptr.dtype.element_ty)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0)
        if OUT_INT:
            acc += tl.dot(a, b, out_dtype=tl.int32)
        else:
            acc += tl.dot(a, b, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def run(rng, dtype, m, n, k, stages, a_order="C", b_order="C", blocks=(64, 64, 32), warps=4):
    bm, bn, bk = blocks
    if dtype == np.int8:
        a = rng.integers(-128, 128, (m, k)).astype(np.int8)
        b = rng.integers(-128, 128, (k, n)).astype(np.int8)
        c = np.full((m, n), -1, np.int32)
    else:
        a = rng.standard_normal((m, k)).astype(dtype)
        b = rng.standard_normal((k, n)).astype(dtype)
        c = np.full((m, n), np.nan, np.float64 if dtype == np.float64 else np.float32)
    a, b = np.asarray(a, order=a_order), np.asarray(b, order=b_order)
    s = a.itemsize
    kernel = matmul[(-(-m // bm), -(-n // bn))](
        a, b, c, m, n, k, a.strides[0] // s, a.strides[1] // s, b.strides[0] // s, b.strides[1] // s, n,
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, OUT_INT=dtype == np.int8, num_warps=warps,
        **({} if stages is None else {"num_stages": stages}))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    if dtype == np.int8:
        np.testing.assert_array_equal(c, ref.astype(np.int64))
    else:
        tol = {np.float32: 1e-5, np.float64: 1e-12}.get(dtype, 2e-3)
        np.testing.assert_allclose(c, ref, rtol=tol, atol=tol * max(1.0, np.abs(ref).max()))
    return kernel


def loop_of(ttgir: str) -> str:
    """The text of the K loop (the first scf.for with a tile.dot)."""
    start = ttgir.index("scf.for")
    depth, i = 0, ttgir.index("{", start)
    for j in range(i, len(ttgir)):
        depth += {"{": 1, "}": -1}.get(ttgir[j], 0)
        if depth == 0:
            return ttgir[start:j]
    raise AssertionError("unterminated loop")


@pytest.mark.parametrize("stages", [1, 2, 3, 4])
def test_stages_fill_slots_through_registers(rng, target, stages):
    kernel = run(rng, np.float16, 128, 96, 200, stages)
    ttgir = kernel.asm["ttgir"]
    if stages == 1:
        assert "tilegpu.local_store" not in ttgir
        return
    # Slots of A (64 x 32, rows along K) and B (32 x 64, rows along N) in the padded rows the dot stages its
    # operands in (16 bytes after each 128 bytes of rows: both operands in slots, the dot reads K 16 bytes at a
    # time); the prologue fills stages - 1 of them, each iteration loads one block ahead and stores it after its
    # dot. 2 stages: 2 slots, a barrier opens the iteration. 3 and more: the registers hold one iteration, stages - 1
    # slots, each iteration refilling the slot it read after a barrier that follows its dot.
    slots = 2 if stages == 2 else stages - 1
    assert f"!tilegpu.shared<{slots}x64x32xf16, padded, pad = 16>" in ttgir
    # (gfx950 pads B's rows along N by 32 bytes, which its transposed reads take 4 at a time, 32 bytes of each.)
    b_pad = 32 if target == "sim:gfx950" else 16
    assert f"!tilegpu.shared<{slots}x32x64xf16, padded, pad = {b_pad}>" in ttgir
    loop = loop_of(ttgir)
    body = loop[loop.index("{"):]
    assert body.count("tilegpu.barrier") == 1
    if stages == 2:
        assert body.index("tilegpu.barrier") < body.index("tile.load") < body.index("tile.dot")
    else:
        assert body.index("tile.load") < body.index("tile.dot") < body.index("tilegpu.barrier")
    assert body.index("tile.dot") < body.index("tilegpu.local_store")
    assert body.index("tilegpu.barrier") < body.index("tilegpu.local_store")
    assert body.count("tilegpu.local_load") == 2 and body.count("tilegpu.local_store") == 2
    assert "async" not in ttgir
    assert ttgir[:ttgir.index("scf.for")].count("tilegpu.local_store") == 2 * (stages - 1)
    # The dot reads both slots in place: no LDS staging of its own.
    launch = dict(line.split("=") for line in kernel.asm["launch"].split())
    assert int(launch["shared"]) >= slots * (64 * 32 * 2 + 32 * 64 * 2)


@pytest.mark.parametrize("k", [0, 7, 32, 33, 95, 256])
def test_ragged_and_empty_loops(rng, target, k):
    run(rng, np.float16, 70, 64, k, 2)


@pytest.mark.parametrize("a_order,b_order", [("C", "C"), ("F", "C"), ("C", "F"), ("F", "F")])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int8, np.float64])
def test_every_operand_order(rng, target, dtype, a_order, b_order):
    # Column-major A fills a slot of A transposed (rows along M), K-contiguous B one of B transposed (rows along K).
    # fp64 (v_mfma_f64_16x16x4_f64) in smaller blocks: two stages of 64 x 32 blocks of both would not fit 64 KiB.
    blocks = (32, 32, 32) if dtype == np.float64 else (64, 64, 32)
    kernel = run(rng, dtype, 96, 80, 160, 2, a_order, b_order, blocks=blocks)
    assert "tilegpu.local_store" in loop_of(kernel.asm["ttgir"])


def test_bfloat16(rng, target):
    import torch
    m, n, k = 64, 128, 96
    a = torch.randn(m, k).to(torch.bfloat16)
    b = torch.randn(k, n).to(torch.bfloat16)
    c = torch.full((m, n), float("nan"))
    matmul[(1, 2)](a, b, c, m, n, k, k, 1, n, 1, n, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, OUT_INT=False,
                   num_stages=3)
    ref = a.double().numpy() @ b.double().numpy()
    np.testing.assert_allclose(c.numpy(), ref, rtol=1e-2, atol=1e-2 * np.abs(ref).max())


@pytest.mark.parametrize("blocks,warps", [((32, 32, 16), 1), ((16, 64, 64), 4), ((128, 128, 64), 8)])
def test_block_shapes(rng, target, blocks, warps):
    run(rng, np.float16, 150, 130, 200, 2, blocks=blocks, warps=warps)


def test_loads_overlap_the_matrix_instructions(target, monkeypatch):
    """In the loop, the next blocks' global loads are issued before the MFMAs of the iteration and waited for
    (s_waitcnt vmcnt) only after some of them; without pipelining every wait comes before the loop's first MFMA.
    (The code the hip target compiles, which the simulator runs.)"""
    monkeypatch.setattr(knobs, "target", target.replace("sim:", "hip:"))

    def loop_asm(stages):
        kernel = matmul.warmup(np.dtype(np.float16), np.dtype(np.float16), np.dtype(np.float32), 256, 256, 256, 256, 1, 256, 1, 256, BLOCK_M=64,
                               BLOCK_N=64, BLOCK_K=32, OUT_INT=False, num_stages=stages, grid=(4, 4))
        asm = kernel.asm["amdgcn"]
        # The loop: from the label its backward branch goes to, to that branch.
        for branch in re.finditer(r"s_cbranch_\w+ (\.LBB\d+_\d+)|s_branch (\.LBB\d+_\d+)", asm):
            label = branch.group(1) or branch.group(2)
            at = asm.find(label + ":")
            if 0 <= at < branch.start() and "v_mfma" in asm[at:branch.start()]:
                return asm[at:branch.start()]
        raise AssertionError("no loop with MFMAs")

    pipelined = loop_asm(2)
    first_wait = pipelined.index("s_waitcnt vmcnt")
    assert pipelined.index("v_mfma") < first_wait
    plain = loop_asm(1)
    assert plain.index("s_waitcnt vmcnt") < plain.index("v_mfma")


def test_default_is_two_stages(rng, target):
    """Triton's HIP backend pipelines two stages where a kernel does not say (its NVIDIA backend three): so do the
    AMD targets, and a kernel that says 3 is another kernel."""
    default = run(rng, np.float16, 64, 64, 96, None)
    assert default.metadata.num_stages == 2
    assert "!tilegpu.shared<2x64x32xf16, padded" in default.asm["ttgir"]
    three = run(rng, np.float16, 64, 64, 96, 3)
    assert three.metadata.num_stages == 3 and three.hash != default.hash
    # Both in 2 slots: 3 stages refill the slot read (iterations 0 and 1 stored before the loop), 2 the other one.
    assert "!tilegpu.shared<2x64x32xf16, padded" in three.asm["ttgir"]
    prologue = lambda kernel: kernel.asm["ttgir"][:kernel.asm["ttgir"].index("scf.for")]  # noqa: E731
    assert prologue(default).count("tilegpu.local_store") == 2 and prologue(three).count("tilegpu.local_store") == 4


def test_nvidia_default_is_three_stages(monkeypatch):
    monkeypatch.setattr(knobs, "target", "sim:sm_80")
    f16 = np.dtype(np.float16)
    kernel = matmul.warmup(f16, f16, np.dtype(np.float32), 64, 64, 96, 96, 1, 64, 1, 64, BLOCK_M=64, BLOCK_N=64,
                           BLOCK_K=32, OUT_INT=False, grid=(1, 1))
    assert kernel.metadata.num_stages == 3


def test_slots_share_bytes_with_the_epilogue(rng, target):
    # fp64 64 x 64 blocks, K by 16: 2 slots of A and B take 34 KB and the epilogue's conversion of the fp64 sums
    # 32 KB; the allocator lets the conversion reuse the slots' bytes once the loop is done, so both fit 64 KiB and
    # the loop is pipelined.
    kernel = run(rng, np.float64, 128, 64, 160, 3, blocks=(64, 64, 16))
    assert "tilegpu.local_store" in loop_of(kernel.asm["ttgir"])
    launch = dict(line.split("=") for line in kernel.asm["launch"].split())
    assert int(launch["shared"]) <= 65536


@pytest.mark.parametrize("dtype,read,mfma", [(np.float16, "ds_read_b64_tr_b16", "v_mfma_f32_32x32x16_f16"),
                                             (np.int8, "ds_read_b64_tr_b8", "v_mfma_i32_32x32x32_i8")])
def test_gfx950_transposed_reads_and_double_k(rng, target, dtype, read, mfma):
    # gfx950 reads B's slot (rows along N: a row-major K x N block) with its transposed LDS reads, each lane getting
    # its column's run of K from 16 lanes' reads, and multiplies on its double-K MFMAs (16-bit: 8 of K a lane; int8:
    # 16); the other chips read B an element at a time, 4 (or 8) of K a lane.
    kernel = run(rng, dtype, 128, 96, 192, 3)
    code = kernel.asm["amdgcn"]
    if target == "sim:gfx950":
        assert read in code and mfma in code
    else:
        assert "_tr_b" not in code and mfma not in code
