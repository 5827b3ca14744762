"""@jit(noinline=True) on every target, against numpy: the function is generated once per specialization (the
types of its tensor arguments and the values of everything else) as a function of its own, which every call calls
(func.call in the kernel's tile IR); results, tuples, returns inside run-time ifs, loops, nesting, and errors."""
import re

import numpy as np
import pytest

import tessel as triton
import tessel.language as tl


@triton.jit(noinline=True)
def _scaled_sum(x, scale):
    return tl.sum(x, axis=0) * scale


@triton.jit
def _sums(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = _scaled_sum(tl.load(x_ptr + offs), 2.0)
    b = _scaled_sum(tl.load(y_ptr + offs), 2.0)
    c = _scaled_sum(tl.load(x_ptr + offs), 3.0)
    tl.store(out_ptr + 0, a)
    tl.store(out_ptr + 1, b)
    tl.store(out_ptr + 2, c)


def _callees(ttir: str) -> list[str]:
    return re.findall(r"func\.func private @(\w+)", ttir)


@pytest.mark.parametrize("N", [1, 16, 128])
def test_calls_and_specializations(rng, N):
    x = rng.standard_normal(N).astype(np.float32)
    y = rng.standard_normal(N).astype(np.float32)
    out = np.zeros(3, np.float32)
    _sums[(1,)](x, y, out, N)
    want = np.array([x.sum(dtype=np.float64) * 2, y.sum(dtype=np.float64) * 2, x.sum(dtype=np.float64) * 3])
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    # Same tensor types and scale: one function, called twice; another scale: another function.
    ttir = _sums.warmup(x, y, out, N, grid=(1,)).asm["ttir"]
    assert len(_callees(ttir)) == 2, ttir
    assert len(re.findall(r"call @_scaled_sum_\d+\(", ttir)) == 3, ttir


@triton.jit(noinline=True)
def _min_max(x):
    return tl.min(x, axis=1), tl.max(x, axis=1)


@triton.jit(noinline=True)
def _clip_or_negate(x, lo, hi, flag):
    if flag > 0:
        return tl.minimum(tl.maximum(x, lo), hi).to(x.dtype)
    return -x


@triton.jit
def _rows(x_ptr, lo_ptr, hi_ptr, out_ptr, flag, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    lo, hi = _min_max(x)
    y = _clip_or_negate(x, lo[:, None] * 0.5, hi[:, None] * 0.5, flag)
    tl.store(out_ptr + offs, y)
    tl.store(lo_ptr + tl.arange(0, M), lo)
    tl.store(hi_ptr + tl.arange(0, M), hi)


@pytest.mark.parametrize("flag", [1, -1])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_tuples_and_a_return_in_a_runtime_if(rand, flag, dtype):
    M, N = 8, 32
    x = rand((M, N), dtype, low=-50, high=50)
    out = np.zeros_like(x)
    lo, hi = np.zeros(M, dtype), np.zeros(M, dtype)
    _rows[(1,)](x, lo, hi, out, flag, M, N)
    np.testing.assert_array_equal(lo, x.min(axis=1))
    np.testing.assert_array_equal(hi, x.max(axis=1))
    half = np.float32(0.5) if dtype != np.int32 else 0.5
    want_lo = (x.min(axis=1, keepdims=True) * half).astype(np.float32)
    want_hi = (x.max(axis=1, keepdims=True) * half).astype(np.float32)
    want = np.minimum(np.maximum(x, want_lo), want_hi) if flag > 0 else -x
    np.testing.assert_allclose(out.astype(np.float32), want.astype(dtype).astype(np.float32), rtol=1e-3)


@triton.jit(noinline=True)
def _axpy(a, x, y):
    return a * x + y


@triton.jit(noinline=True)
def _step(acc, x, k, BIAS: tl.constexpr):
    # A noinline function calling another, with a constexpr parameter.
    return _axpy(k.to(tl.float32), x, acc) + BIAS


@triton.jit
def _loop(x_ptr, out_ptr, n, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    acc = tl.zeros([N], tl.float32)
    for k in range(n):
        acc = _step(acc, x, k, 1.0)
    acc = _step(acc, x, n, 0.0)
    tl.store(out_ptr + offs, acc)


@pytest.mark.parametrize("n", [0, 1, 5])
def test_called_in_a_loop_and_nested(rng, n):
    N = 64
    x = rng.standard_normal(N).astype(np.float32)
    out = np.zeros_like(x)
    _loop[(1,)](x, out, n, N)
    acc = np.zeros(N, np.float64)
    for k in range(n):
        acc = k * x + acc + 1.0
    acc = n * x + acc
    np.testing.assert_allclose(out, acc, rtol=1e-5, atol=1e-5)
    ttir = _loop.warmup(x, out, n, N, grid=(1,)).asm["ttir"]
    # _step for BIAS=1.0 and 0.0, and the one _axpy both call.
    assert sorted(re.sub(r"_\d+$", "", f) for f in _callees(ttir)) == ["_axpy", "_step", "_step"], ttir


@triton.jit(noinline=True)
def _store_and_count(ptr, offs, value):
    tl.store(ptr + offs, value)


@triton.jit
def _no_result(out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    _store_and_count(out_ptr, offs, offs * tl.program_id(0))
    _store_and_count(out_ptr + N, offs, offs + 1)


def test_no_result_and_pointer_arguments(target):
    N = 32
    out = np.zeros(2 * N, np.int32)
    _no_result[(1,)](out, N)
    np.testing.assert_array_equal(out, np.concatenate([np.zeros(N), np.arange(1, N + 1)]).astype(np.int32))


@triton.jit(noinline=True)
def _recursive(x):
    return _recursive(x + 1)


@triton.jit
def _calls_recursive(out_ptr):
    tl.store(out_ptr, _recursive(tl.program_id(0)))


def test_recursion_is_an_error_at_the_line():
    out = np.zeros(1, np.int32)
    with pytest.raises(triton.CompilationError, match="_recursive calls itself") as info:
        _calls_recursive[(1,)](out)
    assert "_recursive(x + 1)" in str(info.value)


@triton.jit(noinline=True)
def _bad(x):
    return x + tl.arange(0, 3)


@triton.jit
def _calls_bad(out_ptr):
    tl.store(out_ptr, _bad(tl.program_id(0)))


def test_an_error_in_the_callee_names_its_line():
    out = np.zeros(1, np.int32)
    with pytest.raises(triton.CompilationError) as info:
        _calls_bad[(1,)](out)
    assert "x + tl.arange(0, 3)" in str(info.value)


@triton.jit(noinline=True)
def _add_one(src, dst, offs):
    tl.store(dst + offs, tl.load(src + offs) + 1)


@triton.jit
def _writes_through_a_call(src_ptr, dst_ptr, N: tl.constexpr):
    _add_one(src_ptr, dst_ptr, tl.arange(0, N))


def test_stores_in_a_callee_make_the_argument_written():
    # The launcher refuses a read-only array the kernel may store to: also through a called function.
    N = 16
    src, dst = np.arange(N, dtype=np.int32), np.zeros(N, np.int32)
    src.flags.writeable = False
    _writes_through_a_call[(1,)](src, dst, N)
    np.testing.assert_array_equal(dst, np.arange(1, N + 1))
    dst.flags.writeable = False
    with pytest.raises(ValueError, match="'dst_ptr' is a read-only array, but the kernel may store to it"):
        _writes_through_a_call[(1,)](src, dst, N)


@triton.jit(noinline=True)
def _special(x):
    return tl.extra.cuda.libdevice.tanh(x) + tl.extra.cuda.libdevice.atan2(x, x + 2.0)


@triton.jit
def _calls_libdevice(x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, _special(tl.load(x_ptr + offs)))


def test_library_functions_in_a_callee(rng):
    # Each target links (NVIDIA: libdevice) or maps (AMD: OCML) the library functions its called functions use.
    x = rng.uniform(0.1, 2.0, 64).astype(np.float32)
    y = np.zeros_like(x)
    _calls_libdevice[(1,)](x, y, 64)
    np.testing.assert_allclose(y, np.tanh(x) + np.arctan2(x, x + 2.0), rtol=1e-5, atol=1e-6)


def test_every_target_calls_functions(target):
    # One function per specialization and a call per call site, in the machine code: the CPU's LLVM IR (the
    # blocks passed as buffers, the function noinline), and on the GPUs, which the simulators run (NVIDIA: .func
    # and call.uni; AMD: s_swappc_b64 into the function, s_setpc_b64 back).
    x, y, out = np.ones(16, np.float32), np.ones(16, np.float32), np.zeros(3, np.float32)
    kernel = _sums.warmup(x, y, out, 16, grid=(1,))
    if target.startswith("cpu"):
        ir = kernel.asm["llvmir"]
        assert len(re.findall(r"^define [^\n]*@_scaled_sum_\d+\(", ir, re.M)) == 2, ir
        assert len(re.findall(r"call void @_scaled_sum_\d+\(", ir)) == 3, ir
    elif target.startswith(("sim:sm", "cuda:")):
        ptx = kernel.asm["ptx"]
        assert len(re.findall(r"^\.func .*_scaled_sum_\d+\($", ptx, re.M)) == 2, ptx
        assert len(re.findall(r"call\.uni \(retval0\), _scaled_sum_\d+,", ptx)) == 3, ptx
    elif target.startswith(("sim:gfx", "hip:")):  # test_amd_sim.py runs these on every AMD chip
        code = kernel.asm["amdgcn"]
        assert len(re.findall(r"^_scaled_sum_\d+:$", code, re.M)) == 2, code
        assert len(re.findall(r"s_swappc_b64", code)) == 3, code
        assert len(re.findall(r"s_setpc_b64", code)) == 2, code


@triton.jit(noinline=True)
def _block_product(a_ptrs, b_ptrs, acc):
    # A dot (operands staged through shared memory) and a reduction across warps (its scratch), in a function
    # called from a loop whose caller keeps its own block in shared memory alive across the call.
    a = tl.load(a_ptrs)
    b = tl.load(b_ptrs)
    return tl.dot(a, b, acc), tl.max(tl.abs(a.to(tl.float32)), axis=1)


@triton.jit
def _matmul(a_ptr, b_ptr, c_ptr, m_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], tl.float32)
    biggest = tl.zeros([BM], tl.float32)
    for k in range(0, K, BK):
        a_ptrs = a_ptr + rm[:, None] * K + (k + rk)[None, :]
        b_ptrs = b_ptr + (k + rk)[:, None] * BN + rn[None, :]
        acc, m = _block_product(a_ptrs, b_ptrs, acc)
        biggest = tl.maximum(biggest, m)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)
    tl.store(m_ptr + rm, biggest)


@pytest.mark.parametrize("BM,BN,BK,K", [(16, 16, 16, 64), (64, 32, 32, 128)])
def test_a_dot_and_a_reduction_in_a_called_function(rng, BM, BN, BK, K):
    a = rng.standard_normal((BM, K)).astype(np.float16)
    b = rng.standard_normal((K, BN)).astype(np.float16)
    c = np.zeros((BM, BN), np.float32)
    m = np.zeros(BM, np.float32)
    _matmul[(1,)](a, b, c, m, K, BM, BN, BK, num_warps=4)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=2e-3, atol=2e-3)
    np.testing.assert_array_equal(m, np.abs(a.astype(np.float32)).max(axis=1))


@triton.jit(noinline=True)
def _reversed(ptr, N: tl.constexpr):
    return tl.load(ptr + N - 1 - tl.arange(0, N))


@triton.jit
def _reverse_in_place(ptr, N: tl.constexpr):
    # The callee's loads of other threads' elements come before the caller's stores over them.
    x = _reversed(ptr, N)
    tl.store(ptr + tl.arange(0, N), x)
    y = _reversed(ptr, N)
    tl.store(ptr + tl.arange(0, N), y + 1)


@pytest.mark.parametrize("N", [128, 1024])
def test_memory_order_across_calls(N):
    x = np.arange(N, dtype=np.int32)
    _reverse_in_place[(1,)](x, N, num_warps=4)
    np.testing.assert_array_equal(x, np.arange(N, dtype=np.int32) + 1)


@triton.jit(noinline=True)
def _descriptor_rows(desc, row, BM: tl.constexpr):
    return desc.load([row, 0]) * 2


@triton.jit
def _with_descriptor(x_ptr, y_ptr, M, N: tl.constexpr, BM: tl.constexpr):
    desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, N])
    row = tl.program_id(0) * BM
    out = _descriptor_rows(desc, row, BM)
    offs = (row + tl.arange(0, BM))[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(y_ptr + offs, out, mask=(row + tl.arange(0, BM))[:, None] < M)


def test_a_tensor_descriptor_argument(rng):
    M, N, BM = 40, 32, 16
    x = rng.standard_normal((M, N)).astype(np.float32)
    y = np.zeros_like(x)
    triton.set_allocator(lambda size, alignment, stream: np.zeros(size, np.uint8))
    _with_descriptor[(triton.cdiv(M, BM),)](x, y, M, N, BM)
    np.testing.assert_array_equal(y, x * 2)


@triton.jit(noinline=True)
def _copy_doubled(src, dst, row):
    dst.store([row, 0], src.load([row, 0]) * 2)


@triton.jit
def _host_descriptors(x_desc, y_desc, BM: tl.constexpr):
    # Host-made descriptors (tensor maps on sm_90a in the kernel itself) read through base, shape and strides in a
    # called function.
    _copy_doubled(x_desc, y_desc, tl.program_id(0) * BM)
    z = x_desc.load([tl.program_id(0) * BM, 0])
    y_desc.store([tl.program_id(0) * BM, 0], z * 2 + 0 * _copy_twice_marker(z))


@triton.jit(noinline=True)
def _copy_twice_marker(z):
    return tl.sum(z, axis=1)[:, None]


def test_host_descriptor_arguments(rng):
    from tessel.tools.tensor_descriptor import TensorDescriptor
    M, N, BM = 40, 32, 16
    x = rng.standard_normal((M, N)).astype(np.float32)
    y = np.zeros_like(x)
    _host_descriptors[(triton.cdiv(M, BM),)](TensorDescriptor(x, [M, N], [N, 1], [BM, N]),
                                             TensorDescriptor(y, [M, N], [N, 1], [BM, N]), BM)
    np.testing.assert_array_equal(y, x * 2)


@triton.jit(noinline=True)
def _zero_first(X):
    tl.store(X, 0)


@triton.jit
def _maxnreg_kernel(X):
    _zero_first(X)
    tl.store(X + 1, 0)
    _zero_first(X + 2)


def test_maxnreg_bounds_the_kernel_not_its_functions(target):
    # Triton's test_maxnreg: .maxnreg 42 on the .entry, not on the .func's.
    X = np.ones(3, np.int32)
    kernel = _maxnreg_kernel[(1,)](X, maxnreg=42)
    np.testing.assert_array_equal(X, 0)
    if target.startswith(("sim:sm", "cuda:")):
        ptx = kernel.asm["ptx"]
        assert re.search(r"\.visible \.entry [^{;]*\.maxnreg 42", ptx), ptx
        assert not re.search(r"\.func [^{;]*\.maxnreg", ptx), ptx
        assert ptx.count(".func") >= 1


@triton.jit(noinline=True)
def _checked_half(x):
    tl.device_assert(x < 100, "x must be below 100")
    return x // 2


@triton.jit
def _calls_checked(x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, _checked_half(tl.load(x_ptr + offs)))


def test_an_assertion_in_a_called_function():
    # A debug kernel's assertion inside a called function fails the launch with the function's line; one that
    # holds lets the call return its result.
    x = np.arange(64, dtype=np.int32)
    y = np.zeros_like(x)
    _calls_checked[(1,)](x, y, 64, debug=True)
    np.testing.assert_array_equal(y, x // 2)
    x[37] = 500
    with pytest.raises(triton.DeviceAssertionError, match="x must be below 100"):
        _calls_checked[(1,)](x, y, 64, debug=True)
