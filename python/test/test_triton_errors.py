"""Triton's error classes and words, as Triton's own test suites check them: `pytest.raises(triton.TritonError,
match="invalid operands of type")`, `str(e.value.__cause__)`, `isinstance(e.value, CompileTimeAssertionFailure)`.

Each bad kernel runs under Triton's interpreter (TRITON_INTERPRET=1, torch CPU tensors) and under Tessel: both must
fail, Triton's error must contain the phrase (so the phrase is Triton's, not ours), and Tessel's must be a
CompilationError (a TritonError) that shows the kernel's line and has the phrase in its message and in its
`__cause__`. The same kernels with valid operands run and match numpy."""
import os
import pickle
import re
import types

import numpy as np
import pytest

os.environ["TRITON_INTERPRET"] = "1"  # read by triton when a kernel is decorated; only the tests import triton
torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
import triton.language as ttl  # noqa: E402

import tessel  # noqa: E402
import tessel.language as tl  # noqa: E402
from tessel import _C  # noqa: E402

N = 32


def _bad_kernel(X, Y, XI, XU, Z, CASE: tl.constexpr):
    off = tl.arange(0, 32)
    xf = tl.load(X + off)
    xi = tl.load(XI + off)
    xu = tl.load(XU + off)
    z = xf
    if CASE == "bitwise float":
        z = xf & xi
    elif CASE == "or floats":
        z = xf | xf
    elif CASE == "xor float literal":
        z = xf ^ 1
    elif CASE == "shift by float":
        z = xi << xf
    elif CASE == "mod signedness":
        z = xi % xu
    elif CASE == "div signedness":
        z = xi / xu
    elif CASE == "floordiv signedness":
        z = xu // xi
    elif CASE == "floordiv floats":
        z = xf // xf
    elif CASE == "literal out of range":
        z = xi + 0xFFFFFFFFFFFFFF
    elif CASE == "unsigned and negative":
        z = xu + -1
    elif CASE == "pointer plus float":
        z = tl.load(X + xf)
    elif CASE == "pointer plus pointer":
        z = tl.load(X + Y)
    elif CASE == "pointer minus pointer":
        z = tl.load(X - Y)
    elif CASE == "minus pointer":
        z = tl.load(-X)
    elif CASE == "invert float":
        z = ~xf
    elif CASE == "minimum of pointers":
        z = tl.load(tl.minimum(X, Y))
    elif CASE == "slice":
        z = xf[2:]
    elif CASE == "program_id axis":
        z = xf + tl.program_id(20)
    elif CASE == "arange size":
        z = xf + tl.arange(0, 3)
    elif CASE == "arange order":
        z = xf + tl.arange(8, 4)
    elif CASE == "full size":
        z = xf + tl.full((33,), 0, dtype=tl.int64)
    elif CASE == "reshape size":
        z = tl.reshape(xf, (4, 4))
    elif CASE == "broadcast":
        z = xf + tl.arange(0, 16)
    elif CASE == "expand_dims axis":
        z = tl.expand_dims(xf, 2)
    elif CASE == "expand_dims duplicate":
        z = tl.expand_dims(xf, (0, 0))
    elif CASE == "permute":
        z = tl.permute(tl.reshape(xf, (4, 8)), (0, 0))
    elif CASE == "bitcast width":
        z = xf.to(tl.int16, bitcast=True)
    elif CASE == "fp8 and int":
        z = tl.zeros((32,), tl.float8e5) + xi
    elif CASE == "undefined name":
        z = xf + undefined_name  # noqa: F821
    tl.store(Z + off, z)


