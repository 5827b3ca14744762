"""The shared kernel cache on a real Redis server (started on loopback by the tests): a
kernel compiled on one machine (here: one local cache directory) is loaded by another
without compiling; damaged values are never loaded; an unreachable server only warns."""
import shutil
import socket
import subprocess
import time

import numpy as np
import pytest

import tessel
import tessel.language as tl
from tessel import _C, knobs

REDIS = shutil.which("redis-server")
pytestmark = pytest.mark.skipif(REDIS is None, reason="redis-server is not installed (scripts/setup.sh installs it)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _resp(port: int, *args: bytes) -> bytes:
    """One raw Redis command (to inspect and damage entries behind tessel's back)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args))
        time.sleep(0.05)
        return s.recv(1 << 20)


@pytest.fixture(scope="module")
def redis_port():
    port = _free_port()
    proc = subprocess.Popen([REDIS, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while True:
        try:
            if _resp(port, b"PING").startswith(b"+PONG"):
                break
        except OSError:
            pass
        if time.time() > deadline:
            proc.kill()
            pytest.fail("redis-server did not start")
        time.sleep(0.05)
    yield port
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def machine(tmp_path, redis_port, monkeypatch):
    """Switches to a new local cache directory (another machine) sharing the server; counts compiles."""
    saved = knobs.cache_dir, knobs.cache_remote
    knobs.cache_remote = f"redis://127.0.0.1:{redis_port}"
    compiles = [0]
    real = _C.compile

    def counting(*args, **kwargs):
        compiles[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(_C, "compile", counting)
    machines = [0]

    def new_machine():
        machines[0] += 1
        knobs.cache_dir = tmp_path / f"machine{machines[0]}"
        return compiles

    yield new_machine
    knobs.cache_dir, knobs.cache_remote = saved


def _kernel_source_module(tmp_path, factor):
    import importlib.util
    path = tmp_path / f"remote_kernel_{factor}_{time.monotonic_ns()}.py"
    path.write_text(f"""
import tessel
import tessel.language as tl

@tessel.jit
def times_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * {factor}, mask=mask)
""")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(module, factor):
    x = np.arange(100, dtype=np.float32)
    out = np.zeros_like(x)
    module.times_kernel[(2,)](x, out, 100, BLOCK=64)
    np.testing.assert_array_equal(out, x * factor)


def test_a_second_machine_loads_the_kernel_from_the_server(tmp_path, machine):
    compiles = machine()
    _run(_kernel_source_module(tmp_path, 3), 3)
    assert compiles[0] == 1
    machine()  # an empty local cache
    _run(_kernel_source_module(tmp_path, 3), 3)
    assert compiles[0] == 1  # from the server
    # ... and now also in the second machine's local cache.
    assert len(_C.KernelCache(str(knobs.cache_dir)).entries()) == 1


def test_damaged_values_on_the_server_are_never_loaded(tmp_path, machine, redis_port):
    compiles = machine()
    _run(_kernel_source_module(tmp_path, 5), 5)
    (key,) = [e["key"] for e in _C.KernelCache(str(knobs.cache_dir)).entries()]
    value = _resp(redis_port, b"GET", f"tessel:{key}".encode())
    assert value.startswith(b"$")
    # Replace the stored value with a truncated entry.
    assert _resp(redis_port, b"SET", f"tessel:{key}".encode(), b"tessel-cache-entry\n5\nhello").startswith(b"+OK")
    machine()
    _run(_kernel_source_module(tmp_path, 5), 5)
    assert compiles[0] == 2  # rebuilt, not loaded
    # The damaged value was replaced by the rebuilt kernel.
    machine()
    _run(_kernel_source_module(tmp_path, 5), 5)
    assert compiles[0] == 2


def test_unreachable_server_only_warns(tmp_path, monkeypatch):
    saved = knobs.cache_dir, knobs.cache_remote
    knobs.cache_dir = tmp_path / "local"
    knobs.cache_remote = f"redis://127.0.0.1:{_free_port()}"
    try:
        with pytest.warns(RuntimeWarning, match="continuing without the shared kernel cache"):
            _run(_kernel_source_module(tmp_path, 7), 7)
    finally:
        knobs.cache_dir, knobs.cache_remote = saved


def test_bad_url():
    with pytest.raises(_C.CacheError, match="redis://"):
        _C.RedisCache("http://localhost:6379")
