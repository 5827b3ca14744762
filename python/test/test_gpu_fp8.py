"""Dots of 8-bit floats on the NVIDIA backend, per architecture: sm_89 and newer multiply them on the tensor cores
(mma.sync m16n8k32 with e4m3/e5m2 inputs, the two kinds mixed); sm_80, which has no such instruction, multiplies
them as fp16 (which holds them exactly). Each runs in the simulator against numpy; test_fp8.py has the rest."""
import numpy as np
import pytest

from tessel import knobs
from test_fp8 import _matmul_kernel, _random_fp8, as_fp8, values, tl

INSTRUCTION = {
    "sim:sm_80": "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
    "sim:sm_89": "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32",
    "sim:sm_90a": "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32",
}


@pytest.fixture(name="target", params=list(INSTRUCTION))
def each_architecture(request, monkeypatch):
    monkeypatch.setattr(knobs, "target", request.param)
    monkeypatch.setenv("TESSEL_TARGET", request.param)
    return request.param


@pytest.mark.parametrize("num_warps", [1, 4])
def test_tensor_core_instruction(rng, target, num_warps):
    M, N, K = 64, 32, 64
    ac, bc = _random_fp8(rng, (M, K), "e4m3"), _random_fp8(rng, (K, N), "e5m2")
    c = np.zeros((M, N), np.float32)
    kernel = _matmul_kernel[(1, 1)](as_fp8(ac, "e4m3"), as_fp8(bc, "e5m2"), c, M, N, K, BM=M, BN=N, BK=K,
                                    OUT=tl.float32, num_warps=num_warps)
    ptx = kernel.asm["ptx"]
    # 64 x 32 is 16 tiles of 16 x 8 for the warps to share, over K / 32 (or K / 16 on fp16) steps.
    steps = K // (16 if target == "sim:sm_80" else 32)
    assert ptx.count(INSTRUCTION[target]) == 16 * steps // num_warps
    assert "wgmma" not in ptx
    ref = values("e4m3")[ac] @ values("e5m2")[bc]
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4 * np.abs(ref).max())
