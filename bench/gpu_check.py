"""Tessel on a real NVIDIA GPU, where no LLVM is installed: kernels compiled ahead of time here, run there.

    python -m bench.gpu_check bundle --arch 90a --out build/gpu-bundle     # with the compiler (this machine)
    python -m bench.gpu_check run --bundle build/gpu-bundle                # on the GPU machine

`bundle` compiles the kernels of bench/gpu_static_kernels.py (vector add, fused softmax, layer norm, fp16, bf16,
fp32 (tf32), int8 and fp8 (e4m3; sm_89 and newer) matmul, attention forward) with tessel.tools.compile for cuda:<arch>: a cubin and a C launcher that needs only the
CUDA driver, per kernel, plus bundle.json (each case, its specialization and its sizes). `--quick` makes small
sizes; the default sizes are big enough to time.

`run` needs Python with numpy, a C compiler, cuda.h and the CUDA driver; torch and OpenAI Triton 3.6 when present.
It builds each C launcher into a shared library, gives every kernel random inputs in GPU memory (through the
driver), checks its result against numpy (the same checks as bench/gpu_static.py), and, with torch on a GPU, times
it with CUDA events beside Triton 3.6 compiling the very same source (TESSEL_BENCH_FRONTEND=triton) and torch's
own operation (cuBLAS for the matmuls: torch._int_mm for int8, torch._scaled_mm for fp8;
scaled_dot_product_attention for attention). The table comes last; results
go to bench/results/gpu_check.json. Exit status 1 when any result is wrong.

`--libcuda PATH` runs against another driver library: the tests use Tessel's fake driver (test/FakeCuda), which
runs PTX in the simulator, to check the whole path without a GPU (correctness only: nothing to time there).
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np

from . import gpu_static
from .common import RESULTS_DIR

KERNELS = pathlib.Path(__file__).resolve().parent / "gpu_static_kernels.py"


def cases(quick: bool) -> list[gpu_static.Case]:
    """The static bench's cases at sizes a GPU can be timed on (its own sizes with --quick)."""
    if quick:
        return gpu_static.cases(quick=True)
    return [gpu_static.vector_add_case(False, n=1 << 24), gpu_static.softmax_case(False, rows=4096),
            gpu_static.layer_norm_case(False, rows=4096), gpu_static.matmul_case("fp16", False, n=2048),
            gpu_static.matmul_case("bf16", False, n=2048), gpu_static.matmul_case("fp32", False, n=2048),
            gpu_static.matmul_case("int8", False, n=2048), gpu_static.matmul_case("fp8", False, n=2048),
            gpu_static.matmul_case("fp16", False, n=2048, num_ctas=2),
            gpu_static.matmul_descriptor_case(False, b_kn=False, n=2048),
            gpu_static.matmul_descriptor_case(False, b_kn=True, n=2048),
            gpu_static.attention_case(False, bh=16, ctx=1024)]


# ---------------------------------------------------------------------------------------------------------------
# bundle: here, with the compiler.

def launcher_args(case: gpu_static.Case, args: list[Any], addresses: list[Any]) -> list[Any]:
    """The C launcher's arguments: each array's device address, a tensor descriptor's as its base, sizes and strides
    (elements; all but the last), as tessel.tools.compile expands it."""
    flat = []
    for name, value, address in zip(gpu_static.runtime_names(case), args, addresses):
        if case.signature[name].startswith("tensordesc"):
            flat += gpu_static.tessel_descriptor_parts(address, value)
        else:
            flat.append(address)
    return flat


def signature(case: gpu_static.Case, args: list[Any]) -> str:
    """tessel.tools.compile's --signature of the case as a launch with distinct, 16-byte-aligned GPU arrays
    specializes it: pointers and ints that are multiples of 16 marked ":16", pointers ":noalias"."""
    values = dict(zip(gpu_static.runtime_names(case), args))
    entries = []
    for name, kind in case.signature.items():
        if kind == "constexpr":
            entries.append(repr(case.constexprs[name]))
        elif kind.startswith("*"):
            entries.append(kind + ":16:noalias")
        elif kind == "i32" and values[name] % 16 == 0:
            entries.append("i32:16")
        else:
            entries.append(kind)
    return ", ".join(entries)


