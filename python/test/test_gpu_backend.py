"""Tessel's own NVIDIA backend: kernels compiled to PTX (and cubins through ptxas) for sm_80 and sm_90a, run in the
PTX simulator (targets sim:sm_80 and sim:sm_90a) and checked against numpy. The simulator itself is validated on
Triton's PTX (test_gpusim_triton*.py), independently of this backend."""
import numpy as np
import pytest

import tessel
import tessel.language as tl
from tessel import knobs

SIM_TARGETS = ["sim:sm_80", "sim:sm_90a"]


@pytest.fixture(params=SIM_TARGETS)
def sim(request, monkeypatch, target):
    """Runs the test on a simulated GPU (once: the CPU run of the suite's own target fixture is replaced)."""
    if target != "cpu" and not target.startswith("sim:"):
        pytest.skip("runs on the simulator targets only")
    monkeypatch.setattr(knobs, "target", request.param)
    return request.param


@tessel.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@tessel.jit
def softmax_kernel(in_ptr, out_ptr, n_cols, in_stride, out_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * in_stride + cols, mask=cols < n_cols, other=float("-inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


@tessel.jit
def reduce2d_kernel(x_ptr, sums_ptr, maxs_ptr, argmax_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    K: tl.constexpr = N if AXIS == 0 else M
    out = tl.arange(0, K)
    tl.store(sums_ptr + out, tl.sum(x, axis=AXIS))
    tl.store(maxs_ptr + out, tl.max(x, axis=AXIS))
    tl.store(argmax_ptr + out, tl.argmax(x, axis=AXIS))


@tessel.jit
def row_norm_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    # A loop carrying a block, a scalar reduction, broadcasting back.
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
        acc += v * v
    rnorm = 1.0 / tl.sqrt(tl.sum(acc, axis=0))
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
        tl.store(y_ptr + row * N + cols, v * rnorm, mask=cols < N)


@tessel.jit
def transpose_kernel(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    t = tl.trans(x)
    tl.store(y_ptr + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :], t)


def test_vector_add_matches_numpy(sim, rng):
    n = 3000  # not a multiple of the block: the last program is masked
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    kernel = add_kernel[(3,)](x, y, out, n, BLOCK=1024)
    np.testing.assert_array_equal(out, x + y)
    # The PTX went through ptxas for the simulated architecture.
    assert kernel.target == sim
    assert "ptxas" in kernel.asm and "Used" in kernel.asm["ptxas"]
    assert ".local" not in kernel.asm["ptx"]


@pytest.mark.parametrize("n_cols", [1, 100, 128, 781])
def test_softmax_matches_numpy(sim, rng, n_cols):
    rows = 5
    x = (rng.standard_normal((rows, n_cols)) * 3).astype(np.float32)
    out = np.zeros_like(x)
    block = max(32, 1 << (n_cols - 1).bit_length())
    softmax_kernel[(rows,)](x, out, n_cols, x.shape[1], out.shape[1], BLOCK=block)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("shape", [(16, 64), (64, 16), (128, 128), (4, 8), (1, 32)])
@pytest.mark.parametrize("axis", [0, 1])
def test_2d_reductions_match_numpy(sim, rng, shape, axis):
    m, n = shape
    x = rng.standard_normal(shape).astype(np.float32)
    k = n if axis == 0 else m
    sums, maxs, arg = np.zeros(k, np.float32), np.zeros(k, np.float32), np.zeros(k, np.int32)
    reduce2d_kernel[(1,)](x, sums, maxs, arg, M=m, N=n, AXIS=axis)
    np.testing.assert_allclose(sums, x.sum(axis=axis), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(maxs, x.max(axis=axis))
    np.testing.assert_array_equal(arg, x.argmax(axis=axis))


def test_loops_and_scalar_math(sim, rng):
    rows, n = 3, 1000
    x = rng.standard_normal((rows, n)).astype(np.float32)
    y = np.zeros_like(x)
    row_norm_kernel[(rows,)](x, y, n, BLOCK=256)
    np.testing.assert_allclose(y, x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(32, 64), (8, 128)])
def test_transpose_through_shared_memory(sim, rng, shape):
    x = rng.standard_normal(shape).astype(np.float32)
    y = np.zeros(shape[::-1], np.float32)
    transpose_kernel[(1,)](x, y, M=shape[0], N=shape[1])
    np.testing.assert_array_equal(y, x.T)


def test_torch_tensors_and_views(sim):
    torch = pytest.importorskip("torch")
    x = torch.arange(4096, dtype=torch.float32)
    # Two views of one tensor: the output overlaps the input shifted by one block.
    add_kernel[(2,)](x, x, x[1024:], 2048, BLOCK=1024)
    want = torch.arange(4096, dtype=torch.float32)
    assert torch.equal(x[:1024], want[:1024])
    assert torch.equal(x[1024:2048], 2 * want[:1024])


def test_cuda_target_compiles_without_a_gpu(monkeypatch, target, rng):
    if target != "cpu":
        pytest.skip("once per run")
    monkeypatch.setattr(knobs, "target", "cuda:90a")
    x = np.zeros(16, np.float32)
    kernel = add_kernel.warmup(x, x, x, 16, BLOCK=1024, grid=(1,))
    assert kernel.target == "cuda:90a"
    assert ".target sm_90a" in kernel.asm["ptx"]
    assert "Used" in kernel.asm["ptxas"]
    with pytest.raises(Exception, match="compiled for cuda:90a .* cannot run in this process"):
        add_kernel[(1,)](x, x, x, 16, BLOCK=1024)


def test_shared_memory_over_the_limit_is_a_compile_error(monkeypatch, target):
    if target != "cpu":
        pytest.skip("once per run")
    monkeypatch.setattr(knobs, "target", "cuda:80")
    x = np.zeros(1, np.float32)
    # A 256x256 fp32 transpose goes through 256 KiB of shared memory: more than sm_80's 163 KiB.
    with pytest.raises(Exception, match="shared memory"):
        transpose_kernel.warmup(x, x, M=256, N=256, grid=(1,))
