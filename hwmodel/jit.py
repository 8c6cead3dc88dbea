"""numba-compiled inner loops for the fast path (`tapeflow.hwmodel.compiled`).

Most simulated ops run in bulk-counted innermost loops (`compiled.simple_body`: one
straight-line segment, no events); the generated Python spends ~60 ns per op there. This
module turns such a loop's generated Python body into a loop kernel, a plain function

    def kernel(<loop-invariant values>, start, stop, step, accesses, <carried values>):
        for iv in range(start, stop, step): <the body>
        return (<carried values>,)

that numba compiles (`numba.njit`). The kernel computes the same values and writes the
same encoded accesses (`_A(x)` becomes `accesses[p] = x`) as the Python body, so the trace
and the report are unchanged; the caller (`Trace.jit_run`) keeps the phase-window and
counter logic in Python. numba is optional (extra `fast`); without it, or when numba cannot
type a kernel, the loop runs as Python.

A body becomes a kernel only if every statement is in a small checked subset: float and
64-bit integer arithmetic the way the generated code writes it (64-bit wrap checks are
dropped: numba's int64 arithmetic wraps by itself), loads and stores of `memoryview`s in
format `d` or `q`, the float helpers below (numba ports of `extra_ops`' semantics), and
`_A`. Bounds checks whose operands are loop-invariant are hoisted into the caller's guard
(on failure the Python loop runs and reports the interpreter's error); a check that depends
on the loop fails the body. Integer division (`//`, `%`) is refused: `abs(INT64_MIN)`
differs between Python and int64.

Kernels are written to files under the cache directory (`TAPEFLOW_JIT_CACHE`, default
`~/.cache/tapeflow/jit`), named by a hash of their source, and compiled with numba's
on-disk cache: later runs and other processes load the machine code instead of compiling.
`TAPEFLOW_JIT=0` turns kernels off (the reference Python path).
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import math
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1

HELPERS: dict[str, str] = {
    "_divf": '''
def _divf(x, y):
    if y != 0.0:
        return x / y
    if x == 0.0 or math.isnan(x):
        return math.nan
    return math.copysign(math.inf, x) * math.copysign(1.0, y)
''',
    "_maxnum": '''
def _maxnum(x, y):
    if math.isnan(x):
        return y
    if math.isnan(y):
        return x
    if x == 0.0 and y == 0.0:
        return 0.0 if (math.copysign(1.0, x) > 0 or math.copysign(1.0, y) > 0) else -0.0
    return max(x, y)
''',
    "_minnum": '''
def _minnum(x, y):
    if math.isnan(x):
        return y
    if math.isnan(y):
        return x
    if x == 0.0 and y == 0.0:
        return -0.0 if (math.copysign(1.0, x) < 0 or math.copysign(1.0, y) < 0) else 0.0
    return min(x, y)
''',
    "_maximumf": '''
def _maximumf(a, b):
    if a != a or b != b:
        return math.nan
    if a == 0.0 and b == 0.0:
        if math.copysign(1.0, a) > 0 or math.copysign(1.0, b) > 0:
            return 0.0
        return -0.0
    return max(a, b)
''',
    "_minimumf": '''
def _minimumf(a, b):
    if a != a or b != b:
        return math.nan
    if a == 0.0 and b == 0.0:
        if math.copysign(1.0, a) < 0 or math.copysign(1.0, b) < 0:
            return -0.0
        return 0.0
    return min(a, b)
''',
    "_f32": '''
def _f32(x):
    return np.float64(np.float32(x))
''',
    "_wrap": '''
def _wrap(v, bw):
    if bw >= 64:
        return v
    t = v & ((1 << bw) - 1)
    if t >= (1 << (bw - 1)):
        t -= 1 << bw
    return t
''',
}
"""numba-compatible ports of the helpers the generated code calls (hwmodel/compiled.py
`_int_helpers`, `_math_helpers`, which follow tapeflow.interpreters.extra_ops); the test
suite compares each with its original on special values."""

MATH = {f"_m_{n}": f"math.{n}" for n in ("tanh", "exp", "log", "sqrt", "sin", "cos")}
"""libm functions: numba calls the same libm, and returns IEEE results where CPython's
`math` raises (the generated code's `_m_*` then asks NumPy, which gives those results)."""

BUILTINS = {"abs", "float", "min", "max", "range", "math", "np", "_INF", "_NAN"}

_CHECK = re.compile(r"^if not \((?P<cond>.*)\): _RUN\(_K\[\d+\], \(.*\)\)$")
_WRAP64 = re.compile(
    rf"^if not \({_I64_MIN}\) <= (\w+) <= {_I64_MAX}: \1 = _wrap\(\1, 64\)$"
    rf"|^if not {_I64_MIN} <= (\w+) <= {_I64_MAX}: \2 = _wrap\(\2, 64\)$"
)
_ACCESS = re.compile(r"^_A\((?P<expr>.*)\)$")
_CONST = re.compile(r"_K\[(\d+)\]")

_OK_NODES = (
    ast.Module, ast.FunctionDef, ast.arguments, ast.arg, ast.For, ast.Assign, ast.AugAssign,
    ast.If, ast.Return, ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.BoolOp,
    ast.Compare, ast.IfExp, ast.Subscript, ast.Call, ast.Tuple, ast.Load,
    ast.Store, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.BitAnd, ast.BitOr, ast.BitXor,
    ast.USub, ast.UAdd, ast.Not, ast.And, ast.Or, ast.Eq, ast.NotEq, ast.Lt, ast.LtE,
    ast.Gt, ast.GtE, ast.Pass,
)  # fmt: skip


class NotAKernel(Exception):
    """The loop body is outside the subset a kernel takes (the message says what)."""


@dataclass
class LoopKernel:
    """One innermost loop's kernel: its source and, once compiled, the numba function."""

    source: str
    params: list[str]  # loop-invariant values, in call order
    carried: list[str]
    accesses: int  # encoded accesses written per iteration
    guards: list[str] = field(default_factory=list)  # hoisted bounds checks
    ops: int = 1  # ops per iteration (what the Python loop costs)
    fn: Any = None
    failed: str | None = None
    seen: int = 0  # ops run as Python so far (compiling is worth it after `Trace.jit_after`)
    _on_disk: bool | None = None

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()[:20]

    def on_disk(self) -> bool:
        """Compiled before (by any process): loading it costs little, so no waiting."""
        if self._on_disk is None:
            self._on_disk = (_cache_dir() / f"k_{self.digest}.py").exists()
        return self._on_disk

    def compile(self) -> Any:
        """The numba dispatcher (it compiles at the first call, or loads numba's cache),
        or None if numba is missing (`failed` says why)."""
        if self.fn is not None or self.failed is not None:
            return self.fn
        try:
            import numba

            path = _cache_dir() / f"k_{self.digest}.py"
            if not path.exists():
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(self.source)
                os.replace(tmp, path)
            spec = importlib.util.spec_from_file_location(f"tapeflow_jit_{self.digest}", path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module  # numba's cache imports the module by name
            spec.loader.exec_module(module)
            for name in HELPERS:
                if hasattr(module, name):
                    setattr(module, name, numba.njit(cache=True)(getattr(module, name)))
            self.fn = numba.njit(cache=True)(module.kernel)
        except Exception as error:  # no numba, a read-only cache directory...
            self.failed = f"{type(error).__name__}: {error}"
        return self.fn


def _cache_dir() -> Path:
    d = os.environ.get("TAPEFLOW_JIT_CACHE")
    path = Path(d) if d else Path.home() / ".cache" / "tapeflow" / "jit"
    path.mkdir(parents=True, exist_ok=True)
    return path


def enabled() -> bool:
    """Kernels are on unless `TAPEFLOW_JIT=0` (and numba must be importable)."""
    if os.environ.get("TAPEFLOW_JIT", "1") == "0":
        return False
    return importlib.util.find_spec("numba") is not None


def loop_kernel(
    body: Sequence[str],
    iv: str,
    carried: Sequence[str],
    views: dict[str, str],
    consts: Sequence[Any],
    ops: int,
) -> LoopKernel:
    """The kernel of a bulk-counted loop whose generated body is `body` (its lines, the
    loop's own `for` and phase-window lines excluded), or `NotAKernel`.

    `views`: the memoryview locals in scope -> their format; `consts`: the `_K` table."""
    pad = min(len(line) - len(line.lstrip()) for line in body) if body else 0
    out: list[str] = []
    guards: list[str] = []
    accesses = 0
    assigned: set[str] = {iv}
    for raw in body:
        line = raw[pad:]
        if line != line.lstrip():
            raise NotAKernel("nested statement")
        if _WRAP64.match(line):
            continue  # int64 arithmetic in numba wraps the same way
        if m := _CHECK.match(line):
            names = _names(m["cond"])
            if names & assigned:
                raise NotAKernel(f"a bounds check that depends on the loop: {m['cond']}")
            if m["cond"] not in guards:
                guards.append(m["cond"])
            continue
        line = _CONST.sub(lambda m: _literal(consts[int(m[1])]), line)
        if m := _ACCESS.match(line):
            out.append(f"_acc[_p] = {m['expr']}")
            out.append("_p += 1")
            accesses += 1
            continue
        out.append(line)
        try:
            for node in ast.walk(ast.parse(line)):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    assigned.add(node.id)
        except SyntaxError as error:
            raise NotAKernel(f"unparsable line {line!r}") from error
    inner = "\n".join("        " + line for line in out) or "        pass"
    tree = ast.parse(inner.replace("\n        ", "\n").strip())
    helpers = _check(tree, views)
    params = [p for p in _free_names(tree, iv) if p not in carried]
    ret = ", ".join(carried) + ("," if carried else "")
    lines = ["import math", "import numpy as np", "", "_INF = math.inf", "_NAN = math.nan", ""]
    for name in sorted(helpers):
        lines.append(HELPERS[name].strip())
        lines.append("")
    args = ", ".join([*params, "_start", "_stop", "_step", "_acc", *carried])
    lines.append(f"def kernel({args}):")
    lines.append("    _p = 0")
    lines.append(f"    for {iv} in range(_start, _stop, _step):")
    lines.append(inner)
    lines.append(f"    return ({ret})" if carried else "    return 0")
    source = "\n".join(lines) + "\n"
    for name, call in MATH.items():
        source = source.replace(f"{name}(", f"{call}(")
    return LoopKernel(source, params, list(carried), accesses, guards, ops)


def _literal(value: Any) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "_NAN"
        if math.isinf(value):
            return "_INF" if value > 0 else "(-_INF)"
        return repr(value)
    raise NotAKernel(f"a run-time constant {type(value).__name__}")


def _names(expr: str) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(expr)) if isinstance(n, ast.Name)}


