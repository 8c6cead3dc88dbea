"""numba-compiled loop nests for the fast path (`tapeflow.hwmodel.compiled`).

The generated Python spends ~60 ns per simulated op; most ops run in loop nests without
events (no allocation, DMA, call or `scf.while`). For every such `scf.for`/`affine.for`,
this module turns the loop's generated Python (`nest_kernel`) into a kernel

    def kernel(<loop-invariant values>, <record tape arrays>, _bc, _wn, _WIN, _acc, _pe,
               _pebc, _fo, _err, <carried values>):
        <the loop nest>
        return (<carried values>,), _acc, _p, _pe, _pebc, _npe, _nf

that numba compiles. It computes the same values and writes the same encoded accesses
(`_A(x)` becomes `_acc[_p] = x`) as the Python loop, and keeps what the Python loop keeps in
`compiled.Trace` on local arrays: the segment counters it touches (`_bc`), the phase
window (`_wn`), the phase ends with their counters (`_pe`, `_pebc`) and the segments
executed for the first time, in order (`_fo`). `Trace.jit_nest` applies them afterwards,
batch by batch, so the trace, and the report, are the Python loop's. The helpers it calls
(`jit_runtime`) port the generated code's helpers; test/python/test_jit.py checks them bit
for bit, and every bundled kernel and random programs against the op-by-op model.

A nest becomes a kernel only if every statement is in a small checked subset (`_check`):
float and integer arithmetic as the generated code writes it (its 64-bit wrap checks are
dropped: int64 arithmetic in numba wraps the same way), `memoryview`s of f64, i64/index
and i32, record tapes whose fields are all f64 (`region.read`/`write`: copied to arrays
around the call, when that costs less than the loop), libm calls. Integer division (`//`,
`%`) is refused: `abs(INT64_MIN)` differs between Python and int64. Loop-invariant checks
are hoisted into the caller's condition; a check that fails inside the kernel stops it
(`_err`), and the caller raises the interpreter's own error.

Compiling costs ~0.5-5 s per nest, so a kernel is compiled only once its nest has run,
its current entry included, `Trace.jit_after` (estimated) ops, or at once if numba's cache
has it. Kernels are files under
`TAPEFLOW_JIT_CACHE` (default `~/.cache/tapeflow/jit`) named by a hash of their source and
compiled with numba's on-disk cache, so later runs and other processes (the bench's Dask
workers) load machine code. `TAPEFLOW_JIT=0` turns kernels off (the Python loops, the
reference). numba is the optional extra `fast`; without it the loops run as Python.
"""

from __future__ import annotations

import ast
import functools
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

from tapeflow.semantics import JIT_CALLS, JIT_FORMS

_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1

RUNTIME = frozenset({*JIT_FORMS, "_grow", "_record", "_wstart", "_wbulk"})
"""What kernels may call from `tapeflow.hwmodel.jit_runtime` (the table's numba forms,
`tapeflow.semantics.JIT_FORMS`, and the trace's counter logic)."""

MATH = JIT_CALLS
"""libm helpers -> what a kernel calls (`tapeflow.semantics.JIT_CALLS`): numba calls the
same libm, and returns IEEE results where CPython's `math` raises (the generated code's
`_m_*` then asks NumPy, which gives those results); `_m_log` is the runtime's."""

_CALLS = {"abs", "float", "int", "min", "max", "range", "len"}  # builtins kernels may call
BUILTINS = _CALLS | {"math"}
_OWN = {"_acc", "_bc", "_wn", "_fo", "_err", "_errf"}  # the kernel's own arrays

_CHECK = re.compile(r"^if not \((?P<cond>.*)\): _RUN\(_K\[\d+\], \(.*\)\)$")
_WRAP64 = re.compile(rf"^if not {_I64_MIN} <= (\w+) <= {_I64_MAX}: \1 = _wrap\(\1, 64\)$")
_ACCESS = re.compile(r"^_A\((?P<expr>.*)\)$")
_CONST = re.compile(r"_K\[(\d+)\]")

