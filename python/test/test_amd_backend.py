"""The AMD backend (hip:gfx90a, hip:gfx942, hip:gfx950), compiled only: there is no AMD GPU here and no AMDGCN
simulator yet (test_hip_launcher.py tests the launcher against a fake HIP runtime), so these tests check what a
compile must give, against references independent of Tessel: the ELF and
AMDGPU code object formats (LLVM's ELF.h: EM_AMDGPU, EF_AMDGPU_MACH_*), the HSA metadata the AMDGPU backend writes,
and OpenAI Triton's compile of the same kernels for the same chip. test_gpu_backend.py runs these kernels on the
simulated NVIDIA GPUs against numpy."""
import pathlib
import re
import struct
import sys

import numpy as np
import pytest

import tessel
import tessel.language as tl
from tessel import _C, knobs

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from bench import gpu_static_kernels as kernels  # noqa: E402
from test_gpu_resources import KERNELS  # noqa: E402

F32, F16 = np.dtype(np.float32), np.dtype(np.float16)
# EF_AMDGPU_MACH_AMDGCN_* of LLVM's ELF.h: the chip a code object is for (the low byte of e_flags).
MACH = {"gfx90a": 0x3F, "gfx942": 0x4C, "gfx950": 0x4F}
EM_AMDGPU, ET_DYN = 224, 3

# The static bench's kernels (bench/gpu_static_kernels.py), warmed up as test_gpu_resources.py warms them.
BENCH = KERNELS


@pytest.fixture(params=["hip:gfx90a", "hip:gfx942", "hip:gfx950"])
def target(request, monkeypatch):
    """Overrides the suite's per-target fixture: compiled for each AMD chip, whatever the suite's targets."""
    monkeypatch.setattr(knobs, "target", request.param)
    return request.param


def elf_header(blob: bytes) -> tuple[int, int, int]:
    """(e_type, e_machine, e_flags) of a 64-bit little-endian ELF file."""
    assert blob[:4] == b"\x7fELF" and blob[4] == 2 and blob[5] == 1, "not a 64-bit little-endian ELF file"
    e_type, e_machine = struct.unpack_from("<HH", blob, 16)
    (e_flags,) = struct.unpack_from("<I", blob, 48)
    return e_type, e_machine, e_flags


def metadata(amdgcn: str, field: str) -> str:
    found = re.search(rf"\s\.{field}:\s+(\S+)", amdgcn)
    assert found, f"no .{field} in the kernel's metadata"
    return found.group(1)


@pytest.mark.parametrize("name", BENCH)
def test_bench_kernels_are_code_objects_for_the_chip(target, name):
    kernel = BENCH[name]()
    chip = target.split(":")[1]
    e_type, e_machine, e_flags = elf_header(kernel.object)
    assert (e_type, e_machine, e_flags & 0xFF) == (ET_DYN, EM_AMDGPU, MACH[chip])
    amdgcn = kernel.asm["amdgcn"]
    assert f"amdgcn-amd-amdhsa--{chip}" in amdgcn
    assert metadata(amdgcn, "wavefront_size") == "64"
    assert metadata(amdgcn, "name") == kernel.name
    # 4 waves of 64 work-items, as the launch would ask; no spills to scratch.
    assert metadata(amdgcn, "max_flat_workgroup_size") == "256"
    assert metadata(amdgcn, "private_segment_fixed_size") == "0"
    launch = dict(line.split("=") for line in kernel.asm["launch"].split())
    assert launch["warp_size"] == "64" and launch["scratch"] == "0"
    assert 0 < int(launch["vgprs"]) <= 512 and int(launch["vgprs"]) == int(metadata(amdgcn, "vgpr_count"))
    assert kernel.metadata.target.backend == "hip" and kernel.metadata.target.warp_size == 64


@tessel.jit
def math_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.sin(x) + tl.exp(x) * tl.log(x) + tl.sqrt(x) + tl.math.erf(x) + tl.extra.cuda.libdevice.tanh(x)
    tl.store(y_ptr + offs, y, mask=mask)
    tl.store(z_ptr + offs, tl.cumsum(x.to(tl.float64), 0) + tl.extra.cuda.libdevice.atan2(x, y).to(tl.float64),
             mask=mask)