# case -> (a regular expression in Triton's error and Tessel's, the kernel line Tessel shows)
CASES = {
    "bitwise float": ("invalid operands of type", "z = xf & xi"),
    "or floats": ("invalid operands of type", "z = xf | xf"),
    "xor float literal": ("invalid operands of type", "z = xf ^ 1"),
    "shift by float": ("invalid operands of type", "z = xi << xf"),
    "mod signedness": ("Cannot use .* because they have different signedness", "z = xi % xu"),
    "div signedness": ("Cannot use .* because they have different signedness", "z = xi / xu"),
    "floordiv signedness": ("Cannot use .* because they have different signedness", "z = xu // xi"),
    "floordiv floats": ("unexpected type", "z = xf // xf"),
    "literal out of range": ("Scalar 72057594037927935 is out of range for type int32", "z = xi + 0xFFFFFFFFFFFFFF"),
    "unsigned and negative": ("Cannot perform a binary operation between an unsigned tensor and a negative scalar",
                              "z = xu + -1"),
    "pointer plus float": ("invalid operands of type", "z = tl.load(X + xf)"),
    "pointer plus pointer": ("cannot add pointers together", "z = tl.load(X + Y)"),
    "pointer minus pointer": ("invalid operands of type", "z = tl.load(X - Y)"),
    "minus pointer": (r"wrong type argument to unary minus \(", "z = tl.load(-X)"),
    "invert float": (r"wrong type argument to unary invert \(", "z = ~xf"),
    "minimum of pointers": ("invalid operands of type", "z = tl.load(tl.minimum(X, Y))"),
    "slice": ("unsupported tensor index: slice", "z = xf[2:]"),
    "program_id axis": ("program_id axis must be 0, 1, or 2 but got 20", "z = xf + tl.program_id(20)"),
    "arange size": ("arange's range must be a power of 2", "z = xf + tl.arange(0, 3)"),
    "arange order": ("arange's end argument must be greater than the start argument", "z = xf + tl.arange(8, 4)"),
    "full size": ("Shape element 0 must be a power of 2", "z = xf + tl.full((33,), 0, dtype=tl.int64)"),
    "reshape size": (r"reshape\(\) cannot change total number of elements in tensor", "z = tl.reshape(xf, (4, 4))"),
    "broadcast": ("incompatible dimensions at index 0: 32 and 16", "z = xf + tl.arange(0, 16)"),
    "expand_dims axis": ("invalid axis 2. Expected -2 <= axis < 2", "z = tl.expand_dims(xf, 2)"),
    "expand_dims duplicate": (r"duplicate axes, normalized axes = \[0, 0\]", "z = tl.expand_dims(xf, (0, 0))"),
    "permute": (r"must be a permutation of 0, 1, \.\.\., n-1, but were .0, 0.",
                "z = tl.permute(tl.reshape(xf, (4, 8)), (0, 0))"),
    "bitcast width": ("Cannot bitcast data-type of size 32 to data-type of size 16",
                      "z = xf.to(tl.int16, bitcast=True)"),
    "fp8 and int": ("unexpected type fp8e5", "z = tl.zeros((32,), tl.float8e5) + xi"),
    "undefined name": ("name 'undefined_name' is not defined", "z = xf + undefined_name  # noqa: F821"),
}


def _with_language(fn, language):
    scope = dict(fn.__globals__, tl=language)
    clone = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__annotations__ = dict(fn.__annotations__)
    return clone


_tessel_kernel = tessel.jit(_with_language(_bad_kernel, tl))
_triton_kernel = triton.jit(_with_language(_bad_kernel, ttl))


def _numpy_args():
    ones = np.arange(1, N + 1)
    return (ones.astype(np.float32), ones.astype(np.float32), ones.astype(np.int32), ones.astype(np.uint32),
            np.zeros(N, np.float32))


def _torch_args():
    x, y, xi, _, z = _numpy_args()
    # torch has no uint32 tensors that Triton's interpreter takes: an int32 one seen as uint32, as Triton's suites do.
    xu = triton.reinterpret(torch.arange(1, N + 1, dtype=torch.int32), ttl.uint32)
    return torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(xi), xu, torch.from_numpy(z)


@pytest.mark.parametrize("case", CASES)
def test_tessel_fails_with_tritons_words(case):
    phrase, line = CASES[case]
    with pytest.raises(Exception) as expected:
        _triton_kernel[(1,)](*_torch_args(), CASE=case)
    assert re.search(phrase, str(expected.value)), f"not Triton's words: {expected.value}"
    # As Triton's suites write it: `import tessel as triton; pytest.raises(triton.TritonError, match=...)`.
    with pytest.raises(tessel.TritonError, match=phrase) as info:
        _tessel_kernel[(1,)](*_numpy_args(), CASE=case)
    error = info.value
    assert isinstance(error, tessel.CompilationError)
    assert error.source_line.strip() == line, str(error)
    assert error.file == __file__
    assert error.message == str(error)
    # Triton's tests read the builder's message from the cause.
    assert re.search(phrase, str(error.__cause__)), repr(error.__cause__)


