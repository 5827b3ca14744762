"""Guarantees of the CPU backend beyond numerics: the thread-pool knob, resource
limits reported at compile time, and kernels whose undefined integer behaviour must
not take the process down."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tessel
import tessel.language as tl


@pytest.fixture(autouse=True)
def _cpu_target(monkeypatch):
    """These are the CPU backend's own guarantees: they run on the CPU whatever target the suite runs on."""
    monkeypatch.setattr(tessel.knobs, "target", "cpu")
    monkeypatch.setenv("TESSEL_TARGET", "cpu")


def _run_python(tmp_path, code: str, **env: str) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter (so a crash or an env knob stays there).
    The code goes to a file: @jit reads kernels' source from it."""
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    full_env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), **env)
    return subprocess.run([sys.executable, str(script)], env=full_env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("threads", ["1", "3"])
def test_num_threads_knob(tmp_path, threads):
    proc = _run_python(tmp_path, """
        import numpy as np, tessel, tessel.language as tl
        from tessel import _C

        @tessel.jit
        def fill(out, n, B: tl.constexpr):
            offs = tl.program_id(0) * B + tl.arange(0, B)
            tl.store(out + offs, offs, mask=offs < n)

        out = np.zeros(10_000, np.int32)
        fill[(tessel.cdiv(out.size, 64),)](out, out.size, B=64)
        assert (out == np.arange(out.size)).all()
        print(_C.num_threads())
    """, TESSEL_NUM_THREADS=threads)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [threads]


@tessel.jit
def _huge_block_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs)
    w = tl.exp(v)
    tl.store(x_ptr + offs, w * w + v)


def test_block_buffers_beyond_the_stack_are_a_compile_error():
    x = np.zeros(2**20, np.float32)
    with pytest.raises(Exception, match=r"KiB of block buffers per program.*use smaller blocks"):
        _huge_block_kernel[(1,)](x, BLOCK=2**20)


def test_integer_division_by_zero_does_not_crash(tmp_path):
    # The result is undefined (as in Triton); the process must survive it.
    proc = _run_python(tmp_path, """
        import numpy as np, tessel, tessel.language as tl

        @tessel.jit
        def div(x, y, q, r, B: tl.constexpr):
            offs = tl.arange(0, B)
            a = tl.load(x + offs)
            b = tl.load(y + offs)
            tl.store(q + offs, a // b)
            tl.store(r + offs, a % b)

        x = np.array([7, -7, -2**31, 5] * 4, np.int32)
        y = np.array([0, 0, -1, 2] * 4, np.int32)
        q = np.zeros_like(x); r = np.zeros_like(x)
        div[(1,)](x, y, q, r, B=16)
        assert q[3] == 2 and r[3] == 1, (q, r)
        print("survived")
    """)
    assert proc.returncode == 0, proc.stderr
    assert "survived" in proc.stdout


@tessel.jit
def _doubling_kernel(x_ptr, out_ptr, DEPTH: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    i = offs
    for _ in tl.static_range(DEPTH):
        i = (i + i) % 7  # each value used twice by the next: 2**DEPTH paths through the expression
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + i)


def test_shared_subexpressions_compile_in_linear_time():
    # Before shared subexpressions were emitted once, depth 24 would not finish compiling.
    x = np.arange(16, dtype=np.int32)
    out = np.zeros_like(x)
    _doubling_kernel[(1,)](x, out, DEPTH=24, BLOCK=16)
    i = np.arange(16)
    for _ in range(24):
        i = (i + i) % 7
    np.testing.assert_array_equal(out, x + i)


@tessel.jit
def _divide_kernel(x_ptr, y_ptr, fast_ptr, exact_ptr, sum_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    s = tl.sum(tl.load(y_ptr + offs), axis=0)
    tl.store(sum_ptr, s)
    tl.store(fast_ptr + offs, x / s)
    tl.store(exact_ptr + offs, tl.div_rn(x, s))


def test_division_rounding(rand):
    x = rand(256, np.float32)
    y = rand(256, np.float32, low=1, high=2)
    fast = np.zeros_like(x)
    exact = np.zeros_like(x)
    s = np.zeros(1, np.float32)  # the kernel's sum (its summation order is its own)
    _divide_kernel[(1,)](x, y, fast, exact, s, BLOCK=256)
    np.testing.assert_allclose(s[0], y.sum(dtype=np.float64), rtol=1e-5)
    # div_rn is IEEE division: bit-exact.
    np.testing.assert_array_equal(exact, x / s[0])
    # `/` may multiply by the reciprocal: within 2 ulp.
    np.testing.assert_array_max_ulp(fast, exact, maxulp=2)


def test_launch_in_a_forked_child(tmp_path):
    # The parent's pool threads do not survive fork(): the child must still run grids (inline), not hang.
    proc = _run_python(tmp_path, """
        import multiprocessing as mp
        import numpy as np
        import tessel
        import tessel.language as tl

        @tessel.jit
        def fill(out, n, B: tl.constexpr):
            offs = tl.program_id(0) * B + tl.arange(0, B)
            tl.store(out + offs, offs * 2, mask=offs < n)

        def child(q):
            out = np.zeros(5000, np.int32)
            fill[(tessel.cdiv(5000, 64),)](out, 5000, B=64)
            q.put(bool((out == 2 * np.arange(5000)).all()))

        out = np.zeros(5000, np.int32)
        fill[(tessel.cdiv(5000, 64),)](out, 5000, B=64)  # the pool's threads exist now
        ctx = mp.get_context("fork")
        q = ctx.Queue()
        p = ctx.Process(target=child, args=(q,))
        p.start()
        print(q.get(timeout=60))
        p.join(timeout=60)
        print(p.exitcode)
    """, TESSEL_NUM_THREADS="2")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "0"]