def bundle(out: pathlib.Path, arch: str, quick: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    manifest = {"arch": arch, "quick": quick, "cases": []}
    for case in cases(quick):
        if f"sm_{arch}" not in case.archs:  # the fp8 matmul needs sm_89 or newer
            continue
        args, _ = case.setup(np.random.default_rng(0))
        command = [sys.executable, "-m", "tessel.tools.compile", str(KERNELS), "--kernel-name", case.kernel,
                   "--signature", signature(case, args), "--grid", ", ".join(map(str, case.grid)),
                   "--target", f"cuda:{arch}", "--num-warps", str(case.num_warps),
                   "--num-stages", str(case.num_stages), "--num-ctas", str(case.num_ctas), "--out-name", case.key,
                   "--out-dir", str(out)]
        subprocess.run(command, check=True)
        manifest["cases"].append({"key": case.key, "label": case.label, "size": case.size})
        print(f"bundled {case.key} ({case.size}) for cuda:{arch}")
    (out / "bundle.json").write_text(json.dumps(manifest, indent=2) + "\n")


# ---------------------------------------------------------------------------------------------------------------
# run: on the GPU machine, with the driver only.

class Driver:
    """The CUDA driver through ctypes: the primary context of GPU 0 (torch's too), memory and copies."""

    def __init__(self, path: str):
        self.lib = ctypes.CDLL(path)
        for fn in ("cuInit", "cuDevicePrimaryCtxRetain", "cuCtxSetCurrent", "cuMemAlloc_v2", "cuMemFree_v2",
                   "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuCtxSynchronize"):
            if hasattr(self.lib, fn):
                getattr(self.lib, fn).restype = ctypes.c_int
        self.check(self.lib.cuInit(0), "cuInit")
        context = ctypes.c_void_p()
        self.check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(context), 0), "cuDevicePrimaryCtxRetain")
        self.check(self.lib.cuCtxSetCurrent(context), "cuCtxSetCurrent")

    @staticmethod
    def check(status: int, what: str) -> None:
        if status != 0:
            raise RuntimeError(f"{what} failed with CUDA error {status}")

    def to_device(self, array: np.ndarray) -> int:
        pointer = ctypes.c_uint64()
        self.check(self.lib.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(max(array.nbytes, 1))), "cuMemAlloc")
        self.check(self.lib.cuMemcpyHtoD_v2(ctypes.c_uint64(pointer.value), array.ctypes.data_as(ctypes.c_void_p),
                                            ctypes.c_size_t(array.nbytes)), "cuMemcpyHtoD")
        return pointer.value

    def to_host(self, pointer: int, like: np.ndarray) -> np.ndarray:
        out = np.empty_like(like)
        if hasattr(self.lib, "cuCtxSynchronize"):
            self.check(self.lib.cuCtxSynchronize(), "cuCtxSynchronize")
        self.check(self.lib.cuMemcpyDtoH_v2(out.ctypes.data_as(ctypes.c_void_p), ctypes.c_uint64(pointer),
                                            ctypes.c_size_t(out.nbytes)), "cuMemcpyDtoH")
        return out

    def free(self, pointer: int) -> None:
        self.lib.cuMemFree_v2(ctypes.c_uint64(pointer))


# The C types of the launchers' scalar parameters (tessel.tools.compile writes fp16/bf16 scalars as uint16_t).
_CTYPES = {"i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
           "i64": ctypes.c_int64, "u8": ctypes.c_uint8, "u16": ctypes.c_uint16, "u32": ctypes.c_uint32,
           "u64": ctypes.c_uint64, "fp32": ctypes.c_float, "fp64": ctypes.c_double}


