"""The ahead-of-time compiler: one specialization of a @tessel.jit kernel into an object file and a C launcher.

    python -m tessel.tools.compile FILE.py --kernel-name K --signature "*fp32:16, *fp32:16, i32, 1024" \\
        --grid "(n + 1023) / 1024, 1, 1" --target cpu --out-dir D [--out-name N]

writes, in D, under the name N (default: K):
    N.o     the kernel: an ELF relocatable object for the --target CPU (cpu: this host's model; cpu:<model>, e.g.
            cpu:x86-64-v3, for other machines) defining the entry `N_tessel_entry`
    N.h     `int N_launch(<args>)`, which runs the --grid, and `int N_launch_grid(gx, gy, gz, <args>)`
    N.c     those two functions: they pack the arguments for the entry and run the grid, serially, or over
            pthreads when compiled with -DTESSEL_AOT_THREADS (TESSEL_NUM_THREADS caps the threads); they return 0,
            or -1 and run nothing (with a line on stderr) for a grid out of range (see below)
    N.json  metadata: names, signature, constexprs, grid, target, tessel version, sha256 of the object
A program links them with `cc main.c N.c N.o -lm` (and `-DTESSEL_AOT_THREADS -pthread` for threads).

With --target cuda:80 / cuda:90a it writes N.cubin (N.ptx where no ptxas was found) instead of N.o, and N.c embeds
it: `CUresult N_launch(CUstream stream, <args>)` loads the module into the current context on first use and
launches the grid with cuLaunchKernel (pointer arguments are device addresses). Build with
`cc -I/usr/local/cuda/include main.c N.c -lcuda`: the CUDA driver is all it needs.

The signature follows Triton's tool: one entry per parameter of K, in order. A run-time parameter takes a type string
("*fp32", "i32", "*fp16:16": ":16" marks a multiple of 16; "*fp32:16:noalias" promises that the array overlaps no
other pointer argument's, which lets loads fuse with the stores that follow them, as at launch, where the launcher
checks it), or 1 for an int compiled in as launches compile ints equal to 1 (a unit stride; it leaves the C
signature); a tensor descriptor parameter takes "tensordesc<fp16[64, 64]>" (its element type and block; ",nan"
after the block pads with NaN) and is passed to the C functions as NAME_base (the array, 16-byte aligned),
NAME_shape0... (int32 sizes) and NAME_stride0... (int64 strides, in elements, of every dimension but the last, which
is contiguous), as the launcher passes a host-made TensorDescriptor (on cuda:90a the C launcher encodes the tensor
maps the copy engine reads at each launch); a tl.constexpr parameter takes a value (1024, 0.5,
True, or a dtype name such as fp16); None stands for a compile-time None for either kind, as at launch.

The grid is 1 to 3 comma-separated integer expressions of the kernel's integer run-time scalar arguments and integer
constexprs: integers, names, + - * / // % << >> & | ^, unary - + ~ and parentheses, nothing else. The launcher
computes them in int64_t: `/` and `%` are C's (they truncate toward 0), `//` is Python's floor division. A dimension
<= 0 is an empty grid. One that is over the launch limit (2^31 - 1 programs; on CUDA 65535 along y and z, and
(2^31 - 1) / --num-ctas along x) or whose computation overflows int64_t, divides by 0 or shifts by a negative count
(or left by more than 62) is refused, never truncated: by this tool where it uses no run-time argument, at run time
by the launch function, which then runs nothing and returns -1 (CUDA_ERROR_INVALID_VALUE on CUDA).

Exit status: 0 on success, 2 for a wrong command line, 1 for a kernel that does not compile.
"""
from __future__ import annotations

import argparse
import ast
import copy
import dataclasses
import hashlib
import importlib.util
import json
import pathlib
import re
import sys
from typing import Any, Sequence

from .. import _C, __version__
from .. import language as tl
from ..compiler import CompilationError
from ..compiler.code_generator import generate
from ..runtime.jit import JITFunction

EXIT_COMPILE_ERROR = 1
EXIT_USAGE = 2  # argparse's own status for a bad command line

# The C type of each scalar type string of the binding contract. fp16 and bf16 have no portable C type: their bits
# travel as uint16_t, which is also how the entry reads a scalar of those types (2 bytes behind argv[i]).
_C_TYPES = {t["name"]: t["c_type"] for t in _C.scalar_types()}
_BITS = {t["name"]: t["bits"] for t in _C.scalar_types()}

# A tensor descriptor parameter's entry, as Triton spells it: "tensordesc<fp16[64, 64]>" (",nan" after the block
# for NaN padding, as the launcher's tag has it).
_DESCRIPTOR = re.compile(r"tensordesc<(\w+)\[([0-9,\s]+)\](,\s*nan)?>")

# dtype values a constexpr entry may name: tessel.language's names (float16), Triton's (fp16) and the type strings
# (i32).
_DTYPES: dict[str, tl.dtype] = {
    key: value for attr in dir(tl) if isinstance(value := getattr(tl, attr), tl.dtype)
    for key in (attr, value.name, value.ir_name)
}

# GPU backends that tessel will have, but this build does not.

# Names that cannot be C identifiers in the generated files although Python accepts them as parameter names: C and
# C++ keywords (the header is meant for both), stdbool's macros, and the names the launch functions use themselves.
_RESERVED_C_NAMES = frozenset("""
    auto bool case catch char class const const_cast constexpr decltype default delete do double dynamic_cast enum
    explicit export extern false float friend goto inline int long mutable namespace new noexcept nullptr operator
    private protected public register reinterpret_cast restrict short signed sizeof static static_cast struct switch
    template this thread_local throw true typedef typeid typename union unsigned using virtual void volatile
    wchar_t gx gy gz
""".split())

_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# The types of the run-time arguments a grid may use.
_INTEGER_TYPES = frozenset(t["name"] for t in _C.scalar_types() if not t["is_float"])
_INT32_MAX = 2**31 - 1
_INT64_MIN, _INT64_MAX = -2**63, 2**63 - 1
# A grid entry's binary operators, each as the launcher computes it in int64_t: by a function of the C code that
# clears `tessel_ok` where C's operator would overflow, divide by 0 or shift out of range (_GRID_C_FUNCTIONS), or by
# C's own operator where that cannot go wrong.
_GRID_OPERATORS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floordiv",
                   ast.Mod: "mod", ast.LShift: "shl", ast.RShift: "shr", ast.BitAnd: "&", ast.BitOr: "|",
                   ast.BitXor: "^"}


class UsageError(Exception):
    """A wrong command line: reported as one message, without a traceback."""


@dataclasses.dataclass(frozen=True)
class RuntimeArg:
    """A run-time parameter of the kernel and its type string as given, divisibility mark included ("*fp32:16").
    A tensor descriptor's type is the launcher's tag of it, and it is passed as its `parts`: the base
    (`<name>_base`), the sizes (`<name>_shape<d>`) and the strides but the last, which is 1 (`<name>_stride<d>`)."""
    name: str
    type: str
    parts: tuple["RuntimeArg", ...] = ()

    @property
    def base_type(self) -> str:
        return self.type.partition(":")[0]

    @property
    def is_pointer(self) -> bool:
        return self.type.startswith("*")

    @property
    def c_declaration(self) -> str:
        if self.is_pointer:
            return f"{_C_TYPES[self.base_type[1:]]} *{self.name}"
        return f"{_C_TYPES[self.base_type]} {self.name}"