def _check(tree: ast.AST, views: dict[str, str]) -> set[str]:
    """Refuses anything outside the subset; returns the helpers the body calls."""
    helpers: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, _OK_NODES):
            raise NotAKernel(f"{type(node).__name__} is not in the kernel subset")
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, int) and not isinstance(v, bool) and not _I64_MIN <= v <= _I64_MAX:
                raise NotAKernel(f"an integer literal beyond int64: {v}")
            if not isinstance(v, int | float | bool):
                raise NotAKernel(f"a {type(v).__name__} literal")
        if isinstance(node, ast.Subscript):
            target = node.value
            if not isinstance(target, ast.Name) or (
                target.id != "_acc" and views.get(target.id) not in ("d", "q")
            ):
                raise NotAKernel(f"subscript of {ast.unparse(target)}")
        if isinstance(node, ast.Call):
            f = node.func
            if not isinstance(f, ast.Name) or node.keywords:
                raise NotAKernel(f"call {ast.unparse(node)}")
            if f.id in HELPERS:
                helpers.add(f.id)
            elif f.id not in MATH and f.id not in ("abs", "float", "min", "max"):
                raise NotAKernel(f"call of {f.id}")
    return helpers


def _free_names(tree: ast.AST, iv: str) -> list[str]:
    """Names the body reads before it assigns them (in order), but the loop variable,
    the kernel's own names and the builtins."""
    assigned = {iv, "_acc", "_p"}
    free: list[str] = []
    assert isinstance(tree, ast.Module)
    for stmt in tree.body:
        loads = [n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
        for name in loads:
            if name not in assigned and name not in free and name not in BUILTINS \
                    and name not in HELPERS and name not in MATH:  # fmt: skip
                free.append(name)
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                assigned.add(n.id)
    return free

