"""Differential fuzzer: random Triton kernels run on tessel and checked against a numpy model of Triton's semantics.

    python -m tessel.tools.fuzz --seed S --count N [--minimize] [--timeout T] [--oracle triton] [--start I]

Kernel i of seed S is deterministic (tessel/tools/fuzz_gen.py): element-wise trees over every operator and dtype,
casts, 2-D broadcasting, reductions over every axis (keep_dims), tl.dot (fp32/fp16/bf16/int8), `for` loops with
carried values, program ids, masked loads, and loads/stores that alias inside one program (through transposed,
reshaped, broadcast views). The expected memory comes from the model in fuzz_ir.py, written from Triton 3.6's
language definition, never from tessel. bf16 buffers are passed as torch CPU tensors (numpy has no bf16); without
torch, bf16 is left out of the dtypes and the run says so.

Buffers of every float type may hold subnormals ("tiny" data), and kernels scale values into the subnormal range
before arithmetic, take log/sqrt of subnormals and exp of arguments whose results are subnormal: no target may flush
them to zero.

Kernels run in a worker subprocess (a crash, a segfault or a hang is reported with the kernel's source; the worker is
restarted) with `--timeout` seconds per kernel (compile + run). Each failure prints the seed, the index, a one-line
replay command, the kind (mismatch, error, crash, timeout), the expected vs got elements and the source; `--minimize`
first shrinks the kernel (drops statements, replaces subexpressions by their operands or literals, single program, one
loop trip) while it still fails the same way. The exit status is 1 if any kernel failed.

`--oracle triton` runs the same kernels with OpenAI Triton's interpreter (TRITON_INTERPRET=1, torch CPU tensors)
instead of tessel: a check of the model itself.

A longer run (2000 kernels: about 4 minutes on 2 cores, plus a few seconds per failure to minimize):

    TESSEL_NUM_THREADS=1 python -m tessel.tools.fuzz --seed 1 --count 2000 --minimize
"""
from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import os
import pickle
import select
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

from .fuzz_ir import (EMIN, MANT, NP, TINY, Lit, Model, ModelTypeError, Node, Program, Reject, is_float, render_program, unit)

# ------------------------------------------------------------------------------------------------- in the worker


def _torch():
    try:
        import torch
        return torch
    except ImportError:
        return None


def _args(prog: Program, data, flavor: str):
    torch = _torch()
    out = []
    for (dt, _), a in zip(prog.buffers, data):
        if flavor == "triton":
            if dt == "bf16":
                out.append(torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16))
            else:
                out.append(torch.from_numpy(a.copy()))
        elif dt == "bf16":
            if torch is None:
                raise RuntimeError("bf16 needs torch")
            out.append(torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16))
        else:
            out.append(a.copy())
    return out


def _readback(x) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    torch = _torch()
    if x.dtype == torch.bfloat16:
        return x.float().numpy()
    return x.numpy()


def compare(prog: Program, model: Model, got: list) -> list[str]:
    """Differences between the buffers a kernel left and the model's: [] when they agree."""
    problems = []
    for b, ((dt, _), g) in enumerate(zip(prog.buffers, got)):
        ref = model.mem[b].reshape(-1)
        err = model.memerr[b].reshape(-1)
        g = np.asarray(g).reshape(-1)
        if is_float(dt):
            r64, g64 = ref.astype(np.float64), g.astype(np.float64)
            tol = 2 * err + 2 * unit(dt) * np.abs(r64)
            # Below 2**EMIN the spacing of floats is TINY, not relative: an inexact result (its bound above fval's
            # baseline) may be a subnormal or two away (a library function's last-place error, then the rounding
            # to the subnormal's spacing). Exact ones must match exactly, flushed or not. The bounds of fp64
            # subnormals underflow in float64 itself, so every one of them may be inexact. No absolute tolerance
            # beyond that: a flushed fp64 subnormal must show.
            inexact = err > 2.0**-51 * np.abs(r64)
            if dt == "fp64":
                inexact |= np.abs(r64) < 2.0**EMIN[dt]
            tol = tol + np.where(inexact, 2 * TINY[dt], 0.0)
            with np.errstate(invalid="ignore"):
                bad = ~(np.abs(g64 - r64) <= tol)
        else:
            bad = g.astype(NP[dt]) != ref.astype(NP[dt])
        if np.any(bad):
            idx = np.flatnonzero(bad)
            shown = ", ".join(f"[{i}] expected {ref[i]!r} got {g[i]!r}" for i in idx[:6])
            problems.append(f"buffer b{b} ({dt}): {len(idx)} of {len(ref)} elements differ: {shown}")
    return problems