@dataclasses.dataclass(frozen=True)
class Specialization:
    """The signature parsed: the run-time arguments in order and the constexpr values."""
    entries: list[str]
    args: list[RuntimeArg]
    constexprs: dict[str, Any]

    @property
    def c_args(self) -> list[RuntimeArg]:
        """The arguments of the C functions and of the compiled entry: a descriptor's parts in its place."""
        return [part for arg in self.args for part in (arg.parts or (arg,))]


@dataclasses.dataclass(frozen=True)
class Launcher:
    """What the C files are generated from."""
    name: str  # prefix of the C functions
    entry: str  # the entry symbol defined by the object
    args: list[RuntimeArg]
    grid: Grid
    description: str  # the kernel and its specialization, for the files' opening comments
    backend: str = "cpu"
    # GPU kernels: the binary (cubin, or PTX when ptxas was absent), threads per program, dynamic shared memory,
    # CTAs per program (a cluster along x), the tensor maps it takes after its arguments (the launch stage's
    # "tensor_map=" lines: TensorMapSpec).
    image: bytes = b""
    threads: int = 0
    shared: int = 0
    ctas: int = 1
    tensor_maps: tuple[str, ...] = ()


# ------------------------------------------------------------------------------------------- command line parsing

def parse_target(text: str) -> str:
    """The canonical name of a target of this build (the registry's: "cpu", "cpu:x86-64-v3", ...) that this tool
    writes a launcher for."""
    try:
        target = _C.parse_target(text)
    except _C.BackendError as e:
        raise UsageError(f"--target {text}: {e} (available: {', '.join(_C.available_backends())})") from None
    if target.split(":")[0] not in _LAUNCHER_SOURCES:
        raise UsageError(f"--target {text}: this tool writes no launcher for the {target.split(':')[0]} backend")
    return target


def _split_entries(text: str, opening: str = "<[(", closing: str = ">])") -> list[str]:
    """The comma-separated entries of `text`, commas inside <>, [] or () (the `opening` and `closing` brackets) left
    in their entry."""
    entries, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += (char in opening) - (char in closing)
        if char == "," and depth == 0:
            entries.append(text[start:i].strip())
            start = i + 1
    return entries + [text[start:].strip()]


def parse_signature(kernel: JITFunction, text: str) -> Specialization:
    names = kernel.arg_names
    entries = _split_entries(text) if text.strip() else []
    if len(entries) != len(names):
        if len(entries) < len(names):
            problem = f"parameter '{names[len(entries)]}' has no entry"
        else:
            problem = f"entry '{entries[len(names)]}' has no parameter"
        raise UsageError(f"--signature gives {len(entries)} entries for the {len(names)} parameters of "
                         f"{kernel.__name__}({', '.join(names)}): {problem}")
    args: list[RuntimeArg] = []
    constexprs: dict[str, Any] = {}
    for name, entry in zip(names, entries):
        if not entry:
            raise UsageError(f"--signature: the entry of parameter '{name}' is empty")
        if entry == "None":
            # As at launch: None for any parameter is a compile-time None, so that `if ptr is not None:` folds.
            constexprs[name] = None
        elif name in kernel.constexpr_names:
            constexprs[name] = _constexpr_value(name, entry)
        elif _number(entry) == 1 and not isinstance(_number(entry), (bool, float)):
            # As at launch: a run-time int equal to 1 is compiled in (a unit stride), and leaves the C signature.
            constexprs[name] = 1
        else:
            args.append(_runtime_arg(name, entry))
    return Specialization(entries, args, constexprs)


def _number(entry: str) -> bool | int | float | None:
    """The Python bool, int or float literal that `entry` spells, if it is one."""
    try:
        value = ast.literal_eval(entry)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, (bool, int, float)) else None


def _constexpr_value(name: str, entry: str) -> Any:
    number = _number(entry)
    if number is not None:
        return number
    if entry in _DTYPES:
        return _DTYPES[entry]
    raise UsageError(f"--signature: parameter '{name}' is tl.constexpr, so its entry must be a value (an int, float, "
                     f"True, False, None or a dtype name such as fp16), not '{entry}'")


def _descriptor_arg(name: str, entry: str) -> RuntimeArg:
    match = _DESCRIPTOR.fullmatch(entry)
    element = match.group(1) if match else None
    if element not in _C_TYPES or element == "i1":
        raise UsageError(f"--signature: parameter '{name}': '{entry}' is not a tensor descriptor type; write "
                         "tensordesc<ELEMENT[BLOCK, ...]> (tensordesc<fp16[64, 64]>), ELEMENT one of "
                         f"{', '.join(t for t in _C_TYPES if t != 'i1')}")
    block = [int(size) for size in match.group(2).split(",") if size.strip()]
    if not 1 <= len(block) <= 5 or any(size < 1 or size & (size - 1) for size in block):
        raise UsageError(f"--signature: parameter '{name}': '{entry}' needs 1 to 5 block dimensions, each a power "
                         "of 2")
    _check_c_name(name, f"parameter '{name}'")
    # As the launcher passes a descriptor: the base 16-byte aligned, int32 sizes, int64 strides (whole 16 bytes).
    stride_mark = f":{max(1, 128 // _BITS[element])}"
    parts = ((RuntimeArg(f"{name}_base", f"*{element}:16"),) +
             tuple(RuntimeArg(f"{name}_shape{d}", "i32") for d in range(len(block))) +
             tuple(RuntimeArg(f"{name}_stride{d}", "i64") for d in range(len(block) - 1)))
    for part in parts:
        _check_c_name(part.name, f"parameter '{name}'")
    tag = (f"tensordesc<{element}[{','.join(map(str, block))}]{',nan' if match.group(3) else ''}>(" +
           ",".join([parts[0].type] + [p.type for p in parts[1:1 + len(block)]] +
                    [p.type + stride_mark for p in parts[1 + len(block):]]) + ")")
    return RuntimeArg(name, tag, parts)


def _runtime_arg(name: str, entry: str) -> RuntimeArg:
    if entry.startswith("tensordesc"):
        return _descriptor_arg(name, entry)
    if _number(entry) is not None:
        raise UsageError(f"--signature: parameter '{name}' is a run-time argument, so its entry must be a type (such "
                         f"as i32 or *fp32) or 1 (compiled in, as launches do with ints equal to 1), not the value "
                         f"{entry}; annotate it `{name}: tl.constexpr` to compile the value into the kernel")
    base, *marks = entry.split(":")
    if base.removeprefix("*") not in _C_TYPES:
        raise UsageError(f"--signature: parameter '{name}' has the unknown type '{entry}' (types: "
                         f"{', '.join(_C_TYPES)}, with a leading * for a pointer)")
    allowed = ("16", "noalias") if base.startswith("*") else ("16",)
    for mark in marks:
        if mark not in allowed or marks.count(mark) > 1:
            raise UsageError(f"--signature: parameter '{name}': '{entry}' has the mark ':{mark}'; the marks are ':16' "
                             "(a multiple of 16) and, for pointers, ':noalias' (its array overlaps no other "
                             "pointer argument's), each at most once")
    _check_c_name(name, f"parameter '{name}'")
    return RuntimeArg(name, entry)


