"""The DSL surface: dtypes, `constexpr`, the `tensor` handle wrapper and the builtins.

Builtins are plain Python functions that take the IR builder through the `_builder` keyword, which only the code
generator passes; called anywhere else they raise. They stay thin on purpose: type promotion, broadcasting and
legality checks live in the C++ builder (the one source of truth), so a builtin only unwraps its arguments, checks
that compile-time arguments are compile-time, and forwards the call.
"""
from __future__ import annotations

import builtins
import enum
import functools
import inspect
import numbers
import warnings
from typing import Any, Callable, Sequence

from .. import _C
from ..knobs import knobs

# ----------------------------------------------------------------------------------------------------------- dtypes


class dtype:
    """A scalar element type. `name` follows Triton ("fp32", "int32", "uint8", "int1"); `ir_name` is the binding
    contract's type string ("fp32", "i32", "u8", "i1")."""

    SINT_TYPES = ("int8", "int16", "int32", "int64")
    # Triton counts int1 as unsigned; kept so that code written against Triton's dtype API behaves the same.
    UINT_TYPES = ("int1", "uint8", "uint16", "uint32", "uint64")
    FP8_TYPES = ("fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16")
    FP_TYPES = FP8_TYPES + ("fp16", "bf16", "fp32", "fp64")
    # Triton's name -> the type string and the width, from the C++ table of element types.
    _IR_NAMES = {t["triton_name"]: t["name"] for t in _C.scalar_types()}
    _BITS = {t["triton_name"]: t["bits"] for t in _C.scalar_types()}

    STANDARD_FP_TYPES = ("fp16", "bf16", "fp32", "fp64")
    # The floating-point formats: (mantissa bits, exponent bias).
    _FP_FORMATS = {"fp8e4nv": (3, 7), "fp8e5": (2, 15), "fp8e4b15": (3, 15), "fp8e4b8": (3, 8), "fp8e5b16": (2, 16),
                   "fp16": (10, 15), "bf16": (7, 127), "fp32": (23, 127),
                   "fp64": (52, 1023)}

    class SIGNEDNESS(enum.Enum):
        SIGNED = 0
        UNSIGNED = 1

    class KIND(enum.Enum):
        BOOLEAN = 0
        INTEGRAL = 1
        FLOATING = 2

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            name = getattr(name, "value", name)  # a tl.constexpr holding the name
        if name not in self._IR_NAMES:
            raise ValueError(f"unknown dtype {name!r}")
        self.name = name
        self.ir_name = self._IR_NAMES[name]
        self.primitive_bitwidth = self._BITS[name]
        self.itemsize = self.primitive_bitwidth // 8  # 0 for int1, as in Triton
        if name in self.SINT_TYPES or name in self.UINT_TYPES:
            self.int_bitwidth = self.primitive_bitwidth
            self.int_signedness = self.SIGNEDNESS.SIGNED if name in self.SINT_TYPES else self.SIGNEDNESS.UNSIGNED
        else:
            self.fp_mantissa_width, self.exponent_bias = self._FP_FORMATS[name]

    @staticmethod
    def is_dtype(type_str: str) -> bool:
        """Whether `type_str` names an element type ("fp32", "int8", ...)."""
        return type_str in dtype._IR_NAMES

    def kind(self) -> "dtype.KIND":
        """bool < integer < floating point."""
        if self.is_bool():
            return dtype.KIND.BOOLEAN
        return dtype.KIND.INTEGRAL if self.is_int() else dtype.KIND.FLOATING

    def get_int_max_value(self) -> int:
        if not self.is_int():
            raise TypeError(f"{self} is not an integer type")
        return 2**(self.int_bitwidth - 1) - 1 if self.is_int_signed() else 2**self.int_bitwidth - 1

    def get_int_min_value(self) -> int:
        if not self.is_int():
            raise TypeError(f"{self} is not an integer type")
        return -2**(self.int_bitwidth - 1) if self.is_int_signed() else 0

    def is_standard_floating(self) -> bool:
        return self.name in self.STANDARD_FP_TYPES

    def is_int8(self) -> bool:
        return self.name == "int8"

    def is_int16(self) -> bool:
        return self.name == "int16"

    def is_int32(self) -> bool:
        return self.name == "int32"

    def is_int64(self) -> bool:
        return self.name == "int64"

    def is_uint8(self) -> bool:
        return self.name == "uint8"

    def is_uint16(self) -> bool:
        return self.name == "uint16"

    def is_uint32(self) -> bool:
        return self.name == "uint32"

    def is_uint64(self) -> bool:
        return self.name == "uint64"

    def is_const(self) -> bool:
        return False

    def is_void(self) -> bool:
        return False

    def codegen_name(self) -> str:
        """The name of the dtype in tessel.language: fp32 -> float32, bf16 -> bfloat16, int8 -> int8."""
        if self.name.startswith("fp"):
            return "float" + self.name[2:]
        if self.name.startswith("bf"):
            return "bfloat" + self.name[2:]
        return self.name

    @property
    def cache_key_part(self) -> str:
        return self.name

    def mangle(self) -> str:
        """Triton's short name: i32, u8, fp16, ..."""
        if self.is_int():
            return ("i" if self.is_int_signed() else "u") + str(self.int_bitwidth)
        return self.name

    def with_element_ty(self, element_ty: dtype) -> dtype:
        return element_ty

    def is_floating(self) -> bool:
        return self.name in self.FP_TYPES

    def is_int(self) -> bool:
        return self.name in self.SINT_TYPES or self.name in self.UINT_TYPES

    def is_int_signed(self) -> bool:
        return self.name in self.SINT_TYPES

    def is_int_unsigned(self) -> bool:
        return self.name in self.UINT_TYPES

    def is_bool(self) -> bool:
        return self.name == "int1"

    is_int1 = is_bool

    def is_fp8(self) -> bool:
        return self.name in self.FP8_TYPES

    def is_fp8e4nv(self) -> bool:
        return self.name == "fp8e4nv"

    def is_fp8e5(self) -> bool:
        return self.name == "fp8e5"

    # Triton's other 8-bit formats (AMD's fnuz variants and the bias-15 e4m3), which no Tessel target has.
    def is_fp8e4b15(self) -> bool:
        return self.name == "fp8e4b15"

    def is_fp8e4b8(self) -> bool:
        return self.name == "fp8e4b8"

    def is_fp8e5b16(self) -> bool:
        return self.name == "fp8e5b16"

    def is_fp16(self) -> bool:
        return self.name == "fp16"

    def is_bf16(self) -> bool:
        return self.name == "bf16"

    def is_fp32(self) -> bool:
        return self.name == "fp32"

    def is_fp64(self) -> bool:
        return self.name == "fp64"

    def is_ptr(self) -> bool:
        return False

    def is_block(self) -> bool:
        return False

    @property
    def scalar(self) -> dtype:
        return self

    def __eq__(self, other: object) -> bool:
        other = _unwrap(other)
        return type(other) is type(self) and self.name == other.name

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name))

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        # Triton's, an expression in programs that `import tessel as triton`.
        return f"triton.language.{self.codegen_name()}"


class pointer_type(dtype):
    """Pointer to `element_ty` in global memory; `ir_name` is "*" + the element's ("*fp32")."""

    def __init__(self, element_ty: dtype, address_space: int = 1, const: bool = False) -> None:
        if not isinstance(element_ty, dtype) or isinstance(element_ty, block_type):
            raise TypeError(f"pointer_type: element type must be a dtype, got {element_ty!r}")
        self.element_ty = element_ty
        self.address_space = address_space
        self.const = const
        # Triton's names; "*k" marks a pointer the kernel only reads through (a tl.const parameter's).
        self.name = f"{'const_' if const else ''}pointer<{element_ty}>"
        self.ir_name = ("*k" if const else "*") + element_ty.ir_name
        self.primitive_bitwidth = 64
        self.itemsize = 8

    def is_ptr(self) -> bool:
        return True

    def is_const(self) -> bool:
        return self.const

    def mangle(self) -> str:
        return f"P{self.element_ty.mangle()}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, pointer_type) and self.element_ty == other.element_ty and \
            self.const == other.const

    def __hash__(self) -> int:
        return hash(("pointer", self.element_ty, self.const))

    def __repr__(self) -> str:
        return f"triton.language.pointer_type({self.element_ty!r})"