def build_launcher(bundle_dir: pathlib.Path, key: str, libcuda: str | None, work: pathlib.Path) -> Any:
    """N.c compiled into a shared library, N_launch's argument types set from N.json."""
    cuda_home = pathlib.Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    library = work / f"{key}.so"
    command = [os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC", f"-I{bundle_dir}",
               f"-I{cuda_home / 'include'}", str(bundle_dir / f"{key}.c"), "-o", str(library)]
    if libcuda:  # another driver library: linked by path, found again at run time through the rpath
        command += [libcuda, f"-Wl,-rpath,{pathlib.Path(libcuda).resolve().parent}"]
    elif (cuda_home / "lib64" / "stubs" / "libcuda.so").exists():  # links here; the driver's libcuda.so.1 runs
        command += [f"-L{cuda_home / 'lib64' / 'stubs'}", "-lcuda"]
    else:
        command += ["-lcuda"]
    subprocess.run(command, check=True)
    lib = ctypes.CDLL(str(library))
    meta = json.loads((bundle_dir / f"{key}.json").read_text())
    launch = getattr(lib, f"{key}_launch")
    launch.restype = ctypes.c_int
    types = [ctypes.c_void_p]  # the stream
    for arg_type in meta["arg_types"]:
        base = arg_type.partition(":")[0]
        types.append(ctypes.c_uint64 if base.startswith("*") else _CTYPES[base])
    launch.argtypes = types
    return launch


