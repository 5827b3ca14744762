"""For test modules that run every test on each simulated GPU whatever the suite's own targets: importing
`each_simulated_gpu` overrides conftest's per-target `target` fixture in that module."""
import pytest

from tessel import knobs

SIM_TARGETS = ["sim:sm_80", "sim:sm_90a"]


@pytest.fixture(name="target", params=SIM_TARGETS)
def each_simulated_gpu(request, monkeypatch):
    monkeypatch.setattr(knobs, "target", request.param)
    monkeypatch.setenv("TESSEL_TARGET", request.param)
    return request.param
