"""`tapeflow-autodiff` on random structured programs, against finite differences.

Each program mixes nested `scf.for` (iter_args, static and dynamic bounds), `scf.while`
(argument + counter), `scf.if` with results, `arith.select`, `math` ops, loads, and stores
into an input buffer (in-place updates that force caching). Both tape policies must give
gradients that agree with central differences. The programs can be chaotic (large higher
derivatives), so a mismatch at the default step is rechecked with smaller steps before it
counts. This suite found a real bug (an iter_arg init also used inside its loop).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gradcheck


class Gen:
    """A random structured program over %x, %y (memref<4xf64>), %s (f64), %n (index)."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.n = 0
        self.lines: list[str] = []

    def fresh(self, prefix: str = "v") -> str:
        self.n += 1
        return f"%{prefix}{self.n}"

    def emit(self, ind: int, line: str) -> None:
        self.lines.append("  " * ind + line)

    def expr(self, ind: int, vals: list[str], ivs: list[str]) -> str | None:
        r = self.rng
        k = r.randrange(9)
        a, b, v = r.choice(vals), r.choice(vals), self.fresh()
        if k == 0:
            self.emit(ind, f"{v} = arith.addf {a}, {b} : f64")
        elif k == 1:
            self.emit(ind, f"{v} = arith.mulf {a}, {b} : f64")
        elif k == 2:
            self.emit(ind, f"{v} = math.sin {a} : f64")
        elif k == 3:
            self.emit(ind, f"{v} = math.tanh {a} : f64")
        elif k == 4:
            self.emit(ind, f"{v} = arith.subf {a}, {b} : f64")
        elif k == 5:
            c = self.fresh("b")
            self.emit(ind, f"{c} = arith.cmpf olt, {a}, {b} : f64")
            self.emit(ind, f"{v} = arith.select {c}, {a}, {b} : f64")
        elif k == 6 and ivs:
            iv, m = r.choice(ivs), r.choice(["%x", "%y"])
            self.emit(ind, f"{v} = memref.load {m}[{iv}] : memref<4xf64>")
        elif k == 7 and ivs:
            iv, m = r.choice(ivs), r.choice(["%x", "%y"])
            self.emit(ind, f"memref.store {a}, {m}[{iv}] : memref<4xf64>")
            return None
        else:
            self.emit(ind, f"{v} = arith.mulf {a}, %s : f64")
        return v

    def block(self, ind: int, vals: list[str], ivs: list[str], depth: int, nops: int):
        vals = list(vals)
        for _ in range(nops):
            r = self.rng.random()
            if r < 0.08 and depth < 3:
                vals.append(self.whileop(ind, vals, ivs, depth))
            elif r < 0.2 and depth < 3:
                vals.append(self.loop(ind, vals, ivs, depth))
            elif r < 0.3 and depth < 3:
                vals.append(self.ifop(ind, vals, ivs, depth))
            else:
                v = self.expr(ind, vals, ivs)
                if v:
                    vals.append(v)
        return vals

    def loop(self, ind: int, vals: list[str], ivs: list[str], depth: int) -> str:
        iv, acc, res = self.fresh("i"), self.fresh("a"), self.fresh("r")
        ub = self.rng.choice(["%c2", "%c3", "%c4", "%n"])
        init = self.rng.choice(vals)
        head = f"{res} = scf.for {iv} = %c0 to {ub} step %c1"
        self.emit(ind, f"{head} iter_args({acc} = {init}) -> (f64) {{")
        vs = self.block(ind + 1, [*vals, acc], [*ivs, iv], depth + 1, self.rng.randrange(1, 5))
        y = vs[-1] if vs[-1] != acc else vs[0]
        out = self.fresh()
        self.emit(ind + 1, f"{out} = arith.addf {acc}, {y} : f64")
        self.emit(ind + 1, f"scf.yield {out} : f64")
        self.emit(ind, "}")
        return res

    def whileop(self, ind: int, vals: list[str], ivs: list[str], depth: int) -> str:
        w, k, res = self.fresh("w"), self.fresh("k"), self.fresh("r")
        wa, ka, b = self.fresh("w"), self.fresh("k"), self.fresh("b")
        ub = self.rng.choice(["%c2", "%c3", "%n"])
        init = self.rng.choice(vals)
        self.emit(
            ind,
            f"{res}:2 = scf.while ({w} = {init}, {k} = %c0) : (f64, index) -> (f64, index) {{",
        )
        self.emit(ind + 1, f"{b} = arith.cmpi slt, {k}, {ub} : index")
        self.emit(ind + 1, f"scf.condition({b}) {w}, {k} : f64, index")
        self.emit(ind, "} do {")
        self.emit(ind, f"^bb0({wa}: f64, {ka}: index):")
        vs = self.block(ind + 1, [*vals, wa], [*ivs, ka], depth + 1, self.rng.randrange(1, 4))
        y = vs[-1] if vs[-1] != wa else vs[0]
        out, out2, k1 = self.fresh(), self.fresh(), self.fresh("k")
        self.emit(ind + 1, f"{out} = math.sin {y} : f64")
        self.emit(ind + 1, f"{out2} = arith.addf {out}, {wa} : f64")
        self.emit(ind + 1, f"{k1} = arith.addi {ka}, %c1 : index")
        self.emit(ind + 1, f"scf.yield {out2}, {k1} : f64, index")
        self.emit(ind, "}")
        return res + "#0"

    def ifop(self, ind: int, vals: list[str], ivs: list[str], depth: int) -> str:
        c, res = self.fresh("b"), self.fresh("r")
        a, b = self.rng.choice(vals), self.rng.choice(vals)
        self.emit(ind, f"{c} = arith.cmpf ogt, {a}, {b} : f64")
        self.emit(ind, f"{res} = scf.if {c} -> (f64) {{")
        vs = self.block(ind + 1, vals, ivs, depth + 1, self.rng.randrange(1, 4))
        self.emit(ind + 1, f"scf.yield {vs[-1]} : f64")
        self.emit(ind, "} else {")
        vs = self.block(ind + 1, vals, ivs, depth + 1, self.rng.randrange(1, 4))
        self.emit(ind + 1, f"scf.yield {vs[-1]} : f64")
        self.emit(ind, "}")
        return res