def _check_c_name(name: str, what: str) -> None:
    if not _C_IDENTIFIER.fullmatch(name) or name in _RESERVED_C_NAMES or name.startswith("tessel_"):
        raise UsageError(f"{what}: '{name}' cannot be a name in the generated C code (it must be an ASCII "
                         "identifier, not a C or C++ keyword, gx, gy, gz or tessel_*): rename it")


def grid_limits(backend: str, num_ctas: int, threads: int = 1) -> tuple[int, int, int]:
    """The most programs a launch runs along x, y and z: the CPU entry takes int32_t dimensions; CUDA runs up to
    2^31 - 1 CTAs along x (a program is num_ctas of them) and 65535 along y and z; HIP counts a grid's work-items in
    32 bits (`threads` per program along x)."""
    if backend == "cuda":
        return _INT32_MAX // max(1, num_ctas), 65535, 65535
    if backend == "hip":
        return min(_INT32_MAX, (2**32 - 1) // max(1, threads)), _INT32_MAX, _INT32_MAX
    return _INT32_MAX, _INT32_MAX, _INT32_MAX


@dataclasses.dataclass(frozen=True)
class Grid:
    """The --grid checked: its three dimensions as the metadata and the comments show them, and as C expressions
    of int64_t that clear `tessel_ok` where computing them goes wrong; the constexprs and the functions of
    _GRID_C_FUNCTIONS that those use."""
    entries: list[str]
    c: list[str]
    constants: dict[str, int]
    functions: list[str]


class _GridOverflow(ArithmeticError):
    """The grid's int64_t arithmetic went wrong: an overflow, a division by 0 or a shift out of range."""


def _int64(value: int) -> int:
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise _GridOverflow
    return value


def _c_division(a: int, b: int) -> tuple[int, int]:
    """C's a / b (rounded toward 0) and a % b, where they are defined."""
    if b == 0 or (a == _INT64_MIN and b == -1):
        raise _GridOverflow
    quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return quotient, a - b * quotient


def _floor_division(a: int, b: int) -> int:
    if b == 0:
        raise _GridOverflow
    return _int64(a // b)


def _shift_left(a: int, b: int) -> int:
    if not 0 <= b <= 62:
        raise _GridOverflow
    return _int64(a << b)


def _shift_right(a: int, b: int) -> int:
    if b < 0:
        raise _GridOverflow
    return a >> min(b, 63)


# What the launcher's int64_t arithmetic makes of constant operands: the tool computes the constant parts of the
# grid as the C code would, to refuse what would always fail or be out of range.
_GRID_ARITHMETIC = {
    "add": lambda a, b: _int64(a + b), "sub": lambda a, b: _int64(a - b), "mul": lambda a, b: _int64(a * b),
    "div": lambda a, b: _c_division(a, b)[0], "mod": lambda a, b: _c_division(a, b)[1],
    "floordiv": _floor_division, "shl": _shift_left, "shr": _shift_right,
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b, "neg": lambda a: _int64(-a),
}


class _GridTranslator:
    """Translates the entries of --grid to C, checking each node against what a grid may contain."""

    ALLOWED = ("an entry is an integer expression of the kernel's integer scalar arguments and integer constexprs: "
               "integers, names, + - * / // % << >> & | ^, unary - + ~ and parentheses")

    def __init__(self, kernel: JITFunction, spec: Specialization):
        self.kernel = kernel
        self.spec = spec
        self.args = {arg.name: arg for arg in spec.args + spec.c_args}
        self.constants: dict[str, int] = {}
        self.functions: set[str] = set()
        self.text = ""  # the entry being translated, for messages

    def entry(self, entry: str) -> tuple[str, str, int | None]:
        """The entry as shown (on one line), its C, and its value where it uses no run-time argument."""
        self.text = entry
        # Besides what the tree holds, an entry could only hide a comment or a line continuation, which would not
        # be quoted safely in the C.
        if "#" in entry or "\\" in entry:
            raise UsageError(f"--grid entry {entry!r}: '#' and '\\' have no place in a grid; {self.ALLOWED}")
        try:
            tree = ast.parse(entry, mode="eval")
        except (SyntaxError, ValueError):
            raise UsageError(f"--grid entry {entry!r} is not an expression; {self.ALLOWED}") from None
        if isinstance(tree.body, ast.Tuple):
            raise UsageError(f"--grid entry {entry!r} is a tuple: write the dimensions without parentheses, "
                             f"\"{', '.join(ast.unparse(e) for e in tree.body.elts)}\"")
        try:
            c, value = self._translate(tree.body)
            return " ".join(entry.split()), c, value
        except RecursionError:
            raise UsageError(f"--grid entry {entry!r} is too deeply nested") from None

    def _compute(self, operation: str, *values: int | None) -> int | None:
        """The value of the C code's operation, where its operands are known. A division by 0 or a shift count
        out of range fails whatever the left operand is (as it does for 0): that is refused here too."""
        try:
            if any(value is None for value in values):
                if operation in ("div", "mod", "floordiv", "shl", "shr") and values[1] is not None:
                    _GRID_ARITHMETIC[operation](0, values[1])
                return None
            return _GRID_ARITHMETIC[operation](*values)
        except _GridOverflow:
            raise UsageError(f"--grid entry {self.text!r}: computing it overflows int64_t, divides by 0 or shifts "
                             "out of range (by a negative count, or left by more than 62)") from None

    def _translate(self, node: ast.expr) -> tuple[str, int | None]:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            if node.value > _INT64_MAX:
                raise UsageError(f"--grid entry {self.text!r}: the integer {node.value} does not fit in int64_t")
            return f"INT64_C({node.value})", node.value
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub, ast.Invert)):
            c, value = self._translate(node.operand)
            if isinstance(node.op, ast.UAdd):
                return c, value
            if isinstance(node.op, ast.Invert):
                return f"(~{c})", None if value is None else ~value
            self.functions.add("neg")
            return f"tessel_grid_neg({c}, &tessel_ok)", self._compute("neg", value)
        if isinstance(node, ast.BinOp) and type(node.op) in _GRID_OPERATORS:
            operation = _GRID_OPERATORS[type(node.op)]
            (left, a), (right, b) = self._translate(node.left), self._translate(node.right)
            value = self._compute(operation, a, b)
            if operation in _GRID_C_FUNCTIONS:
                self.functions.add(operation)
                return f"tessel_grid_{operation}({left}, {right}, &tessel_ok)", value
            return f"({left} {operation} {right})", value
        raise UsageError(f"--grid entry {self.text!r}: '{ast.unparse(node)}' is not allowed in a grid; "
                         f"{self.ALLOWED}")

    def _name(self, name: str) -> tuple[str, int | None]:
        entry = self.text
        if name in self.args:
            arg = self.args[name]
            if arg.is_pointer or arg.parts:
                raise UsageError(f"--grid entry {entry!r} uses '{name}', a pointer argument" +
                                 (" (a tensor descriptor)" if arg.parts else ""))
            if arg.base_type not in _INTEGER_TYPES:
                raise UsageError(f"--grid entry {entry!r} uses '{name}', a {arg.base_type} argument: a grid "
                                 "dimension is an integer")
            if arg.base_type == "u64":
                # Above INT64_MAX it has no int64_t value: refused at run time.
                self.functions.add("u64")
                return f"tessel_grid_u64({name}, &tessel_ok)", None
            return f"(int64_t){name}", None
        if name in self.spec.constexprs:
            value = self.spec.constexprs[name]
            if type(value) not in (bool, int):
                raise UsageError(f"--grid entry {entry!r} uses the constexpr '{name}', whose value {value!r} is "
                                 "not an integer")
            if not _INT64_MIN <= value <= _INT64_MAX:
                raise UsageError(f"--grid entry {entry!r} uses the constexpr '{name}', whose value {value} does "
                                 "not fit in int64_t")
            _check_c_name(name, f"--grid entry {entry!r}")
            self.constants[name] = int(value)
            return name, int(value)
        raise UsageError(f"--grid entry {entry!r} uses '{name}', which is not a parameter of "
                         f"{self.kernel.__name__}({', '.join(self.kernel.arg_names)})")


