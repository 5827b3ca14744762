"""scripts/gpu-check.sh's harness (bench/gpu_check.py) without a GPU: the kernels bundled ahead of time for cuda:80
and cuda:90a (PTX, no ptxas: the fake driver runs PTX), their C launchers built against Tessel's fake driver
(test/FakeCuda), run on random inputs in its "GPU memory" and checked against numpy by the harness's own checks. On
sm_90a the bundle holds the copy-engine matmuls (their C launchers encode the tensor maps) and the matmul on
clusters of 2 CTAs."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FAKE_DRIVER = pathlib.Path(os.environ.get("TESSEL_BUILD_DIR", ROOT / "build")) / "lib" / "libtessel-fake-cuda.so"


# The bundle's kernels on each architecture: the fp8 matmul needs sm_89 or newer; clusters and the copy engine
# sm_90.
KEYS = {"80": ["vector_add", "softmax", "layer_norm", "matmul_fp16", "matmul_bf16", "matmul_fp32", "matmul_int8",
               "attention"],
        "90a": ["vector_add", "softmax", "layer_norm", "matmul_fp16", "matmul_bf16", "matmul_fp32", "matmul_int8",
                "matmul_fp8", "matmul_fp16_2cta", "matmul_tma", "matmul_tma_kn", "attention"]}


@pytest.fixture(params=list(KEYS))
def target(request):
    """Overrides the suite's per-target fixture: the harness picks its own target (cuda:80, cuda:90a)."""
    return request.param


def test_bundle_runs_through_the_driver_and_matches_numpy(tmp_path, target):
    assert FAKE_DRIVER.exists(), f"{FAKE_DRIVER} is missing: build the project (scripts/setup.sh)"
    env = dict(os.environ, TESSEL_PTXAS_PATH=str(tmp_path / "no-ptxas"), TESSEL_CACHE_DIR=str(tmp_path / "cache"),
               TESSEL_FAKE_CUDA_CAPABILITY=target.rstrip("a"))
    bundle = tmp_path / "bundle"
    subprocess.run([sys.executable, "-m", "bench.gpu_check", "bundle", "--arch", target, "--quick", "--out",
                    str(bundle)], cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    manifest = json.loads((bundle / "bundle.json").read_text())
    keys = [case["key"] for case in manifest["cases"]]
    assert keys == KEYS[target]
    assert all((bundle / f"{key}.ptx").exists() and (bundle / f"{key}.c").exists() for key in keys)
    result = subprocess.run([sys.executable, "-m", "bench.gpu_check", "run", "--bundle", str(bundle), "--libcuda",
                             str(FAKE_DRIVER), "--json", str(tmp_path / "rows.json")],
                            cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = json.loads((tmp_path / "rows.json").read_text())["rows"]
    assert [row["numpy"] for row in rows] == ["ok"] * len(keys), rows
    assert result.stdout.rstrip().splitlines()[-1].startswith("attention fwd")  # the table comes last
