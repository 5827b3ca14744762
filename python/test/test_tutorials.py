"""The tutorials' own correctness checks (their kernels against numpy), on every target of the suite: the CPU and
the simulated A100 and H100 run the same tutorial code unchanged."""
import importlib.util
import pathlib

import pytest

TUTORIALS = sorted((pathlib.Path(__file__).resolve().parents[2] / "tutorials").glob("[0-9][0-9]-*.py"))


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_check(path, capsys):
    spec = importlib.util.spec_from_file_location(f"tutorial_{path.stem.replace('-', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # defines the kernels; main() only runs under __main__
    module.check()
    assert "OK" in capsys.readouterr().out
