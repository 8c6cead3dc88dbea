"""Emitters of control flow: `scf.for`/`affine.for` -> `for` over `range` (a simple body
counted in bulk, its streamed variant, its numba kernel variant), `scf.if` -> `if`,
`scf.while` -> `while True`, `func.call` -> a call."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import affine, func, scf
from xdsl.ir import Block, Operation, SSAValue

from tapeflow.hwmodel import jit
from tapeflow.hwmodel.compiled.compiler import FunctionCompiler, emitter
from tapeflow.hwmodel.compiled.limits import UnsupportedOpError
from tapeflow.hwmodel.compiled.ranges import (
    Interval,
    Stream,
    affine_plain,
    affine_ranges,
    affine_results,
)
from tapeflow.hwmodel.jit import St

@emitter("scf.for")
def _scf_for(c: FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, scf.ForOp)
    lb, ub, step = c.use(op.lb), c.use(op.ub), c.use(op.step)
    iv_range = _iv_range(c.range_of(op.lb), c.range_of(op.ub), c.range_of(op.step))
    sr = c.range_of(op.step)
    const_step = sr[0] if sr is not None and sr[0] == sr[1] > 0 else None
    _for_loop(c, op, indent, (lb, ub, step), [lb, ub, step], True, op.iter_args, iv_range,
              const_step)  # fmt: skip


def _streamed_variant(
    c: FunctionCompiler, indent: int, for_line: int, col: Stream, iv: str, step: int
) -> None:
    """Rewrites the bulk-counted loop emitted from `for_line` as `if n >= Trace.stream_min:
    <the loop without _A calls, addresses appended by Trace.stream per window chunk>
    else: <the loop as emitted>`. Addresses, their order and the access count at every
    phase end are the per-access code's."""
    k, r, n, s = c.bulk_names
    loop = c.lines[for_line:]
    del c.lines[for_line:]
    extra = [i - for_line for i in col.lines]
    kinds = [st.kind for i, (_, st) in enumerate(loop) if i not in extra]
    if {"access", "tape", "copy"} & set(kinds):
        c.lines.extend(loop)  # an access that is not a stream site (tape, records, copy)
        return
    q, j = c.fresh("q"), c.fresh("j")
    sites = ", ".join(f"{a}, {b}" for a, b in col.sites)
    c.variant(indent, loop)
    c.emit(indent, f"if {n} >= _SMIN:")
    c.emit(indent + 1, f"{q} = ({sites},); {j} = {r}.start")
    for i, (d, st) in enumerate(loop):
        if i in extra:
            continue
        if st == c.bulk_end:
            st = St(f"if {iv} == {s}: _STREAM({j}, {iv} + {step}, {step}, {q}); {j} = {iv} + "
                    f"{step}; {s} = _WBULK({k}, {r}, {iv})")  # fmt: skip
        c.lines.append((d + 1, st))
    c.emit(indent + 1, f"_STREAM({j}, {r}.stop, {step}, {q})")
    c.emit(indent, "else:", "else")
    c.lines.extend((d + 1, st) for d, st in loop)


def _kernel_variant(
    c: FunctionCompiler, op: Operation, indent: int, start: int, rng: str, carried: list[str]
) -> None:
    """Puts the loop emitted from line `start` under `if <hoisted checks pass and its numba
    kernel ran (Trace.jit_nest)>: <carried values> else: <the loop>`, if the loop nest is
    in the kernel subset (`tapeflow.hwmodel.jit`)."""
    loop = c.lines[start:]
    try:
        kernel = jit.nest_kernel(jit.expand(loop, c.plain), carried, c.views, c.cm.consts,
                                 _static_ops(c, op.regions[0].block), c.records)  # fmt: skip
    except jit.NotAKernel as why:
        c.cm.not_kernels.append((op, str(why)))
        return
    m = len(c.cm.kernels)
    c.cm.kernels.append(kernel)
    params = "".join(f"{p}, " for p in kernel.params)
    values = "".join(f"{v}, " for v in carried)
    guards = "".join(f"{g} and " for g in kernel.guards)
    j = c.fresh("j")
    del c.lines[start:]
    c.variant(indent, loop)
    objects = "".join(f"{o}, " for o in kernel.objects)
    c.emit(indent, f"if {guards}({j} := _JNEST({m}, len({rng}), ({params}), ({values}), "
                   f"({objects}))) is not None:")  # fmt: skip
    c.emit(indent + 1, f"{values} = {j}" if carried else "pass")
    c.emit(indent, "else:", "else")
    c.lines.extend((d + 1, st) for d, st in loop)