def test_math_comes_from_ocml_and_links_whole(target):
    kernel = math_kernel.warmup(F32, F32, np.dtype(np.float64), 1000, BLOCK=256, grid=(4,))
    ir = kernel.asm["llvmir"]
    # OCML's functions are linked in: the kernel calls nothing left undefined (LLD links with --no-undefined).
    assert "__ocml_" in kernel.asm["llir"]
    assert not re.search(r"^declare .*@__(ocml|ockl|nv)_", ir, re.M)
    assert elf_header(kernel.object)[1] == EM_AMDGPU


@tessel.jit
def atomics_kernel(p, q, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    old = tl.atomic_add(p + offs, offs, mask=mask, sem="acq_rel", scope="gpu")
    tl.atomic_max(q + offs % 7, old.to(tl.float32), mask=mask)
    tl.atomic_cas(p, 0, 1)
    tl.atomic_add(out + offs, tl.full([BLOCK], 1.5, tl.float16), mask=mask)
    tl.store(out + offs, old.to(tl.float16), mask=mask)


def test_atomics(target):
    kernel = atomics_kernel.warmup(np.dtype(np.int32), F32, F16, 100, BLOCK=128, grid=(1,))
    amdgcn = kernel.asm["amdgcn"]
    assert re.search(r"global_atomic_add(_u32)?\b.* sc0|global_atomic_add", amdgcn)
    assert "global_atomic_cmpswap" in amdgcn


@tessel.jit
def debug_kernel(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_print("x", x)
    tl.device_assert(x >= 0, "negative")


def test_print_and_assert_use_the_hostcall_buffer(target):
    kernel = debug_kernel.warmup(F32, BLOCK=64, grid=(1,), debug=True)
    amdgcn = kernel.asm["amdgcn"]
    assert "hidden_hostcall_buffer" in amdgcn
    assert "s_trap" in amdgcn


@tessel.jit
def sort_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, tl.sort(x) + tl.cumsum(x, 0) + tl.max(x, 0))


@pytest.mark.parametrize("num_warps", [1, 2, 4, 8, 16])
def test_reductions_scans_and_sorts_across_waves(target, num_warps):
    kernel = sort_kernel.warmup(F32, F32, BLOCK=1024, grid=(1,), num_warps=num_warps)
    amdgcn = kernel.asm["amdgcn"]
    assert metadata(amdgcn, "max_flat_workgroup_size") == str(64 * num_warps)
    assert "ds_bpermute_b32" in amdgcn


def test_num_warps_beyond_a_workgroup_is_an_error(target):
    with pytest.raises(Exception, match=r"num_warps must be a power of two from 1 to 16 .* \(64 threads per wave\)"):
        sort_kernel.warmup(F32, F32, BLOCK=1024, grid=(1,), num_warps=32)


def test_unknown_chip_is_an_error(monkeypatch):
    monkeypatch.setattr(knobs, "target", "hip:gfx1100")
    with pytest.raises(_C.BackendError, match="'hip:gfx1100' is not a GPU Tessel compiles for: use hip:gfx90a, "
                                              "hip:gfx942 or hip:gfx950"):
        sort_kernel.warmup(F32, F32, BLOCK=64, grid=(1,))


def test_target_info_answers_for_the_chip(target):
    @tessel.jit
    def which(out):
        tl.store(out, 1 if tl.target_info.is_hip() else 0)
        tl.store(out + 1, 1 if tl.target_info.is_hip_cdna3() else 0)

    kernel = which.warmup(np.dtype(np.int32), grid=(1,))
    ttir = kernel.asm["ttir"]
    stored = [int(v) for v in re.findall(r"arith.constant (\d+) : i32", ttir)]
    assert 1 in stored
    assert (0 not in stored) == (target == "hip:gfx942")


@tessel.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m, n, k = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    tl.store(c_ptr + m[:, None] * N + n[None, :], tl.dot(a, b))


@pytest.mark.parametrize("dtype, instruction", [(F16, "v_mfma_f32_32x32x8f16"),
                                                ("bf16", "v_mfma_f32_32x32x8bf16_1k")])
@pytest.mark.parametrize("num_warps", [1, 4, 8])
def test_half_dots_run_on_matrix_cores(target, dtype, instruction, num_warps):
    import torch
    t = torch.bfloat16 if dtype == "bf16" else torch.float16
    a, b, c = torch.zeros(64, 32, dtype=t), torch.zeros(32, 128, dtype=t), torch.zeros(64, 128)
    kernel = dot_kernel.warmup(a, b, c, M=64, N=128, K=32, grid=(1,), num_warps=num_warps)
    # (gfx942 spells them v_mfma_f32_32x32x8_f16, v_mfma_f32_32x32x8_bf16; gfx90a as the ISA names them.) gfx950
    # takes its double-K forms, v_mfma_f32_32x32x16_{f16,bf16}.
    mfmas = [m.replace("_", "") for m in re.findall(r"\bv_mfma_\w+", kernel.asm["amdgcn"])]
    # 64x128 is 8 tiles of 32x32 shared by the waves; 4 K steps of 8 each (gfx950: 2 of 16).
    if target == "hip:gfx950":
        assert set(mfmas) == {"vmfmaf3232x32x16" + ("bf16" if dtype == "bf16" else "f16")}
        assert len(mfmas) == 8 * 2 // min(num_warps, 8)
    else:
        assert set(mfmas) <= {instruction.replace("_", ""), instruction.replace("_", "")[:-2]} and mfmas
        assert len(mfmas) == 8 * 4 // min(num_warps, 8)
    # Both operands staged: each half of the lanes reads its 16 of K in two 16-byte loads.
    assert "ds_read_b128" in kernel.asm["amdgcn"]


@pytest.mark.parametrize("shape", [(16, 16, 16), (32, 16, 16), (16, 64, 32)])
def test_sixteen_row_dots_take_the_16x16_instructions(target, shape):
    M, N, K = shape
    kernel = dot_kernel.warmup(F16, F16, F32, M=M, N=N, K=K, grid=(1,))
    mfmas = {m.replace("_", "") for m in re.findall(r"\bv_mfma_\w+", kernel.asm["amdgcn"])}
    # gfx950's double-K 16x16x32 where K is a multiple of 32.
    assert mfmas == {"vmfmaf3216x16x32f16" if target == "hip:gfx950" and K % 32 == 0 else "vmfmaf3216x16x16f16"}


def test_fp64_dots_take_the_fp64_instruction(target):
    f64 = np.dtype(np.float64)
    kernel = dot_kernel.warmup(f64, f64, f64, M=64, N=64, K=32, grid=(1,))
    mfmas = {m.replace("_", "") for m in re.findall(r"\bv_mfma_\w+", kernel.asm["amdgcn"])}
    assert mfmas == {"vmfmaf6416x16x4f64"}


def test_dots_matrix_cores_cannot_take_are_fma_loops(target):
    # int8 in 16x16 blocks with K = 16: gfx90a's v_mfma_i32_16x16x16i8 takes it; CDNA3's int8 MFMAs take K 32 at a
    # time (16x16x32_i8), so there it is an FMA loop.
    i8 = np.dtype(np.int8)
    kernel = dot_kernel.warmup(i8, i8, np.dtype(np.int32), M=16, N=16, K=16, grid=(1,))
    mfmas = {m.replace("_", "") for m in re.findall(r"\bv_mfma_\w+", kernel.asm["amdgcn"])}
    assert mfmas == ({"vmfmai3216x16x16i8"} if target == "hip:gfx90a" else set())


@tessel.jit
def asm_kernel(x_ptr, y_ptr, ASM: tl.constexpr, CONSTRAINTS: tl.constexpr):
    offs = tl.arange(0, 64)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, tl.inline_asm_elementwise(ASM, CONSTRAINTS, [x], dtype=tl.uint32, is_pure=True, pack=1))