def cuda_ms(torch: Any, fn: Any, budget_s: float = 0.5) -> float:
    """Milliseconds per call of fn (launches on the current stream): the median of batches timed by CUDA events."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    per_call = max(start.elapsed_time(end), 1e-3)
    batch = max(1, min(1000, int(20 / per_call)))  # about 20 ms a batch
    samples, deadline = [], time.perf_counter() + budget_s
    while len(samples) < 5 or (time.perf_counter() < deadline and len(samples) < 50):
        start.record()
        for _ in range(batch):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / batch)
    return statistics.median(samples)


def torch_peer(torch: Any, key: str, t: list[Any]) -> Any:
    """torch's own operation for a case, on the case's tensors (arguments in the kernel's order)."""
    F = torch.nn.functional
    if key == "vector_add":
        return lambda: torch.add(t[0], t[1], out=t[2])
    if key == "softmax":
        return lambda: torch.softmax(t[1], dim=1)
    if key == "layer_norm":
        return lambda: F.layer_norm(t[0], (t[0].shape[1],), t[2], t[3], t[8])
    if key == "matmul_int8":  # cuBLAS' int8 GEMM into int32
        return lambda: torch._int_mm(t[0], t[1])
    if key == "matmul_fp8":  # cuBLAS' fp8 GEMM (B column-major, as it requires), unit scales, fp32 out
        a, b = t[0].view(torch.float8_e4m3fn), t[1].view(torch.float8_e4m3fn).t().contiguous().t()
        one = torch.ones((), device=a.device)
        return lambda: torch._scaled_mm(a, b, one, one, out_dtype=torch.float32)
    if key.startswith("matmul"):
        a, b = (x.view(torch.bfloat16) if key == "matmul_bf16" else x for x in t[:2])
        if key == "matmul_fp32":  # cuBLAS on tf32 too, as tl.dot's default
            torch.backends.cuda.matmul.allow_tf32 = True
        return lambda: torch.matmul(a, b)
    if key == "attention":
        return lambda: F.scaled_dot_product_attention(t[0][None], t[1][None], t[2][None], scale=t[4])
    raise KeyError(key)


def run(bundle_dir: pathlib.Path, libcuda: str | None, json_path: pathlib.Path) -> int:
    manifest = json.loads((bundle_dir / "bundle.json").read_text())
    driver = Driver(libcuda or "libcuda.so.1")
    torch = triton_kernels = None
    if libcuda is None:
        try:
            import torch
            if not torch.cuda.is_available():
                torch = None
        except ImportError:
            torch = None
    if torch is not None:
        try:
            os.environ["TESSEL_BENCH_FRONTEND"] = "triton"
            from . import gpu_static_kernels as triton_kernels
            assert triton_kernels.FRONTEND == "triton"
        except ImportError:
            triton_kernels = None
    work = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / f"tessel-gpu-check-{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    by_key = {case.key: case for case in cases(manifest["quick"])}
    rows, failed = [], False
    try:
        for entry in manifest["cases"]:
            case = by_key[entry["key"]]
            launch = build_launcher(bundle_dir, case.key, libcuda, work)
            args, check = case.setup(np.random.default_rng(0))
            pointers = [driver.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
            status = launch(None, *launcher_args(case, args, pointers))
            if status != 0:
                raise RuntimeError(f"{case.key}: the launch failed with CUDA error {status}")
            results = [driver.to_host(p, a) if isinstance(a, np.ndarray) else a for p, a in zip(pointers, args)]
            for p, a in zip(pointers, args):
                if isinstance(a, np.ndarray):
                    driver.free(p)
            problem = check(results)
            failed |= problem is not None
            row = {"case": case.label, "size": case.size, "arch": manifest["arch"],
                   "numpy": problem or "ok"}
            if torch is not None:
                row.update(time_case(torch, triton_kernels, case, launch, args))
            rows.append(row)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(rows, torch, json_path)
    return 1 if failed else 0


def time_case(torch: Any, triton_kernels: Any, case: gpu_static.Case, launch: Any, args: list[Any]) -> dict:
    """Tessel, Triton 3.6 and torch on the same GPU tensors, in one run."""
    tensors = [torch.from_numpy(a).cuda() if isinstance(a, np.ndarray) else a for a in args]
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    pointers = launcher_args(case, args, [t.data_ptr() if isinstance(t, torch.Tensor) else t for t in tensors])
    times = {"tessel ms": cuda_ms(torch, lambda: launch(stream, *pointers))}
    if triton_kernels is not None:
        kernel = getattr(triton_kernels, case.kernel)
        # By name: constexprs sit between the run-time parameters (matmul's unit strides).
        views = {"*bf16": torch.bfloat16, "*fp8e4nv": torch.float8_e4m3fn}
        named = {name: t.view(views[case.signature[name]]) if case.signature[name] in views else t
                 for name, t in zip(gpu_static.runtime_names(case), tensors)}
        for name, kind in case.signature.items():  # Triton's host-made descriptors of the same arrays
            if kind.startswith("tensordesc"):
                from triton.tools.tensor_descriptor import TensorDescriptor
                named[name] = TensorDescriptor.from_tensor(named[name], gpu_static.descriptor_block(kind))
        times["triton ms"] = cuda_ms(torch, lambda: kernel[case.grid](
            **named, **case.constexprs, num_warps=case.num_warps, num_stages=case.num_stages,
            num_ctas=case.num_ctas))
    times["torch ms"] = cuda_ms(torch, torch_peer(torch, case.key, tensors))
    return times


def report(rows: list[dict], torch: Any, json_path: pathlib.Path) -> None:
    device = torch.cuda.get_device_name() if torch is not None else "no GPU timing (another driver, or no torch CUDA)"
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps({"device": device, "rows": rows}, indent=2) + "\n")
    columns = ["case", "size", "arch", "numpy", "tessel ms", "triton ms", "torch ms"]
    table = [[_cell(row.get(c)) for c in columns] + [_ratio(row, "triton ms"), _ratio(row, "torch ms")]
             for row in rows]
    header = columns + ["triton/tessel", "torch/tessel"]
    widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(header)]
    print(f"\nTessel on {device}")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    for r in table:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _ratio(row: dict, peer: str) -> str:
    if peer not in row or "tessel ms" not in row:
        return "-"
    return f"{row[peer] / row['tessel ms']:.2f}x"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.gpu_check", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("bundle", help="compile the kernels ahead of time (needs Tessel's compiler)")
    b.add_argument("--arch", default="90a", help="80, 90a, ... (cuda:<arch>)")
    b.add_argument("--out", type=pathlib.Path, required=True)
    b.add_argument("--quick", action="store_true", help="small sizes (for the simulator)")
    r = sub.add_parser("run", help="run a bundle on the GPU (needs the CUDA driver, numpy and a C compiler)")
    r.add_argument("--bundle", type=pathlib.Path, required=True)
    r.add_argument("--libcuda", help="a driver library other than libcuda.so.1 (tests: the fake driver)")
    r.add_argument("--json", type=pathlib.Path, default=RESULTS_DIR / "gpu_check.json", help="where the rows go")
    options = parser.parse_args(argv)
    if options.command == "bundle":
        bundle(options.out, options.arch, options.quick)
        return 0
    return run(options.bundle, options.libcuda, options.json)


if __name__ == "__main__":
    sys.exit(main())
