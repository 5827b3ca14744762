"""The fuzzer's random kernel generator: `generate(seed, index)` -> a well-defined Program (see fuzz_ir).

Every candidate expression is typed (and its values checked) by evaluating it with the numpy model as it is built, so
the generator only emits kernels Triton accepts; a whole kernel the model rejects is redrawn from the next sub-seed.
Every sixth kernel is a focused one (max/min over the shapes of issue 6, the load-then-store aliasing pattern, int8
dot, signed >> unsigned, argmax over [32, 1]), so a small fixed-seed slice contains them.
"""
from __future__ import annotations

import random

import numpy as np

from .fuzz_ir import (FLOATS, INTS, SUBNORMAL_SCALE, Arange, Bin, Lit, Model, ModelTypeError, Name, Node, Program,
                      Reject, bits, is_float, is_int, signed)

R = 1024  # elements per program per buffer
SHAPES_1D = [16, 32, 64, 128, 256]
SHAPES_2D = [(16, 16), (16, 32), (32, 16), (32, 1), (1, 32), (4, 8), (8, 4), (2, 64), (32, 32), (8, 8), (16, 4)]
DT_WEIGHTS = {"i32": 4, "fp32": 5, "fp16": 2, "bf16": 2, "fp64": 2, "i8": 2, "i16": 1, "i64": 2, "u8": 1, "u16": 1,
              "u32": 2, "u64": 1, "i1": 1}
ARITH = ["+", "-", "*", "/", "//", "%", "maximum", "minimum"]
BITWISE = ["&", "|", "^", "<<", ">>"]
CMP = ["<", "<=", ">", ">=", "==", "!="]
MATH = ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "sin", "cos", "floor", "ceil", "sigmoid", "erf"]
FOCI = ["minmax", "alias", "dot8", "shift", "argcol", "alias_views"]


def set_no_bf16() -> None:
    """Leaves bf16 out of the generated dtypes (no torch to pass bf16 buffers, or Triton's interpreter, whose bf16
    support is incomplete)."""
    DT_WEIGHTS.pop("bf16", None)
    FLOATS_NO = [f for f in FLOATS if f != "bf16"]
    globals()["FOCUS_FLOATS"] = FLOATS_NO


FOCUS_FLOATS = list(FLOATS)


class Retry(Exception):
    pass


