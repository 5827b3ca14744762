"""AMD rows of the static GPU benchmark: Triton and Tessel compile the same kernel sources (bench/gpu_static_kernels.py,
the cases of bench/gpu_static.py) for an AMD chip (gfx942 by default) without a GPU, and the table compares what
each compile made: compile time, registers (VGPRs with AGPRs, as the chip's unified file counts them), scratch
(spills), LDS, and instruction counts (MFMA, buffer loads, ds_read_b128, all). Then each compiler's code runs in
the simulator's AMDGCN front end on the case's random inputs: the wave instructions and MFMAs it executed, the LDS
bank-conflict cycles (the simulator's model: 32 banks of 4 bytes, 128 bytes a cycle in lane order), and its result
against numpy.

    python -m bench.gpu_static_amd [--chip gfx942] [--only KERNEL ...]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from .common import RESULTS_DIR
from .gpu_static import cases, compile_triton, divisible_by_16, runtime_names, descriptor_block  # noqa: F401

# The cases that mean something on AMD (host-made descriptors, 8-bit floats of NVIDIA's formats and clusters do not;
# gfx942's own e4m3fnuz does).
AMD_KEYS = ["vector_add", "softmax", "layer_norm", "matmul_fp16", "matmul_bf16", "matmul_fp32", "matmul_int8", "attention",
            "matmul_fp8e4b8", "matmul_fp64"]


def _field(amdgcn: str, name: str) -> int:
    found = re.search(rf"\s\.{name}:\s+(\d+)", amdgcn)
    return int(found.group(1)) if found else 0


def amdgcn_facts(amdgcn: str) -> dict:
    """What a kernel's AMDGCN says of it: its HSA metadata's resources and counts of its instructions."""
    insts = [line.split()[0] for line in amdgcn.splitlines()
             if line.startswith("\t") and line.strip() and not line.strip().startswith((".", ";"))
             and not line.strip().endswith(":")]
    return {"vgprs": _field(amdgcn, "vgpr_count"), "agprs": _field(amdgcn, "agpr_count"),
            "sgprs": _field(amdgcn, "sgpr_count"), "scratch": _field(amdgcn, "private_segment_fixed_size"),
            "mfma": sum(i.startswith("v_mfma") for i in insts),
            "buffer_load": sum(i.startswith("buffer_load") for i in insts),
            "ds_read_b128": sum(i == "ds_read_b128" for i in insts),
            "global_load": sum(i.startswith("global_load") for i in insts), "insts": len(insts)}


def compile_tessel(case: Any, target: str, args: list[Any]) -> dict:
    from . import gpu_static_kernels as kernels

    fn = getattr(kernels, case.kernel)

    def as_launched(value: Any, sig: str) -> Any:
        if sig in ("*bf16", "*fp8e4b8"):
            import torch
            return torch.from_numpy(value).view(torch.bfloat16 if sig == "*bf16" else torch.float8_e4m3fnuz)
        return value

    warm_args = {name: as_launched(value, case.signature[name]) for name, value in zip(runtime_names(case), args)}
    fn.cache.clear()
    start = time.perf_counter()
    try:
        kernel = fn.warmup(grid=case.grid, num_warps=case.num_warps, num_stages=case.num_stages, **warm_args,
                           **case.constexprs)
    except Exception as e:  # the row says why
        return {"error": str(e).strip().splitlines()[-1][:300]}
    seconds = time.perf_counter() - start
    launch = dict(line.split("=", 1) for line in kernel.asm["launch"].split() if "=" in line)
    return {"amdgcn": kernel.asm["amdgcn"], "seconds": seconds, "shared": int(launch["shared"])}


COLUMNS = [("compile s", "seconds", "{:.2f}"), ("VGPRs", "vgprs", "{}"), ("AGPRs", "agprs", "{}"),
           ("SGPRs", "sgprs", "{}"), ("scratch", "scratch", "{}"), ("LDS B", "lds", "{}"), ("MFMA", "mfma", "{}"),
           ("buffer_load", "buffer_load", "{}"), ("global_load", "global_load", "{}"),
           ("ds_read_b128", "ds_read_b128", "{}"), ("insts", "insts", "{}"),
           ("sim wave insts", "wave_instructions", "{}"), ("sim MFMA", "mfma_executed", "{}"),
           ("sim LDS conflicts", "lds_conflicts", "{}"), ("numpy", "check", "{}")]


def compare(keys: list[str] | None = None, chip: str = "gfx942", quick: bool = False) -> tuple[list[dict], str]:
    from tessel import knobs

    chosen = [c for c in cases(quick) if c.key in (keys or AMD_KEYS)]
    rng = np.random.default_rng(0)
    problems = {c.key: c.setup(rng) for c in chosen}
    jobs = [{"kernel": c.kernel, "signature": c.signature, "constexprs": c.constexprs, "chip": chip,
             "num_warps": c.num_warps, "num_stages": c.num_stages,
             "divisible_by_16": divisible_by_16(c, problems[c.key][0])} for c in chosen]
    version, triton_results = compile_triton(jobs)
    saved = knobs.target, knobs.cache_dir
    tessel_results = []
    try:
        with tempfile.TemporaryDirectory(prefix="gpu_static_amd_") as tmp:
            knobs.cache_dir = Path(tmp)  # every compile cold
            knobs.target = f"hip:{chip}"
            from . import gpu_static_kernels as kernels
            kernels.add_kernel.warmup(np.dtype(np.float32), np.dtype(np.float32), np.dtype(np.float32), 128,
                                      BLOCK=128, grid=(1,))  # backend start-up is not a kernel's cost
            for c in chosen:
                tessel_results.append(compile_tessel(c, f"hip:{chip}", problems[c.key][0]))
    finally:
        knobs.target, knobs.cache_dir = saved
    rows = []
    for c, t, s in zip(chosen, triton_results, tessel_results):
        for compiler, r in (("triton", t), ("tessel", s)):
            row = {"kernel": c.label, "arch": chip, "compiler": compiler}
            if "error" in r:
                row["error"] = r["error"]
            else:
                facts = amdgcn_facts(r["amdgcn"])
                row.update(facts, seconds=r["seconds"], lds=r["shared"] + _field(r["amdgcn"], "group_segment_fixed_size"))
                row.update(simulate(c, r, *problems[c.key]))
            rows.append(row)
    return rows, version


def simulate(case: Any, compiled: dict, args: list[Any], check: Any) -> dict:
    """The kernel run by the simulator's AMDGCN front end on the case's random inputs: wave instructions, MFMA
    instructions executed, and whether the result matches numpy."""
    from tessel import gpusim

    code = compiled["amdgcn"]
    name = re.search(r"\.amdhsa_kernel\s+(\S+)", code).group(1)
    explicit = len([k for k in re.findall(r"\.value_kind:\s+(\S+)", code) if not k.startswith("hidden_")])
    run_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    padded = run_args + [None] * max(0, explicit - len(run_args))  # Triton's scratch pointers
    num_warps = compiled.get("num_warps") or case.num_warps
    try:
        c = gpusim.launch(code, name, case.grid, num_warps=num_warps, shared_bytes=compiled["shared"], args=padded)
    except gpusim.SimulatorError as e:
        return {"check": f"simulator: {str(e).splitlines()[0][:200]}"}
    return {"check": check(run_args) or "ok", "wave_instructions": c["warp_instructions"],
            "mfma_executed": c["inst_tensor_core"],
            "lds_conflicts": c["shared_load_bank_conflicts"] + c["shared_store_bank_conflicts"]}


class AmdStaticReport:
    """The rows of one run, as `python -m bench` prints and saves every benchmark's."""
    name = "gpu_static_amd"

    def __init__(self, rows: list[dict], version: str):
        self.rows, self.version = rows, version

    def print_table(self) -> None:
        head = ["kernel", "arch", "compiler"] + [c[0] for c in COLUMNS]
        lines = []
        for r in self.rows:
            cells = [r["kernel"], r["arch"], r["compiler"]]
            if "error" in r:
                cells.append(f"cannot compile: {r['error']}")
            else:
                cells += [fmt.format(r[key]) if r.get(key) is not None else "-" for _, key, fmt in COLUMNS]
            lines.append(cells)
        widths = [max(len(h), *(len(c[j]) for c in lines if len(c) == len(head))) for j, h in enumerate(head)]
        print(f"\nAMD static: Triton {self.version} vs Tessel, same kernel sources, compiled for "
              f"{self.rows[0]['arch']}; sim: run by the simulator's AMDGCN front end on the same random inputs")
        print("  ".join(h.rjust(w) for h, w in zip(head, widths)))
        for cells in lines:
            print("  ".join(c.rjust(w) for c, w in zip(cells, widths)))

    def save(self, out_dir: Path, env: dict, quick: bool, plot: bool = False) -> list[Path]:
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / f"{self.name}_{self.rows[0]['arch']}.json"
        path.write_text(json.dumps({"environment": env, "quick": quick, "triton": self.version, "rows": self.rows},
                                   indent=2) + "\n")
        return [path]


def run(quick: bool) -> AmdStaticReport:
    """The benchmark as `python -m bench` runs it: every kernel for gfx942."""
    return AmdStaticReport(*compare(quick=quick))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.gpu_static_amd", description=__doc__.splitlines()[0])
    parser.add_argument("--chip", default="gfx942", choices=["gfx90a", "gfx942", "gfx950"])
    parser.add_argument("--only", nargs="+", choices=AMD_KEYS, default=None, metavar="KERNEL")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR, help="directory for the JSON result")
    args = parser.parse_args(argv)
    from .common import environment

    start = time.perf_counter()
    report = AmdStaticReport(*compare(args.only, args.chip))
    report.print_table()
    for path in report.save(args.out, environment(), quick=False):
        print(f"wrote {path}")
    print(f"{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
