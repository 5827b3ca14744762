"""The fuzzer's kernel representation, its rendering to Python source, and the numpy model of Triton's semantics.

A kernel is a `Program`: buffers (one pointer parameter each), a grid of P programs along axis 0, and a list of
statements over expression `Node`s. The model evaluates a program on all P programs at once: every value carries a
leading axis of size P (each program owns its own region of R elements of every buffer, so programs never race).

The model is written from Triton 3.6's language definition (promotion, casts, C-like // and %, wrapping integers,
reductions' accumulator types, dot's accumulator), independently of tessel's own implementation. Floats carry an
elementwise bound on their distance from the exact result, so results are compared with a tolerance earned by the
actual operation chain; anything whose answer is not pinned down (a float comparison or float->int cast closer to its
threshold than the error bound, division by ~0, int division by 0, out-of-range casts, shifts >= the bit width, racy
stores, overflow to inf) raises `Reject`, and the generator draws another kernel.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class Reject(Exception):
    """The kernel is not well defined (or the model cannot pin its result down): draw another one."""


class ModelTypeError(Exception):
    """Triton would refuse to compile this kernel (a candidate produced by minimization, not by the generator)."""


# ------------------------------------------------------------------------------------------------------------ dtypes

INTS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
FLOATS = ["fp16", "bf16", "fp32", "fp64"]
ALL = INTS + FLOATS + ["i1"]
NP = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
      "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "fp16": np.float16, "bf16": np.float32,
      "fp32": np.float32, "fp64": np.float64}
TL = {"i1": "tl.int1", "i8": "tl.int8", "i16": "tl.int16", "i32": "tl.int32", "i64": "tl.int64", "u8": "tl.uint8",
      "u16": "tl.uint16", "u32": "tl.uint32", "u64": "tl.uint64", "fp16": "tl.float16", "bf16": "tl.bfloat16",
      "fp32": "tl.float32", "fp64": "tl.float64"}
MANT = {"fp16": 11, "bf16": 8, "fp32": 24, "fp64": 53}  # significand bits: unit roundoff is 2**-MANT
EMIN = {"fp16": -14, "bf16": -126, "fp32": -126, "fp64": -1022}  # smallest normal exponent; subnormals below
# The smallest subnormal: the spacing of every float below 2**EMIN (where rounding errors are absolute, not relative).
TINY = {dt: 2.0 ** (EMIN[dt] - MANT[dt] + 1) for dt in MANT}
# A factor that takes the generator's values (|x| <= 4 or so) into the subnormal range of each type.
SUBNORMAL_SCALE = {"fp16": 2.0**-20, "bf16": 2.0**-140, "fp32": 2.0**-140, "fp64": 2.0**-1060}
LIMIT = {"fp16": 3e4, "bf16": 1e30, "fp32": 1e30, "fp64": 1e200}  # larger magnitudes: Reject (overflow risk)


def is_float(dt: str) -> bool:
    return dt in MANT


def is_int(dt: str) -> bool:  # proper integers, not bool
    return dt in INTS


def signed(dt: str) -> bool:
    return dt[0] == "i" and dt != "i1"


def bits(dt: str) -> int:
    return 1 if dt == "i1" else int(dt[1:]) if dt[0] in "iu" else int(dt[-2:])


def kind(dt: str) -> int:  # Triton's dtype.KIND: bool < integral < floating
    return 0 if dt == "i1" else 1 if is_int(dt) else 2


def unit(dt: str) -> float:
    return 2.0 ** -MANT[dt]


def lit_dtype(v: Any) -> str:
    """The type Triton gives a Python literal (semantic.to_tensor)."""
    if isinstance(v, bool):
        return "i1"
    if isinstance(v, int):
        if -2**31 <= v < 2**31:
            return "i32"
        if 2**31 <= v < 2**32:
            return "u32"
        return "i64" if -2**63 <= v < 2**63 else "u64"
    a = abs(v)
    return "fp32" if (a == 0 or a == math.inf or v != v or 2**-126 <= a <= (2 - 2**-23) * 2**127) else "fp64"


def int_range(dt: str) -> tuple[int, int]:
    b = bits(dt)
    return (-(2**(b - 1)), 2**(b - 1) - 1) if signed(dt) else (0, 2**b - 1)


def integer_promote(a: str, b: str) -> str:
    ra, rb = bits(a), bits(b)
    sa, sb = signed(a) or a == "i1", signed(b) or b == "i1"  # Triton's int1 has signed signedness
    if sa == sb:
        return a if ra > rb else b
    if not sa:
        return a if ra >= rb else b
    return b if rb >= ra else a


def computation_type(a: str, a_lit: bool, b: str, b_lit: bool, div_or_mod: bool) -> str:
    """semantic.computation_type_impl."""
    if a_lit != b_lit:
        s, t = (a, b) if a_lit else (b, a)
        if kind(s) <= kind(t):
            if div_or_mod and t in ("fp16", "bf16"):
                return "fp32"
            return t
    if "fp64" in (a, b):
        return "fp64"
    if "fp32" in (a, b):
        return "fp32"
    if "fp16" in (a, b):
        return "fp32" if div_or_mod else "fp16"
    if a == "bf16" and b == "bf16":
        return "fp32" if div_or_mod else "bf16"
    if "bf16" in (a, b):
        return "fp32"
    if div_or_mod and (signed(a) or a == "i1") != (signed(b) or b == "i1"):
        raise ModelTypeError(f"/, // or % between {a} and {b} (different signedness)")
    return integer_promote(a, b)


# ------------------------------------------------------------------------------------------------------------- nodes

class Node:
    """One expression. `op` selects the meaning; `kids` are sub-expressions; `at` holds the op's attributes."""
    __slots__ = ("op", "kids", "at")

    def __init__(self, op: str, kids: list | tuple = (), **at: Any) -> None:
        self.op, self.kids, self.at = op, list(kids), at

    def with_kids(self, kids: list) -> "Node":
        return Node(self.op, kids, **self.at)

    def __repr__(self) -> str:
        return render(self)


