"""What GPUs need, kept in the IR: tl.multiple_of / max_contiguous / max_constancy hints, tl.assume, load/store
cache and eviction modifiers, volatile loads, dot's input_precision and max_num_imprecise_acc.

Each kernel runs against numpy (hints and modifiers never change values), its tile IR must carry what the kernel
said, and the CPU's LLVM dialect must show what the CPU makes of it (alignment, volatile, llvm.intr.assume). A bad
value is a CompilationError naming it, as Triton 3.6 rejects it.
"""
import re

import numpy as np
import pytest

import tessel as triton
import tessel.language as tl

from test_dot import tf32


@triton.jit
def _hinted_copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    start = tl.multiple_of(pid * BLOCK, BLOCK)
    offs = tl.max_contiguous(tl.multiple_of(start + tl.arange(0, BLOCK), BLOCK), BLOCK)
    tl.assume(n % 16 == 0)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, cache_modifier=".cg", eviction_policy="evict_last")
    tl.store(y_ptr + offs, x * 2, mask=mask, cache_modifier=".cs", eviction_policy="evict_first")


def test_hints_and_modifiers_keep_values_and_reach_the_ir():
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    x = x[:992]  # a multiple of 16, as the kernel assumes
    y = np.zeros_like(x)
    k = _hinted_copy_kernel[(triton.cdiv(x.size, 64),)](x, y, x.size, BLOCK=64)
    np.testing.assert_array_equal(y, x * 2)
    ttir = k.asm["ttir"]
    assert "arith.muli %0, %c64_i32 {tile.divisibility = array<i32: 64>} : i32" in ttir
    assert re.search(r"arith\.addi .*\{tile\.contiguity = array<i32: 64>, tile\.divisibility = array<i32: 64>\}", ttir)
    assert "cache = cg evict = evict_last" in ttir
    assert "cache = cs evict = evict_first" in ttir
    assert "tile.assume" in ttir
    assert "llvm.intr.assume" in k.asm["llir"]


@triton.jit
def _strided_kernel(x_ptr, out_ptr, s_ptr, BLOCK: tl.constexpr):
    # Every fourth float from a 16-byte aligned array: each element 16-byte aligned.
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs * 4)
    # A scalar read through an aligned argument.
    s = tl.load(s_ptr, volatile=True)
    tl.store(out_ptr + offs, x + s)


def test_cpu_alignment_and_volatile(monkeypatch):
    monkeypatch.setattr(triton.knobs, "target", "cpu")  # what the CPU's LLVM dialect shows
    x = np.arange(256, dtype=np.float32)
    s = np.array([0.5], dtype=np.float32)
    out = np.zeros(64, dtype=np.float32)
    k = _strided_kernel[(1,)](x, out, s, BLOCK=64)
    np.testing.assert_array_equal(out, x[::4] + 0.5)
    llir = k.asm["llir"]
    # The argument arrays are 16-byte aligned (numpy allocates them so), which the launcher marks.
    assert "tile.divisibility = 16" in k.asm["ttir"]
    loads = re.findall(r"llvm\.load (volatile )?%\S+ \{alignment = (\d+) : i64\} : !llvm\.ptr -> f32", llir)
    assert ("volatile ", "16") in loads, loads  # the scalar: volatile, 16-byte aligned
    assert ("", "16") in loads, loads  # the strided block
    # Consecutive stores are only element-aligned.
    assert re.search(r"llvm\.store %\S+, %\S+ \{alignment = 4 : i64\} : f32", llir)


@triton.jit
def _hint_on_argument_kernel(x_ptr, n, BLOCK: tl.constexpr):
    n = tl.multiple_of(n, 8)
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


def test_hint_on_a_kernel_argument_becomes_its_divisibility():
    x = np.zeros(32, dtype=np.int32)
    k = _hint_on_argument_kernel[(1,)](x, 24, BLOCK=32)  # 24 is not a multiple of 16: no launcher mark
    np.testing.assert_array_equal(x, (np.arange(32) < 24).astype(np.int32))
    signature = k.asm["ttir"].split("func.func", 1)[1].split("\n", 1)[0]
    assert re.search(r"%arg1: i32 \{tile\.divisibility = 8 : i32\}", signature), signature


@triton.jit
def _dot_kernel(a_ptr, b_ptr, c_ptr, PRECISION: tl.constexpr, IMPRECISE: tl.constexpr):
    i = tl.arange(0, 16)
    a = tl.load(a_ptr + i[:, None] * 16 + i[None, :])
    b = tl.load(b_ptr + i[:, None] * 16 + i[None, :])
    c = tl.dot(a, b, input_precision=PRECISION, max_num_imprecise_acc=IMPRECISE)
    tl.store(c_ptr + i[:, None] * 16 + i[None, :], c)


@triton.jit
def _dot_allow_tf32_kernel(a_ptr, b_ptr, c_ptr, ALLOW: tl.constexpr):
    i = tl.arange(0, 16)
    a = tl.load(a_ptr + i[:, None] * 16 + i[None, :])
    b = tl.load(b_ptr + i[:, None] * 16 + i[None, :])
    tl.store(c_ptr + i[:, None] * 16 + i[None, :], tl.dot(a, b, allow_tf32=ALLOW))