def test_inline_assembly_is_amdgcn(target):
    u32 = np.dtype(np.uint32)
    kernel = asm_kernel.warmup(u32, u32, ASM="v_alignbit_b32 $0, $1, $1, 29", CONSTRAINTS="=v,v", grid=(1,))
    assert "v_alignbit_b32" in kernel.asm["amdgcn"]
    # PTX, or operands the instruction cannot take, are compile errors (LLVM's default would end the process).
    with pytest.raises(_C.BackendError, match=r"AMDGPU backend cannot compile this kernel .*invalid instruction"):
        asm_kernel.warmup(u32, u32, ASM="shf.l.wrap.b32 $0, $1, $1, 3;", CONSTRAINTS="=v,v", grid=(1,))
    with pytest.raises(_C.BackendError, match=r"AMDGPU backend cannot compile this kernel .*invalid operand"):
        asm_kernel.warmup(u32, u32, ASM="v_mov_b32 $0, $1", CONSTRAINTS="=s,v", grid=(1,))


@tessel.jit
def libdevice_kernel(x_ptr, y_ptr, FN: tl.constexpr):
    offs = tl.arange(0, 64)
    tl.store(y_ptr + offs, FN(tl.load(x_ptr + offs)))


def _libdevice(symbol, arg, result):
    """A function written as Triton's libdevice writes them (tl.core.extern over tl.extern_elementwise)."""
    @tl.core.extern
    def fn(x, _semantic=None):
        return tl.core.extern_elementwise("", "", [x], {(arg,): (symbol, result)}, is_pure=True, _semantic=_semantic)
    return fn


