"""tl.atomic_add/and/or/xor/max/min/xchg/cas (and the tensor methods) on every target, against numpy.

Within one program the order of atomics is the program's, so their old values are checked against a sequential
numpy model (two atomics on the same elements: the second returns what the first left). Where programs race, the
checks are properties that hold in any order: exact integer sums, old values of `atomic_add(counter, 1)` being a
permutation, a spin lock (tl.atomic_cas, the layer-norm-backward pattern) losing no update. The CPU runs its programs
on threads, so its races are real; the simulator's races run fewer programs (it is slow).

Float max/min follow Triton's integer implementation (sign-magnitude order: -NaN < -inf < -0.0 < +0.0 < +inf < +NaN),
checked against Triton's interpreter and against a numpy model of that order.
"""
import inspect
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import tessel as triton
import tessel.language as tl

OPS = ["add", "and", "or", "xor", "max", "min", "xchg"]
# Triton's element types: 32- and 64-bit integers and floats for every op, fp16/bf16 for add only.
WIDE = ["int32", "uint32", "int64", "uint64", "float32", "float64"]
CASES = [(op, dt) for op in OPS for dt in WIDE] + [("add", "float16"), ("add", "bfloat16")]

UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _is_sim(target):
    return target.startswith("sim")


# ----------------------------------------------------------------------------------------------------- numpy model


def _bits(a):
    a = np.asarray(a)
    return a.view(UINT[a.dtype.itemsize])


def _order_key(a):
    """Triton's order of floats for atomic max/min, as unsigned integers: by sign, then by magnitude bits."""
    u = _bits(a)
    width = a.dtype.itemsize * 8
    sign = np.array(1 << (width - 1), u.dtype)
    return np.where(u & sign, ~u, u | sign)


def _apply(op, mem, val):
    """The new value of each element after `op` with `val` (same dtype; bf16 as torch)."""
    if isinstance(mem, torch.Tensor):  # bf16 add: computed in fp32, rounded once
        return (mem.float() + val.float()).to(mem.dtype)
    if op == "add":
        with np.errstate(over="ignore"):
            return mem + val
    if op in ("and", "or", "xor"):
        fn = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
        return fn(_bits(mem), _bits(val)).view(mem.dtype)
    if op == "xchg":
        return val.copy()
    if mem.dtype.kind == "f":
        larger = _order_key(val) > _order_key(mem)
        return np.where(larger == (op == "max"), val, mem)
    return np.maximum(mem, val) if op == "max" else np.minimum(mem, val)


def _sequential(op, mem, steps):
    """Old values of each (val, mask) step applied in order; returns (olds, final memory)."""
    olds = []
    for val, mask in steps:
        zero = torch.zeros_like(mem) if isinstance(mem, torch.Tensor) else np.zeros_like(mem)
        m = torch.from_numpy(mask) if isinstance(mem, torch.Tensor) else mask
        olds.append(torch.where(m, mem, zero) if isinstance(mem, torch.Tensor) else np.where(m, mem, zero))
        new = _apply(op, mem, val)
        mem = torch.where(m, new, mem) if isinstance(mem, torch.Tensor) else np.where(m, new, mem)
    return olds, mem


def _values(rng, dtype, n, op):
    """Random values of `dtype`; floats are small multiples of 1/4 (exact sums in any order) without subnormals
    (GPU fp32 atomic adds flush them, as the PTX ISA says)."""
    if dtype == "bfloat16":
        return torch.from_numpy(rng.integers(-64, 64, n).astype(np.float32) / 4).to(torch.bfloat16)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return (rng.integers(-256, 256, n) / 4).astype(dt)
    info = np.iinfo(dt)
    if op == "add":
        return rng.integers(info.min // 4, info.max // 4, n, dtype=dt, endpoint=True)
    return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)


def _assert_same(actual, expected):
    if isinstance(expected, torch.Tensor):
        assert torch.equal(actual.view(torch.int16), expected.view(torch.int16)), (actual, expected)
    else:
        np.testing.assert_array_equal(_bits(actual), _bits(expected))


