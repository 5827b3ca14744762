"""`tessel.testing`: timing kernels (`do_bench`), benchmark tables and plots (`perf_report`, `Benchmark`) and
tolerant comparison (`assert_close`), with Triton's `triton.testing` API. On the targets that run kernels in this
process (cpu, sim) times are wall-clock milliseconds measured on the host: a launch returns when the kernel has
finished. On a cuda target, where launches return at once, CUDA events around each call time the GPU's work, and
the L2 cache is flushed before each call, as Triton does."""
from __future__ import annotations

import csv
import gc
import importlib.util
import math
import os
import statistics
import sys
import time
from typing import Any, Callable, Sequence

_RETURN_MODES = ("min", "max", "mean", "median", "all")


def _quantiles(times: Sequence[float], quantiles: Sequence[float]) -> list[float]:
    """Linear interpolation between the closest ranks (numpy's default method)."""
    ordered = sorted(times)
    result = []
    for q in quantiles:
        if not 0 <= q <= 1:
            raise ValueError(f"quantiles must be in [0, 1], got {q}")
        position = q * (len(ordered) - 1)
        low, high = math.floor(position), math.ceil(position)
        result.append(ordered[low] + (ordered[high] - ordered[low]) * (position - low))
    return result


def do_bench(fn: Callable[[], Any], warmup: float = 25, rep: float = 100, grad_to_none: Sequence[Any] | None = None,
             quantiles: Sequence[float] | None = None, return_mode: str = "mean") -> float | list[float]:
    """The run time of `fn()` in milliseconds.

    One call's time is estimated first; then `fn` runs for about `warmup` ms untimed and about `rep` ms timed, one
    measurement per call. Returns the `quantiles` of the measurements when given (a list; a single number for a
    single quantile, as Triton does), otherwise their `return_mode`: "min", "max", "mean", "median", or "all" (the
    list of every measurement). `grad_to_none`: tensors whose `.grad` is reset before each call, so that a backward
    pass does not accumulate into it.

    On a cuda target (with torch driving the GPU) each call is timed by CUDA events on the current stream, after a
    256 MB write that flushes the L2 cache, as Triton times it. Elsewhere no cache is flushed between calls: a CPU
    kernel is timed with the data its previous call left in the caches, as in a loop over batches.
    """
    if return_mode not in _RETURN_MODES:
        raise ValueError(f"return_mode must be one of {', '.join(_RETURN_MODES)}, got {return_mode!r}")
    torch = _gpu_torch()
    times = _gpu_times(torch, fn, warmup, rep, grad_to_none) if torch else _host_times(fn, warmup, rep, grad_to_none)
    if quantiles is not None:
        result = _quantiles(times, quantiles)
        return result[0] if len(result) == 1 else result
    if return_mode == "all":
        return times
    return {"min": min, "max": max, "mean": statistics.fmean, "median": statistics.median}[return_mode](times)


def _gpu_torch() -> Any:
    """torch, when the current target runs on a GPU (cuda) and torch drives one; else None."""
    from .knobs import knobs
    from .runtime import driver
    if not driver.runs_on_device(knobs.target):
        return None
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def _gpu_times(torch: Any, fn: Callable[[], Any], warmup: float, rep: float,
               grad_to_none: Sequence[Any] | None) -> list[float]:
    """Milliseconds of each call on the GPU, from CUDA events recorded around it on the current stream."""
    fn()  # the first call compiles and touches the memory
    torch.cuda.synchronize()
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")  # larger than any L2 cache
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        flush.zero_()
        fn()
    end.record()
    torch.cuda.synchronize()
    estimate_ms = max(start.elapsed_time(end) / 5, 1e-6)
    n_warmup = max(1, int(warmup / estimate_ms))
    n_repeat = max(1, int(rep / estimate_ms))
    for _ in range(n_warmup):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    for i in range(n_repeat):
        if grad_to_none is not None:
            for tensor in grad_to_none:
                tensor.grad = None
        flush.zero_()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


def _host_times(fn: Callable[[], Any], warmup: float, rep: float,
                grad_to_none: Sequence[Any] | None) -> list[float]:
    """Milliseconds of each call, wall-clock (launches return when the kernel has finished)."""
    fn()  # the first call compiles and touches the memory
    start = time.perf_counter()
    for _ in range(5):
        fn()
    estimate_ms = max((time.perf_counter() - start) * 1e3 / 5, 1e-6)
    n_warmup = max(1, int(warmup / estimate_ms))
    n_repeat = max(1, int(rep / estimate_ms))
    for _ in range(n_warmup):
        fn()
    times = []
    # A garbage collection inside a timed call would be charged to the kernel (timeit disables it too).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(n_repeat):
            if grad_to_none is not None:
                for tensor in grad_to_none:
                    tensor.grad = None
            start = time.perf_counter()
            fn()
            times.append((time.perf_counter() - start) * 1e3)
    finally:
        if gc_was_enabled:
            gc.enable()
    return times


