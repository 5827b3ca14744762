"""The Python subset inside kernels: loops with loop-carried values, `if` on runtime
scalars and on constexprs, constexpr parameters and globals, calls to other @jit
functions, and indexing with None and `:`."""
import numpy as np
import pytest

import tessel as triton
import tessel.language as tl

f16, f32, i32 = np.float16, np.float32, np.int32

# A global a kernel may read: it is a constexpr, so its value is part of the kernel.
_OFFSET = tl.constexpr(5)


# ---------------------------------------------------------------------------
# loops
# ---------------------------------------------------------------------------


@triton.jit
def _row_sum_loop_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    # The trip count is a runtime value: a real loop with `acc` carried around it.
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@pytest.mark.parametrize("n_cols", [1, 31, 32, 100, 1000])
@pytest.mark.parametrize("dt", [f32, f16], ids=["f32", "f16"])
def test_for_loop_accumulator(rand, dt, n_cols):
    rows = 6
    x = rand((rows, n_cols), dt)
    out = np.zeros(rows, f32)
    _row_sum_loop_kernel[(rows,)](x, out, n_cols, x.shape[1], BLOCK=32)
    np.testing.assert_allclose(out, x.astype(np.float64).sum(1), rtol=1e-5, atol=1e-4)


@triton.jit
def _loop_forms_kernel(out_ptr, BLOCK: tl.constexpr, STEPS: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    # Constant trip count with a stride; two loop-carried values of different types.
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    total = 0.0
    for i in range(1, STEPS, 2):
        acc = acc * 2 + i
        total += i * 0.5
    # Fully unrolled loop; its induction variable is a constexpr.
    for j in tl.static_range(3):
        acc += offs * j
    tl.store(out_ptr + offs, acc)
    tl.store(out_ptr + BLOCK, total.to(tl.int32))


def test_loop_forms():
    block, steps = 16, 7
    out = np.zeros(block + 1, i32)
    _loop_forms_kernel[(1,)](out, BLOCK=block, STEPS=steps)
    acc = np.zeros(block, np.int64)
    total = 0.0
    for i in range(1, steps, 2):
        acc = acc * 2 + i
        total += i * 0.5
    for j in range(3):
        acc += np.arange(block) * j
    np.testing.assert_array_equal(out[:block], acc)
    assert out[block] == int(total)


@triton.jit
def _while_kernel(x_ptr, out_ptr):
    # A runtime `while` on a scalar loaded from memory: halvings until <= 1.
    pid = tl.program_id(0)
    v = tl.load(x_ptr + pid)
    count = 0
    while v > 1:
        v = v // 2
        count += 1
    tl.store(out_ptr + pid, count)


def test_while_loop():
    x = np.array([1, 2, 3, 1000, 2**30, 0, -5], i32)
    out = np.full(x.size, -1, i32)
    _while_kernel[(x.size,)](x, out)
    ref = [int(np.floor(np.log2(v))) if v > 1 else 0 for v in x]
    np.testing.assert_array_equal(out, ref)


# ---------------------------------------------------------------------------
# if
# ---------------------------------------------------------------------------


@triton.jit
def _runtime_if_kernel(x_ptr, flags_ptr, out_ptr, alpha, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = row * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    # A condition loaded from memory, different for each program ...
    flag = tl.load(flags_ptr + row)
    if flag > 0:
        y = x * 2.0
    elif flag < 0:
        y = -x
    else:
        y = x + 100.0
    # ... and one on a scalar argument, with no else branch.
    if alpha > 0:
        y = y * alpha
    tl.store(out_ptr + offs, y)


@pytest.mark.parametrize("alpha", [0.5, -1.0])
def test_if_runtime_scalar(rand, alpha):
    rows, block = 9, 16
    x = rand((rows, block), f32)
    flags = np.array([1, -1, 0, 5, -5, 0, 2, 0, -3], i32)
    out = np.zeros_like(x)
    _runtime_if_kernel[(rows,)](x, flags, out, alpha, BLOCK=block)
    ref = np.where(flags[:, None] > 0, x * 2, np.where(flags[:, None] < 0, -x, x + 100))
    if alpha > 0:
        ref = ref * f32(alpha)
    np.testing.assert_allclose(out, ref, rtol=1e-6)


@triton.jit
def _activation_kernel(x_ptr, out_ptr, n, ACTIVATION: tl.constexpr, SCALE: tl.constexpr = 1.0, BLOCK: tl.constexpr = 64):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    # Constexpr conditions are resolved at compile time: only one branch exists.
    if ACTIVATION == "relu":
        x = tl.maximum(x, 0.0)
    elif ACTIVATION == "leaky":
        x = tl.where(x > 0, x, x * 0.01)
    if SCALE != 1.0:
        x = x * SCALE
    HALF: tl.constexpr = BLOCK // 2
    tl.static_assert(HALF * 2 == BLOCK)
    tl.store(out_ptr + offs, x + _OFFSET, mask=mask)


@pytest.mark.parametrize(
    "activation,scale", [("relu", 1.0), ("leaky", 1.0), ("none", 3.0), ("relu", 0.5)]
)
def test_if_constexpr(rand, activation, scale):
    n = 150
    x = rand(n, f32)
    out = np.zeros(n, f32)
    kwargs = {} if scale == 1.0 else {"SCALE": scale}  # also exercises the default
    _activation_kernel[(triton.cdiv(n, 64),)](x, out, n, ACTIVATION=activation, **kwargs)
    ref = {"relu": np.maximum(x, 0), "leaky": np.where(x > 0, x, x * f32(0.01)), "none": x}[activation]
    # x * SCALE + 5 may be one fused multiply-add (enable_fp_fusion, on by default as in Triton): one rounding less,
    # so the result is within half an ulp of x * SCALE plus half an ulp of its own of the exact value.
    want = ref.astype(np.float64) * scale + 5
    tol = (np.spacing(np.abs(ref * f32(scale))) + np.spacing(np.abs(want).astype(f32))) / 2
    assert np.all(np.abs(out - want) <= tol), np.max(np.abs(out - want) - tol)


# ---------------------------------------------------------------------------
# calls to other @jit functions
# ---------------------------------------------------------------------------


@triton.jit
def _clamp(x, lo, hi):
    return tl.minimum(tl.maximum(x, lo), hi)


@triton.jit
def _stats(x, mask, N: tl.constexpr):
    # Calls another helper and returns a tuple.
    x = _clamp(x, -2.0, 2.0)
    x = tl.where(mask, x, 0.0)
    return tl.sum(x, axis=0), tl.sum(x * x, axis=0) / N


@triton.jit(noinline=True)
def _square(v):
    # A real (not inlined) call; Triton allows noinline functions scalar arguments only.
    return v * v


@triton.jit
def _helper_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    total, mean_sq = _stats(x, mask, BLOCK)
    tl.store(out_ptr, total)
    tl.store(out_ptr + 1, mean_sq)
    tl.store(out_ptr + 2, _square(total))


def test_jit_helper_calls(rand):
    n, block = 50, 64
    x = rand(n, f32)
    out = np.zeros(3, f32)
    _helper_kernel[(1,)](x, out, n, BLOCK=block)
    c = np.clip(x, -2, 2)
    np.testing.assert_allclose(out[0], c.sum(), rtol=1e-5)
    np.testing.assert_allclose(out[1], (c * c).sum() / block, rtol=1e-5)
    np.testing.assert_allclose(out[2], c.sum() ** 2, rtol=1e-5)


# ---------------------------------------------------------------------------
# indexing with None and :
# ---------------------------------------------------------------------------


@triton.jit
def _outer_kernel(x_ptr, y_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm, mask=rm < M, other=0.0)
    y = tl.load(y_ptr + rn, mask=rn < N, other=0.0)
    outer = x[:, None] * y[None, :]
    # A [BM, BN] block broadcast against [1, BN] and [BM, 1] views.
    outer = outer + y[None, :] - x[:, None]
    # A trailing None gives a [BM, BN, 1] block; reducing it away is the identity.
    outer = tl.sum(outer[:, :, None], axis=2)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], outer, mask=mask)