def parse_grid(text: str, kernel: JITFunction, spec: Specialization, limits: tuple[int, int, int]) -> Grid:
    """The grid, checked, in three dimensions (missing trailing ones are 1). The C is made from the checked
    expressions, so it computes what was checked; dimensions that use no run-time argument must be within
    `limits`."""
    # Only brackets nest here: < and > are halves of shifts.
    entries = _split_entries(text, "([{", ")]}")
    if not 1 <= len(entries) <= 3:
        raise UsageError(f"--grid {text!r}: expected 1 to 3 comma-separated entries, got {len(entries)}")
    translator = _GridTranslator(kernel, spec)
    shown, c = [], []
    for axis, entry, limit in zip("xyz", entries, limits):
        spelled, code, value = translator.entry(entry)
        if value is not None and value > limit:
            raise UsageError(f"--grid entry {entry!r} is {value} programs along {axis}, more than a launch can "
                             f"run ({limit})")
        shown.append(spelled)
        c.append(code)
    missing = 3 - len(entries)
    return Grid(shown + ["1"] * missing, c + ["INT64_C(1)"] * missing, translator.constants,
                sorted(translator.functions))


def load_kernel(path: pathlib.Path, name: str) -> JITFunction:
    """Runs the file as a module, with its folder on sys.path so that it imports its neighbours (as Triton's tool
    does), and returns its @jit function `name`."""
    spec = importlib.util.spec_from_file_location(path.stem, path) if path.is_file() else None
    if spec is None or spec.loader is None:
        raise UsageError(f"{path}: not a Python file")
    sys.path.insert(0, str(path.resolve().parent))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kernel = getattr(module, name, None)
    # @autotune and @heuristics wrap the JITFunction (as `.fn`); the signature gives the values they would choose.
    while kernel is not None and not isinstance(kernel, JITFunction) and hasattr(kernel, "fn"):
        kernel = kernel.fn
    if not isinstance(kernel, JITFunction):
        raise UsageError(f"{path} has no @tessel.jit function named '{name}'" if kernel is None else
                         f"'{name}' in {path} is not a @tessel.jit function")
    return kernel


# ------------------------------------------------------------------------------------------------- compilation

def compile_kernel(kernel: JITFunction, spec: Specialization, name: str, target: str,
                   options: dict[str, Any]) -> Any:
    """Compiles the specialization into a `_C.Kernel` whose function, and so its entry symbol, is called `name`."""
    if name != kernel.__name__:
        # Naming the entry after --out-name lets several specializations of one kernel link into one program.
        # generate() names the IR function after the JITFunction, hence the renamed copy.
        kernel = copy.copy(kernel)
        kernel.__name__ = name
    builder = _C.Builder()
    builder.set_debug(bool(options.get("debug")))  # device assertions exist only with debug
    generate(kernel, builder, [arg.type for arg in spec.args], dict(spec.constexprs))
    return _C.compile(builder, target, options)


def target_description(compiled: Any) -> dict[str, str]:
    """The triple, CPU and features the object was built for, as the LLVM IR states them ("host" where it does
    not)."""
    llvmir = compiled.asm.get("llvmir", "")

    def find(pattern: str) -> str:
        match = re.search(pattern, llvmir)
        return match.group(1) if match else "host"

    return {"backend": compiled.target.split(":")[0], "name": compiled.target, "options": compiled.options,
            "triple": find(r'target triple = "([^"]*)"'),
            "cpu": find(r'"target-cpu"="([^"]*)"'), "features": find(r'"target-features"="([^"]*)"')}


def metadata(kernel: JITFunction, spec: Specialization, launcher: Launcher, compiled: Any,
             options: argparse.Namespace) -> dict[str, Any]:
    return {
        "name": launcher.name,
        "kernel_name": kernel.__name__,
        "entry": launcher.entry,
        "signature": spec.entries,
        "arg_names": [arg.name for arg in spec.c_args],
        "arg_types": [arg.type for arg in spec.c_args],
        "constexprs": {name: value.name if isinstance(value, tl.dtype) else value
                       for name, value in spec.constexprs.items()},
        "grid": launcher.grid.entries,
        "num_warps": options.num_warps,
        "num_stages": options.num_stages,
        "num_ctas": options.num_ctas,
        "target": target_description(compiled),
        "tessel_version": __version__,
        "object_sha256": hashlib.sha256(compiled.object).hexdigest(),
    }


# ---------------------------------------------------------------------------------------------- C code generation

