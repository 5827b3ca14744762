"""The target seam as users meet it: target names and their errors, compile options that reach the compiler and the
cache key, `driver.active` as Triton's programs call it, TESSEL_TARGET."""
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

import tessel as triton
import tessel.language as tl
from tessel import _C


@triton.jit
def _axpb(x_ptr, out_ptr, a, b, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(out_ptr + o, tl.load(x_ptr + o) * a + b)


def test_fp_fusion_option_reaches_the_compiler(rng, target):
    x = rng.standard_normal(256).astype(np.float32)
    a, b = np.float32(1.1), np.float32(-0.3)
    unfused = x * a + b  # numpy rounds the product, then the sum
    fused = (x.astype(np.float64) * np.float64(a) + np.float64(b)).astype(np.float32)  # one rounding: an exact FMA
    assert not np.array_equal(unfused, fused)  # the inputs tell the two apart
    out = np.zeros_like(x)
    k = _axpb[(1,)](x, out, float(a), float(b), N=256, enable_fp_fusion=False)
    np.testing.assert_array_equal(out, unfused)
    assert "enable_fp_fusion=false" in k.options
    k = _axpb[(1,)](x, out, float(a), float(b), N=256)
    np.testing.assert_array_equal(out, fused)
    assert "enable_fp_fusion=true" in k.options and k.target == target


def test_launch_options_are_part_of_the_kernel(rng):
    x = rng.standard_normal(64).astype(np.float32)
    out = np.zeros_like(x)
    k8 = _axpb[(1,)](x, out, 2.0, 1.0, N=64, num_warps=8, num_stages=2)
    k4 = _axpb[(1,)](x, out, 2.0, 1.0, N=64)
    assert "num_warps=8" in k8.options and "num_stages=2" in k8.options
    assert "num_warps=4" in k4.options and k8 is not k4


@pytest.mark.parametrize("options, error, message", [
    # num_warps as Triton's options assert it (test_host_api has the error's classes).
    ({"num_warps": 3}, AssertionError, "num_warps must be a power of 2, got 3"),
    ({"num_stages": -1}, _C.BackendError, "expected an integer >= 0"),
    ({"enable_fp_fusion": "maybe"}, _C.BackendError, "expected true or false"),
])
def test_bad_option_values(options, error, message):
    x, out = np.zeros(64, np.float32), np.zeros(64, np.float32)
    with pytest.raises(error, match=message):
        _axpb[(1,)](x, out, 2.0, 1.0, N=64, **options)


@pytest.mark.parametrize("name, message", [
    ("tpu", "unknown target 'tpu'"),
    ("hip:gfx1100", "'hip:gfx1100' is not a GPU Tessel compiles for"),
    ("cuda:sm90", "expected cuda:80, cuda:90a"),
])
def test_target_names(name, message):
    with pytest.raises(_C.BackendError, match=message):
        _C.parse_target(name)


def test_target_names_that_work():
    assert _C.parse_target(" cpu ") == "cpu"
    assert _C.parse_target("cpu:x86-64-v3") == "cpu:x86-64-v3"
    assert {"cpu", "cuda", "hip", "sim"} <= set(_C.available_backends())
    assert _C.parse_target("hip:gfx942") == "hip:gfx942" and not _C.target_can_run("hip:gfx942")
    assert _C.parse_target("cuda:90a") == "cuda:90a" and _C.parse_target("sim:sm_80") == "sim:sm_80"
    assert _C.target_can_run("sim:sm_90a") and not _C.target_can_run("cuda:80")
    # The description keys caches: it names the CPU model and its features.
    assert _C.target_description("cpu:x86-64-v3") != _C.target_description("cpu:x86-64")
    # GFNI and AVX512-VBMI stay off on every x86 model, the host's included: LLVM 22 miscompiles int8 shifts with
    # the first and never finishes legalizing some int8/int64 conversions with the second (test_fuzz_findings.py).
    if platform.machine() in ("x86_64", "AMD64"):
        for name in ("cpu", "cpu:icelake-server", "cpu:znver4"):
            features = _C.target_description(name).split(";")[-1].split(",")
            assert "-gfni" in features and "-avx512vbmi" in features, name


def test_compile_only_target_at_launch(monkeypatch):
    # hip:gfx942 compiles here (an hsaco) but has no HIP runtime, or one without a GPU, to run on.
    monkeypatch.setattr(triton.knobs, "target", "hip:gfx942")
    monkeypatch.setenv("TESSEL_LIBHIP_PATH", "")  # the default library, which this machine lacks
    x, out = np.zeros(64, np.float32), np.zeros(64, np.float32)
    with pytest.raises(_C.BackendError, match=r"compiled for hip:gfx942 .*: the HIP runtime \(libamdhip64.so\) "
                                              "(cannot be loaded|does not initialize)"):
        _axpb[(1,)](x, out, 2.0, 1.0, N=64)


def test_gpu_target_without_a_gpu_at_launch(monkeypatch):
    # cuda:90a compiles here (PTX, and a cubin through ptxas) but has no GPU to run on.
    monkeypatch.setattr(triton.knobs, "target", "cuda:90a")
    x, out = np.zeros(64, np.float32), np.zeros(64, np.float32)
    with pytest.raises(_C.BackendError, match="compiled for cuda:90a .*cannot run here: the CUDA driver .*cannot be loaded"):
        _axpb[(1,)](x, out, 2.0, 1.0, N=64)


def test_driver_active_as_triton_programs_use_it(target):
    driver = triton.runtime.driver.active
    current = driver.get_current_target()
    properties = driver.utils.get_device_properties(driver.get_current_device())
    if target.startswith("cpu"):
        assert current.backend == "cpu" and current.warp_size == 1
        assert properties["multiprocessor_count"] == _C.num_threads()
    elif target.startswith("sim:gfx"):  # a simulated AMD GPU, with host arrays
        assert current.backend == "hip" and current.warp_size == 64 and current.arch == target[4:]
        assert properties["warpSize"] == 64 and properties["multiprocessor_count"] > 0
    else:  # a simulated GPU is the GPU it simulates, with host arrays
        assert target.startswith("sim:sm_")
        assert current.backend == "cuda" and current.warp_size == 32
        assert current.arch == int(target.split("_")[1].rstrip("a"))
        assert properties["warpSize"] == 32 and properties["multiprocessor_count"] > 0
    import torch
    assert driver.get_active_torch_device() == torch.device("cpu")


def test_tessel_target_environment_variable(tmp_path):
    # A whole run on another target: a CPU model this machine can run (x86-64 is a subset of every x86-64 CPU).
    if not _C.target_can_run("cpu:x86-64"):
        pytest.fail("every x86-64 machine runs code for the baseline x86-64 model")
    script = (
        "import numpy as np, tessel as triton, tessel.language as tl\n"
        "@triton.jit\n"
        "def k(x_ptr, N: tl.constexpr):\n"
        "    o = tl.arange(0, N)\n"
        "    tl.store(x_ptr + o, tl.load(x_ptr + o) + 1)\n"
        "x = np.zeros(16, np.float32)\n"
        "kernel = k[(1,)](x, N=16)\n"
        "print(kernel.target, x.sum())\n")
    (tmp_path / "k.py").write_text(script)
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    env = dict(os.environ, TESSEL_TARGET="cpu:x86-64", TESSEL_CACHE_DIR=str(cache))
    result = subprocess.run([sys.executable, str(tmp_path / "k.py")], capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["cpu:x86-64", "16.0"]


@pytest.mark.parametrize("name", ["cuda:61", "cuda:86a", "cuda:95", "sim:sm_72"])
def test_unsupported_gpu_architectures_are_named(name):
    # A clear error, not LLVM's fatal error about PTX versions.
    with pytest.raises(_C.BackendError, match=f"target '{name}' is not an architecture Tessel compiles for: use"):
        _C.target_description(name)


@pytest.mark.parametrize("name,ptx_version", [("cuda:75", "8.4"), ("cuda:89", "8.4"), ("cuda:100a", "8.6"),
                                              ("cuda:120", "8.7")])
def test_every_supported_gpu_architecture_compiles(monkeypatch, name, ptx_version):
    # Each through ptxas, with the PTX version the architecture needs (8.4 at least: mma.sync with 8-bit floats).
    monkeypatch.setattr(triton.knobs, "target", name)
    x = np.zeros(64, np.float32)
    kernel = _axpb.warmup(x, x, 2.0, 1.0, N=64, grid=(1,))
    sm = "sm_" + name.split(":")[1]
    assert f".version {ptx_version}" in kernel.asm["ptx"] and f".target {sm}" in kernel.asm["ptx"]
    assert "Used" in kernel.asm["ptxas"]