def _as_numpy(value: Any) -> Any:
    import numpy as np
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":  # numpy has no bfloat16: compare its exact fp32 values
            value = value.float()
        return value.numpy()
    array = np.asarray(value)
    if array.dtype.kind not in "biufc":  # e.g. ml_dtypes' bfloat16 or fp8: compare their exact fp32 values
        array = array.astype(np.float32)
    return array


def assert_close(x: Any, y: Any, atol: float | Callable[[Any], float] | None = None,
                 rtol: float | Callable[[Any], float] | None = None, err_msg: str = "") -> None:
    """Asserts |x - y| <= atol + rtol * |y| everywhere (NaNs match NaNs), for numpy arrays, torch tensors (on any
    device), lists and scalars. The defaults are Triton's: atol 1e-2 and rtol 0 whatever the dtype; either may be a
    function of x's dtype. The error gives the number of mismatches and the largest error, where it is, and the two
    values there."""
    import numpy as np
    dtype = getattr(x, "dtype", None)
    atol = 1e-2 if atol is None else atol
    rtol = 0.0 if rtol is None else rtol
    atol = atol(dtype) if callable(atol) else atol
    rtol = rtol(dtype) if callable(rtol) else rtol
    a, b = _as_numpy(x), _as_numpy(y)
    prefix = f"{err_msg}: " if err_msg else ""
    if a.shape != b.shape and a.size != 1 and b.size != 1:
        raise AssertionError(f"{prefix}shapes differ: {a.shape} vs {b.shape}")
    close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return
    a, b = np.broadcast_arrays(a, b)
    close = np.broadcast_to(close, a.shape)
    with np.errstate(invalid="ignore", over="ignore"):
        error = np.abs(a.astype(np.float64) - b.astype(np.float64))
        # A mismatch involving NaN or inf has an infinite (or NaN) error: make sure the worst one is reported.
        error = np.where(close, 0.0, np.nan_to_num(error, nan=np.inf))
    worst = np.unravel_index(np.argmax(error), error.shape) if error.ndim else ()
    where = f" at index {tuple(int(i) for i in worst)}" if error.ndim else ""
    mismatched = int((~close).sum())
    raise AssertionError(f"{prefix}not close (atol={atol}, rtol={rtol}): {mismatched} of {close.size} elements "
                         f"differ; largest error {error[worst]:.6g}{where}: {a[worst]!r} vs {b[worst]!r}")


class Benchmark:
    """One table (and plot) of `perf_report`: the function is evaluated for every value of the x arguments
    (`x_names`, `x_vals`: scalars shared by all x names, or one tuple per point) and, on each, for every value of
    `line_arg` (`line_vals`, shown as `line_names`); `args` are passed unchanged. `styles`: (color, line style) per
    line."""

    def __init__(self, x_names: Sequence[str], x_vals: Sequence[Any], line_arg: str, line_vals: Sequence[Any],
                 line_names: Sequence[str], plot_name: str, args: dict[str, Any], xlabel: str = "",
                 ylabel: str = "", x_log: bool = False, y_log: bool = False,
                 styles: Sequence[tuple[str, str]] | None = None) -> None:
        self.x_names = list(x_names)
        self.x_vals = list(x_vals)
        self.line_arg = line_arg
        self.line_vals = list(line_vals)
        self.line_names = list(line_names)
        self.plot_name = plot_name
        self.args = dict(args)
        self.xlabel = xlabel
        self.ylabel = ylabel
        self.x_log = x_log
        self.y_log = y_log
        self.styles = styles