def program(seed: int) -> str:
    g = Gen(random.Random(seed))
    for c in range(5):
        g.emit(1, f"%c{c} = arith.constant {c} : index")
    g.emit(1, "%x0 = memref.load %x[%c1] : memref<4xf64>")
    vals = g.block(1, ["%s", "%x0"], [], 0, g.rng.randrange(2, 7))
    g.emit(1, f"func.return {vals[-1]} : f64")
    signature = (
        "func.func @f(%x: memref<4xf64>, %y: memref<4xf64>, %s: f64, %n: index) -> f64"
        " attributes {tapeflow.autodiff} {\n"
    )
    return signature + "\n".join(g.lines) + "\n}\n"


@pytest.mark.parametrize("seed", [2, 46, 52, 59, 157, 203, 260, 311, 377, 421])
@pytest.mark.parametrize("policy", ["min-tape", "cache-all"])
def test_random_program(seed: int, policy: str):
    text = program(seed)
    args = [np.array([0.3, -0.2, 0.5, 0.1]), np.array([0.2, 0.4, -0.3, 0.25]), 0.45, 3]
    module = gradcheck.differentiate(text, policy=policy)
    rng = np.random.default_rng(seed)
    weights = {0: rng.uniform(-1, 1, 4), 1: rng.uniform(-1, 1, 4)}
    g, _ = gradcheck.gradient(module, "f", args, [1.0], weights)
    errors = []
    for step in (1e-5, 1e-6, 1e-7):
        fd = gradcheck.finite_differences(module, "f", args, [1.0], weights, step=step)
        errors.append(gradcheck.max_rel_error(g, fd))
        if errors[-1] <= 1e-6:
            break
    assert min(errors) <= 1e-5, (errors, text)