@pytest.mark.parametrize("case, expected", [
    ("bitwise", lambda x, xi, xu: (xi & (xi * 3)).astype(np.float32)),
    ("mod", lambda x, xi, xu: np.fmod(xi, xi + 1).astype(np.float32)),
    ("unsigned", lambda x, xi, xu: (xu + np.uint32(1)).astype(np.float32)),
])
def test_valid_operands_still_compute(case, expected):
    @tessel.jit
    def kernel(X, XI, XU, Z, CASE: tl.constexpr):
        off = tl.arange(0, 32)
        xi = tl.load(XI + off)
        xu = tl.load(XU + off)
        if CASE == "bitwise":
            z = xi & (xi * 3)
        elif CASE == "mod":
            z = xi % (xi + 1)
        else:
            z = xu + 1
        tl.store(Z + off, z)

    x, _, xi, xu, z = _numpy_args()
    kernel[(1,)](x, xi, xu, z, CASE=case)
    np.testing.assert_array_equal(z, expected(x, xi, xu))


# ---------------------------------------------------------------------------------------------------------- classes

CLASSES = [("errors", "TritonError"), ("compiler.errors", "CompilationError"),
           ("compiler.errors", "CompileTimeAssertionFailure"), ("compiler.errors", "UnsupportedLanguageConstruct"),
           ("runtime.errors", "InterpreterError"), ("runtime.errors", "OutOfResources"),
           ("runtime.errors", "PTXASError"), ("runtime.errors", "AutotunerError")]


def _class(package, module, name):
    import importlib
    return getattr(importlib.import_module(f"{package.__name__}.{module}"), name)


@pytest.mark.parametrize("module, name", CLASSES)
def test_error_classes_are_tritons(module, name):
    """The same classes in the same modules, deriving from the same bases."""
    ours, theirs = _class(tessel, module, name), _class(triton, module, name)
    assert [c.__name__ for c in ours.__mro__] == [c.__name__ for c in theirs.__mro__]


@pytest.mark.parametrize("name", ["TritonError", "CompilationError", "OutOfResources", "InterpreterError"])
def test_errors_exported_at_the_top(name):
    assert getattr(tessel, name).__name__ == getattr(triton, name).__name__ == name
    assert issubclass(getattr(tessel, name), tessel.TritonError)


@pytest.mark.parametrize("name, args", [("OutOfResources", (200000, 166912, "shared memory")),
                                        ("PTXASError", ("ptxas fatal",)), ("AutotunerError", ("no config",)),
                                        ("InterpreterError", ("bad",))])
def test_runtime_errors_read_as_tritons(name, args):
    ours, theirs = _class(tessel, "runtime.errors", name)(*args), _class(triton, "runtime.errors", name)(*args)
    assert str(ours) == str(theirs)
    again = pickle.loads(pickle.dumps(ours))
    assert type(again) is type(ours) and str(again) == str(ours)


def test_autotuner_error_is_tritons_and_a_runtime_error():
    from tessel.runtime.autotuner import AutotunerError
    assert issubclass(AutotunerError, tessel.runtime.errors.AutotunerError)
    assert issubclass(AutotunerError, RuntimeError) and issubclass(AutotunerError, tessel.TritonError)


@tessel.jit
def _static_assert_kernel(x_ptr, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK % 16 == 0, "BLOCK must be a multiple of 16")
    tl.store(x_ptr + tl.arange(0, BLOCK), tl.zeros((BLOCK,), tl.float32))


@tessel.jit
def _assert_kernel(x_ptr, BLOCK: tl.constexpr):
    assert BLOCK > 8, "BLOCK must exceed 8"
    tl.store(x_ptr + tl.arange(0, BLOCK), tl.zeros((BLOCK,), tl.float32))


