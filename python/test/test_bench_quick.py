"""The CPU benchmarks' correctness checks (python -m bench --quick) for the row kernels: each compares Tessel's
result with numpy (float64) before it would time anything, on small and ragged shapes."""
import importlib

import pytest

from tessel import knobs


@pytest.fixture
def target(monkeypatch):
    """Overrides the suite's per-target fixture: the benchmarks measure the CPU."""
    monkeypatch.setattr(knobs, "target", "cpu")
    return "cpu"


@pytest.mark.parametrize("name", ["vector_add", "softmax", "layer_norm", "rms_norm", "cross_entropy"])
def test_bench_quick(name):
    report = importlib.import_module(f"bench.{name}").run(True)
    assert report.checks and not report.rows  # every shape checked, nothing timed
