"""Triton's host API as Triton's test suites, tutorials and tools call it, after `import tessel as triton`:
JITFunction's `src`, `_unsafe_update_src`, `params`, `cache_key`, `warmup` and `@jit` options; compiled kernels'
`metadata`, `n_regs`, `n_spills`, `_init_handles()` and `kernel[grid](...)`; `reinterpret`, launch options of other
backends, `knobs.language`, `set_allocator`. Results are checked against numpy; the API's shape (names, attributes,
sources) against Triton 3.6 itself, and kernels built from a template against Triton's interpreter
(TRITON_INTERPRET=1, torch CPU tensors)."""
import inspect
import os
import re

import numpy as np
import pytest

os.environ["TRITON_INTERPRET"] = "1"  # read by triton when a kernel is decorated; only the tests import triton
torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
import triton.language as ttl  # noqa: E402

import tessel  # noqa: E402
import tessel.language as tl  # noqa: E402
from tessel import knobs  # noqa: E402

f32, f64, i32 = np.float32, np.float64, np.int32


# ------------------------------------------------------------------------------------------ _unsafe_update_src


def patch_kernel(template, to_replace):
    """Triton's test suites' helper (test_core.py), as they write it for compiled kernels."""
    kernel = tessel.JITFunction(template.fn)
    for key, value in to_replace.items():
        kernel._unsafe_update_src(kernel.src.replace(key, value))
    return kernel


def patch_kernel_interpreted(template, to_replace):
    """The same helper's path under Triton's interpreter: the source, edited, executed with Triton's language."""
    src = tessel.JITFunction(template.fn).src
    for key, value in to_replace.items():
        src = src.replace(key, value)
    scope = {"tl": ttl, "np": np}
    exec("@triton.jit\n" + src, {**scope, "triton": triton}, scope)
    return scope[template.fn.__name__]


@tessel.jit
def _unary_template(Z, X, SIZE: tl.constexpr):
    off = tl.arange(0, SIZE)
    x = tl.load(X + off)
    z = GENERATE_TEST_HERE  # noqa: F821
    tl.store(Z + off, z)


@tessel.jit
def _binary_template(Z, X, Y, SIZE: tl.constexpr):
    off = tl.arange(0, SIZE)
    x = tl.load(X + off)
    y = tl.load(Y + off)
    z = GENERATE_TEST_HERE  # noqa: F821
    tl.store(Z + off, z)


UNARY = [
    ("x + 1", "x + 1", f32),
    ("-x", "-x", i32),
    ("x * x - 3", "x * x - 3", f32),
    ("~x", "~x", i32),
    ("tl.exp(x)", "np.exp(x)", f32),
    ("tl.where(x > 0, x, 0)", "np.where(x > 0, x, 0)", f32),
    ("x.to(tl.float16).to(tl.float32)", "x.astype(np.float16).astype(np.float32)", f32),
    ("tl.abs(x) // 3", "np.abs(x) // 3", i32),
    ("tl.math.floor(x / 2)", "np.floor(x / 2)", f32),
]


@pytest.mark.parametrize("expr, numpy_expr, dtype", UNARY, ids=[e for e, _, _ in UNARY])
def test_template_kernel_rewritten_with_unsafe_update_src(expr, numpy_expr, dtype, rand):
    """Half of Triton's language tests build their kernel this way, then launch it."""
    kernel = patch_kernel(_unary_template, {"GENERATE_TEST_HERE": expr})
    assert "GENERATE_TEST_HERE" not in kernel.src and expr in kernel.src
    x = rand(128, dtype, low=-20, high=20)
    z = np.zeros_like(x)
    kernel[(1,)](z, x, SIZE=128, num_warps=4)
    expected = eval(numpy_expr, {"np": np, "x": x}).astype(dtype)
    # x * x - 3 may be one fma (Triton's default fp fusion; AMD's backend fuses it): the product is not rounded,
    # which differs from numpy's by up to half an ulp of x * x where the difference cancels.
    atol = float(np.spacing(x * x).max()) / 2 if "x * x" in expr else 0
    np.testing.assert_allclose(z, expected, rtol=1e-6, atol=atol)
    # Triton's interpreter runs the same edited template to the same numbers.
    theirs = torch.zeros(128, dtype=getattr(torch, np.dtype(dtype).name))
    patch_kernel_interpreted(_unary_template, {"GENERATE_TEST_HERE": expr})[(1,)](
        theirs, torch.from_numpy(x), SIZE=128)
    np.testing.assert_allclose(z, theirs.numpy(), rtol=1e-6, atol=atol)


BINARY = [("x + y", "x + y", f32, f32), ("x * y", "x * y", i32, i32), ("x & y", "x & y", i32, i32),
          ("tl.maximum(x, y)", "np.maximum(x, y)", f32, f32), ("x < y", "x < y", f32, f32),
          ("x + y", "(x + y.astype(np.float32))", f32, i32)]


@pytest.mark.parametrize("expr, numpy_expr, dx, dy", BINARY, ids=[f"{e}-{np.dtype(a)}-{np.dtype(b)}"
                                                                   for e, _, a, b in BINARY])
def test_binary_template_kernel(expr, numpy_expr, dx, dy, rand):
    kernel = patch_kernel(_binary_template, {"GENERATE_TEST_HERE": expr})
    x, y = rand(64, dx, low=-50, high=50), rand(64, dy, low=-50, high=50)
    expected = eval(numpy_expr, {"np": np, "x": x, "y": y})
    z = np.zeros(64, expected.dtype)
    kernel[(1,)](z, x, y, SIZE=64)
    np.testing.assert_array_equal(z, expected)


def test_each_patched_kernel_is_its_own(rand):
    """Kernels patched from one template with different code, launched in turn, each run their own code."""
    x = rand(32, f32)
    kernels = {e: patch_kernel(_unary_template, {"GENERATE_TEST_HERE": e}) for e in ("x + 1", "x - 1", "x * 2")}
    for expr, kernel in kernels.items():
        z = np.zeros_like(x)
        kernel[(1,)](z, x, SIZE=32)
        np.testing.assert_array_equal(z, eval(expr, {"x": x}))
    assert len({k.cache_key for k in kernels.values()}) == 3