class block_type(dtype):
    """The type of a block (`tensor.type` of a non-scalar): element type plus shape. Not a valid cast target."""

    def __init__(self, element_ty: dtype, shape: Sequence[int]) -> None:
        self.element_ty = element_ty
        self.shape = [int(s) for s in shape]
        self.numel = functools.reduce(lambda a, b: a * b, self.shape, 1)
        self.name = f"<{self.shape}, {element_ty}>"
        self.primitive_bitwidth = element_ty.primitive_bitwidth

    def is_block(self) -> bool:
        return True

    @property
    def scalar(self) -> dtype:
        return self.element_ty

    def __eq__(self, other: object) -> bool:
        return isinstance(other, block_type) and self.element_ty == other.element_ty and self.shape == other.shape

    def __hash__(self) -> int:
        return hash(("block", self.element_ty, tuple(self.shape)))

    def __repr__(self) -> str:
        return f"triton.language.block_type({self.element_ty!r}, {self.shape})"

    def get_block_shapes(self) -> tuple[int, ...]:
        return tuple(self.shape)

    def with_element_ty(self, scalar_ty: dtype) -> block_type:
        return block_type(scalar_ty, self.shape)

    @property
    def nbytes(self) -> int:
        return self.numel * (self.element_ty.primitive_bitwidth // 8)


int1 = dtype("int1")
int8 = dtype("int8")
int16 = dtype("int16")
int32 = dtype("int32")
int64 = dtype("int64")
uint8 = dtype("uint8")
uint16 = dtype("uint16")
uint32 = dtype("uint32")
uint64 = dtype("uint64")
float8e4nv = dtype("fp8e4nv")  # e4m3: 448 at most, no infinities (torch.float8_e4m3fn)
float8e5 = dtype("fp8e5")  # e5m2: IEEE-like (torch.float8_e5m2)
float8e4b8 = dtype("fp8e4b8")  # e4m3fnuz: bias 8, 240 at most, NaN 0x80, no -0 or infinities (torch.float8_e4m3fnuz)
float8e5b16 = dtype("fp8e5b16")  # e5m2fnuz: bias 16, 57344 at most, NaN 0x80, no -0 or infinities (torch.float8_e5m2fnuz)
float8e4b15 = dtype("fp8e4b15")  # Triton's e4m3 with bias 15: 1.875 at most, every code finite
float16 = dtype("fp16")
bfloat16 = dtype("bf16")
float32 = dtype("fp32")
float64 = dtype("fp64")
# Triton's name for a pointer to int32 (`x.to(tl.pi32_t)`).
pi32_t = pointer_type(int32)

_DTYPE_BY_IR = {d.ir_name: d for d in (int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float8e4nv,
                                       float8e5, float8e4b8, float8e5b16, float8e4b15, float16, bfloat16, float32,
                                       float64)}


def dtype_from_ir(ir_name: str) -> dtype:
    """The dtype object for a contract type string ("fp32" -> float32, "*fp16" -> pointer_type(float16))."""
    if ir_name.startswith("*k"):
        return pointer_type(dtype_from_ir(ir_name[2:]), const=True)
    if ir_name.startswith("*"):
        return pointer_type(dtype_from_ir(ir_name[1:]))
    return _DTYPE_BY_IR[ir_name]


# -------------------------------------------------------------------------------------------------------- constexpr


class const:
    """An annotation of a pointer parameter whose data the kernel only reads (`x_ptr: tl.const`), as in Triton.
    Tessel accepts it; stores through such a pointer are not refused (the launcher already refuses read-only arrays
    for the parameters a kernel stores through)."""


class constexpr_type:
    """The type of a compile-time value (Triton's `constexpr(v).type`)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, constexpr_type) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"constexpr_type[{self.value}]"

    def mangle(self) -> str:
        return repr(self)


class constexpr:
    """A compile-time value. Inside a kernel the code generator unwraps it and works on the plain Python value; the
    operators below serve host code that uses constexpr globals (grid lambdas, `tessel.cdiv(n, BLOCK)`)."""

    def __init__(self, value: Any) -> None:
        self.value = value.value if isinstance(value, constexpr) else value

    @property
    def type(self) -> constexpr_type:
        return constexpr_type(self.value)

    def __repr__(self) -> str:
        return f"constexpr[{self.value!r}]"

    def __hash__(self) -> int:
        return hash(self.value)

    def __bool__(self) -> bool:
        return bool(self.value)

    def __index__(self) -> int:
        return self.value.__index__()

    def __int__(self) -> int:
        return int(self.value)

    def __float__(self) -> float:
        return float(self.value)

    def __neg__(self) -> constexpr:
        return constexpr(-self.value)

    def __pos__(self) -> constexpr:
        return constexpr(+self.value)

    def __invert__(self) -> constexpr:
        return constexpr(~self.value)

    def __abs__(self) -> constexpr:
        return constexpr(builtins.abs(self.value))


def _constexpr_operator(fn: Callable[[Any, Any], Any], reflected: bool) -> Callable[[constexpr, Any], constexpr]:
    def method(self: constexpr, other: Any) -> constexpr:
        other = _unwrap(other)
        return constexpr(fn(other, self.value) if reflected else fn(self.value, other))
    return method


def _install_constexpr_operators() -> None:
    import operator
    arithmetic = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift", "rshift")
    for name in arithmetic:
        fn = getattr(operator, name + "_" if name in ("and", "or") else name)
        setattr(constexpr, f"__{name}__", _constexpr_operator(fn, reflected=False))
        setattr(constexpr, f"__r{name}__", _constexpr_operator(fn, reflected=True))
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(constexpr, f"__{name}__", _constexpr_operator(getattr(operator, name), reflected=False))


_install_constexpr_operators()


def _unwrap(value: Any) -> Any:
    return value.value if isinstance(value, constexpr) else value


# ----------------------------------------------------------------------------------------------------------- builtin

_BUILTIN_ATTR = "__tessel_builtin__"
_NEEDS_GENERATOR_ATTR = "__tessel_needs_generator__"


def builtin(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Marks a DSL builtin. The code generator calls it with `_builder=` (and `_generator=` when the function takes
    one, e.g. `reduce`, which must walk a combine function's body)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("_builder") is None:
            raise RuntimeError(f"tl.{fn.__name__}() can only be called inside a @tessel.jit function")
        return fn(*args, **kwargs)

    setattr(wrapper, _BUILTIN_ATTR, True)
    setattr(wrapper, _NEEDS_GENERATOR_ATTR, "_generator" in inspect.signature(fn).parameters)
    return wrapper


def is_builtin(fn: Any) -> bool:
    return getattr(fn, _BUILTIN_ATTR, False) is True


def _operand(value: Any, what: str) -> Any:
    """A builder operand ("V" in the contract): a tensor's handle, or a Python scalar passed as is so that the C++
    side applies the literal rule (a literal never widens a tensor)."""
    value = _unwrap(value)
    if isinstance(value, tensor):
        return value.handle
    if isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral):
        value = int(value)
        # The builder takes an int64 or a uint64 (Triton's literal types); the conversion would make any other int a
        # float.
        if not -2**63 <= value < 2**64:
            raise ValueError(f"{what}: Nonrepresentable integer {value}.")
        return value
    if isinstance(value, numbers.Real):
        return float(value)
    raise TypeError(f"{what}: expected a tensor or a Python number, got {type(value).__name__} {value!r}")


def _tensor_arg(value: Any, what: str) -> tensor:
    value = _unwrap(value)
    if not isinstance(value, tensor):
        raise TypeError(f"{what}: expected a tensor, got {type(value).__name__} {value!r}")
    return value


def _int_arg(value: Any, what: str) -> int:
    value = _unwrap(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{what} must be a compile-time integer (tl.constexpr), got {_describe(value)}")
    return int(value)


def _shape_arg(shape: Any, what: str) -> list[int]:
    shape = _unwrap(shape)
    if isinstance(shape, (tuple, list)):
        return [_int_arg(s, f"{what}: every dimension of the shape") for s in shape]
    return [_int_arg(shape, f"{what}: the shape")]


def _varargs_shape(shape: tuple[Any, ...], what: str) -> list[int]:
    """Triton accepts both `f(x, (a, b))` and `f(x, a, b)`."""
    if len(shape) == 1 and isinstance(_unwrap(shape[0]), (tuple, list)):
        return _shape_arg(shape[0], what)
    return _shape_arg(list(shape), what)


def _str_arg(value: Any, what: str) -> str:
    value = _unwrap(value)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a compile-time string, got {_describe(value)}")
    return value


def _bool_arg(value: Any, what: str) -> bool:
    value = _unwrap(value)
    if isinstance(value, tensor):
        raise TypeError(f"{what} must be a compile-time bool, got {_describe(value)}")
    return bool(value)


def _dtype_arg(value: Any, what: str) -> str:
    value = _unwrap(value)
    if not isinstance(value, dtype) or isinstance(value, block_type):
        raise TypeError(f"{what} must be a dtype such as tl.float32, got {_describe(value)}")
    return value.ir_name


def _describe(value: Any) -> str:
    if isinstance(value, tensor):
        return f"a tensor ({value._type_str()}), which is only known at run time"
    return f"{type(value).__name__} {value!r}"


def _binary(op: str, lhs: Any, rhs: Any, builder: Any, sanitize_overflow: bool = True) -> tensor:
    return tensor(builder.binary(op, _operand(lhs, op), _operand(rhs, op), sanitize_overflow))


# --------------------------------------------------------------------------------------------------------- aggregate


class aggregate:
    """A value of the DSL made of other values (tensors and compile-time values) that lives in the frontend, such as
    a block pointer. The code generator carries it through ifs and loops as its leaves: `_flatten()` gives (leaves,
    structure) and the classmethod `_unflatten(structure, leaves)` makes the value back; values of one class with
    equal structures have leaves that correspond one to one."""

    def _flatten(self) -> tuple[list[Any], Any]:
        raise NotImplementedError

    @classmethod
    def _unflatten(cls, structure: Any, leaves: Sequence[Any]) -> "aggregate":
        raise NotImplementedError


# ------------------------------------------------------------------------------------------------------------ tensor


def _binary_method(name: str, op: str, reflected: bool) -> Callable[..., tensor]:
    def method(self: tensor, other: Any, _builder: Any = None) -> tensor:
        return _binary(op, other, self, _builder) if reflected else _binary(op, self, other, _builder)
    method.__name__ = name
    return builtin(method)


def _unary_method(name: str, op: str) -> Callable[..., tensor]:
    def method(self: tensor, _builder: Any = None) -> tensor:
        return tensor(_builder.unary(op, self.handle))
    method.__name__ = name
    return builtin(method)


class tensor:
    """A value in a kernel: a scalar or a block, wrapping a `_C.Tensor` handle."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    @property
    def dtype(self) -> dtype:
        return dtype_from_ir(self.handle.dtype)

    @property
    def shape(self) -> list[int]:
        return list(self.handle.shape)

    @property
    def type(self) -> dtype:
        return block_type(self.dtype, self.shape) if self.handle.is_block else self.dtype

    @property
    def numel(self) -> int:
        return functools.reduce(lambda a, b: a * b, self.handle.shape, 1)

    def _type_str(self) -> str:
        shape = self.handle.shape
        return f"{self.handle.dtype}{list(shape)}" if shape else self.handle.dtype

    def __repr__(self) -> str:
        return f"tensor({self._type_str()})"

    def __bool__(self) -> bool:
        raise TypeError(f"the truth value of {self!r} is only known at run time; use it in an `if` of the kernel, "
                        "or tl.where")

    def __iter__(self) -> Any:
        raise TypeError(f"{self!r} is not iterable inside a kernel")

    __add__ = _binary_method("__add__", "add", False)
    __radd__ = _binary_method("__radd__", "add", True)
    __sub__ = _binary_method("__sub__", "sub", False)
    __rsub__ = _binary_method("__rsub__", "sub", True)
    __mul__ = _binary_method("__mul__", "mul", False)
    __rmul__ = _binary_method("__rmul__", "mul", True)
    __truediv__ = _binary_method("__truediv__", "truediv", False)
    __rtruediv__ = _binary_method("__rtruediv__", "truediv", True)
    __floordiv__ = _binary_method("__floordiv__", "floordiv", False)
    __rfloordiv__ = _binary_method("__rfloordiv__", "floordiv", True)
    __mod__ = _binary_method("__mod__", "mod", False)
    __rmod__ = _binary_method("__rmod__", "mod", True)
    __and__ = _binary_method("__and__", "and", False)
    __rand__ = _binary_method("__rand__", "and", True)
    __or__ = _binary_method("__or__", "or", False)
    __ror__ = _binary_method("__ror__", "or", True)
    __xor__ = _binary_method("__xor__", "xor", False)
    __rxor__ = _binary_method("__rxor__", "xor", True)
    __lshift__ = _binary_method("__lshift__", "lshift", False)
    __rlshift__ = _binary_method("__rlshift__", "lshift", True)
    __rshift__ = _binary_method("__rshift__", "rshift", False)
    __rrshift__ = _binary_method("__rrshift__", "rshift", True)
    __eq__ = _binary_method("__eq__", "eq", False)
    __ne__ = _binary_method("__ne__", "ne", False)
    __lt__ = _binary_method("__lt__", "lt", False)
    __le__ = _binary_method("__le__", "le", False)
    __gt__ = _binary_method("__gt__", "gt", False)
    __ge__ = _binary_method("__ge__", "ge", False)
    logical_and = _binary_method("logical_and", "logical_and", False)
    logical_or = _binary_method("logical_or", "logical_or", False)
    __neg__ = _unary_method("__neg__", "neg")
    __pos__ = _unary_method("__pos__", "plus")
    __invert__ = _unary_method("__invert__", "invert")
    # Python has no `not` hook; the code generator calls this for `not x` on a tensor.
    __not__ = _unary_method("__not__", "not")
    __hash__ = object.__hash__

    @builtin
    def to(self, dtype: dtype, fp_downcast_rounding: str | None = None, bitcast: bool = False,
           _builder: Any = None) -> tensor:
        return cast(self, dtype, fp_downcast_rounding=fp_downcast_rounding, bitcast=bitcast, _builder=_builder)

    @builtin
    def __getitem__(self, slices: Any, _builder: Any = None) -> tensor:
        """`x[None, :]`, `x[:, None]`: only `None` (new axis of size 1) and a bare `:` (keep the axis) are valid."""
        slices = _unwrap(slices)
        if not isinstance(slices, tuple):
            slices = (slices,)
        result = self
        axis = 0
        for s in slices:
            s = _unwrap(s)
            if s is None:
                result = tensor(_builder.expand_dims(result.handle, axis))
            elif not (isinstance(s, slice) and s.start is None and s.stop is None and s.step is None):
                raise IndexError(f"unsupported tensor index: {s!r} (only None and ':' are allowed)")
            axis += 1
        return result


# ---------------------------------------------------------------------------------------------------- program model


@builtin
def program_id(axis: int, _builder: Any = None) -> tensor:
    return tensor(_builder.program_id(_int_arg(axis, "tl.program_id(): axis")))


@builtin
def num_programs(axis: int, _builder: Any = None) -> tensor:
    return tensor(_builder.num_programs(_int_arg(axis, "tl.num_programs(): axis")))


# --------------------------------------------------------------------------------------------------------- creation


@builtin
def arange(start: int, end: int, _builder: Any = None) -> tensor:
    return tensor(_builder.arange(_int_arg(start, "tl.arange(): start"), _int_arg(end, "tl.arange(): end")))


@builtin
def to_tensor(x: Any, _builder: Any = None) -> tensor:
    """A tensor of `x`: a tensor as it is, a Python bool, int or float as a scalar of its own type (int32, else
    uint32, int64, uint64; fp32, or fp64 outside fp32's normal range; int1), as Triton's `tl.to_tensor`."""
    x = _unwrap(x)
    if isinstance(x, tensor):
        return x
    value = _operand(x, "tl.to_tensor()")
    return tensor(_builder.constant(value, _C.literal_type(value)))


@builtin
def full(shape: Sequence[int], value: Any, dtype: dtype, _builder: Any = None) -> tensor:
    return tensor(_builder.full(_shape_arg(shape, "tl.full()"), _operand(value, "tl.full() value"),
                                _dtype_arg(dtype, "tl.full(): dtype")))


@builtin
def zeros(shape: Sequence[int], dtype: dtype, _builder: Any = None) -> tensor:
    return full(shape, 0, dtype, _builder=_builder)


@builtin
def zeros_like(input: tensor, _builder: Any = None) -> tensor:
    input = _tensor_arg(input, "tl.zeros_like()")
    return full(input.shape, 0, input.dtype, _builder=_builder)


@builtin
def cast(input: Any, dtype: dtype, fp_downcast_rounding: str | None = None, bitcast: bool = False,
         _builder: Any = None) -> tensor:
    # fp_downcast_rounding: "rtne" (the default) or "rtz", for narrowing float conversions only (Triton's rule).
    rounding = _unwrap(fp_downcast_rounding)
    if rounding is not None and not isinstance(rounding, str):
        raise TypeError(f"tl.cast(): fp_downcast_rounding must be a string, got {_describe(rounding)}")
    return tensor(_builder.cast(_operand(input, "tl.cast()"), _dtype_arg(dtype, "tl.cast(): dtype"),
                                bool(_unwrap(bitcast)), rounding or ""))


# ----------------------------------------------------------------------------------------------------------- memory


@builtin
def load(pointer: tensor, mask: Any = None, other: Any = None, boundary_check: Sequence[int] = (),
         padding_option: str = "", cache_modifier: str = "", eviction_policy: str = "", volatile: bool = False,
         _builder: Any = None, _generator: Any = None) -> tensor:
    # cache_modifier and eviction_policy are GPU cache hints kept in the IR (the builder checks Triton's values);
    # a volatile load stays volatile on every target.
    from . import block_pointer
    pointer = _unwrap(pointer)
    if isinstance(pointer, block_pointer.block_pointer):
        checks, padding = block_pointer.check_load(pointer, mask, other, boundary_check, padding_option)
        return _generator.call_jit_function(block_pointer.load_block, [
            pointer, checks, padding, _str_arg(cache_modifier, "tl.load(): cache_modifier"),
            _str_arg(eviction_policy, "tl.load(): eviction_policy"), _bool_arg(volatile, "tl.load(): volatile")], {})
    if _unwrap(boundary_check) or _unwrap(padding_option):
        raise ValueError("tl.load(): `padding_option` and `boundary_check` are only for block pointers (made by "
                         "tl.make_block_ptr): for a tensor of pointers or a scalar the compiler does not know the "
                         "boundary; use a mask")
    pointer = _tensor_arg(pointer, "tl.load(): pointer")
    mask = _unwrap(mask)
    other = _unwrap(other)
    return tensor(_builder.load(pointer.handle, None if mask is None else _operand(mask, "tl.load() mask"),
                                None if other is None else _operand(other, "tl.load() other"),
                                _str_arg(cache_modifier, "tl.load(): cache_modifier"),
                                _str_arg(eviction_policy, "tl.load(): eviction_policy"),
                                _bool_arg(volatile, "tl.load(): volatile")))


@builtin
def store(pointer: tensor, value: Any, mask: Any = None, boundary_check: Sequence[int] = (),
          cache_modifier: str = "", eviction_policy: str = "", _builder: Any = None, _generator: Any = None) -> None:
    from . import block_pointer
    pointer = _unwrap(pointer)
    if isinstance(pointer, block_pointer.block_pointer):
        value, checks = block_pointer.check_store(pointer, value, mask, boundary_check, _builder)
        _generator.call_jit_function(block_pointer.store_block, [
            pointer, value, checks, _str_arg(cache_modifier, "tl.store(): cache_modifier"),
            _str_arg(eviction_policy, "tl.store(): eviction_policy")], {})
        return
    if _unwrap(boundary_check):
        raise ValueError("tl.store(): `boundary_check` is only for block pointers (made by tl.make_block_ptr): for a "
                         "tensor of pointers or a scalar the compiler does not know the boundary; use a mask")
    pointer = _tensor_arg(pointer, "tl.store(): pointer")
    mask = _unwrap(mask)
    _builder.store(pointer.handle, _operand(value, "tl.store() value"),
                   None if mask is None else _operand(mask, "tl.store() mask"),
                   _str_arg(cache_modifier, "tl.store(): cache_modifier"),
                   _str_arg(eviction_policy, "tl.store(): eviction_policy"))


# ---------------------------------------------------------------------------------------------------------- atomics


def _atomic_rmw(op: str, pointer: Any, val: Any, mask: Any, sem: Any, scope: Any, builder: Any) -> tensor:
    what = f"tl.atomic_{op}()"
    pointer = _tensor_arg(pointer, f"{what}: pointer")
    mask = _unwrap(mask)
    return tensor(builder.atomic_rmw(op, pointer.handle, _operand(val, f"{what} val"),
                                     None if mask is None else _operand(mask, f"{what} mask"),
                                     _str_arg(sem, f"{what}: sem"), _str_arg(scope, f"{what}: scope")))


def _atomic_builtin(op: str, doc: str) -> Callable[..., tensor]:
    def atomic(pointer: Any, val: Any, mask: Any = None, sem: str | None = None, scope: str | None = None,
               _builder: Any = None) -> tensor:
        return _atomic_rmw(op, pointer, val, mask, sem, scope, _builder)
    atomic.__name__ = atomic.__qualname__ = f"atomic_{op}"
    atomic.__doc__ = (f"Atomically {doc} at `pointer` (where `mask` is set) and returns the values it held before "
                      "(zero where the mask is off). `sem`: 'acq_rel' (default), 'acquire', 'release' or 'relaxed'; "
                      "`scope`: 'gpu' (default), 'cta' or 'sys'.")
    return builtin(atomic)


atomic_add = _atomic_builtin("add", "adds `val`")
atomic_and = _atomic_builtin("and", "ANDs `val` into the bits")
atomic_or = _atomic_builtin("or", "ORs `val` into the bits")
atomic_xor = _atomic_builtin("xor", "XORs `val` into the bits")
atomic_max = _atomic_builtin("max", "keeps the larger of the element and `val` (floats ordered by sign, then "
                                    "magnitude bits, as Triton: -0.0 < +0.0, +NaN above +inf, -NaN below -inf)")
atomic_min = _atomic_builtin("min", "keeps the smaller of the element and `val` (floats ordered as for atomic_max)")
atomic_xchg = _atomic_builtin("xchg", "writes `val`")


@builtin
def atomic_cas(pointer: Any, cmp: Any, val: Any, sem: str | None = None, scope: str | None = None,
               _builder: Any = None) -> tensor:
    """Atomically writes `val` at `pointer` where the element's bits equal `cmp`'s, and returns the values it held
    before (16-, 32- or 64-bit elements). `sem` and `scope` as for atomic_add."""
    pointer = _tensor_arg(pointer, "tl.atomic_cas(): pointer")
    return tensor(_builder.atomic_cas(pointer.handle, _operand(cmp, "tl.atomic_cas() cmp"),
                                      _operand(val, "tl.atomic_cas() val"),
                                      _str_arg(sem, "tl.atomic_cas(): sem"), _str_arg(scope, "tl.atomic_cas(): scope")))


# ------------------------------------------------------------------------------------------------------------- math


@builtin
def where(condition: Any, x: Any, y: Any, _builder: Any = None) -> tensor:
    condition = _operand(condition, "tl.where() condition")
    kind = condition.dtype if isinstance(condition, _C.Tensor) else _C.literal_type(condition)
    if kind != "i1":
        # Triton's deprecation warning; the condition is then x != 0, as there.
        warnings.warn(f"tl.where with a non-boolean condition is deprecated and will error out in a future triton "
                      f"release. Got {dtype_from_ir(kind)}")
    return tensor(_builder.where(condition, _operand(x, "tl.where() x"), _operand(y, "tl.where() y")))


class PropagateNan(enum.Enum):
    """What tl.minimum, tl.maximum and tl.clamp do with NaN operands: NONE returns the other operand (IEEE minNum /
    maxNum; the GPUs' min/max), ALL returns NaN."""
    NONE = 0x0000
    ALL = 0xFFFF


def _propagates_nan(value: Any, what: str) -> bool:
    value = _unwrap(value)
    if value is PropagateNan.NONE or value is PropagateNan.ALL:
        return value is PropagateNan.ALL
    raise ValueError(f"{what}: propagate_nan must be tl.PropagateNan.NONE or tl.PropagateNan.ALL, got "
                     f"{_describe(value)}")


def _bf16_as_fp32(x: Any, builder: Any) -> Any:
    """bf16 operands of min/max/clamp compute in fp32, as in Triton (the result is fp32)."""
    x = _unwrap(x)
    if isinstance(x, tensor) and x.dtype == bfloat16:
        return cast(x, float32, _builder=builder)
    return x


def _min_max(op: str, x: Any, y: Any, propagate_nan: Any, builder: Any) -> tensor:
    """minimum/maximum: the builder's (the non-NaN operand when one is NaN); with PropagateNan.ALL a NaN operand is
    the result instead."""
    propagate = _propagates_nan(propagate_nan, f"tl.{op}()")
    x, y = _bf16_as_fp32(x, builder), _bf16_as_fp32(y, builder)
    result = _binary(op, x, y, builder)
    if propagate and result.dtype.is_floating():
        for operand in (y, x):
            operand = to_tensor(operand, _builder=builder)
            result = where(_binary("ne", operand, operand, builder), operand, result, _builder=builder)
    return result


@builtin
def maximum(x: Any, y: Any, propagate_nan: PropagateNan = PropagateNan.NONE, _builder: Any = None) -> tensor:
    return _min_max("maximum", x, y, propagate_nan, _builder)


@builtin
def minimum(x: Any, y: Any, propagate_nan: PropagateNan = PropagateNan.NONE, _builder: Any = None) -> tensor:
    return _min_max("minimum", x, y, propagate_nan, _builder)


@builtin
def clamp(x: Any, min: Any, max: Any, propagate_nan: PropagateNan = PropagateNan.NONE,
          _builder: Any = None) -> tensor:
    """x kept within [min, max] (undefined when min > max), of floats: minimum(maximum(x, min), max) in the three
    operands' common type. propagate_nan concerns x only (a NaN bound gives an undefined result)."""
    result = _min_max("minimum", _min_max("maximum", x, min, propagate_nan, _builder), max, propagate_nan, _builder)
    if not result.dtype.is_floating():
        raise TypeError(f"Unexpected dtype {result.dtype}. Only floating point clamp is supported")
    return result


def _math_builtin(name: str, fn: str) -> Callable[..., tensor]:
    def math_fn(x: Any, _builder: Any = None) -> tensor:
        return tensor(_builder.math(fn, _operand(x, f"tl.{name}()")))
    math_fn.__name__ = name
    math_fn.__qualname__ = name
    return builtin(math_fn)


exp = _math_builtin("exp", "exp")
exp2 = _math_builtin("exp2", "exp2")
log = _math_builtin("log", "log")
log2 = _math_builtin("log2", "log2")
sqrt = _math_builtin("sqrt", "sqrt")
# The CPU's sqrt is correctly rounded, so the "round to nearest" variant is the same operation.
sqrt_rn = _math_builtin("sqrt_rn", "sqrt")
rsqrt = _math_builtin("rsqrt", "rsqrt")
abs = _math_builtin("abs", "abs")
sin = _math_builtin("sin", "sin")
cos = _math_builtin("cos", "cos")
floor = _math_builtin("floor", "floor")
ceil = _math_builtin("ceil", "ceil")
sigmoid = _math_builtin("sigmoid", "sigmoid")
erf = _math_builtin("erf", "erf")


def _arithmetic_builtin(name: str) -> Callable[..., tensor]:
    def fn(x: Any, y: Any, sanitize_overflow: bool = True, _builder: Any = None) -> tensor:
        return _binary(name, x, y, _builder, _bool_arg(sanitize_overflow, f"tl.{name}(): sanitize_overflow"))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"x {dict(add='+', sub='-', mul='*')[name]} y. In kernels compiled with debug, integers narrower "
                  "than 64 bits are checked for overflow unless sanitize_overflow is False (as Triton checks them).")
    return builtin(fn)


