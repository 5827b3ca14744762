"""Tessel's NVIDIA backend against OpenAI Triton 3.6, statically (no GPU needed): the same kernel sources
(bench/gpu_static_kernels.py) compiled by both for sm_80 and sm_90a (the fp8 matmul, which needs sm_89 or newer, for
sm_89 and sm_90a), side by side.

For every kernel, architecture and compiler a row gives:
  compile s     cold compile (a fresh, empty cache; the process already warm: each compiler has compiled a
                throwaway kernel for that architecture first), source to cubin through ptxas
  regs, spill   from the `ptxas -v` log (registers per thread; spill stores/loads in bytes)
  smem          shared memory per CTA in bytes (the launch's dynamic bytes plus ptxas' static .shared)
  SASS          `cuobjdump -sass` of the cubin: instructions (NOPs left out), tensor-core MMAs (mma.sync: HMMA
                fp16/bf16/tf32, IMMA int8, QMMA fp8; warpgroup: HGMMA, IGMMA, QGMMA), async
                copies LDGSTS (cp.async) and UTMALDG (TMA), 16-byte vector loads LDG.E.128
  simulator     the PTX run by tessel.gpusim on the same random inputs: 32-byte sectors per global load and store
                request (4 for 32 lanes x 4 contiguous bytes, 16 for 16-byte vector loads), load efficiency
                (bytes the lanes asked for / bytes of the sectors moved), shared-memory wavefronts per request
                (conflict-free is one per 128 bytes a request moves: 1 for 32 lanes x 4 bytes, 4 for ldmatrix.x4
                or 16-byte accesses), bank conflicts per request (the wavefronts beyond one per phase, as
                Nsight Compute counts them: 0 when conflict free), warp instructions executed
  numpy         each compiler's result checked against numpy; a wrong result marks the row and fails the run

Where Tessel cannot compile a kernel, its row gives Tessel's reason instead of numbers.
Both compilers get the same specialization: pointers 16-byte aligned and ints that are multiples of 16 are marked
divisible by 16, as both launchers do.

Triton compiles in a child process (`python -m bench.gpu_static --triton-child REQUEST`): the kernel module binds
`triton` to Triton there (TESSEL_BENCH_FRONTEND=triton), and Triton's compiler must not share a process with its
interpreter (TRITON_INTERPRET, which the test suite uses).

    python -m bench.gpu_static [--quick] [--same-ptxas] [--only vector_add softmax ...]
"""
from __future__ import annotations

import argparse
import base64
import contextlib
import dataclasses
import io
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .common import RESULTS_DIR

NAME = "gpu_static"
# (label, Triton capability, Tessel target)
ARCHS = [("sm_80", 80, "cuda:80"), ("sm_89", 89, "cuda:89"), ("sm_90a", 90, "cuda:90a")]
COMPILERS = ["triton", "tessel"]
PTXAS = "/usr/local/cuda/bin/ptxas"


# ---------------------------------------------------------------------------------------------------------------
# bf16 as numpy has none: uint16 arrays of the bits (the simulator only moves them).

def to_bf16_bits(x: np.ndarray) -> np.ndarray:
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)  # round to nearest even


def from_bf16_bits(b: np.ndarray) -> np.ndarray:
    return (b.astype(np.uint32) << 16).view(np.float32)


# e4m3 as uint8 arrays of the codes: sign, 4 exponent bits, 3 mantissa bits; exponent 0 is subnormal, no
# infinities. tl.float8e4nv (OCP e4m3fn): bias 7, S.1111.111 NaN. tl.float8e4b8 (AMD CDNA3's e4m3fnuz): bias 8,
# 0x80 the NaN, no negative zero.

def from_fp8e4_bits(b: np.ndarray, fnuz: bool = False) -> np.ndarray:
    b = b.astype(np.int64)
    bias = 8 if fnuz else 7
    e, m = (b >> 3) & 15, (b & 7).astype(np.float64)
    v = np.where(e == 0, m / 8 * 2.0 ** (1 - bias), (1 + m / 8) * 2.0 ** (e - bias))
    v = np.where(b >> 7, -v, v)
    return np.where(b == 0x80 if fnuz else (e == 15) & (m == 7), np.nan, v)


def random_fp8e4_bits(rng: np.random.Generator, shape: tuple[int, ...], fnuz: bool = False) -> np.ndarray:
    """Codes of finite values of magnitude at most 16 (so that sums stay well inside fp32)."""
    v = from_fp8e4_bits(np.arange(256), fnuz)
    return rng.choice(np.flatnonzero(np.abs(v) <= 16), shape).astype(np.uint8)


# ---------------------------------------------------------------------------------------------------------------
# The problems: one kernel, its launch and its check each.