_OK_NODES = (
    ast.Module, ast.FunctionDef, ast.arguments, ast.arg, ast.For, ast.Assign, ast.AugAssign,
    ast.If, ast.Return, ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.BoolOp,
    ast.Compare, ast.IfExp, ast.Subscript, ast.Call, ast.Tuple, ast.Load,
    ast.Store, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.BitAnd, ast.BitOr, ast.BitXor, ast.RShift,
    ast.USub, ast.UAdd, ast.Not, ast.And, ast.Or, ast.Eq, ast.NotEq, ast.Lt, ast.LtE,
    ast.Gt, ast.GtE, ast.Pass,
)  # fmt: skip


class NotAKernel(Exception):
    """The loop body is outside the subset a kernel takes (the message says what)."""


@dataclass
class LoopKernel:
    """One loop nest's kernel: its source, what the caller passes and gets back, and once
    compiled, the numba dispatcher."""

    source: str
    params: list[str]  # loop-invariant values, in call order
    carried: list[str]
    guards: list[str] = field(default_factory=list)  # hoisted bounds checks
    ops: int = 1  # ops per iteration of the root loop (inner loops of unknown trip count once)
    segments: list[int] = field(default_factory=list)  # the counters it keeps (`_bc` order)
    objects: list[str] = field(default_factory=list)
    """Python objects the caller passes: record tapes (their fields become arrays) and the
    memrefs that failed checks name."""
    records: dict[str, int] = field(default_factory=dict)  # record tape -> its field count
    errors: list[tuple[str, int, list[str]]] = field(default_factory=list)
    """Per failing check (`_err[0]` = its index + 1): the runtime function to call (`run`,
    `rcheck`, `rnone`), the `_K` index of its op and its arguments (object names, `_err`
    slots `#j` or `_errf` slots `%j`)."""
    fn: Any = None
    failed: str | None = None
    runs: int = 0  # calls that ran it
    seen: int = 0  # ops its nest has run, estimated (compiled from `Trace.jit_after` on)

    @functools.cached_property
    def path(self) -> Path:
        """The kernel's file, named by its source and the runtime it calls (numba caches a
        kernel with the runtime functions compiled into it). Asked for only when the
        kernel may run, after `CompiledModule` has filled in the source's placeholders."""
        digest = hashlib.sha256(self.source.encode() + _runtime_digest()).hexdigest()[:20]
        return _cache_dir() / f"k_{digest}.py"

    @functools.cached_property
    def on_disk(self) -> bool:
        """Compiled before (by any process): loading it costs little, so no waiting."""
        return self.path.exists()

    def compile(self) -> Any:
        """The numba dispatcher (it compiles at the first call, or loads numba's cache),
        or None if numba is missing (`failed` says why)."""
        if self.fn is not None or self.failed is not None:
            return self.fn
        try:
            import numba

            path = self.path
            if not path.exists():
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(self.source)
                os.replace(tmp, path)
            spec = importlib.util.spec_from_file_location(f"tapeflow_jit_{path.stem}", path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module  # numba's cache imports the module by name
            spec.loader.exec_module(module)
            self.fn = numba.njit(cache=True)(module.kernel)
        except Exception as error:  # no numba, a read-only cache directory...
            self.failed = f"{type(error).__name__}: {error}"
        return self.fn


def is_typing_error(error: Exception) -> bool:
    """numba refused the kernel at compile time (before running any of it)."""
    from numba.core.errors import NumbaError

    return isinstance(error, NumbaError)


def _cache_dir() -> Path:
    d = os.environ.get("TAPEFLOW_JIT_CACHE")
    path = Path(d) if d else Path.home() / ".cache" / "tapeflow" / "jit"
    path.mkdir(parents=True, exist_ok=True)
    return path


@functools.cache
def _runtime_digest() -> bytes:
    from tapeflow import semantics

    runtime = Path(__file__).with_name("jit_runtime.py").read_bytes()
    return hashlib.sha256(runtime + Path(semantics.__file__).read_bytes()).digest()


def enabled() -> bool:
    """Kernels are on unless `TAPEFLOW_JIT=0` (and numba must be importable)."""
    return os.environ.get("TAPEFLOW_JIT", "1") != "0" and _numba_installed()


@functools.cache
def _numba_installed() -> bool:
    return importlib.util.find_spec("numba") is not None


_COUNT1 = re.compile(r"^if _BC\[(\d+)\]: _BC\[\1\] \+= (.+)$")
_FIRST1 = re.compile(r"^else: _FIRST\((\d+)\)(; _BC\[\1\] \+= .* - 1)?$")
_WN = re.compile(r"^_WN\[0\] \+= (.+)$")
_RANGE = re.compile(r"^(r\d+) = (range\(.*\)); (n\d+) = len\(\1\)$")
_WSTART = re.compile(r"^(s\d+) = _WSTART\((\d+), (r\d+)\) if _WN\[0\] - _WN\[1\] >= _WIN else None$")
_FOR_R = re.compile(r"^for (\w+) in (r\d+):$")
_WBULK = re.compile(r"^if (\w+) == (s\d+): \2 = _WBULK\((\d+), (r\d+), \1\)$")
_WEND = "if _WN[0] - _WN[1] >= _WIN: _WEND()"
_FLUSH = "if len(_T) >= _LIM: _FLUSH()"
_RCHECK = re.compile(
    r"^if (\w+)\.freed or \1\.dma is not None or not 0 <= (\w+) < \1\.count: "
    r"_RCHECK\(_K\[(\d+)\], \1, \2\)$"
)
_RWRITE = re.compile(r"^(\w+)\.records\[(\w+)\] = \((.*),\)$")
_RREAD = re.compile(r"^(r\d+) = (\w+)\.records\[(\w+)\]$")
_RNONE = re.compile(r"^if (r\d+) is None: _RNONE\(_K\[(\d+)\], (\w+), (\w+)\)$")
_RFIELDS = re.compile(r"^(.*), = (r\d+)$")
_RUN_ARGS = re.compile(r"_RUN\(_K\[(\d+)\], \((.*)\)\)$")
_MARK = re.compile(r"^# @variant (\d+)$")


def expand(lines: Sequence[str], plain: dict[int, list[str]]) -> list[str]:
    """`lines` with every kernel variant (`# @variant ID` then its `if`/`else` block) replaced
    by the plain loop it wraps, recursively."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _MARK.match(line.strip())
        if not m:
            out.append(line)
            i += 1
            continue
        pad = line[: len(line) - len(line.lstrip())]
        body = plain[int(m[1])]
        out += expand([pad + b for b in body], plain)
        i += 2  # the marker and the `if` line, then everything deeper or the `else:` here
        while i < len(lines) and (
            lines[i].startswith(pad + " ") or lines[i] == pad + "else:"
        ):
            i += 1
    return out


def nest_kernel(
    lines: Sequence[str],
    carried: Sequence[str],
    views: dict[str, str],
    consts: Sequence[Any],
    ops: int,
    records: dict[str, int],
) -> LoopKernel:
    """The kernel of a loop nest from its generated Python `lines` (variants expanded:
    the bulk-count header if any, the `for`, the body), or `NotAKernel`.

    `carried`: the root loop's carried values; `views`: memoryview locals in scope -> their
    format; `consts`: the `_K` table; `ops`: ops per iteration of the root loop (estimate);
    `records`: record tape locals whose fields are all f64 -> their field count."""
    pad = min(len(line) - len(line.lstrip()) for line in lines)
    out: list[str] = []
    guards: list[str] = []
    segments: list[int] = []
    assigned = _stored(lines)  # everything the nest assigns: not loop-invariant
    objects: list[str] = []
    used: dict[str, int] = {}
    errors: list[tuple[str, int, list[str]]] = []
    reads: dict[str, tuple[str, str]] = {}  # record local -> its tape and index

    def obj(name: str) -> str:
        if name in assigned:
            raise NotAKernel(f"{name} is assigned in the nest")
        if name not in objects:
            objects.append(name)
        return name

    def fail(ind: str, kind: str, k: str, args: list[str]) -> None:
        """A failing check: note which values the error needs, and leave the kernel."""
        slots = []
        floats = kind == "run" and consts[int(k)].name == "arith.fptosi"  # its operand
        for a in args:
            if f"{a}_d" in views or a in records:
                slots.append(obj(a))
            else:
                out.append(f"{ind}    {'_errf' if floats else '_err'}[{len(slots) + 1}] = {a}")
                slots.append(f"{'%' if floats else '#'}{len(slots) + 1}")
        errors.append((kind, int(k), slots))
        out.append(f"{ind}    _err[0] = {len(errors)}")
        out.append(f"{ind}    return ({ret}), _acc, _p, _pe, _pebc, _npe, _nf")

    def tape(name: str) -> int:
        if name not in records:
            raise NotAKernel(f"record tape {name} with fields other than f64")
        used[name] = records[name]
        obj(name)
        return records[name]

    ret = ", ".join(carried) + ("," if carried else "")

    def seg(k: str) -> int:
        if int(k) not in segments:
            segments.append(int(k))
        return segments.index(int(k))

    for raw in lines:
        text = raw[pad:]
        line = text.lstrip()
        ind = text[: len(text) - len(line)]
        emit = lambda t, ind=ind: out.append(ind + t)  # noqa: E731
        if not line or line in (_FLUSH,) or _WRAP64.match(line) or _FIRST1.match(line):
            continue
        if m := _COUNT1.match(line):
            k = seg(m[1])
            emit(f"if _bc[{k}] == 0:")
            emit(f"    _fo[_nf] = {k}")
            emit("    _nf += 1")
            emit(f"_bc[{k}] += {m[2]}")
            continue
        if m := _WN.match(line):
            emit(f"_wn[0] += {m[1]}")
            continue
        if m := _RANGE.match(line):
            r, n = m[1], m[3]
            call = ast.parse(m[2]).body[0].value  # type: ignore[attr-defined]
            bounds = [ast.unparse(x) for x in call.args]
            emit(f"{r}_0 = {bounds[0]}; {r}_1 = {bounds[1]}; {r}_2 = {bounds[2]}")
            emit(f"{n} = len(range({r}_0, {r}_1, {r}_2))")
            continue
        if m := _WSTART.match(line):
            s_, k, r = m[1], m[2], m[3]
            emit(f"{s_} = _wstart(_wn, _WIN, @@C{k}@@, {_n_of(r, lines)}, {r}_0, {r}_2) "
                 f"if _wn[0] - _wn[1] >= _WIN else _NONE")  # fmt: skip
            continue
        if m := _FOR_R.match(line):
            emit(f"for {m[1]} in range({m[2]}_0, {m[2]}_1, {m[2]}_2):")
            continue
        if m := _WBULK.match(line):
            iv, s_, k, r = m[1], m[2], m[3], m[4]
            emit(f"if {iv} == {s_}:")
            emit(f"    {s_}, _npe, _pe, _pebc = _wbulk(_wn, _WIN, @@C{k}@@, {_n_of(r, lines)}, "
                 f"{r}_0, {r}_2, {iv}, {seg(k)}, _bc, _p, _pe, _pebc, _npe)")  # fmt: skip
            continue
        if line == _WEND:
            emit("if _wn[0] - _wn[1] >= _WIN:")
            emit("    _npe, _pe, _pebc = _record(_pe, _pebc, _npe, _p, _bc, -1, 0)")
            emit("    _wn[1] = _wn[0]")
            continue
        if m := _CHECK.match(line):
            if not _names(m["cond"]) & assigned:  # loop-invariant: checked before the call
                guards.append(m["cond"]) if m["cond"] not in guards else None
                continue
            call = _RUN_ARGS.search(line)
            assert call is not None
            emit(f"if not ({m['cond']}):")
            fail(ind, "run", call[1], [a.strip() for a in call[2].split(",") if a.strip()])
            continue
        if m := _RCHECK.match(line):
            t, i = m[1], m[2]
            tape(t)
            guard = f"not ({t}.freed or {t}.dma is not None)"
            guards.append(guard) if guard not in guards else None
            emit(f"if not 0 <= {i} < {t}_n:")
            fail(ind, "rcheck", m[3], [t, i])
            continue
        if m := _RWRITE.match(line):
            t, i, vals = m[1], m[2], [v.strip() for v in m[3].split(",")]
            if len(vals) != tape(t):
                raise NotAKernel(f"a record of {len(vals)} fields in {t}")
            for f, v in enumerate(vals):
                emit(f"{t}_r[{i}, {f}] = {v}")
            emit(f"{t}_w[{i}] = 1")
            continue
        if m := _RREAD.match(line):
            reads[m[1]] = (m[2], m[3])
            tape(m[2])
            continue
        if m := _RNONE.match(line):
            t, i = m[3], m[4]
            emit(f"if {t}_w[{i}] == 0:")
            fail(ind, "rnone", m[2], [t, i])
            continue
        if (m := _RFIELDS.match(line)) and m[2] in reads:
            t, i = reads[m[2]]
            for f, v in enumerate(x.strip() for x in m[1].split(",")):
                emit(f"{v} = {t}_r[{i}, {f}]")
            continue
        line = _CONST.sub(lambda m: _literal(consts[int(m[1])]), line)
        if m := _ACCESS.match(line):
            emit("if _p == len(_acc):")
            emit("    _acc = _grow(_acc, _p)")
            emit(f"_acc[_p] = {m['expr']}")
            emit("_p += 1")
            continue
        emit(line)  # arithmetic, loads, stores, if/else, for: `_check` has the last word
    body = "\n".join(out)
    try:
        tree = ast.parse(re.sub(r"@@C\d+@@", "1", body))
    except (SyntaxError, RecursionError, MemoryError) as error:  # Python's limits
        raise NotAKernel(f"{type(error).__name__}: {error}") from None
    _check(tree, views, list(used))
    arrays = [f"{t}_{x}" for t in used for x in "rwn"]
    params = [p for p in _free_names(tree) if p not in carried and p not in arrays]
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        v for v in MATH.values() if v in body}  # fmt: skip
    imports = ", ".join(sorted(names & (RUNTIME | {"_INF", "_NAN", "_NONE"}))) or "_NONE"
    lines_out = ["import math", "", f"from tapeflow.hwmodel.jit_runtime import {imports}", ""]
    args = ", ".join([*params, *arrays, "_bc", "_wn", "_WIN", "_acc", "_pe", "_pebc", "_fo",
                      "_err", "_errf", *carried])  # fmt: skip
    lines_out.append(f"def kernel({args}):")
    lines_out.append("    _p = 0; _npe = 0; _nf = 0")
    lines_out += ["    " + line for line in out]
    lines_out.append(f"    return ({ret}), _acc, _p, _pe, _pebc, _npe, _nf")
    source = "\n".join(lines_out) + "\n"
    for name, call in MATH.items():
        source = source.replace(f"{name}(", f"{call}(")
    return LoopKernel(source, params, list(carried), guards, ops, segments, objects, used,
                      errors)  # fmt: skip


def _stored(lines: Sequence[str]) -> set[str]:
    """Every name a statement of `lines` assigns (loop variables included)."""
    out: set[str] = set()
    for raw in lines:
        line = raw.strip()
        try:
            tree = ast.parse(line + " pass" if line.endswith(":") else line)
        except SyntaxError:  # `else:`, or a statement the translation refuses anyway
            continue
        out |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return out


def _n_of(r: str, lines: Sequence[str]) -> str:
    """The trip-count local of bulk range `r` (`rX = range(...); nY = len(rX)`)."""
    for line in lines:
        m = _RANGE.match(line.strip())
        if m and m[1] == r:
            return m[3]
    raise NotAKernel(f"no range line for {r}")


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


def _check(tree: ast.AST, views: dict[str, str], tapes: Sequence[str] = ()) -> None:
    """Refuses anything outside the subset (`NotAKernel`)."""
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
                target.id not in _OWN
                and views.get(target.id) not in ("d", "q", "i")
                and target.id not in {f"{t}_{x}" for t in tapes for x in "rw"}
            ):
                raise NotAKernel(f"subscript of {ast.unparse(target)}")
        if isinstance(node, ast.Call):
            f = node.func
            if not isinstance(f, ast.Name) or node.keywords:
                raise NotAKernel(f"call {ast.unparse(node)}")
            if f.id not in RUNTIME and f.id not in MATH and f.id not in _CALLS:
                raise NotAKernel(f"call of {f.id}")


def _free_names(tree: ast.AST) -> list[str]:
    """Names the nest reads that it never assigns (in first-read order), but the kernel's
    own names, builtins and helpers: the loop-invariant values it takes as parameters."""
    stored = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    free: list[str] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in stored \
                and n.id not in free and n.id not in BUILTINS and n.id not in RUNTIME \
                and n.id not in MATH and not n.id.startswith("_"):  # fmt: skip
            free.append(n.id)
    return free

