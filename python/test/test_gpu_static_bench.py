"""bench/gpu_static.py on vector add only: both compilers' rows for sm_80 and sm_90a have sane static facts and
simulator counters, and both results matched numpy."""
import importlib.util
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def report():
    if importlib.util.find_spec("triton") is None:  # not imported here: Triton compiles in a child process
        pytest.skip("needs OpenAI Triton")
    if not pathlib.Path("/usr/local/cuda/bin/ptxas").exists():
        pytest.skip("needs ptxas (/usr/local/cuda/bin)")
    from tessel import _C
    if "cuda" not in _C.available_backends():
        pytest.skip("this build has no NVIDIA backend")
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from bench import gpu_static
    return gpu_static.compare(["vector_add"], quick=True)


def test_vector_add_rows(report, target):
    if target != "cpu" and not target.startswith("sim:"):
        pytest.skip("once per run")
    rows = report.rows
    assert {(r["arch"], r["compiler"]) for r in rows} == {(a, c) for a in ("sm_80", "sm_90a")
                                                         for c in ("triton", "tessel")}
    for r in rows:
        what = f"{r['arch']} {r['compiler']}"
        assert "error" not in r, f"{what}: {r.get('error')}"
        assert r["check"] == "ok", f"{what}: {r['check']}"
        assert r["registers"] > 0 and r["spill_stores"] == 0 and r["spill_loads"] == 0, what
        assert r["compile_s"] > 0 and r["sass"] > 0 and r["warp_instructions"] > 0, what
        assert 1 <= r["load_sectors_per_request"] <= 32 and 1 <= r["store_sectors_per_request"] <= 32, what
        assert 0 < r["load_efficiency"] <= 1, what
        # An element-wise kernel: no tensor cores, no shared memory.
        assert r["sass_mma"] == 0 and r["shared"] == 0 and r["shared_wavefronts_per_request"] is None, what
        assert r["shared_conflicts_per_request"] is None, what
    # Triton's loads of contiguous, 16-byte-aligned fp32 are 16-byte vectors (the reference the table compares to).
    assert all(r["sass_ldg128"] > 0 for r in rows if r["compiler"] == "triton")
    assert not report.wrong()


@pytest.fixture(scope="module")
def amd_rows():
    if importlib.util.find_spec("triton") is None:
        pytest.skip("needs OpenAI Triton")
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from bench import gpu_static_amd
    rows, _version = gpu_static_amd.compare(["vector_add", "matmul_fp16"], chip="gfx942")
    return rows


def test_amd_rows(amd_rows, target):
    """bench/gpu_static_amd.py: both compilers compile vector add and the fp16 matmul for gfx942, without spills,
    both matmuls run on the matrix cores, and each kernel runs in the simulator and matches numpy (the matmuls
    executing the same number of MFMAs: one per 32x32x8 of the product)."""
    if target != "cpu" and not target.startswith("sim:"):
        pytest.skip("once per run")
    assert {(r["kernel"], r["compiler"]) for r in amd_rows} == {(k, c) for k in ("vector add", "fp16 matmul")
                                                               for c in ("triton", "tessel")}
    for r in amd_rows:
        what = f"{r['kernel']} {r['compiler']}"
        assert "error" not in r, f"{what}: {r.get('error')}"
        assert 0 < r["vgprs"] <= 512 and r["scratch"] == 0 and r["seconds"] > 0 and r["insts"] > 0, what
        assert (r["mfma"] > 0) == (r["kernel"] == "fp16 matmul"), what
        assert r["check"] == "ok" and r["wave_instructions"] > 0, what
    executed = {r["mfma_executed"] for r in amd_rows if r["kernel"] == "fp16 matmul"}
    assert len(executed) == 1 and executed.pop() > 0
