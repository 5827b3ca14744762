"""Triton 3.6's own PTX (sm_80) runs in Tessel's PTX simulator and matches numpy.

Triton is a test-time reference only: its PTX is known to be right on real GPUs,
so these tests check the simulator, independently of Tessel's backends. The PTX
is produced here without a GPU (triton.compile with a GPUTarget) and cached by
Triton in its own cache directory.
"""
import json
import os
import pathlib
import subprocess
import sys
import types

import numpy as np
import pytest

from tessel import gpusim


_PTX: dict = {}


def compile_ptx(kernel, signature, constexprs, num_warps=4, num_stages=3, divisible_by_16=(), capability=80):
    """Triton's PTX for sm_80 (capability 90: sm_90a) of a kernel of triton_ptx_kernels.py, and its metadata,
    compiled in a child process (once per request in a run; Triton caches compiled kernels across runs).
    `divisible_by_16` names the arguments Triton may assume are multiples of 16 (pointers: 16-byte aligned)."""
    request = json.dumps({"kernel": kernel, "signature": signature, "constexprs": constexprs,
                          "num_warps": num_warps, "num_stages": num_stages,
                          "divisible_by_16": list(divisible_by_16), "capability": capability}, sort_keys=True)
    if request not in _PTX:
        env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
        result = subprocess.run([sys.executable, str(pathlib.Path(__file__).with_name("triton_ptx_kernels.py")),
                                 request], capture_output=True, text=True, env=env, timeout=300)
        assert result.returncode == 0, result.stderr[-3000:]
        out = json.loads(result.stdout)
        _PTX[request] = (out["ptx"], types.SimpleNamespace(num_warps=out["num_warps"], shared=out["shared"],
                                                           tensordesc_meta=out["tensordesc_meta"],
                                                           global_scratch_size=out["global_scratch_size"]))
    return _PTX[request]


def scratch_args(ptx):
    # Triton 3.6 appends global and profile scratch pointers; these kernels use neither.
    return [None, None]


@pytest.mark.parametrize("n", [1, 1000, 4096 + 3])
def test_vector_add(rng, n):
    ptx, meta = compile_ptx("add_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32",
                                         "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 1024})
    x, y = rng.standard_normal((2, n)).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    c = gpusim.launch(ptx, "add_kernel", (n + 1023) // 1024, num_warps=meta.num_warps,
                      shared_bytes=meta.shared, args=[x, y, out, n] + scratch_args(ptx))
    np.testing.assert_array_equal(out, x + y)  # one f32 add: exact
    assert c["ctas"] == (n + 1023) // 1024
    assert c["global_store_bytes"] == 4 * n


@pytest.mark.parametrize("rows,cols", [(1, 1), (5, 1000), (7, 1024)])
def test_softmax(rng, rows, cols):
    ptx, meta = compile_ptx("softmax_kernel", {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_stride": "i32",
                                             "out_stride": "i32", "n_cols": "i32", "BLOCK": "constexpr"},
                            {"BLOCK": 1024})
    assert "shfl.sync.bfly" in ptx and "bar.sync" in ptx and "ex2.approx" in ptx
    x = (rng.standard_normal((rows, cols)) * 4).astype(np.float32)
    out = np.zeros_like(x)
    c = gpusim.launch(ptx, "softmax_kernel", rows, num_warps=meta.num_warps, shared_bytes=meta.shared,
                      args=[out, x, cols, cols, cols] + scratch_args(ptx))
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out, ref, rtol=2e-6, atol=1e-7)
    # The barriers are straight-line code: each CTA passes each once.
    assert c["barriers"] == ptx.count("bar.sync") * rows
    assert c["inst_warp"] > 0 and c["shared_load_requests"] > 0


@pytest.mark.parametrize("rows,n", [(3, 700), (4, 2500)])
def test_layer_norm(rng, rows, n):
    ptx, meta = compile_ptx("layer_norm_fwd", {"X": "*fp32", "Y": "*fp32", "W": "*fp32", "B": "*fp32",
                                             "Mean": "*fp32", "Rstd": "*fp32", "stride": "i32", "N": "i32",
                                             "eps": "fp32", "BLOCK_SIZE": "constexpr"}, {"BLOCK_SIZE": 1024})
    x = (rng.standard_normal((rows, n)) * 2 + 0.5).astype(np.float32)
    w, b = rng.standard_normal((2, n)).astype(np.float32)
    y = np.zeros_like(x)
    mean, rstd = np.zeros((2, rows), np.float32)
    eps = 1e-5
    gpusim.launch(ptx, "layer_norm_fwd", rows, num_warps=meta.num_warps, shared_bytes=meta.shared,
                  args=[x, y, w, b, mean, rstd, n, n, eps] + scratch_args(ptx))
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=1)
    var = ((x64 - mu[:, None]) ** 2).mean(axis=1)
    rs = 1 / np.sqrt(var + eps)
    np.testing.assert_allclose(mean, mu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rstd, rs, rtol=1e-5)
    np.testing.assert_allclose(y, (x64 - mu[:, None]) * rs[:, None] * w + b, rtol=1e-4, atol=1e-5)


def test_coalesced_vs_strided_sectors(rng):
    # A warp loading 32 consecutive f32 values touches 128 bytes: 4 sectors per
    # request. With a stride of 8 elements (32 bytes) every lane touches its own
    # sector: 32 sectors per request.
    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "STRIDE": "constexpr", "BLOCK": "constexpr"}
    results = {}
    for stride in (1, 8):
        ptx, meta = compile_ptx("strided_load", sig, {"STRIDE": stride, "BLOCK": 128})
        x = rng.standard_normal(128 * stride).astype(np.float32)
        out = np.zeros(128, np.float32)
        c = gpusim.launch(ptx, "strided_load", 1, num_warps=meta.num_warps, shared_bytes=meta.shared,
                          args=[x, out] + scratch_args(ptx))
        np.testing.assert_array_equal(out, x[::stride])
        results[stride] = c["global_load_sectors"] / c["global_load_requests"]
    assert results[1] == 4
    assert results[8] == 32


def test_speed_is_reported(rng):
    ptx, meta = compile_ptx("softmax_kernel", {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_stride": "i32",
                                             "out_stride": "i32", "n_cols": "i32", "BLOCK": "constexpr"},
                            {"BLOCK": 1024})
    x = rng.standard_normal((64, 1024)).astype(np.float32)
    out = np.zeros_like(x)
    c = gpusim.launch(ptx, "softmax_kernel", 64, num_warps=4, shared_bytes=meta.shared,
                      args=[out, x, 1024, 1024, 1024, None, None])
    assert c["seconds"] > 0 and c["warp_instructions"] > 64 * 4 * 100