@dataclasses.dataclass
class Case:
    key: str                   # the --only name
    label: str                 # the table's name
    kernel: str                # the function of gpu_static_kernels.py
    signature: dict[str, str]  # every parameter in order, Triton's spelling; "constexpr" for constexprs
    constexprs: dict[str, Any]
    grid: tuple[int, ...]
    num_warps: int
    num_stages: int
    # rng -> (the runtime arguments in order, check(arguments after the launch) -> None or what is wrong)
    setup: Callable[[np.random.Generator], tuple[list[Any], Callable[[list[Any]], str | None]]]
    size: str
    archs: tuple[str, ...] = ("sm_80", "sm_90a")  # labels of ARCHS
    # (compiler, compiled, the arguments) -> the simulator's arguments, where they are not the arguments as they
    # are: host-made tensor descriptors, which each launcher expands its own way.
    launch_args: Callable[[str, dict, list[Any]], list[Any]] | None = None
    # CTAs per program (a thread block cluster, sm_90+): both launchers start num_ctas times the programs along x.
    num_ctas: int = 1


def _mismatch(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> str | None:
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol)
    if not bad.any():
        return None
    err = np.nanmax(np.abs(got - want)) if np.isfinite(got).all() else float("nan")
    return f"{int(bad.sum())}/{bad.size} elements off (max abs err {err:.3g})"


def _first(*problems: str | None) -> str | None:
    return next((p for p in problems if p), None)


