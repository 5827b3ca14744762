"""Tessel's settings: every environment variable the Python side reads, read once, in one typed place.

Change them in a process by assigning to `tessel.knobs.<name>`; the environment only provides the defaults.
(TESSEL_NUM_THREADS is read by the C++ thread pool when it starts.)
"""
from __future__ import annotations

import os
import pathlib
from dataclasses import dataclass, field


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _default_cache_dir() -> pathlib.Path:
    if "TESSEL_CACHE_DIR" in os.environ:
        return pathlib.Path(os.environ["TESSEL_CACHE_DIR"]).expanduser()
    return pathlib.Path.home() / ".cache" / "tessel"


@dataclass
class RuntimeKnobs:
    # Compile every kernel with debug=True when a launch does not say (as @jit(debug=True)): device assertions are
    # checked. TRITON_DEBUG=1 (Triton's) or TESSEL_DEBUG=1.
    debug: bool = field(default_factory=lambda: _flag("TRITON_DEBUG") or _flag("TESSEL_DEBUG"))


@dataclass
class Knobs:
    # Where compiled kernels and autotuning results are kept.
    cache_dir: pathlib.Path = field(default_factory=_default_cache_dir)
    # Least recently used kernels are evicted beyond this many bytes (0: no limit).
    cache_max_bytes: int = field(default_factory=lambda: int(os.environ.get("TESSEL_CACHE_MAX_BYTES", "0") or 0))
    # A shared cache on a Redis server, "redis://[[user]:password@]host:port[/db]" ("" for none): a team's machines
    # reuse kernels.
    cache_remote: str = field(default_factory=lambda: os.environ.get("TESSEL_CACHE_REMOTE", ""))
    # The team's secret that authenticates the shared cache's entries (HMAC-SHA256), or a file holding it (private
    # to the user). Without one the shared cache stays off: whoever can write to the server could have any code run.
    cache_remote_key: str = field(default_factory=lambda: os.environ.get("TESSEL_CACHE_REMOTE_KEY", ""), repr=False)
    cache_remote_key_file: str = field(default_factory=lambda: os.environ.get("TESSEL_CACHE_REMOTE_KEY_FILE", ""))
    # Larger entries are not shared, and larger replies from the server are refused.
    cache_remote_max_bytes: int = field(
        default_factory=lambda: int(os.environ.get("TESSEL_CACHE_REMOTE_MAX_BYTES", "") or 256 << 20))
    # The most seconds one request to the server may take, all of it (a slow server cannot stall launches).
    cache_remote_timeout: float = field(
        default_factory=lambda: float(os.environ.get("TESSEL_CACHE_REMOTE_TIMEOUT", "") or 5.0))
    # The target kernels compile for and run on: "cpu" (this machine's CPU), "cpu:<model>", and the GPU targets of
    # builds that have them ("cuda:90a", "sim:sm_90a", ...).
    target: str = field(default_factory=lambda: os.environ.get("TESSEL_TARGET", "cpu").strip() or "cpu")
    # Print the winning config of each autotuning run.
    print_autotuning: bool = field(default_factory=lambda: _flag("TESSEL_PRINT_AUTOTUNING"))
    # Triton's runtime knobs (knobs.runtime.debug).
    runtime: RuntimeKnobs = field(default_factory=RuntimeKnobs)


knobs = Knobs()