_ERR = None


def _native_stderr() -> str:
    """What native code (LLVM's JIT) wrote to fd 2 since the last call."""
    if _ERR is None:
        return ""
    os.lseek(_ERR, 0, 0)
    text = os.read(_ERR, 1 << 16).decode(errors="replace").strip()
    os.ftruncate(_ERR, 0)
    os.lseek(_ERR, 0, 0)
    return text[-1000:]


def run_one(prog: Program, model: Model, flavor: str, workdir: str, tag: str) -> dict:
    _native_stderr()
    src = render_program(prog, flavor)
    path = os.path.join(workdir, f"fz_{tag}.py")
    with open(path, "w") as f:
        f.write(src)
    try:
        spec = importlib.util.spec_from_file_location(f"fz_{tag}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        data = [d.copy() for d in model.initial]
        args = _args(prog, data, flavor)
        mod.kernel[(prog.P,)](*args)
        got = [_readback(a) for a in args]
    except Exception as e:  # a kernel Triton accepts must compile and run
        tb = traceback.format_exc(limit=-3)
        said = _native_stderr()
        return {"kind": "error", "detail": f"{type(e).__name__}: {str(e)[:2000]}" + (f"\n(stderr: {said})" if said else ""),
                "trace": tb[-3000:]}
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    problems = compare(prog, model, got)
    return {"kind": "mismatch", "detail": "\n".join(problems)} if problems else {"kind": "ok"}


def worker_main(flavor: str) -> None:
    """Reads jobs (JSON lines) on stdin, answers one JSON line each on stdout."""
    from .fuzz_gen import generate, set_no_bf16
    if flavor == "triton" or _torch() is None:
        set_no_bf16()
    workdir = tempfile.mkdtemp(prefix="tessel-fuzz-")
    sys.path.insert(0, workdir)
    global _ERR
    out = sys.stdout
    sys.stdout = sys.stderr  # anything a kernel prints must not corrupt the protocol
    # fd 2 goes to a scratch file, read back per kernel: native diagnostics land in the failure's report
    _ERR = os.open(os.path.join(workdir, "stderr"), os.O_RDWR | os.O_CREAT | os.O_TRUNC)
    os.dup2(_ERR, 2)
    for line in sys.stdin:
        job = json.loads(line)
        t0 = time.time()
        try:
            if "pickle" in job:
                with open(job["pickle"], "rb") as f:
                    prog = pickle.load(f)
                try:
                    model = Model(prog).run()
                except (Reject, ModelTypeError) as e:
                    res = {"kind": "reject", "detail": str(e)}
                    out.write(json.dumps(res) + "\n")
                    out.flush()
                    continue
                tag = f"m{os.getpid()}_{job.get('n', 0)}"
            else:
                prog, model = generate(job["seed"], job["index"])
                tag = f"{job['seed']}_{job['index']}"
            res = run_one(prog, model, flavor, workdir, tag)
        except Exception as e:
            res = {"kind": "generator", "detail": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-3000:]}
        res["seconds"] = round(time.time() - t0, 3)
        out.write(json.dumps(res) + "\n")
        out.flush()


# ------------------------------------------------------------------------------------------------- in the parent