class Mark:
    """A function marked by `perf_report`: call `.run()` to evaluate its benchmarks."""

    def __init__(self, fn: Callable[..., Any], benchmarks: Benchmark | Sequence[Benchmark]) -> None:
        self.fn = fn
        self.benchmarks = benchmarks

    def run(self, show_plots: bool = False, print_data: bool = False, save_path: str | None = "",
            return_df: bool = False, **kwargs: Any) -> Any:
        """Evaluates every benchmark; prints each table (`print_data`), shows its plot (`show_plots`) and writes
        `<plot_name>.csv` and `<plot_name>.png` under `save_path`. Plots need matplotlib and are skipped, with a note,
        without it. `kwargs` are passed to the function. `return_df` returns the tables as pandas DataFrames (one,
        or a list for a list of benchmarks)."""
        single = isinstance(self.benchmarks, Benchmark)
        benchmarks = [self.benchmarks] if single else list(self.benchmarks)
        if save_path:
            os.makedirs(save_path, exist_ok=True)
        tables = [self._run(bench, show_plots, print_data, save_path, kwargs) for bench in benchmarks]
        if not return_df:
            return None
        try:
            import pandas
        except ImportError as e:
            raise ImportError("perf_report's run(return_df=True) needs pandas") from e
        frames = [pandas.DataFrame(rows, columns=columns) for columns, rows in tables]
        return frames[0] if single else frames

    def _run(self, bench: Benchmark, show_plots: bool, print_data: bool, save_path: str | None,
             kwargs: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
        labels = [f"{name} ({bench.ylabel})" if bench.ylabel else name for name in bench.line_names]
        rows, lows, highs = [], [], []
        for x in bench.x_vals:
            xs = list(x) if isinstance(x, (list, tuple)) else [x] * len(bench.x_names)
            if len(xs) != len(bench.x_names):
                raise ValueError(f"benchmark {bench.plot_name!r}: x value {x!r} does not give one value for each of "
                                 f"{bench.x_names}")
            means, low, high = [], [], []
            for line in bench.line_vals:
                result = self.fn(**dict(zip(bench.x_names, xs)), **{bench.line_arg: line}, **bench.args, **kwargs)
                # A function may return one number, or (mean, min, max) to shade the spread on the plot.
                mean, lo, hi = result if isinstance(result, (list, tuple)) else (result, None, None)
                means.append(mean)
                low.append(lo)
                high.append(hi)
            rows.append(xs + means)
            lows.append(low)
            highs.append(high)
        columns = bench.x_names + labels
        if print_data:
            print(f"{bench.plot_name}:")
            print(_format_table(columns, rows))
        if save_path:
            with open(os.path.join(save_path, f"{bench.plot_name}.csv"), "w", newline="") as f:
                writer = csv.writer(f)
                writer.writerow(columns)
                writer.writerows(rows)
        if bench.plot_name and (show_plots or save_path):
            _plot(bench, labels, rows, lows, highs, show_plots, save_path)
        return columns, rows


def _format_table(columns: list[str], rows: list[list[Any]]) -> str:
    cells = [[f"{v:.6g}" if isinstance(v, float) else str(v) for v in row] for row in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(columns, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(lines)


def _plot(bench: Benchmark, labels: list[str], rows: list[list[Any]], lows: list[list[Any]],
          highs: list[list[Any]], show_plots: bool, save_path: str | None) -> None:
    if importlib.util.find_spec("matplotlib") is None:
        print(f"perf_report: matplotlib is not installed; no plot for {bench.plot_name!r}", file=sys.stderr)
        return
    if show_plots:
        import matplotlib.pyplot as plt
        figure = plt.figure()
    else:
        # Saving only: a figure outside pyplot needs no GUI backend and leaves pyplot's global state alone.
        from matplotlib.figure import Figure
        figure = Figure()
    axes = figure.add_subplot()
    n_x = len(bench.x_names)
    xs = [row[0] for row in rows]  # several x names: the first one is the axis
    for i, label in enumerate(labels):
        color, style = bench.styles[i] if bench.styles else (None, None)
        axes.plot(xs, [row[n_x + i] for row in rows], label=label, color=color, ls=style)
        low, high = [r[i] for r in lows], [r[i] for r in highs]
        if all(v is not None for v in low + high):
            axes.fill_between(xs, low, high, alpha=0.15, color=color)
    axes.legend()
    axes.set_xlabel(bench.xlabel or bench.x_names[0])
    axes.set_ylabel(bench.ylabel)
    axes.set_xscale("log" if bench.x_log else "linear")
    axes.set_yscale("log" if bench.y_log else "linear")
    if save_path:
        figure.savefig(os.path.join(save_path, f"{bench.plot_name}.png"))
    if show_plots:
        plt.show()
        plt.close(figure)


def perf_report(benchmarks: Benchmark | Sequence[Benchmark]) -> Callable[[Callable[..., Any]], Mark]:
    """Decorator: marks a function `f(**x_args, line_arg=value, **args) -> number or (mean, min, max)` for
    benchmarking; `f.run(...)` evaluates it over each Benchmark's grid."""
    return lambda fn: Mark(fn, benchmarks)
