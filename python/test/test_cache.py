"""The on-disk kernel cache: what recompiles (and what does not), processes racing on one
kernel, damaged entries, unsafe directories, LRU eviction and the command line."""
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import tessel
from tessel import _C, knobs

KERNEL_SOURCE = """
import tessel
import tessel.language as tl

SCALE = tl.constexpr({scale})


@tessel.jit
def helper(x):
    return x * {helper_factor}


@tessel.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n{kernel_extra}
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, helper(x) * SCALE, mask=mask)
"""


@pytest.fixture
def cache_dir(tmp_path):
    """A private cache directory for the test (the knob is restored afterwards)."""
    saved = knobs.cache_dir, knobs.cache_max_bytes
    knobs.cache_dir = tmp_path / "cache"
    yield knobs.cache_dir
    knobs.cache_dir, knobs.cache_max_bytes = saved


@pytest.fixture
def compiles(monkeypatch):
    """Counts the kernels actually compiled (cache misses)."""
    count = [0]
    real = _C.compile

    def counting(*args, **kwargs):
        count[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(_C, "compile", counting)
    return count


_modules = 0


def _load(tmp_path, scale=2, helper_factor=3, kernel_extra=""):
    """Imports a fresh module holding the kernel (a new JITFunction, as in a new process)."""
    global _modules
    _modules += 1
    path = tmp_path / f"kernel_mod_{_modules}.py"
    path.write_text(KERNEL_SOURCE.format(scale=scale, helper_factor=helper_factor, kernel_extra=kernel_extra))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(module, n=100, block=64):
    x = np.arange(n, dtype=np.float32)
    out = np.zeros_like(x)
    module.scale_kernel[(tessel.cdiv(n, block),)](x, out, n, BLOCK=block)
    return x, out


def test_same_kernel_in_a_new_module_is_a_cache_hit(tmp_path, cache_dir, compiles):
    x, out = _run(_load(tmp_path))
    np.testing.assert_array_equal(out, x * 6)
    assert compiles[0] == 1
    x, out = _run(_load(tmp_path))
    np.testing.assert_array_equal(out, x * 6)
    assert compiles[0] == 1  # loaded from disk
    assert len(_C.KernelCache(str(cache_dir)).entries()) == 1


def test_key_changes_recompile(tmp_path, cache_dir, compiles):
    _run(_load(tmp_path))
    assert compiles[0] == 1
    # The kernel's own source.
    _run(_load(tmp_path, kernel_extra="  # a comment in the kernel changes its source"))
    # A @jit function it calls.
    x, out = _run(_load(tmp_path, helper_factor=5))
    np.testing.assert_array_equal(out, x * 10)
    # A constexpr global it reads.
    x, out = _run(_load(tmp_path, scale=7))
    np.testing.assert_array_equal(out, x * 21)
    # A constexpr argument and a specialization (n no longer a multiple of 16).
    module = _load(tmp_path)
    _run(module, block=32)
    _run(module, n=96)
    assert compiles[0] == 6


def test_changing_a_constexpr_global_after_compiling_recompiles(tmp_path, cache_dir, compiles):
    module = _load(tmp_path)
    x, out = _run(module)
    np.testing.assert_array_equal(out, x * 6)
    module.SCALE = tessel.language.constexpr(10)
    x, out = _run(module)
    np.testing.assert_array_equal(out, x * 30)  # not the stale kernel
    assert compiles[0] == 2


def test_nothing_else_recompiles(tmp_path, cache_dir, compiles):
    module = _load(tmp_path)
    _run(module)
    # Other data, other grid sizes: same kernel.
    x = np.random.default_rng(0).random(100).astype(np.float32)
    out = np.zeros_like(x)
    module.scale_kernel[(7,)](x, out, 100, BLOCK=64)
    np.testing.assert_allclose(out, x * 6, rtol=1e-6)
    assert compiles[0] == 1
    # Launch options are compile options (part of the key, as in Triton): a new set compiles once, then is reused;
    # given values equal to the defaults are the default kernel.
    module.scale_kernel[(2,)](x, out, 100, BLOCK=64, num_warps=8, num_stages=2)
    module.scale_kernel[(2,)](x, out, 100, BLOCK=64, num_warps=8, num_stages=2)
    assert compiles[0] == 2
    module.scale_kernel[(7,)](x, out, 100, BLOCK=64, num_warps=4)
    np.testing.assert_allclose(out, x * 6, rtol=1e-6)
    assert compiles[0] == 2


RACE_SCRIPT = """
import sys
import numpy as np
sys.path.insert(0, {dir!r})
import race_kernel
import tessel
x = np.arange(1000, dtype=np.float32)
out = np.zeros_like(x)
race_kernel.scale_kernel[(tessel.cdiv(1000, 128),)](x, out, 1000, BLOCK=128)
assert (out == x * 6).all(), out
print("ok")
"""


def test_processes_racing_on_one_kernel_leave_one_good_entry(tmp_path, cache_dir):
    (tmp_path / "race_kernel.py").write_text(KERNEL_SOURCE.format(scale=2, helper_factor=3, kernel_extra=""))
    script = tmp_path / "race.py"
    script.write_text(RACE_SCRIPT.format(dir=str(tmp_path)))
    env = dict(os.environ, TESSEL_CACHE_DIR=str(cache_dir), PYTHONPATH=os.pathsep.join(sys.path))
    procs = [subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(8)]
    for p in procs:
        stdout, stderr = p.communicate(timeout=300)
        assert p.returncode == 0, stderr
        assert stdout.strip() == "ok"
    entries = _C.KernelCache(str(cache_dir)).entries()
    assert len(entries) == 1
    assert not [p for p in cache_dir.iterdir() if p.name.startswith(".tmp")]
    # And the entry is good: a ninth process loads it.
    p = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr


def _entry_dir(cache_dir) -> pathlib.Path:
    (entry,) = [p for p in cache_dir.iterdir() if len(p.name) == 64]
    return entry


@pytest.mark.parametrize("damage", ["truncate_binary", "flip_binary_byte", "alter_stage", "garbage_metadata",
                                    "delete_binary"])
def test_damaged_entries_are_rebuilt_not_loaded(tmp_path, cache_dir, compiles, damage):
    _run(_load(tmp_path))
    entry = _entry_dir(cache_dir)
    binary = entry / "kernel.bin"
    if damage == "truncate_binary":
        binary.write_bytes(binary.read_bytes()[:100])
    elif damage == "flip_binary_byte":
        data = bytearray(binary.read_bytes())
        data[len(data) // 2] ^= 0xFF
        binary.write_bytes(bytes(data))
    elif damage == "alter_stage":
        (entry / "stage-ttir.txt").write_text("not the IR")
    elif damage == "garbage_metadata":
        (entry / "metadata.json").write_text("{ truncated")
    else:
        binary.unlink()
    x, out = _run(_load(tmp_path))
    np.testing.assert_array_equal(out, x * 6)
    assert compiles[0] == 2  # rebuilt
    # The rebuilt entry is whole again.
    _run(_load(tmp_path))
    assert compiles[0] == 2


def test_an_entry_without_metadata_is_replaced(tmp_path, cache_dir, compiles):
    """What an interrupted removal leaves: the entry's directory with some files and no metadata.json. It used
    to break the kernel for good (every later store failed with "Directory not empty")."""
    _run(_load(tmp_path))
    entry = _entry_dir(cache_dir)
    (entry / "metadata.json").unlink()
    for _ in range(2):  # twice: the second launch must not trip on what the first left
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            x, out = _run(_load(tmp_path))
        np.testing.assert_array_equal(out, x * 6)
    assert compiles[0] == 2  # rebuilt once, then loaded
    assert (entry / "metadata.json").exists()
    assert sorted(p.name for p in cache_dir.iterdir()) == [entry.name]


def test_an_entry_that_is_a_file_is_replaced(tmp_path, cache_dir, compiles):
    _run(_load(tmp_path))
    entry = _entry_dir(cache_dir)
    shutil.rmtree(entry)
    entry.write_text("not an entry")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x, out = _run(_load(tmp_path))
    np.testing.assert_array_equal(out, x * 6)
    assert (entry / "metadata.json").exists()
    _run(_load(tmp_path))
    assert compiles[0] == 2


def test_a_cache_directory_others_can_write_is_not_used(tmp_path, cache_dir, compiles):
    cache_dir.mkdir()
    os.chmod(cache_dir, 0o777)
    with pytest.warns(RuntimeWarning, match="writable by other users.*chmod 700.*without the kernel cache"):
        x, out = _run(_load(tmp_path))
    np.testing.assert_array_equal(out, x * 6)
    assert list(cache_dir.iterdir()) == []  # nothing stored in it
    os.chmod(cache_dir, 0o700)
    _run(_load(tmp_path))
    assert len(_C.KernelCache(str(cache_dir)).entries()) == 1


def test_a_cache_directory_that_is_a_file_is_not_used(tmp_path, cache_dir):
    cache_dir.write_text("not a directory")
    with pytest.warns(RuntimeWarning, match="not a directory.*without the kernel cache"):
        x, out = _run(_load(tmp_path))
    np.testing.assert_array_equal(out, x * 6)
    assert cache_dir.read_text() == "not a directory"


DISK_FULL_SCRIPT = """
import resource
import signal
import sys
import warnings
import numpy as np
sys.path.insert(0, {dir!r})
import full_kernel
import tessel
# Every file this process writes from now on stops at {limit} bytes (EFBIG, as on a full disk).
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
x = np.arange(1000, dtype=np.float32)
out = np.zeros_like(x)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        full_kernel.scale_kernel[(tessel.cdiv(1000, 128),)](x, out, 1000, BLOCK=128)
    except Exception as e:
        print("error", type(e).__name__, e)
        sys.exit(0)
assert (out == x * 6).all(), out
for w in caught:
    print(w.category.__name__, w.message)
print("ok")
"""


def test_a_full_disk_only_warns(tmp_path, cache_dir):
    """On the CPU a full disk costs only the cache: the kernel runs, with a warning. A GPU target's compile itself
    writes files (ptxas' input and its cubin): there the launch fails with a clear error saying so, never an abort
    and never a cubin that ptxas could not write whole."""
    (tmp_path / "full_kernel.py").write_text(KERNEL_SOURCE.format(scale=2, helper_factor=3, kernel_extra=""))
    cache_dir.mkdir(mode=0o700)
    script = tmp_path / "full.py"
    script.write_text(DISK_FULL_SCRIPT.format(dir=str(tmp_path), limit=1000))
    env = dict(os.environ, TESSEL_CACHE_DIR=str(cache_dir), PYTHONPATH=os.pathsep.join(sys.path),
               PYTHONDONTWRITEBYTECODE="1")
    p = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    if knobs.target.startswith(("sim:", "cuda:")):
        assert p.stdout.startswith("error BackendError"), p.stdout
        assert "File too large" in p.stdout or "incomplete cubin" in p.stdout, p.stdout
    else:
        assert p.stdout.strip().endswith("ok"), p.stdout
        assert "RuntimeWarning" in p.stdout and "File too large" in p.stdout, p.stdout
    assert list(cache_dir.iterdir()) == []  # no entry, and no temporary directory left behind


def test_new_cache_directory_is_private(tmp_path, cache_dir):
    _run(_load(tmp_path))
    assert cache_dir.stat().st_mode & 0o077 == 0


def test_lru_eviction(tmp_path, cache_dir, compiles):
    module = _load(tmp_path)
    for block in (16, 32, 64):
        _run(module, block=block)
    cache = _C.KernelCache(str(cache_dir))
    sizes = {e["key"]: e["bytes"] for e in cache.entries()}
    assert len(sizes) == 3
    # Use the first kernel again (in a new module: a disk hit), making the 32 one the least recently used.
    _run(_load(tmp_path), block=16)
    assert compiles[0] == 3
    by_use = sorted(cache.entries(), key=lambda e: e["last_use"])
    knobs.cache_max_bytes = sum(sizes.values()) - 1
    _run(module, block=128)  # a fourth kernel: the two oldest must go to make room
    remaining = {e["key"] for e in cache.entries()}
    assert by_use[0]["key"] not in remaining
    assert by_use[-1]["key"] in remaining
    assert sum(e["bytes"] for e in cache.entries()) <= knobs.cache_max_bytes


def test_eviction_removes_what_dead_processes_left(tmp_path, cache_dir):
    """Entries are removed by renaming them to a temporary name first: a process that dies while deleting one
    leaves a temporary directory, never a damaged entry. Old temporary directories go with the next eviction."""
    _run(_load(tmp_path))
    stale = cache_dir / ".tmp-removed-123-0"
    stale.mkdir()
    (stale / "kernel.bin").write_bytes(b"x" * 100)
    two_hours_ago = time.time() - 2 * 3600
    os.utime(stale, (two_hours_ago, two_hours_ago))
    in_progress = cache_dir / f".tmp-{'0' * 64}-123-1"  # another process writing an entry
    in_progress.mkdir()
    knobs.cache_max_bytes = 1 << 30
    _run(_load(tmp_path), block=32)  # a new kernel: stored, then the cache is evicted down to size
    assert not stale.exists()
    assert in_progress.exists()
    assert len(_C.KernelCache(str(cache_dir)).entries()) == 2


def test_command_line(tmp_path, cache_dir):
    _run(_load(tmp_path))
    env = dict(os.environ, TESSEL_CACHE_DIR=str(cache_dir), PYTHONPATH=os.pathsep.join(sys.path))

    def cli(*args):
        p = subprocess.run([sys.executable, "-m", "tessel.cache", *args], env=env, capture_output=True, text=True,
                           timeout=60)
        assert p.returncode == 0, p.stderr
        return p.stdout

    assert "scale_kernel" in cli("list")
    assert "kernels:   1" in cli("stats")
    assert "removed 1 kernels" in cli("clear")
    assert "kernels:   0" in cli("stats")


def test_cache_key_depends_on_every_part():
    a = _C.cache_key(["x", "y"])
    assert a == _C.cache_key(["x", "y"])
    assert a != _C.cache_key(["xy"])  # part boundaries count
    assert a != _C.cache_key(["x", "z"])
    assert len(a) == 64 and _C.build_id()
