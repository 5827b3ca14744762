"""Tessel's settings: every environment variable the Python side reads, read once, in one typed place.

Change them in a process by assigning to `tessel.knobs.<name>`; the environment only provides the defaults.
(TESSEL_NUM_THREADS is read by the C++ thread pool when it starts.)

Triton's groups of knobs are there too, under its names and environment variables, for the settings that mean
something to Tessel: `knobs.language` (fp32_default, default_fp_fusion), `knobs.runtime` (debug, interpret) and
`knobs.autotuning` (print). Each group has Triton's `knobs`, `copy()`, `reset()` and `scope()`.
"""
from __future__ import annotations

import contextlib
import copy
import os
import pathlib
from dataclasses import dataclass, field, fields
from typing import Any, Iterator


def _flag(name: str, default: bool = False) -> bool:
    text = os.environ.get(name, "").strip().lower()
    if not text:
        return default
    return text in ("1", "true", "yes", "on", "y")


def _optional(name: str) -> str | None:
    return os.environ.get(name) or None


class _Group:
    """A group of Triton's knobs (a dataclass): its values are read from the environment when it is made or reset,
    and assigned in a process like any attribute."""

    @property
    def knobs(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]

    def copy(self) -> Any:
        return copy.copy(self)

    def reset(self) -> Any:
        """Back to the environment's values."""
        fresh = type(self)()
        for f in fields(self):  # type: ignore[arg-type]
            setattr(self, f.name, getattr(fresh, f.name))
        return self

    @contextlib.contextmanager
    def scope(self) -> Iterator[None]:
        """Assignments inside the `with` are undone at its end."""
        saved = self.knobs
        try:
            yield
        finally:
            for name, value in saved.items():
                setattr(self, name, value)


@dataclass
class LanguageKnobs(_Group):
    # tl.dot's input_precision when a kernel gives none ("tf32", "tf32x3", "ieee", ...); None: the target's own
    # default (tf32 on NVIDIA GPUs, ieee on the CPU). Part of the kernel's key.
    fp32_default: str | None = field(default_factory=lambda: _optional("TRITON_F32_DEFAULT"))
    # enable_fp_fusion when a launch gives none: whether a * b + c may become one fused multiply-add.
    default_fp_fusion: bool = field(default_factory=lambda: _flag("TRITON_DEFAULT_FP_FUSION", True))


@dataclass
class RuntimeKnobs(_Group):
    # Compile every kernel with debug=True when a launch does not say (as @jit(debug=True)): device assertions are
    # checked. TRITON_DEBUG=1 (Triton's) or TESSEL_DEBUG=1.
    debug: bool = field(default_factory=lambda: _flag("TRITON_DEBUG") or _flag("TESSEL_DEBUG"))
    # Triton's interpreter switch (TRITON_INTERPRET=1). Tessel has no interpreter and compiles every kernel: the
    # value is kept for programs that read it.
    interpret: bool = field(default_factory=lambda: _flag("TRITON_INTERPRET"))


@dataclass
class AutotuningKnobs(_Group):
    # Print the winning config of each autotuning run (as knobs.print_autotuning does; either one turns it on).
    print: bool = field(default_factory=lambda: _flag("TRITON_PRINT_AUTOTUNING"))


def _default_cache_dir() -> pathlib.Path:
    if "TESSEL_CACHE_DIR" in os.environ:
        return pathlib.Path(os.environ["TESSEL_CACHE_DIR"]).expanduser()
    return pathlib.Path.home() / ".cache" / "tessel"


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
    # Triton's groups (see the module's docstring).
    language: LanguageKnobs = field(default_factory=LanguageKnobs)
    runtime: RuntimeKnobs = field(default_factory=RuntimeKnobs)
    autotuning: AutotuningKnobs = field(default_factory=AutotuningKnobs)


knobs = Knobs()