add = _arithmetic_builtin("add")
sub = _arithmetic_builtin("sub")
mul = _arithmetic_builtin("mul")


@builtin
def debug_barrier(_builder: Any = None) -> None:
    """Every thread of the program waits here for the others, and their memory accesses before it are done (a GPU
    barrier; nothing on the CPU, where a program is one thread)."""
    _builder.debug_barrier()


@builtin
def broadcast(input: Any, other: Any, _builder: Any = None) -> tuple[tensor, tensor]:
    """Both operands broadcast to their common shape."""
    a = _tensor_arg(input, "tl.broadcast(): input")
    b = _tensor_arg(other, "tl.broadcast(): other")
    shape = _broadcast_shape(a.shape, b.shape)
    return (tensor(_builder.broadcast_to(a.handle, shape)), tensor(_builder.broadcast_to(b.handle, shape)))


def _broadcast_shape(a: list[int], b: list[int]) -> list[int]:
    """numpy's rule, as Triton's: trailing dimensions aligned, each pair equal or one of them 1."""
    rank = builtins.max(len(a), len(b))
    a = [1] * (rank - len(a)) + list(a)
    b = [1] * (rank - len(b)) + list(b)
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and 1 not in (x, y):
            raise ValueError(f"Cannot make_shape_compatible: incompatible dimensions at index {i}: {x} and {y}")
        out.append(builtins.max(x, y))
    return out


