"""Shared fixtures for Tessel's pytest suite.

Every test launches real kernels on the CPU backend and compares them with a numpy
reference. Inputs are random but reproducible: each test draws from its own
generator, seeded from the test's id, so a failure replays identically and adding
a test does not change the data of the others.
"""
import importlib.util
import pathlib
import sys
import zlib

import numpy as np
import pytest

# Allow `pytest python/test` from a source checkout whose package was built in place
# (python/tessel/_C*.so) without installing it. Appended, not prepended, so an
# installed or PYTHONPATH-provided tessel takes precedence.
if importlib.util.find_spec("tessel") is None:
    sys.path.append(str(pathlib.Path(__file__).resolve().parents[1]))


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
