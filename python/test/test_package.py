"""Tessel as an installed distribution (pyproject.toml): its metadata's version is tessel.__version__, the version
is part of every kernel's cache key, and the console scripts find the tools. (scripts/wheel-check.sh installs a
wheel into a new virtual environment and runs part of this suite there.)"""
import importlib.metadata
import subprocess

import numpy as np

import tessel
import tessel.language as tl
from tessel.tools import binaries


def test_metadata_version_is_the_package_version():
    assert importlib.metadata.version("tessel") == tessel.__version__


@tessel.jit
def _copy(x_ptr, y_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(y_ptr + o, tl.load(x_ptr + o))


def test_version_is_part_of_the_cache_key(monkeypatch, target):
    key = _copy._kernel_key(["*fp32", "*fp32"], {"N": 16}, target, {})
    monkeypatch.setattr(tessel, "__version__", tessel.__version__ + ".post1")
    assert _copy._kernel_key(["*fp32", "*fp32"], {"N": 16}, target, {}) != key
    x = np.arange(16, dtype=np.float32)
    y = np.zeros_like(x)
    _copy[(1,)](x, y, N=16)
    np.testing.assert_array_equal(y, x)


def test_console_scripts_find_the_tools():
    out = subprocess.run([str(binaries.tool_path("tessel-opt")), "--version"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and "LLVM version 22" in out.stdout
    out = subprocess.run([str(binaries.tool_path("tessel-gpusim"))], capture_output=True, text=True, timeout=60)
    assert "usage: tessel-gpusim" in out.stdout + out.stderr