# The checked int64_t arithmetic of the grids, by operation (_GRID_OPERATORS): each function clears *ok where C's
# operator would overflow, divide by 0 or shift out of range (undefined behaviour all), and returns some value then.
# Launchers define those their grid uses (an unused static function would be warned about). The overflow builtins
# are GCC's and Clang's.
_GRID_C_FUNCTIONS = {
    "add": """static int64_t tessel_grid_add(int64_t a, int64_t b, int *ok) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    *ok = 0;
  return r;
}
""",
    "sub": """static int64_t tessel_grid_sub(int64_t a, int64_t b, int *ok) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r))
    *ok = 0;
  return r;
}
""",
    "mul": """static int64_t tessel_grid_mul(int64_t a, int64_t b, int *ok) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    *ok = 0;
  return r;
}
""",
    "div": """static int64_t tessel_grid_div(int64_t a, int64_t b, int *ok) {
  if (b == 0 || (a == INT64_MIN && b == -1)) {
    *ok = 0;
    return 0;
  }
  return a / b;
}
""",
    "mod": """static int64_t tessel_grid_mod(int64_t a, int64_t b, int *ok) {
  if (b == 0 || (a == INT64_MIN && b == -1)) {
    *ok = 0;
    return 0;
  }
  return a % b;
}
""",
    "floordiv": """/* Python's a // b: C's quotient, one less where C rounded a negative quotient up (toward 0). */
static int64_t tessel_grid_floordiv(int64_t a, int64_t b, int *ok) {
  if (b == 0 || (a == INT64_MIN && b == -1)) {
    *ok = 0;
    return 0;
  }
  return a / b - (a % b != 0 && (a < 0) != (b < 0));
}
""",
    "shl": """/* a * 2^b: C's << is undefined for a negative a and for a result out of range. */
static int64_t tessel_grid_shl(int64_t a, int64_t b, int *ok) {
  int64_t r = 0;
  if (b < 0 || b > 62 || __builtin_mul_overflow(a, (int64_t)1 << b, &r))
    *ok = 0;
  return r;
}
""",
    "shr": """/* Rounds toward minus infinity for a negative a too, as Python's >> does (C leaves that open). */
static int64_t tessel_grid_shr(int64_t a, int64_t b, int *ok) {
  if (b < 0) {
    *ok = 0;
    return 0;
  }
  if (b > 63)
    b = 63;
  return a < 0 ? ~(~a >> b) : a >> b;
}
""",
    "neg": """static int64_t tessel_grid_neg(int64_t a, int *ok) {
  if (a == INT64_MIN) {
    *ok = 0;
    return 0;
  }
  return -a;
}
""",
    "u64": """static int64_t tessel_grid_u64(uint64_t a, int *ok) {
  if (a > (uint64_t)INT64_MAX) {
    *ok = 0;
    return 0;
  }
  return (int64_t)a;
}
""",
}


def _grid_code(launcher: Launcher, refuse: str) -> tuple[str, str, str]:
    """The parts of a launch function that compute its grid: the definitions of the checked operations it uses, the
    statements that compute gx, gy and gz in int64_t and run `refuse` (statements) where that failed or a dimension
    is over its limit, and the three dimensions as int32_t arguments."""
    grid = launcher.grid
    functions = "".join("\n" + _GRID_C_FUNCTIONS[name] for name in grid.functions)
    constants = "".join(f"  const int64_t {name} = INT64_C({value});\n" for name, value in grid.constants.items())
    limits = grid_limits(launcher.backend, launcher.ctas, launcher.threads)
    over = " || ".join(f"{axis} > INT64_C({limit})" for axis, limit in zip(("gx", "gy", "gz"), limits))
    statements = f"""{constants}  int tessel_ok = 1;
  const int64_t gx = {grid.c[0]};
  const int64_t gy = {grid.c[1]};
  const int64_t gz = {grid.c[2]};
  /* Refused rather than truncated to int32_t. */
  if (!tessel_ok || {over}) {{
{refuse}  }}
"""
    # A dimension <= 0 is an empty grid, whatever int32_t would make of it.
    return functions, statements, ", ".join(f"{axis} > 0 ? (int32_t){axis} : 0" for axis in ("gx", "gy", "gz"))


# The part of every CPU launcher that does not depend on the kernel: running a grid through an entry.
_RUN_GRID_C = r"""
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

typedef void (*tessel_entry_fn)(void **argv, int64_t begin, int64_t end, int32_t gx, int32_t gy, int32_t gz);

#ifdef TESSEL_AOT_THREADS
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef TESSEL_AOT_MAX_THREADS
#define TESSEL_AOT_MAX_THREADS 64
#endif

/* One thread's share of a grid: a contiguous range of linear program ids. */
struct tessel_chunk {
  tessel_entry_fn entry;
  void **argv;
  int64_t begin, end;
  int32_t gx, gy, gz;
};

static void *tessel_run_chunk(void *arg) {
  const struct tessel_chunk *chunk = (const struct tessel_chunk *)arg;
  chunk->entry(chunk->argv, chunk->begin, chunk->end, chunk->gx, chunk->gy, chunk->gz);
  return NULL;
}

/* One thread per core, or TESSEL_NUM_THREADS as for the tessel runtime, at most TESSEL_AOT_MAX_THREADS. */
static int64_t tessel_num_threads(void) {
  const char *knob = getenv("TESSEL_NUM_THREADS");
  long n = knob && atol(knob) > 0 ? atol(knob) : sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n < TESSEL_AOT_MAX_THREADS ? n : TESSEL_AOT_MAX_THREADS;
}
#endif

/* What kernels call to print (tl.device_print) and to report a failed device assertion (tl.device_assert, compiled
 * with debug): in a Python process the tessel runtime's; here these, weak so that every launcher of a program may
 * define them. A line is printed at once and flushed; a failed assertion is reported on stderr and its program
 * returns (the others run). */
__attribute__((weak)) void tessel_cpu_print(const char *format, ...) {
  va_list args;
  va_start(args, format);
  vprintf(format, args);
  va_end(args);
  fflush(stdout);
}

__attribute__((weak)) void tessel_cpu_assert_fail(const char *message, const char *file, int32_t line,
                                                  const char *function, int32_t x, int32_t y, int32_t z,
                                                  int32_t gx, int32_t gy, int32_t rank, ...) {
  (void)gx;
  (void)gy;
  char index[256] = "";
  size_t used = 0;
  va_list args;
  va_start(args, rank);
  for (int32_t i = 0; i < rank && used < sizeof index; ++i)
    used += (size_t)snprintf(index + used, sizeof index - used, "%s%" PRId32, i ? ", " : "", va_arg(args, int32_t));
  va_end(args);
  fprintf(stderr, "%s:%" PRId32 ": %s: pid (%" PRId32 ", %" PRId32 ", %" PRId32 ") idx (%s): Assertion `%s` failed "
          "(device-side assertion)\n", file, line, function, x, y, z, index, message);
  fflush(stderr);
}

/* Why `launch` runs nothing: computing its grid went wrong (ok is 0) or a dimension is over the entry's int32_t. */
static void tessel_refuse_grid(const char *launch, const char *grid, int ok, int64_t gx, int64_t gy, int64_t gz) {
  if (ok)
    fprintf(stderr, "%s: the grid (%s) is (%" PRId64 ", %" PRId64 ", %" PRId64 ") programs, over the limit of "
            "2147483647 per dimension; nothing ran\n", launch, grid, gx, gy, gz);
  else
    fprintf(stderr, "%s: computing the grid (%s) overflows int64_t, divides by 0 or shifts out of range; nothing "
            "ran\n", launch, grid);
}

/* Runs every program of a gx x gy x gz grid; a grid with a dimension <= 0 has none. Returns 0, or -1 for a grid
 * of more programs than the int64_t ids number. */
static int tessel_run_grid(const char *launch, tessel_entry_fn entry, void **argv, int32_t gx, int32_t gy,
                           int32_t gz) {
  if (gx <= 0 || gy <= 0 || gz <= 0)
    return 0;
  int64_t total;
  /* gx * gy fits in int64_t; times gz it may not. */
  if (__builtin_mul_overflow((int64_t)gx * gy, (int64_t)gz, &total)) {
    fprintf(stderr, "%s: a grid of %" PRId32 " x %" PRId32 " x %" PRId32 " programs has more than 2^63 - 1 of "
            "them; nothing ran\n", launch, gx, gy, gz);
    return -1;
  }
#ifdef TESSEL_AOT_THREADS
  /* Programs are independent: each thread runs a contiguous chunk of ids, the calling thread the first one. */
  int64_t n = tessel_num_threads();
  if (n > total)
    n = total;
  int64_t size = total / n, extra = total % n;
  struct tessel_chunk chunks[TESSEL_AOT_MAX_THREADS];
  pthread_t threads[TESSEL_AOT_MAX_THREADS];
  int started[TESSEL_AOT_MAX_THREADS];
  for (int64_t i = 0; i < n; ++i) {
    chunks[i].entry = entry;
    chunks[i].argv = argv;
    /* The first `extra` chunks take one id more. */
    chunks[i].begin = i * size + (i < extra ? i : extra);
    chunks[i].end = chunks[i].begin + size + (i < extra ? 1 : 0);
    chunks[i].gx = gx;
    chunks[i].gy = gy;
    chunks[i].gz = gz;
    started[i] = i > 0 && pthread_create(&threads[i], NULL, tessel_run_chunk, &chunks[i]) == 0;
  }
  /* The first chunk, and any whose thread could not start, run here. */
  for (int64_t i = 0; i < n; ++i)
    if (!started[i])
      tessel_run_chunk(&chunks[i]);
  for (int64_t i = 1; i < n; ++i)
    if (started[i])
      pthread_join(threads[i], NULL);
#else
  entry(argv, 0, total, gx, gy, gz);
#endif
  return 0;
}
"""