def Lit(v): return Node("lit", v=v)
def Name(n): return Node("name", n=n)
def Arange(n, pos="1d"): return Node("arange", n=n, pos=pos)
def Bin(o, a, b): return Node("bin", [a, b], o=o)


@dataclass
class Program:
    buffers: list  # element dtype of each buffer
    P: int  # grid size
    R: int  # elements per program per buffer
    stmts: list  # ("assign", name, node) | ("store", ptr, value, mask|None) | ("for", var, n, body, tl_range)
    data_seed: int
    notes: list = field(default_factory=list)


# --------------------------------------------------------------------------------------------------------- rendering

BINOPS = {"+", "-", "*", "/", "//", "%", "&", "|", "^", "<<", ">>", "<", "<=", ">", ">=", "==", "!="}


def render(n: Node) -> str:
    op, k, a = n.op, n.kids, n.at
    if op == "lit":
        v = a["v"]
        return repr(v) if not isinstance(v, float) else (repr(v) if v >= 0 else f"({v!r})")
    if op == "name":
        return a["n"]
    if op == "arange":
        s = f"tl.arange(0, {a['n']})"
        return s + {"1d": "", "row": "[:, None]", "col": "[None, :]"}[a["pos"]]
    if op == "pid":
        return "tl.program_id(0)"
    if op == "full":
        return f"tl.full({list(a['shape'])}, {a['v']!r}, {TL[a['dt']]})"
    if op == "ptr":
        return f"p{a['b']} + {render(k[0])}" if k[0].op in ("name", "lit", "arange") else f"p{a['b']} + ({render(k[0])})"
    if op == "load":
        s = f"tl.load({render(k[0])}"
        if len(k) > 1:
            s += f", mask={render(k[1])}, other={a['other']!r}"
        return s + ")"
    if op == "bin":
        o = a["o"]
        if o in ("maximum", "minimum"):
            return f"tl.{o}({render(k[0])}, {render(k[1])})"
        return f"({render(k[0])} {o} {render(k[1])})"
    if op == "un":
        return f"({a['o']}{render(k[0])})"
    if op == "where":
        return f"tl.where({render(k[0])}, {render(k[1])}, {render(k[2])})"
    if op == "math":
        return f"tl.{a['f']}({render(k[0])})"
    if op == "cast":
        return f"{render(k[0])}.to({TL[a['dt']]})"
    if op == "red":
        args = [render(k[0])]
        if a["axis"] is not None or a["kind"] in ("argmax", "argmin"):
            args.append(str(a["axis"]))
        if a["keep"]:
            args.append("keep_dims=True")
        return f"tl.{a['kind']}({', '.join(args)})"
    if op == "dot":
        args = [render(x) for x in k]
        if a.get("out"):
            args.append(f"out_dtype={TL[a['out']]}")
        if a.get("ieee"):
            args.append('input_precision="ieee"')
        return f"tl.dot({', '.join(args)})"
    if op == "expand":
        ax = a["axis"]
        if ax == "row":
            return f"{render(k[0])}[:, None]"
        if ax == "col":
            return f"{render(k[0])}[None, :]"
        return f"tl.expand_dims({render(k[0])}, {ax})"
    if op == "bcast":
        return f"tl.broadcast_to({render(k[0])}, {tuple(a['shape'])})"
    if op == "reshape":
        return f"tl.reshape({render(k[0])}, {tuple(a['shape'])})"
    if op == "trans":
        return f"tl.trans({render(k[0])})"
    raise ValueError(op)


def render_program(p: Program, flavor: str = "tessel") -> str:
    if flavor == "tessel":
        head = ["import tessel as triton", "import tessel.language as tl"]
    else:
        head = ["import triton", "import triton.language as tl"]
    params = ", ".join(f"b{i}" for i in range(len(p.buffers)))
    lines = head + ["", "", "@triton.jit", f"def kernel({params}):", "    pid = tl.program_id(0)"]
    for i in range(len(p.buffers)):
        lines.append(f"    p{i} = b{i} + pid * {p.R}")

    def emit(stmts, ind):
        if not stmts:
            lines.append(" " * ind + "pass")
        for s in stmts:
            pad = " " * ind
            if s[0] == "assign":
                lines.append(f"{pad}{s[1]} = {render(s[2])}")
            elif s[0] == "store":
                m = f", mask={render(s[3])}" if s[3] is not None else ""
                lines.append(f"{pad}tl.store({render(s[1])}, {render(s[2])}{m})")
            else:
                rng = "tl.range" if s[4] else "range"
                lines.append(f"{pad}for {s[1]} in {rng}(0, {s[2]}):")
                emit(s[3], ind + 4)

    emit(p.stmts, 4)
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------------------ values

