"""Debugging and extension ops on every target: tl.device_print / print(), tl.device_assert / assert, tl.static_print /
tl.static_assert, tl.inline_asm_elementwise and tl.extern_elementwise.

Printed lines are compared with lines this file formats itself in Triton's GPU format (checked against Triton 3.6's
own PTX run in the simulator below): `pid (x, y, z) idx (i, j)<prefix>(operand k) <value>`, every element once per
program. Lines of different programs (and, on GPUs, of different threads) come in no fixed order: they are compared
as sorted lists. Computed values are compared with numpy.
"""
import inspect
import json
import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import tessel as triton
import tessel.language as tl
from tessel import CompilationError, DeviceAssertionError

HERE = pathlib.Path(__file__).resolve().parent


# ----------------------------------------------------------------------------------------------------- the format

def _prefix(prefix: str, has_args: bool) -> str:
    """Triton's layout of a print prefix (language/semantic.py device_print)."""
    if has_args and not prefix.endswith(" "):
        prefix += " "
    if has_args and not prefix.endswith(": "):
        prefix = prefix[:-1] + ": "
    if len(prefix) > 2 and not prefix.startswith(" "):
        prefix = " " + prefix
    return prefix


def _value(v, hex=False, bits=32):
    if hex:
        return "0x%0*x" % (max(1, bits // 4), int(v) & ((1 << bits) - 1))
    if isinstance(v, (float, np.floating)):
        return "%f" % float(v)
    return str(int(v))


def _lines(pid, array, prefix, operand=None, hex=False, bits=32, scalar=False):
    """The lines printing `array` (a scalar when `scalar`) in program `pid` (x only)."""
    head = f"pid ({pid}, 0, 0)"
    tail = _prefix(prefix, True) + (f"(operand {operand}) " if operand is not None else "")
    if scalar:
        return [f"{head} idx (){tail}{_value(array, hex, bits)}"]
    array = np.asarray(array)
    widths = [math.ceil(math.log10(d)) if d > 0 else 0 for d in array.shape]
    out = []
    for index in np.ndindex(*array.shape):
        idx = ", ".join(f"{i:{w}d}" for i, w in zip(index, widths))
        out.append(f"{head} idx ({idx}){tail}{_value(array[index], hex, bits)}")
    return out


def _printed(capfd):
    return capfd.readouterr().out.splitlines()


def _line_of(fn, text):
    """The file line of the first source line of @jit function `fn` that contains `text`."""
    lines, first = inspect.getsourcelines(fn.fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


# ------------------------------------------------------------------------------------------------------- printing

@triton.jit
def _print_block(x_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.device_print("x", tl.load(x_ptr + offs))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
                                   np.float16, np.float32, np.float64, np.bool_])
def test_print_dtypes(capfd, rand, dtype):
    """Every element of each program, its value as C's printf writes it (%i / %u / %lli / %llu / %f)."""
    BLOCK = 16
    if dtype == np.bool_:
        x = rand(2 * BLOCK, np.int8, 0, 2).astype(np.bool_)
    elif np.dtype(dtype).kind == "u":
        x = rand(2 * BLOCK, dtype, 0, 200)
        x[0] = np.iinfo(dtype).max
    elif np.dtype(dtype).kind == "i":
        x = rand(2 * BLOCK, dtype, -100, 100)
        x[1] = np.iinfo(dtype).min
    else:
        x = rand(2 * BLOCK, dtype, -100, 100)
    _print_block[(2,)](x, BLOCK=BLOCK)
    expected = [line for p in range(2) for line in _lines(p, x[p * BLOCK:(p + 1) * BLOCK], "x")]
    assert sorted(_printed(capfd)) == sorted(expected)


@triton.jit
def _print_bf16(x_ptr, BLOCK: tl.constexpr):
    tl.device_print("b", tl.load(x_ptr + tl.arange(0, BLOCK)).to(tl.bfloat16))


def test_print_bf16(capfd):
    x = (np.arange(16, dtype=np.float32) - 8) * 0.375  # exact in bf16
    _print_bf16[(1,)](x, BLOCK=16)
    assert sorted(_printed(capfd)) == sorted(_lines(0, x, "b"))


@triton.jit
def _print_2d(x_ptr, y_ptr, s, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    print("x and friends", x, tl.load(y_ptr + tl.arange(0, N)), s)


@pytest.mark.parametrize("M,N", [(4, 8), (2, 16), (16, 1)])
def test_print_2d_several_operands(capfd, rand, M, N):
    """A 2-D block (each index as wide as the largest of its dimension), several operands ("(operand k) ") and a
    scalar ("idx ()"), print() being tl.device_print."""
    x = rand((M, N), np.int32, -1000, 1000)
    y = rand(N, np.float32)
    _print_2d[(1,)](x, y, 7, M, N)
    expected = _lines(0, x, "x and friends", 0) + _lines(0, y, "x and friends", 1) + \
        _lines(0, 7, "x and friends", 2, scalar=True)
    assert sorted(_printed(capfd)) == sorted(expected)


@triton.jit
def _print_hex(x_ptr, y_ptr, z_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.device_print("h", tl.load(x_ptr + offs), tl.load(y_ptr + offs), tl.load(z_ptr + offs), hex=True)


def test_print_hex(capfd, rand):
    """hex=True: each value's bits, as many hex digits as its width (floats too; narrow negative integers print
    their own bits, not those of the int they widen to)."""
    x = rand(8, np.int32, -(2**31), 2**31 - 1)
    y = rand(8, np.float16)
    z = rand(8, np.int64, -(2**62), 2**62)
    _print_hex[(1,)](x, y, z, BLOCK=8)
    expected = _lines(0, x, "h", 0, hex=True) + _lines(0, y.view(np.uint16), "h", 1, hex=True, bits=16) + \
        _lines(0, z, "h", 2, hex=True, bits=64)
    assert sorted(_printed(capfd)) == sorted(expected)


@triton.jit
def _print_prefixes(x, PREFIX: tl.constexpr):
    tl.device_print(PREFIX, x)
    print(PREFIX)


@pytest.mark.parametrize("prefix", ["x", "x:", "x: ", " x", "value of x", "a%d", ""])
def test_print_prefixes(capfd, prefix):
    """Triton's prefix layout (": " appended, a leading space), '%' printed as is, and a print of a prefix alone
    (`pid (x, y, z)<prefix>`)."""
    _print_prefixes[(1, 2, 1)](5, prefix)
    expected = []
    for y in range(2):
        expected.append(f"pid (0, {y}, 0) idx (){_prefix(prefix, True)}5")
        expected.append(f"pid (0, {y}, 0){_prefix(prefix, False)}")
    assert sorted(_printed(capfd)) == sorted(expected)


@triton.jit
def _print_in_control_flow(x_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    for i in range(n):
        if i % 2 == 1:
            print("odd", x + i)


def test_print_in_loops_and_ifs(capfd, rand):
    x = rand(4, np.int32)
    _print_in_control_flow[(1,)](x, 5, BLOCK=4)
    expected = [line for i in (1, 3) for line in _lines(0, x + i, "odd")]
    assert sorted(_printed(capfd)) == sorted(expected)


@pytest.mark.parametrize("num_warps", [1, 4, 8])
def test_each_element_prints_once(capfd, num_warps):
    """On GPUs a block smaller than the program's threads is held by several threads (and a scalar by all): each
    element still prints once, as on the CPU."""
    x = np.arange(8, dtype=np.int32) * 11
    _print_block[(3,)](x.repeat(3), BLOCK=8, num_warps=num_warps)
    lines = _printed(capfd)
    assert len(lines) == 24 and len(set(lines)) == 24
    assert sorted(lines) == sorted(line for p in range(3) for line in _lines(p, x.repeat(3)[8 * p:8 * p + 8], "x"))


def _sim_targets(*names):
    from tessel import _C
    return [t for t in names if "sim" in _C.available_backends()]


@triton.jit
def _print_and_store(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    print("x", x)
    tl.store(y_ptr + offs, x + 1)


@pytest.mark.parametrize("target", _sim_targets("sim:sm_90a"), indirect=True)
def test_print_on_thread_block_clusters(capfd, target):
    """A program of 2 CTAs (num_ctas=2, sm_90a): each element prints once (every CTA holds the printed blocks whole;
    the first prints)."""
    x = np.arange(64, dtype=np.int32)
    y = np.zeros_like(x)
    _print_and_store[(2,)](x, y, BLOCK=32, num_ctas=2)
    np.testing.assert_array_equal(y, x + 1)
    assert sorted(_printed(capfd)) == sorted(line for p in range(2) for line in _lines(p, x[32 * p:32 * p + 32], "x"))


def test_print_keeps_python_output_in_order(capfd):
    x = np.arange(4, dtype=np.int32)
    print("before")
    _print_block[(1,)](x, BLOCK=4)
    print("after")
    lines = _printed(capfd)
    assert lines[0] == "before" and lines[-1] == "after" and sorted(lines[1:-1]) == sorted(_lines(0, x, "x"))


@triton.jit
def _print_row_major(x_ptr, M: tl.constexpr, N: tl.constexpr):
    tl.device_print("x", tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]))


@pytest.mark.parametrize("target", ["cpu"], indirect=True)  # independent of the target: runs once
def test_cpu_prints_in_row_major_order(capfd, target, rand):
    """The CPU prints a program's elements in row-major order (a GPU's threads print in their own order)."""
    assert target == "cpu"
    x = rand((4, 8), np.int32)
    _print_row_major[(1,)](x, 4, 8)
    assert _printed(capfd) == _lines(0, x, "x")


def test_print_errors():
    @triton.jit
    def not_a_string(x):
        tl.device_print(x)

    @triton.jit
    def not_ascii(x):
        tl.device_print("é", x)

    with pytest.raises(CompilationError, match="is not string"):
        not_a_string[(1,)](1)
    with pytest.raises(CompilationError, match="prefix must be printable ASCII"):
        not_ascii[(1,)](1)


def test_static_print_and_static_assert(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(triton.knobs, "cache_dir", tmp_path)  # compiled here, not found on disk
    @triton.jit
    def kernel(x_ptr, BLOCK: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, BLOCK))
        tl.static_print("BLOCK =", BLOCK, x.dtype, sep=" ")
        tl.static_assert(BLOCK % 2 == 0, "BLOCK must be even")

    x = np.zeros(16, np.float32)
    kernel[(1,)](x, BLOCK=16)
    assert capsys.readouterr().out == "BLOCK = 16 fp32\n"  # while compiling, once
    kernel[(1,)](x, BLOCK=16)
    assert capsys.readouterr().out == ""
    with pytest.raises(CompilationError, match="static_assert failed: BLOCK must be even"):
        kernel[(1,)](x, BLOCK=1)


# ----------------------------------------------------------------------------------------------------- assertions

@triton.jit(debug=True)
def _assert_below(x_ptr, out_ptr, n, limit, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.device_assert(x < limit, "x is below the limit", mask=mask)
    tl.store(out_ptr + offs, x + 1, mask=mask)


def test_assert_that_holds(rand):
    x = rand(100, np.int32, -50, 50)
    out = np.zeros_like(x)
    _assert_below[(4,)](x, out, 100, 50, BLOCK=32)
    np.testing.assert_array_equal(out, x + 1)


def test_masked_off_elements_do_not_fail():
    x = np.arange(128, dtype=np.int32)  # past n = 70 the values would fail
    out = np.zeros_like(x)
    _assert_below[(4,)](x, out, 70, 70, BLOCK=32)
    np.testing.assert_array_equal(out[:70], x[:70] + 1)
    assert not out[70:].any()


def test_failed_assert_names_the_line_program_and_element(target):
    """A failed assertion raises DeviceAssertionError (an AssertionError) naming the kernel's file and line, the
    message and the lowest failing program; the CPU knows the element, GPU targets the thread."""
    x = np.zeros(128, dtype=np.int32)
    x[77] = 9  # program 2 (64..95), its element 13
    x[120] = 9  # program 3
    out = np.zeros_like(x)
    with pytest.raises(DeviceAssertionError) as info:
        _assert_below[(4,)](x, out, 128, 5, BLOCK=32)
    e = info.value
    assert isinstance(e, AssertionError)
    line = _line_of(_assert_below, "tl.device_assert")
    assert e.file == __file__ and e.line == line and e.message == "x is below the limit"
    assert e.kernel == "_assert_below" and e.pid == (2, 0, 0)
    assert f"{__file__}:{line}" in str(e) and "Assertion `x is below the limit` failed" in str(e)
    if target == "cpu":
        assert e.index == (13,) and e.thread is None
        assert "pid (2, 0, 0) idx (13)" in str(e)
        # The programs before the failing one ran; the failing one stopped at its assertion (no store).
        np.testing.assert_array_equal(out[:64], x[:64] + 1)
        assert not out[64:96].any()
    else:
        assert e.index is None and e.thread == "thread (13, 0, 0)"


def test_debug_off_compiles_asserts_away():
    @triton.jit
    def kernel(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        tl.device_assert(x < 0, "never holds")
        assert x > 100
        tl.store(x_ptr + offs, x * 2)

    x = np.arange(8, dtype=np.int32)
    k = kernel[(1,)](x, BLOCK=8)
    np.testing.assert_array_equal(x, np.arange(8) * 2)
    assert "tile.assert" not in k.asm["ttir"]
    with pytest.raises(DeviceAssertionError, match="never holds"):
        kernel[(1,)](x, BLOCK=8, debug=True)


@triton.jit
def _python_assert(x_ptr, n, BLOCK: tl.constexpr, MESSAGE: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    if MESSAGE:
        assert x < n, f"x < {BLOCK} fails"
    else:
        assert x < n


@pytest.mark.parametrize("message", [True, False])
def test_python_assert_on_a_tensor(message):
    """`assert cond[, msg]` on a tensor is a device assertion (its source is the message when it has none)."""
    x = np.arange(8, dtype=np.int32)
    _python_assert[(1,)](x, 8, 8, message, debug=True)
    with pytest.raises(DeviceAssertionError) as info:
        _python_assert[(1,)](x, 7, 8, message, debug=True)
    assert info.value.message == ("x < 8 fails" if message else "x < n")
    assert info.value.line == _line_of(_python_assert, "fails\"" if message else "assert x < n\n")


def test_compile_time_assert_stays_static():
    @triton.jit
    def kernel(BLOCK: tl.constexpr):
        assert BLOCK > 4, "BLOCK is too small"

    kernel[(1,)](8)
    with pytest.raises(CompilationError, match="BLOCK is too small"):
        kernel[(1,)](2)


@triton.jit
def _scalar_assert(n):
    tl.device_assert(n > 0, "n must be positive")


def test_scalar_assert_and_the_debug_knob(monkeypatch):
    """knobs.runtime.debug turns assertions on for launches that do not say; debug=False at launch turns them
    off again."""
    _scalar_assert[(1,)](-1)  # no debug
    monkeypatch.setattr(triton.knobs.runtime, "debug", True)
    _scalar_assert[(2,)](3)
    with pytest.raises(DeviceAssertionError, match="n must be positive") as info:
        _scalar_assert[(2,)](-1)
    assert info.value.pid == (0, 0, 0) and info.value.index in ((), None)
    _scalar_assert[(1,)](-1, debug=False)


def test_tessel_debug_environment_variable(tmp_path):
    script = tmp_path / "kernel.py"
    script.write_text(
        "import tessel as triton, tessel.language as tl\n"
        "@triton.jit\n"
        "def k(n):\n"
        "    tl.device_assert(n > 0, 'positive')\n"
        "try:\n"
        "    k[(1,)](-1)\n"
        "    print('no assertion')\n"
        "except triton.DeviceAssertionError as e:\n"
        "    print('assertion', e.line)\n")
    for name, expected in (("TESSEL_DEBUG", "assertion 4"), ("TRITON_DEBUG", "assertion 4"), (None, "no assertion")):
        env = {k: v for k, v in os.environ.items() if k not in ("TESSEL_DEBUG", "TRITON_DEBUG")}
        env["TESSEL_CACHE_DIR"] = str(tmp_path / "cache")
        if name:
            env[name] = "1"
        result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == expected


@pytest.mark.parametrize("target", ["cpu"], indirect=True)  # independent of the target: runs once
def test_moved_kernel_names_its_new_line(tmp_path):
    """The kernel cache keys a debug kernel by where it is too: the same source moved down a file recompiles, and its
    assertion names the new line."""
    script = tmp_path / "kernel.py"
    body = ("import tessel as triton, tessel.language as tl\n"
            "@triton.jit(debug=True)\n"
            "def k(n):\n"
            "    tl.device_assert(n > 0, 'positive')\n"
            "try:\n"
            "    k[(1,)](-1)\n"
            "except triton.DeviceAssertionError as e:\n"
            "    print(e.line)\n")
    env = dict(os.environ, TESSEL_CACHE_DIR=str(tmp_path / "cache"))
    for blank_lines in (0, 3):
        script.write_text("\n" * blank_lines + body)
        result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == str(4 + blank_lines)


def test_assert_condition_types():
    @triton.jit(debug=True)
    def kernel(x_ptr):
        tl.device_assert(tl.load(x_ptr))

    with pytest.raises(CompilationError, match="must be a boolean or an integer"):
        kernel[(1,)](np.zeros(1, np.float32))


@triton.jit
def _arith(x_ptr, y_ptr, out_ptr, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    if OP == "add":
        z = x + y
    elif OP == "sub":
        z = x - y
    else:
        z = x * y
    tl.store(out_ptr + offs, z)


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint16, np.uint32, np.int64])
def test_debug_checks_integer_overflow(op, dtype):
    """As in Triton, debug kernels assert that +, - and * on integers narrower than 64 bits do not overflow their
    type ("int32 overflow detected for operation mul"); without debug they wrap."""
    info = np.iinfo(dtype)
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op]
    x = np.array([3, 5, 7, 2], dtype)
    y = np.array([2, 1, 3, 2], dtype)
    out = np.zeros(4, dtype)
    _arith[(1,)](x, y, out, op, 4, debug=True)
    np.testing.assert_array_equal(out, fn(x, y))
    x[2] = {"add": info.max, "sub": info.min, "mul": info.max // 2 + 1}[op]
    with np.errstate(over="ignore"):
        wrapped = fn(x, y)
    _arith[(1,)](x, y, out, op, 4)
    np.testing.assert_array_equal(out, wrapped)
    if dtype == np.int64:
        _arith[(1,)](x, y, out, op, 4, debug=True)  # 64 bits: not checked
        np.testing.assert_array_equal(out, wrapped)
        return
    bits = info.bits
    with pytest.raises(DeviceAssertionError, match=f"int{bits} overflow detected for operation {op}") as e:
        _arith[(1,)](x, y, out, op, 4, debug=True)
    assert e.value.line == _line_of(_arith, {"add": "x + y", "sub": "x - y", "mul": "x * y"}[op])


@triton.jit
def _wrapping_mul(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    # Philox's multiplications wrap on purpose: Triton's random.py writes them so.
    tl.store(out_ptr + offs, tl.add(tl.mul(x, 0xD2511F53, sanitize_overflow=False), 1, sanitize_overflow=False))
    tl.store(out_ptr + BLOCK + offs, tl.sub(x, 1))


def test_sanitize_overflow_false():
    x = np.array([0xFFFFFFFF, 3, 0x80000000, 12345], np.uint32)
    out = np.zeros(8, np.uint32)
    _wrapping_mul[(1,)](x, out, 4, debug=True)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out[:4], x * np.uint32(0xD2511F53) + np.uint32(1))
    np.testing.assert_array_equal(out[4:], x - np.uint32(1))
    x[1] = 0
    with pytest.raises(DeviceAssertionError, match="int32 overflow detected for operation sub"):
        _wrapping_mul[(1,)](x, out, 4, debug=True)


# -------------------------------------------------------------------------------------------------- inline assembly

@triton.jit
def _rotate(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if not tl.target_info.is_hip():
        y = tl.inline_asm_elementwise("shf.l.wrap.b32 $0, $1, $1, 3;", "=r,r", [x], dtype=tl.uint32, is_pure=True,
                                      pack=1)
    else:  # AMDGCN: the high word of x:x shifted right by 29
        y = tl.inline_asm_elementwise("v_alignbit_b32 $0, $1, $1, 29", "=v,v", [x], dtype=tl.uint32, is_pure=True,
                                      pack=1)
    tl.store(y_ptr + offs, y)


def test_inline_asm(target, rand):
    x = rand(256, np.uint32, 0, 2**32 - 1)
    y = np.zeros_like(x)
    if target == "cpu":
        with pytest.raises(CompilationError, match="cpu target cannot run inline assembly") as info:
            _rotate[(1,)](x, y, BLOCK=256)
        assert info.value.line == _line_of(_rotate, "tl.inline_asm_elementwise")
        return
    _rotate[(1,)](x, y, BLOCK=256)
    np.testing.assert_array_equal(y, (x << np.uint32(3)) | (x >> np.uint32(29)))


@triton.jit
def _asm_packed(a_ptr, b_ptr, c_ptr, d_ptr, BLOCK: tl.constexpr):
    # Triton's documented example: four uint8 in one register, results two tensors.
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    if tl.target_info.is_hip():
        # The same in AMDGCN: the bytes of $8 extracted, converted and maxed (outputs early-clobber: $0-$7 are
        # written while $8-$12 are still read).
        (c, d) = tl.inline_asm_elementwise(
            asm="""
            v_bfe_u32 $0, $8, 0, 8
            v_bfe_u32 $1, $8, 8, 8
            v_bfe_u32 $2, $8, 16, 8
            v_lshrrev_b32 $3, 24, $8
            v_cvt_f32_i32 $4, $0
            v_cvt_f32_i32 $5, $1
            v_cvt_f32_i32 $6, $2
            v_cvt_f32_i32 $7, $3
            v_max_f32 $4, $4, $9
            v_max_f32 $5, $5, $10
            v_max_f32 $6, $6, $11
            v_max_f32 $7, $7, $12
            """,
            constraints="=&v,=&v,=&v,=&v,=&v,=&v,=&v,=&v,v,v,v,v,v",
            args=[a, b], dtype=(tl.int32, tl.float32), is_pure=True, pack=4)
        tl.store(c_ptr + offs, c)
        tl.store(d_ptr + offs, d)
        return
    (c, d) = tl.inline_asm_elementwise(
        asm="""
        {
            .reg .b8 tmp<4>;
            mov.b32 {tmp0, tmp1, tmp2, tmp3}, $8;
            cvt.u32.u8 $0, tmp0;
            cvt.u32.u8 $1, tmp1;
            cvt.u32.u8 $2, tmp2;
            cvt.u32.u8 $3, tmp3;
        }
        cvt.rn.f32.s32 $4, $0;
        cvt.rn.f32.s32 $5, $1;
        cvt.rn.f32.s32 $6, $2;
        cvt.rn.f32.s32 $7, $3;
        max.f32 $4, $4, $9;
        max.f32 $5, $5, $10;
        max.f32 $6, $6, $11;
        max.f32 $7, $7, $12;
        """,
        constraints=("=r,=r,=r,=r,=r,=r,=r,=r,"
                     "r,r,r,r,r"),
        args=[a, b], dtype=(tl.int32, tl.float32), is_pure=True, pack=4)
    tl.store(c_ptr + offs, c)
    tl.store(d_ptr + offs, d)


@pytest.mark.parametrize("BLOCK", [4, 128, 512])
def test_inline_asm_packed(target, rand, BLOCK):
    a = rand(BLOCK, np.uint8, 0, 256)
    b = rand(BLOCK, np.float32, -300, 300)
    c, d = np.zeros(BLOCK, np.int32), np.zeros(BLOCK, np.float32)
    if target == "cpu":
        with pytest.raises(CompilationError, match="cannot run inline assembly"):
            _asm_packed[(1,)](a, b, c, d, BLOCK=BLOCK)
        return
    _asm_packed[(1,)](a, b, c, d, BLOCK=BLOCK)
    np.testing.assert_array_equal(c, a.astype(np.int32))
    np.testing.assert_array_equal(d, np.maximum(a.astype(np.float32), b))


@triton.jit
def _asm_half2(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    if not tl.target_info.is_hip():
        z = tl.inline_asm_elementwise("add.rn.f16x2 $0, $1, $2;", "=r,r,r", [x, y], dtype=tl.float16,
                                      is_pure=True, pack=2)
    else:
        z = tl.inline_asm_elementwise("v_pk_add_f16 $0, $1, $2", "=v,v,v", [x, y], dtype=tl.float16,
                                      is_pure=True, pack=2)
    tl.store(out_ptr + offs, z)


def test_inline_asm_two_halves_per_register(target, rand):
    x, y = rand(128, np.float16), rand(128, np.float16)
    out = np.zeros_like(x)
    if target == "cpu":
        with pytest.raises(CompilationError, match="cannot run inline assembly"):
            _asm_half2[(1,)](x, y, out, BLOCK=128)
        return
    _asm_half2[(1,)](x, y, out, BLOCK=128)
    np.testing.assert_array_equal(out, x + y)


@triton.jit
def _asm_scalar(out_ptr, a, b):
    # A scalar asm with a side effect (not pure): kept and run once.
    if not tl.target_info.is_hip():
        s = tl.inline_asm_elementwise("mad.lo.s32 $0, $1, $2, 7;", "=r,r,r", [a, b], dtype=tl.int32,
                                      is_pure=False, pack=1)
    else:
        s = tl.inline_asm_elementwise("v_mul_lo_u32 $0, $1, $2\n v_add_u32 $0, 7, $0", "=&v,v,v", [a, b],
                                      dtype=tl.int32, is_pure=False, pack=1)
    tl.store(out_ptr, s)


def test_inline_asm_on_scalars(target):
    out = np.zeros(1, np.int32)
    if target == "cpu":
        with pytest.raises(CompilationError, match="cannot run inline assembly"):
            _asm_scalar[(1,)](out, 6, -5)
        return
    _asm_scalar[(1,)](out, 6, -5)
    assert out[0] == 6 * -5 + 7


def test_inline_asm_errors():
    @triton.jit
    def no_dtype(x_ptr):
        tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [tl.load(x_ptr)], dtype=(), is_pure=True, pack=1)

    with pytest.raises(CompilationError, match="needs at least one result type"):
        no_dtype[(1,)](np.zeros(1, np.int32))


# ------------------------------------------------------------------------------------------- external functions

def _libdevice(name, signatures):
    """A function written as Triton's libdevice writes them (tl.core.extern over tl.extern_elementwise)."""
    @tl.core.extern
    def fn(*args, _semantic=None):
        return tl.core.extern_elementwise("", "", list(args), signatures, is_pure=True, _semantic=_semantic)
    fn.__name__ = fn.__qualname__ = name
    return fn


F32, F64, I32, I64, U32 = tl.float32, tl.float64, tl.int32, tl.int64, tl.uint32
_FUNCTIONS = {
    # name: (libdevice signatures, numpy reference, argument dtypes, argument range, rtol)
    "exp": ({(F32,): ("__nv_expf", F32), (F64,): ("__nv_exp", F64)}, np.exp, (-20, 20)),
    "tan": ({(F32,): ("__nv_tanf", F32), (F64,): ("__nv_tan", F64)}, np.tan, (-1.5, 1.5)),
    "tanh": ({(F32,): ("__nv_tanhf", F32), (F64,): ("__nv_tanh", F64)}, np.tanh, (-5, 5)),
    "atan": ({(F32,): ("__nv_atanf", F32), (F64,): ("__nv_atan", F64)}, np.arctan, (-10, 10)),
    "asinh": ({(F32,): ("__nv_asinhf", F32), (F64,): ("__nv_asinh", F64)}, np.arcsinh, (-10, 10)),
    "log1p": ({(F32,): ("__nv_log1pf", F32), (F64,): ("__nv_log1p", F64)}, np.log1p, (-0.5, 10)),
    "expm1": ({(F32,): ("__nv_expm1f", F32), (F64,): ("__nv_expm1", F64)}, np.expm1, (-3, 3)),
    "cbrt": ({(F32,): ("__nv_cbrtf", F32), (F64,): ("__nv_cbrt", F64)}, np.cbrt, (-100, 100)),
    "erfc": ({(F32,): ("__nv_erfcf", F32), (F64,): ("__nv_erfc", F64)},
             np.vectorize(math.erfc), (-2, 2)),
    "sqrt": ({(F32,): ("__nv_sqrtf", F32), (F64,): ("__nv_sqrt", F64)}, np.sqrt, (0, 100)),
    "rint": ({(F32,): ("__nv_rintf", F32), (F64,): ("__nv_rint", F64)}, np.rint, (-10, 10)),
    "trunc": ({(F32,): ("__nv_truncf", F32), (F64,): ("__nv_trunc", F64)}, np.trunc, (-10, 10)),
    "atan2": ({(F32, F32): ("__nv_atan2f", F32), (F64, F64): ("__nv_atan2", F64)}, np.arctan2, (-10, 10)),
    "pow": ({(F32, F32): ("__nv_powf", F32), (F64, F64): ("__nv_pow", F64)}, np.power, (0.1, 4)),
    "hypot": ({(F32, F32): ("__nv_hypotf", F32), (F64, F64): ("__nv_hypot", F64)}, np.hypot, (-10, 10)),
    "fmod": ({(F32, F32): ("__nv_fmodf", F32), (F64, F64): ("__nv_fmod", F64)}, np.fmod, (1, 50)),
    "fmax": ({(F32, F32): ("__nv_fmaxf", F32), (F64, F64): ("__nv_fmax", F64)}, np.fmax, (-10, 10)),
    "copysign": ({(F32, F32): ("__nv_copysignf", F32), (F64, F64): ("__nv_copysign", F64)}, np.copysign, (-10, 10)),
    "fma": ({(F32, F32, F32): ("__nv_fmaf", F32), (F64, F64, F64): ("__nv_fma", F64)},
            lambda a, b, c: (a.astype(np.float64) * b + c).astype(a.dtype), (-10, 10)),
}


@triton.jit
def _call(FN: tl.constexpr, x_ptr, y_ptr, z_ptr, out_ptr, NARGS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if NARGS == 1:
        r = FN(x)
    elif NARGS == 2:
        r = FN(x, tl.load(y_ptr + offs))
    else:
        r = FN(x, tl.load(y_ptr + offs), tl.load(z_ptr + offs))
    tl.store(out_ptr + offs, r)


@pytest.mark.parametrize("name", sorted(_FUNCTIONS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_libdevice_float_functions(rand, name, dtype):
    signatures, reference, (low, high) = _FUNCTIONS[name]
    fn = _libdevice(name, signatures)
    nargs = len(next(iter(signatures)))
    args = [rand(128, dtype, low, high) for _ in range(3)]
    out = np.zeros(128, dtype)
    _call[(1,)](fn, *args, out, nargs, 128)
    expected = reference(*[a.astype(np.float64) for a in args[:nargs]]).astype(dtype)
    rtol = 2e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(out, expected, rtol=rtol, atol=rtol)


_INTEGER_FUNCTIONS = {
    "mulhi": ({(I32, I32): ("__nv_mulhi", I32)}, np.int32,
              lambda a, b: ((a.astype(np.int64) * b) >> 32).astype(np.int32)),
    "umulhi": ({(U32, U32): ("__nv_umulhi", U32)}, np.uint32,
               lambda a, b: ((a.astype(np.uint64) * b) >> np.uint64(32)).astype(np.uint32)),
    "mul64hi": ({(I64, I64): ("__nv_mul64hi", I64)}, np.int64,
                lambda a, b: np.array([(int(x) * int(y)) >> 64 for x, y in zip(a, b)], np.int64)),
    "popc": ({(I32,): ("__nv_popc", I32)}, np.int32,
             lambda a: np.array([bin(int(x) & 0xFFFFFFFF).count("1") for x in a], np.int32)),
    "clzll": ({(I64,): ("__nv_clzll", I32)}, np.int64,
              lambda a: np.array([64 - (int(x) & (2**64 - 1)).bit_length() for x in a], np.int32)),
    "ffs": ({(I32,): ("__nv_ffs", I32)}, np.int32,
            lambda a: np.array([((int(x) & -int(x)) & 0xFFFFFFFF).bit_length() for x in a], np.int32)),
    "brev": ({(I32,): ("__nv_brev", I32)}, np.int32,
             lambda a: np.array([int(f"{int(x) & 0xFFFFFFFF:032b}"[::-1], 2) for x in a], np.uint32).view(np.int32)),
    "umin": ({(U32, U32): ("__nv_umin", U32)}, np.uint32, np.minimum),
    "llmax": ({(I64, I64): ("__nv_llmax", I64)}, np.int64, np.maximum),
    "abs": ({(I32,): ("__nv_abs", I32)}, np.int32, np.abs),
}


@pytest.mark.parametrize("name", sorted(_INTEGER_FUNCTIONS))
def test_libdevice_integer_functions(rand, name):
    signatures, dtype, reference = _INTEGER_FUNCTIONS[name]
    fn = _libdevice(name, signatures)
    info = np.iinfo(dtype)
    args = [rand(128, dtype, info.min // 2, info.max // 2) for _ in range(3)]
    args[0][:4] = [0, 1, info.max, info.min + (1 if name == "abs" else 0)]
    result_type = next(iter(signatures.values()))[1]
    out = np.zeros(128, {tl.int32: np.int32, tl.uint32: np.uint32, tl.int64: np.int64}[result_type])
    nargs = len(next(iter(signatures)))
    _call[(1,)](fn, *args, out, nargs, 128)
    np.testing.assert_array_equal(out, reference(*args[:nargs]))


@triton.jit
def _convert(x_ptr, out_ptr, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, FN(tl.load(x_ptr + offs)))


@pytest.mark.parametrize("mode,rounding", [("rn", np.rint), ("rz", np.trunc), ("rd", np.floor), ("ru", np.ceil)])
def test_libdevice_float_to_int(mode, rounding):
    """float2int_r*: each rounding, saturating at the ends of int32, NaN to 0 (cvt's rules, libdevice's)."""
    # (A name of its own: the disk cache keys a non-@jit constexpr callable by its name.)
    fn = _libdevice(f"float2int_{mode}", {(F32,): (f"__nv_float2int_{mode}", I32)})
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.7, 2.7, 3e9, -3e9, np.inf, -np.inf, np.nan, 1e-30, -0.0, 7.0,
                  2147483520.0], np.float32)
    out = np.zeros(16, np.int32)
    _convert[(1,)](x, out, fn, 16)
    expected = np.where(np.isnan(x), 0, np.clip(rounding(np.nan_to_num(x.astype(np.float64))), -2**31, 2**31 - 1))
    np.testing.assert_array_equal(out, expected.astype(np.int32))


def test_libdevice_tests_and_bits(rand):
    isnan = _libdevice("isnan", {(F32,): ("__nv_isnanf", I32)})
    signbit = _libdevice("signbit", {(F64,): ("__nv_signbitd", I32)})
    as_int = _libdevice("as_int", {(F32,): ("__nv_float_as_int", I32)})
    x = np.array([1.0, np.nan, -np.nan, -0.0, 0.0, np.inf, -2.5, 1e-40], np.float32)
    out = np.zeros(8, np.int32)
    _convert[(1,)](x, out, isnan, 8)
    np.testing.assert_array_equal(out, np.isnan(x).astype(np.int32))
    _convert[(1,)](x.astype(np.float64), out, signbit, 8)
    np.testing.assert_array_equal(out, np.signbit(x).astype(np.int32))
    _convert[(1,)](x, out, as_int, 8)
    np.testing.assert_array_equal(out, x.view(np.int32))


@triton.jit
def _scalar_call(out_ptr, a, FN: tl.constexpr):
    # A scalar argument with a number: the number takes the dtype the signature wants (fp32 here).
    tl.store(out_ptr + tl.arange(0, 4), FN(a + tl.zeros([4], tl.float32), 2.0))


def test_libdevice_with_numbers():
    pow_ = _libdevice("pow", {(F32, F32): ("__nv_powf", F32), (F64, F64): ("__nv_pow", F64)})
    out = np.zeros(4, np.float32)
    _scalar_call[(1,)](out, 3.0, pow_)
    np.testing.assert_allclose(out, 9.0, rtol=1e-6)


def test_extern_errors():
    unknown = _libdevice("unknown", {(F32,): ("__nv_no_such_functionf", F32)})
    wrong_types = _libdevice("wrong", {(F32,): ("__nv_sin", F32)})  # __nv_sin takes a double
    only_f64 = _libdevice("only_f64", {(F64,): ("__nv_exp", F64)})

    @triton.jit
    def kernel(x_ptr, FN: tl.constexpr):
        x = tl.load(x_ptr)
        tl.store(x_ptr, FN(x))

    x = np.zeros(1, np.float32)
    with pytest.raises(CompilationError, match="no function '__nv_no_such_functionf'") as info:
        kernel[(1,)](x, unknown)
    assert info.value.line == _line_of(kernel, "FN(x)")
    with pytest.raises(CompilationError, match="__nv_sin .*(double|fp64)"):
        kernel[(1,)](x, wrong_types)
    with pytest.raises(CompilationError, match=r"input arg type does not match.*\(fp32\).*\(fp64\)"):
        kernel[(1,)](x, only_f64)


# -------------------------------------------------------------------------------- Triton's PTX in the simulator

def _triton_ptx(kernel, signature, constexprs, debug=False):
    request = json.dumps({"kernel": kernel, "signature": signature, "constexprs": constexprs, "num_warps": 4,
                          "debug": debug})
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    result = subprocess.run([sys.executable, str(HERE / "triton_ptx_kernels.py"), request], capture_output=True,
                            text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)["ptx"]


@triton.jit
def _print_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    # The same kernel as triton_ptx_kernels.print_kernel.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.device_print("x", x)
    tl.device_print("xy ", x, y, hex=True)
    tl.device_print("fp", y.to(tl.float32) * 0.25)


@pytest.mark.parametrize("target", ["cpu"], indirect=True)  # independent of the target: runs once
def test_triton_prints_the_same_lines(capfd, target):
    """Triton 3.6's own PTX of a printing kernel, run in Tessel's simulator (its vprintf: Triton's argument buffers),
    prints exactly the lines Tessel's kernel prints on this target (128 elements on 128 threads: no copies)."""
    from tessel import gpusim
    ptx = _triton_ptx("print_kernel", {"x_ptr": "*i32", "y_ptr": "*i16", "BLOCK": "constexpr"}, {"BLOCK": 128})
    x = np.arange(256, dtype=np.int32) * 7 - 900
    y = np.arange(256, dtype=np.int16) * 3  # non-negative: Triton widens narrow signed ints before printing hex
    gpusim.launch(ptx, "print_kernel", 2, num_warps=4, args=[x, y, None, None])
    triton_lines = _printed(capfd)
    # The same order whatever the simulator's worker threads: CTAs in grid order, threads as they ran.
    for threads in (1, 3):
        gpusim.launch(ptx, "print_kernel", 2, num_warps=4, args=[x, y, None, None], threads=threads)
        assert _printed(capfd) == triton_lines
    _print_kernel[(2,)](x, y, BLOCK=128)
    tessel_lines = _printed(capfd)
    assert len(triton_lines) == 1024
    assert sorted(triton_lines) == sorted(tessel_lines)


@pytest.mark.parametrize("target", ["cpu"], indirect=True)  # independent of the target: runs once
def test_triton_assert_fails_in_the_simulator(target):
    """Triton's __assertfail in the simulator: a SimulatorError in CUDA's words, at the failing block and thread."""
    from tessel import gpusim
    ptx = _triton_ptx("assert_kernel", {"x_ptr": "*i32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 128},
                      debug=True)
    x = np.arange(256, dtype=np.int32)
    gpusim.launch(ptx, "assert_kernel", 2, num_warps=4, args=[x, 1000, None, None])
    np.testing.assert_array_equal(x, np.arange(256) + 1)
    with pytest.raises(gpusim.SimulatorError, match=r"block: \[1,0,0\], thread: \[4,0,0\] Assertion `x below n` "
                                                    r"failed"):
        gpusim.launch(ptx, "assert_kernel", 2, num_warps=4, args=[np.arange(256, dtype=np.int32), 132, None, None])


# -------------------------------------------------------------------- the simulator's CUDA system calls, by hand

_PRINTF_PTX = """
.version 8.4
.target sm_80
.address_size 64
.extern .func (.param .b32 func_retval0) vprintf (.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
.global .align 1 .b8 fmt[FMTLEN] = {FMT};
.global .align 1 .b8 word[6] = {119, 111, 114, 108, 100, 0};
.visible .entry k(.param .u64 out)
{
 .local .align 8 .b8 depot[40];
 .reg .b32 %r<8>;
 .reg .b64 %rd<8>;
 .reg .f64 %fd1;
 mov.u32 %r1, %tid.x;
 mov.u64 %rd1, depot;
 cvta.local.u64 %rd2, %rd1;
 st.local.u32 [depot], %r1;
 neg.s32 %r2, %r1;
 st.local.u32 [depot+4], %r2;
 cvt.u64.u32 %rd3, %r1;
 shl.b64 %rd3, %rd3, 40;
 st.local.u64 [depot+8], %rd3;
 cvt.rn.f64.u32 %fd1, %r1;
 mul.f64 %fd1, %fd1, 0d3FF8000000000000;
 st.local.f64 [depot+16], %fd1;
 mov.u64 %rd4, word;
 cvta.global.u64 %rd5, %rd4;
 st.local.u64 [depot+24], %rd5;
 add.s32 %r3, %r1, 65;
 st.local.u32 [depot+32], %r3;
 mov.u64 %rd6, fmt;
 cvta.global.u64 %rd7, %rd6;
 {
 .param .b64 param0;
 st.param.b64 [param0], %rd7;
 .param .b64 param1;
 st.param.b64 [param1], %rd2;
 .param .b32 retval0;
 call.uni (retval0), vprintf, (param0, param1);
 ld.param.b32 %r4, [retval0];
 }
 ld.param.u64 %rd1, [out];
 mul.wide.u32 %rd3, %r1, 4;
 add.s64 %rd1, %rd1, %rd3;
 st.global.u32 [%rd1], %r4;
 ret;
}
"""


@pytest.mark.parametrize("target", ["cpu"], indirect=True)  # independent of the target: runs once
def test_simulator_vprintf(capfd, target):
    """vprintf in the simulator as CUDA lays out its arguments (each at a multiple of its size): C's conversions,
    flags, widths and lengths, a string argument; each lane's line in lane order; it returns the argument count."""
    from tessel import gpusim
    fmt = "t=%u n=%+5d big=%llx f=%.2f s=%-6s| c=%c %%\n"
    data = fmt.encode() + b"\0"
    ptx = _PRINTF_PTX.replace("FMTLEN", str(len(data))).replace("{FMT}", "{" + ", ".join(map(str, data)) + "}")
    out = np.zeros(40, np.int32)
    gpusim.launch(ptx, "k", 1, block=(40, 1, 1), args=[out])
    python_fmt = fmt.replace("\n", "").replace("%llx", "%x")  # Python's % has no length modifiers
    expected = [python_fmt % (t, -t, t << 40, t * 1.5, "world", chr(65 + t)) for t in range(40)]
    assert _printed(capfd) == expected  # warp 0's lanes, then warp 1's
    np.testing.assert_array_equal(out, 6)


@pytest.mark.parametrize("target", ["cpu"], indirect=True)  # independent of the target: runs once
def test_simulator_bfind_and_trap(target):
    """bfind (libdevice's ffs and friends use it) against its definition, and trap as a launch error."""
    from tessel import gpusim
    ptx = """
.version 8.4
.target sm_80
.address_size 64
.visible .entry k(.param .u64 x, .param .u64 out, .param .u32 stop)
{
 .reg .pred %p;
 .reg .b32 %r<8>;
 .reg .b64 %rd<8>;
 ld.param.u32 %r7, [stop];
 setp.ne.u32 %p, %r7, 0;
 @%p trap;
 mov.u32 %r1, %tid.x;
 ld.param.u64 %rd1, [x];
 mul.wide.u32 %rd2, %r1, 4;
 add.s64 %rd1, %rd1, %rd2;
 ld.global.u32 %r2, [%rd1];
 bfind.u32 %r3, %r2;
 bfind.s32 %r4, %r2;
 bfind.shiftamt.u32 %r5, %r2;
 ld.param.u64 %rd3, [out];
 mul.wide.u32 %rd4, %r1, 12;
 add.s64 %rd3, %rd3, %rd4;
 st.global.u32 [%rd3], %r3;
 st.global.u32 [%rd3+4], %r4;
 st.global.u32 [%rd3+8], %r5;
 ret;
}
"""
    x = np.array([0, 1, 2, 3, 0x80000000, 0xFFFFFFFF, 0x7FFFFFFF, 0xFFFF0000] * 4, np.uint32)
    out = np.zeros((32, 3), np.uint32)
    gpusim.launch(ptx, "k", 1, num_warps=1, args=[x, out, 0])

    def msb(v):
        return 0xFFFFFFFF if v == 0 else v.bit_length() - 1
    signed = [int(v) - (1 << 32) if v >> 31 else int(v) for v in x]
    np.testing.assert_array_equal(out[:, 0], [msb(int(v)) for v in x])
    np.testing.assert_array_equal(out[:, 1], [msb(~v & 0xFFFFFFFF if v < 0 else v) for v in signed])
    np.testing.assert_array_equal(out[:, 2], [0xFFFFFFFF if v == 0 else 31 - msb(int(v)) for v in x])
    with pytest.raises(gpusim.SimulatorError, match="trap: the thread stopped the kernel"):
        gpusim.launch(ptx, "k", 1, num_warps=1, args=[x, out, 1])


# ------------------------------------------------------------------------------------- ahead of time (the C tool)

_AOT_KERNELS = """
import tessel
import tessel.language as tl


@tessel.jit
def checked_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.device_assert(x >= 0, "x is not negative", mask=offs < n)
    print("x", x)
    tl.store(out_ptr + offs, x, mask=offs < n)
"""


@pytest.mark.parametrize("target", ["cpu"], indirect=True)  # independent of the target: runs once
def test_ahead_of_time_prints_and_asserts(target, tmp_path):
    """A C program linking a kernel compiled by the tool (--debug): the launcher's C file provides what the kernel
    calls to print (lines on stdout) and to report a failed assertion (stderr; its program returns)."""
    from test_aot import CC, run_tool
    if CC is None:
        pytest.skip("no C compiler (gcc, cc or clang) on PATH")
    kernels = tmp_path / "debug_kernels.py"
    kernels.write_text(_AOT_KERNELS)
    run_tool(kernels, tmp_path, "checked_copy", "*i32, *i32, i32, 4", "(n + 3) / 4", "--debug")
    (tmp_path / "main.c").write_text("""
#include <stdio.h>
#include "checked_copy.h"

int main(void) {
  int32_t x[6] = {5, 6, 7, 8, -1, 9}, out[6] = {0};
  checked_copy_launch(x, out, 6);
  for (int i = 0; i < 6; ++i) printf("%d ", out[i]);
  printf("\\n");
  return 0;
}
""")
    subprocess.run([CC, "-O1", "-Wall", "-Werror", "main.c", "checked_copy.c", "checked_copy.o", "-lm", "-o", "prog"],
                   cwd=tmp_path, check=True, capture_output=True, text=True)
    result = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True, check=True)
    lines = result.stdout.splitlines()
    # Program 0 prints and copies; program 1 fails at its element 0 (x[4] = -1) and returns.
    assert sorted(lines[:-1]) == sorted(_lines(0, np.array([5, 6, 7, 8]), "x"))
    assert lines[-1].split() == ["5", "6", "7", "8", "0", "0"]
    line = 1 + _AOT_KERNELS.splitlines().index("    tl.device_assert(x >= 0, \"x is not negative\", mask=offs < n)")
    assert result.stderr == (f"{kernels}:{line}: checked_copy: pid (1, 0, 0) idx (0): Assertion `x is not negative` "
                             "failed (device-side assertion)\n")


# ------------------------------------------------------------------------ the CUDA launcher (through a fake driver)

@pytest.mark.parametrize("target", ["cpu"], indirect=True)  # independent of the target: runs once
def test_cuda_launcher_prints_and_raises_device_assertions(target, tmp_path):
    """cuda:80 through test/FakeCuda (the launcher's real path, the PTX run in the simulator): a printing kernel's
    lines come out when the launch returns; a failed assertion (CUDA_ERROR_ASSERT at the synchronization) raises
    DeviceAssertionError, the GPU having printed the assertion on stderr; the context is unusable afterwards."""
    fake = pathlib.Path(os.environ.get("TESSEL_BUILD_DIR", HERE.parents[1] / "build")) / "lib" / \
        "libtessel-fake-cuda.so"
    assert fake.exists(), f"{fake} is missing: build the project"
    env = dict(os.environ, TESSEL_LIBCUDA_PATH=str(fake), TESSEL_TARGET="cuda:80",
               TESSEL_CACHE_DIR=str(tmp_path / "cache"), TESSEL_PTXAS_PATH=str(tmp_path / "no-ptxas"))
    result = subprocess.run([sys.executable, __file__, "cuda"], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "before" and lines[-1] == "ok"
    assert sorted(lines[1:5]) == sorted(_lines(0, np.array([3, 4, 5, 6]), "x")) and lines[5] == "after"
    assert "Assertion `x is below the limit` failed" in result.stderr


def _cuda_scenario():
    sys.path.insert(0, str(HERE))
    from test_cuda_launcher import DeviceArray, _Driver
    driver = _Driver()
    x = DeviceArray(driver, np.array([3, 4, 5, 6], np.int32))
    print("before", flush=True)
    _print_block[(1,)](x, BLOCK=4)
    print("after", flush=True)
    out = DeviceArray(driver, np.zeros(4, np.int32))
    _assert_below[(1,)](x, out, 4, 10, BLOCK=4)
    np.testing.assert_array_equal(out.numpy(), [4, 5, 6, 7])
    try:
        _assert_below[(1,)](x, out, 4, 5, BLOCK=4)
        raise AssertionError("no DeviceAssertionError")
    except DeviceAssertionError as e:
        assert "CUDA_ERROR_ASSERT" in str(e) and e.kernel == "_assert_below", e
    try:  # as on a GPU: the context is lost
        _assert_below[(1,)](x, out, 4, 10, BLOCK=4)
        raise AssertionError("the context survived")
    except DeviceAssertionError:
        pass
    print("ok")


if __name__ == "__main__":
    if sys.argv[1] == "cuda":
        _cuda_scenario()