def vector_add_case(quick: bool, n: int | None = None) -> Case:
    n, block = n or (8192 if quick else 1 << 16), 1024

    def setup(rng):
        x, y = rng.standard_normal((2, n)).astype(np.float32)
        out = np.full(n, np.nan, np.float32)
        return [x, y, out, n], lambda a: _mismatch(a[2], x + y, 0, 0)

    return Case("vector_add", "vector add", "add_kernel",
                {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                {"BLOCK": block}, (n // block,), 4, 3, setup, f"n={n} fp32")


def softmax_case(quick: bool, rows: int | None = None) -> Case:
    rows, cols = rows or (16 if quick else 64), 1024

    def setup(rng):
        x = (rng.standard_normal((rows, cols)) * 3).astype(np.float32)
        out = np.full_like(x, np.nan)
        e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
        return [out, x, cols, cols, cols], lambda a: _mismatch(a[0], e / e.sum(axis=1, keepdims=True), 1e-5, 1e-7)

    return Case("softmax", "fused softmax", "softmax_kernel",
                {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_stride": "i32", "out_stride": "i32", "n_cols": "i32",
                 "BLOCK": "constexpr"},
                {"BLOCK": 1024}, (rows,), 4, 3, setup, f"{rows}x{cols} fp32")


def layer_norm_case(quick: bool, rows: int | None = None) -> Case:
    rows, cols = rows or (16 if quick else 64), 1024
    eps = 1e-5

    def setup(rng):
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        w, b = rng.standard_normal((2, cols)).astype(np.float32)
        y = np.full_like(x, np.nan)
        mean, rstd = np.full(rows, np.nan, np.float32), np.full(rows, np.nan, np.float32)
        x64 = x.astype(np.float64)
        mu = x64.mean(axis=1)
        rs = 1 / np.sqrt(x64.var(axis=1) + eps)
        want = (x64 - mu[:, None]) * rs[:, None] * w + b

        def check(a):
            return _first(_mismatch(a[1], want, 1e-4, 1e-4), _mismatch(a[4], mu, 1e-5, 1e-6),
                          _mismatch(a[5], rs, 1e-4, 1e-6))
        return [x, y, w, b, mean, rstd, cols, cols, eps], check

    return Case("layer_norm", "layer norm fwd", "layer_norm_fwd",
                {"X": "*fp32", "Y": "*fp32", "W": "*fp32", "B": "*fp32", "Mean": "*fp32", "Rstd": "*fp32",
                 "stride": "i32", "N": "i32", "eps": "fp32", "BLOCK_SIZE": "constexpr"},
                {"BLOCK_SIZE": 1024}, (rows,), 4, 3, setup, f"{rows}x{cols} fp32")


def matmul_case(dtype: str, quick: bool, n: int | None = None, num_ctas: int = 1) -> Case:
    n = n or (128 if quick else 256)
    # On a cluster, a program of twice the columns: each CTA computes 64 x 64, as one CTA does otherwise.
    bm, bn, bk = 64, 64 * num_ctas, 16 if dtype == "fp64" else 32  # fp64: 2 slots of A and B in 64 KiB of LDS

    def setup(rng):
        a = rng.standard_normal((n, n)).astype(np.float32)
        b = rng.standard_normal((n, n)).astype(np.float32)
        read = lambda c: c  # noqa: E731
        if dtype == "fp16":
            a, b = a.astype(np.float16), b.astype(np.float16)
            c = np.full((n, n), np.nan, np.float16)
            want = a.astype(np.float64) @ b.astype(np.float64)
        elif dtype == "int8":
            # int32 sums of int8 products: exact (at most 256 * 2^14).
            a, b = (rng.integers(-128, 128, (2, n, n))).astype(np.int8)
            c = np.full((n, n), -1, np.int32)
            want = a.astype(np.int64) @ b.astype(np.int64)
        elif dtype in ("fp8", "fp8e4b8"):
            # e4m3 inputs (fp8: OCP, NVIDIA's; fp8e4b8: fnuz, AMD's 8-bit MFMA), fp32 accumulation: every product is
            # exact in fp32, the sums round.
            fnuz = dtype == "fp8e4b8"
            a, b = random_fp8e4_bits(rng, (n, n), fnuz), random_fp8e4_bits(rng, (n, n), fnuz)
            c = np.full((n, n), np.nan, np.float32)
            want = from_fp8e4_bits(a, fnuz) @ from_fp8e4_bits(b, fnuz)
        elif dtype == "fp64":
            c = np.full((n, n), np.nan, np.float64)
            a, b = a.astype(np.float64), b.astype(np.float64)
            want = a @ b
        elif dtype == "fp32":
            # tl.dot's default on NVIDIA: the inputs multiplied as tf32 (10 mantissa bits), so the tolerance is
            # tf32's, not fp32's (Triton leaves the low bits to the hardware, Tessel rounds them to nearest).
            c = np.full((n, n), np.nan, np.float32)
            want = a.astype(np.float64) @ b.astype(np.float64)
        else:
            a, b = to_bf16_bits(a), to_bf16_bits(b)
            c = np.full((n, n), 0x7FC0, np.uint16)  # bf16 NaN
            want = from_bf16_bits(a).astype(np.float64) @ from_bf16_bits(b).astype(np.float64)
            read = from_bf16_bits
        # fp32 accumulation, one rounding of the result to 16 bits (fp16: 2^-11, bf16: 2^-8 relative), or of
        # the inputs to tf32 (2^-11 each).
        tol = {"fp16": 2e-3, "fp32": 5e-3, "fp64": 1e-12, "int8": 0, "fp8": 1e-5, "fp8e4b8": 1e-5}.get(dtype, 1e-2)
        return ([a, b, c, n, n, n, n, n, n],
                lambda args: _mismatch(read(args[2]), want, tol, tol * math.sqrt(n)))

    ptr = {"int8": "*i8", "fp8": "*fp8e4nv"}.get(dtype, f"*{dtype}")
    out = {"int8": "*i32", "fp8": "*fp32", "fp8e4b8": "*fp32"}.get(dtype, ptr)
    key, label = f"matmul_{dtype}", f"{dtype} matmul"
    if num_ctas > 1:
        key, label = f"{key}_{num_ctas}cta", f"{label} {num_ctas} CTAs"
    return Case(key, label, "matmul_kernel",
                {"a_ptr": ptr, "b_ptr": ptr, "c_ptr": out, "M": "i32", "N": "i32", "K": "i32",
                 "stride_am": "i32", "stride_ak": "constexpr", "stride_bk": "i32", "stride_bn": "constexpr",
                 "stride_cm": "i32", "stride_cn": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr",
                 "BLOCK_K": "constexpr", "GROUP_M": "constexpr"},
                # Unit strides are constexprs, as Triton's launcher specializes an int argument equal to 1.
                {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk,
                 "GROUP_M": 8},
                ((n // bm) * (n // bn),), 4, 3, setup,
                f"M=N=K={n}" + (f" {bm}x{bn} blocks on clusters of {num_ctas}" if num_ctas > 1 else ""),
                ("sm_89", "sm_90a") if dtype == "fp8" else () if dtype in ("fp8e4b8", "fp64")  # AMD rows only
                else ("sm_90a",) if num_ctas > 1 else ("sm_80", "sm_90a"),
                num_ctas=num_ctas)


def descriptor_block(sig: str) -> list[int]:
    """The block of a "tensordesc<fp16[64, 32]>" signature."""
    return [int(x) for x in re.search(r"\[(.*)\]", sig).group(1).split(",")]


def tessel_descriptor_parts(base: Any, array: np.ndarray) -> list[Any]:
    """How Tessel's launchers (the JIT's, the AOT tool's C launcher) pass a host-made descriptor of a whole array:
    `base` (the array, or its device address), its sizes, and its strides in elements but the last."""
    return [base, *array.shape, *(stride // array.itemsize for stride in array.strides[:-1])]


def descriptor_launch_args(case: Case, compiler: str, compiled: dict, args: list[Any]) -> list[Any]:
    """What each launcher passes for host-made descriptors (of whole arrays): Triton, per descriptor, its tensor
    map (the box and swizzle of metadata.tensordesc_meta), then its shape and strides; Tessel, per descriptor,
    the base, shape (i32) and strides but the last (i64), and after the runtime arguments the tensor maps its
    launch stage lists (`tensor_map=ARG ELEMENT NAN BOX SWIZZLE`, ARG the base's place in that list)."""
    from tessel import gpusim

    out, bases = [], {}
    metas = iter(compiled.get("tensordesc_meta") or [])
    for value, sig in zip(args, (t for t in case.signature.values() if t != "constexpr")):
        if not sig.startswith("tensordesc"):
            out.append(value)
            continue
        if compiler == "triton":
            meta = next(metas)
            out += [gpusim.TensorMap(value, meta["block_size"], swizzle={0: None, 1: 32, 2: 64, 3: 128}[
                meta["swizzle"]]), *value.shape, *(s // value.itemsize for s in value.strides)]
        else:
            bases[len(out)] = value
            out += tessel_descriptor_parts(value, value)
    if compiler == "tessel":
        for line in compiled["launch"].splitlines():
            if line.startswith("tensor_map="):
                arg, _element, nan, box, swizzle = line.split("=", 1)[1].split()
                out.append(gpusim.TensorMap(bases[int(arg)], [int(b) for b in box.split("x")],
                                            swizzle=int(swizzle) or None, fill="nan" if nan == "1" else "zero"))
    return out


def matmul_descriptor_case(quick: bool, b_kn: bool, n: int | None = None) -> Case:
    n = n or (128 if quick else 256)
    bm, bn, bk = 64, 64, 64

    def setup(rng):
        a = rng.standard_normal((n, n)).astype(np.float16)
        b = rng.standard_normal((n, n)).astype(np.float16)  # K x N with b_kn, else N x K
        c = np.full((n, n), np.nan, np.float16)
        want = a.astype(np.float64) @ (b.astype(np.float64) if b_kn else b.astype(np.float64).T)
        return [a, b, c, n], lambda args: _mismatch(args[2], want, 2e-3, 2e-3 * math.sqrt(n))

    b_block = f"[{bk}, {bn}]" if b_kn else f"[{bn}, {bk}]"
    case = Case("matmul_tma_kn" if b_kn else "matmul_tma", f"fp16 matmul TMA {'KxN' if b_kn else 'NxK'}",
                "matmul_descriptor_kernel",
                {"a_desc": f"tensordesc<fp16[{bm}, {bk}]>", "b_desc": f"tensordesc<fp16{b_block}>",
                 "c_desc": f"tensordesc<fp16[{bm}, {bn}]>", "K": "i32", "BLOCK_M": "constexpr",
                 "BLOCK_N": "constexpr", "BLOCK_K": "constexpr", "B_KN": "constexpr"},
                {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "B_KN": b_kn}, (n // bm, n // bn), 4, 3, setup,
                f"M=N=K={n} B as {'K x N' if b_kn else 'N x K'}", ("sm_90a",))
    case.launch_args = lambda compiler, compiled, args: descriptor_launch_args(case, compiler, compiled, args)
    return case


def attention_case(quick: bool, bh: int | None = None, ctx: int | None = None) -> Case:
    bh, ctx, d = bh or (1 if quick else 2), ctx or (64 if quick else 128), 64
    bm, bn = 64, 32
    scale = 1 / math.sqrt(d)

    def setup(rng):
        q, k, v = (rng.standard_normal((3, bh, ctx, d)) * 0.5).astype(np.float16)
        out = np.full((bh, ctx, d), np.nan, np.float16)
        s = np.einsum("bmd,bnd->bmn", q.astype(np.float64), k.astype(np.float64)) * scale
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        want = np.einsum("bmn,bnd->bmd", p / p.sum(axis=-1, keepdims=True), v.astype(np.float64))
        # P is rounded to fp16 before the second dot, as in the tutorial.
        return [q, k, v, out, scale, ctx], lambda a: _mismatch(a[3], want, 1e-2, 1e-2)

    return Case("attention", "attention fwd", "attn_fwd",
                {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32", "N_CTX": "i32",
                 "HEAD_DIM": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"},
                {"HEAD_DIM": d, "BLOCK_M": bm, "BLOCK_N": bn}, (ctx // bm, bh), 4, 3, setup,
                f"bh={bh} ctx={ctx} d={d} fp16")


def cases(quick: bool) -> list[Case]:
    return [vector_add_case(quick), softmax_case(quick), layer_norm_case(quick), matmul_case("fp16", quick),
            matmul_case("bf16", quick), matmul_case("fp32", quick), matmul_case("int8", quick),
            matmul_case("fp8", quick), matmul_case("fp16", quick, num_ctas=2),
            matmul_descriptor_case(quick, b_kn=False),
            matmul_descriptor_case(quick, b_kn=True), attention_case(quick), matmul_case("fp8e4b8", quick),
            matmul_case("fp64", quick)]


CASE_KEYS = ["vector_add", "softmax", "layer_norm", "matmul_fp16", "matmul_bf16", "matmul_fp32", "matmul_int8",
             "matmul_fp8", "matmul_fp16_2cta", "matmul_tma", "matmul_tma_kn", "attention"]


def runtime_names(case: Case) -> list[str]:
    return [name for name, t in case.signature.items() if t != "constexpr"]


def divisible_by_16(case: Case, args: list[Any]) -> list[str]:
    """The arguments both launchers mark divisible by 16: arrays (16-byte aligned, as numpy allocates them) and
    ints that are multiples of 16."""
    marked = []
    for name, value in zip(runtime_names(case), args):
        if case.signature[name].startswith("tensordesc"):
            continue  # a descriptor's parts are specialized by its launcher
        if isinstance(value, np.ndarray):
            assert value.ctypes.data % 16 == 0, f"{name}: array not 16-byte aligned"
            marked.append(name)
        elif isinstance(value, int) and value % 16 == 0:
            marked.append(name)
    return marked


# ---------------------------------------------------------------------------------------------------------------
# Triton, in a child process.

def _triton_child(request_path: str) -> None:
    """Compiles every job of the request with Triton into the request's output file (JSON)."""
    os.environ.pop("TRITON_INTERPRET", None)
    os.environ["TESSEL_BENCH_FRONTEND"] = "triton"
    import triton
    from triton.backends.compiler import GPUTarget
    from triton import knobs as triton_knobs

    from . import gpu_static_kernels as kernels

    request = json.loads(Path(request_path).read_text())
    triton_knobs.nvidia.dump_ptxas_log = True  # printed to stdout: captured per compile below

    def compile_one(job: dict) -> tuple[Any, str, float]:
        fn = getattr(kernels, job["kernel"])
        attrs = {(fn.arg_names.index(n),): [["tt.divisibility", 16]] for n in job["divisible_by_16"]}
        src = triton.compiler.ASTSource(fn=fn, signature=job["signature"], constexprs=job["constexprs"],
                                        attrs=attrs)
        log = io.StringIO()
        start = time.perf_counter()
        # AMD jobs name a chip (bench/gpu_static_amd.py); the others an NVIDIA capability.
        target = GPUTarget("hip", job["chip"], 64) if "chip" in job else GPUTarget("cuda", job["capability"], 32)
        with contextlib.redirect_stdout(log):
            kernel = triton.compile(src, target=target,
                                    options={"num_warps": job["num_warps"], "num_stages": job["num_stages"],
                                             "num_ctas": job.get("num_ctas", 1)})
        return kernel, log.getvalue(), time.perf_counter() - start

    # A throwaway compile per architecture: backend loading and the ptxas version query are not a kernel's cost.
    for arch in {tuple(sorted((k, job[k]) for k in ("capability", "chip") if k in job)) for job in request["jobs"]}:
        compile_one({"kernel": "add_kernel", "signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32",
                                                           "n": "i32", "BLOCK": "constexpr"},
                     "constexprs": {"BLOCK": 128}, "divisible_by_16": [], **dict(arch),
                     "num_warps": 4, "num_stages": 3})
    results = []
    for job in request["jobs"]:
        try:
            kernel, log, seconds = compile_one(job)
            if "chip" in job:
                results.append({"amdgcn": kernel.asm["amdgcn"], "seconds": seconds, "name": kernel.metadata.name,
                                "shared": kernel.metadata.shared})
                continue
            results.append({"ptx": kernel.asm["ptx"], "cubin": base64.b64encode(kernel.asm["cubin"]).decode(),
                            "ptxas": log, "seconds": seconds, "name": kernel.metadata.name,
                            "num_warps": kernel.metadata.num_warps, "shared": kernel.metadata.shared,
                            "tensordesc_meta": getattr(kernel.metadata, "tensordesc_meta", None)})
        except Exception as e:  # reported in the row
            first = next((line.strip() for line in str(e).splitlines() if line.strip()), "")
            results.append({"error": f"{type(e).__name__}: {first[:300]}"})
    Path(request["out"]).write_text(json.dumps({"version": triton.__version__, "results": results}))


def compile_triton(jobs: list[dict]) -> tuple[str, list[dict]]:
    with tempfile.TemporaryDirectory(prefix="gpu_static_triton_") as tmp:
        request = Path(tmp) / "request.json"
        out = Path(tmp) / "out.json"
        request.write_text(json.dumps({"jobs": jobs, "out": str(out)}))
        env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
        # A fresh cache, and no cache at all: every compile is cold.
        env.update(TRITON_CACHE_DIR=str(Path(tmp) / "cache"), TRITON_ALWAYS_COMPILE="1",
                   TESSEL_BENCH_FRONTEND="triton")
        root = Path(__file__).resolve().parent.parent
        env["PYTHONPATH"] = os.pathsep.join([str(root), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
        proc = subprocess.run([sys.executable, "-m", "bench.gpu_static", "--triton-child", str(request)],
                              cwd=root, env=env, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"the Triton child process failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
        result = json.loads(out.read_text())
    for r in result["results"]:
        if "cubin" in r:
            r["cubin"] = base64.b64decode(r["cubin"])
    return result["version"], result["results"]


# ---------------------------------------------------------------------------------------------------------------
# Tessel, in this process.

def _tessel_reason(error: Exception) -> str:
    """The first diagnostic of a Tessel compile error, without the path of its file."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    located = [line for line in lines if re.match(r"\S+:\d+:\d+: ", line)]
    if located:
        path, line, _col, message = re.match(r"(\S+?):(\d+):(\d+): (.*)", located[0]).groups()
        return f"{message} ({Path(path).name}:{line})"
    return lines[0] if lines else type(error).__name__


def compile_tessel(case: Case, target: str, args: list[Any]) -> dict:
    from . import gpu_static_kernels as kernels

    assert kernels.FRONTEND == "tessel", "TESSEL_BENCH_FRONTEND=triton is for the Triton child process only"
    fn = getattr(kernels, case.kernel)
    # The arrays the simulator runs (bf16 bits as torch bf16 tensors): warmup compiles what a launch of them
    # compiles, with the specializations the launcher takes from them (alignment, arrays that overlap no other).
    def as_launched(value: Any, sig: str) -> Any:
        if sig.startswith("tensordesc"):
            from tessel.tools.tensor_descriptor import TensorDescriptor
            return TensorDescriptor.from_tensor(value, descriptor_block(sig))
        if sig in ("*bf16", "*fp8e4nv"):
            import torch
            return torch.from_numpy(value).view(torch.bfloat16 if sig == "*bf16" else torch.float8_e4m3fn)
        return value
    warm_args = {name: as_launched(value, case.signature[name])
                 for name, value in zip(runtime_names(case), args)}
    fn.cache.clear()  # this target's in-memory kernels: the compile below must not be a hit
    start = time.perf_counter()
    try:
        kernel = fn.warmup(grid=case.grid, num_warps=case.num_warps, num_stages=case.num_stages,
                           num_ctas=case.num_ctas, **warm_args,
                           **case.constexprs)
    except Exception as e:  # Tessel cannot compile it (yet): the row says why
        return {"error": _tessel_reason(e)}
    seconds = time.perf_counter() - start
    launch = dict(line.split("=", 1) for line in kernel.asm["launch"].split() if "=" in line)
    return {"ptx": kernel.asm["ptx"], "cubin": kernel.object, "ptxas": kernel.asm["ptxas"], "seconds": seconds,
            "name": kernel.name, "num_warps": int(launch["num_warps"]), "shared": int(launch["shared"]),
            "launch": kernel.asm["launch"]}


def _warm_tessel(target: str) -> None:
    from . import gpu_static_kernels as kernels

    x = np.dtype(np.float32)
    try:
        kernels.add_kernel.warmup(x, x, x, 100, BLOCK=128, grid=(1,))
    except Exception:  # noqa: BLE001 -- the kernels' own compiles report what is wrong
        pass


# ---------------------------------------------------------------------------------------------------------------
# Static facts of a compiled kernel, and its run in the simulator.

def ptxas_facts(log: str) -> dict:
    regs = re.search(r"Used (\d+) registers", log)
    spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
    smem = re.search(r"(\d+) bytes smem", log)
    return {"registers": int(regs.group(1)) if regs else None,
            "spill_stores": int(spills.group(1)) if spills else None,
            "spill_loads": int(spills.group(2)) if spills else None,
            "static_shared": int(smem.group(1)) if smem else 0}


def _cuobjdump() -> str:
    import importlib.util
    spec = importlib.util.find_spec("triton")
    if spec and spec.origin:
        path = Path(spec.origin).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
        if path.exists():
            return str(path)
    return "cuobjdump"


SASS_LINE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")


# The tensor-core instructions by SASS opcode: mma.sync (HMMA: fp16, bf16, tf32; IMMA: int8; QMMA: fp8 on sm_89) and
# warpgroup MMA (HGMMA, IGMMA, QGMMA). sm_90 has no QMMA: ptxas runs fp8 mma.sync as fp16 HMMAs there.
TENSOR_CORE_SASS = ("HMMA", "IMMA", "QMMA", "HGMMA", "IGMMA", "QGMMA")


def sass_counts(cubin: bytes) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        out = subprocess.run([_cuobjdump(), "-sass", f.name], capture_output=True, text=True, check=True).stdout
    ops = [m.group(1) for m in map(SASS_LINE.search, out.splitlines()) if m]
    ops = [op for op in ops if op != "NOP"]
    return {"sass": len(ops),
            "sass_mma": sum(op.startswith(TENSOR_CORE_SASS) for op in ops),
            "sass_async": sum(op.startswith(("LDGSTS", "UTMALDG")) for op in ops),
            "sass_ldg128": sum(op.startswith("LDG.E.128") for op in ops)}


def entry_params(ptx: str, name: str) -> int:
    m = re.search(r"\.entry\s+" + re.escape(name) + r"\s*\((.*?)\)", ptx, re.S)
    return len(re.findall(r"\.param\b", m.group(1))) if m else 0


def simulate(case: Case, compiler: str, compiled: dict, args: list[Any], check: Callable) -> dict:
    from tessel import gpusim

    run_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    launched = case.launch_args(compiler, compiled, run_args) if case.launch_args else run_args
    # Parameters past the kernel's own (Triton's global and profile scratch pointers) get null pointers.
    padded = launched + [None] * max(0, entry_params(compiled["ptx"], compiled["name"]) - len(launched))
    try:
        grid = (case.grid[0] * case.num_ctas, *case.grid[1:])
        c = gpusim.launch(compiled["ptx"], compiled["name"], grid, num_warps=compiled["num_warps"],
                          shared_bytes=compiled["shared"], args=padded)
    except gpusim.SimulatorError as e:
        return {"check": f"simulator: {str(e).splitlines()[0][:200]}"}
    problem = check(run_args)

    def ratio(a, b):
        return c[a] / c[b] if c[b] else None

    shared_requests = c["shared_load_requests"] + c["shared_store_requests"]
    return {"check": problem or "ok",
            "load_sectors_per_request": ratio("global_load_sectors", "global_load_requests"),
            "store_sectors_per_request": ratio("global_store_sectors", "global_store_requests"),
            # The bytes the lanes asked for over the bytes of the sectors moved (100%: every sector byte used).
            "load_efficiency": c["global_load_bytes"] / (32 * c["global_load_sectors"])
                if c["global_load_sectors"] else None,
            "shared_wavefronts_per_request":
                (c["shared_load_wavefronts"] + c["shared_store_wavefronts"]) / shared_requests
                if shared_requests else None,
            # Bank conflicts: wavefronts beyond one per phase of a request (Nsight Compute's
            # l1tex__data_bank_conflicts_pipe_lsu_mem_shared), per request; 0 is conflict free.
            "shared_conflicts_per_request":
                (c["shared_load_bank_conflicts"] + c["shared_store_bank_conflicts"]) / shared_requests
                if shared_requests else None,
            "warp_instructions": c["warp_instructions"],
            "counters": {k: v for k, v in c.items() if k != "seconds"}}


def describe(case: Case, arch: str, compiler: str, compiled: dict, args: list[Any], check: Callable) -> dict:
    row = {"kernel": case.label, "size": case.size, "arch": arch, "compiler": compiler}
    if "error" in compiled:
        return {**row, "error": compiled["error"]}
    facts = ptxas_facts(compiled["ptxas"])
    row.update(compile_s=compiled["seconds"], registers=facts["registers"], spill_stores=facts["spill_stores"],
               spill_loads=facts["spill_loads"], shared=compiled["shared"] + facts["static_shared"],
               num_warps=compiled["num_warps"], **sass_counts(compiled["cubin"]))
    row.update(simulate(case, compiler, compiled, args, check))
    return row


# ---------------------------------------------------------------------------------------------------------------
# The report.

COLUMNS = [  # header, row key, format
    ("compile s", "compile_s", "{:.3f}"), ("regs", "registers", "{}"), ("spill st/ld", None, None),
    ("smem B", "shared", "{}"), ("SASS", "sass", "{}"), ("MMA", "sass_mma", "{}"),
    ("LDGSTS/UTMALDG", "sass_async", "{}"), ("LDG.E.128", "sass_ldg128", "{}"),
    ("ld sec/req", "load_sectors_per_request", "{:.2f}"), ("ld eff", "load_efficiency", "{:.0%}"),
    ("st sec/req", "store_sectors_per_request", "{:.2f}"),
    ("smem wf/req", "shared_wavefronts_per_request", "{:.2f}"),
    ("conflicts/req", "shared_conflicts_per_request", "{:.2f}"), ("warp instr", "warp_instructions", "{}"),
    ("numpy", "check", "{}"),
]


class StaticReport:
    """Rows of static facts (not rates): printed as a table and saved as JSON, like bench.common.Report."""

    def __init__(self, rows: list[dict], notes: dict):
        self.name = NAME
        self.rows = rows
        self.notes = notes

    def wrong(self) -> list[dict]:
        return [r for r in self.rows if "error" not in r and r.get("check") != "ok"]

    def print_table(self) -> None:
        head = ["kernel", "arch", "compiler"] + [c[0] for c in COLUMNS]
        lines, errors = [], []
        for r in self.rows:
            cells = [r["kernel"], r["arch"], r["compiler"]]
            if "error" in r:
                errors.append(len(lines))
                lines.append(cells + [f"cannot compile: {r['error']}"])
                continue
            for header, key, fmt in COLUMNS:
                if header == "spill st/ld":
                    cells.append(f"{r['spill_stores']}/{r['spill_loads']}")
                elif r.get(key) is None:
                    cells.append("-")
                elif key == "check" and r[key] != "ok":
                    cells.append(f"WRONG: {r[key]}")
                else:
                    cells.append(fmt.format(r[key]))
            lines.append(cells)
        # Widths from the full rows only: an error row's reason runs over the numeric columns.
        full = [cells for i, cells in enumerate(lines) if i not in errors] or [head]
        widths = [max(len(h), *(len(c[j]) for c in full)) for j, h in enumerate(head)]
        widths[-1] = len(head[-1])
        archs = " ".join(dict.fromkeys(r["arch"] for r in self.rows))
        print(f"\n{self.name}: Triton {self.notes['triton']} vs Tessel, same kernel sources, on {archs} "
              f"(simulator counters on the same random inputs)")
        print("  ".join(h.rjust(w) for h, w in zip(head, widths)))
        previous = None
        for i, cells in enumerate(lines):
            if previous is not None and cells[0] != previous:
                print()
            previous = cells[0]
            if i in errors:
                print("  ".join(c.rjust(w) for c, w in zip(cells[:3], widths)) + "  " + cells[3])
            else:
                print("  ".join(c.rjust(w) for c, w in zip(cells, widths)))
        summary = self.summary()
        if summary:
            print("Tessel / Triton (where both compiled):")
            for line in summary:
                print(f"  {line}")
        for key, value in self.notes.items():
            if key != "triton":
                print(f"  {key}: {value}")

    def summary(self) -> list[str]:
        """One line per kernel and architecture that both compiled: Tessel's numbers over Triton's."""
        by = {(r["kernel"], r["arch"], r["compiler"]): r for r in self.rows if "error" not in r}
        lines = []
        for (kernel, arch, compiler), tessel in by.items():
            triton = by.get((kernel, arch, "triton"))
            if compiler != "tessel" or triton is None:
                continue
            parts = [f"{what} {tessel[key] / triton[key]:.2f}x" for what, key in
                     (("warp instructions", "warp_instructions"), ("SASS", "sass"), ("compile time", "compile_s"))
                     if tessel.get(key) and triton.get(key)]
            parts.append(f"registers {tessel['registers']} vs {triton['registers']}")
            lines.append(f"{kernel} {arch}: " + ", ".join(parts))
        return lines

    def to_dict(self, env: dict, quick: bool) -> dict:
        return {"name": self.name, "quick": quick, "environment": env, "notes": self.notes, "rows": self.rows}

    def save(self, out_dir: Path, env: dict, quick: bool, plot: bool = False) -> list[Path]:
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / f"{self.name}.json"
        path.write_text(json.dumps(self.to_dict(env, quick), indent=2) + "\n")
        return [path]


def _tool_version(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return "unknown"
    m = re.search(r"release ([\d.]+)", out)
    return m.group(1) if m else "unknown"


def compare(keys: list[str] | None = None, quick: bool = False, seed: int = 0,
            same_ptxas: bool = False) -> StaticReport:
    """Compiles the chosen kernels (CASE_KEYS; all by default) with Triton and Tessel on their architectures (Case.archs), runs
    each result in the simulator and checks it against numpy. Returns the rows; raises nothing for wrong results
    (see StaticReport.wrong). Each compiler assembles with its own ptxas, or with `same_ptxas` Tessel too uses the
    one in Triton's wheel (through TESSEL_PTXAS_PATH), so that SASS differences are the compilers' PTX alone."""
    from tessel import knobs

    chosen = [c for c in cases(quick) if keys is None or c.key in keys]
    rng = np.random.default_rng(seed)
    problems = {c.key: c.setup(rng) for c in chosen}
    # Every kernel on each of its architectures: (case, label, Triton capability, Tessel target).
    pairs = [(c, *arch) for c in chosen for arch in ARCHS if arch[0] in c.archs]
    jobs = [{"kernel": c.kernel, "signature": c.signature, "constexprs": c.constexprs, "capability": cap,
             "num_warps": c.num_warps, "num_stages": c.num_stages, "num_ctas": c.num_ctas,
             "divisible_by_16": divisible_by_16(c, problems[c.key][0])}
            for c, _, cap, _ in pairs]
    triton_version, triton_results = compile_triton(jobs)

    saved = knobs.target, knobs.cache_dir, os.environ.get("TESSEL_PTXAS_PATH")
    tessel_ptxas = _triton_ptxas() if same_ptxas else os.environ.get("TESSEL_PTXAS_PATH") or PTXAS
    tessel_results = []
    try:
        if same_ptxas:
            os.environ["TESSEL_PTXAS_PATH"] = tessel_ptxas  # read by Tessel's NVIDIA target at each compile
        with tempfile.TemporaryDirectory(prefix="gpu_static_tessel_") as tmp:
            knobs.cache_dir = Path(tmp)  # a fresh cache: every compile is cold
            for target in dict.fromkeys(target for *_, target in pairs):
                knobs.target = target
                _warm_tessel(target)
            for c, _, _, target in pairs:
                knobs.target = target
                tessel_results.append(compile_tessel(c, target, problems[c.key][0]))
    finally:
        knobs.target, knobs.cache_dir = saved[:2]
        if saved[2] is None:
            os.environ.pop("TESSEL_PTXAS_PATH", None)
        else:
            os.environ["TESSEL_PTXAS_PATH"] = saved[2]

    rows = []
    for k, (c, arch, _, _) in enumerate(pairs):
        args, check = problems[c.key]
        rows.append(describe(c, arch, "triton", triton_results[k], args, check))
        rows.append(describe(c, arch, "tessel", tessel_results[k], args, check))
    notes = {"triton": triton_version,
             "ptxas": f"Triton: its own {_tool_version(_triton_ptxas())}; Tessel: {tessel_ptxas} "
                      f"{_tool_version(tessel_ptxas)}",
             "compile": "cold: fresh cache dirs (Triton also TRITON_ALWAYS_COMPILE=1), each compiler warmed up by "
                        "one throwaway kernel per architecture",
             "sizes": "; ".join(f"{c.label} {c.size}" for c in chosen)}
    return StaticReport(rows, notes)


def _triton_ptxas() -> str:
    return str(Path(_cuobjdump()).with_name("ptxas"))


def run(quick: bool) -> StaticReport:
    """The benchmark as `python -m bench` runs it: every kernel; a wrong result prints the table and fails."""
    report = compare(quick=quick)
    bad = report.wrong()
    if bad:
        report.print_table()
        raise AssertionError("wrong results: " + "; ".join(
            f"{r['kernel']} {r['arch']} {r['compiler']}: {r['check']}" for r in bad))
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.gpu_static", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller problems")
    parser.add_argument("--only", nargs="+", choices=CASE_KEYS, default=None, metavar="KERNEL",
                        help=f"only these ({', '.join(CASE_KEYS)})")
    parser.add_argument("--same-ptxas", action="store_true",
                        help="Tessel assembles with the ptxas of Triton's wheel too (same SASS backend)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR, help="directory for the JSON result")
    parser.add_argument("--triton-child", metavar="REQUEST", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.triton_child:
        _triton_child(args.triton_child)
        return 0
    from .common import environment

    start = time.perf_counter()
    report = compare(args.only, quick=args.quick, same_ptxas=args.same_ptxas)
    report.print_table()
    for path in report.save(args.out, environment(), args.quick):
        print(f"wrote {path}")
    print(f"{time.perf_counter() - start:.0f} s")
    bad = report.wrong()
    for r in bad:
        print(f"WRONG: {r['kernel']} {r['arch']} {r['compiler']}: {r['check']}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