def _static_ops(c: FunctionCompiler, block: Block) -> int:
    """Ops one execution of `block` runs, loops of constant trip count included (others
    counted once): what decides whether a kernel is worth compiling."""
    total = 0
    for op in block.ops:
        total += 1
        if isinstance(op, scf.ForOp):
            lb, ub, st = (c.range_of(v) for v in (op.lb, op.ub, op.step))
            trips = 1
            if lb and ub and st and lb[0] == lb[1] and ub[0] == ub[1] and st[0] == st[1] > 0:
                trips = max(0, -(-(ub[0] - lb[0]) // st[0]))
            total += trips * _static_ops(c, op.body.block)
        else:
            total += sum(_static_ops(c, r.block) for r in op.regions if r.blocks)
    return total


def _iv_range(lb: Interval | None, ub: Interval | None, step: Interval | None) -> Interval | None:
    """The induction variable's [lo, hi] inside a loop with a constant positive step."""
    if lb is None or ub is None or step is None or not step[0] == step[1] > 0:
        return None
    return lb[0], ub[1] - 1


def _for_loop(
    c: FunctionCompiler,
    op: scf.ForOp | affine.ForOp,
    indent: int,
    bounds: Sequence[str],
    reads: Sequence[str],
    ok: bool,
    inits: Sequence[SSAValue],
    iv_range: Interval | None,
    step: int | None,
) -> None:
    """The `for` loop shared by `scf.for` and `affine.for`: `bounds` are the Python range's
    arguments (`reads`: the locals they read; `ok`: a kernel may take them), `inits` the
    initial values of the carried (iter_args) values, `step` the constant step if positive."""
    body = op.body.block
    if iv_range is not None:
        c.ranges[body.args[0]] = iv_range
    iv = c.fresh("i")
    carried = [c.fresh("c") for _ in inits]
    c.assign(indent, carried, [c.use(v) for v in inits])
    start = len(c.lines)
    counted = c.loop_header(indent, body, bounds, iv, reads, ok)
    for_line = len(c.lines) - 1
    if counted is not None and step is not None:
        inside = {r for o in body.walk() for r in o.results} | set(body.args[1:])
        c.stream = Stream(body.args[0], inside)
    before = c.has_access
    c.has_access = False
    yielded = c.block(body, indent + 1, [iv, *carried], counted)
    c.assign(indent + 1, carried, yielded)
    c.loop_end(indent + 1, counted)
    col, c.stream = c.stream, None
    if col is not None and col.ok and col.sites:
        _streamed_variant(c, indent, for_line, col, iv, step)  # type: ignore[arg-type]
    if c.has_access and counted is None:
        c.emit(indent + 1, "if len(_T) >= _LIM: _FLUSH()", "flush")
    c.has_access = c.has_access or before
    if jit.enabled():
        _kernel_variant(c, op, indent, start, f"range({', '.join(bounds)})", carried)
    results = [c.define(r) for r in op.results]
    c.assign(indent, results, carried)
    for r in op.results:
        c.bind(r, indent, op)


@emitter("scf.if")
def _scf_if(c: FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, scf.IfOp)
    cond = c.use(op.cond)
    results = [c.fresh("c") for _ in op.results]
    c.py(indent, f"if {cond}:", [cond])
    y = c.block(op.true_region.block, indent + 1)
    c.assign(indent + 1, results, y)
    c.py(indent + 1, "pass")
    if op.false_region.blocks:
        c.emit(indent, "else:", "else")
        y = c.block(op.false_region.block, indent + 1)
        c.assign(indent + 1, results, y)
        c.py(indent + 1, "pass")
    for r, name in zip(op.results, results, strict=True):
        c.names[r] = name
        c.bind(r, indent, op)


@emitter("scf.while")
def _scf_while(c: FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, scf.WhileOp)
    before = op.before_region.block
    after = op.after_region.block
    bargs = [c.fresh("c") for _ in before.args]
    aargs = [c.fresh("c") for _ in after.args]
    results = [c.define(r) for r in op.results]
    c.assign(indent, bargs, [c.use(v) for v in op.arguments])
    c.emit(indent, "while True:")
    had = c.has_access
    c.has_access = False
    cond, *fwd = c.block(before, indent + 1, bargs)
    c.emit(indent + 1, f"if not {cond}:")
    c.assign(indent + 2, results, fwd)
    for r in op.results:
        c.bind(r, indent + 2, op)
    c.emit(indent + 2, "break")
    c.assign(indent + 1, aargs, fwd)
    y = c.block(after, indent + 1, aargs)
    c.assign(indent + 1, bargs, y)
    c.loop_end(indent + 1, None)
    if c.has_access:
        c.emit(indent + 1, "if len(_T) >= _LIM: _FLUSH()")
    c.has_access = c.has_access or had


@emitter("func.call")
def _call(c: FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, func.CallOp)
    callee = op.callee.root_reference.data
    if callee not in c.cm.functions or not c.cm.functions[callee].body.blocks:
        raise UnsupportedOpError(op, f"fast path: call of external or unknown function @{callee}")
    args = [c.use(v) for v in op.operands]
    results = [c.define(r) for r in op.results]
    call = f"{c.cm.py_name(callee)}({', '.join(args)})"
    if results:
        c.emit(indent, f"{', '.join(results)}, = {call}")
    else:
        c.emit(indent, call)
    for r in op.results:
        c.bind(r, indent, op)


@emitter("affine.for")
def _affine_for(c: FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, affine.ForOp)
    lbm, ubm = op.lowerBoundMap.data, op.upperBoundMap.data
    lbo, ubo = [c.use(v) for v in op.lowerBoundOperands], [c.use(v) for v in op.upperBoundOperands]
    lbs, ubs = affine_results(lbm, lbo), affine_results(ubm, ubo)
    lb = lbs[0] if len(lbs) == 1 else f"max({', '.join(lbs)})"
    ub = ubs[0] if len(ubs) == 1 else f"min({', '.join(ubs)})"
    lbr = affine_ranges(lbm, [c.range_of(v) for v in op.lowerBoundOperands])
    ubr = affine_ranges(ubm, [c.range_of(v) for v in op.upperBoundOperands])
    iv_range = None
    if all(r is not None for r in (*lbr, *ubr)):
        lo = max(r[0] for r in lbr)  # type: ignore[index]
        hi = min(r[1] for r in ubr)  # type: ignore[index]
        step = op.step.value.data
        iv_range = _iv_range((lo, lo), (hi, hi), (step, step))
    step = op.step.value.data
    _for_loop(c, op, indent, (lb, ub, str(step)), [*lbo, *ubo], affine_plain(lbm, ubm),
              op.inits, iv_range, step if step > 0 else None)  # fmt: skip