def _c_parameters(args: Sequence[RuntimeArg]) -> str:
    return ", ".join(arg.c_declaration for arg in args) or "void"


def _c_grid_parameters(args: Sequence[RuntimeArg]) -> str:
    return ", ".join(["int32_t gx", "int32_t gy", "int32_t gz"] + [arg.c_declaration for arg in args])


def render_header(launcher: Launcher) -> str:
    if launcher.backend == "cuda":
        return render_cuda_header(launcher)
    if launcher.backend == "hip":
        return render_hip_header(launcher)
    guard = f"TESSEL_AOT_{launcher.name.upper()}_H"
    return f"""/* {launcher.description}
 * Generated by tessel.tools.compile (tessel {__version__}); do not edit. */
#ifndef {guard}
#define {guard}

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {{
#endif

/* Runs the kernel on the grid ({', '.join(launcher.grid.entries)}), computed in int64_t (none when a
 * dimension is <= 0). Returns 0, or -1 without running anything (and a line on stderr) when a dimension is over
 * 2147483647 or computing it overflows, divides by 0 or shifts out of range: the grid is never truncated. */
int {launcher.name}_launch({_c_parameters(launcher.args)});

/* Runs the kernel on a gx x gy x gz grid (none when a dimension is <= 0). Returns 0, or -1 without running
 * anything (and a line on stderr) for a grid of more than 2^63 - 1 programs. */
int {launcher.name}_launch_grid({_c_grid_parameters(launcher.args)});

#ifdef __cplusplus
}}
#endif

#endif /* {guard} */
"""


def render_source(launcher: Launcher) -> str:
    # A C array may not be empty: a kernel without run-time arguments passes one null pointer.
    argv = ", ".join(f"&{arg.name}" for arg in launcher.args) or "NULL"
    # The grid as the messages quote it: names, numbers and operators only (no quote, backslash or %).
    shown = ", ".join(launcher.grid.entries)
    functions, statements, grid = _grid_code(
        launcher, f'    tessel_refuse_grid("{launcher.name}_launch", "{shown}", tessel_ok, gx, gy, gz);\n'
                  "    return -1;\n")
    names = ", ".join([grid] + [arg.name for arg in launcher.args])
    return f"""/* {launcher.description}
 * Generated by tessel.tools.compile (tessel {__version__}); do not edit. */
#include "{launcher.name}.h"

#include <stddef.h>
{_RUN_GRID_C}{functions}
/* Defined in {launcher.name}.o: runs the programs with linear ids [begin, end) of a gx x gy x gz grid, program
 * (x, y, z) having the id x + gx * (y + gy * z); argv[i] points to the value of run-time argument i. */
void {launcher.entry}(void **argv, int64_t begin, int64_t end, int32_t gx, int32_t gy, int32_t gz);

int {launcher.name}_launch_grid({_c_grid_parameters(launcher.args)}) {{
  void *tessel_argv[] = {{{argv}}};
  return tessel_run_grid("{launcher.name}_launch_grid", {launcher.entry}, tessel_argv, gx, gy, gz);
}}

int {launcher.name}_launch({_c_parameters(launcher.args)}) {{
{statements}  return {launcher.name}_launch_grid({names});
}}
"""


def _cuda_parameters(args: Sequence[RuntimeArg]) -> str:
    return ", ".join(["CUstream stream"] + [arg.c_declaration for arg in args])


def _cuda_grid_parameters(args: Sequence[RuntimeArg]) -> str:
    return ", ".join(["CUstream stream", "int32_t gx", "int32_t gy", "int32_t gz"] +
                     [arg.c_declaration for arg in args])


def render_cuda_header(launcher: Launcher) -> str:
    guard = f"TESSEL_AOT_{launcher.name.upper()}_H"
    x, y, z = grid_limits(launcher.backend, launcher.ctas, launcher.threads)
    return f"""/* {launcher.description}
 * Generated by tessel.tools.compile (tessel {__version__}); do not edit. */
#ifndef {guard}
#define {guard}

#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {{
#endif

/* Launches the kernel on the grid ({', '.join(launcher.grid.entries)}), computed in int64_t, on `stream`
 * (pointer arguments are device addresses) in the current CUDA context; loads the module on first use. Returns the
 * driver's status, or CUDA_ERROR_INVALID_VALUE without launching when a dimension is over its limit ({x}, {y},
 * {z}) or computing it overflows, divides by 0 or shifts out of range: the grid is never truncated. */
CUresult {launcher.name}_launch({_cuda_parameters(launcher.args)});

/* Launches the kernel on a gx x gy x gz grid (nothing when a dimension is <= 0); CUDA_ERROR_INVALID_VALUE
 * without launching when a dimension is over its limit ({x}, {y}, {z}). */
CUresult {launcher.name}_launch_grid({_cuda_grid_parameters(launcher.args)});

#ifdef __cplusplus
}}
#endif

#endif /* {guard} */
"""


# A tensor map's element type and swizzle (the launch stage's names) as the driver's enumerators.
_TENSOR_MAP_TYPES = {"u8": "UINT8", "u16": "UINT16", "s32": "INT32", "s64": "INT64", "f16": "FLOAT16",
                     "bf16": "BFLOAT16", "f32": "FLOAT32", "f64": "FLOAT64"}
_TENSOR_MAP_BYTES = {"u8": 1, "u16": 2, "s32": 4, "s64": 8, "f16": 2, "bf16": 2, "f32": 4, "f64": 8}
_TENSOR_MAP_SWIZZLES = {"0": "NONE", "32": "32B", "64": "64B", "128": "128B"}


