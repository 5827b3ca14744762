"""Launch costs: the first launch in a new process (warm vs cold kernel cache) and the
dispatch overhead of a warm launch of a tiny kernel (vs a plain Python function call).

Latencies are reported as rates (launches per millisecond, higher is better) so that
they fit the suite's tables; the table also lists the times themselves.
"""
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np

import tessel as triton
import tessel.language as tl

from .common import Report, Timing, measure

FIRST_LAUNCH = textwrap.dedent("""
    import time
    import numpy as np
    import tessel as triton
    import tessel.language as tl

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    x = np.arange(1000, dtype=np.float32)
    out = np.empty_like(x)
    start = time.perf_counter()
    add_kernel[(1,)](x, x, out, x.size, BLOCK=1024)
    elapsed = time.perf_counter() - start
    assert (out == 2 * x).all()
    print(elapsed)
""")


@triton.jit
def tiny_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)


def _plain_function(x_ptr, n, BLOCK):
    return None


def _first_launches(reps: int) -> dict[str, Timing]:
    """Seconds to the end of the first launch in a fresh process, with an empty and with a warm cache."""
    samples: dict[str, list[float]] = {"cold cache": [], "warm cache": []}
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "first_launch.py"
        script.write_text(FIRST_LAUNCH)
        for rep in range(reps):
            cache = Path(tmp) / f"cache{rep}"
            for kind in ("cold cache", "warm cache"):  # the cold run fills the cache the warm run uses
                env = dict(os.environ, TESSEL_CACHE_DIR=str(cache), PYTHONPATH=os.pathsep.join(sys.path))
                out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                                     check=True, timeout=300)
                samples[kind].append(float(out.stdout))
    return {k: Timing(float(np.median(v)), min(v), max(v), len(v)) for k, v in samples.items()}


def run(quick: bool) -> list[Report]:
    x = np.zeros(16, np.float32)
    tiny_kernel[(1,)](x, 16, BLOCK=16)
    np.testing.assert_array_equal(x, np.ones(16, np.float32))

    first = Report("launch_first", "launches/s", "first launch in a new process",
                   ["warm cache", "cold cache"], subject="warm cache", scale=1.0)
    timings = _first_launches(1 if quick else 5)
    first.checked("first launch")
    first.add("vector add", 1.0, timings)

    dispatch = Report("launch_dispatch", "launches/ms", "launch", ["tessel", "python call"], scale=1e3)
    dispatch.checked("tiny kernel")
    if not quick:
        reps = 10_000
        timings = {
            "tessel": measure(lambda: tiny_kernel[(1,)](x, 16, BLOCK=16), warmup=100, min_reps=reps,
                              max_reps=reps, budget_s=0),
            "python call": measure(lambda: _plain_function(x, 16, BLOCK=16), warmup=100, min_reps=reps,
                                   max_reps=reps, budget_s=0),
        }
        dispatch.add("tiny kernel, warm", 1.0, timings)
        print(f"dispatch: tessel {timings['tessel'].median * 1e6:.2f} us per launch, plain Python call "
              f"{timings['python call'].median * 1e6:.2f} us (median of {reps})")
    for kind, t in first.rows[0]["timings"].items() if first.rows else ():
        print(f"first launch, {kind}: {t['median'] * 1e3:.1f} ms (median of {t['reps']} processes)")
    return [first, dispatch]
