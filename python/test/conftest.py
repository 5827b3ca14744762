"""Shared fixtures for Tessel's pytest suite.

Every test launches real kernels on the CPU backend and compares them with a numpy
reference. Inputs are random but reproducible: each test draws from its own
generator, seeded from the test's id, so a failure replays identically and adding
a test does not change the data of the others.
"""
import atexit
import importlib.util
import os
import pathlib
import shutil
import sys
import tempfile
import zlib

import numpy as np
import pytest

# Allow `pytest python/test` from a source checkout whose package was built in place
# (python/tessel/_C*.so) without installing it. Appended, not prepended, so an
# installed or PYTHONPATH-provided tessel takes precedence.
if importlib.util.find_spec("tessel") is None:
    sys.path.append(str(pathlib.Path(__file__).resolve().parents[1]))


# The suite compiles into a kernel cache of its own, empty at the start, as on a fresh machine: what earlier runs
# left in ~/.cache/tessel (the same kernels, compiled by processes that compiled other things first) would hide what
# this run compiles.
_cache = tempfile.mkdtemp(prefix="tessel-test-cache-")
os.environ["TESSEL_CACHE_DIR"] = _cache
atexit.register(shutil.rmtree, _cache, ignore_errors=True)


def _targets():
    """The targets the suite runs on: TESSEL_TARGET's alone when it is set, else every runnable default target of
    this build (one per backend that runs here). Every test runs once per target."""
    from tessel import _C
    if os.environ.get("TESSEL_TARGET", "").strip():
        return [os.environ["TESSEL_TARGET"].strip()]
    # The simulator runs the NVIDIA backend's PTX for an A100 (mma.sync) and an H100 (wgmma), and the AMD
    # backend's AMDGCN for an MI300 (gfx942: wave64, MFMA).
    defaults = {"cpu": ["cpu"], "sim": ["sim:sm_80", "sim:sm_90a", "sim:gfx942"]}
    return [t for b in _C.available_backends() if b in defaults for t in defaults[b] if _C.target_can_run(t)]


@pytest.fixture(autouse=True, params=_targets())
def target(request, monkeypatch):
    """The target of this run of the test: set for the JIT (tessel.knobs.target) and for child processes."""
    from tessel import knobs
    monkeypatch.setattr(knobs, "target", request.param)
    monkeypatch.setenv("TESSEL_TARGET", request.param)
    return request.param


@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


@pytest.fixture
def rand(rng):
    """rand(shape, dtype, low=-4, high=4, nonzero=False) -> a random numpy array.

    Floats are uniform in [low, high) and then rounded to `dtype` (so fp16 inputs are
    exactly representable); ints are uniform in [low, high). `nonzero=True` replaces
    zeros (for divisors). The result is never all zeros, so a kernel that writes
    nothing cannot pass by accident.
    """

    def make(shape, dtype, low=-4, high=4, nonzero=False):
        dtype = np.dtype(dtype)
        if dtype.kind == "f":
            a = rng.uniform(low, high, size=shape).astype(dtype)
        else:
            a = rng.integers(low, high, size=shape).astype(dtype)
        if nonzero:
            a[a == 0] = 1
        if a.size and not a.any():
            a.flat[0] = 1
        return a

    return make