# ---------------------------------------------------------------------------------------------------- the kernels


@triton.jit
def _atomic(OP: tl.constexpr, ptr, val, mask, SEM: tl.constexpr, SCOPE: tl.constexpr, METHOD: tl.constexpr):
    if METHOD:
        if OP == "add":
            old = ptr.atomic_add(val, mask=mask, sem=SEM, scope=SCOPE)
        elif OP == "and":
            old = ptr.atomic_and(val, mask=mask, sem=SEM, scope=SCOPE)
        elif OP == "or":
            old = ptr.atomic_or(val, mask=mask, sem=SEM, scope=SCOPE)
        elif OP == "xor":
            old = ptr.atomic_xor(val, mask=mask, sem=SEM, scope=SCOPE)
        elif OP == "max":
            old = ptr.atomic_max(val, mask=mask, sem=SEM, scope=SCOPE)
        elif OP == "min":
            old = ptr.atomic_min(val, mask=mask, sem=SEM, scope=SCOPE)
        else:
            old = ptr.atomic_xchg(val, mask=mask, sem=SEM, scope=SCOPE)
    else:
        if OP == "add":
            old = tl.atomic_add(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
        elif OP == "and":
            old = tl.atomic_and(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
        elif OP == "or":
            old = tl.atomic_or(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
        elif OP == "xor":
            old = tl.atomic_xor(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
        elif OP == "max":
            old = tl.atomic_max(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
        elif OP == "min":
            old = tl.atomic_min(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
        else:
            old = tl.atomic_xchg(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
    return old


@triton.jit
def _two_atomics_block(mem, v1, v2, m1, m2, o1, o2, OP: tl.constexpr, SEM: tl.constexpr, SCOPE: tl.constexpr,
                       METHOD: tl.constexpr, BLOCK: tl.constexpr):
    # Two atomics on the same elements: the second returns what the first left.
    offs = tl.arange(0, BLOCK)
    old1 = _atomic(OP, mem + offs, tl.load(v1 + offs), tl.load(m1 + offs) != 0, SEM, SCOPE, METHOD)
    old2 = _atomic(OP, mem + offs, tl.load(v2 + offs), tl.load(m2 + offs) != 0, SEM, SCOPE, METHOD)
    tl.store(o1 + offs, old1)
    tl.store(o2 + offs, old2)


@triton.jit
def _two_atomics_scalar(mem, v1, v2, m1, m2, o1, o2, OP: tl.constexpr, SEM: tl.constexpr, SCOPE: tl.constexpr,
                        METHOD: tl.constexpr, BLOCK: tl.constexpr):
    # The same on scalars, one element per loop iteration.
    for i in range(BLOCK):
        old1 = _atomic(OP, mem + i, tl.load(v1 + i), tl.load(m1 + i) != 0, SEM, SCOPE, METHOD)
        old2 = _atomic(OP, mem + i, tl.load(v2 + i), tl.load(m2 + i) != 0, SEM, SCOPE, METHOD)
        tl.store(o1 + i, old1)
        tl.store(o2 + i, old2)


def _masks(rng, n):
    m1, m2 = rng.random(n) < 0.7, rng.random(n) < 0.7
    m1[:2] = [True, False]
    m2[:2] = [True, False]
    return m1, m2


@pytest.mark.parametrize("scalar", [False, True], ids=["block", "scalar"])
@pytest.mark.parametrize("op,dtype", CASES, ids=[f"{op}-{dt}" for op, dt in CASES])
def test_sequential_old_values(rng, target, op, dtype, scalar):
    n = 8 if scalar else 64
    mem0 = _values(rng, dtype, n, op)
    v1, v2 = _values(rng, dtype, n, op), _values(rng, dtype, n, op)
    m1, m2 = _masks(rng, n)
    (old1, old2), final = _sequential(op, mem0, [(v1, m1), (v2, m2)])
    copy = (lambda t: t.clone()) if isinstance(mem0, torch.Tensor) else np.copy
    zeros = torch.zeros_like if isinstance(mem0, torch.Tensor) else np.zeros_like
    mem, o1, o2 = copy(mem0), zeros(mem0), zeros(mem0)
    o1[:] = 7
    o2[:] = 7
    kernel = _two_atomics_scalar if scalar else _two_atomics_block
    # sem/scope: the defaults, and a non-default pair by op (every pair: test_every_sem_and_scope).
    sem, scope = (None, None) if op in ("add", "max", "xchg") else (("relaxed", "cta"), ("acquire", "sys"),
                                                                      ("release", "gpu"), ("acq_rel", "cta"))[
        OPS.index(op) % 4]
    kernel[(1,)](mem, v1, v2, m1.astype(np.int8), m2.astype(np.int8), o1, o2, OP=op, SEM=sem, SCOPE=scope,
                 METHOD=len(dtype) % 2 == 0, BLOCK=n)
    _assert_same(o1, old1)
    _assert_same(o2, old2)
    _assert_same(mem, final)


@triton.jit
def _broadcast_kernel(mem, row, o, SCALAR_VAL: tl.constexpr, M: tl.constexpr, N: tl.constexpr):
    # A 2-D block of pointers with a [1, N] value (or a Python scalar) and a [M, 1] mask, both broadcast.
    r = tl.arange(0, M)[:, None]
    c = tl.arange(0, N)[None, :]
    if SCALAR_VAL:
        old = tl.atomic_add(mem + r * N + c, 3, mask=r % 2 == 0)
    else:
        old = tl.atomic_add(mem + r * N + c, tl.load(row + c), mask=r % 2 == 0)
    tl.store(o + r * N + c, old)


@pytest.mark.parametrize("scalar_val", [False, True])
def test_broadcast_value_and_mask(rng, scalar_val):
    m, n = 8, 16
    mem0 = rng.integers(-100, 100, (m, n)).astype(np.int64)
    row = rng.integers(-100, 100, (1, n)).astype(np.int64)
    mem, o = mem0.copy(), np.full((m, n), 7, np.int64)
    _broadcast_kernel[(1,)](mem, row, o, SCALAR_VAL=scalar_val, M=m, N=n)
    on = (np.arange(m) % 2 == 0)[:, None]
    np.testing.assert_array_equal(o, np.where(on, mem0, 0))
    np.testing.assert_array_equal(mem, np.where(on, mem0 + (3 if scalar_val else row), mem0))


# ------------------------------------------------------------------------------------------------ compare-and-swap


@triton.jit
def _cas_block(mem, cmp, val, old, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(old + offs, tl.atomic_cas(mem + offs, tl.load(cmp + offs), tl.load(val + offs)))


@triton.jit
def _cas_scalar(mem, cmp, val, old, BLOCK: tl.constexpr):
    for i in range(BLOCK):
        tl.store(old + i, (mem + i).atomic_cas(tl.load(cmp + i), tl.load(val + i), sem="acquire", scope="cta"))


CAS_TYPES = ["int16", "uint16", "float16", "bfloat16"] + WIDE


@pytest.mark.parametrize("scalar", [False, True], ids=["block", "scalar"])
@pytest.mark.parametrize("dtype", CAS_TYPES)
def test_cas(rng, dtype, scalar):
    n = 8 if scalar else 64
    if dtype == "bfloat16":
        mem0 = torch.from_numpy(rng.integers(-8, 8, n).astype(np.float32)).to(torch.bfloat16)
        val = torch.from_numpy(rng.integers(-8, 8, n).astype(np.float32)).to(torch.bfloat16)
        hit = torch.from_numpy(rng.random(n) < 0.5)
        hit[:2] = torch.tensor([True, False])
        cmp = torch.where(hit, mem0, mem0 + 1)
        mem, old = mem0.clone(), torch.zeros_like(mem0)
        expected_mem = torch.where(hit, val, mem0)
    else:
        dt = np.dtype(dtype)
        mem0 = (rng.integers(-8, 8, n) if dt.kind != "u" else rng.integers(0, 16, n)).astype(dt)
        val = (rng.integers(-8, 8, n) if dt.kind != "u" else rng.integers(0, 16, n)).astype(dt)
        hit = rng.random(n) < 0.5
        hit[:2] = [True, False]
        cmp = np.where(hit, mem0, mem0 + dt.type(1))
        if dt.kind == "f":
            # Floats compare as bits: -0.0 is not 0.0.
            mem0[2], cmp[2], hit[2] = 0.0, -0.0, False
        mem, old = mem0.copy(), np.zeros_like(mem0)
        expected_mem = np.where(hit, val, mem0)
    (_cas_scalar if scalar else _cas_block)[(1,)](mem, cmp, val, old, BLOCK=n)
    _assert_same(old, mem0)
    _assert_same(mem, expected_mem)


# ------------------------------------------------------------------------------------------- sem, scope and errors


@triton.jit
def _sem_scope_kernel(mem, cnt, o, SEM: tl.constexpr, SCOPE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(o + offs, tl.atomic_add(mem + offs, offs, sem=SEM, scope=SCOPE))
    tl.store(o + BLOCK, tl.atomic_cas(cnt, 5, 6, sem=SEM, scope=SCOPE))


@pytest.mark.parametrize("scope", [None, "gpu", "cta", "sys"])
@pytest.mark.parametrize("sem", [None, "relaxed", "acquire", "release", "acq_rel"])
def test_every_sem_and_scope(target, sem, scope):
    mem, cnt, o = np.arange(16, dtype=np.int32), np.array([5], np.int32), np.zeros(17, np.int32)
    kernel = _sem_scope_kernel[(1,)](mem, cnt, o, SEM=sem, SCOPE=scope, BLOCK=16)
    np.testing.assert_array_equal(mem, 2 * np.arange(16))
    np.testing.assert_array_equal(o, np.r_[np.arange(16), 5])
    assert cnt[0] == 6
    if target.startswith("sim:sm"):
        # Triton's defaults (acq_rel, gpu), and each qualifier as PTX spells it.
        qualifiers = f".{sem or 'acq_rel'}.{scope or 'gpu'}.global"
        ptx = kernel.asm["ptx"]
        assert f"atom{qualifiers}.add.u32" in ptx and f"atom{qualifiers}.cas.b32" in ptx, ptx
    elif target.startswith("sim:gfx"):
        amdgcn = kernel.asm["amdgcn"]
        assert "global_atomic_add" in amdgcn and "global_atomic_cmpswap" in amdgcn, amdgcn


@triton.jit
def _bad_kernel(p32, p16, ph, pb, p8, p64, CASE: tl.constexpr):
    offs = tl.arange(0, 16)
    if CASE == "sem":
        tl.atomic_add(p32 + offs, 1, sem="seq_cst")
    elif CASE == "scope":
        tl.atomic_xchg(p32, 1, scope="block")
    elif CASE == "cas sem":
        tl.atomic_cas(p32, 0, 1, sem="strong")
    elif CASE == "max fp16":
        tl.atomic_max(ph + offs, 1.0)
    elif CASE == "xor bf16":
        tl.atomic_xor(pb, 1.0)
    elif CASE == "add int16":
        tl.atomic_add(p16 + offs, 1)
    elif CASE == "or int8":
        tl.atomic_or(p8, 1)
    elif CASE == "cas int8":
        tl.atomic_cas(p8, 0, 1)
    elif CASE == "cas dtype":
        tl.atomic_cas(p64 + offs, offs, offs + 1)
    elif CASE == "mask dtype":
        tl.atomic_add(p32 + offs, 1, mask=offs)
    elif CASE == "block value":
        tl.atomic_add(p32, offs)
    elif CASE == "block mask":
        tl.atomic_min(p32, 1, mask=offs < 3)
    else:
        tl.atomic_add(p32 + offs, p16 + offs)


BAD = {
    "sem": ("tl.atomic_add(p32 + offs, 1, sem=\"seq_cst\")",
            "atomic_add: Memory semantic 'seq_cst' not supported; use 'relaxed', 'acquire', 'release' or 'acq_rel'"),
    "scope": ("tl.atomic_xchg(p32, 1, scope=\"block\")",
              "atomic_xchg: Memory scope 'block' not supported; use 'gpu', 'cta' or 'sys'"),
    "cas sem": ("tl.atomic_cas(p32, 0, 1, sem=\"strong\")", "atomic_cas: Memory semantic 'strong' not supported"),
    "max fp16": ("tl.atomic_max(ph + offs, 1.0)", "atomic_max does not support fp16"),
    "xor bf16": ("tl.atomic_xor(pb, 1.0)", "atomic_xor does not support bf16"),
    "add int16": ("tl.atomic_add(p16 + offs, 1)", "atomic_add does not support int16"),
    "or int8": ("tl.atomic_or(p8, 1)", "atomic_or does not support int8"),
    "cas int8": ("tl.atomic_cas(p8, 0, 1)", "atomic_cas only supports elements with width {16, 32, 64}"),
    "cas dtype": ("tl.atomic_cas(p64 + offs, offs, offs + 1)",
                  "atomic_cas: cmp must have the pointer's element type i64, got i32[16]"),
    "mask dtype": ("tl.atomic_add(p32 + offs, 1, mask=offs)", "atomic_add: the mask must be boolean, got i32[16]"),
    "block value": ("tl.atomic_add(p32, offs)", "atomic_add: the value is a block (i32[16]) but the pointer is a "
                                                "scalar (*i32)"),
    "block mask": ("tl.atomic_min(p32, 1, mask=offs < 3)", "atomic_min: the mask is a block"),
    "pointer value": ("tl.atomic_add(p32 + offs, p16 + offs)", "atomic_add: the value must be a number"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_errors_name_the_line(case):
    line, message = BAD[case]
    args = [np.zeros(16, t) for t in (np.int32, np.int16, np.float16)] + [torch.zeros(16, dtype=torch.bfloat16)] + \
        [np.zeros(16, t) for t in (np.int8, np.int64)]
    with pytest.raises(triton.CompilationError) as excinfo:
        _bad_kernel[(1,)](*args, CASE=case)
    text = str(excinfo.value)
    assert line in text and message in text, text


# ------------------------------------------------------------------------------------------------------- races


@triton.jit
def _counter_kernel(counter, olds, fsum, vals):
    pid = tl.program_id(0)
    tl.store(olds + pid, tl.atomic_add(counter, 1))
    tl.atomic_add(fsum, tl.load(vals + pid), sem="relaxed")


def test_counter_race(rng, target):
    # Every program takes a ticket: the old values are 0..n-1 once each, and the sums are exact (ints; floats that
    # are small multiples of 1/4, exact in any order).
    n = 1000 if _is_sim(target) else 20000
    counter, olds = np.zeros(1, np.int32), np.full(n, -1, np.int32)
    vals = (rng.integers(-64, 64, n) / 4).astype(np.float64)
    fsum = np.zeros(1, np.float64)
    _counter_kernel[(n,)](counter, olds, fsum, vals, num_warps=1)
    assert counter[0] == n
    np.testing.assert_array_equal(np.sort(olds), np.arange(n))
    assert fsum[0] == vals.sum()


@triton.jit
def _half_counter_kernel(counter, olds):
    pid = tl.program_id(0)
    tl.store(olds + pid, tl.atomic_add(counter, 1.0))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_half_counter_race(dtype):
    # 16-bit float adds under contention (bf16 before sm_90 is a compare-and-swap loop): integers up to 256 are
    # exact in both types, so the old values are 0..n-1 once each.
    n = 256
    counter, olds = torch.zeros(1, dtype=dtype), torch.full((n,), -1.0, dtype=dtype)
    _half_counter_kernel[(n,)](counter, olds, num_warps=1)
    assert counter.item() == n
    assert sorted(olds.tolist()) == list(range(n))


@triton.jit
def _cas_fill_kernel(mem, old, BLOCK: tl.constexpr):
    # Scalar cmp and val fill the block (Triton wants them shaped as the pointers).
    offs = tl.arange(0, BLOCK)
    tl.store(old + offs, tl.atomic_cas(mem + offs, 0, 7))


def test_cas_scalar_operands_fill_the_block():
    mem0 = np.array([0, 1, 0, 3] * 8, np.int64)
    mem, old = mem0.copy(), np.full(32, -1, np.int64)
    _cas_fill_kernel[(1,)](mem, old, BLOCK=32)
    np.testing.assert_array_equal(old, mem0)
    np.testing.assert_array_equal(mem, np.where(mem0 == 0, 7, mem0))


@triton.jit
def _histogram_kernel(x, hist, hmax, hmin, h16, xchg, n, BINS: tl.constexpr, BLOCK: tl.constexpr):
    # Scattered atomics of many programs, several elements of one block on the same bin.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x + offs, mask=mask)
    b = (v & (BINS - 1)).to(tl.int32)
    tl.atomic_add(hist + b, 1, mask=mask)
    tl.atomic_max(hmax + b, v, mask=mask)
    tl.atomic_min(hmin + b, v.to(tl.float32) - 1000.0, mask=mask)
    tl.atomic_add(h16 + b, ((v >> 10) % 4).to(tl.float16), mask=mask)
    tl.atomic_xchg(xchg + b, v, mask=mask)


def test_histogram_race(rng, target):
    n, bins = (3000, 8) if _is_sim(target) else (100000, 128)
    x = rng.integers(0, 1 << 20, n).astype(np.int64)
    hist, hmax = np.zeros(bins, np.int32), np.full(bins, -1, np.int64)
    hmin, h16, xchg = np.full(bins, np.inf, np.float32), np.zeros(bins, np.float16), np.full(bins, -1, np.int64)
    _histogram_kernel[(triton.cdiv(n, 256),)](x, hist, hmax, hmin, h16, xchg, n, BINS=bins, BLOCK=256)
    b = x & (bins - 1)
    np.testing.assert_array_equal(hist, np.bincount(b, minlength=bins))
    for i in range(bins):
        np.testing.assert_array_equal(hmax[i], x[b == i].max())
        np.testing.assert_array_equal(hmin[i], (x[b == i].astype(np.float32) - 1000).min())
        small = ((x[b == i] >> 10) % 4).sum()
        assert small < 2048 and h16[i] == small  # integers: exact in fp16 below 2048, in any order
        assert xchg[i] in x[b == i]  # the last exchange's value


@triton.jit
def _locked_accumulate(lock, count, acc, x, GROUPS: tl.constexpr, BLOCK: tl.constexpr):
    # Triton's layer-norm-backward pattern: take the group's lock, read-modify-write its partial sums, release.
    pid = tl.program_id(0)
    g = pid % GROUPS
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + pid * BLOCK + offs)
    while tl.atomic_cas(lock + g, 0, 1) == 1:
        pass
    c = tl.load(count + g)
    if c == 0:
        tl.atomic_xchg(count + g, 1)
    else:
        v += tl.load(acc + g * BLOCK + offs)
    tl.store(acc + g * BLOCK + offs, v)
    tl.atomic_xchg(lock + g, 0)


def test_spin_lock(rng, target):
    # On GPUs the lock is taken and released by one thread for the whole program: every thread's stores must be
    # done before the release (8 warps, so most of them are not the releasing thread's).
    programs, groups, block, warps = (64, 2, 1024, 8) if _is_sim(target) else (4000, 8, 256, 4)
    x = rng.integers(-100, 100, (programs, block)).astype(np.float32)
    lock, count = np.zeros(groups, np.int32), np.zeros(groups, np.int32)
    acc = np.full((groups, block), np.nan, np.float32)
    kernel = _locked_accumulate[(programs,)](lock, count, acc, x, GROUPS=groups, BLOCK=block, num_warps=warps)
    expected = np.stack([x[g::groups].sum(axis=0) for g in range(groups)])  # integers: exact in any order
    np.testing.assert_array_equal(acc, expected)
    np.testing.assert_array_equal(lock, 0)
    np.testing.assert_array_equal(count, 1)
    if _is_sim(target):
        # The race is rarely lost in the simulator even without it: check the barrier between the critical
        # section's last store and the release.
        amd = target.startswith("sim:gfx")
        lines = kernel.asm["amdgcn" if amd else "ptx"].splitlines()
        is_release = (lambda line: "global_atomic_swap" in line) if amd else \
            (lambda line: "atom." in line and ".exch." in line)
        release = max(i for i, line in enumerate(lines) if is_release(line))
        stores = ("global_store", "buffer_store") if amd else ("st.global",)
        last_store = max(i for i, line in enumerate(lines[:release]) if any(s in line for s in stores))
        barrier = "s_barrier" if amd else "bar.sync"
        assert any(barrier in line for line in lines[last_store:release]), "\n".join(lines[last_store:release])


# ------------------------------------------------------------------------------------- one element, one atomic


@triton.jit
def _duplicates_kernel(mem, o, small, osmall, scalar, oscalar, BLOCK: tl.constexpr, SMALL: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    # Four elements of the block on each address: four atomics each, old values 0..3 in some order.
    tl.store(o + offs, tl.atomic_add(mem + offs // 4, 1))
    # A block smaller than the program's threads, and a scalar: every thread holds copies, one atomic each.
    s = tl.arange(0, SMALL)
    tl.store(osmall + s, tl.atomic_add(small + s, 1))
    tl.store(oscalar, tl.atomic_add(scalar, 1))


@pytest.mark.parametrize("num_warps", [1, 4])
def test_one_atomic_per_element(num_warps):
    block, small = 256, 4
    mem, o = np.zeros(block // 4, np.int32), np.full(block, -1, np.int32)
    s, os_, c, oc = np.full(small, 10, np.int32), np.zeros(small, np.int32), np.full(1, 20, np.int32), \
        np.zeros(1, np.int32)
    _duplicates_kernel[(1,)](mem, o, s, os_, c, oc, BLOCK=block, SMALL=small, num_warps=num_warps)
    np.testing.assert_array_equal(mem, 4)
    np.testing.assert_array_equal(np.sort(o.reshape(-1, 4), axis=1), np.tile(np.arange(4), (block // 4, 1)))
    np.testing.assert_array_equal(s, 11)
    np.testing.assert_array_equal(os_, 10)
    assert c[0] == 21 and oc[0] == 20


# ------------------------------------------------------------------------------ float max/min: NaN and -0.0


def _float_max_min_kernel(mem, val, old, MAX: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(val + offs)
    if MAX:
        o = tl.atomic_max(mem + offs, v, mask=offs < BLOCK - 1)
    else:
        o = tl.atomic_min(mem + offs, v, mask=offs < BLOCK - 1)
    tl.store(old + offs, o)


def _special_pairs(dtype):
    nan, inf = float("nan"), float("inf")
    specials = [0.0, -0.0, nan, -nan, inf, -inf, 1.5, -1.5, 3.0, -3.0]
    pairs = [(a, b) for a in specials for b in specials]
    mem = np.array([a for a, _ in pairs], dtype)
    val = np.array([b for _, b in pairs], dtype)
    # -nan above: a NaN with the sign bit set (numpy keeps it through negation).
    return mem, val


def _pad(a, block):
    return np.concatenate([a, np.zeros(block - len(a), a.dtype)])


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_max_min_specials(op, dtype):
    block = 128
    mem0, val = _special_pairs(dtype)
    mem0, val = _pad(mem0, block), _pad(val, block)
    mem, old = mem0.copy(), np.zeros(block, dtype)
    triton.jit(_float_max_min_kernel)[(1,)](mem, val, old, MAX=op == "max", BLOCK=block)
    masked = np.arange(block) < block - 1
    (expected_old,), expected = _sequential(op, mem0, [(val, masked)])
    _assert_same(old, expected_old)
    _assert_same(mem, expected)
    # Spot checks of the order: max(+0, -0) is +0, min is -0; +NaN wins max, -NaN wins min.
    key = {(float(a), float(b), np.signbit(a), np.signbit(b)): (float(r), np.signbit(r))
           for a, b, r in zip(mem0[:-1], val[:-1], mem[:-1]) if not np.isnan(a) and not np.isnan(b)}
    assert key[(0.0, 0.0, False, True)] == ((0.0, False) if op == "max" else (0.0, True))


def test_float_max_min_match_triton_interpreter(tmp_path):
    # The same kernel in Triton 3.6's interpreter, with torch CPU tensors (in a child process: the interpreter is a
    # process-wide mode of Triton's).
    source = "import triton.language as tl\n\n\n" + textwrap.dedent(inspect.getsource(_float_max_min_kernel))
    (tmp_path / "max_min_kernel.py").write_text(source)
    script = textwrap.dedent("""
        import json, os, sys
        os.environ["TRITON_INTERPRET"] = "1"
        import numpy as np, torch, triton
        sys.path.insert(0, sys.argv[1])
        from max_min_kernel import _float_max_min_kernel
        kernel = triton.jit(_float_max_min_kernel)
        out = {}
        for dtype, op, mem_bits, val_bits in json.loads(sys.stdin.read()):
            u = {"float32": np.uint32, "float64": np.uint64}[dtype]
            mem = torch.from_numpy(np.array(mem_bits, u).view(dtype).copy())
            val = torch.from_numpy(np.array(val_bits, u).view(dtype).copy())
            old = torch.zeros_like(mem)
            kernel[(1,)](mem, val, old, MAX=op == "max", BLOCK=len(mem_bits))
            out[dtype + op] = [mem.numpy().view(u).tolist(), old.numpy().view(u).tolist()]
        print(json.dumps(out))
    """)
    block, cases, ours = 128, [], {}
    kernel = triton.jit(_float_max_min_kernel)
    for dtype in ("float32", "float64"):
        mem0, val = _special_pairs(np.dtype(dtype))
        mem0, val = _pad(mem0, block), _pad(val, block)
        for op in ("max", "min"):
            cases.append((dtype, op, _bits(mem0).tolist(), _bits(val).tolist()))
            mem, old = mem0.copy(), np.zeros(block, mem0.dtype)
            kernel[(1,)](mem, val, old, MAX=op == "max", BLOCK=block)
            ours[dtype + op] = [_bits(mem).tolist(), _bits(old).tolist()]
    env = {k: v for k, v in os.environ.items() if k != "TESSEL_TARGET"}
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], input=json.dumps(cases),
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    for case, (mem, old) in ours.items():
        assert theirs[case][0] == mem, case
        # The interpreter's fp64 atomic_min returns the old values' bits converted to floats (its semantic.py types
        # the unsigned half as a pointer, which its `where` then converts); compiled Triton selects the bits and
        # bitcasts them, as Tessel does (test_float_max_min_specials checks those against numpy).
        if case != "float64min":
            assert theirs[case][1] == old, case


@triton.jit
def _read_only_kernel(src, counter):
    tl.atomic_add(counter, tl.load(src))


def test_atomic_targets_are_written_arguments(target):
    # The launcher refuses a read-only array where the kernel makes atomics (as where it stores), and copies the
    # simulator's memory back into a writable one.
    src, counter = np.full(1, 5, np.int32), np.zeros(1, np.int32)
    src.flags.writeable = False
    _read_only_kernel[(3,)](src, counter)
    assert counter[0] == 15
    counter.flags.writeable = False
    with pytest.raises(ValueError, match="'counter' is a read-only array, but the kernel may store to it"):
        _read_only_kernel[(1,)](src, counter)