def test_updated_source_recompiles(rand):
    """Replacing the source of a function that was launched: the cache key and the kernel follow it."""
    x = rand(32, f32)
    z = np.zeros_like(x)
    kernel = patch_kernel(_unary_template, {"GENERATE_TEST_HERE": "x + 1"})
    kernel[(1,)](z, x, SIZE=32)
    np.testing.assert_array_equal(z, x + 1)
    key = kernel.cache_key
    kernel._unsafe_update_src(kernel.src.replace("x + 1", "x * 2"))
    assert kernel.cache_key != key
    kernel[(1,)](z, x, SIZE=32)
    np.testing.assert_array_equal(z, x * 2)
    # Back to the first source: its key again.
    kernel._unsafe_update_src(kernel.src.replace("x * 2", "x + 1"))
    assert kernel.cache_key == key


def test_callers_of_an_updated_function_recompile(rand):
    """A kernel that calls a @jit helper whose source is replaced runs the new helper (Triton leaves that to the
    caller; Tessel forgets the kernels of every function that reaches it)."""
    @tessel.jit
    def helper(v):
        return v + 1

    @tessel.jit
    def caller(Z, X):
        off = tl.arange(0, 16)
        tl.store(Z + off, helper(tl.load(X + off)))

    x = rand(16, f32)
    z = np.zeros_like(x)
    caller[(1,)](z, x)
    np.testing.assert_array_equal(z, x + 1)
    key = caller.cache_key
    helper._unsafe_update_src(helper.src.replace("v + 1", "v - 5"))
    assert caller.cache_key != key
    caller[(1,)](z, x)
    np.testing.assert_array_equal(z, x - 5)


def test_src_is_tritons_and_read_only():
    ours = _unary_template
    theirs = triton.runtime.jit.JITFunction(_unary_template.fn)
    # From `def`, without the decorator, dedented: the same text as Triton's.
    assert ours.src == theirs.src and ours.src.startswith("def _unary_template(")
    with pytest.raises(AttributeError, match="_unsafe_update_src"):
        ours.src = "def f(): pass"


def test_new_source_must_keep_the_parameters():
    kernel = tessel.JITFunction(_unary_template.fn)
    with pytest.raises(ValueError, match=r"takes \(Z, X\); the function takes \(Z, X, SIZE\)"):
        kernel._unsafe_update_src("def _unary_template(Z, X):\n    pass\n")
    with pytest.raises(TypeError, match="one plain `def`"):
        kernel._unsafe_update_src("x = 1\n")


def test_errors_point_into_the_updated_source():
    kernel = patch_kernel(_unary_template, {"GENERATE_TEST_HERE": "x & 1.5"})
    with pytest.raises(tessel.CompilationError, match="invalid operands of type") as info:
        kernel[(1,)](np.zeros(32, f32), np.zeros(32, f32), SIZE=32)
    assert info.value.source_line.strip() == "z = x & 1.5  # noqa: F821"
    assert info.value.line == inspect.getsourcelines(_unary_template.fn)[1] + 4


# --------------------------------------------------------------------------------------------- JITFunction's surface


def _params_fn(x_ptr, n, BLOCK: "tl.constexpr", scale: "tl.float32", out: "*fp16", flag: bool = True, k: int = 3):
    pass


def test_params_are_tritons():
    ours = tessel.JITFunction(_params_fn, do_not_specialize=["n", 6], do_not_specialize_on_alignment=[0])
    theirs = triton.runtime.jit.JITFunction(_params_fn, do_not_specialize=["n", 6],
                                            do_not_specialize_on_alignment=[0])

    def describe(fn):
        return [(p.name, p.num, p.is_constexpr, p.is_const, p.do_not_specialize, p.do_not_specialize_on_alignment,
                 p.annotation, p.annotation_type, p.has_default, p.default) for p in fn.params]

    assert describe(ours) == describe(theirs)
    assert ours.arg_names == theirs.arg_names and ours.constexprs == theirs.constexprs == [2]
    assert repr(ours) == repr(theirs)


def test_cache_key():
    a = tessel.JITFunction(_unary_template.fn)
    assert a.cache_key == _unary_template.cache_key and re.fullmatch("[0-9a-f]{64}", a.cache_key)
    b = patch_kernel(_unary_template, {"GENERATE_TEST_HERE": "x"})
    assert b.cache_key != a.cache_key


@tessel.jit(repr=lambda specialization: "named_by_repr", launch_metadata=lambda grid, metadata, args: {"n": 1},
            do_not_specialize=["n"], do_not_specialize_on_alignment=["x_ptr"], noinline=True, version=2,
            debug=True)
def _options_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    off = tl.arange(0, BLOCK)
    tl.store(out_ptr + off, tl.load(x_ptr + off, mask=off < n, other=0) * 2, mask=off < n)


def test_jit_options_are_accepted(rand):
    assert _options_kernel.repr(None) == "named_by_repr"
    assert _options_kernel.launch_metadata(None, None, None) == {"n": 1}
    assert _options_kernel.noinline is True and _options_kernel.version == 2 and _options_kernel.debug is True
    assert [p.do_not_specialize for p in _options_kernel.params] == [False, False, True, False]
    x = rand(64, f32)
    out = np.zeros_like(x)
    kernel = _options_kernel[(1,)](x, out, 40, BLOCK=64)
    np.testing.assert_array_equal(out[:40], x[:40] * 2)
    assert "debug=true" in kernel.options  # @jit(debug=True) compiles with debug
    assert tessel.jit(noinline=True)(_params_fn).noinline is True


def _name_by_specialization(specialization):
    ty = specialization.signature["value1"]
    ones = "_".join(k for k, v in specialization.constants.items() if isinstance(k, str) and v == 1)
    return f"kernel_{ty}_{ones}"


@tessel.jit(repr=_name_by_specialization)
def _repr_kernel(value1, is_one, X):
    tl.store(X, value1 + is_one)