@pytest.mark.parametrize("symbol, dtype, out", [
    ("__nv_popc", np.int32, np.int32), ("__nv_brev", np.int32, np.int32), ("__nv_clz", np.int32, np.int32),
    ("__nv_ffs", np.int32, np.int32), ("__nv_float2int_rd", np.float32, np.int32),
    ("__nv_isnanf", np.float32, np.int32), ("__nv_tanhf", np.float32, np.float32),
    ("__nv_erfcinv", np.float64, np.float64), ("__nv_cbrt", np.float64, np.float64)])
def test_libdevice_functions_compile(target, symbol, dtype, out):
    # OCML has tanh, erfcinv and cbrt; the bit functions, float2int_rd and isnan it lacks are computed as the CPU
    # computes them. Nothing is left to link.
    tl_type = {np.int32: tl.int32, np.float32: tl.float32, np.float64: tl.float64}
    fn = _libdevice(symbol, tl_type[dtype], tl_type[out])
    kernel = libdevice_kernel.warmup(np.dtype(dtype), np.dtype(out), FN=fn, grid=(1,))
    assert not re.search(r"^declare .*@__(ocml|nv)_", kernel.asm["llvmir"], re.M)
    assert elf_header(kernel.object)[1] == EM_AMDGPU


@tessel.jit
def exp_kernel(x_ptr, y_ptr):
    offs = tl.arange(0, 64)
    tl.store(y_ptr + offs, tl.exp(tl.load(x_ptr + offs)))


def test_fp32_exp_is_exp2_of_a_product_as_in_triton(target):
    # Triton's AMD exp: 2^(x * log2(e)) on v_exp_f32 (whose subnormal results LLVM's exp2 keeps), not OCML's exp.
    amdgcn = exp_kernel.warmup(F32, F32, grid=(1,), num_warps=1).asm["amdgcn"]
    assert len(re.findall(r"\bv_exp_f32", amdgcn)) == 1
    assert "0x3fb8aa3b" in amdgcn  # log2(e) as an fp32 literal


def test_an_amd_link_leaves_nvidia_compiles_as_they_were(target, monkeypatch, tmp_path):
    # The hsaco's link (LLD in this process) resets LLVM's command-line options, among them the one that gives the
    # NVPTX backend 32-bit shared-memory addresses. A kernel compiled for an NVIDIA GPU after an AMD one (in a fresh
    # cache) still addresses shared memory through 32-bit registers (%r, not %rd): the PTX ISA's shared window.
    monkeypatch.setattr(knobs, "cache_dir", tmp_path)

    def compile(on, block):
        monkeypatch.setattr(knobs, "target", on)
        return kernels.softmax_kernel.warmup(F32, F32, 1024, 1024, 1024, BLOCK=block, grid=(1,)).asm

    def shared_addresses(block):
        ptx = compile("cuda:80", block)["ptx"]
        return set(re.findall(r"(?:st|ld)\.shared\.[\w.]+\s+(?:\{[^}]*\},\s*)?\[(%\w+?)\d+", ptx))

    assert shared_addresses(512) == {"%r"}
    assert "amdgcn" in compile(target, 1024)
    assert shared_addresses(1024) == {"%r"}
