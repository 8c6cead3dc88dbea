"""Random structured programs as a small tree that renders to MLIR text.

A program is `@f` (marked `tapeflow.autodiff`) plus helper functions it calls, over

    @f(%x: memref<NxT>, %y: memref<NxT>, %s: T, %n: index, %cnt: memref<Kxindex>) -> T

with T = f64 or f32 chosen at render time, so one tree gives an f64 program and its f32
twin. Statements are nodes (`Op`, `For`, `If`, `While`) that refer to values by name;
the renderer substitutes a default (`%s` for floats, `%c0` for indices) for a name that
is not in scope, so any subset of the statements still renders to a valid program: this
is what lets `minimize.py` drop statements and loops freely.

Every index used to access memory is in bounds by construction: induction variables and
while-loop counters stay below N, and an index expression `i + c` is only formed when
the largest value of `i` plus `c` is below N (`Gen.imax`).

The same generator makes the simulator tests' programs (`SIM_FEATURES`, arguments from
`sim_arguments`): the `SIM_ONLY` features add what the gradient checks cannot take
(indices out of bounds, NaN and infinities, a 2-D memref, a buffer of the other float
type, i64 arithmetic with INT64 edges and an i64 result), so runs there may fail: the simulators
must then fail alike. They are never on in the fuzzer (`FEATURES` does not hold them).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field

N = 4  # elements of %x, %y and the scratch buffer
K = 4  # elements of %cnt (data-dependent trip counts, each in [0, N])

# What the generator may use, and (the last two) which checks run on which programs.
# `DEFAULT_FEATURES` is what CI runs: the `KNOWN_BUGS` are off there (with the issue that
# tracks the bug); `--features all` or `--enable NAME` turns them on to check a fix.
FEATURES = {
    "for": "scf.for with iter_args",
    "if": "scf.if with a result",
    "while": "scf.while (argument + counter)",
    "select": "arith.cmpf + arith.select, maximumf/minimumf",
    "math": "sin, cos, tanh, exp, sqrt/log/div of positive values, absf",
    "store": "in-place memref.store into the inputs",
    "alloc": "a local buffer (memref.alloc + memref.copy of %y)",
    "call": "func.call of helper functions (inlined by the AD pass)",
    "step": "loop steps 2 and 3",
    "lower-bound": "loop lower bounds 1 and 2",
    "zero-trip": "loops whose upper bound may not exceed the lower bound",
    "dynamic": "upper bounds from the %n argument",
    "growable": "upper bounds loaded from %cnt inside loops (growable tapes)",
    "index-math": "indices i + c and int-to-float conversions of induction variables",
    "int-math": "i64 arithmetic on induction variables (addi, muli, xori, divsi, remsi,"
    " floordivsi...) deciding an arith.select",
    "int-edge": "i64 operands INT64_MIN/INT64_MAX (wrapping), divisor -1",
    "f32": "the f32 twin (gradients compared with the f64 program's)",
    "sim-growable": "the simulator check on programs with a growable tape (any scf.while,"
    " or a trip count known only inside the loop nest)",
    "stream-lower-bound": "tapeflow-stream (and the whole pipeline) on programs with a loop"
    " starting above 0",
    "triangular": "loops bounded by an enclosing loop's counter (j < i, j from i or i + 1)",
    "down-counting": "loops indexed by j = ub - 1 - k, the normalised form of a"
    " down-counting loop",
    "branchy": "in a loop body, an scf.if whose branch updates an input in place"
    " (m[i] = sin(m[i]) * acc: the branch's loaded value is cached)",
}
KNOWN_BUGS: dict[str, str] = {}
"""Features off by default, each with the issue of its bug (issue 11 #1, #2 and #5 are
fixed: `int-edge`, `sim-growable` and `stream-lower-bound` are on)."""
DEFAULT_FEATURES = frozenset(FEATURES) - frozenset(KNOWN_BUGS)

SIM_ONLY = {
    "out-of-bounds": "indices -1 or N, or loaded from %cnt (sim_arguments: -1..N+1), and"
    " trip counts from %n and %cnt up to N+1",
    "any-domain": "sqrt, log, exp, divf, minnumf, maxnumf of any value (NaN, infinities)",
    "grid": "a 2-D %m: memref<3x4xT>, loaded and stored",
    "mixed-float": "%h: memref<4xH> of the other float type: truncf/extf, mulf, store",
    "i64": "an i64 argument %q and second result: addi..floordivsi chains with INT64 edges,"
    " sitofp",
}
"""Features for programs the AD checks cannot use (the simulator tests' only)."""
SIM_FEATURES = DEFAULT_FEATURES | frozenset(SIM_ONLY)
GRID = (3, 4)  # the shape of %m
I64_EDGES = (-(1 << 63), -1, 0, 1, 3, (1 << 63) - 1)


@dataclass
class Op:
    """Straight-line code: `lines` with `{0}`, `{1}`... for `args` and `{T}` for the
    float type; defines `result` (None for a store)."""

    result: str | None
    lines: list[str]
    args: list[str]
    needs: str | None = None  # rendered only while this value is in scope


@dataclass
class For:
    result: str
    iv: str
    acc: str
    lb: str
    ub: str
    step: str
    init: str
    body: list[Node]
    out: str  # the value added to the accumulator each iteration


@dataclass
class If:
    result: str
    lhs: str
    rhs: str
    then: list[Node]
    then_out: str
    other: list[Node]
    other_out: str


@dataclass
class While:
    result: str
    w: str
    k: str
    init: str
    ub: str
    body: list[Node]
    out: str


Node = Op | For | If | While


@dataclass
class Function:
    name: str
    params: list[tuple[str, str]]  # (name, "f" | "m" | "i" | "cnt")
    body: list[Node]
    ret: str
    constants: list[int] = field(default_factory=list[int])
    ret_int: str | None = None  # a second, i64 result (feature `i64`)


@dataclass
class Program:
    seed: int
    functions: list[Function]  # helpers first, @f last
    float_type: str = "f64"
    features: frozenset[str] = frozenset()  # what the generator used (after its draws)

    def nodes(self) -> Iterator[tuple[list[Node], int]]:
        """Every (statement list, position) pair, outermost first (the minimizer's units)."""
        for fn in self.functions:
            yield from _positions(fn.body)

    def size(self) -> int:
        return sum(1 for _ in self.nodes())

    def render(self, float_type: str | None = None) -> str:
        return render(self, float_type or self.float_type)


def _positions(body: list[Node]) -> Iterator[tuple[list[Node], int]]:
    for i, node in enumerate(body):
        yield body, i
        for child in _children(node):
            yield from _positions(child)


def _children(node: Node) -> list[list[Node]]:
    if isinstance(node, For | While):
        return [node.body]
    if isinstance(node, If):
        return [node.then, node.other]
    return []


# ---------------------------------------------------------------------------------------
# Rendering


class _Renderer:
    def __init__(self, float_type: str):
        self.T = float_type
        self.lines: list[str] = []
        self.scope: list[set[str]] = []

    def defined(self, name: str) -> bool:
        return any(name in s for s in self.scope)

    def define(self, name: str) -> None:
        self.scope[-1].add(name)

    def ref(self, name: str) -> str:
        if self.defined(name):
            return name
        if name == "%t":
            return "%x"
        if name.startswith("%q"):
            return "%q"
        if name.startswith(("%i", "%k", "%j", "%u", "%c", "%n")):
            return "%c0"
        return "%s"

    def emit(self, ind: int, line: str) -> None:
        self.lines.append("  " * ind + line)

    def block(self, nodes: list[Node], ind: int, extra: tuple[str, ...] = ()) -> None:
        self.scope.append(set(extra))
        for node in nodes:
            self.node(node, ind)

    def close(self) -> None:
        self.scope.pop()

    def node(self, node: Node, ind: int) -> None:
        T = self.T
        if isinstance(node, Op):
            if node.needs and not self.defined(node.needs):
                return
            args = [self.ref(a) for a in node.args]
            for line in node.lines:
                self.emit(ind, line.format(*args, T=T, N=N, K=K, H=_other(T),
                                           to_h="truncf" if T == "f64" else "extf",
                                           from_h="extf" if T == "f64" else "truncf"))  # fmt: skip
            if node.result:
                self.define(node.result)
        elif isinstance(node, For):
            lb, ub, step, init = (self.ref(v) for v in (node.lb, node.ub, node.step, node.init))
            self.emit(
                ind,
                f"{node.result} = scf.for {node.iv} = {lb} to {ub} step {step} "
                f"iter_args({node.acc} = {init}) -> ({T}) {{",
            )
            self.block(node.body, ind + 1, (node.iv, node.acc))
            out = self.ref(node.out) if self.defined(node.out) else node.acc
            self.emit(ind + 1, f"{node.result}_y = arith.addf {node.acc}, {out} : {T}")
            self.emit(ind + 1, f"scf.yield {node.result}_y : {T}")
            self.close()
            self.emit(ind, "}")
            self.define(node.result)
        elif isinstance(node, If):
            lhs, rhs = self.ref(node.lhs), self.ref(node.rhs)
            self.emit(ind, f"{node.result}_c = arith.cmpf ogt, {lhs}, {rhs} : {T}")
            self.emit(ind, f"{node.result} = scf.if {node.result}_c -> ({T}) {{")
            self.block(node.then, ind + 1)
            self.emit(ind + 1, f"scf.yield {self.ref(node.then_out)} : {T}")
            self.close()
            self.emit(ind, "} else {")
            self.block(node.other, ind + 1)
            self.emit(ind + 1, f"scf.yield {self.ref(node.other_out)} : {T}")
            self.close()
            self.emit(ind, "}")
            self.define(node.result)
        else:
            r, init, ub = node.result, self.ref(node.init), self.ref(node.ub)
            self.emit(
                ind,
                f"{r}:2 = scf.while ({r}_w = {init}, {r}_k = %c0) : ({T}, index) -> "
                f"({T}, index) {{",
            )
            self.emit(ind + 1, f"{r}_b = arith.cmpi slt, {r}_k, {ub} : index")
            self.emit(ind + 1, f"scf.condition({r}_b) {r}_w, {r}_k : {T}, index")
            self.emit(ind, "} do {")
            self.emit(ind, f"^bb0({node.w}: {T}, {node.k}: index):")
            self.block(node.body, ind + 1, (node.w, node.k))
            out = self.ref(node.out) if self.defined(node.out) else node.w
            self.emit(ind + 1, f"{r}_o = math.sin {out} : {T}")
            self.emit(ind + 1, f"{r}_p = arith.addf {r}_o, {node.w} : {T}")
            self.emit(ind + 1, f"{r}_q = arith.addi {node.k}, %c1 : index")
            self.emit(ind + 1, f"scf.yield {r}_p, {r}_q : {T}, index")
            self.close()
            self.emit(ind, "}")
            self.define(node.result)
            self.define(node.result + "#0")


def render(program: Program, T: str) -> str:
    """The module text; helpers no longer called (after minimization) are left out."""
    texts = [_render_function(fn, T) for fn in program.functions]
    kept = [
        text
        for fn, text in zip(program.functions, texts)
        if fn.name == "f" or any(f"@{fn.name}(" in other for other in texts if other != text)
    ]
    return "\n".join(kept) + "\n"


def _render_function(fn: Function, T: str) -> str:
    out: list[str] = []
    r = _Renderer(T)
    params = ", ".join(f"{n}: {_param_type(k, T)}" for n, k in fn.params)
    attrs = " attributes {tapeflow.autodiff}" if fn.name == "f" else ""
    results = f"{T}, i64" if fn.ret_int else T
    out.append(f"func.func @{fn.name}({params}) -> "
               f"{f'({results})' if fn.ret_int else results}{attrs} {{")
    r.scope.append({n for n, _ in fn.params})
    for c in range(N + 1):
        r.emit(1, f"%c{c} = arith.constant {c} : index")
        r.define(f"%c{c}")
    r.block(fn.body, 1)
    ret = r.ref(fn.ret)
    if fn.ret_int:
        ret = f"{ret}, {r.ref(fn.ret_int)}"
    r.close()
    r.emit(1, f"func.return {ret} : {results}")
    out += r.lines
    out.append("}")
    return "\n".join(out)


def _param_type(kind: str, T: str) -> str:
    return {"f": T, "m": f"memref<{N}x{T}>", "i": "index", "cnt": f"memref<{K}xindex>",
            "m2": f"memref<{GRID[0]}x{GRID[1]}x{T}>", "h": f"memref<4x{_other(T)}>",
            "q": "i64"}[kind]  # fmt: skip


def _other(T: str) -> str:
    return "f32" if T == "f64" else "f64"


# ---------------------------------------------------------------------------------------
# Generation


class Gen:
    """Draws a random program using only `features`."""

    def __init__(self, seed: int, features: frozenset[str] = DEFAULT_FEATURES):
        self.rng = random.Random(seed)
        # Each program uses lower bounds above 0 and steps above 1 or not (half of them
        # each): those without can be checked where a known bug gates the others.
        self.features = frozenset(
            f for f in sorted(features)  # sorted: string hashes differ between runs
            if f not in ("lower-bound", "step") or self.rng.random() < 0.5
        )  # fmt: skip
        self.count = 0
        self.imax: dict[str, int] = {f"%c{c}": c for c in range(N + 1)}
        self.helpers: list[Function] = []
        self.mems: list[str] = []  # the parameters (not floats) of the function being drawn
        self.ints = ["%q"]  # i64 values (one pool: the renderer turns those out of scope to %q)

    def on(self, feature: str) -> bool:
        return feature in self.features

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"%{prefix}{self.count}"

    # -- values ---------------------------------------------------------------------------
    def index(self, ivs: list[str], nodes: list[Node] | None = None, bound: int = N) -> str:
        """An in-bounds index: an induction variable, a counter or a constant (with
        `out-of-bounds` and `nodes` to put its definition in, now and then -1, `bound`,
        or an index loaded from %cnt)."""
        if self.on("out-of-bounds") and nodes is not None:
            r = self.rng.random()
            if r < 0.015 or (r < 0.04 and "%cnt" not in self.mems):
                j = self.fresh("j")
                value = self.rng.choice((-1, bound))
                nodes.append(Op(j, [f"{j} = arith.constant {value} : index"], []))
                return j
            if r < 0.04:
                j = self.fresh("j")
                nodes.append(Op(j, [f"{j} = memref.load %cnt[%c{self.rng.randrange(K)}] : "
                                    f"memref<{K}xindex>"], []))  # fmt: skip
                return j
        if bound < N:
            ivs = [v for v in ivs if self.imax.get(v, N - 1) < bound]
        if ivs and self.rng.random() < 0.8:
            return self.rng.choice(ivs)
        return f"%c{self.rng.randrange(bound)}"

    def bound(self, ivs: list[str], mems: list[str], nodes: list[Node], lb: int) -> str:
        r = self.rng.random()
        if self.on("growable") and ivs and "%cnt" in mems and r < 0.2:
            u = self.fresh("u")
            nodes.append(Op(u, [f"{u} = memref.load %cnt[{{0}}] : memref<{K}xindex>"],
                            [self._cnt_index(ivs)]))  # fmt: skip
            self.imax[u] = N
            return u
        if self.on("dynamic") and "%n" in mems and r < 0.35:
            return "%n"
        if self.on("zero-trip") and self.rng.random() < 0.2:
            return f"%c{self.rng.randint(0, lb)}"
        return f"%c{self.rng.randint(lb + 1, N)}"

    def _cnt_index(self, ivs: list[str]) -> str:
        small = [v for v in ivs if self.imax.get(v, N) < K]
        return self.rng.choice(small) if small else f"%c{self.rng.randrange(K)}"

    def expr(self, vals: list[str], ivs: list[str], mems: list[str], nodes: list[Node]) -> None:
        r = self.rng
        a, b, v = r.choice(vals), r.choice(vals), self.fresh("v")
        kinds = ["add", "sub", "mul", "mul_s"]
        if self.on("math"):
            kinds += ["sin", "cos", "tanh", "exp", "sqrt", "log", "div", "abs"]
        if self.on("select"):
            kinds += ["select", "max", "min"]
        if ivs or any(m != "%n" for m in mems):
            kinds += ["load", "load"]
        if self.on("store"):
            kinds += ["store", "store"]
        if self.on("index-math") and ivs:
            kinds += ["ivf", "shift"]
        if self.on("call") and self.helpers:
            kinds += ["call"]
        if self.on("int-math"):
            kinds += ["int"]
        if self.on("any-domain"):
            kinds += ["raw", "raw"]
        if "%m" in mems:  # (and more memory traffic for the cache model)
            kinds += ["load2", "store2", "load", "store"]
        if "%h" in mems:
            kinds += ["mixed"]
        if "%q" in mems:
            kinds += ["i64", "i64", "sitofp"]
        k = r.choice(kinds)
        arrays = [m for m in mems if m not in ("%n", "%cnt", "%m", "%h", "%q")]
        one = "arith.constant 1.0 : {T}"
        simple = {"add": "addf", "sub": "subf", "mul": "mulf", "max": "maximumf",
                  "min": "minimumf"}  # fmt: skip
        if k in simple:
            op = Op(v, [f"{v} = arith.{simple[k]} {{0}}, {{1}} : {{T}}"], [a, b])
        elif k == "mul_s":
            op = Op(v, [f"{v} = arith.mulf {{0}}, %s : {{T}}"], [a])
        elif k in ("sin", "cos", "tanh", "abs"):
            name = "absf" if k == "abs" else k
            op = Op(v, [f"{v} = math.{name} {{0}} : {{T}}"], [a])
        elif k == "exp":  # bounded argument: exp(tanh(a))
            op = Op(v, [f"{v}_t = math.tanh {{0}} : {{T}}", f"{v} = math.exp {v}_t : {{T}}"], [a])
        elif k in ("sqrt", "log", "div"):  # of 1 + b*b > 0
            last = {"sqrt": f"{v} = math.sqrt {v}_p : {{T}}",
                    "log": f"{v} = math.log {v}_p : {{T}}",
                    "div": f"{v} = arith.divf {{0}}, {v}_p : {{T}}"}[k]  # fmt: skip
            op = Op(v, [f"{v}_q = arith.mulf {{1}}, {{1}} : {{T}}", f"{v}_1 = {one}",
                        f"{v}_p = arith.addf {v}_q, {v}_1 : {{T}}", last], [a, b])  # fmt: skip
        elif k == "select":
            c = r.choice(vals)
            pred = r.choice(["olt", "ogt", "ole", "oge"])
            op = Op(v, [f"{v}_c = arith.cmpf {pred}, {{0}}, {{1}} : {{T}}",
                        f"{v} = arith.select {v}_c, {{1}}, {{2}} : {{T}}"], [c, a, b])  # fmt: skip
        elif k == "load":
            m = r.choice(arrays)
            op = Op(v, [f"{v} = memref.load {{0}}[{{1}}] : memref<{N}x{{T}}>"],
                    [m, self.index(ivs, nodes)])  # fmt: skip
        elif k == "store":
            m = r.choice([x for x in arrays if x != "%y"] or arrays)
            op = Op(None, [f"memref.store {{0}}, {{1}}[{{2}}] : memref<{N}x{{T}}>"],
                    [a, m, self.index(ivs, nodes)])  # fmt: skip
        elif k == "raw":  # no domain guard: NaN and infinities reach the simulators
            name = r.choice(["math.sqrt", "math.log", "math.exp", "arith.divf", "arith.minnumf",
                             "arith.maxnumf"])  # fmt: skip
            two = name.startswith("arith.")
            op = Op(v, [f"{v} = {name} {{0}}{', {1}' if two else ''} : {{T}}"], [a, b])
        elif k in ("load2", "store2"):
            at = f"%m[{{0}}, {{1}}] : memref<{GRID[0]}x{GRID[1]}x{{T}}>"
            i, j = self.index(ivs, nodes, GRID[0]), self.index(ivs, nodes, GRID[1])
            if k == "load2":
                op = Op(v, [f"{v} = memref.load {at}"], [i, j])
            else:
                op = Op(None, [f"memref.store {{2}}, {at}"], [i, j, a])
        elif k == "mixed":  # a in %h's type, times %h[j], stored back, and back in T
            op = Op(v, [f"{v}_t = arith.{{to_h}} {{0}} : {{T}} to {{H}}",
                        f"{v}_w = memref.load %h[{{1}}] : memref<4x{{H}}>",
                        f"{v}_p = arith.mulf {v}_t, {v}_w : {{H}}",
                        f"memref.store {v}_p, %h[{{1}}] : memref<4x{{H}}>",
                        f"{v} = arith.{{from_h}} {v}_p : {{H}} to {{T}}"],
                    [a, self.index(ivs, nodes)])  # fmt: skip
        elif k == "i64":
            q = self.fresh("q")
            name = r.choice(["addi", "subi", "muli", "divsi", "remsi", "floordivsi", "xori"])
            if r.random() < 0.5:
                lines = [f"{q}_e = arith.constant {r.choice(I64_EDGES)} : i64",
                         f"{q} = arith.{name} {{0}}, {q}_e : i64"]  # fmt: skip
            else:
                lines = [f"{q} = arith.{name} {{0}}, {{1}} : i64"]
            nodes.append(Op(q, lines, [r.choice(self.ints), r.choice(self.ints)]))
            self.ints.append(q)
            return None
        elif k == "sitofp":
            op = Op(v, [f"{v} = arith.sitofp {{0}} : i64 to {{T}}"], [r.choice(self.ints)])
        elif k == "ivf":
            iv = r.choice(ivs)
            op = Op(v, [f"{v}_i = arith.index_cast {{0}} : index to i64",
                        f"{v} = arith.sitofp {v}_i : i64 to {{T}}"], [iv])  # fmt: skip
        elif k == "shift":  # i + c, in bounds: then a load or store through it
            iv = r.choice(ivs)
            room = N - 1 - self.imax.get(iv, N - 1)
            if room <= 0:
                return self.expr(vals, ivs, mems, nodes)
            j = self.fresh("j")
            c = r.randint(1, room)
            self.imax[j] = self.imax.get(iv, N - 1) + c
            nodes.append(Op(j, [f"{j} = arith.addi {{0}}, %c{c} : index"], [iv]))
            ivs.append(j)
            return None
        elif k == "int":  # ((i op E) div D < 1 ? a : b) + 1e-30 * ((i op E) div D), on i64
            edge = self.on("int-edge") and r.random() < 0.7
            e = r.choice([-(2**63), -(2**63), 2**63 - 1] if edge else [3, -5, 1000, 123456789])
            d = r.choice([-1, -1, 2] if edge else [2, 3, -7])
            op1 = r.choice(["addi", "subi", "muli", "xori", "andi", "ori"])
            op2 = r.choice(["divsi", "remsi", "floordivsi"])
            pred = r.choice(["slt", "sge", "eq", "ne"])
            op = Op(v, [f"{v}_i = arith.index_cast {{0}} : index to i64",
                        f"{v}_e = arith.constant {e} : i64",
                        f"{v}_d = arith.constant {d} : i64",
                        f"{v}_a = arith.{op1} {v}_i, {v}_e : i64",
                        f"{v}_q = arith.{op2} {v}_a, {v}_d : i64",
                        f"{v}_z = arith.constant 1 : i64",
                        f"{v}_c = arith.cmpi {pred}, {v}_q, {v}_z : i64",
                        f"{v}_s = arith.select {v}_c, {{1}}, {{2}} : {{T}}",
                        f"{v}_f = arith.sitofp {v}_q : i64 to {{T}}",
                        f"{v}_t = arith.constant 1.0e-30 : {{T}}",
                        f"{v}_m = arith.mulf {v}_f, {v}_t : {{T}}",
                        f"{v} = arith.addf {v}_s, {v}_m : {{T}}"],
                    ["%c0" if edge and r.random() < 0.5 else self.index(ivs), a, b])  # fmt: skip
        else:  # call
            h = r.choice(self.helpers)
            m = r.choice(arrays)
            op = Op(v, [f"{v} = func.call @{h.name}({{0}}, {{1}}, {{2}}) : "
                        f"(memref<{N}x{{T}}>, {{T}}, {{T}}) -> {{T}}"], [m, a, b])  # fmt: skip
        nodes.append(op)
        if op.result:
            vals.append(op.result)

    # -- statements -----------------------------------------------------------------------
    def block(self, vals, ivs, mems, depth: int, count: int) -> list[Node]:
        vals, ivs, nodes = list(vals), list(ivs), []
        for _ in range(count):
            r = self.rng.random()
            if depth < 3 and r < 0.08 and self.on("while"):
                nodes.append(self.whileop(vals, ivs, mems, depth, nodes))
            elif depth < 3 and r < 0.26 and self.on("for"):
                nodes.append(self.loop(vals, ivs, mems, depth, nodes))
            elif depth < 3 and r < 0.34 and self.on("if"):
                nodes.append(self.ifop(vals, ivs, mems, depth))
            elif (depth < 3 and r < 0.42 and self.on("branchy") and self.on("store")
                  and any(v.startswith("%i") for v in ivs)):  # fmt: skip
                nodes.append(self.branchy(vals, ivs, mems, depth))
            else:
                self.expr(vals, ivs, mems, nodes)
                continue
            vals.append(nodes[-1].result + ("#0" if isinstance(nodes[-1], While) else ""))
        self._last = vals[-1]
        return nodes

    def loop(self, vals, ivs, mems, depth, nodes) -> For:
        r = self.rng
        lb = r.choice([0, 0, 0, 1, 2]) if self.on("lower-bound") else 0
        step = r.choice([1, 1, 2, 3]) if self.on("step") else 1
        ub = self.bound(ivs, mems, nodes, lb)
        low = f"%c{lb}"
        outer = [v for v in ivs if v.startswith("%i")]  # enclosing loops' counters
        if self.on("triangular") and outer and r.random() < 0.6:
            low, ub = self.triangular(r.choice(outer), ub, nodes)
        iv, acc = self.fresh("i"), self.fresh("a")
        # At least -1 (no iteration): `i + c` takes c <= N - 1 - imax (`%c{N}` at most).
        self.imax[iv] = max(self.imax.get(ub, N) - 1, -1)
        inner = [*ivs, iv]
        head: list[Node] = []
        if self.on("down-counting") and r.random() < 0.3:  # j = ub - 1 - k, in [0, ub)
            j = self.fresh("j")
            head.append(Op(j, [f"{j}_u = arith.subi {{0}}, %c1 : index",
                               f"{j} = arith.subi {j}_u, {{1}} : index"], [ub, iv]))  # fmt: skip
            self.imax[j] = self.imax[iv]
            inner = [*ivs, j]
        body = self.block([*vals, acc], inner, mems, depth + 1, r.randrange(1, 5))
        return For(self.fresh("r"), iv, acc, low, ub, f"%c{step}", r.choice(vals),
                   head + body, self._last)  # fmt: skip

    def triangular(self, i: str, ub: str, nodes: list[Node]) -> tuple[str, str]:
        """Bounds of a loop nested in `i`'s: `0 to i`, `i to ub` or `i + 1 to ub`."""
        pick = self.rng.randrange(3)
        if pick == 0:
            return "%c0", i
        if pick == 1:
            return i, ub
        j = self.fresh("j")  # i + 1 <= N: a bound, never an index
        nodes.append(Op(j, [f"{j} = arith.addi {{0}}, %c1 : index"], [i]))
        return j, ub

    def branchy(self, vals, ivs, mems, depth) -> If:
        """`if a > b { m[i] = sin(m[i]) * a } else { ... }` with `i` an enclosing
        counter: the value the then-branch loads is overwritten, so the tape keeps it,
        from inside the branch."""
        a, b = self.rng.choice(vals), self.rng.choice(vals)
        m = self.rng.choice(["%x", "%y"])
        i = self.index(ivs)
        v, w = self.fresh("v"), self.fresh("v")
        then: list[Node] = [
            Op(v, [f"{v} = memref.load {{0}}[{{1}}] : memref<{N}x{{T}}>"], [m, i]),
            Op(w, [f"{w}_s = math.sin {{0}} : {{T}}", f"{w} = arith.mulf {w}_s, {{1}} : {{T}}"],
               [v, a]),
            Op(None, [f"memref.store {{0}}, {{1}}[{{2}}] : memref<{N}x{{T}}>"], [w, m, i]),
        ]  # fmt: skip
        other = self.block(vals, ivs, mems, depth + 1, self.rng.randrange(1, 3))
        return If(self.fresh("r"), a, b, then, w, other, self._last)

    def in_place_loop(self, vals, mems, nodes) -> For:
        """A loop that updates an input in place (`m[i] = sin(m[i]) * acc`, the tape's
        classic case: the loaded values must be kept), with random code around."""
        loop = self.loop(vals, [], mems, 0, nodes)
        v, w, u = self.fresh("v"), self.fresh("v"), self.fresh("v")
        m = self.rng.choice(["%x", "%y"])
        loop.body[:0] = [
            Op(v, [f"{v} = memref.load {{0}}[{{1}}] : memref<{N}x{{T}}>"], [m, loop.iv]),
            Op(w, [f"{w}_s = math.sin {{0}} : {{T}}", f"{w} = arith.mulf {w}_s, {{1}} : {{T}}"],
               [v, loop.acc]),
            Op(None, [f"memref.store {{0}}, {{1}}[{{2}}] : memref<{N}x{{T}}>"], [w, m, loop.iv]),
        ]  # fmt: skip
        loop.body.append(Op(u, [f"{u} = arith.addf {{0}}, {{1}} : {{T}}"], [w, loop.out]))
        loop.out = u
        return loop

    def whileop(self, vals, ivs, mems, depth, nodes) -> While:
        ub = self.bound(ivs, mems, nodes, 0)
        w, k = self.fresh("w"), self.fresh("k")
        self.imax[k] = self.imax.get(ub, N) - 1
        body = self.block([*vals, w], [*ivs, k], mems, depth + 1, self.rng.randrange(1, 4))
        return While(self.fresh("r"), w, k, self.rng.choice(vals), ub, body, self._last)

    def ifop(self, vals, ivs, mems, depth) -> If:
        a, b = self.rng.choice(vals), self.rng.choice(vals)
        then = self.block(vals, ivs, mems, depth + 1, self.rng.randrange(1, 4))
        then_out = self._last
        other = self.block(vals, ivs, mems, depth + 1, self.rng.randrange(1, 4))
        return If(self.fresh("r"), a, b, then, then_out, other, self._last)

    def function(self, name: str, params: list[tuple[str, str]], depth: int, count: int):
        vals = [n for n, k in params if k == "f"]
        mems = self.mems = [n for n, k in params if k != "f"]
        body: list[Node] = []
        if name == "f":
            x0 = self.fresh("v")
            body.append(Op(x0, [f"{x0} = memref.load %x[%c1] : memref<{N}x{{T}}>"], []))
            vals.append(x0)
            if self.on("alloc"):
                body.append(Op("%t", [f"%t = memref.alloc() : memref<{N}x{{T}}>",
                                      f'"memref.copy"(%y, %t) : (memref<{N}x{{T}}>, '
                                      f"memref<{N}x{{T}}>) -> ()"], []))  # fmt: skip
                mems = [*mems, "%t"]
        if name == "f" and self.on("for") and self.on("store") and self.rng.random() < 0.5:
            body.append(self.in_place_loop(vals, mems, body))
            vals.append(body[-1].result)
        body += self.block(vals, [], mems, depth, count)
        ret = self._last
        if name == "f" and self.on("alloc"):
            body.append(Op(None, [f"memref.dealloc %t : memref<{N}x{{T}}>"], [], needs="%t"))
        ret_int = self.rng.choice(self.ints) if "%q" in mems else None
        return Function(name, params, body, ret, ret_int=ret_int)


def generate(seed: int, features: frozenset[str] = DEFAULT_FEATURES) -> Program:
    """The program of `seed` (deterministic for a given feature set)."""
    g = Gen(seed, features)
    if g.on("call"):
        for h in range(g.rng.randrange(0, 3)):
            params = [("%hx", "m"), ("%s", "f"), ("%hb", "f")]  # %s: the float default
            fn = g.function(f"h{h}", params, 2, g.rng.randrange(1, 4))
            g.helpers.append(fn)
    params = [("%x", "m"), ("%y", "m"), ("%s", "f"), ("%n", "i"), ("%cnt", "cnt")]
    params += [(name, kind) for name, kind, on in
               (("%m", "m2", "grid"), ("%h", "h", "mixed-float"), ("%q", "q", "i64")) if g.on(on)]
    longer = any(g.on(f) for f in SIM_ONLY)  # the simulator tests' programs: more to run
    main = g.function("f", params, 0, g.rng.randrange(*(4, 12) if longer else (3, 9)))
    float_type = "f32" if g.on("f32") and g.rng.random() < 0.3 else "f64"
    return Program(seed, [*g.helpers, main], float_type, g.features)


def sim_arguments(program: Program) -> list:
    """Arguments of `@f` for the simulator tests: %x, %y, %s, %n, %cnt, then those of
    the features on (%m, %h, %q). With `out-of-bounds`, %n may be N + 1 and %cnt's
    entries run from -1 to N + 1."""
    import numpy as np

    names = [n for n, _ in program.functions[-1].params]
    g = np.random.default_rng([program.seed, 11])
    T = np.float64 if program.float_type == "f64" else np.float32
    wild = "out-of-bounds" in program.features
    out = {"%x": g.uniform(-2, 2, N).astype(T), "%y": g.uniform(-2, 2, N).astype(T),
           "%s": float(T(g.uniform(-2, 2))), "%n": int(g.integers(0, N + 1 + wild)),
           "%cnt": g.integers(-wild, N + 1 + wild, K).astype(np.int64),
           "%m": g.uniform(-2, 2, GRID).astype(T),
           "%h": g.uniform(-2, 2, 4).astype(np.float32 if T is np.float64 else np.float64),
           "%q": int(g.choice(I64_EDGES))}  # fmt: skip
    return [out[n] for n in names]