@pytest.mark.parametrize("value, value_type", [(-1, "i32"), (2**31, "i64"), (2**63, "u64")])
def test_repr_names_the_compiled_kernel(value, value_type):
    """@jit(repr=f) names the kernel f(specialization), as Triton's test_value_specialization checks: the
    signature's types (without divisibility) and the constants, the specialized 1 among them."""
    x = np.zeros(1, np.uint64)
    kernel = _repr_kernel[(1,)](value, 1, x)
    assert kernel.name == f"kernel_{value_type}_is_one"
    assert int(x[0]) == (value + 1) % 2**64


def test_runtime_debug_knob_compiles_with_debug(rand, monkeypatch):
    monkeypatch.setattr(knobs.runtime, "debug", True)
    x = rand(16, f32)
    kernel = patch_kernel(_unary_template, {"GENERATE_TEST_HERE": "x"}).warmup(x, x, SIZE=16)
    assert "debug=true" in kernel.options
    monkeypatch.setattr(knobs.runtime, "debug", False)
    assert "debug=false" in patch_kernel(_unary_template, {"GENERATE_TEST_HERE": "x"}).warmup(x, x, SIZE=16).options


def test_pre_run_hooks_see_the_arguments(rand):
    kernel = patch_kernel(_unary_template, {"GENERATE_TEST_HERE": "x + 2"})
    seen = []
    kernel.add_pre_run_hook(lambda *args, **kwargs: seen.append((len(args), sorted(kwargs))))
    x = rand(16, f32)
    z = np.zeros_like(x)
    kernel[(1,)](z, x, SIZE=16)
    np.testing.assert_array_equal(z, x + 2)
    assert seen == [(2, ["SIZE"])]
    with pytest.raises(TypeError, match="not callable"):
        kernel.add_pre_run_hook(3)


@tessel.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    off = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = off < n
    tl.store(out_ptr + off, tl.load(x_ptr + off, mask=mask) + tl.load(y_ptr + off, mask=mask), mask=mask)


OTHER_BACKENDS = {"waves_per_eu": 2, "matrix_instr_nonkdim": 16, "kpack": 2, "schedule_hint": "none",
                  "launch_cooperative_grid": False, "launch_pdl": False}


def test_launch_options_of_other_backends_are_accepted(rand):
    """AMD's tuning options and NVIDIA's launch flags change no result: accepted, and not compiled in."""
    x, y = rand(1000, f32), rand(1000, f32)
    out = np.zeros_like(x)
    kernel = _add_kernel[(8,)](x, y, out, 1000, BLOCK=128, num_warps=4, **OTHER_BACKENDS)
    np.testing.assert_array_equal(out, x + y)
    for name in OTHER_BACKENDS:
        assert name not in kernel.options
    with pytest.raises(TypeError, match="unexpected keyword argument 'waves_per_simd'"):
        _add_kernel[(8,)](x, y, out, 1000, BLOCK=128, waves_per_simd=2)


def test_autotune_configs_with_other_backends_options(rand):
    """Tutorial 03's AMD configs carry matrix_instr_nonkdim and friends among their keyword arguments."""
    configs = [tessel.Config({"BLOCK": 64, "waves_per_eu": 2, "matrix_instr_nonkdim": 16, "kpack": 2}, num_warps=4),
               tessel.Config({"BLOCK": 128, "waves_per_eu": 0, "matrix_instr_nonkdim": 16}, num_warps=8)]
    tuned = tessel.autotune(configs, key=["n"])(tessel.jit(_add_kernel.fn))
    x, y = rand(1000, f32), rand(1000, f32)
    out = np.zeros_like(x)
    tuned[lambda meta: (tessel.cdiv(1000, meta["BLOCK"]),)](x, y, out, 1000)
    np.testing.assert_array_equal(out, x + y)


# ----------------------------------------------------------------------------------------------- compiled kernels


def _ptxas(kernel, pattern):
    return int(re.search(pattern, kernel.asm["ptxas"]).group(1))


def test_compiled_kernel_reports_its_resources(target, rand):
    x = rand(1000, f32)
    kernel = _add_kernel.warmup(x, x, np.zeros_like(x), 1000, BLOCK=256, num_warps=8, grid=(1,))
    kernel._init_handles()
    meta = kernel.metadata
    # num_stages not given: Triton's default for the backend (HIP's 2, the others 3).
    default_stages = 2 if target.startswith("sim:gfx") else 3
    assert meta.name == "_add_kernel" and meta.num_warps == 8 and meta.num_stages == default_stages
    assert meta.num_ctas == 1
    assert meta.hash == kernel.hash and re.fullmatch("[0-9a-f]{64}", meta.hash)
    properties = tessel.runtime.driver.active.utils.get_device_properties()
    if target.startswith("cpu"):
        assert meta.target.backend == "cpu" and meta.target.warp_size == 1
        # A program holds its thread's whole register budget: Triton's occupancy formula gives one per thread.
        assert kernel.n_regs == properties["max_num_regs"] // 8 and kernel.n_spills == 0
        assert properties["max_num_regs"] // (kernel.n_regs * properties["warpSize"] * meta.num_warps) == 1
        assert meta.shared == int(re.search(r"shared=(\d+)", kernel.asm["launch"]).group(1))
    elif target.startswith("sim:gfx"):
        # The code object's metadata (LLVM's AMDGPU backend) says what the kernel holds.
        code = kernel.asm["amdgcn"]
        assert meta.target.backend == "hip" and meta.target.warp_size == 64 and meta.target.arch == target[4:]
        assert kernel.n_regs == int(re.search(r"\.vgpr_count:\s+(\d+)", code).group(1)) > 0
        assert kernel.n_spills == int(re.search(r"\.private_segment_fixed_size:\s+(\d+)", code).group(1)) // 4
        assert meta.shared == int(re.search(r"\.group_segment_fixed_size:\s+(\d+)", code).group(1)) + \
            int(re.search(r"shared=(\d+)", kernel.asm["launch"]).group(1))
    else:
        assert meta.target.backend == "cuda" and meta.target.warp_size == 32
        assert meta.target.arch == int(re.search(r"\d+", target).group())
        assert kernel.n_regs == _ptxas(kernel, r"Used (\d+) registers") > 0
        assert kernel.n_spills == _ptxas(kernel, r"(\d+) bytes stack frame") // 4
        assert meta.shared == int(re.search(r"shared=(\d+)", kernel.asm["launch"]).group(1))
    # Launched as Triton's compiled kernels are, with every argument in order.
    y = rand(1000, f32)
    out = np.zeros_like(x)
    kernel[(4, 1, 1)](x, y, out, 1000, 256)
    np.testing.assert_array_equal(out, x + y)