def _tensor_map_code(launcher: Launcher) -> tuple[str, list[str]]:
    """C statements that encode the kernel's tensor maps (cuTensorMapEncodeTiled) from its descriptors' arguments,
    as the JIT's launcher does, and the maps' names; the dimensions innermost first, strides in bytes."""
    code, names = [], []
    for i, line in enumerate(launcher.tensor_maps):
        arg, element, nan, box, swizzle = line.removeprefix("tensor_map=").split()
        first, box = int(arg), [int(size) for size in box.split("x")]
        rank, size = len(box), _TENSOR_MAP_BYTES[element]
        base = launcher.args[first].name
        shape = [launcher.args[first + 1 + d].name for d in range(rank)]
        strides = [launcher.args[first + 1 + rank + d].name for d in range(rank - 1)]
        dims = ", ".join(f"(cuuint64_t){name}" for name in reversed(shape))
        bytes_ = ", ".join(f"(cuuint64_t){name} * {size}" for name in reversed(strides)) or "0"
        boxes = ", ".join(str(size) for size in reversed(box))
        ones = ", ".join(["1"] * rank)
        fill = "NAN_REQUEST_ZERO_FMA" if nan == "1" else "NONE"
        names.append(f"tessel_map{i}")
        code.append(f"""  CUtensorMap tessel_map{i};
  {{
    const cuuint64_t dims[] = {{{dims}}}, strides[] = {{{bytes_}}};
    const cuuint32_t box[] = {{{boxes}}}, element_strides[] = {{{ones}}};
    status = cuTensorMapEncodeTiled(&tessel_map{i}, CU_TENSOR_MAP_DATA_TYPE_{_TENSOR_MAP_TYPES[element]}, {rank},
                                    (void *){base}, dims, strides, box, element_strides,
                                    CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_{_TENSOR_MAP_SWIZZLES[swizzle]},
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_{fill});
    if (status != CUDA_SUCCESS)
      return status;
  }}
""")
    return "".join(code), names


def render_cuda_source(launcher: Launcher) -> str:
    """The CUDA launcher: the kernel's image embedded, loaded with the driver API once per context's first use, and
    launched with cuLaunchKernel; nothing but libcuda is needed (link with -lcuda)."""
    image = launcher.image + (b"\0" if not launcher.image.startswith(b"\x7fELF") else b"")  # PTX is a C string
    rows = [", ".join(str(b) for b in image[i:i + 24]) for i in range(0, len(image), 24)]
    data = ",\n  ".join(rows)
    maps, map_names = _tensor_map_code(launcher)
    params = ", ".join(f"&{name}" for name in [arg.name for arg in launcher.args] + map_names) or "NULL"
    functions, statements, grid = _grid_code(launcher, "    return CUDA_ERROR_INVALID_VALUE;\n")
    x, y, z = grid_limits(launcher.backend, launcher.ctas, launcher.threads)
    names = ", ".join(["stream", grid] + [arg.name for arg in launcher.args])
    # A program of several CTAs is a cluster of them along x (the kernel's .reqnctapercluster).
    cluster = f" * {launcher.ctas}u" if launcher.ctas > 1 else ""
    return f"""/* {launcher.description}
 * Generated by tessel.tools.compile (tessel {__version__}); do not edit. */
#include "{launcher.name}.h"

#include <stddef.h>
{functions}
static const unsigned char tessel_image[] __attribute__((aligned(8))) = {{
  {data}
}};

static CUmodule tessel_module;
static CUfunction tessel_function;

/* The kernel's function, loaded into the current context on first use. */
static CUresult tessel_load(void) {{
  if (tessel_function)
    return CUDA_SUCCESS;
  CUresult status = cuModuleLoadData(&tessel_module, tessel_image);
  if (status != CUDA_SUCCESS)
    return status;
  status = cuModuleGetFunction(&tessel_function, tessel_module, "{launcher.entry}");
  if (status == CUDA_SUCCESS && {launcher.shared} > 48 * 1024)
    status = cuFuncSetAttribute(tessel_function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, {launcher.shared});
  if (status != CUDA_SUCCESS)
    tessel_function = NULL;
  return status;
}}

CUresult {launcher.name}_launch_grid({_cuda_grid_parameters(launcher.args)}) {{
  if (gx <= 0 || gy <= 0 || gz <= 0)
    return CUDA_SUCCESS;
  /* The driver's limits, checked here too: x times the CTAs of a program would wrap around. */
  if (gx > {x} || gy > {y} || gz > {z})
    return CUDA_ERROR_INVALID_VALUE;
  CUresult status = tessel_load();
  if (status != CUDA_SUCCESS)
    return status;
{maps}  void *tessel_params[] = {{{params}}};
  return cuLaunchKernel(tessel_function, (unsigned)gx{cluster}, (unsigned)gy, (unsigned)gz, {launcher.threads}, 1, 1,
                        {launcher.shared}, stream, tessel_params, NULL);
}}

CUresult {launcher.name}_launch({_cuda_parameters(launcher.args)}) {{
{statements}  return {launcher.name}_launch_grid({names});
}}
"""


def _hip_parameters(args: Sequence[RuntimeArg]) -> str:
    return ", ".join(["hipStream_t stream"] + [arg.c_declaration for arg in args])


def _hip_grid_parameters(args: Sequence[RuntimeArg]) -> str:
    return ", ".join(["hipStream_t stream", "int32_t gx", "int32_t gy", "int32_t gz"] +
                     [arg.c_declaration for arg in args])


def render_hip_header(launcher: Launcher) -> str:
    guard = f"TESSEL_AOT_{launcher.name.upper()}_H"
    x, y, z = grid_limits(launcher.backend, launcher.ctas, launcher.threads)
    return f"""/* {launcher.description}
 * Generated by tessel.tools.compile (tessel {__version__}); do not edit. */
#ifndef {guard}
#define {guard}

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#include <hip/hip_runtime_api.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {{
#endif

/* Launches the kernel on the grid ({', '.join(launcher.grid.entries)}), computed in int64_t, on `stream`
 * (pointer arguments are device addresses) on the current HIP device; loads the code object on first use. Returns
 * the runtime's status, or hipErrorInvalidValue without launching when a dimension is over its limit ({x}, {y},
 * {z}) or computing it overflows, divides by 0 or shifts out of range: the grid is never truncated. */
hipError_t {launcher.name}_launch({_hip_parameters(launcher.args)});

/* Launches the kernel on a gx x gy x gz grid (nothing when a dimension is <= 0); hipErrorInvalidValue without
 * launching when a dimension is over its limit ({x}, {y}, {z}). */
hipError_t {launcher.name}_launch_grid({_hip_grid_parameters(launcher.args)});

#ifdef __cplusplus
}}
#endif

#endif /* {guard} */
"""