class Val:
    """A model value: `a` has a leading axis of size P; `e` bounds |a - exact| for floats (None when exact)."""
    __slots__ = ("dt", "a", "e", "lit")

    def __init__(self, dt, a, e=None, lit=None):
        self.dt, self.a, self.e, self.lit = dt, a, e, lit

    @property
    def shape(self):
        return tuple(self.a.shape[1:])

    @property
    def is_ptr(self):
        return self.dt.startswith("*")

    def err(self):
        return self.e if self.e is not None else np.zeros(self.a.shape)


def bf16_round(x: np.ndarray) -> np.ndarray:
    """Round to the nearest bfloat16 (ties to even), kept in a float32 array."""
    f = np.ascontiguousarray(x, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return u.view(np.float32).reshape(f.shape)


def bf16_round64(x64: np.ndarray) -> np.ndarray:
    """Round float64 values straight to the nearest bfloat16 (ties to even), kept in a float32 array: rounding to
    float32 first would round twice (wrong on values just past a bfloat16 tie; GPUs convert in one step)."""
    x = np.asarray(x64, dtype=np.float64)
    with np.errstate(all="ignore"):
        _, e = np.frexp(x)  # |x| = m * 2**e, 0.5 <= m < 1
        quantum = np.ldexp(1.0, np.maximum(e, -125) - 8)  # 8 significant bits; subnormals below 2**-126
        r = np.round(x / quantum) * quantum  # x / quantum is exact; np.round ties to even
        r = np.where(np.isfinite(x) & (x != 0), r, x)
        r = np.where(np.abs(r) >= 2.0**128, np.copysign(np.inf, x), r)
    return np.copysign(r, x).astype(np.float32)


def round_to(x64: np.ndarray, dt: str) -> np.ndarray:
    if dt == "bf16":
        return bf16_round64(x64)
    return x64.astype(NP[dt])


def fval(dt: str, x64: np.ndarray, e: np.ndarray) -> Val:
    """A float result computed exactly-ish in float64, rounded to dt, with error bound e (before rounding)."""
    with np.errstate(all="ignore"):
        r = round_to(x64, dt)
        rr = r.astype(np.float64)
        if not np.all(np.isfinite(rr)) or np.any(np.abs(rr) > LIMIT[dt]) or not np.all(np.isfinite(e)):
            raise Reject(f"{dt} overflow")
        return Val(dt, r, e + np.abs(rr - x64) + 2.0**-52 * np.abs(rr))


def as_val(v) -> Val:
    return v


def lit_val(v, P: int) -> Val:
    dt = lit_dtype(v)
    return Val(dt, np.full((P,), v, dtype=NP[dt]) if dt != "bf16" else None, None, lit=v)


def cast(v: Val, dt: str) -> Val:
    """tl.cast / .to / the implicit casts of promotion and of tl.store (Triton's cast semantics)."""
    if v.dt == dt:
        return v
    src, a = v.dt, v.a
    with np.errstate(all="ignore"):
        if is_float(src):
            x = a.astype(np.float64)
            e = v.err()
            if dt == "i1":
                if np.any((np.abs(x) <= e) & ~((x == 0) & (e == 0))):
                    raise Reject("float->bool near 0")
                return Val("i1", x != 0)
            if is_int(dt):
                lo, hi = np.trunc(x - e), np.trunc(x + e)
                if np.any(lo != hi):
                    raise Reject("float->int near an integer boundary")
                t = np.trunc(x)
                mn, mx = int_range(dt)
                if np.any(t < mn) or np.any(t > mx):
                    raise Reject("float->int out of range")
                return Val(dt, t.astype(NP[dt]))
            r = round_to(x, dt)
            rr = r.astype(np.float64)
            if not np.all(np.isfinite(rr)) or np.any(np.abs(rr) > LIMIT[dt]):
                raise Reject("float cast overflow")
            return Val(dt, r, e + np.abs(rr - x))
        # from bool or int
        if dt == "i1":
            return Val("i1", a != 0)
        if is_int(dt):
            return Val(dt, a.astype(NP[dt]))
        r = a.astype(np.float64) if bits(src) < 53 or dt != "fp64" else a.astype(np.float64)
        if src in ("i64", "u64") and np.any(np.abs(a.astype(np.float64)) >= 2**53):
            e = np.abs(r) * 2.0**-52  # the float64 staging value may be off by one rounding
        else:
            e = np.zeros(r.shape)
        out = round_to(r, dt) if dt != "fp64" else r
        oo = out.astype(np.float64)
        if not np.all(np.isfinite(oo)) or np.any(np.abs(oo) > LIMIT[dt]):
            raise Reject("int->float overflow")
        return Val(dt, out, e + np.abs(oo - r))


def materialize(v: Val, dt: str, P: int) -> Val:
    """A literal operand as a constant of type dt (semantic.scalar_constant); other values are cast."""
    if v.lit is not None:
        x = v.lit
        if is_int(dt) or dt == "i1":
            mn, mx = int_range(dt) if dt != "i1" else (0, 1)
            if not (mn <= x <= mx):
                raise ModelTypeError(f"literal {x} out of range for {dt}")
            return Val(dt, np.full((P,), x).astype(NP[dt]))
        r = round_to(np.full((P,), float(x)), dt)
        return Val(dt, r, np.abs(r.astype(np.float64) - float(x)))
    return cast(v, dt)


def broadcast(*vals: Val) -> list[Val]:
    """Triton's broadcasting: lower ranks get leading axes of size 1 (after the program axis), then sizes of 1
    stretch."""
    rank = max(len(v.shape) for v in vals)
    out = []
    arrs = []
    for v in vals:
        a, e = v.a, v.e
        while a.ndim - 1 < rank:
            a = a[:, None] if a.ndim == 1 else np.expand_dims(a, 1)
            e = None if e is None else (e[:, None] if e.ndim == 1 else np.expand_dims(e, 1))
        arrs.append((v, a, e))
    shape = np.broadcast_shapes(*[a.shape for _, a, _ in arrs])
    for v, a, e in arrs:
        out.append(Val(v.dt, np.broadcast_to(a, shape), None if e is None else np.broadcast_to(e, shape)))
    return out


# ------------------------------------------------------------------------------------------------------------- model

def make_data(p: Program) -> list[np.ndarray]:
    """The initial contents of every buffer (P*R elements each), reproducible from the program's data seed."""
    rng = np.random.default_rng(p.data_seed)
    n = p.P * p.R
    out = []
    for dt, k in p.buffers:
        if dt == "i1":
            a = rng.integers(0, 2, n).astype(bool)
        elif is_int(dt):
            mn, mx = int_range(dt)
            if k == "wide":
                a = rng.integers(mn, mx, n, dtype=NP[dt], endpoint=True)
            elif k == "pos":
                a = rng.integers(1, 17, n).astype(NP[dt])
            else:
                a = rng.integers(max(mn, -8), 9, n).astype(NP[dt])
        else:
            if k == "small":  # multiples of 1/8: exact in every float type, and full of ties
                x = rng.integers(-32, 33, n) / 8.0
            elif k == "pos":
                x = rng.uniform(0.5, 4.0, n)
            elif k == "tiny":  # subnormals and the smallest normals, of both signs, and zeros
                x = rng.uniform(1.0, 2.0, n) * np.exp2(rng.integers(EMIN[dt] - MANT[dt], EMIN[dt] + 2, n))
                x = np.where(rng.random(n) < 0.5, -x, x)
                x[rng.random(n) < 0.05] = 0.0
            else:
                x = rng.uniform(-4.0, 4.0, n)
            a = round_to(x, dt)
        out.append(a)
    return out


def _f64(v: Val) -> np.ndarray:
    return v.a.astype(np.float64)


class Model:
    """Evaluates a Program with Triton's semantics; `mem` ends up holding the expected buffers (with `err`)."""

    def __init__(self, p: Program) -> None:
        self.p = p
        self.P = p.P
        data = make_data(p)
        self.mem = [d.reshape(p.P, p.R).copy() for d in data]
        self.memerr = [np.zeros((p.P, p.R)) for _ in data]
        self.initial = data

    def run(self) -> "Model":
        env = {"pid": Val("i32", np.arange(self.P, dtype=np.int32))}
        for b in range(len(self.p.buffers)):
            env[f"p{b}"] = Val(f"*{b}", np.zeros((self.P,), np.int64))
        with np.errstate(all="ignore"):
            self.block(self.p.stmts, env)
        return self

    def block(self, stmts, env) -> None:
        for s in stmts:
            if s[0] == "assign":
                env[s[1]] = self.ev(s[2], env)
            elif s[0] == "store":
                self.store(s[1], s[2], s[3], env)
            else:
                _, var, n, body, _ = s
                before = {k: (v.dt, v.shape) for k, v in env.items()}
                for i in range(n):
                    env[var] = Val("i32", np.full((self.P,), i, np.int32))
                    self.block(body, env)
                    for k, t in before.items():
                        if k in env and (env[k].dt, env[k].shape) != t:
                            raise ModelTypeError(f"loop-carried {k} changes type {t} -> {(env[k].dt, env[k].shape)}")

    # ------------------------------------------------------------------------------------------------ memory
    def _active(self, ptr: Val, mask, env):
        offs = ptr.a.astype(np.int64)
        if mask is None:
            m = np.ones(offs.shape, bool)
        else:
            mv = cast(self.ev(mask, env), "i1")
            mv, pv = broadcast(mv, Val(ptr.dt, offs))
            if pv.a.shape != offs.shape:
                raise ModelTypeError("mask bigger than the pointer block")
            m = np.asarray(mv.a)
        if np.any(m & ((offs < 0) | (offs >= self.p.R))):
            raise Reject("out-of-bounds access")
        return offs, m

    def load(self, n: Node, env) -> Val:
        ptr = self.ev(n.kids[0], env)
        if not ptr.is_ptr:
            raise ModelTypeError("load of a non-pointer")
        b = int(ptr.dt[1:])
        dt = self.p.buffers[b][0]
        offs, m = self._active(ptr, n.kids[1] if len(n.kids) > 1 else None, env)
        idx = np.where(m, offs, 0)
        pidx = np.arange(self.P).reshape((self.P,) + (1,) * (offs.ndim - 1))
        a = self.mem[b][pidx, idx]
        e = self.memerr[b][pidx, idx]
        if len(n.kids) > 1:
            o = materialize(lit_val(n.at["other"], self.P), dt, self.P)
            oa = o.a.reshape((self.P,) + (1,) * (offs.ndim - 1))
            a = np.where(m, a, oa)
            e = np.where(m, e, 0.0)
        return Val(dt, np.asarray(a, dtype=NP[dt]), e if is_float(dt) else None)

    def store(self, pn: Node, vn: Node, mask, env) -> None:
        ptr = self.ev(pn, env)
        if not ptr.is_ptr:
            raise ModelTypeError("store to a non-pointer")
        b = int(ptr.dt[1:])
        dt = self.p.buffers[b][0]
        v = self.ev(vn, env)
        if v.lit is not None:
            v = materialize(v, v.dt, self.P)
        if dt == "i1" and v.dt != "i1":
            v = cast(v, "i8")  # Triton stores through an int1 pointer as int8 bytes
            v = Val("i1", v.a != 0)
        v = cast(v, dt)
        pv = Val(ptr.dt, ptr.a)
        vb, pb = broadcast(v, pv)
        if pb.a.shape != ptr.a.shape:
            raise ModelTypeError("stored value bigger than the pointer block")
        offs, m = self._active(ptr, mask, env)
        a = np.asarray(vb.a)
        e = vb.err() if is_float(dt) else np.zeros(a.shape)
        for p in range(self.P):
            o, mm = offs[p][m[p]], m[p]
            av, ev = a[p][mm], e[p][mm]
            uo, first, inv = np.unique(o, return_index=True, return_inverse=True)
            if len(uo) != len(o):
                if np.any(av != av[first][inv]) or np.any(ev != ev[first][inv]):
                    raise Reject("one store writes different values to one address")
            self.mem[b][p, o] = av
            self.memerr[b][p, o] = ev

    # ----------------------------------------------------------------------------------------------- expressions
    def ev(self, n: Node, env) -> Val:
        op, k, at = n.op, n.kids, n.at
        P = self.P
        if op == "lit":
            return lit_val(at["v"], P)
        if op == "name":
            if at["n"] not in env:
                raise ModelTypeError(f"undefined name {at['n']}")
            return env[at["n"]]
        if op == "pid":
            return Val("i32", np.arange(P, dtype=np.int32))
        if op == "arange":
            a = np.broadcast_to(np.arange(at["n"], dtype=np.int32), (P, at["n"]))
            if at["pos"] == "row":
                a = a[:, :, None]
            elif at["pos"] == "col":
                a = a[:, None, :]
            return Val("i32", a)
        if op == "full":
            v = materialize(lit_val(at["v"], P), at["dt"], P)
            shape = (P,) + tuple(at["shape"])
            a = np.broadcast_to(v.a.reshape((P,) + (1,) * len(at["shape"])), shape)
            return Val(at["dt"], a, None if v.e is None else np.broadcast_to(
                v.e.reshape((P,) + (1,) * len(at["shape"])), shape))
        if op == "ptr":
            o = self.ev(k[0], env)
            if not (is_int(o.dt)) and o.lit is None:
                raise ModelTypeError("pointer offset must be an integer")
            if o.lit is not None:
                o = materialize(o, o.dt, P)
            base = Val(f"*{at['b']}", np.zeros((P,), np.int64))
            bb, oo = broadcast(base, o)
            return Val(bb.dt, oo.a.astype(np.int64))
        if op == "load":
            return self.load(n, env)
        if op == "bin":
            return self.binary(at["o"], self.ev(k[0], env), self.ev(k[1], env))
        if op == "un":
            return self.unary(at["o"], self.ev(k[0], env))
        if op == "where":
            c = cast(self.ev(k[0], env), "i1")
            x, y = self.ev(k[1], env), self.ev(k[2], env)
            ct = computation_type(x.dt, x.lit is not None, y.dt, y.lit is not None, False)
            x, y = materialize(x, ct, P), materialize(y, ct, P)
            c, x, y = broadcast(c, x, y)
            r = np.where(c.a, x.a, y.a)
            e = np.where(c.a, x.err(), y.err()) if is_float(ct) else None
            return Val(ct, r, e)
        if op == "math":
            return self.math(at["f"], self.ev(k[0], env))
        if op == "cast":
            v = self.ev(k[0], env)
            if v.lit is not None:
                v = materialize(v, v.dt, P)
            return cast(v, at["dt"])
        if op == "red":
            return self.reduce(at["kind"], self.ev(k[0], env), at["axis"], at["keep"])
        if op == "dot":
            return self.dot([self.ev(x, env) for x in k], at.get("out"))
        v = self.ev(k[0], env)
        if v.lit is not None:
            raise ModelTypeError(f"{op} of a literal")
        rank = len(v.shape)
        if op == "expand":
            ax = at["axis"]
            ax = 1 if ax == "row" else 0 if ax == "col" else (ax + rank + 1 if ax < 0 else ax)
            if not 0 <= ax <= rank:
                raise ModelTypeError("expand_dims axis")
            f = lambda a: np.expand_dims(a, ax + 1)
        elif op == "bcast":
            shape = tuple(at["shape"])
            if len(shape) != rank or any(s != t and s != 1 for s, t in zip(v.shape, shape)):
                raise ModelTypeError("broadcast_to shape")
            f = lambda a: np.broadcast_to(a, (P,) + shape)
        elif op == "reshape":
            shape = tuple(at["shape"])
            if int(np.prod(shape)) != int(np.prod(v.shape)):
                raise ModelTypeError("reshape size")
            f = lambda a: np.reshape(a, (P,) + shape)
        elif op == "trans":
            if rank != 2:
                raise ModelTypeError("trans of a non-2-D block")
            f = lambda a: np.swapaxes(a, 1, 2)
        else:
            raise ValueError(op)
        return Val(v.dt, f(v.a), None if v.e is None else f(v.e))

    def binary(self, o: str, x: Val, y: Val) -> Val:
        P = self.P
        if x.is_ptr or y.is_ptr:
            raise ModelTypeError("arithmetic on pointers outside ptr nodes")
        if x.lit is not None and y.lit is not None:
            # Two Python literals: Triton's code generator folds them in Python (unbounded ints, Python's own // and
            # %, double floats); the result is a literal again (1 << 31 is the u32 literal 2**31, not an i32 wrap).
            import operator
            ops = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
                   "//": operator.floordiv, "%": operator.mod, "&": operator.and_, "|": operator.or_,
                   "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift, "==": operator.eq,
                   "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
            if o not in ops:
                raise ModelTypeError(f"{o} of two literals")
            try:
                r = ops[o](x.lit, y.lit)
            except (ZeroDivisionError, ValueError, OverflowError):
                raise Reject("literal arithmetic error") from None
            if isinstance(r, int) and not isinstance(r, bool) and not -2**63 <= r < 2**64:
                raise Reject("literal out of range")
            return lit_val(r, P)
        if o in ("<", "<=", ">", ">=", "==", "!=", "maximum", "minimum"):
            # Triton makes a literal a tensor of its own type before these (to_tensor): it then promotes like any
            # value (int8 x < 300 compares in int32, tl.maximum(fp16 x, 0.5) is fp32) and is never out of range.
            x, y = (materialize(v, v.dt, P) if v.lit is not None else v for v in (x, y))
        if o in ("maximum", "minimum"):
            # Triton promotes each bf16 operand of minimum/maximum to fp32 first (the result stays fp32): fp16
            # with bf16 is then fp32, not the fp16 that computation_type gives the two.
            x, y = (cast(v, "fp32") if v.dt == "bf16" else v for v in (x, y))
        dm = o in ("/", "//", "%")
        ct = computation_type(x.dt, x.lit is not None, y.dt, y.lit is not None, dm)
        for v in (x, y):
            if v.lit is not None and v.lit < 0 and ct[0] == "u":
                raise ModelTypeError("unsigned tensor with a negative literal")
        if ct == "i1" and o not in ("&", "|", "^", "==", "!="):
            raise ModelTypeError(f"{o} on bool is not modelled")
        X, Y = broadcast(materialize(x, ct, P), materialize(y, ct, P))
        a, b = X.a, Y.a
        if o in ("&", "|", "^", "<<", ">>"):
            if is_float(ct):
                raise ModelTypeError(f"{o} on floats")
            if o == "&":
                return Val(ct, a & b)
            if o == "|":
                return Val(ct, a | b)
            if o == "^":
                return Val(ct, a ^ b)
            w = bits(ct)
            if np.any(b.astype(np.float64) < 0) or np.any(b.astype(np.float64) >= w):
                raise Reject("shift amount out of range")
            us = np.dtype(f"uint{w}")
            ss = np.dtype(f"int{w}")
            sh = b.astype(us)
            if o == "<<":
                return Val(ct, (a.view(us) << sh).view(NP[ct]))
            if signed(x.dt):  # Triton picks ashr from the left operand's own signedness, before promotion
                return Val(ct, (a.view(ss) >> sh.astype(ss)).view(NP[ct]))
            return Val(ct, (a.view(us) >> sh).view(NP[ct]))
        if o in ("<", "<=", ">", ">=", "==", "!="):
            if is_float(ct):
                ea, eb = X.err(), Y.err()
                tol = ea + eb
                if np.any((tol > 0) & (np.abs(_f64(X) - _f64(Y)) <= tol)):
                    raise Reject("float comparison within the error bound")
            f = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal, "==": np.equal,
                 "!=": np.not_equal}[o]
            return Val("i1", f(a, b))
        if o in ("maximum", "minimum"):
            f = np.maximum if o == "maximum" else np.minimum
            return Val(ct, f(a, b), np.maximum(X.err(), Y.err()) if is_float(ct) else None)
        if is_int(ct):
            if o in ("/",):
                return self.binary("/", cast(X, "fp32"), cast(Y, "fp32"))
            if o == "+":
                return Val(ct, a + b)
            if o == "-":
                return Val(ct, a - b)
            if o == "*":
                return Val(ct, a * b)
            if np.any(b == 0):
                raise Reject("integer division by zero")
            if signed(ct) and np.any((a == int_range(ct)[0]) & (b == -1)):
                raise Reject("integer division overflow")
            r = np.fmod(a, b)  # C remainder (sign of the dividend); exact on integers
            if o == "%":
                return Val(ct, r.astype(NP[ct]))
            return Val(ct, ((a - r) // b).astype(NP[ct]))  # a - r is a multiple of b: exact truncating quotient
        if o == "//":
            raise ModelTypeError("// on floats")
        fa, fb, ea, eb = _f64(X), _f64(Y), X.err(), Y.err()
        u = unit(ct)
        if o == "+":
            r = fa + fb
            return fval(ct, r, ea + eb)
        if o == "-":
            r = fa - fb
            return fval(ct, r, ea + eb)
        if o == "*":
            r = fa * fb
            return fval(ct, r, np.abs(fa) * eb + np.abs(fb) * ea + ea * eb)
        if o == "/":
            if np.any(np.abs(fb) <= 2 * eb) or np.any(fb == 0):
                raise Reject("division by ~0")
            r = fa / fb
            return fval(ct, r, (ea + np.abs(r) * eb) / (np.abs(fb) - eb) + 2 * u * np.abs(r))
        if o == "%":
            if np.any(fb == 0) or np.any(np.abs(fb) <= eb):
                raise Reject("fmod by ~0")
            q = np.trunc(fa / fb)
            if np.any((ea > 0) | (eb > 0)):
                qs = [np.trunc((fa + s * ea) / (fb + t * eb)) for s in (-1, 1) for t in (-1, 1)]
                if any(np.any(qq != q) for qq in qs):
                    raise Reject("fmod near a discontinuity")
                # fmod is continuous between discontinuities: its error is that of a - q*b
            r = np.fmod(fa, fb)
            return fval(ct, r, ea + np.abs(q) * eb)
        raise ValueError(o)

    def unary(self, o: str, x: Val) -> Val:
        if x.lit is not None:
            x = materialize(x, x.dt, self.P)
        if o == "-":
            if x.dt == "i1":
                raise ModelTypeError("- on bool is not modelled")
            if is_float(x.dt):
                return Val(x.dt, -x.a, x.e)
            return Val(x.dt, (np.zeros_like(x.a) - x.a).astype(NP[x.dt]))
        if o == "~":
            if is_float(x.dt):
                raise ModelTypeError("~ on floats")
            return Val(x.dt, ~x.a)
        raise ValueError(o)

    def math(self, f: str, x: Val) -> Val:
        if x.lit is not None:
            raise ModelTypeError("math on a literal")
        dt = x.dt
        if f == "abs":
            if dt == "i1":
                raise ModelTypeError("abs of bool")
            if is_float(dt):
                return Val(dt, np.abs(x.a), x.e)
            return Val(dt, x.a if dt[0] == "u" else np.abs(x.a))
        if dt not in ("fp32", "fp64"):
            raise ModelTypeError(f"tl.{f} needs fp32 or fp64, got {dt}")
        a, e = _f64(x), x.err()
        u = unit(dt)
        if f in ("exp", "exp2"):
            c = 1.0 if f == "exp" else math.log(2)
            if np.any(a * c > 60):
                raise Reject("exp overflow")
            r = np.exp(a * c)
            # fp32 tl.exp on NVIDIA GPUs is Triton's ex2.approx(x * log2(e)): the rounded product (and the rounded
            # constant) are a relative error of up to about 1.4 |x| units in the last place of the result.
            fast = 2 * u * np.abs(a) * r if f == "exp" and dt == "fp32" else 0
            return fval(dt, r, r * np.expm1(e * c) + 4 * u * r + fast)
        if f in ("log", "log2"):
            if np.any(a - e <= 0):
                raise Reject("log of <= 0")
            c = 1.0 if f == "log" else 1 / math.log(2)
            r = np.log(a) * c
            return fval(dt, r, c * e / (a - e) + 4 * u * np.abs(r) + 4 * u)
        if f == "sqrt":
            if np.any(a < 0):
                raise Reject("sqrt of < 0")
            r = np.sqrt(a)
            return fval(dt, r, np.sqrt(a + e) - np.sqrt(np.maximum(a - e, 0)) + 2 * u * r)
        if f == "rsqrt":
            if np.any(a - e <= 0):
                raise Reject("rsqrt of <= 0")
            r = 1 / np.sqrt(a)
            return fval(dt, r, 1 / np.sqrt(a - e) - 1 / np.sqrt(a + e) + 4 * u * r)
        if f in ("sin", "cos"):
            r = np.sin(a) if f == "sin" else np.cos(a)
            return fval(dt, r, e + 4 * u * (1 + np.abs(a)))
        if f == "erf":
            r = np.frompyfunc(math.erf, 1, 1)(a).astype(np.float64)
            return fval(dt, r, 1.13 * e + 4 * u)
        if f == "sigmoid":
            r = 1 / (1 + np.exp(-a))
            return fval(dt, r, e / 4 + 4 * u)
        if f in ("floor", "ceil"):
            g = np.floor if f == "floor" else np.ceil
            if np.any(g(a - e) != g(a + e)):
                raise Reject(f"{f} near an integer")
            return fval(dt, g(a), np.zeros(a.shape))
        raise ValueError(f)

    def reduce(self, kind_: str, v: Val, axis, keep: bool) -> Val:
        if v.lit is not None or v.is_ptr:
            raise ModelTypeError("reduction of a literal or pointer")
        rank = len(v.shape)
        if rank == 0:
            raise ModelTypeError("reduction of a scalar")
        a, e = v.a, v.e
        if axis is None:
            if kind_ in ("argmax", "argmin"):
                raise ModelTypeError("argmax needs an axis")
            a = a.reshape(self.P, -1)
            e = None if e is None else e.reshape(self.P, -1)
            ax = 1
            if keep:
                raise ModelTypeError("keep_dims with axis=None is not modelled")
        else:
            if not -rank <= axis < rank:
                raise ModelTypeError("reduction axis")
            ax = (axis % rank) + 1
        dt = v.dt
        if dt == "i1":
            raise ModelTypeError("reductions of bool are not modelled")
        n = a.shape[ax]

        def fin(r, rd, re=None):
            if keep:
                r = np.expand_dims(r, ax)
                re = None if re is None else np.expand_dims(re, ax)
            return Val(rd, r, re)

        if kind_ == "sum":
            rd = ("i32" if signed(dt) else "u32") if is_int(dt) and bits(dt) < 32 else dt
            vv = cast(Val(dt, a, e), rd)
            if is_int(rd):
                return fin(np.sum(vv.a, axis=ax, dtype=NP[rd]), rd)
            x = vv.a.astype(np.float64)
            s = np.sum(x, axis=ax)
            err = np.sum(vv.err(), axis=ax) + n * unit(rd) * np.sum(np.abs(x), axis=ax)
            r = fval(rd, s, err)
            return fin(r.a, rd, r.e)
        if dt == "bf16":
            dt = "fp32"
            a = a.astype(np.float32)
        if kind_ in ("max", "min"):
            rd = dt if bits(dt) >= 32 else ("fp32" if is_float(dt) else "i32")
            vv = cast(Val(dt, a, e), rd)
            f = np.max if kind_ == "max" else np.min
            return fin(f(vv.a, axis=ax), rd, None if not is_float(rd) else np.max(vv.err(), axis=ax))
        f = np.argmax if kind_ == "argmax" else np.argmin
        idx = f(a, axis=ax)
        if is_float(dt) and e is not None and np.any(e > 0):
            best = np.take_along_axis(a, np.expand_dims(idx, ax), ax).astype(np.float64)
            em = np.max(e, axis=ax, keepdims=True)
            x = a.astype(np.float64)
            close = (np.abs(x - best) <= 2 * em) if True else None
            if np.any(np.sum(close, axis=ax) > 1):
                raise Reject("argmax/argmin with a near tie")
        return fin(idx.astype(np.int32), "i32")

    def dot(self, vs: list, out) -> Val:
        a, b = vs[0], vs[1]
        if a.dt != b.dt or a.dt not in ("i8", "u8", "fp16", "bf16", "fp32", "fp64"):
            raise ModelTypeError(f"dot of {a.dt} and {b.dt}")
        if len(a.shape) != 2 or len(b.shape) != 2 or a.shape[1] != b.shape[0]:
            raise ModelTypeError("dot shapes")
        M, K = a.shape
        N = b.shape[1]
        if min(M, N, K) < 16:
            raise ModelTypeError("dot with M, N or K < 16")
        if a.dt in ("i8", "u8"):
            if a.dt != "i8":
                raise ModelTypeError("only int8 dot")
            rd = "i32"
        elif out == "bf16":
            raise ModelTypeError("dot out_dtype bf16")
        elif a.dt in ("fp32", "bf16"):
            rd = "fp32"
        elif a.dt == "fp64":
            rd = "fp64"
        else:
            rd = out or "fp32"
        acc = vs[2] if len(vs) > 2 else None
        if acc is not None and (acc.dt != rd or acc.dt != (out or "fp32") or acc.shape != (M, N)):
            raise ModelTypeError("dot acc type")
        if rd == "i32":
            r = np.matmul(a.a.astype(np.int64), b.a.astype(np.int64))
            if acc is not None:
                r = r + acc.a.astype(np.int64)
            return Val("i32", r.astype(np.int32))
        fa, fb = _f64(a), _f64(b)
        aa, ab = np.abs(fa), np.abs(fb)
        r = np.matmul(fa, fb)
        e = np.matmul(aa, b.err()) + np.matmul(a.err(), ab) + 2 * K * unit("fp32" if rd != "fp64" else "fp64") * \
            np.matmul(aa, ab)
        if acc is not None:
            r = r + _f64(acc)
            # Each of the K steps rounds a partial sum that includes the accumulator: its magnitude counts too.
            e = e + acc.err() + 2 * K * unit("fp32" if rd != "fp64" else "fp64") * np.abs(_f64(acc))
        return fval(rd, r, e)