@pytest.mark.parametrize("shape", [(1, 1), (10, 7), (32, 16)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_indexing_none_and_slice(rand, shape):
    M, N = shape
    x = rand(M, f32)
    y = rand(N, f32)
    out = np.zeros((M, N), f32)
    _outer_kernel[(1,)](x, y, out, M, N, BM=32, BN=16)
    np.testing.assert_allclose(out, x[:, None] * y[None, :] + y[None, :] - x[:, None], rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------
# conditional expressions on run-time scalars
# ---------------------------------------------------------------------------


@triton.jit
def _ternary_kernel(x_ptr, ret_ptr, a_ptr, b_ptr, n):
    pid = tl.program_id(0)
    # Each side stores: only the taken one runs (the expression is an if, as in Triton).
    tl.store(ret_ptr + pid, tl.load(a_ptr + pid)) if pid % 2 == 0 else tl.store(ret_ptr + pid, tl.load(b_ptr + pid))
    # The untaken side is not evaluated: x_ptr + pid is past the array's n elements there.
    v = tl.load(x_ptr + pid) if pid < n else -1.0
    w = (v * 2 if pid == 1 else v * 3) if pid < 3 else v
    tl.store(ret_ptr + 8 + pid, w)


def test_conditional_expression_runs_one_side():
    n = 6
    x = np.arange(n, dtype=f32)  # programs 6 and 7 would read past it
    a, b = np.full(8, 5, f32), np.full(8, 7, f32)
    ret = np.zeros(16, f32)
    _ternary_kernel[(8,)](x, ret, a, b, n)
    pid = np.arange(8)
    v = np.where(pid < n, np.arange(8, dtype=f32), -1.0)
    w = np.where(pid < 3, np.where(pid == 1, v * 2, v * 3), v)
    np.testing.assert_array_equal(ret[:8], np.where(pid % 2 == 0, a, b))
    np.testing.assert_array_equal(ret[8:], w)


def test_conditional_expression_types_must_agree():
    @triton.jit
    def mixed(x_ptr):
        pid = tl.program_id(0)
        v = tl.load(x_ptr) if pid == 0 else pid
        tl.store(x_ptr, v)

    with pytest.raises(triton.CompilationError,
                       match="Ternary expression with dynamic condition has inconsistent types fp32 and i32") as info:
        mixed[(1,)](np.zeros(1, f32))
    assert "tl.load(x_ptr) if pid == 0 else pid" in str(info.value)