@pytest.mark.parametrize("kernel, block, message, line", [
    (_static_assert_kernel, 8, "BLOCK must be a multiple of 16",
     'tl.static_assert(BLOCK % 16 == 0, "BLOCK must be a multiple of 16")'),
    (_assert_kernel, 4, "BLOCK must exceed 8", 'assert BLOCK > 8, "BLOCK must exceed 8"'),
])
def test_failed_static_assertion_is_a_compile_time_assertion_failure(kernel, block, message, line):
    from tessel.compiler.errors import CompileTimeAssertionFailure
    with pytest.raises(CompileTimeAssertionFailure, match=message) as info:
        kernel[(1,)](np.zeros(block, np.float32), BLOCK=block)
    # As in Triton: the assertion's message says it all, there is no cause.
    assert info.value.__cause__ is None
    assert info.value.source_line.strip() == line
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is CompileTimeAssertionFailure and str(again) == str(info.value)
    x = np.ones(32, np.float32)
    kernel[(1,)](x, BLOCK=32)
    np.testing.assert_array_equal(x, np.zeros(32, np.float32))


@tessel.jit
def _try_kernel(x_ptr):
    try:
        tl.store(x_ptr, 1.0)
    except Exception:
        pass


@tessel.jit
def _lambda_kernel(x_ptr):
    f = lambda v: v + 1  # noqa: E731
    tl.store(x_ptr, f(1.0))


@pytest.mark.parametrize("kernel, line", [(_try_kernel, "try:"), (_lambda_kernel, "f = lambda v: v + 1  # noqa: E731")])
def test_unsupported_construct_is_an_unsupported_language_construct(kernel, line):
    from tessel.compiler.errors import UnsupportedLanguageConstruct
    with pytest.raises(UnsupportedLanguageConstruct) as info:
        kernel[(1,)](np.zeros(1, np.float32))
    assert isinstance(info.value, tessel.CompilationError)
    assert info.value.source_line.strip() == line


