"""Run Tessel's benchmarks.

    python -m bench                 every benchmark at full size: tables, JSON and PNG
                                    plots in bench/results/
    python -m bench --quick         tiny sizes, correctness checks only (for CI)
    python -m bench --only softmax matmul

Each benchmark checks its result against numpy before it times anything; a wrong
result fails the run (exit status 1) and is never timed.
"""
import argparse
import importlib
import sys
import traceback
from pathlib import Path

from .common import RESULTS_DIR, environment

BENCHMARKS = ["vector_add", "softmax", "layer_norm", "rms_norm", "cross_entropy", "matmul", "launch", "gpusim",
              "gpu_static", "gpu_static_amd"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, correctness only")
    parser.add_argument("--only", nargs="+", choices=BENCHMARKS, default=BENCHMARKS, metavar="NAME",
                        help=f"run only these ({', '.join(BENCHMARKS)})")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR, help="directory for JSON and PNG results")
    parser.add_argument("--no-plot", action="store_true", help="skip the PNG plots")
    args = parser.parse_args(argv)

    env = environment()
    print(", ".join(f"{k}: {v}" for k, v in env.items()))
    if env["numpy_blas"] not in ("unknown",) and "openblas" not in env["numpy_blas"].lower() \
            and "mkl" not in env["numpy_blas"].lower():
        print(f"warning: numpy uses BLAS {env['numpy_blas']!r}, not OpenBLAS/MKL: matmul ratios flatter Tessel")

    failed = []
    for name in args.only:
        module = importlib.import_module(f".{name}", __package__)
        try:
            reports = module.run(args.quick)
        except Exception:
            traceback.print_exc()
            print(f"{name}: FAILED")
            failed.append(name)
            continue
        # A benchmark returns one report or several.
        for report in reports if isinstance(reports, list) else [reports]:
            report.print_table()
            for path in report.save(args.out, env, args.quick, plot=not args.no_plot):
                print(f"wrote {path}")
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
        return 1
    print(f"\n{len(args.only)} benchmarks: all results match numpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