@builtin
def fma(x: Any, y: Any, z: Any, _builder: Any = None) -> tensor:
    """x * y + z with one rounding (the operands promoted to one float type, as Triton does)."""
    return tensor(_builder.fma(_operand(x, "tl.fma()"), _operand(y, "tl.fma()"), _operand(z, "tl.fma()")))


@builtin
def fdiv(x: Any, y: Any, ieee_rounding: bool = False, _builder: Any = None) -> tensor:
    return _binary("div_rn" if _unwrap(ieee_rounding) else "truediv", x, y, _builder)


@builtin
def div_rn(x: Any, y: Any, _builder: Any = None) -> tensor:
    """Division rounded to nearest (IEEE); `/` may instead multiply by the reciprocal."""
    return _binary("div_rn", x, y, _builder)


# ------------------------------------------------------------------------------------------------------------ shape


@builtin
def expand_dims(input: tensor, axis: int | Sequence[int], _builder: Any = None) -> tensor:
    # A Python number is a scalar of its own type (Triton's to_tensor).
    input = to_tensor(input, _builder=_builder)
    axis = _unwrap(axis)
    if not isinstance(axis, (tuple, list)):
        return tensor(_builder.expand_dims(input.handle, _int_arg(axis, "tl.expand_dims(): axis")))
    # Several axes index the result, as in Triton: normalize them against the final rank, then insert in order
    # (each insertion is then within the builder's range for the rank it sees).
    new_rank = len(input.shape) + len(axis)
    axes = []
    for a in axis:
        a = _int_arg(a, "tl.expand_dims(): axis")
        if not -new_rank <= a < new_rank:
            raise ValueError(f"tl.expand_dims(): invalid axis {a}. Expected {-new_rank} <= axis < {new_rank} (axis "
                             f"out of range for a result of rank {new_rank}: a block of rank {len(input.shape)} "
                             f"with {len(axis)} new axes)")
        axes.append(a + new_rank if a < 0 else a)
    if len(set(axes)) != len(axes):
        raise ValueError(f"tl.expand_dims(): duplicate axes, normalized axes = {sorted(axes)} (given "
                         f"{tuple(axis)})")
    axes.sort()
    result = input.handle
    for a in axes:
        result = _builder.expand_dims(result, a)
    return tensor(result)


