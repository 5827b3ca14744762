"""8-bit floats on the NVIDIA backend, per architecture: sm_89 and newer multiply them on the tensor cores
(mma.sync m16n8k32 with e4m3/e5m2 inputs, the two kinds mixed; on sm_90a with whole warpgroups, wgmma m64nNk32);
sm_80, which has no such instruction, multiplies them as fp16 (which holds them exactly). Conversions to and from fp32 use cvt there too. Each runs in the
simulator against numpy; test_fp8.py has the rest."""
import numpy as np
import pytest

from tessel import knobs
from test_fp8 import _convert_kernel, _matmul_kernel, _random_fp8, as_fp8, codes_of, nearest_codes, tl, torch, values

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


def _fp8_dot_ptx(rng, K, num_warps):
    """The PTX of an e4m3 x e5m2 dot of 64 x K by K x 32 into fp32, after checking its result against the
    formats' value tables."""
    M, N = 64, 32
    ac, bc = _random_fp8(rng, (M, K), "e4m3"), _random_fp8(rng, (K, N), "e5m2")
    c = np.zeros((M, N), np.float32)
    kernel = _matmul_kernel[(1, 1)](as_fp8(ac, "e4m3"), as_fp8(bc, "e5m2"), c, M, N, K, BM=M, BN=N, BK=K,
                                    OUT=tl.float32, num_warps=num_warps)
    ref = values("e4m3")[ac] @ values("e5m2")[bc]
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4 * np.abs(ref).max())
    return kernel.asm["ptx"]


@pytest.mark.parametrize("num_warps", [1, 4])
def test_tensor_core_instruction(rng, target, num_warps):
    K = 64
    ptx = _fp8_dot_ptx(rng, K, num_warps)
    steps = K // (16 if target == "sim:sm_80" else 32)
    if target == "sim:sm_90a" and num_warps == 4:
        # One warpgroup: its 64 x 32 tile is one instruction per K step of 32.
        assert ptx.count("wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e5m2") == steps
        assert "mma.sync" not in ptx
    else:
        # 64 x 32 is 16 tiles of 16 x 8 for the warps to share, over K / 32 (or K / 16 on fp16) steps.
        assert ptx.count(INSTRUCTION[target]) == 16 * steps // num_warps
        assert "wgmma" not in ptx


@pytest.mark.parametrize("num_warps", [1, 4])
def test_k16_runs_as_fp16(rng, target, num_warps):
    # K = 16 is half of the 8-bit instructions' K (m16n8k32, m64nNk32): every architecture multiplies such a dot's
    # operands extended to fp16, which holds them exactly, on m16n8k16 or, on sm_90a with a warpgroup, wgmma
    # m64n32k16 (a backend error on sm_89+ before).
    ptx = _fp8_dot_ptx(rng, 16, num_warps)
    if target == "sim:sm_90a" and num_warps == 4:
        assert ptx.count("wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16") == 1
    else:
        assert ptx.count(INSTRUCTION["sim:sm_80"]) == 16 // num_warps
    assert "e4m3.e5m2" not in ptx


def test_conversions_use_the_target_instructions(rng, target):
    # sm_89 and newer round fp32 to 8 bits and widen 8 bits to fp16 with cvt, two values at a time; sm_80 does both
    # in integer arithmetic. Either way the codes are numpy's nearest (test_fp8.py checks every case).
    x = torch.from_numpy(rng.standard_normal(1000) * 50).float()
    q = torch.empty(1000, dtype=torch.float8_e4m3fn)
    to_fp8 = _convert_kernel[(4,)](x, q, 1000, TO=tl.float8e4nv, BLOCK=256)
    np.testing.assert_array_equal(codes_of(q), nearest_codes(x.double().numpy(), "e4m3"))
    back = torch.empty(1000, dtype=torch.float32)
    to_fp32 = _convert_kernel[(4,)](q, back, 1000, TO=tl.float32, BLOCK=256)
    np.testing.assert_array_equal(back.numpy(), values("e4m3")[codes_of(q)].astype(np.float32))
    native = target != "sim:sm_80"
    assert ("cvt.rn.satfinite.e4m3x2.f32" in to_fp8.asm["ptx"]) == native
    assert ("cvt.rn.f16x2.e4m3x2" in to_fp32.asm["ptx"]) == native