class Gen:
    def __init__(self, rng: random.Random, focus: str | None = None) -> None:
        self.r = rng
        self.focus = focus
        self.names: dict[str, tuple] = {}  # name -> (dtype, shape) visible at this point
        self.counter = 0
        self.loopvar: str | None = None

    # ------------------------------------------------------------------------------------------------ helpers
    def pick_dt(self, want=None) -> str:
        pool = [d for d in DT_WEIGHTS if want is None or (want == "int" and is_int(d)) or
                (want == "float" and is_float(d)) or (want == "bool" and d == "i1")]
        return self.r.choices(pool, [DT_WEIGHTS[d] for d in pool])[0]

    def typ(self, node: Node):
        """(dtype, shape) of node, checked by evaluating it with the model in the scratch environment."""
        try:
            v = self.model.ev(node, self.env)
        except (Reject, ModelTypeError, ZeroDivisionError, OverflowError, ValueError, IndexError) as e:
            raise Retry(str(e))
        return v.dt, v.shape

    def fresh(self) -> str:
        self.counter += 1
        return f"t{self.counter}"

    def buffer(self, want=None) -> int:
        cands = [i for i, (dt, _) in enumerate(self.buffers) if want is None or
                 (want == "int" and is_int(dt)) or (want == "float" and is_float(dt)) or (want == "bool" and dt == "i1")]
        if not cands:
            dt = self.pick_dt(want)
            self.buffers.append((dt, self.r.choice(["small", "small", "wide", "pos", "tiny"])))
            self.model.mem.append(np.zeros((self.P, R), dtype=np.float64).astype(
                __import__("tessel.tools.fuzz_ir", fromlist=["NP"]).NP[dt]))
            self.model.memerr.append(np.zeros((self.P, R)))
            b = len(self.buffers) - 1
            from .fuzz_ir import Val
            self.env[f"p{b}"] = Val(f"*{b}", np.zeros((self.P,), np.int64))
            return b
        return self.r.choice(cands)

    # -------------------------------------------------------------------------------------------------- views
    def offsets(self, shape, inj=True, extra=0) -> tuple[Node, int]:
        """An int32 offset block of `shape` and its largest value (before `base`)."""
        r = self.r
        if len(shape) == 0:
            return None, 0
        if len(shape) == 1:
            n = shape[0]
            s = r.choice([1, 1, 1, 1, 2, 3, -1] + ([0] if not inj else []))
            if s == 0:
                return Bin("*", Arange(n), Lit(0)), 0
            if s == -1:
                return Bin("-", Lit(n - 1), Arange(n)), n - 1
            return (Arange(n) if s == 1 else Bin("*", Arange(n), Lit(s))), (n - 1) * s
        M, N = shape
        lay = r.choice(["row", "row", "row", "pad", "col"] + ([] if inj else ["b0", "b1"]))
        s0, s1 = {"row": (N, 1), "pad": (N + r.choice([1, 3, 8]), 1), "col": (1, M), "b0": (0, 1),
                  "b1": (1, 0)}[lay]
        t0 = Arange(M, "row") if s0 == 1 else Bin("*", Arange(M, "row"), Lit(s0))
        t1 = Arange(N, "col") if s1 == 1 else Bin("*", Arange(N, "col"), Lit(s1))
        return Bin("+", t0, t1), (M - 1) * s0 + (N - 1) * s1

    def ptr(self, shape, b=None, inj=True, want=None, transform=True) -> Node:
        r = self.r
        if b is None:
            b = self.buffer(want)
        step = 0
        if self.loopvar is not None and r.random() < 0.5:
            step = r.choice([1, 4, 16])
        span_extra = step * (self.loopn - 1) if step else 0
        if transform and len(shape) == 2 and r.random() < 0.2:
            M, N = shape
            kind = r.choice(["trans", "reshape"] + ([] if inj else ["bcast"]))
            if kind == "trans":
                return Node("trans", [self.ptr((N, M), b, inj, transform=False)])
            if kind == "reshape":
                return Node("reshape", [self.ptr((M * N,), b, inj, transform=False)], shape=(M, N))
            return Node("bcast", [Node("expand", [self.ptr((N,), b, inj, transform=False)], axis="col")],
                        shape=(M, N))
        offs, span = self.offsets(shape, inj)
        base = r.randrange(0, max(1, R - span - span_extra))
        if offs is None:
            o = Lit(base)
        else:
            o = Bin("+", offs, Lit(base)) if base else offs
        if step:
            o = Bin("+", o, Bin("*", Name(self.loopvar), Lit(step)) if step != 1 else Name(self.loopvar))
        return Node("ptr", [o], b=b)

    def mask_for(self, shape):
        r = self.r
        if not shape:
            return None
        if len(shape) == 1:
            return Bin(r.choice(["<", ">="]), Arange(shape[0]), Lit(r.randrange(0, shape[0] + 1)))
        ax = r.randrange(2)
        return Bin(r.choice(["<", ">="]), Arange(shape[ax], "row" if ax == 0 else "col"),
                   Lit(r.randrange(0, shape[ax] + 1)))

    def load(self, shape, want=None, b=None) -> Node:
        p = self.ptr(shape, b, inj=False, want=want)
        if shape and self.r.random() < 0.2:
            dt = self.buffers[int(self.typ(p)[0][1:])][0]
            other = self.r.choice([0, 1]) if not is_float(dt) else self.r.choice([0.0, 1.5, -2.0])
            if dt == "i1":
                other = self.r.choice([True, False])
            return Node("load", [p, self.mask_for(shape)], other=other)
        return Node("load", [p])

    # -------------------------------------------------------------------------------------------- expressions
    def leaf(self, shape, want=None) -> Node:
        r = self.r
        x = r.random()
        names = [n for n, (dt, s) in self.names.items() if s == tuple(shape) and self._fits(dt, want)]
        if names and x < 0.3:
            return Name(r.choice(names))
        if want in (None, "int") and x < 0.4 and shape:
            if len(shape) == 1:
                return Arange(shape[0])
            return Bin("+", Bin("*", Arange(shape[0], "row"), Lit(shape[1])), Arange(shape[1], "col"))
        if want == "bool" and x < 0.6:
            a = self.leaf(shape, r.choice(["int", "float"]))
            return Bin(r.choice(CMP), a, self.leaf(shape, None))
        if x < 0.45 and shape:
            dt = self.pick_dt(want)
            v = r.choice([1, 2, 3, 7]) if not is_float(dt) else r.choice([0.5, 1.5, -2.0, 3.0])
            if dt == "i1":
                v = r.choice([True, False])
            return Node("full", shape=tuple(shape), v=v, dt=dt)
        return self.load(shape, want)

    def _fits(self, dt, want):
        if dt.startswith("*"):
            return False
        return want is None or (want == "int" and is_int(dt)) or (want == "float" and is_float(dt)) or \
            (want == "bool" and dt == "i1")

    def literal(self, want) -> Node:
        if want == "float" or (want is None and self.r.random() < 0.5):
            return Lit(self.r.choice([0.5, 1.5, 2.0, 3.0, 0.25, -1.0, 4.0]))
        if want == "bool":
            return Lit(self.r.choice([True, False]))
        return Lit(self.r.choice([1, 2, 3, 5, 7, 100]))

    def operand(self, shape, want, depth) -> Node:
        """A node that broadcasts to `shape`: a literal, a lower-rank block, a scalar, or a full block."""
        r = self.r
        x = r.random()
        if x < 0.15:
            return self.literal(want)
        if x < 0.3 and shape:
            if len(shape) == 2:
                M, N = shape
                c = r.randrange(4)
                if c == 0:
                    return self.expr((N,), want, depth - 1)
                if c == 1:
                    return Node("expand", [self.expr((M,), want, depth - 1)], axis="row")
                if c == 2:
                    return self.reduction((M, N), want, axis=r.choice([0, 1, -1]), keep=True)
                return self.scalar(want)
            return self.scalar(want)
        return self.expr(shape, want, depth - 1)

    def scalar(self, want) -> Node:
        r = self.r
        c = r.randrange(3)
        if c == 0 and want in (None, "int"):
            return Node("pid")
        if c == 1:
            n = r.choice(SHAPES_1D)
            return self.reduction((n,), want, axis=None if r.random() < 0.5 else 0)
        return self.load((), want)

    def reduction(self, in_shape, want, axis, keep=False) -> Node:
        r = self.r
        kinds = {"int": ["sum", "max", "min", "argmax", "argmin"], "float": ["sum", "max", "min"],
                 None: ["sum", "max", "min", "argmax", "argmin"], "bool": None}[want]
        if kinds is None:
            return Bin(r.choice(CMP), self.reduction(in_shape, None, axis, keep), self.literal("int"))
        k = r.choice(kinds)
        inner = "float" if want == "float" else r.choice(["int", "float"]) if k.startswith("arg") or want is None \
            else "int"
        x = self.expr(in_shape, inner, r.randrange(2))
        if k.startswith("arg") and axis is None:
            axis = 0 if len(in_shape) == 1 else r.choice([0, 1])
        return Node("red", [x], kind=k, axis=axis, keep=keep)

    def expr(self, shape, want=None, depth=2) -> Node:
        for _ in range(8):
            try:
                n = self._expr(tuple(shape), want, depth)
                dt, s = self.typ(n)
                if s != tuple(shape) or not self._fits(dt, want):
                    raise Retry("shape/kind")
                return n
            except Retry:
                continue
        return self.load(shape, want)

    def _expr(self, shape, want, depth) -> Node:
        r = self.r
        if depth <= 0 or r.random() < 0.2:
            return self.leaf(shape, want)
        options = {"int": ["arith", "arith", "bitwise", "shift", "cast", "red", "unary", "where", "view"],
                   "float": ["arith", "arith", "math", "math", "cast", "red", "unary", "where", "view", "dot"],
                   "bool": ["cmp", "cmp", "boolop", "cast"],
                   None: ["arith", "arith", "bitwise", "shift", "math", "cast", "red", "unary", "where", "view", "cmp",
                          "dot"]}[want]
        c = r.choice(options)
        if c == "arith":
            o = r.choice(ARITH)
            a = self.expr(shape, want if want != "bool" else None, depth - 1)
            b = self.operand(shape, want, depth)
            ta, tb = self.typ(a)[0], self.typ(b)[0] if b.op != "lit" else None
            if o in ("//", "%", "/") and (tb is None or not is_float(tb)) and (b.op != "lit"):
                if o == "//" and (is_float(ta) or (tb and is_float(tb))):
                    o = "/"
                if tb and not is_float(tb) and not is_float(ta):
                    if (signed(ta) or ta == "i1") != (signed(tb) or tb == "i1"):
                        b = Node("cast", [b], dt=ta)
                    b = Bin("|", b, Lit(1))
                    if o == "%" and signed(ta) and r.random() < 0.5:
                        b = Bin("+", Bin("&", b, Lit(7)), Lit(1))
            elif o in ("/", "%") and tb is not None and is_float(tb) and r.random() < 0.7:
                b = Bin("+", Node("math", [b], f="abs"), Lit(0.5))
            elif o == "//" and b.op == "lit":
                if is_float(ta) or isinstance(b.at["v"], float):
                    o = "/"
                elif b.at["v"] == 0:
                    b = Lit(3)
            if want == "int" and o == "/":
                o = "//"
            if ta == "i1" or tb == "i1":
                raise Retry("bool arithmetic")
            if is_float(ta) and o in ("+", "-", "*", "/") and r.random() < 0.15:
                # Into the subnormal range: results that round there (and must not flush to zero).
                a = Bin("*", a, Lit(SUBNORMAL_SCALE[ta]))
            return Bin(o, a, b)
        if c in ("bitwise", "shift"):
            a = self.expr(shape, "int", depth - 1)
            b = self.operand(shape, "int", depth)
            if b.op == "lit" and isinstance(b.at["v"], float):
                b = Lit(3)
            if c == "bitwise":
                return Bin(r.choice(BITWISE[:3]), a, b)
            o = r.choice(["<<", ">>", ">>"])
            ct = self.typ(Bin("+", a, b))[0]
            if b.op == "lit":
                b = Lit(r.randrange(0, bits(ct)))
            else:
                b = Bin("&", b, Lit(bits(ct) - 1))
            return Bin(o, a, b)
        if c == "cmp":
            a = self.expr(shape, r.choice(["int", "float"]), depth - 1)
            return Bin(r.choice(CMP), a, self.operand(shape, None, depth))
        if c == "boolop":
            return Bin(r.choice(["&", "|", "^"]), self.expr(shape, "bool", depth - 1),
                       self.expr(shape, "bool", depth - 1))
        if c == "cast":
            src = r.choice([None, "int", "float"])
            x = self.expr(shape, src, depth - 1)
            return Node("cast", [x], dt=self.pick_dt(want))
        if c == "unary":
            x = self.expr(shape, want, depth - 1)
            dt = self.typ(x)[0]
            if dt == "i1":
                raise Retry("unary on bool")
            return Node("un", [x], o="~" if (not is_float(dt) and r.random() < 0.5) else "-")
        if c == "where":
            cnd = self.operand(shape, "bool", depth)
            if cnd.op == "lit":
                cnd = self.expr(shape, "bool", depth - 1)
            return Node("where", [cnd, self.expr(shape, want, depth - 1), self.operand(shape, want, depth)])
        if c == "math":
            f = r.choice(MATH)
            x = self.expr(shape, "float", depth - 1)
            dt = self.typ(x)[0]
            if f != "abs" and dt not in ("fp32", "fp64"):
                x = Node("cast", [x], dt=r.choice(["fp32", "fp32", "fp64"]))
            dt = self.typ(x)[0]
            if f in ("log", "log2", "sqrt", "rsqrt"):
                if r.random() < 0.25:  # subnormal operands, in (scale, 5 scale]
                    scale = Lit(SUBNORMAL_SCALE[dt])
                    x = Bin("+", Bin("*", Node("math", [x], f="abs"), scale), scale)
                else:
                    x = Bin("+", Node("math", [x], f="abs"), Lit(1.0))
            elif f in ("exp", "exp2") and r.random() < 0.3:
                # Results in the subnormal range: e^(x - 90) in fp32, e^(x - 712) in fp64 (2^(x - 130), 2^(x - 1030)).
                shift = {"exp": {"fp32": 90.0, "fp64": 712.0}, "exp2": {"fp32": 130.0, "fp64": 1030.0}}[f][dt]
                x = Bin("-", Node("bin", [x, Lit(4.0)], o="minimum"), Lit(shift))
            elif f in ("exp", "exp2") and r.random() < 0.7:
                x = Node("bin", [x, Lit(8.0)], o="minimum")
            return Node("math", [x], f=f)
        if c == "red":
            if len(shape) == 0:
                n = r.choice(SHAPES_1D)
                return self.reduction((n,), want, axis=None if r.random() < 0.5 else 0)
            if len(shape) == 1:
                N = shape[0]
                K = r.choice([1, 2, 4, 8, 16, 32])
                if N * K > 1024:
                    K = 1024 // N
                ax = r.choice([0, 1, -1, -2])
                ins = (K, N) if ax in (0, -2) else (N, K)
                return self.reduction(ins, want, ax)
            M, N = shape
            ax = r.choice([0, 1])
            red = self.reduction(shape, want, ax, keep=True)
            return Node("bcast", [red], shape=shape)
        if c == "view":
            if len(shape) == 2 and r.random() < 0.5:
                return Node("trans", [self.expr(shape[::-1], want, depth - 1)])
            if len(shape) >= 1:
                n = int(np.prod(shape))
                other = [s for s in SHAPES_2D if s[0] * s[1] == n] + ([(n,)] if len(shape) == 2 else [])
                if other:
                    return Node("reshape", [self.expr(r.choice(other), want, depth - 1)], shape=shape)
            raise Retry("no view")
        if c == "dot":
            if len(shape) != 2 or min(shape) < 16:
                raise Retry("dot shape")
            return self.dot(shape, depth)
        raise Retry(c)

    def dot(self, shape, depth, dt=None, out=None):
        r = self.r
        M, N = shape
        K = r.choice([k for k in (16, 32) if k * max(M, N) <= 1024])
        dt = dt or r.choice([d for d in ["fp32", "fp16", "i8", "bf16"] if d in DT_WEIGHTS])
        want = "int" if dt == "i8" else "float"
        a = self.expr((M, K), want, min(depth - 1, 1))
        b = self.expr((K, N), want, min(depth - 1, 1))
        if self.typ(a)[0] != dt:
            a = Node("cast", [a], dt=dt)
        if self.typ(b)[0] != dt:
            b = Node("cast", [b], dt=dt)
        kids = [a, b]
        at = {}
        if dt == "fp32":
            at["ieee"] = True
        if out is None and dt == "fp16" and r.random() < 0.3:
            out = "fp16"
        rd = "i32" if dt == "i8" else (out or "fp32")
        with_acc = r.random() < 0.3
        if with_acc and rd != "fp32":
            out = rd  # Triton wants acc's type spelled as out_dtype
        if out:
            at["out"] = out
        if with_acc:
            acc = self.expr((M, N), None, 0)
            if self.typ(acc)[0] != rd:
                acc = Node("cast", [acc], dt=rd)
            kids.append(acc)
        return Node("dot", kids, **at)

    # -------------------------------------------------------------------------------------------- statements
    def assign(self, node: Node, stmts: list, name=None) -> str:
        name = name or self.fresh()
        dt, shape = self.typ(node)
        self.env[name] = self.model.ev(node, self.env)
        self.names[name] = (dt, shape)
        stmts.append(("assign", name, node))
        return name

    def store(self, name: str, stmts: list, inj=True):
        dt, shape = self.names[name]
        p = self.ptr(shape, inj=inj)
        mask = self.mask_for(shape) if self.r.random() < 0.2 else None
        st = ("store", p, Name(name), mask)
        try:
            self.model.store(p, Name(name), mask, self.env)
        except (Reject, ModelTypeError) as e:
            raise Retry(str(e))
        stmts.append(st)

    def main_shape(self):
        r = self.r
        return (r.choice(SHAPES_1D),) if r.random() < 0.4 else r.choice(SHAPES_2D)

    def body(self, stmts: list, shape, n_assign: int, depth: int):
        r = self.r
        for _ in range(n_assign):
            s = shape
            if len(shape) == 2 and r.random() < 0.3:
                s = r.choice([shape[::-1], (shape[0],), (shape[1],)])
            try:
                name = self.assign(self.expr(s, r.choice([None, None, "int", "float"]), depth), stmts)
            except Retry:
                continue
            if r.random() < 0.4:
                try:
                    self.store(name, stmts)
                except Retry:
                    pass

    def loop(self, stmts: list, shape):
        r = self.r
        n = r.choice([1, 2, 3, 4])
        var = "i"
        dt = r.choice(["fp32", "i32", "fp16", "i64", "fp64"])
        acc = self.fresh()
        init = Node("full", shape=shape, v=0 if not is_float(dt) else 0.0, dt=dt) if r.random() < 0.6 else \
            Node("cast", [self.leaf(shape)], dt=dt)
        self.assign(init, stmts, acc)
        saved = dict(self.names)
        self.loopvar, self.loopn = var, n
        from .fuzz_ir import Val
        self.env[var] = Val("i32", np.zeros((self.P,), np.int32))
        body: list = []
        self.body(body, shape, r.randrange(0, 3), 2)
        t = self.expr(shape, "int" if is_int(dt) else None, 2)
        comb = r.choice(["+", "maximum", "minimum", "^"] if is_int(dt) else ["+", "maximum", "minimum", "*"])
        upd = Bin(comb, Name(acc), t) if comb != "*" else Bin("+", Bin("*", Name(acc), Lit(0.5)), t)
        upd = Node("cast", [upd], dt=dt)
        self.assign(upd, body, acc)
        if r.random() < 0.3:
            try:
                self.store(acc, body)
            except Retry:
                pass
        self.loopvar = None
        self.names = saved
        self.names[acc] = (dt, shape)
        stmts.append(("for", var, n, body, r.random() < 0.3))
        return acc

    def program(self, seed: int) -> Program:
        r = self.r
        self.P = r.choice([1, 1, 1, 2, 3])
        self.buffers = [(self.pick_dt(), r.choice(["small", "wide", "pos", "small"])) for _ in range(r.randrange(2, 5))]
        self.prog = Program(self.buffers, self.P, R, [], seed)
        self.model = Model(self.prog)
        self.env = {"pid": self.model.ev(Node("pid"), {})}
        from .fuzz_ir import Val
        for b in range(len(self.buffers)):
            self.env[f"p{b}"] = Val(f"*{b}", np.zeros((self.P,), np.int64))
        stmts: list = []
        if self.focus:
            getattr(self, "focus_" + self.focus)(stmts)
            self.model = Model(self.prog)  # the foci chose buffer types after the scratch model was made
        else:
            shape = self.main_shape()
            self.body(stmts, shape, r.randrange(2, 6), r.choice([2, 3, 3, 4]))
            if r.random() < 0.3:
                try:
                    self.loop(stmts, shape)
                except Retry:
                    pass
        # observe the last values
        assigned = [s[1] for s in stmts if s[0] == "assign"]
        for name in [n for n in assigned if not self.names.get(n, ("*",))[0].startswith("*")][-2:]:
            if name in self.names:
                try:
                    self.store(name, stmts)
                except Retry:
                    pass
        self.prog.stmts = stmts
        return self.prog

    # ------------------------------------------------------------------------------------------------- foci
    def setbuf(self, b, dt, kind):
        self.buffers[b] = (dt, kind)
        self.model = Model(self.prog)

    def focus_minmax(self, stmts):
        r = self.r
        shape = r.choice([(16, 16), (16, 32), (128,), (256,), (32, 16)])
        dt = r.choice([d for d in ["fp32", "fp64", "bf16", "fp16", "i32", "u8"] if d in DT_WEIGHTS])
        self.setbuf(0, dt, r.choice(["wide", "small"]))
        x = self.assign(Node("load", [self.ptr(shape, 0, transform=False)]), stmts)
        axis = r.choice([0, 0, 1, None]) if len(shape) == 2 else r.choice([0, None])
        k = r.choice(["max", "min"])
        self.assign(Node("red", [Name(x)], kind=k, axis=axis, keep=False), stmts)
        if r.random() < 0.5:
            self.assign(Node("red", [Name(x)], kind="max" if k == "min" else "min", axis=axis,
                             keep=axis is not None and r.random() < 0.5), stmts)

    def focus_alias(self, stmts):
        """v = load(z[m, n]) + load(z[m*W])[:, None]; store(z[m, n], v): the stores overwrite what the loads read."""
        r = self.r
        M, N = r.choice([(4, 4), (8, 4), (16, 8), (4, 16), (16, 16)])
        W = r.choice([N, N, N + 1, 2 * N])
        dt = r.choice(["fp32", "i32", "fp64", "i64", "fp16"])
        self.setbuf(0, dt, "small")
        zp = self.assign(Node("ptr", [Bin("+", Bin("*", Arange(M, "row"), Lit(W)), Arange(N, "col"))], b=0), stmts)
        col = Node("ptr", [Bin("*", Arange(M), Lit(W))], b=0)
        v = Bin("+", Node("load", [Name(zp)]), Node("expand", [Node("load", [col])], axis="row"))
        if r.random() < 0.5:
            v = Bin(r.choice(["*", "-", "maximum"]), v, Node("load", [Name(zp)]))
        vn = self.assign(v, stmts)
        stmts.append(("store", Name(zp), Name(vn), None))
        self.model.store(Name(zp), Name(vn), None, self.env)

    def focus_alias_views(self, stmts):
        """In-place updates through transposed / reshaped / broadcast views of the same region."""
        r = self.r
        M, N = r.choice([(4, 8), (8, 8), (16, 16), (8, 16)])
        dt = r.choice(["fp32", "i32", "i16", "fp64"])
        self.setbuf(0, dt, "small")
        base = Bin("+", Bin("*", Arange(M, "row"), Lit(N)), Arange(N, "col"))
        v = self.assign(Node("load", [Node("ptr", [base], b=0)]), stmts)
        kind = r.choice(["trans", "reshape", "expand", "shift"])
        if kind == "trans" and M == N:
            tp = Node("trans", [Node("ptr", [base], b=0)])
            stmts.append(("store", tp, Bin("+", Name(v), Lit(1)), None))
        elif kind == "reshape":
            flat = Node("ptr", [Arange(M * N)], b=0)
            stmts.append(("store", Node("reshape", [flat], shape=(N, M)),
                          Node("reshape", [Bin("*", Name(v), Lit(2))], shape=(N, M)), None))
        elif kind == "expand":
            row = Node("load", [Node("ptr", [Arange(N)], b=0)])
            stmts.append(("store", Node("ptr", [base], b=0), Bin("-", Name(v), Node("expand", [row], axis="col")),
                          None))
        else:
            sh = Node("ptr", [Bin("+", base, Lit(r.choice([1, N])))], b=0)
            stmts.append(("store", sh, Bin("+", Node("load", [Node("ptr", [base], b=0)]), Lit(1)), None))
        w = self.assign(Node("load", [Node("ptr", [base], b=0)]), stmts)
        self.names[w] = (dt, (M, N))

    def focus_dot8(self, stmts):
        r = self.r
        M, N = r.choice([(16, 16), (32, 16), (16, 32)])
        self.setbuf(0, "i8", r.choice(["wide", "small"]))
        self.setbuf(1, "i32", "small")
        a = Node("load", [self.ptr((M, 16), 0, transform=False)])
        b = Node("load", [self.ptr((16, N), 0, transform=False)])
        at = {"out": "i8"} if r.random() < 0.6 else {}
        self.assign(Node("dot", [a, b], **at), stmts)

    def focus_shift(self, stmts):
        r = self.r
        shape = r.choice([(64,), (16, 16)])
        sdt = r.choice(["i8", "i16", "i32", "i64"])
        udt = r.choice(["u8", "u16", "u32", "u64"])
        self.setbuf(0, sdt, "wide")
        self.setbuf(1, udt, "wide")
        x = Node("load", [self.ptr(shape, 0, transform=False)])
        s = Node("load", [self.ptr(shape, 1, transform=False)])
        ct = self.typ(Bin("+", x, s))[0]
        self.assign(Bin(">>", x, Bin("&", s, Lit(bits(ct) - 1))), stmts)

    def focus_argcol(self, stmts):
        r = self.r
        dt = r.choice([d for d in ["fp32", "i32", "fp16", "bf16"] if d in DT_WEIGHTS])
        self.setbuf(0, dt, "small")
        n = r.choice([32, 32, 16, 64])
        x = Node("load", [Node("ptr", [Bin("+", Arange(n, "row"), Lit(r.randrange(0, 64)))], b=0)])
        self.assign(Node("red", [x], kind=r.choice(["argmax", "argmin"]), axis=0, keep=r.random() < 0.3), stmts)


def generate(seed: int, index: int, attempts: int = 40) -> tuple[Program, Model]:
    """The index-th kernel of a run: deterministic in (seed, index); the model has already run it."""
    focus = FOCI[(index // 6) % len(FOCI)] if index % 6 == 0 else None
    last = None
    for attempt in range(attempts):
        sub = (seed * 1_000_003 + index) * 101 + attempt
        g = Gen(random.Random(sub), focus)
        try:
            prog = g.program(sub)
            if not any(s[0] == "store" for s in prog.stmts):
                raise Reject("nothing stored")
            return prog, Model(prog).run()
        except (Reject, Retry, ModelTypeError) as e:
            last = e
            continue
    raise RuntimeError(f"could not generate kernel {index} of seed {seed}: {last}")