@builtin
def reshape(input: tensor, *shape: Any, can_reorder: bool = False, _builder: Any = None) -> tensor:
    input = _tensor_arg(input, "tl.reshape()")
    return tensor(_builder.reshape(input.handle, _varargs_shape(shape, "tl.reshape()")))


@builtin
def view(input: tensor, *shape: Any, _builder: Any = None) -> tensor:
    input = _tensor_arg(input, "tl.view()")
    return tensor(_builder.reshape(input.handle, _varargs_shape(shape, "tl.view()")))


@builtin
def broadcast_to(input: Any, *shape: Any, _builder: Any = None) -> tensor:
    return tensor(_builder.broadcast_to(_operand(input, "tl.broadcast_to()"),
                                        _varargs_shape(shape, "tl.broadcast_to()")))


@builtin
def permute(input: tensor, *dims: Any, _builder: Any = None) -> tensor:
    input = _tensor_arg(input, "tl.permute()")
    return tensor(_builder.permute(input.handle, _varargs_shape(dims, "tl.permute()")))


@builtin
def trans(input: tensor, *dims: Any, _builder: Any = None) -> tensor:
    """Without dims, swaps the two axes of a 2-D block (Triton's default)."""
    input = _tensor_arg(input, "tl.trans()")
    order = _varargs_shape(dims, "tl.trans()") if dims else [1, 0]
    return tensor(_builder.permute(input.handle, order))


