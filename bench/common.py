"""Shared machinery of the benchmarks: timing, the environment record, tables, JSON
results and plots.

Every number a benchmark reports is also reported as a ratio against a peer measured
in the same run (numpy, torch when importable): the machines are shared and noisy, so
an absolute time alone says little.
"""
from __future__ import annotations

import dataclasses
import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Callable

import numpy as np

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def optional_torch():
    """torch if importable (a peer, never a requirement), else None."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(num_threads())
    return torch


def num_threads() -> int:
    """The cores this process may run on: every peer gets all of them."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


@dataclasses.dataclass
class Timing:
    """Seconds per call: median, min and max over `reps` repetitions."""

    median: float
    min: float
    max: float
    reps: int


def measure(fn: Callable[[], object], *, warmup: int = 2, min_reps: int = 5,
            max_reps: int = 200, budget_s: float = 0.5) -> Timing:
    """Time fn() after `warmup` calls (compilation, page faults, caches).

    Repeats at least `min_reps` times and then until `budget_s` has passed or
    `max_reps` is reached, so fast calls get many samples and slow ones a few.
    Kernel launches on the CPU return when the kernel has finished, so wall-clock
    time around the call is the kernel's time plus its launch overhead.
    """
    for _ in range(warmup):
        fn()
    times = []
    deadline = time.perf_counter() + budget_s
    while len(times) < min_reps or (len(times) < max_reps and time.perf_counter() < deadline):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return Timing(statistics.median(times), min(times), max(times), len(times))


def row_shapes(quick: bool, quick_widest: int = 8192) -> list[tuple[int, int]]:
    """Rows x columns of the row benchmarks (softmax, norms, cross-entropy): 4096 rows of 128 to 8192 columns, from
    cache-resident (2 MiB) to several times the last-level cache (128 MiB); with `quick`, small and ragged shapes
    ending in a row of `quick_widest` columns, for the correctness checks."""
    if quick:
        return [(1, 1), (3, 100), (5, 1000), (2, quick_widest)]
    return [(4096, 2**k) for k in range(7, 14)]


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _numpy_blas() -> str:
    # A numpy without OpenBLAS/MKL uses a reference BLAS ~60x slower, a peer no user
    # has: the matmul ratios would be meaningless, so the record says which it is.
    try:
        return np.__config__.CONFIG["Build Dependencies"]["blas"]["name"]
    except (AttributeError, KeyError, TypeError):
        return "unknown"


def environment() -> dict:
    import tessel

    torch = optional_torch()
    return {
        "cpu": _cpu_model(),
        "threads": num_threads(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "numpy": np.__version__,
        "numpy_blas": _numpy_blas(),
        "torch": torch.__version__ if torch else None,
        "tessel": getattr(tessel, "__version__", "unknown"),
    }


class Report:
    """The results of one benchmark: a row per problem size, a column per implementation.

    `metric` is a rate where higher is better (GB/s, GFLOP/s): the work of a row
    (bytes moved, flops) divided by the median time.
    """

    def __init__(self, name: str, metric: str, size_label: str, impls: list[str], *,
                 subject: str = "tessel", scale: float = 1e9):
        self.name = name
        self.metric = metric
        self.size_label = size_label
        self.impls = impls
        self.subject = subject
        self.scale = scale
        self.rows: list[dict] = []
        self.checks: list[str] = []

    def checked(self, size: str) -> None:
        """Record that the subject's result at `size` matched the reference."""
        self.checks.append(size)

    def add(self, size: str, work: float, timings: dict[str, Timing]) -> None:
        rates = {k: work / t.median / self.scale for k, t in timings.items()}
        ratios = {p: rates[self.subject] / rates[p] for p in rates if p != self.subject}
        self.rows.append({
            "size": size,
            "work": work,
            "timings": {k: dataclasses.asdict(t) for k, t in timings.items()},
            "rate": rates,
            "ratio": ratios,
        })

    def print_table(self) -> None:
        if not self.rows:
            print(f"{self.name}: correctness checked for {len(self.checks)} sizes: {', '.join(self.checks)}")
            return
        peers = [p for p in self.impls if p != self.subject]
        headers = [self.size_label] + [f"{i} {self.metric}" for i in self.impls] + [f"vs {p}" for p in peers]
        lines = []
        for row in self.rows:
            cells = [row["size"]]
            cells += [f"{row['rate'][i]:.3g}" for i in self.impls]
            cells += [f"{row['ratio'][p]:.3g}x" for p in peers]
            lines.append(cells)
        widths = [max(len(h), *(len(c[j]) for c in lines)) for j, h in enumerate(headers)]
        print(f"\n{self.name} (median of repetitions; higher is better)")
        print("  ".join(h.rjust(w) for h, w in zip(headers, widths)))
        for cells in lines:
            print("  ".join(c.rjust(w) for c, w in zip(cells, widths)))

    def to_dict(self, env: dict, quick: bool) -> dict:
        return {
            "name": self.name,
            "quick": quick,
            "metric": self.metric,
            "size_label": self.size_label,
            "subject": self.subject,
            "environment": env,
            "checked_sizes": self.checks,
            "rows": self.rows,
        }

    def save(self, out_dir: Path, env: dict, quick: bool, plot: bool) -> list[Path]:
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / f"{self.name}.json"
        path.write_text(json.dumps(self.to_dict(env, quick), indent=2) + "\n")
        written = [path]
        if plot and self.rows:
            png = self._plot(out_dir / f"{self.name}.png")
            if png:
                written.append(png)
        return written

    def _plot(self, path: Path) -> Path | None:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            return None
        fig, ax = plt.subplots(figsize=(8, 4.5))
        x = range(len(self.rows))
        for impl in self.impls:
            ax.plot(x, [r["rate"][impl] for r in self.rows], marker="o", label=impl)
        ax.set_xticks(list(x), [r["size"] for r in self.rows], rotation=45, ha="right")
        ax.set_xlabel(self.size_label)
        ax.set_ylabel(self.metric)
        # Rates span orders of magnitude across sizes (launch overhead at small ones).
        ax.set_yscale("log")
        ax.set_title(self.name)
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        return path