@pytest.mark.parametrize("precision", ["tf32", "TF32x3", "ieee", "bf16x3", "bf16x6"])
def test_dot_input_precision_is_kept_and_computed(precision, target):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 16, 16)).astype(np.float32)
    c = np.zeros((16, 16), np.float32)
    k = _dot_kernel[(1,)](a, b, c, PRECISION=precision, IMPRECISE=0)
    # The CPU multiplies in full fp32 whatever the mode; NVIDIA GPUs multiply the inputs rounded to tf32 (10
    # mantissa bits, to nearest, ties away from zero) for "tf32", three tf32 parts for "tf32x3" (as close as fp32),
    # and exactly for the others. tf32 loses ~3 decimal digits.
    if precision == "tf32" and target.startswith(("sim:sm", "cuda:")):
        a, b = tf32(a), tf32(b)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)
    assert f"input_precision = {precision.lower()} max_num_imprecise_acc = 0" in k.asm["ttir"]


@pytest.mark.parametrize("allow, expected", [(True, "tf32"), (False, "ieee")])
def test_dot_allow_tf32_maps_to_input_precision(allow, expected):
    a = np.eye(16, dtype=np.float32)
    c = np.zeros((16, 16), np.float32)
    k = _dot_allow_tf32_kernel[(1,)](a, a, c, ALLOW=allow)
    np.testing.assert_array_equal(c, a)
    assert f"input_precision = {expected} :" in k.asm["ttir"]


# ----------------------------------------------------------------------------------------------------------- errors


@triton.jit
def _bad_load_cache_kernel(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr, cache_modifier=".wb"))


@triton.jit
def _bad_store_cache_kernel(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr), cache_modifier=".ca")


@triton.jit
def _bad_eviction_kernel(x_ptr):
    # Triton 3.6 names the default by leaving the policy empty, not "evict_normal".
    tl.store(x_ptr, tl.load(x_ptr, eviction_policy="evict_normal"))


@triton.jit
def _bad_precision_kernel(x_ptr):
    i = tl.arange(0, 16)
    a = tl.load(x_ptr + i[:, None] * 16 + i[None, :])
    tl.store(x_ptr + i[:, None] * 16 + i[None, :], tl.dot(a, a, input_precision="tf64"))


@triton.jit
def _both_precisions_kernel(x_ptr):
    i = tl.arange(0, 16)
    a = tl.load(x_ptr + i[:, None] * 16 + i[None, :])
    tl.store(x_ptr + i[:, None] * 16 + i[None, :], tl.dot(a, a, input_precision="ieee", allow_tf32=True))


@triton.jit
def _negative_imprecise_kernel(x_ptr):
    i = tl.arange(0, 16)
    a = tl.load(x_ptr + i[:, None] * 16 + i[None, :])
    tl.store(x_ptr + i[:, None] * 16 + i[None, :], tl.dot(a, a, max_num_imprecise_acc=-1))


@triton.jit
def _hint_count_kernel(x_ptr):
    i = tl.arange(0, 16)
    offs = tl.multiple_of(i[:, None] * 16 + i[None, :], 16)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs))


@triton.jit
def _hint_zero_kernel(x_ptr):
    offs = tl.max_contiguous(tl.arange(0, 16), 0)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs))


@triton.jit
def _assume_block_kernel(x_ptr):
    offs = tl.arange(0, 16)
    tl.assume(offs < 16)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs))


ERRORS = {
    "load-cache": (_bad_load_cache_kernel, "cache modifier '.wb' is not supported; loads take '.ca', '.cg' or '.cv'"),
    "store-cache": (_bad_store_cache_kernel,
                    "cache modifier '.ca' is not supported; stores take '.wb', '.cg', '.cs' or '.wt'"),
    "eviction": (_bad_eviction_kernel, "eviction policy 'evict_normal' is not supported"),
    "precision": (_bad_precision_kernel, "input_precision 'tf64' is not supported"),
    "both-precisions": (_both_precisions_kernel, "give only one of input_precision and allow_tf32"),
    "imprecise": (_negative_imprecise_kernel, "max_num_imprecise_acc must be a non-negative 32-bit integer, got -1"),
    "hint-count": (_hint_count_kernel, "tl.multiple_of(): 1 value(s) for i32[16, 16], expected 2"),
    "hint-zero": (_hint_zero_kernel, "tl.max_contiguous(): the value 0 must be a positive 32-bit integer"),
    "assume-block": (_assume_block_kernel, "assume: the condition must be a scalar, got i1[16]"),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_bad_values_are_compile_errors_naming_them(case):
    kernel, text = ERRORS[case]
    with pytest.raises(triton.CompilationError) as excinfo:
        kernel[(1,)](np.zeros(256, np.float32))
    assert text in str(excinfo.value), str(excinfo.value)