# ---------------------------------------------------------------------------------------------------- linear algebra


@builtin
def dot(input: tensor, other: tensor, acc: tensor | None = None, input_precision: str | None = None,
        allow_tf32: bool | None = None, max_num_imprecise_acc: int | None = None, out_dtype: dtype | None = None,
        _builder: Any = None, _generator: Any = None) -> tensor:
    # input_precision/allow_tf32 select tensor-core modes on GPUs, kept in the IR (None: the target's default); the
    # CPU computes in full fp32 (as "ieee"). out_dtype None lets the builder pick Triton's accumulator (fp32 for
    # floats, i32 for ints).
    a = _tensor_arg(input, "tl.dot(): input")
    b = _tensor_arg(other, "tl.dot(): other")
    acc = _unwrap(acc)
    out_dtype = _unwrap(out_dtype)
    input_precision = _unwrap(input_precision)
    allow_tf32 = _unwrap(allow_tf32)
    if input_precision is not None and allow_tf32 is not None:
        raise TypeError("tl.dot(): give only one of input_precision and allow_tf32 (deprecated)")
    if allow_tf32 is not None:
        input_precision = "tf32" if _bool_arg(allow_tf32, "tl.dot(): allow_tf32") else "ieee"
    elif input_precision is None:
        # Triton's knobs.language.fp32_default (TRITON_F32_DEFAULT), else the target's default.
        input_precision = knobs.language.fp32_default
    if input_precision is not None:
        input_precision = _str_arg(input_precision, "tl.dot(): input_precision")
    max_num_imprecise_acc = _unwrap(max_num_imprecise_acc)
    if max_num_imprecise_acc is not None:
        max_num_imprecise_acc = _int_arg(max_num_imprecise_acc, "tl.dot(): max_num_imprecise_acc")
    if len(a.shape) == 3 or len(b.shape) == 3:
        if len(a.shape) != 3 or len(b.shape) != 3 or a.shape[0] != b.shape[0]:
            raise ValueError(f"tl.dot(): batched operands must both be 3-D with the same batch size, got "
                             f"{_describe(a)} and {_describe(b)}")
        if acc is not None and (len(_tensor_arg(acc, "tl.dot(): acc").shape) != 3):
            raise ValueError(f"tl.dot(): the accumulator of a batched dot must be 3-D, got {_describe(acc)}")
        from .batched_dot import batched_dot
        return _generator.call_jit_function(batched_dot, [a, b, acc, input_precision, max_num_imprecise_acc,
                                                          out_dtype], {})
    return tensor(_builder.dot(a.handle, b.handle, None if acc is None else _tensor_arg(acc, "tl.dot(): acc").handle,
                               None if out_dtype is None else _dtype_arg(out_dtype, "tl.dot(): out_dtype"),
                               input_precision, max_num_imprecise_acc))


# -------------------------------------------------------------------------------------------------------- reduction


@builtin
def reduce(input: Any, axis: int | None, combine_fn: Any, keep_dims: bool = False, _builder: Any = None,
           _generator: Any = None) -> Any:
    """Reduces `input` (a tensor or a tuple of same-shape tensors) along `axis` with the @jit `combine_fn`, which
    receives (lhs..., rhs...) scalars and returns as many values as there are inputs. axis=None reduces all."""
    single = isinstance(_unwrap(input), tensor)
    inputs = [_tensor_arg(input, "tl.reduce(): input")] if single else \
        [_tensor_arg(x, "tl.reduce(): input") for x in _unwrap(input)]
    axis = _unwrap(axis)
    keep_dims = bool(_unwrap(keep_dims))
    rank = len(inputs[0].shape)
    if axis is None:
        if rank != 1:
            inputs = [tensor(_builder.reshape(x.handle, [x.numel])) for x in inputs]
        reduce_axis = 0
    else:
        reduce_axis = _int_arg(axis, "tl.reduce(): axis")
    # The builder checks the axis against the rank (a negative one counts from the end).
    region_args = [tensor(h) for h in _builder.begin_reduce([x.handle for x in inputs], reduce_axis)]
    if reduce_axis < 0:
        reduce_axis += rank
    combined = _generator.call_jit_function(combine_fn, region_args, {})
    combined = list(combined) if isinstance(combined, tuple) else [combined]
    if len(combined) != len(inputs):
        raise TypeError(f"tl.reduce(): the combine function returned {len(combined)} value(s) for "
                        f"{len(inputs)} input(s)")
    handles = [c.handle if isinstance(c, tensor) else _builder.constant(_unwrap(c), x.handle.dtype)
               for c, x in zip(combined, inputs)]
    results = [tensor(h) for h in _builder.end_reduce(handles)]
    if keep_dims:
        # axis=None keeps every dimension of the original input, each of size 1.
        axes = builtins.range(rank) if axis is None else [reduce_axis]
        for a in axes:
            results = [tensor(_builder.expand_dims(r.handle, a)) for r in results]
    return results[0] if single else tuple(results)