class Worker:
    """A worker subprocess, restarted after a crash or a timeout."""

    def __init__(self, flavor: str = "tessel", timeout: float = 60.0) -> None:
        self.flavor, self.timeout, self.proc = flavor, timeout, None
        self.cache = tempfile.mkdtemp(prefix="tessel-fuzz-cache-")
        self.errfile = None

    def _start(self) -> None:
        env = dict(os.environ)
        env.setdefault("TESSEL_NUM_THREADS", "1")
        env["TESSEL_CACHE_DIR"] = self.cache  # thousands of one-off kernels stay out of the user's cache
        if self.flavor == "triton":
            env["TRITON_INTERPRET"] = "1"
        pkg_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = pkg_root + os.pathsep + env.get("PYTHONPATH", "")
        self.errfile = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "tessel.tools.fuzz", "--worker", "--oracle", self.flavor],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errfile, env=env)

    def _stderr_tail(self) -> str:
        try:
            self.errfile.seek(0)
            return self.errfile.read().decode(errors="replace")[-3000:]
        except Exception:
            return ""

    def stop(self) -> None:
        if self.proc is not None:
            try:
                self.proc.kill()
                self.proc.wait(5)
            except Exception:
                pass
            self.proc = None

    def run(self, job: dict) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        try:
            self.proc.stdin.write((json.dumps(job) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        fd = self.proc.stdout.fileno()
        deadline = time.time() + self.timeout
        buf = b""
        while True:
            left = deadline - time.time()
            if left <= 0:
                self.stop()
                return {"kind": "timeout", "detail": f"no answer within {self.timeout:g} s (compile + run)"}
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                code = self.proc.wait()
                tail = self._stderr_tail()
                self.proc = None
                return {"kind": "crash", "detail": f"worker died with status {code}", "trace": tail}
            buf += chunk
            if buf.endswith(b"\n"):
                return json.loads(buf.decode())


def _same_failure(a: dict, b: dict) -> bool:
    if a["kind"] != b["kind"]:
        return False
    if a["kind"] == "error":
        return a["detail"].split(":")[0] == b["detail"].split(":")[0]
    return True


# ------------------------------------------------------------------------------------------------- minimization

def _node_variants(n: Node):
    """Smaller replacements for n: each operand, a literal, then n with one operand simplified."""
    for k in n.kids:
        yield k
    if n.op not in ("lit", "name", "arange", "pid", "ptr"):
        yield Lit(1)
        yield Lit(1.0)
    if n.op == "load" and len(n.kids) > 1:
        yield Node("load", [n.kids[0]])
    if n.op == "dot" and len(n.kids) > 2:
        yield n.with_kids(n.kids[:2])
    for i, k in enumerate(n.kids):
        for v in _node_variants(k):
            kids = list(n.kids)
            kids[i] = v
            yield n.with_kids(kids)


def _stmt_variants(stmts: list):
    for i in range(len(stmts)):
        yield stmts[:i] + stmts[i + 1:]
    for i, s in enumerate(stmts):
        if s[0] == "for":
            if s[2] > 1:
                yield stmts[:i] + [("for", s[1], 1, s[3], s[4])] + stmts[i + 1:]
            for body in _stmt_variants(s[3]):
                yield stmts[:i] + [("for", s[1], s[2], body, s[4])] + stmts[i + 1:]
        elif s[0] == "store":
            if s[3] is not None:
                yield stmts[:i] + [("store", s[1], s[2], None)] + stmts[i + 1:]
            for v in _node_variants(s[2]):
                yield stmts[:i] + [("store", s[1], v, s[3])] + stmts[i + 1:]
        else:
            for v in _node_variants(s[2]):
                yield stmts[:i] + [("assign", s[1], v)] + stmts[i + 1:]


def _program_variants(p: Program):
    if p.P > 1:
        q = copy.copy(p)
        q.P = 1
        yield q
    for stmts in _stmt_variants(p.stmts):
        q = copy.copy(p)
        q.stmts = stmts
        yield q


def minimize(prog: Program, failure: dict, worker: Worker, budget_s: float = 180.0, log=print) -> tuple:
    """Greedy shrinking: keep the first smaller variant that still fails the same way, until none does."""
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="tessel-fuzz-min-")
    n = 0
    tried = 0
    improved = True
    while improved and time.time() - t0 < budget_s:
        improved = False
        for cand in _program_variants(prog):
            if time.time() - t0 > budget_s:
                break
            try:
                Model(cand).run()
            except (Reject, ModelTypeError, Exception):
                continue
            n += 1
            path = os.path.join(tmp, f"c{n}.pkl")
            with open(path, "wb") as f:
                pickle.dump(cand, f)
            res = worker.run({"pickle": path, "n": n})
            tried += 1
            os.unlink(path)
            if _same_failure(res, failure):
                prog, failure = cand, res
                improved = True
                break
    log(f"  (minimization: {tried} candidates run in {time.time() - t0:.0f} s)")
    return prog, failure


# ---------------------------------------------------------------------------------------------------------- CLI

def replay_command(seed: int, index: int, flavor: str = "tessel") -> str:
    """The one line that runs kernel `index` of `seed` again (on this run's target) and shrinks it."""
    target = os.environ.get("TESSEL_TARGET", "").strip()
    oracle = " --oracle triton" if flavor == "triton" else ""
    return (f"{'TESSEL_TARGET=' + target + ' ' if target else ''}python -m tessel.tools.fuzz --seed {seed} "
            f"--index {index} --minimize{oracle}")


def report(seed: int, index: int, prog: Program, res: dict, flavor: str = "tessel") -> str:
    lines = [f"=== FAIL seed={seed} index={index} kind={res['kind']} grid=({prog.P},) "
             f"buffers={[b[0] for b in prog.buffers]}", f"replay: {replay_command(seed, index, flavor)}",
             res.get("detail", "")]
    if res.get("trace") and res["kind"] in ("crash", "error", "generator"):
        lines.append(res["trace"].rstrip()[-1500:])
    lines.append("--- kernel source:")
    lines.append(render_program(prog, flavor))
    return "\n".join(lines)


def run_batch(seed: int, indices, timeout: float = 60.0, flavor: str = "tessel", do_minimize: bool = False,
              log=print) -> list[tuple]:
    """Runs kernels `indices` of `seed`; returns [(index, program, result)] for the failures."""
    from .fuzz_gen import generate, set_no_bf16
    if flavor == "triton" or _torch() is None:
        set_no_bf16()
    worker = Worker(flavor, timeout)
    failures = []
    counts: dict[str, int] = {}
    try:
        for i in indices:
            res = worker.run({"seed": seed, "index": i})
            counts[res["kind"]] = counts.get(res["kind"], 0) + 1
            if res["kind"] == "ok":
                continue
            prog, _ = generate(seed, i)
            if do_minimize and res["kind"] != "generator":
                log(f"seed={seed} index={i}: {res['kind']}; minimizing")
                prog, res = minimize(prog, res, worker, log=log)
            log(report(seed, i, prog, res, flavor))
            failures.append((i, prog, res))
    finally:
        worker.stop()
    log(f"seed={seed}: {len(list(indices))} kernels: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return failures


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tessel.tools.fuzz", description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--start", type=int, default=0, help="first kernel index")
    ap.add_argument("--index", type=int, action="append", help="run only these kernel indices")
    ap.add_argument("--minimize", action="store_true")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per kernel (compile + run)")
    ap.add_argument("--oracle", choices=["tessel", "triton"], default="tessel")
    ap.add_argument("--show", action="store_true", help="print the sources of the kernels instead of running them")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        worker_main(a.oracle)
        return 0
    if _torch() is None:
        print("note: torch is not installed: bf16 buffers cannot be passed to kernels")
    indices = a.index or list(range(a.start, a.start + a.count))
    if a.show:
        from .fuzz_gen import generate
        for i in indices:
            prog, _ = generate(a.seed, i)
            print(f"# seed={a.seed} index={i} grid=({prog.P},) buffers={prog.buffers}")
            print(render_program(prog, a.oracle))
        return 0
    failures = run_batch(a.seed, indices, a.timeout, a.oracle, a.minimize)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