@tessel.jit
def _big_dot_kernel(a_ptr, c_ptr, BM: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(a_ptr + rk[:, None] * BM + rm[None, :])
    tl.store(c_ptr + rm[:, None] * BM + rm[None, :], tl.dot(a, b))


def test_too_much_shared_memory_is_out_of_resources(target):
    """A 256 x 256 x 256 fp32 dot stages 512 KiB of operands: more than one program of an A100 or an H100 may have
    (Triton's OutOfResources, with Triton's attributes). The CPU keeps such blocks on its threads' stacks: there it
    compiles, and its kernel reports the bytes it keeps."""
    f32 = np.dtype(np.float32)
    if target.startswith("cpu"):
        kernel = _big_dot_kernel.warmup(f32, f32, BM=256, BK=256, grid=(1,))
        kernel._init_handles()
        assert kernel.metadata.shared >= 0
        return
    limit = {"sim:sm_80": 163 * 1024, "sim:sm_90a": 227 * 1024, "sim:gfx90a": 64 * 1024, "sim:gfx942": 64 * 1024,
             "sim:gfx950": 160 * 1024}[target]
    with pytest.raises(tessel.OutOfResources) as info:
        _big_dot_kernel.warmup(f32, f32, BM=256, BK=256, grid=(1,))
    error = info.value
    assert isinstance(error, tessel.TritonError)
    assert error.name == "shared memory" and error.limit == limit and error.required > limit
    assert str(error).startswith(f"out of resource: shared memory, Required: {error.required}, Hardware limit: "
                                 f"{limit}.")
    assert isinstance(error.__cause__, _C.BackendError)


# ------------------------------------------------------------------------------------- triton.compile(ASTSource(...))
# The cases of Triton's test_compile_errors.py, which compile without launching.

_GLOBAL = 42
_ANNOTATED_GLOBAL: tl.constexpr = 42
_CONSTEXPR_GLOBAL = tl.constexpr(42)
_TYPE_ALIAS = tl.pointer_type(tl.int32)


def _compile(fn, signature=None, constexprs=None, **options):
    return tessel.compile(tessel.compiler.ASTSource(fn=fn, signature=signature or {}, constexprs=constexprs or {}),
                          options=options)


@tessel.jit
def _undefined_variable():
    a += 1  # noqa: F821


@tessel.jit
def _string_operand():
    0 + "a"


@tessel.jit
def _float_shift():
    1.0 << 1


@tessel.jit
def _static_assert_isinstance():
    tl.static_assert(isinstance(0, tl.tensor))


@tessel.jit
def _arange_not_power_of_two():
    tl.arange(2, 7)


@tessel.jit
def _global_read():
    a = _GLOBAL  # noqa: F841


@pytest.mark.parametrize("kernel, kind, phrase, line", [
    (_undefined_variable, tessel.CompilationError, "is not defined", "a += 1  # noqa: F821"),
    (_string_operand, tessel.CompilationError, "unsupported operand", '0 + "a"'),
    (_float_shift, tessel.CompilationError, "unsupported operand", "1.0 << 1"),
    (_static_assert_isinstance, tessel.compiler.CompileTimeAssertionFailure, "static_assert failed",
     "tl.static_assert(isinstance(0, tl.tensor))"),
    (_arange_not_power_of_two, tessel.CompilationError, "arange's range must be a power of 2", "tl.arange(2, 7)"),
    (_global_read, tessel.CompilationError, "global variable", "a = _GLOBAL  # noqa: F841"),
])
def test_compile_errors(kernel, kind, phrase, line):
    with pytest.raises(kind) as info:
        _compile(kernel)
    assert phrase in str(info.value) and info.value.source_line.strip() == line
    assert "code_generator.py" not in str(info.value)
    if kind is tessel.compiler.CompileTimeAssertionFailure:
        assert info.value.__cause__ is None
    if kernel is _arange_not_power_of_two:  # Triton's test compares the whole text
        assert str(info.value.__cause__) == "arange's range must be a power of 2"


def test_captured_plain_values_are_not_defined():
    captured = 42

    @tessel.jit
    def kernel():
        a = captured  # noqa: F841

    with pytest.raises(tessel.CompilationError, match="captured is not defined"):
        _compile(kernel)


@tessel.jit
def _reads_constant_globals(x_ptr, a=_GLOBAL, B: tl.constexpr = ""):
    p: tl.constexpr = _TYPE_ALIAS
    tl.static_assert(p == tl.pointer_type(tl.int32))
    tl.store(x_ptr + tl.arange(0, 4), tl.arange(0, 4) * _ANNOTATED_GLOBAL + _CONSTEXPR_GLOBAL + a)


def test_compile_and_launch(rand):
    """Globals Triton allows (tl.constexpr values, `X: tl.constexpr = ...` annotations, dtypes, defaults) compile;
    the compiled kernel launches as Triton's do, with every argument."""
    kernel = _compile(_reads_constant_globals, {"x_ptr": "*i32", "a": "i32", "B": "constexpr"}, {"B": ""},
                      num_warps=2)
    assert kernel.signature == ["*i32", "i32"] and kernel.metadata.num_warps == 2
    x = np.zeros(4, np.int32)
    kernel[(1,)](x, 5, "")
    np.testing.assert_array_equal(x, np.arange(4) * 42 + 42 + 5)
    by_position = tessel.compile(tessel.compiler.ASTSource(_reads_constant_globals, {0: "*i32", 1: "i32"},
                                                           {(2,): ""}))
    assert by_position.signature == ["*i32", "i32"]
    with pytest.raises(TypeError, match="no type and no value for parameter 'x_ptr'"):
        _compile(_reads_constant_globals)


def test_annotated_constexpr_global_is_part_of_the_key(monkeypatch):
    x = np.zeros(4, np.int32)
    _reads_constant_globals[(1,)](x, 0)
    np.testing.assert_array_equal(x, np.arange(4) * 42 + 42)
    monkeypatch.setitem(globals(), "_ANNOTATED_GLOBAL", 7)
    _reads_constant_globals[(1,)](x, 0)
    np.testing.assert_array_equal(x, np.arange(4) * 7 + 42)