@builtin
def gather(src: tensor, index: tensor, axis: int, _builder: Any = None) -> tensor:
    """src's elements picked along `axis` by `index` (same rank; every other dimension equal): the result has
    index's shape, result[..., i, ...] = src[..., index[..., i, ...], ...]."""
    src = _tensor_arg(src, "tl.gather(): src")
    index = _tensor_arg(index, "tl.gather(): index")
    return tensor(_builder.gather(src.handle, index.handle, _int_arg(_unwrap(axis), "tl.gather(): axis")))


@builtin
def map_elementwise(scalar_fn: Any, *args: Any, pack: int = 1, _builder: Any = None, _generator: Any = None) -> Any:
    """The @jit `scalar_fn` applied to every element of `args` (broadcast together): it receives scalars (with
    pack=k, k consecutive elements of each argument, argument by argument) and returns one scalar per result (k of
    each); control flow in it runs per element. Returns a block, or a tuple of blocks."""
    pack = _int_arg(_unwrap(pack), "tl.map_elementwise(): pack")
    operands = [_operand(a, "tl.map_elementwise(): argument") for a in args]
    scalars = [tensor(h) for h in _builder.begin_map_elementwise(operands, pack)]
    results = _generator.call_jit_function(scalar_fn, scalars, {})
    single = not isinstance(results, tuple)
    results = [to_tensor(r, _builder=_builder) for r in ([results] if single else results)]
    blocks = [tensor(h) for h in _builder.end_map_elementwise([r.handle for r in results])]
    return blocks[0] if single else tuple(blocks)


@builtin
def associative_scan(input: Any, axis: int, combine_fn: Any, reverse: bool = False, _builder: Any = None,
                     _generator: Any = None) -> Any:
    """Inclusive scan of `input` (a tensor or a tuple of same-shape tensors) along `axis` with the @jit `combine_fn`,
    which receives (carry..., next...) scalars and returns as many values as there are inputs; element i combines
    elements 0..i in order (i..n-1 with reverse=True)."""
    single = isinstance(_unwrap(input), tensor)
    inputs = [_tensor_arg(input, "tl.associative_scan(): input")] if single else \
        [_tensor_arg(x, "tl.associative_scan(): input") for x in _unwrap(input)]
    scan_axis = _int_arg(_unwrap(axis), "tl.associative_scan(): axis")
    reverse = _unwrap(reverse)
    if not isinstance(reverse, bool):
        raise TypeError(f"tl.associative_scan(): reverse must be a compile-time bool, got {_describe(reverse)}")
    # The builder checks the axis against the rank (a negative one counts from the end).
    region_args = [tensor(h) for h in _builder.begin_scan([x.handle for x in inputs], scan_axis, reverse)]
    combined = _generator.call_jit_function(combine_fn, region_args, {})
    combined = list(combined) if isinstance(combined, tuple) else [combined]
    if len(combined) != len(inputs):
        raise TypeError(f"tl.associative_scan(): the combine function returned {len(combined)} value(s) for "
                        f"{len(inputs)} input(s)")
    handles = [c.handle if isinstance(c, tensor) else _builder.constant(_unwrap(c), x.handle.dtype)
               for c, x in zip(combined, inputs)]
    results = [tensor(h) for h in _builder.end_scan(handles)]
    return results[0] if single else tuple(results)


# ------------------------------------------------------------------------------------------------------------ hints


def _hint(kind: str, input: Any, values: Any, builder: Any) -> tensor:
    """Records a hint (one compile-time int per dimension, or one int) on `input` in the IR; returns `input`."""
    what = f"tl.{kind}()"
    x = _tensor_arg(input, f"{what}: input")
    values = _unwrap(values)
    values = list(values) if isinstance(values, (tuple, list)) else [values]
    ints = [_int_arg(v, f"{what}: every value") for v in values]
    builder.hint(x.handle, kind, ints)
    return x


@builtin
def multiple_of(input: tensor, values: Any, _builder: Any = None) -> tensor:
    """Tells the compiler that the first element of every contiguous group of `input` is a multiple of `values`
    (one per dimension). It does not change values; the alignment analysis uses it."""
    return _hint("multiple_of", input, values, _builder)


@builtin
def max_contiguous(input: tensor, values: Any, _builder: Any = None) -> tensor:
    """Tells the compiler that `input` holds runs of `values` consecutive integers along each dimension."""
    return _hint("max_contiguous", input, values, _builder)


@builtin
def max_constancy(input: tensor, values: Any, _builder: Any = None) -> tensor:
    """Tells the compiler that `input` holds runs of `values` equal values along each dimension."""
    return _hint("max_constancy", input, values, _builder)


@builtin
def assume(cond: Any, _builder: Any = None) -> None:
    """Lets the compiler assume that the scalar `cond` is true (the kernel is undefined if it is not)."""
    _builder.assume(_operand(cond, "tl.assume(): cond"))


# ------------------------------------------------------------------------------------------------------------ debug


class StaticAssertionFailure(AssertionError):
    """A failed tl.static_assert or compile-time `assert`; at the kernel's line the code generator makes it a
    CompileTimeAssertionFailure."""


@builtin
def static_assert(cond: Any, msg: str = "", _builder: Any = None) -> None:
    cond = _unwrap(cond)
    if isinstance(cond, tensor):
        raise TypeError(f"tl.static_assert() needs a compile-time condition, got {_describe(cond)}")
    if not cond:
        raise StaticAssertionFailure(f"static_assert failed: {_unwrap(msg)}" if msg else "static_assert failed")


@builtin
def static_print(*values: Any, sep: str = " ", end: str = "\n", file: Any = None, flush: bool = False,
                 _builder: Any = None) -> None:
    """Prints at compile time; a tensor prints as its type and shape."""
    print(*(_unwrap(v) for v in values), sep=sep, end=end, file=file, flush=flush)


@builtin
def device_print(prefix: Any, *args: Any, hex: bool = False, _builder: Any = None) -> None:
    """Prints at run time: every element of each of `args` (tensors or numbers) on a line of its own, after the
    program id, the element's index and `prefix`, as Triton prints on GPUs (`pid (0, 0, 0) idx (3) x: 7`). `print()`
    in a kernel is this function. With `hex`, values print as their bits in hexadecimal."""
    prefix = _unwrap(prefix)
    if not isinstance(prefix, str):
        raise TypeError(f"{prefix!r} is not string: tl.device_print() (and print() in a kernel) take a string "
                        "prefix first, then the values to print")
    _builder.print(prefix, [_operand(a, "tl.device_print()") for a in args], _bool_arg(hex, "tl.device_print(): hex"))


@builtin
def device_assert(cond: Any, msg: str = "", mask: Any = None, _builder: Any = None) -> None:
    """Checks `cond` at run time in kernels compiled with `debug` (`@jit(debug=True)`, `debug=True` at launch,
    `knobs.runtime.debug`, TRITON_DEBUG=1 or TESSEL_DEBUG=1): where an element is false (and `mask`, if given, is
    set) the program stops and the launch raises tessel.DeviceAssertionError naming this line and `msg`. Without
    debug it compiles to nothing. `assert cond, msg` on a tensor in a kernel is this function."""
    msg = _unwrap(msg)
    if not isinstance(msg, str):
        raise TypeError(f"tl.device_assert(): the message must be a compile-time string, got {_describe(msg)}")
    mask = _unwrap(mask)
    _builder.device_assert(_operand(cond, "tl.device_assert() condition"), msg,
                           None if mask is None else _operand(mask, "tl.device_assert() mask"))


