"""Helpers shared by the simulator tests (test_compiled_sim, test_jit, test_hwmodel_machine)
and the fuzzer: compare two runs or reports exactly, build a bundled kernel at a
pipeline stage, and a random-program generator aimed at the simulators' op semantics.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import InterpretationError

from tapeflow import runner
from tapeflow.hwmodel.compiled import CompiledModule
from tapeflow.hwmodel.fastsim import simulate_fast
from tapeflow.hwmodel.model import simulate
from tapeflow.registry import get_all_passes, make_context

# ---------------------------------------------------------------------------------------
# Exact comparison


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Every place where two reports (nested dicts/lists/arrays/numbers) differ."""
    out: list[str] = []
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                out.append(f"{path}.{key}: missing on one side")
            else:
                out += differences(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype or a.tobytes() != b.tobytes():
            out.append(f"{path}: arrays differ")
    elif isinstance(a, list | tuple) and isinstance(b, list | tuple):
        if len(a) != len(b):
            out.append(f"{path}: lengths {len(a)} != {len(b)}")
        else:
            for i, (x, y) in enumerate(zip(a, b)):
                out += differences(x, y, f"{path}[{i}]")
    elif type(a) is not type(b) and not (
        isinstance(a, int | float) and isinstance(b, int | float) and type(a) is not bool
    ):
        out.append(f"{path}: types {type(a).__name__} != {type(b).__name__}")
    elif isinstance(a, float) and np.isnan(a):
        if not (isinstance(b, float) and np.isnan(b)):
            out.append(f"{path}: {a!r} != {b!r}")
    elif a != b or (isinstance(a, float) and repr(a) != repr(b)):
        out.append(f"{path}: {a!r} != {b!r}")
    return out


def both(module, entry: str, args, machine=None, fast_batch: int = 1 << 16):
    """Runs the op-by-op and the compiled simulation on copies of `args`."""
    ref = simulate(module, entry, copy.deepcopy(args), machine)
    fast = simulate_fast(module, entry, copy.deepcopy(args), machine, batch=fast_batch)
    return ref, fast


def assert_identical(module, entry: str, args, machine=None, fast_batch: int = 1 << 16):
    ref, fast = both(module, entry, args, machine, fast_batch)
    diffs = differences(ref.report, fast.report)
    diffs += differences(ref.run.results, fast.run.results, "results")
    diffs += differences(ref.run.arguments, fast.run.arguments, "arguments")
    assert not diffs, "\n".join(diffs[:20])
    return ref, fast


def outcome(run: Any) -> tuple[str, Any]:
    try:
        return "ok", run()
    except InterpretationError as error:
        return "error", str(error)


def outcomes_identical(module, entry: str, args, machine=None, batch: int = 1 << 16,
                       program: CompiledModule | None = None, context: str = "") -> None:
    """The op-by-op and fast runs (of `program` when given, else of `module`) both fail
    with the same message, or agree on values, memref contents and the whole report."""
    ref = outcome(lambda: simulate(module, entry, copy.deepcopy(args), machine))
    fast = outcome(lambda: simulate_fast(program or module, entry, copy.deepcopy(args),
                                          machine, batch=batch))  # fmt: skip
    assert ref[0] == fast[0], f"{context}: {ref[1]} / {fast[1]}"
    if ref[0] == "error":
        assert ref[1] == fast[1], context
        return
    diffs = differences(ref[1].report, fast[1].report)
    diffs += differences(ref[1].run.results, fast[1].run.results, "results")
    diffs += differences(ref[1].run.arguments, fast[1].run.arguments, "arguments")
    assert not diffs, f"{context}:\n" + "\n".join(diffs[:20])


# ---------------------------------------------------------------------------------------
# The benchmark kernels at their small size, through each stage of the pipeline.

STAGES = {
    "primal": None,
    "autodiff": "tapeflow-autodiff",
    "lower-tape": "tapeflow-autodiff,tapeflow-lower-tape",
    "regions": "tapeflow-autodiff,tapeflow-regions",
    "stream-d1": "tapeflow-autodiff,tapeflow-regions,tapeflow-layers{spm-bytes=64 depth=1},"
    "tapeflow-stream{depth=1}",
    "stream-d2": "tapeflow-autodiff,tapeflow-regions,tapeflow-layers{spm-bytes=2048},"
    "tapeflow-stream",
    "tapeflow": "tapeflow{mode=always}",
}


def kernel_names() -> list[str]:
    from benchmarks.kernels import KERNELS

    return list(KERNELS)


def stage_module(name: str, stage: str):
    from benchmarks.kernels import KERNELS

    kernel = KERNELS[name]
    module = runner.load_module(kernel.source("small"), f"{name}.mlir")
    spec = STAGES[stage]
    if spec is None:
        return module, kernel.entry, kernel.inputs("small")
    passes = get_all_passes()
    PassPipeline.parse_spec(passes, spec).apply(make_context(), module)
    module.verify()
    fn = runner.find_function(module, kernel.grad_entry)
    scalars = [t for t in fn.function_type.inputs.data if not isinstance(t, MemRefType)]
    args = runner.make_arguments(fn, seed=0, scalars=[1.0] * len(scalars))
    return module, kernel.grad_entry, args


# ---------------------------------------------------------------------------------------
# Random programs for the simulators: loops (steps > 1, lower bounds > 0, iter_args),
# scf.if, selects, f64 and f32, i64 arithmetic with extreme constants, indices sometimes
# out of bounds. (The fuzzer's generator, fuzz/program.py, makes differentiable kernels.)

_I64_EDGES = (-(1 << 63), -1, 0, 1, 3, (1 << 63) - 1)


class RandomProgram:
    """`text()`: one random function `@f(%a: memref<8xf64>, %m: memref<3x4xf64>,
    %h: memref<4xf32>, %ix: memref<4xindex>, %x: f64, %k: i64) -> (f64, i64)`."""

    def __init__(self, seed: int):
        import random

        self.rng = random.Random(seed)
        self.lines: list[str] = []
        self.n = 0

    def fresh(self) -> str:
        self.n += 1
        return f"%v{self.n}"

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("  " * (depth + 1) + text)

    def const(self, depth: int, value: int, type_: str = "index") -> str:
        v = self.fresh()
        self.emit(depth, f"{v} = arith.constant {value} : {type_}")
        return v

    def index(self, depth: int, env: dict[str, list[Any]], bound: int) -> str:
        """An index for a dimension of size `bound`: usually in range, sometimes not."""
        r = self.rng.random()
        if r < 0.01:
            return self.const(depth, self.rng.choice((-1, bound)))
        if r < 0.03:
            i = self.const(depth, self.rng.randrange(4))
            v = self.fresh()
            self.emit(depth, f"{v} = memref.load %ix[{i}] : memref<4xindex>")
            return v
        ivs = [(iv, hi) for iv, hi in env["iv"] if hi < bound]  # type: ignore[misc]
        if not ivs or r < 0.2:
            return self.const(depth, self.rng.randrange(bound))
        iv, hi = self.rng.choice(ivs)
        if self.rng.random() < 0.5 or hi + 1 >= bound:
            return iv
        c = self.const(depth, self.rng.randrange(1, bound - hi))
        v = self.fresh()
        self.emit(depth, f"{v} = arith.addi {iv}, {c} : index")
        return v

    def block(self, depth: int, env: dict[str, list[Any]], n_ops: int) -> None:
        for _ in range(n_ops):
            self.op(depth, env)

    def op(self, depth: int, env: dict[str, list[Any]]) -> None:
        rng = self.rng
        f, i = env["f64"], env["i64"]
        kind = rng.choice(("fbin", "fbin", "math", "int", "load", "load", "store", "store",
                           "load2", "store2", "f32", "select", "cast", "for", "for", "if"))  # fmt: skip
        v = self.fresh()
        if kind == "fbin":
            op = rng.choice(("addf", "subf", "mulf", "divf", "maximumf", "minnumf"))
            self.emit(depth, f"{v} = arith.{op} {rng.choice(f)}, {rng.choice(f)} : f64")
            f.append(v)
        elif kind == "math":
            op = rng.choice(("sin", "cos", "tanh", "exp", "sqrt", "log", "absf"))
            self.emit(depth, f"{v} = math.{op} {rng.choice(f)} : f64")
            f.append(v)
        elif kind == "int":
            op = rng.choice(("addi", "subi", "muli", "divsi", "remsi", "floordivsi", "xori"))
            b = self.const(depth, rng.choice(_I64_EDGES), "i64") if rng.random() < 0.5 else rng.choice(i)
            self.emit(depth, f"{v} = arith.{op} {rng.choice(i)}, {b} : i64")
            i.append(v)
        elif kind == "load":
            j = self.index(depth, env, 8)
            self.emit(depth, f"{v} = memref.load %a[{j}] : memref<8xf64>")
            f.append(v)
        elif kind == "store":
            j = self.index(depth, env, 8)
            self.emit(depth, f"memref.store {rng.choice(f)}, %a[{j}] : memref<8xf64>")
        elif kind in ("load2", "store2"):
            j, k = self.index(depth, env, 3), self.index(depth, env, 4)
            if kind == "load2":
                self.emit(depth, f"{v} = memref.load %m[{j}, {k}] : memref<3x4xf64>")
                f.append(v)
            else:
                self.emit(depth, f"memref.store {rng.choice(f)}, %m[{j}, {k}] : memref<3x4xf64>")
        elif kind == "f32":
            j = self.index(depth, env, 4)
            t, w = self.fresh(), self.fresh()
            self.emit(depth, f"{t} = arith.truncf {rng.choice(f)} : f64 to f32")
            self.emit(depth, f"{w} = memref.load %h[{j}] : memref<4xf32>")
            self.emit(depth, f"{v} = arith.mulf {t}, {w} : f32")
            self.emit(depth, f"memref.store {v}, %h[{j}] : memref<4xf32>")
            e = self.fresh()
            self.emit(depth, f"{e} = arith.extf {v} : f32 to f64")
            f.append(e)
        elif kind == "select":
            c = self.fresh()
            self.emit(depth, f"{c} = arith.cmpf olt, {rng.choice(f)}, {rng.choice(f)} : f64")
            self.emit(depth, f"{v} = arith.select {c}, {rng.choice(f)}, {rng.choice(f)} : f64")
            f.append(v)
        elif kind == "cast":
            self.emit(depth, f"{v} = arith.sitofp {rng.choice(i)} : i64 to f64")
            f.append(v)
        elif kind == "for" and depth < 4:
            hi = rng.randrange(2, 9)
            lb = self.const(depth, rng.randrange(3))
            ub = self.const(depth, hi)
            st = self.const(depth, rng.choice((1, 1, 2, 3)))
            iv, acc = self.fresh(), self.fresh()
            self.emit(depth, f"{v} = scf.for {iv} = {lb} to {ub} step {st} "
                             f"iter_args({acc} = {rng.choice(f)}) -> (f64) {{")  # fmt: skip
            inner = {"f64": [*f, acc], "i64": list(i), "iv": [*env["iv"], (iv, hi - 1)]}
            self.block(depth + 1, inner, rng.randrange(2, 6))
            y = self.fresh()
            self.emit(depth + 1, f"{y} = arith.addf {acc}, {rng.choice(inner['f64'])} : f64")
            self.emit(depth + 1, f"scf.yield {y} : f64")
            self.emit(depth, "}")
            f.append(v)
        elif kind == "if" and depth < 4:
            c = self.fresh()
            self.emit(depth, f"{c} = arith.cmpf ogt, {rng.choice(f)}, {rng.choice(f)} : f64")
            self.emit(depth, f"{v} = scf.if {c} -> (f64) {{")
            for branch in range(2):
                inner = {"f64": list(f), "i64": list(i), "iv": list(env["iv"])}
                self.block(depth + 1, inner, rng.randrange(1, 4))
                self.emit(depth + 1, f"scf.yield {rng.choice(inner['f64'])} : f64")
                self.emit(depth, "} else {" if branch == 0 else "}")
            f.append(v)

    def text(self) -> str:
        env: dict[str, list[Any]] = {"f64": ["%x"], "i64": ["%k"], "iv": []}
        self.block(0, env, self.rng.randrange(4, 12))
        head = ("func.func @f(%a: memref<8xf64>, %m: memref<3x4xf64>, %h: memref<4xf32>, "
                "%ix: memref<4xindex>, %x: f64, %k: i64) -> (f64, i64) {")  # fmt: skip
        ret = f"  func.return {self.rng.choice(env['f64'])}, {self.rng.choice(env['i64'])} : f64, i64"
        return "\n".join([head, *self.lines, ret, "}"]) + "\n"

    def arguments(self) -> list[Any]:
        g = np.random.default_rng(self.rng.randrange(1 << 30))
        ix = g.integers(-1, 6, 4)  # sometimes out of bounds
        return [g.uniform(-2, 2, 8), g.uniform(-2, 2, (3, 4)), g.uniform(-2, 2, 4).astype(np.float32),
                ix, float(g.uniform(-2, 2)), int(g.choice(_I64_EDGES))]  # fmt: skip
