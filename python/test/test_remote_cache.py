"""The shared kernel cache on a real Redis server (started on loopback by the tests): a
kernel compiled on one machine (here: one local cache directory) is loaded by another
without compiling; entries are authenticated with the team's key, so values that are
damaged, forged or made with another key are never loaded; an unreachable or misbehaving
server (huge replies, replies trickling in) only warns."""
import hashlib
import hmac
import json
import os
import shutil
import socket
import subprocess
import threading
import time

import numpy as np
import pytest

import tessel
import tessel.language as tl
from tessel import _C, knobs

REDIS = shutil.which("redis-server")
pytestmark = pytest.mark.skipif(REDIS is None, reason="redis-server is not installed (scripts/setup.sh installs it)")

SECRET = "the team's shared secret"
SEAL = b"tessel-hmac-sha256:"
REMOTE_KNOBS = ("cache_dir", "cache_remote", "cache_remote_key", "cache_remote_key_file", "cache_remote_max_bytes",
                "cache_remote_timeout")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _resp(port: int, *args: bytes, password: bytes = b"") -> bytes:
    """One raw Redis command (to inspect and forge entries behind tessel's back); its whole reply."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        if password:
            s.sendall(b"*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n" % (len(password), password))
        s.sendall(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args))
        data = b""
        while True:
            chunk = s.recv(1 << 20)
            data += chunk
            if password and data.startswith(b"+OK\r\n"):
                reply = data[5:]
            else:
                reply = data
            line, _, rest = reply.partition(b"\r\n")
            if not chunk or (_ and (not line.startswith(b"$") or int(line[1:]) < 0
                                    or len(rest) >= int(line[1:]) + 2)):
                return reply


def _get(port: int, key: str) -> bytes | None:
    reply = _resp(port, b"GET", f"tessel:{key}".encode())
    if reply.startswith(b"$-1"):
        return None
    line, _, rest = reply.partition(b"\r\n")
    return rest[:int(line[1:])]


def _start_redis(*extra: str):
    port = _free_port()
    proc = subprocess.Popen([REDIS, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while True:
        try:
            if _resp(port, b"PING").startswith((b"+PONG", b"-NOAUTH")):
                break
        except OSError:
            pass
        if time.time() > deadline:
            proc.kill()
            pytest.fail("redis-server did not start")
        time.sleep(0.05)
    return proc, port


@pytest.fixture(scope="module")
def redis_port():
    proc, port = _start_redis()
    yield port
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def remote_knobs(monkeypatch):
    """Restores every cache knob after the test; each test starts without the process's remote connections (a
    failed one is reported once per process, and a test runs once per target)."""
    from tessel.runtime import cache
    monkeypatch.setattr(cache, "_remotes", {})
    saved = {name: getattr(knobs, name) for name in REMOTE_KNOBS}
    yield knobs
    for name, value in saved.items():
        setattr(knobs, name, value)


@pytest.fixture
def machine(tmp_path, redis_port, remote_knobs, monkeypatch):
    """Switches to a new local cache directory (another machine) sharing the server; counts compiles."""
    knobs.cache_remote = f"redis://127.0.0.1:{redis_port}"
    knobs.cache_remote_key = SECRET
    knobs.cache_remote_key_file = ""
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

    return new_machine


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


def _local_keys() -> list[str]:
    return [e["key"] for e in _C.KernelCache(str(knobs.cache_dir)).entries()]


def _mac(secret: str, key: str, blob: bytes) -> bytes:
    """The entry's MAC, computed independently with Python's hmac."""
    message = b"tessel kernel cache entry v1\n" + f"{len(key)}:{key}".encode() + blob
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest().encode()


def _unseal(value: bytes) -> tuple[bytes, bytes]:
    assert value.startswith(SEAL), value[:40]
    mac, _, blob = value[len(SEAL):].partition(b"\n")
    return mac, blob


def _rekeyed(blob: bytes, key: str) -> bytes:
    """The packed entry `blob` with its metadata claiming `key`, every checksum still right: what anyone who can
    write to the server can make of any kernel."""
    magic = b"tessel-cache-entry\n"
    assert blob.startswith(magic)
    rest, records = blob[len(magic):], []
    while rest:
        length, _, rest = rest.partition(b"\n")
        records.append(rest[:int(length)])
        rest = rest[int(length):]
    metadata = json.loads(records[0])
    metadata["key"] = key
    records[0] = json.dumps(metadata).encode()
    return magic + b"".join(b"%d\n%s" % (len(r), r) for r in records)


def test_entries_carry_an_hmac_sha256_of_key_and_content(tmp_path, machine, redis_port):
    machine()
    _run(_kernel_source_module(tmp_path, 11), 11)
    (key,) = _local_keys()
    mac, blob = _unseal(_get(redis_port, key))
    assert hmac.compare_digest(mac, _mac(SECRET, key, blob))
    assert not hmac.compare_digest(mac, _mac("another key", key, blob))


def test_damaged_values_on_the_server_are_never_loaded(tmp_path, machine, redis_port):
    compiles = machine()
    _run(_kernel_source_module(tmp_path, 5), 5)
    (key,) = _local_keys()
    value = _get(redis_port, key)
    mac, blob = _unseal(value)
    # Replace the stored value with a truncated entry, authenticated.
    damaged = blob[:len(blob) // 2]
    assert _resp(redis_port, b"SET", f"tessel:{key}".encode(),
                 SEAL + _mac(SECRET, key, damaged) + b"\n" + damaged).startswith(b"+OK")
    machine()
    _run(_kernel_source_module(tmp_path, 5), 5)
    assert compiles[0] == 2  # rebuilt, not loaded
    # The damaged value was replaced by the rebuilt kernel.
    assert _get(redis_port, key) == value
    machine()
    _run(_kernel_source_module(tmp_path, 5), 5)
    assert compiles[0] == 2


@pytest.mark.parametrize("forgery", ["unauthenticated", "other_secret", "mac_of_another_key"])
def test_a_forged_entry_is_never_loaded_nor_copied_locally(tmp_path, machine, redis_port, forgery):
    """Whoever can write to the server stores another kernel (here: one that multiplies by 7, checksums and all)
    under the key of the victim's kernel (which multiplies by 3)."""
    compiles = machine()
    knobs.cache_remote = ""  # the victim's key, without sharing the victim's kernel
    _run(_kernel_source_module(tmp_path, 3), 3)
    (victim_key,) = _local_keys()
    knobs.cache_remote = f"redis://127.0.0.1:{redis_port}"
    machine()
    _run(_kernel_source_module(tmp_path, 7), 7)
    (evil_key,) = _local_keys()
    evil_value = _get(redis_port, evil_key)
    evil_mac, evil_blob = _unseal(evil_value)
    forged_blob = _rekeyed(evil_blob, victim_key)
    forged = {"unauthenticated": forged_blob,
              "other_secret": SEAL + _mac("the attacker's key", victim_key, forged_blob) + b"\n" + forged_blob,
              "mac_of_another_key": evil_value}[forgery]
    assert _resp(redis_port, b"SET", f"tessel:{victim_key}".encode(), forged).startswith(b"+OK")
    assert compiles[0] == 2

    machine()  # the victim
    _run(_kernel_source_module(tmp_path, 3), 3)  # times 3: its own kernel, compiled
    assert compiles[0] == 3
    # Not copied to the local cache: with the server emptied, the kernel is still right.
    assert _resp(redis_port, b"FLUSHALL").startswith(b"+OK")
    _run(_kernel_source_module(tmp_path, 3), 3)
    assert compiles[0] == 3