@builtin
def inline_asm_elementwise(asm: str, constraints: str, args: Sequence[Any], dtype: Any, is_pure: bool, pack: int,
                           _builder: Any = None) -> Any:
    """Runs the target's assembly `asm` (LLVM `constraints`) on the broadcast `args`, `pack` elements per instance;
    returns a tensor of `dtype`, or a tuple when `dtype` is a tuple. Operands narrower than 32 bits are packed into
    32-bit registers (as in Triton). NVIDIA targets take PTX; the CPU cannot run inline assembly."""
    asm = _unwrap(asm)
    if not isinstance(asm, str):
        raise TypeError(f"tl.inline_asm_elementwise(): asm must be a compile-time string, got {_describe(asm)}")
    constraints = _unwrap(constraints)
    if not isinstance(constraints, str):
        raise TypeError("tl.inline_asm_elementwise(): constraints must be a compile-time string, got "
                        f"{_describe(constraints)}")
    dtype = _unwrap(dtype)
    multiple = isinstance(dtype, (tuple, list))
    dtypes = [_dtype_arg(d, "tl.inline_asm_elementwise(): dtype") for d in (dtype if multiple else [dtype])]
    args = _unwrap(args)
    if isinstance(args, tensor) or not isinstance(args, (tuple, list)):
        raise TypeError(f"tl.inline_asm_elementwise(): args must be a list of tensors, got {_describe(args)}")
    operands = [_operand(a, "tl.inline_asm_elementwise() argument") for a in args]
    handles = _builder.inline_asm(asm, constraints, operands, dtypes,
                                  _bool_arg(is_pure, "tl.inline_asm_elementwise(): is_pure"),
                                  _int_arg(pack, "tl.inline_asm_elementwise(): pack"))
    results = tuple(tensor(h) for h in handles)
    return results if multiple else results[0]


def extern_elementwise(lib_name: str, lib_path: str, args: Sequence[Any], arg_type_symbol_dict: dict[Any, Any],
                       is_pure: bool, _builder: Any = None, _semantic: Any = None) -> tensor:
    """Calls an external function element by element: the symbol `arg_type_symbol_dict` names for the argument
    types, `{(tl.float32,): ("__nv_expf", tl.float32), ...}`, of the library `lib_name` at `lib_path`. NVIDIA
    targets link libdevice (`__nv_*`); the CPU maps the libdevice functions it knows to its own math. Called as
    Triton's libraries call it too (`_semantic=`, from functions decorated with `extern`)."""
    builder = _builder if _builder is not None else _semantic
    if builder is None:
        raise RuntimeError("tl.extern_elementwise() can only be called inside a @tessel.jit function")
    table = _unwrap(arg_type_symbol_dict)
    if not isinstance(table, dict) or not table:
        raise ValueError("tl.extern_elementwise(): arg_type_symbol_dict is empty")
    args = _unwrap(args)
    if isinstance(args, tensor) or not isinstance(args, (tuple, list)):
        raise TypeError(f"tl.extern_elementwise(): args must be a list, got {_describe(args)}")
    operands = [_operand(a, "tl.extern_elementwise() argument") for a in args]
    # Numbers have their literal types, as Triton's to_tensor gives them.
    types = tuple(_unwrap(a).dtype if isinstance(_unwrap(a), tensor) else dtype_from_ir(_C.literal_type(op))
                  for a, op in zip(args, operands))
    if types not in table and len(operands) > 1:
        # As Triton: without a function for the arguments' own types, they are promoted together as arithmetic
        # promotes them, then looked up again (numbers become literals of the common type).
        common = operands[0]
        for op in operands[1:]:
            common = builder.constant(0, builder.promoted_type(common, op, "tl.extern_elementwise()"))
        promoted = tensor(common).dtype
        if (promoted,) * len(operands) in table:
            types = (promoted,) * len(operands)
            operands = [op if isinstance(op, (bool, int, float)) else builder.cast(op, promoted.ir_name)
                        for op in operands]
    if types not in table:
        def names(key: Any) -> str:
            return "(" + ", ".join(str(t) for t in key) + ")"
        raise TypeError(f"tl.extern_elementwise(): input arg type does not match: {lib_name or 'the library'} has no "
                        f"function for {names(types)}; expected one of {', '.join(names(k) for k in table)}")
    entry = table[types]
    symbol, result = _unwrap(entry[0]), _unwrap(entry[1])
    return tensor(builder.extern_elementwise(_unwrap(lib_name) or "", _unwrap(lib_path) or "", symbol, operands,
                                             [t.ir_name for t in types],
                                             _dtype_arg(result, "tl.extern_elementwise(): result type"),
                                             _bool_arg(is_pure, "tl.extern_elementwise(): is_pure")))


setattr(extern_elementwise, _BUILTIN_ATTR, True)
setattr(extern_elementwise, _NEEDS_GENERATOR_ATTR, False)


def extern(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Triton's decorator of library functions written over tl.extern_elementwise (libdevice's): the function is a
    builtin that receives the builder as `_semantic` (Triton's name) or `_builder`."""
    takes_semantic = "_semantic" in inspect.signature(fn).parameters

    @functools.wraps(fn)
    def wrapper(*args: Any, _builder: Any = None, **kwargs: Any) -> Any:
        if _builder is None:
            raise RuntimeError(f"{fn.__name__}() can only be called inside a @tessel.jit function")
        return fn(*args, **kwargs, **({"_semantic": _builder} if takes_semantic else {"_builder": _builder}))

    setattr(wrapper, _BUILTIN_ATTR, True)
    setattr(wrapper, _NEEDS_GENERATOR_ATTR, False)
    return wrapper


# ------------------------------------------------------------------------------------------------------------ loops


class static_range:
    """`for i in tl.static_range(...)`: unrolled at compile time; the bounds must be compile-time integers."""

    def __init__(self, arg1: int, arg2: int | None = None, step: int | None = None) -> None:
        self.args = (arg1,) if arg2 is None else (arg1, arg2) if step is None else (arg1, arg2, step)

    def __iter__(self) -> Any:
        raise RuntimeError("tl.static_range can only be iterated by a `for` inside a @tessel.jit function")


class condition:
    """`while tl.condition(cond, disable_licm=False):` a while loop's condition with a scheduling hint (keep loop
    invariant code inside the loop), which changes no result and is accepted as such; the loop is that of `cond`."""

    def __init__(self, arg1: Any, disable_licm: bool = False) -> None:
        self.condition = arg1
        self.disable_licm = disable_licm


# Triton's bound on a block's elements, which the builder enforces (TileBuilder.h's kMaxBlockElements).
TRITON_MAX_TENSOR_NUMEL = 1 << 20


class range:
    """`for i in tl.range(...)`: a loop like `range`. `num_stages` pipelines this loop's dot operands with that
    many stages instead of the kernel's `num_stages` (0 or 1: not at all), as in Triton; the other scheduling hints
    (unrolling, warp specialization, disable_licm) are accepted and change no result."""

    def __init__(self, arg1: Any, arg2: Any = None, step: Any = None, num_stages: int | None = None,
                 loop_unroll_factor: int | None = None, disallow_acc_multi_buffer: bool = False,
                 flatten: bool = False, warp_specialize: bool = False, disable_licm: bool = False) -> None:
        self.args = (arg1,) if arg2 is None else (arg1, arg2) if step is None else (arg1, arg2, step)
        self.num_stages = None
        if _unwrap(num_stages) is not None:
            self.num_stages = _int_arg(num_stages, "tl.range's num_stages")
            if self.num_stages < 0:
                raise ValueError(f"tl.range's num_stages must not be negative, got {self.num_stages}")

    def __iter__(self) -> Any:
        raise RuntimeError("tl.range can only be iterated by a `for` inside a @tessel.jit function")


# Tensor methods that mirror builtins (`x.reshape(...)`, `x.exp()`); standard.py adds sum/max/min/... the same way.
for _fn in (reshape, view, broadcast_to, expand_dims, permute, trans, reduce, associative_scan, gather, exp, exp2, log,
            log2, sqrt, sqrt_rn, rsqrt, abs, sin, cos, floor, ceil, sigmoid, erf, cast, store, atomic_add, atomic_and,
            atomic_or, atomic_xor, atomic_max, atomic_min, atomic_xchg, atomic_cas):
    setattr(tensor, _fn.__name__, _fn)
del _fn
