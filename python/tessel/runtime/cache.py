"""The kernel cache as launches use it: the directory `knobs.cache_dir` first, then the shared server of
`knobs.cache_remote`. A cache that fails (a full disk, a directory that is unsafe or not a directory, a server that
cannot be reached or misbehaves) only warns: it never stops a kernel from compiling and running."""
from __future__ import annotations

import warnings
from typing import Any

from .. import _C
from ..knobs import knobs


def load(key: str) -> Any:
    """The kernel stored under `key`, or None. A kernel found on the shared server is copied to the directory."""
    local = _C.KernelCache(str(knobs.cache_dir))
    kernel = _local_call(local.load, key)
    if kernel is not None:
        return kernel
    remote = _remote()
    if remote is None:
        return None
    kernel = _remote_call(remote.load, key)
    if kernel is not None:
        _local_call(local.store, key, kernel)
    return kernel


def store(key: str, kernel: Any) -> None:
    """Adds a kernel just compiled to the directory (then evicts down to `knobs.cache_max_bytes`) and the server."""
    local = _C.KernelCache(str(knobs.cache_dir))
    _local_call(local.store, key, kernel)
    if knobs.cache_max_bytes:
        _local_call(local.evict_to_size, knobs.cache_max_bytes)
    remote = _remote()
    if remote is not None:
        _remote_call(remote.store, key, kernel)


def _warn(message: str) -> None:
    # One place for every warning: the same message is shown once per process.
    warnings.warn(message, RuntimeWarning, stacklevel=2)


def _local_call(method: Any, *args: Any) -> Any:
    try:
        return method(*args)
    except _C.CacheError as e:
        _warn(f"{e}; running without the kernel cache")
        return None


# One connection per process and remote configuration; None where it failed (reported once, then left out).
_remotes: dict[tuple, Any] = {}


def _remote_config() -> tuple:
    return (knobs.cache_remote, knobs.cache_remote_key, knobs.cache_remote_key_file, knobs.cache_remote_max_bytes,
            knobs.cache_remote_timeout)


def _remote() -> Any:
    if not knobs.cache_remote:
        return None
    config = _remote_config()
    if config not in _remotes:
        _remotes[config] = _connect()
    return _remotes[config]


def _connect() -> Any:
    if not knobs.cache_remote_key and not knobs.cache_remote_key_file:
        _warn("TESSEL_CACHE_REMOTE is set but neither TESSEL_CACHE_REMOTE_KEY nor TESSEL_CACHE_REMOTE_KEY_FILE: "
              "entries must be authenticated with the team's secret key (else whoever can write to the server could "
              "run code here); continuing without the shared kernel cache")
        return None
    try:
        return _C.RedisCache(knobs.cache_remote, key=knobs.cache_remote_key, key_file=knobs.cache_remote_key_file,
                             max_bytes=knobs.cache_remote_max_bytes, timeout=knobs.cache_remote_timeout)
    except _C.CacheError as e:
        _warn(f"{e}; continuing without the shared kernel cache")
        return None


def _remote_call(method: Any, *args: Any) -> Any:
    try:
        return method(*args)
    except _C.CacheError as e:
        _warn(f"{e}; continuing without the shared kernel cache")
        _remotes[_remote_config()] = None
        return None