def test_another_key_does_not_load_the_entries(tmp_path, machine, redis_port):
    compiles = machine()
    _run(_kernel_source_module(tmp_path, 13), 13)
    knobs.cache_remote_key = "another team's secret"
    machine()
    _run(_kernel_source_module(tmp_path, 13), 13)
    assert compiles[0] == 2
    knobs.cache_remote_key = SECRET
    machine()
    _run(_kernel_source_module(tmp_path, 13), 13)
    assert compiles[0] == 3  # the other team's entry is not loaded either way


def test_without_a_key_the_shared_cache_is_off(tmp_path, machine, redis_port):
    machine()
    knobs.cache_remote_key = ""
    with pytest.warns(RuntimeWarning, match="neither TESSEL_CACHE_REMOTE_KEY nor TESSEL_CACHE_REMOTE_KEY_FILE.*"
                                            "continuing without the shared kernel cache"):
        _run(_kernel_source_module(tmp_path, 17), 17)
    (key,) = _local_keys()
    assert _get(redis_port, key) is None  # nothing shared


def test_a_key_file(tmp_path, machine, redis_port):
    compiles = machine()
    _run(_kernel_source_module(tmp_path, 19), 19)
    key_file = tmp_path / "cache.key"
    key_file.write_text(SECRET + "\n")
    os.chmod(key_file, 0o644)
    knobs.cache_remote_key = ""
    knobs.cache_remote_key_file = str(key_file)
    machine()
    with pytest.warns(RuntimeWarning, match="other users can read or write it.*chmod 600"):
        _run(_kernel_source_module(tmp_path, 19), 19)
    assert compiles[0] == 2
    private_key_file = tmp_path / "private.key"  # (a failed configuration is not tried again in a process)
    private_key_file.write_text(SECRET + "\n")
    os.chmod(private_key_file, 0o600)
    knobs.cache_remote_key_file = str(private_key_file)
    machine()
    _run(_kernel_source_module(tmp_path, 19), 19)
    assert compiles[0] == 2  # the same secret as the key: loaded from the server