def render_hip_source(launcher: Launcher) -> str:
    """The HIP launcher: the kernel's hsaco embedded, loaded with hipModuleLoadData on first use, and launched with
    hipModuleLaunchKernel; nothing but the HIP runtime is needed (link with -lamdhip64)."""
    rows = [", ".join(str(b) for b in launcher.image[i:i + 24]) for i in range(0, len(launcher.image), 24)]
    data = ",\n  ".join(rows)
    params = ", ".join(f"&{arg.name}" for arg in launcher.args) or "NULL"
    functions, statements, grid = _grid_code(launcher, "    return hipErrorInvalidValue;\n")
    x, y, z = grid_limits(launcher.backend, launcher.ctas, launcher.threads)
    names = ", ".join(["stream", grid] + [arg.name for arg in launcher.args])
    return f"""/* {launcher.description}
 * Generated by tessel.tools.compile (tessel {__version__}); do not edit. */
#include "{launcher.name}.h"

#include <stddef.h>
{functions}
static const unsigned char tessel_image[] __attribute__((aligned(8))) = {{
  {data}
}};

static hipModule_t tessel_module;
static hipFunction_t tessel_function;

/* The kernel's function, its code object loaded on the current device on first use. */
static hipError_t tessel_load(void) {{
  if (tessel_function)
    return hipSuccess;
  hipError_t status = hipModuleLoadData(&tessel_module, tessel_image);
  if (status != hipSuccess)
    return status;
  status = hipModuleGetFunction(&tessel_function, tessel_module, "{launcher.entry}");
  if (status != hipSuccess)
    tessel_function = NULL;
  return status;
}}

hipError_t {launcher.name}_launch_grid({_hip_grid_parameters(launcher.args)}) {{
  if (gx <= 0 || gy <= 0 || gz <= 0)
    return hipSuccess;
  /* The HSA dispatch packet counts a grid's work-items in 32 bits. */
  if (gx > {x} || gy > {y} || gz > {z})
    return hipErrorInvalidValue;
  hipError_t status = tessel_load();
  if (status != hipSuccess)
    return status;
  void *tessel_params[] = {{{params}}};
  return hipModuleLaunchKernel(tessel_function, (unsigned)gx, (unsigned)gy, (unsigned)gz, {launcher.threads}, 1, 1,
                               {launcher.shared}, stream, tessel_params, NULL);
}}

hipError_t {launcher.name}_launch({_hip_parameters(launcher.args)}) {{
{statements}  return {launcher.name}_launch_grid({names});
}}
"""


# The C launcher this tool writes, by backend.
_LAUNCHER_SOURCES = {"cpu": render_source, "cuda": render_cuda_source, "hip": render_hip_source}


def _description(kernel: JITFunction, spec: Specialization, options: argparse.Namespace) -> str:
    params = ", ".join(f"{name}: {entry}" if name not in spec.constexprs else f"{name}={entry}"
                       for name, entry in zip(kernel.arg_names, spec.entries))
    return (f"{kernel.__name__}({params}) from {pathlib.Path(options.path).name}, num_warps={options.num_warps}, "
            f"target {options.target}")


# ------------------------------------------------------------------------------------------------------- driver

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tessel.tools.compile", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", help="Python file defining the kernel (it is executed)")
    parser.add_argument("--kernel-name", "-n", required=True, help="name of the @tessel.jit function")
    parser.add_argument("--signature", "-s", required=True,
                        help="one entry per parameter: a type for a run-time one, a value for a constexpr one")
    parser.add_argument("--grid", "-g", required=True,
                        help="1 to 3 comma-separated integer expressions of the integer scalar arguments and "
                             "constexprs (/ and %% truncate toward 0 as in C, // is floor division)")
    parser.add_argument("--target", "-t", default="cpu",
                        help="cpu (the host CPU; the default), cpu:<model>, or cuda:80 / cuda:90a (a cubin and a "
                             "launcher that needs only the CUDA driver)")
    parser.add_argument("--num-warps", "-w", type=int, default=4, help="accepted as Triton does; no effect on CPU")
    parser.add_argument("--num-stages", "-ns", type=int, default=3, help="accepted as Triton does; no effect on CPU")
    parser.add_argument("--num-ctas", type=int, default=1,
                        help="CTAs per program, a thread block cluster (cuda:90a and newer); no effect on CPU")
    parser.add_argument("--debug", action="store_true",
                        help="compile device assertions (tl.device_assert), as @jit(debug=True) does; a failed one "
                             "is reported on stderr and its program returns")
    parser.add_argument("--out-name", "-on", help="name of the outputs and prefix of the C functions "
                                                  "(default: the kernel name)")
    parser.add_argument("--out-dir", "-o", type=pathlib.Path, default=pathlib.Path("."),
                        help="folder for the outputs (created if needed; default: the current one)")
    return parser


def run(options: argparse.Namespace) -> None:
    """Compiles as the options say and writes the outputs. Every check of the command line comes first, so that
    a wrong one writes nothing."""
    target = parse_target(options.target)
    name = options.out_name or options.kernel_name
    _check_c_name(name, "--out-name" if options.out_name else "--kernel-name")
    kernel = load_kernel(pathlib.Path(options.path), options.kernel_name)
    spec = parse_signature(kernel, options.signature)
    backend = target.split(":")[0]
    threads = 64 * options.num_warps if backend == "hip" else 1
    grid = parse_grid(options.grid, kernel, spec, grid_limits(backend, options.num_ctas, threads))
    compiled = compile_kernel(kernel, spec, name, target,
                              {"num_warps": options.num_warps, "num_stages": options.num_stages,
                               "num_ctas": options.num_ctas, "debug": options.debug})
    if backend == "cuda":
        lines = compiled.asm["launch"].splitlines()
        launch = dict(line.split("=", 1) for line in lines if line and not line.startswith("tensor_map="))
        binary = "cubin" if compiled.object.startswith(b"\x7fELF") else "ptx"
        maps = tuple(line for line in lines if line.startswith("tensor_map="))
        launcher = Launcher(name, compiled.name, spec.c_args, grid,
                            _description(kernel, spec, options), backend, compiled.object,
                            32 * int(launch["num_warps"]), int(launch["shared"]), int(launch["num_ctas"]), maps)
    elif backend == "hip":
        launch = dict(line.split("=", 1) for line in compiled.asm["launch"].splitlines() if "=" in line)
        binary = "hsaco"
        launcher = Launcher(name, compiled.name, spec.c_args, grid, _description(kernel, spec, options), backend,
                            compiled.object, 64 * int(launch["num_warps"]), int(launch["shared"]))
    else:
        binary = "o"
        launcher = Launcher(name, f"{compiled.name}_tessel_entry", spec.c_args, grid,
                            _description(kernel, spec, options))
    out = options.out_dir
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.{binary}").write_bytes(compiled.object)
    (out / f"{name}.json").write_text(json.dumps(metadata(kernel, spec, launcher, compiled, options), indent=2) + "\n")
    (out / f"{name}.h").write_text(render_header(launcher))
    (out / f"{name}.c").write_text(_LAUNCHER_SOURCES[target.split(":")[0]](launcher))


def main(argv: Sequence[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    try:
        run(options)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except (CompilationError, _C.CompileError, _C.BackendError) as e:
        print(f"error: {options.kernel_name} does not compile:\n{e}", file=sys.stderr)
        return EXIT_COMPILE_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())
