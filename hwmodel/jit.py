"""numba-compiled loop nests for the fast path (`tapeflow.hwmodel.compiled`).

The generated Python spends ~60 ns per simulated op; most ops run in loop nests without
events (no allocation, DMA, call or `scf.while`). For every such `scf.for`/`affine.for`,
this module turns the loop's generated statements (`nest_kernel`) into a kernel

    def kernel(<loop-invariant values>, <record tape arrays>, _K, _bc, _wn, _WIN, _acc,
               _pe, _pebc, _fo, _err, _errf, <carried values>):
        <the loop nest>
        return (<carried values>,), _acc, _p, _pe, _pebc, _npe, _nf

that numba compiles. It computes the same values and writes the same encoded accesses
(`_A(x)` becomes `_acc[_p] = x`) as the Python loop, and keeps what the Python loop keeps in
`compiled.Trace` on local arrays: the segment counters it touches (`_bc`), the phase
window (`_wn`), the phase ends with their counters (`_pe`, `_pebc`) and the segments
executed for the first time, in order (`_fo`). `Trace.jit_nest` applies them afterwards,
batch by batch, so the trace, and the report, are the Python loop's. The helpers it calls
(`jit_runtime`) are the semantics table's own functions compiled by numba
(`tapeflow.semantics.JIT_FORMS`); test/python/hwmodel/test_jit.py checks them bit for bit against
the generated code's, and every bundled kernel and random programs against the op-by-op
model.

The emitter (`compiled.compiler.FunctionCompiler`) gives every statement a kind (`St`, below),
and a nest becomes a kernel only if every statement has one: float and integer
arithmetic, the emitter's own text (scalar ops: the table's inline expressions, libm
calls as numba has them, `INLINE`); its 64-bit wrap checks are dropped (int64
arithmetic in numba wraps the same way); `memoryview`s of f64, i64/index and i32; record
tapes whose fields are all f64 (`region.read`/`write`: copied to arrays around the call,
when that costs less than the loop); `_K`'s float constants (`CompiledModule.floats`).
Integer division (`//`, `%`) has no kind: `abs(INT64_MIN)` differs between Python and
int64. Loop-invariant checks are hoisted into the caller's condition; a check that fails
inside the kernel stops it (`_err`), and the caller raises the interpreter's own error.

Compiling costs ~0.5-5 s per nest, so a kernel is compiled only once its nest has run,
its current entry included, `Trace.jit_after` (estimated) ops, or `Trace.jit_load_after`
if numba's cache has it (a load costs 20-30 ms). Kernels are files under
`TAPEFLOW_JIT_CACHE` (default: the user's cache, `$XDG_CACHE_HOME/tapeflow/jit` or
`~/.cache/tapeflow/jit`) named by a hash of their source and of the runtime
(`jit_runtime.py`, `tapeflow/semantics/__init__.py`), compiled with numba's on-disk
cache, so later runs and other processes (the bench's Dask workers) load machine code;
the runtime is cached by numba (`cache=True`: next to the package, or in
numba's user cache when the install is read-only). `TAPEFLOW_JIT=0` turns kernels off (the
Python loops, the reference). numba is the optional extra `fast`; without it the loops run
as Python.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from tapeflow.semantics import JIT_CALLS, JIT_FORMS, SCALARS


class St(NamedTuple):
    """One statement the emitter (`compiled.compiler.FunctionCompiler`) generates: its Python
    `text`, and what a loop kernel needs to know of it (`nest_kernel` works from these,
    never from the text): its `kind` ("": no kernel form; "py": a kernel takes `jit`; the
    others are this module's), the locals it `reads` and `writes`, and its kind's fields
    (`data`). Defined here, with the kernels that read it, so compiled imports jit only."""

    text: str
    kind: str = ""
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    data: tuple[Any, ...] = ()

    @property
    def jit(self) -> str:
        return self.data[0] if self.data else self.text


Lines = list[tuple[int, St]]
"""Generated statements with their indentation depth."""

RUNTIME = frozenset({*JIT_FORMS, "_grow", "_count", "_record", "_wstart", "_wbulk"})
"""What kernels may call from `tapeflow.hwmodel.jit_runtime` (the table's numba forms,
`tapeflow.semantics.JIT_FORMS`, and the trace's counter logic)."""

MATH = JIT_CALLS
"""libm helpers -> what a kernel calls (`tapeflow.semantics.JIT_CALLS`): numba calls the
same libm, and returns IEEE results where CPython's `math` raises (the generated code's
`_m_*` then asks NumPy, which gives those results); the runtime's `_m_log`, `_m_sqrt`,
`_m_sin`, `_m_cos` where libm's NaN is not the table's `NAN`."""

INLINE = {e.name: e.inline.replace(f"{e.helper}(", f"{e.jit_call}(")
          for e in SCALARS.values() if e.inline and e.helper in MATH}  # fmt: skip
"""The table's inline expressions that a kernel writes otherwise (libm calls, `MATH`)."""


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

    def charge(self, seg_charged: Sequence[int]) -> None:
        """Fills in the source's charged ops per segment execution (`@@Ck@@`, known once
        the whole module is compiled), without the window additions of none."""
        none = lambda m: "" if seg_charged[int(m[1])] == 0 else m[0]  # noqa: E731
        source = re.sub(r"^ *_wn\[0\] \+= (?:\w+ \* )?@@C(\d+)@@\n", none, self.source, flags=re.M)
        self.source = re.sub(r"@@C(\d+)@@", lambda m: str(seg_charged[int(m[1])]), source)

    @functools.cached_property
    def path(self) -> Path:
        """The kernel's file, named by its source and the runtime it calls (numba caches a
        kernel with the runtime functions compiled into it). Asked for only when the
        kernel may run, after `CompiledModule` has filled in the source's placeholders."""
        digest = hashlib.sha256(self.source.encode() + _runtime_digest()).hexdigest()[:20]
        return _cache_dir() / f"k_{digest}.py"

    @functools.cached_property
    def on_disk(self) -> bool:
        """Compiled before (by any process): loading it costs ms, not seconds."""
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
    """The user's cache, not the install (which may be read-only)."""
    d = os.environ.get("TAPEFLOW_JIT_CACHE")
    user_cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    path = Path(d) if d else user_cache / "tapeflow" / "jit"
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


def expand(lines: Lines, plain: dict[int, Lines]) -> Lines:
    """`lines` with every kernel variant (a `variant` statement then its `if`/`else`
    block) replaced by the plain loop it wraps, recursively."""
    out: Lines = []
    i = 0
    while i < len(lines):
        depth, st = lines[i]
        if st.kind != "variant":
            out.append(lines[i])
            i += 1
            continue
        out += expand([(depth + d, s) for d, s in plain[st.data[0]]], plain)
        i += 2  # the marker and the `if` line, then everything deeper or the `else:` here
        while i < len(lines) and (
            lines[i][0] > depth or lines[i][0] == depth and lines[i][1].kind == "else"
        ):
            i += 1
    return out


def nest_kernel(
    lines: Lines,
    carried: Sequence[str],
    views: dict[str, str],
    consts: Sequence[Any],
    ops: int,
    records: dict[str, int],
) -> LoopKernel:
    """The kernel of a loop nest from its generated statements `lines` (variants
    expanded: the bulk-count header if any, the `for`, the body), or `NotAKernel`. Each
    statement's kind says what it becomes; a statement without one refuses the nest.

    `carried`: the root loop's carried values; `views`: memoryview locals in scope -> their
    format; `consts`: the `_K` table; `ops`: ops per iteration of the root loop (estimate);
    `records`: record tape locals whose fields are all f64 -> their field count."""
    top = min(depth for depth, _ in lines)
    out: list[str] = []
    guards: list[str] = []
    segments: list[int] = []
    assigned = {w for _, st in lines for w in st.writes}  # not loop-invariant
    objects: list[str] = []
    used: dict[str, int] = {}
    errors: list[tuple[str, int, list[str]]] = []
    read: list[str] = []  # locals the kernel reads (the loop-invariant ones: parameters)
    rows: dict[str, tuple[str, str]] = {}  # record local -> its tape and index

    def obj(name: str) -> str:
        if name in assigned:
            raise NotAKernel(f"{name} is assigned in the nest")
        if name not in objects:
            objects.append(name)
        return name

    def fail(pad: str, kind: str, k: int, args: Sequence[str], local: Sequence[str]) -> None:
        """A failing check: note which values the error needs, and leave the kernel."""
        slots = []
        floats = kind == "run" and consts[k].name == "arith.fptosi"  # its operand
        for a in args:
            if f"{a}_d" in views or a in records:
                slots.append(obj(a))
            else:
                out.append(f"{pad}    {'_errf' if floats else '_err'}[{len(slots) + 1}] = {a}")
                slots.append(f"{'%' if floats else '#'}{len(slots) + 1}")
                read.extend(x for x in local if x == a)
        errors.append((kind, k, slots))
        out.append(f"{pad}    _err[0] = {len(errors)}")
        out.append(f"{pad}    return ({ret}), _acc, _p, _pe, _pebc, _npe, _nf")

    def tape(name: str) -> int:
        if name not in records:
            raise NotAKernel(f"record tape {name} with fields other than f64")
        used[name] = records[name]
        obj(name)
        return records[name]

    ret = ", ".join(carried) + ("," if carried else "")

    def seg(k: int) -> int:
        if k not in segments:
            segments.append(k)
        return segments.index(k)

    reserve = _access_runs(lines)
    for i, (depth, st) in enumerate(lines):
        pad = "    " * (depth - top)
        kind, d = st.kind, st.data
        emit = lambda t, pad=pad: out.append(pad + t)  # noqa: E731
        if kind in ("py", "else", "count", "wn", "range", "wstart", "for", "wbulk", "access"):
            read += st.reads
        if kind in ("wrap64", "first", "flush"):
            continue  # int64 arithmetic wraps by itself; first executions: `count`
        if kind in ("py", "else"):
            emit(st.jit)
        elif kind == "count":
            emit(f"_nf = _count(_bc, _fo, _nf, {seg(d[0])}, {d[1]})")
        elif kind == "wn":
            emit(f"_wn[0] += {d[0]}")
        elif kind == "range":
            (r, n), (lb, ub, step) = st.writes, d
            emit(f"{r}_0 = {lb}; {r}_1 = {ub}; {r}_2 = {step}")
            emit(f"{n} = len(range({r}_0, {r}_1, {r}_2))")
        elif kind == "wstart":
            (k, r, n), s = d, st.writes[0]
            emit(f"{s} = _wstart(_wn, _WIN, @@C{k}@@, {n}, {r}_0, {r}_2) "
                 f"if _wn[0] - _wn[1] >= _WIN else _NONE")  # fmt: skip
        elif kind == "for":
            emit(f"for {st.writes[0]} in range({d[0]}_0, {d[0]}_1, {d[0]}_2):")
        elif kind == "wbulk":
            (k, r, n), iv, s = d, st.reads[0], st.writes[0]
            emit(f"if {iv} == {s}:")
            emit(f"    {s}, _npe, _pe, _pebc = _wbulk(_wn, _WIN, @@C{k}@@, {n}, "
                 f"{r}_0, {r}_2, {iv}, {seg(k)}, _bc, _p, _pe, _pebc, _npe)")  # fmt: skip
        elif kind == "wend":
            emit("if _wn[0] - _wn[1] >= _WIN:")
            emit("    _npe, _pe, _pebc = _record(_pe, _pebc, _npe, _p, _bc, -1, 0)")
            emit("    _wn[1] = _wn[0]")
        elif kind == "check":
            cond, k, args, reads, local = d
            if not set(reads) & assigned:  # loop-invariant: checked before the call
                guards.append(cond) if cond not in guards else None
                continue
            read += reads
            emit(f"if not ({cond}):")
            fail(pad, "run", k, args, local)
        elif kind == "rcheck":
            t, i, k = d
            tape(t)
            guard = f"not ({t}.freed or {t}.dma is not None)"
            guards.append(guard) if guard not in guards else None
            emit(f"if not 0 <= {i} < {t}_n:")
            fail(pad, "rcheck", k, [t, i], st.reads)
        elif kind == "rwrite":
            t, i, vals = d
            if len(vals) != tape(t):
                raise NotAKernel(f"a record of {len(vals)} fields in {t}")
            for f, v in enumerate(vals):
                emit(f"{t}_r[{i}, {f}] = {v}")
            emit(f"{t}_w[{i}] = 1")
            read += [x for x in st.reads if x != t]
        elif kind == "rread":
            rec, t, i = d
            rows[rec] = (t, i)
            tape(t)
            read += [x for x in st.reads if x != t]
        elif kind == "rnone":
            _, k, t, i = d
            emit(f"if {t}_w[{i}] == 0:")
            fail(pad, "rnone", k, [t, i], st.reads)
        elif kind == "rfields":
            t, i = rows[d[1]]
            for f, v in enumerate(d[0]):
                emit(f"{v} = {t}_r[{i}, {f}]")
        elif kind == "access":
            if i in reserve:
                emit(f"if _p + {reserve[i]} > len(_acc):")
                emit(f"    _acc = _grow(_acc, _p, _p + {reserve[i]})")
            emit(f"_acc[_p] = {d[0]}")
            emit("_p += 1")
        else:
            raise NotAKernel(f"no kernel form: {st.text}")
    arrays = [f"{t}_{x}" for t in used for x in "rwn"]
    params = list(dict.fromkeys(n for n in read if n not in assigned and n not in carried
                                and n not in used))  # fmt: skip
    imports = ", ".join(sorted(RUNTIME | {"_NONE"}))
    lines_out = ["import math", "", f"from tapeflow.hwmodel.jit_runtime import {imports}", ""]
    args = ", ".join([*params, *arrays, "_K", "_bc", "_wn", "_WIN", "_acc", "_pe", "_pebc",
                      "_fo", "_err", "_errf", *carried])  # fmt: skip
    lines_out.append(f"def kernel({args}):")
    lines_out.append("    _p = 0; _npe = 0; _nf = 0")
    lines_out += ["    " + line for line in out]
    lines_out.append(f"    return ({ret}), _acc, _p, _pe, _pebc, _npe, _nf")
    source = "\n".join(lines_out) + "\n"
    return LoopKernel(source, params, list(carried), guards, ops, segments, objects, used,
                      errors)  # fmt: skip


def _access_runs(lines: Lines) -> dict[int, int]:
    """The first access of each run of statements at one depth -> the run's accesses: they
    run one after the other (a deeper statement ends the run), so one capacity check of
    `_acc` before the first covers them all."""
    runs: dict[int, int] = {}
    first = -1
    for i, (depth, st) in enumerate(lines):
        if i and depth != lines[i - 1][0]:
            first = -1
        if st.kind == "access":
            first = i if first < 0 else first
            runs[first] = runs.get(first, 0) + 1
    return runs