@pytest.fixture(scope="module")
def redis_with_password():
    proc, port = _start_redis("--requirepass", "pass@word/1")
    yield port
    proc.terminate()
    proc.wait(timeout=10)


def test_a_server_with_a_password(tmp_path, machine, redis_with_password):
    compiles = machine()
    knobs.cache_remote = f"redis://:pass%40word%2F1@127.0.0.1:{redis_with_password}"
    _run(_kernel_source_module(tmp_path, 23), 23)
    (key,) = _local_keys()
    assert _resp(redis_with_password, b"EXISTS", f"tessel:{key}".encode(), password=b"pass@word/1") == b":1\r\n"
    machine()
    _run(_kernel_source_module(tmp_path, 23), 23)
    assert compiles[0] == 1
    knobs.cache_remote = f"redis://:wrong-password@127.0.0.1:{redis_with_password}"
    machine()
    with pytest.warns(RuntimeWarning, match=r"AUTH on redis://\*\*\*@127.0.0.1.*failed") as caught:
        _run(_kernel_source_module(tmp_path, 23), 23)
    assert not any("wrong-password" in str(w.message) for w in caught)


def test_a_server_by_host_name(tmp_path, machine, redis_port):
    # The name is looked up by getaddrinfo on a thread of its own, waited for until the request's deadline
    # (unittest/RedisCacheTest.cpp makes a lookup that never answers).
    compiles = machine()
    knobs.cache_remote = f"redis://localhost:{redis_port}"
    _run(_kernel_source_module(tmp_path, 31), 31)
    machine()
    _run(_kernel_source_module(tmp_path, 31), 31)
    assert compiles[0] == 1  # from the server


def test_unreachable_server_only_warns(tmp_path, remote_knobs):
    knobs.cache_dir = tmp_path / "local"
    knobs.cache_remote = f"redis://127.0.0.1:{_free_port()}"
    knobs.cache_remote_key = SECRET
    with pytest.warns(RuntimeWarning, match="continuing without the shared kernel cache"):
        _run(_kernel_source_module(tmp_path, 7), 7)


class _FakeServer:
    """A server on loopback that answers the first request with `reply` and then sends `then` one chunk every
    `interval` seconds, recording how many bytes it got out."""

    def __init__(self, reply: bytes, then: bytes, interval: float, count: int):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.sent = 0
        self.thread = threading.Thread(target=self._serve, args=(reply, then, interval, count), daemon=True)
        self.thread.start()

    def _serve(self, reply, then, interval, count):
        conn, _ = self.sock.accept()
        with conn:
            conn.recv(65536)
            try:
                conn.sendall(reply)
                for _ in range(count):
                    conn.sendall(then)
                    self.sent += len(then)
                    time.sleep(interval)
            except OSError:
                pass  # the client gave up

    def close(self):
        self.thread.join(timeout=30)
        self.sock.close()


@pytest.mark.parametrize("misbehavior", ["huge_bulk_length", "trickle"])
def test_a_misbehaving_server_fails_fast(tmp_path, remote_knobs, misbehavior):
    if misbehavior == "huge_bulk_length":
        # Claims 10^11 bytes and sends as fast as it can (up to 256 MiB).
        server = _FakeServer(b"$100000000000\r\n", b"x" * (1 << 20), 0, 256)
        message = "a reply of 100000000000 bytes is larger than the limit of 268435456 bytes"
    else:
        # A 1000-byte reply, one byte every 20 ms: each read is quick, the whole would take 20 s.
        server = _FakeServer(b"$1000\r\n", b"x", 0.02, 1000)
        message = "no complete reply within 1.0 s"
    knobs.cache_dir = tmp_path / "local"
    knobs.cache_remote = f"redis://127.0.0.1:{server.port}"
    knobs.cache_remote_key = SECRET
    knobs.cache_remote_timeout = 1.0
    start = time.monotonic()
    with pytest.warns(RuntimeWarning, match=message + ".*continuing without the shared kernel cache"):
        _run(_kernel_source_module(tmp_path, 29), 29)
    elapsed = time.monotonic() - start
    server.close()
    assert elapsed < 10, elapsed  # compiling included; the server alone would hold it 20 s
    assert server.sent < 64 << 20  # the client stopped reading


def test_bad_urls():
    with pytest.raises(_C.CacheError, match="redis://"):
        _C.RedisCache("http://localhost:6379", key=SECRET)
    with pytest.raises(_C.CacheError, match="rediss:// .* not supported"):
        _C.RedisCache("rediss://localhost:6379", key=SECRET)
    with pytest.raises(_C.CacheError, match="bad port"):
        _C.RedisCache("redis://localhost:http", key=SECRET)
    with pytest.raises(_C.CacheError, match="secret key"):
        _C.RedisCache("redis://localhost:6379")