@tessel.jit
def _persistent_softmax(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                        BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=mask)


def test_tutorial_02_occupancy(rand):
    """Tutorial 02 as Triton 3.6 writes it: warm up, read registers and shared memory, size a persistent grid."""
    properties = tessel.runtime.driver.active.utils.get_device_properties()
    NUM_SM, NUM_REGS = properties["multiprocessor_count"], properties["max_num_regs"]
    SIZE_SMEM, WARP_SIZE = properties["max_shared_mem"], properties["warpSize"]
    x = rand((100, 781), f32)
    y = np.empty_like(x)
    n_rows, n_cols = x.shape
    BLOCK_SIZE = tessel.next_power_of_2(n_cols)
    num_warps = 8
    num_stages = 4 if SIZE_SMEM > 200000 else 2
    kernel = _persistent_softmax.warmup(y, x, x.strides[0] // 4, y.strides[0] // 4, n_rows, n_cols,
                                        BLOCK_SIZE=BLOCK_SIZE, num_stages=num_stages, num_warps=num_warps, grid=(1,))
    kernel._init_handles()
    n_regs = kernel.n_regs
    size_smem = kernel.metadata.shared
    assert n_regs > 0 and size_smem > 0
    occupancy = NUM_REGS // (n_regs * WARP_SIZE * num_warps)
    occupancy = min(occupancy, SIZE_SMEM // size_smem)
    num_programs = min(NUM_SM * occupancy, n_rows)
    assert num_programs >= 1
    kernel[(num_programs, 1, 1)](y, x, x.strides[0] // 4, y.strides[0] // 4, n_rows, n_cols, BLOCK_SIZE, num_stages)
    e = np.exp(x.astype(f64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_warmup_with_mock_tensors():
    kernel = _add_kernel.warmup(tessel.MockTensor(torch.float16), tessel.MockTensor(torch.float16),
                                tessel.MockTensor(torch.float16, [64]), 64, BLOCK=64, grid=(1,))
    assert kernel.signature[:3] == ["*fp16", "*fp16", "*fp16"]
    assert tessel.MockTensor(torch.float32, [4, 8]).stride() == triton.MockTensor(torch.float32, [4, 8]).stride()


def test_a_kernel_compiled_elsewhere_cannot_be_launched_by_itself(rand):
    from tessel.tools.compile import compile_kernel, parse_signature
    kernel = compile_kernel(_add_kernel, parse_signature(_add_kernel, "*fp32, *fp32, *fp32, i32, 64"),
                            "_add_kernel", knobs.target, {})
    with pytest.raises(RuntimeError, match="was not compiled by a launch of its @jit function"):
        kernel[(1,)]


# ------------------------------------------------------------------------------------------------------ reinterpret


@tessel.jit
def _unsigned_kernel(x_ptr, out_ptr):
    off = tl.arange(0, 64)
    x = tl.load(x_ptr + off)
    tl.store(out_ptr + off, (x >> 3) + x // 7)


def _unsigned_kernel_interpreted():
    return patch_kernel_interpreted(_unsigned_kernel, {})


def test_reinterpret_signed_tensors_as_unsigned(rand):
    """Triton's suites pass unsigned data as int tensors seen as uint (torch has no uint32): both the int32 torch
    tensor and a numpy array, checked against numpy's uint32 and against Triton's interpreter."""
    x = rand(64, i32, low=-2**31, high=2**31 - 1)
    expected = (x.view(np.uint32) >> 3) + x.view(np.uint32) // 7
    out = torch.zeros(64, dtype=torch.int32)
    _unsigned_kernel[(1,)](tessel.reinterpret(torch.from_numpy(x), tl.uint32), tessel.reinterpret(out, tl.uint32))
    np.testing.assert_array_equal(out.numpy().view(np.uint32), expected)
    theirs = torch.zeros(64, dtype=torch.int32)
    _unsigned_kernel_interpreted()[(1,)](triton.reinterpret(torch.from_numpy(x), ttl.uint32),
                                         triton.reinterpret(theirs, ttl.uint32))
    np.testing.assert_array_equal(out.numpy(), theirs.numpy())
    numpy_out = np.zeros(64, i32)
    _unsigned_kernel[(1,)](tessel.reinterpret(x, tl.uint32), tessel.reinterpret(numpy_out, tl.uint32))
    np.testing.assert_array_equal(numpy_out.view(np.uint32), expected)


@tessel.jit
def _fp8_to_f32_kernel(x_ptr, out_ptr):
    off = tl.arange(0, 256)
    tl.store(out_ptr + off, tl.load(x_ptr + off).to(tl.float32))


def _decode(bits, dtype):
    """Triton's test_core way of decoding a float format from its dtype's attributes (exponent 0: subnormal)."""
    bits = bits.astype(np.int64)
    width, mantissa, bias = dtype.primitive_bitwidth, dtype.fp_mantissa_width, dtype.exponent_bias
    exp_width = width - mantissa - 1
    sign = (bits >> (width - 1)) & 1
    exp = (bits >> mantissa) & ((1 << exp_width) - 1)
    frac = bits & ((1 << mantissa) - 1)
    return np.where(exp == 0, (-1.0)**sign * 2.0**(1 - bias) * (frac / 2.0**mantissa),
                    (-1.0)**sign * 2.0**(exp - bias) * (1 + frac / 2.0**mantissa))


@pytest.mark.parametrize("dtype, finite", [(tl.float8e5, lambda b: (b & 0x7C) != 0x7C),
                                           (tl.float8e4nv, lambda b: (b & 0x7F) != 0x7F)])
def test_reinterpret_bytes_as_fp8(dtype, finite):
    bits = np.arange(256, dtype=np.uint8)
    bits = np.where(finite(bits), bits, 0).astype(np.uint8)
    out = np.zeros(256, f32)
    _fp8_to_f32_kernel[(1,)](tessel.reinterpret(bits, dtype), out)
    np.testing.assert_array_equal(out, _decode(bits, dtype).astype(f32))


def test_reinterpret_back_and_errors():
    base = torch.zeros(4, dtype=torch.int8)
    wrapper = tessel.reinterpret(base, tl.float8e5)
    assert isinstance(wrapper, tessel.TensorWrapper) and wrapper.dtype == tl.float8e5
    assert tessel.reinterpret(wrapper, torch.int8) is base
    assert tessel.reinterpret(wrapper, tl.uint8).base is base
    assert str(wrapper).startswith("TensorWrapper[fp8e5](")
    with pytest.raises(TypeError, match="Cannot reinterpret"):
        tessel.reinterpret(3, tl.int8)


# --------------------------------------------------------------------------------------------------- the language

DTYPES = ["int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "fp8e4nv", "fp8e5",
          "fp16", "bf16", "fp32", "fp64"]
METHODS = ["is_floating", "is_int", "is_int_signed", "is_int_unsigned", "is_bool", "is_fp8", "is_fp16", "is_bf16",
           "is_fp32", "is_fp64", "is_int8", "is_int16", "is_int32", "is_int64", "is_uint8", "is_uint16", "is_uint32",
           "is_uint64", "is_standard_floating", "is_ptr", "is_block", "is_const", "codegen_name", "mangle",
           "is_fp8e4nv", "is_fp8e5", "is_fp8e4b15", "is_fp8e4b8", "is_fp8e5b16"]


@pytest.mark.parametrize("name", DTYPES)
def test_dtype_introspection_is_tritons(name):
    ours, theirs = tl.dtype(name), ttl.dtype(name)
    for attribute in ("name", "primitive_bitwidth", "itemsize", "fp_mantissa_width", "exponent_bias",
                      "int_bitwidth", "cache_key_part"):
        assert getattr(ours, attribute, None) == getattr(theirs, attribute, None), attribute
    for method in METHODS:
        assert getattr(ours, method)() == getattr(theirs, method)(), method
    assert ours.kind().name == theirs.kind().name
    if ours.is_int():
        assert ours.int_signedness.name == theirs.int_signedness.name
        assert (ours.get_int_min_value(), ours.get_int_max_value()) == (theirs.get_int_min_value(),
                                                                        theirs.get_int_max_value())
    assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
    assert tl.dtype.is_dtype(name) and not tl.dtype.is_dtype("fp7")


def test_pointer_and_constexpr_types_are_tritons():
    assert tl.pi32_t == tl.pointer_type(tl.int32) and str(tl.pi32_t) == str(ttl.pi32_t)
    assert repr(tl.constexpr(3).type) == repr(ttl.constexpr(3).type) == "constexpr_type[3]"
    assert tl.constexpr(3).type == tl.constexpr_type(3) != tl.constexpr_type(4)
    assert tl.pointer_type(tl.float16).mangle() == ttl.pointer_type(ttl.float16).mangle()
    assert isinstance(tl.const, type) and tl.dtype(tl.constexpr("fp16")) == tl.float16


@tessel.jit
def _scalar_kernel(out_ptr, f_ptr, c: tl.const, n, BLOCK: tl.constexpr):
    off = tl.arange(0, BLOCK)
    value = 1
    tl.static_assert(value.dtype == tl.int32)
    big = 2**40
    tl.static_assert(big.dtype == tl.int64)
    half = 0.5
    tl.static_assert(half.dtype == tl.float32)
    flag = True
    tl.static_assert(flag.dtype == tl.int1)
    output = tl.full([BLOCK], value=value, dtype=value.dtype)
    h = (half * 5).to(tl.float16)
    tl.static_assert(h.dtype == tl.float16)
    one = tl.load(f_ptr + tl.arange(0, 1)).item()
    tl.static_assert(len(one.shape) == 0)
    tl.store(out_ptr + off, output * 3 + one.to(tl.int32) + h.cast(tl.int32) + n.cast(tl.int32) + c,
             mask=off < n)


def test_python_numbers_in_a_kernel_are_scalar_tensors():
    """`value = 1; value.dtype` (int32), `x.to(...)` on a number, `tensor.item()`, `tensor.cast`, a `tl.const`
    parameter: the kernel's numbers against numpy."""
    out = np.zeros(8, i32)
    _scalar_kernel[(1,)](out, np.array([5.0], f32), 7, 6, BLOCK=8)
    expected = np.where(np.arange(8) < 6, 3 + 5 + int(np.float16(2.5)) + 6 + 7, 0)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("name, reference", [
    ("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt), ("rsqrt", lambda x: 1 / np.sqrt(x)), ("sin", np.sin),
    ("cos", np.cos), ("floor", np.floor), ("ceil", np.ceil), ("exp2", np.exp2), ("log2", np.log2),
    ("abs", np.abs), ("erf", None), ("fast_expf", np.exp), ("fast_logf", np.log), ("sqrt_rn", np.sqrt),
])
def test_libdevice_functions_on_every_target(name, reference, rand):
    """`tl.extra.cuda.libdevice.<f>` and `from triton.language.extra import libdevice` name tl.math's functions."""
    from tessel.language.extra import libdevice
    from triton.language.extra.cuda import libdevice as tritons
    assert hasattr(tritons, name)  # a libdevice name of Triton's
    fn = getattr(tl.extra.cuda.libdevice, name)
    assert fn is getattr(libdevice, name) is getattr(tl.extra.hip.libdevice, name)
    kernel = patch_kernel(_unary_template, {"GENERATE_TEST_HERE": f"tl.extra.cuda.libdevice.{name}(x)"})
    x = rand(128, f32, low=0.1, high=4)
    z = np.zeros_like(x)
    kernel[(1,)](z, x, SIZE=128)
    if reference is None:
        import math
        reference = np.vectorize(math.erf)
    np.testing.assert_allclose(z, reference(x.astype(f64)), rtol=2e-6, atol=1e-6)


@tessel.jit
def _libdevice_extern_kernel(x_ptr, y_ptr, z_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(x_ptr + i)
    tl.store(y_ptr + i, tl.extra.cuda.libdevice.tanh(x) + tl.extra.cuda.libdevice.log1p(x * x))
    tl.store(z_ptr + i, tl.extra.cuda.libdevice.atan2(x, x + 2.0) + tl.extra.cuda.libdevice.pow(x * x, 0.75))


@pytest.mark.parametrize("dtype", [f32, f64])
def test_libdevice_functions_without_a_tl_math_counterpart(dtype):
    """libdevice's tanh, log1p, atan2, pow (and the other C-library functions) on fp32 and fp64: libdevice's own on
    NVIDIA targets, the C library's on the CPU; against numpy."""
    x = np.linspace(-3, 3, 64).astype(dtype)
    y, z = np.zeros_like(x), np.zeros_like(x)
    _libdevice_extern_kernel[(1,)](x, y, z, N=64)
    x64 = x.astype(f64)
    tol = dict(rtol=4e-6, atol=1e-6) if dtype == f32 else dict(rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(y, np.tanh(x64) + np.log1p(x64 * x64), **tol)
    np.testing.assert_allclose(z, np.arctan2(x64, x64 + 2) + (x64 * x64) ** 0.75, **tol)


def test_libdevice_names_without_a_counterpart_are_errors_that_say_so():
    from tessel.language.extra import libdevice
    assert set(libdevice.__all__) <= set(libdevice._LIBDEVICE_NAMES)
    missing = next(n for n in libdevice._LIBDEVICE_NAMES if n not in libdevice.__all__)
    with pytest.raises(AttributeError, match=f"libdevice.{missing} is not available in Tessel yet"):
        getattr(libdevice, missing)


# ---------------------------------------------------------------------------------------------------------- knobs


@tessel.jit
def _dot_kernel(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :])
    b = tl.load(b_ptr + r[:, None] * N + r[None, :])
    tl.store(c_ptr + r[:, None] * N + r[None, :], tl.dot(a, b))


def test_fp32_default_sets_dots_precision(rand, monkeypatch):
    """knobs.language.fp32_default="ieee" makes fp32 dots exact to fp32 rounding on every target (the GPUs'
    default is tf32, 10 bits of mantissa); the kernels of each setting are kept apart."""
    a, b = rand((32, 32), f32), rand((32, 32), f32)
    reference = a.astype(f64) @ b.astype(f64)
    assert knobs.language.fp32_default is None
    with knobs.language.scope():
        knobs.language.fp32_default = "ieee"
        c = np.zeros((32, 32), f32)
        ieee = _dot_kernel[(1,)](a, b, c, N=32)
        np.testing.assert_allclose(c, reference, rtol=1e-5, atol=1e-4)
    assert knobs.language.fp32_default is None
    default = _dot_kernel.warmup(a, b, c, N=32)
    assert default is not ieee
    monkeypatch.setenv("TRITON_F32_DEFAULT", "tf32")
    fresh = type(knobs.language)()
    assert fresh.fp32_default == "tf32" and fresh.reset().fp32_default == "tf32"


def test_default_fp_fusion_knob(rand):
    x = rand(16, f32)
    with knobs.language.scope():
        knobs.language.default_fp_fusion = False
        kernel = _add_kernel.warmup(x, x, x, 16, BLOCK=16)
        assert "enable_fp_fusion=false" in kernel.options
        given = _add_kernel.warmup(x, x, x, 16, BLOCK=16, enable_fp_fusion=True)
        assert "enable_fp_fusion=true" in given.options
    assert "enable_fp_fusion=true" in _add_kernel.warmup(x, x, x, 16, BLOCK=16).options


def test_knob_groups_have_tritons_names():
    for group in ("language", "runtime", "autotuning"):
        ours, theirs = getattr(knobs, group), getattr(triton.knobs, group)
        for name in ours.knobs:
            assert hasattr(theirs, name), f"knobs.{group}.{name}"
    # Read from Triton's environment variables when made (this module set TRITON_INTERPRET=1 for Triton).
    assert type(knobs.runtime)().interpret is True


# ------------------------------------------------------------------------------------------------------ allocator


@tessel.jit
def _descriptor_copy(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    y_desc = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    y_desc.store([0, 0], x_desc.load([0, 0]) * 2)


def test_set_allocator_is_accepted_and_not_needed(rand):
    """Triton needs an allocator for descriptors made in a kernel; Tessel's need no scratch: one that fails when
    called is never called, and the kernel's numbers are right."""
    def allocator(size, alignment, stream):
        raise AssertionError("the allocator was called")

    from tessel.runtime import allocation
    tessel.set_allocator(allocator)
    try:
        assert allocation.get_allocator() is allocator
        x = rand((16, 16), f32)
        y = np.zeros_like(x)
        _descriptor_copy[(1,)](x, y, 16, 16, BM=16, BN=16)
        np.testing.assert_array_equal(y, x * 2)
    finally:
        tessel.set_allocator(None)
    with pytest.raises(TypeError, match="expected a callable"):
        tessel.set_allocator(42)


@pytest.mark.parametrize("name", ["TritonError", "OutOfResources", "InterpreterError", "JITFunction", "MockTensor",
                                  "TensorWrapper", "reinterpret", "set_allocator", "Config", "autotune", "heuristics",
                                  "jit", "cdiv", "next_power_of_2", "knobs", "CompilationError", "runtime",
                                  "constexpr_function", "must_use_result"])
def test_host_names_are_tritons(name):
    assert hasattr(triton, name) and hasattr(tessel, name)
    assert hasattr(tessel.runtime.jit, "KernelParam") and hasattr(triton.runtime.jit, "KernelParam")


# ------------------------------------------------------------------------------------------ pointers and integers


@tessel.jit
def _address_arithmetic(x_ptr, y_ptr, out_ptr, n, CASE: tl.constexpr, BLOCK: tl.constexpr):
    off = tl.arange(0, BLOCK)
    mask = off < n
    if CASE == "offsets in bytes":
        addrs = x_ptr.to(tl.int64) + off.to(tl.int64) * 4
        z = tl.load(addrs.to(tl.pointer_type(tl.float32)), mask=mask)
    elif CASE == "unsigned address":
        addrs = x_ptr.to(tl.uint64) + (off * 4).to(tl.uint64)
        z = tl.load(addrs.to(tl.pointer_type(tl.float32)), mask=mask)
    elif CASE == "choose an array by address":
        base = tl.where(off % 2 == 0, x_ptr.to(tl.int64), y_ptr.to(tl.int64))
        z = tl.load((base + off * 4).to(tl.pointer_type(tl.float32)), mask=mask)
    elif CASE == "bits as int32":
        z = tl.load((x_ptr + off).to(tl.pointer_type(tl.int32)), mask=mask).to(tl.float32)
    elif CASE == "bitcast pointer":
        z = tl.load(tl.cast(x_ptr + off, tl.pointer_type(tl.int32), bitcast=True), mask=mask).to(tl.float32)
    elif CASE == "bytes":
        z = tl.load(x_ptr.to(tl.pointer_type(tl.uint8)) + off, mask=mask).to(tl.float32)
    elif CASE == "null test":
        z = tl.zeros((BLOCK,), tl.float32) + x_ptr.to(tl.int1).to(tl.float32)
    else:
        tl.static_assert(CASE == "table in memory")
        # A table of addresses written and read back by the kernel (each element by the thread that owns it).
        table = y_ptr.to(tl.pointer_type(tl.int64))
        tl.store(table + off, x_ptr.to(tl.int64) + off * 4, mask=mask)
        z = tl.load(tl.load(table + off, mask=mask, other=0).to(tl.pointer_type(tl.float32)), mask=mask)
    tl.store(out_ptr + off, z, mask=mask)


def _expected(case, x, y):
    n = 100
    if case in ("offsets in bytes", "unsigned address", "table in memory"):
        return x[:n]
    if case == "choose an array by address":
        return np.where(np.arange(n) % 2 == 0, x[:n], y[:n])
    if case in ("bits as int32", "bitcast pointer"):
        return x.view(np.int32)[:n].astype(f32)
    if case == "bytes":
        return x.view(np.uint8)[:n].astype(f32)
    return np.ones(n, f32)


@pytest.mark.parametrize("case", ["offsets in bytes", "unsigned address", "choose an array by address",
                                  "bits as int32", "bitcast pointer", "bytes", "null test", "table in memory"])
def test_pointers_and_integers(case, rand):
    """`x.to(tl.pointer_type(T))` on int64 addresses, pointers to int64 / uint64 / bool, and pointers to pointers of
    another type (tutorial 08 loads its matrices' addresses; kernels read an array's bits or bytes)."""
    x, y = rand(128, f32), rand(128, f32)
    if case == "table in memory":
        y = np.zeros(128, np.int64).view(f32)  # room for 128 addresses
    out = np.zeros(128, f32)
    _address_arithmetic[(1,)](x, y, out, 100, CASE=case, BLOCK=128)
    np.testing.assert_array_equal(out[:100], _expected(case, x, y))
    np.testing.assert_array_equal(out[100:], 0)


@tessel.jit
def _grouped_scale(table_ptr, sizes_ptr, out_ptr, BLOCK: tl.constexpr):
    g = tl.program_id(0)
    src = tl.load(table_ptr + g).to(tl.pointer_type(tl.float16))
    n = tl.load(sizes_ptr + g)
    off = tl.arange(0, BLOCK)
    tl.store(out_ptr + g * BLOCK + off, tl.load(src + off, mask=off < n, other=0).to(tl.float32) * 2)


def test_pointer_table_from_the_host(target, rand):
    """Tutorial 08's way: the arrays of each group reached through a table of their addresses (data_ptr())."""
    if not target.startswith("cpu"):
        pytest.skip("the simulator copies only the kernel's argument arrays into its memory: the host addresses "
                    "inside an array are not simulator addresses (as host addresses are not GPU addresses on a GPU)")
    groups = [rand(n, np.float16) for n in (5, 64, 33)]
    table = np.array([a.__array_interface__["data"][0] for a in groups], np.int64)
    out = np.zeros((3, 64), f32)
    _grouped_scale[(3,)](table, np.array([5, 64, 33], np.int32), out, BLOCK=64)
    for g, a in enumerate(groups):
        np.testing.assert_array_equal(out[g, :a.size], a.astype(f32) * 2)
        np.testing.assert_array_equal(out[g, a.size:], 0)


@pytest.mark.parametrize("expr, message", [
    ("x.to(tl.int32).to(tl.pointer_type(tl.float32))", r"cannot cast i32\[128\] to \*fp32"),
    ("x.to(tl.pointer_type(tl.float32))", r"cannot cast fp32\[128\] to \*fp32"),
    ("X.to(tl.int32)", r"cannot cast \*fp32 to i32: pointers convert to other pointers, to and from 64-bit"),
    ("X.to(tl.float32)", r"cannot cast \*fp32 to fp32"),
])
def test_pointer_casts_that_are_errors(expr, message):
    kernel = patch_kernel(_unary_template, {"GENERATE_TEST_HERE": expr})
    with pytest.raises(tessel.CompilationError, match=message):
        kernel[(1,)](np.zeros(128, f32), np.zeros(128, f32), SIZE=128)


@tessel.jit
def _tensor_methods(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    (out_ptr + offs).store(tl.load(x_ptr + offs).sqrt_rn(), mask=offs < N - 2)


def test_store_and_sqrt_rn_are_tensor_methods(rand):
    # As in Triton: `ptr.store(value, mask=...)` and `x.sqrt_rn()`.
    assert all(hasattr(ttl.tensor, m) and hasattr(tl.tensor, m) for m in ("store", "sqrt_rn"))
    x = np.abs(rand((16,), np.float32)) + 1
    out = np.zeros(16, np.float32)
    _tensor_methods[(1,)](x, out, 16)
    np.testing.assert_array_equal(out[:14], np.sqrt(x[:14]))
    assert (out[14:] == 0).all()


# ------------------------------------------------------------------------------------------- constant pointers


@tessel.jit
def _pick(a, b, choose_b):
    if choose_b:
        return b
    else:
        return a


_CONST_TAILS = {
    "direct": "final_out = c_out if CHOOSE_CONST else out",
    "call": "final_out = _pick(out, c_out, choose_const)",
    "ternary": "final_out = c_out if choose_const else out",
    "if": "if choose_const:\n        final_out = c_out\n    else:\n        final_out = out",
    "atomic": "tl.atomic_add(c_out + offsets, val, mask=mask)\n    final_out = out",
}


@tessel.jit
def _const_template(in_ptr: tl.const, out, c_out: tl.const, choose_const, n, BLOCK: tl.constexpr,
                    CHOOSE_CONST: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    val = tl.load(in_ptr + offsets, mask=mask)  # loads through a constant pointer are fine
    LOSE_TAIL  # noqa: F821
    tl.store(final_out + offsets, val, mask=mask)  # noqa: F821


@pytest.mark.parametrize("mode, choose_const, error", [
    ("direct", False, None),
    ("direct", True, "Cannot store to a constant pointer"),
    ("call", False, "Inconsistent return types"),
    ("ternary", False, "Ternary expression with dynamic condition has inconsistent type"),
    ("if", False, "Mismatched type for final_out"),
    ("atomic", False, "Cannot store to a constant pointer"),
])
def test_const_pointer_parameters(mode, choose_const, error, rand):
    """A pointer parameter annotated tl.const is a constant pointer, as in Triton's test_const: loads through it
    work, stores and atomics are errors with Triton's words, and a run-time choice between it and a plain pointer
    is a type mismatch (Triton's words for an if, a conditional expression and a call's returns)."""
    kernel = patch_kernel(_const_template, {"LOSE_TAIL": _CONST_TAILS[mode]})
    x = rand(128, f32)
    out = np.zeros_like(x)
    args = (x, out, out, choose_const, 128)
    if error is None:
        kernel[(1,)](*args, BLOCK=128, CHOOSE_CONST=choose_const)
        np.testing.assert_array_equal(out, x)
    else:
        with pytest.raises(tessel.CompilationError, match=error):
            kernel[(1,)](*args, BLOCK=128, CHOOSE_CONST=choose_const)


@tessel.jit
def _program_shape_kernel(out_ptr):
    # Compile-time values: a block of one element per thread.
    lanes = tl.arange(0, tl.extra.cuda.num_threads())
    tl.store(out_ptr + lanes, lanes * 0 + tl.extra.cuda.num_warps())


@pytest.mark.parametrize("num_warps", [1, 2, 8])
def test_num_warps_and_num_threads(num_warps):
    """tl.extra.cuda.num_warps() / num_threads(): the num_warps a kernel is compiled with, and 32 threads per warp
    (Triton's NVIDIA utilities), as the names in Triton's module."""
    from triton.language.extra import cuda as tritons
    assert {"num_warps", "num_threads"} <= set(tritons.__all__) and set(tl.extra.cuda.__all__) <= set(tritons.__all__)
    out = np.zeros(2 * 32 * num_warps, np.int32)
    _program_shape_kernel[(1,)](out, num_warps=num_warps)
    np.testing.assert_array_equal(out, [num_warps] * (32 * num_warps) + [0] * (32 * num_warps))


@tessel.jit
def _special_registers(out_ptr):
    t0 = tl.extra.cuda.globaltimer()
    s = tl.extra.cuda.smid()
    t1 = tl.extra.cuda.globaltimer()
    pid = tl.program_id(0)
    tl.store(out_ptr + 3 * pid, t0)
    tl.store(out_ptr + 3 * pid + 1, t1)
    tl.store(out_ptr + 3 * pid + 2, s.to(tl.int64))


@tessel.jit
def _dependent_launch(x_ptr):
    tl.extra.cuda.gdc_wait()
    tl.store(x_ptr, tl.load(x_ptr) + 1)
    tl.extra.cuda.gdc_launch_dependents()


def test_nvidia_special_registers_and_dependent_launch(target):
    """tl.extra.cuda.globaltimer/smid (PTX, as Triton writes them: NVIDIA targets only) and gdc_wait /
    gdc_launch_dependents (griddepcontrol, sm_90 on): a timer that does not go back, a multiprocessor id below the
    device's count; elsewhere errors at the call's line."""
    from triton.language.extra import cuda as tritons
    assert {"globaltimer", "smid", "gdc_wait", "gdc_launch_dependents"} <= set(tritons.__all__)
    out = np.zeros(3 * 4, np.int64)
    x = np.zeros(1, np.int32)
    if not target.startswith(("sim:sm", "cuda:")):
        match = "NVIDIA special register" if target.startswith(("sim:gfx", "hip:")) else "inline assembly"
        with pytest.raises(tessel.CompilationError, match=match) as info:
            _special_registers[(4,)](out)
        assert "t0 = tl.extra.cuda.globaltimer()" in str(info.value)
        return
    _special_registers[(4,)](out)
    t0, t1, sm = out[0::3], out[1::3], out[2::3]
    assert (t0 > 0).all() and (t1 >= t0).all()
    count = tessel.runtime.driver.active.utils.get_device_properties()["multiprocessor_count"]
    assert ((sm >= 0) & (sm < count)).all()
    if target.endswith("sm_80"):
        with pytest.raises(tessel.CompilationError, match="griddepcontrol needs sm_90"):
            _dependent_launch[(1,)](x)
        return
    _dependent_launch[(1,)](x)
    assert x[0] == 1


@pytest.mark.parametrize("num_warps", [3, 0, 6])
def test_num_warps_not_a_power_of_two(num_warps):
    """Triton's options assert num_warps is a power of 2 (AssertionError, its words); Tessel's error is that, a
    ValueError and a TritonError."""
    x = np.zeros(16, np.int32)
    with pytest.raises(AssertionError, match="num_warps must be a power of 2") as info:
        _program_shape_kernel[(1,)](x, num_warps=num_warps)
    assert isinstance(info.value, ValueError) and isinstance(info.value, tessel.TritonError)
