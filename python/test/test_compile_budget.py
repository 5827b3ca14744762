"""Compile time stays bounded on small reductions: tl.argmax over a [32, 1] block once took over 4 minutes to compile
(LLVM's loop vectorizer, handed the whole kernel as the body of the loop over programs, recursed exponentially
through its chain of selects). Every reduction over many small shapes and float types is compiled in a child process
with a budget per kernel that is far above the normal ~0.05 s, so that a regression is a failure, not a hung run."""
import json
import os
import subprocess
import sys
import textwrap

BUDGET_S = 10.0

_SCRIPT = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    import torch
    sys.path.insert(0, sys.argv[1])
    from compile_budget_kernels import KERNELS

    DTYPES = {"fp32": np.dtype(np.float32), "fp16": np.dtype(np.float16), "fp64": np.dtype(np.float64),
              "bf16": torch.bfloat16}
    worst = []
    for dtype_name, dtype in DTYPES.items():
        for op, kernel in KERNELS.items():
            for n in (2, 4, 8, 16, 32, 64):
                for rows, cols, axis in ((n, 1, 0), (1, n, 1), (n, 2, 0), (2, n, 1), (n, n, 0), (n, n, 1)):
                    start = time.perf_counter()
                    kernel.warmup(dtype, np.dtype(np.int32), np.dtype(np.float32), M=rows, N=cols, AXIS=axis)
                    worst.append((time.perf_counter() - start, f"{op} {dtype_name} [{rows}, {cols}] axis {axis}"))
                    print(json.dumps(worst[-1]), flush=True)
""")


def test_small_reductions_compile_within_budget(tmp_path, monkeypatch):
    # The hang this guards against was LLVM's loop vectorizer on the CPU lowering.
    monkeypatch.setenv("TESSEL_TARGET", "cpu")
    # One module per op (a @jit function reads its globals, and constexpr globals are part of its key).
    for op in ("argmax", "argmin", "max", "min", "sum"):
        (tmp_path / f"budget_{op}.py").write_text(textwrap.dedent(f'''
            import tessel as triton
            import tessel.language as tl

            @triton.jit
            def kernel(x_ptr, index_ptr, value_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr):
                m = tl.arange(0, M)
                n = tl.arange(0, N)
                x = tl.load(x_ptr + m[:, None] * N + n[None, :])
                if AXIS == 0:
                    out = n
                else:
                    out = m
                if "{op}" == "argmax" or "{op}" == "argmin":
                    tl.store(index_ptr + out, tl.{op}(x, AXIS))
                else:
                    tl.store(value_ptr + out, tl.{op}(x, AXIS))
        '''))
    (tmp_path / "compile_budget_kernels.py").write_text(
        "import importlib\nKERNELS = {op: importlib.import_module('budget_' + op).kernel "
        "for op in ('argmax', 'argmin', 'max', 'min', 'sum')}\n")
    cache = tmp_path / "cache"  # empty: every kernel is really compiled
    cache.mkdir(mode=0o700)
    env = dict(os.environ, TESSEL_CACHE_DIR=str(cache))
    # The child is killed past the budget of all its kernels together: a hang fails here with what it reached.
    kernels = 4 * 5 * 6 * 6
    try:
        result = subprocess.run([sys.executable, "-c", _SCRIPT, str(tmp_path)], capture_output=True, text=True,
                                timeout=BUDGET_S + kernels * 1.0, env=env)
    except subprocess.TimeoutExpired as e:
        done = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        last = done.strip().splitlines()[-1] if done.strip() else "none"
        raise AssertionError(f"compiling small reductions timed out; last compiled: {last}") from None
    assert result.returncode == 0, result.stderr[-3000:]
    times = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(times) == kernels
    slow = [(t, what) for t, what in times if t > BUDGET_S]
    assert not slow, f"compiles over {BUDGET_S} s: {slow}"
