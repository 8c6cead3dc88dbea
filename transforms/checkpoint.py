"""`tapeflow-checkpoint`: checkpointed reversal of a time loop (Revolve's binomial schedule).

Runs on the autodiff IR (docs/CONTRACTS.md), after `tapeflow-autodiff` and before
`tapeflow-regions`. For a checkpointed top-level forward `scf.for` F of `@f_grad` (and its
reverse loop R, same `tapeflow.loop`), the forward sweep no longer pushes F's tape: it runs
F's steps untaped and keeps `snapshots=s` copies ("snapshots") of the loop-carried state:
F's iter_args, every memref F's body writes, and every memref it reads that the code
after F overwrites (a replayed step must read what the forward sweep read). The reverse
sweep then brings the state to step t (restore the nearest snapshot, advance untaped), runs
step t taped and reverses it.

Which loops: a top-level `scf.for` of a gradient function carrying the unit attribute
`tapeflow.checkpoint` (put it on the primal loop: `tapeflow-autodiff` copies it to
`@f_grad`), or named by `loops="F:K"` (the K-th top-level `scf.for` of function F,
0-based, reverse loops counted too; xDSL's pipeline syntax needs the quotes) or `loops=F`
(F's first top-level loop that pushes on the tape). With neither marker nor `loops=`,
every gradient function's first top-level loop that pushes is checkpointed (this is what
`tapeflow{checkpoint=binomial-8}` does on an unmarked kernel).

Outlined functions (beside `@f_grad`, all in autodiff-IR form):
- `@f_grad_ckptN_adv(a, b, ...)`: steps a..b-1 of F without tape (the advance);
- `@f_grad_ckptN_seg(a, b, ...)`: its own `tape.init`s, steps a..b-1 of F with their pushes
  (F's body, its `tapeflow.loop` ids kept), then R over those steps, then `tape.free`s.
  `tapeflow-regions`, `-layers`, `-stream` treat it as any gradient function, so the
  segment's tape is a record tape streamed through the DMA FIFO, sized for one segment;
- `@f_grad_ckptN_save(slot)` / `_restore(slot)` / `_swap(slot)`: copy the state to or
  from a snapshot slot, or exchange the two.
The state lives in the primal buffers and in one-element cells (`memref<1xT>`) for
scalars, and so do the adjoints R carries; the snapshots are `memref<(s+1) x shape>`
buffers allocated in `@f_grad`'s entry block, marked `tapeflow.snapshot`. Slot s holds
the memory as the reverse sweep finds it (the forward sweep's end, after the code that
follows F), restored once R's steps are reversed, so `@f_grad`'s primal outputs are the
non-checkpointed gradient's; binomial first keeps x_{T-1} there and swaps it in.

Schedules (computed at run time from the trip count T):
- `binomial` (Revolve, Griewank & Walther, ACM TOMS 26(1), Algorithm 799): snapshots form
  a stack; to reach step t from the top snapshot at p with c = s - top free slots and
  l = t + 1 - p steps, advance m = min(beta(c, r-1), l - beta(c-1, r-1)) steps and take a
  snapshot, while l > 1 and c > 1 (r: the least with beta(c, r) >= l, beta(c, r) =
  C(c+r, c)); then advance to t. Segments are one step (a one-iteration loop in `_seg`,
  so its record tape is sized for one step). The untaped steps of the whole
  gradient are Revolve's optimum r*T - beta(s+1, r-1) plus one (F's last step, which the
  forward sweep runs untaped because the code after F needs x_T).
- `periodic`: a snapshot every P = ceil(T/s) steps; each segment of P steps is replayed
  taped once, then reversed (tape of P steps, no untaped recomputation).
Recomputation re-runs F's own operations in the same order on the same state, so the
gradient is bit-identical to the non-checkpointed autodiff IR.
"""

from __future__ import annotations

from dataclasses import dataclass

from tapeflow.dialects.tape import FreeOp, InitOp, PopOp, PushOp
from tapeflow.transforms.builder import At
from tapeflow.transforms.analysis.constants import const_int
from tapeflow.transforms.index_utils import LOOP_ATTR
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, i1
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from tapeflow.diagnostics import op_error

CHECKPOINT_ATTR = "tapeflow.checkpoint"
SNAPSHOT_ATTR = "tapeflow.snapshot"
SCHEDULES = ("binomial", "periodic")
INDEX = IndexType()


def parse_spec(owner: str, spec: str) -> tuple[str, int]:
    """`schedule-s` or `"schedule:s"` (the `checkpoint=` option of the `tapeflow` pipeline;
    xDSL's pipeline syntax needs the quotes around a colon)."""
    schedule, _, count = spec.replace(":", "-").partition("-")
    try:
        snapshots = int(count) if count else 8
    except ValueError:
        raise PassFailedException(
            f"{owner}: checkpoint: expected SCHEDULE-SNAPSHOTS (e.g. binomial-8), got '{spec}'"
        ) from None
    return schedule, snapshots


def check_options(owner: str, schedule: str, snapshots: int) -> None:
    if schedule not in SCHEDULES:
        raise PassFailedException(
            f"{owner}: unknown schedule '{schedule}' (expected one of {', '.join(SCHEDULES)})"
        )
    if snapshots < 1:
        raise PassFailedException(f"{owner}: snapshots must be at least 1, got {snapshots}")


class _E(At):
    """`At` plus the index arithmetic and structured control flow the schedules need."""

    def ld(self, ref, *idx):
        return self.load(ref, list(idx))

    def st(self, value, ref, *idx):
        self.store(value, ref, list(idx))

    def add(self, a, b):
        return self.val(arith.AddiOp(a, b))

    def sub(self, a, b):
        return self.val(arith.SubiOp(a, b))

    def mul(self, a, b):
        return self.val(arith.MuliOp(a, b))

    def div(self, a, b):
        return self.val(arith.DivSIOp(a, b))

    def cmp(self, a, b, pred: str):
        return self.val(arith.CmpiOp(a, b, pred))

    def select(self, cond, a, b):
        return self.val(arith.SelectOp(cond, a, b))

    def min(self, a, b):
        return self.select(self.cmp(a, b, "slt"), a, b)

    def call(self, name: str, args: list[SSAValue]) -> None:
        self.op(func.CallOp(name, args, []))

    def loop(self, lb, ub) -> tuple[_E, SSAValue]:
        """`scf.for %i = lb to ub step 1` (no iter_args): the body's emitter and `%i`."""
        block = Block(arg_types=[INDEX])
        block.add_op(scf.YieldOp())
        self.op(scf.ForOp(lb, ub, self.index(1), [], Region(block)))
        return _E(InsertPoint.before(block.last_op)), block.args[0]  # type: ignore[arg-type]

    def when(self, cond) -> _E:
        block = Block()
        block.add_op(scf.YieldOp())
        self.op(scf.IfOp(cond, [], Region(block)))
        return _E(InsertPoint.before(block.last_op))  # type: ignore[arg-type]

    def trip_count(self, lb, ub, step):
        span = self.add(self.sub(ub, lb), self.sub(step, self.index(1)))
        n = self.div(span, step)
        return self.select(self.cmp(n, self.index(0), "slt"), self.index(0), n)


@dataclass
class _Loop:
    """One checkpointed forward/reverse pair and what its outlined functions need."""

    fn: func.FuncOp
    fwd: scf.ForOp
    rev: scf.ForOp
    state: list[SSAValue]  # the loop-carried buffers (see the module docstring)
    free: list[SSAValue]  # values used by fwd/rev, defined outside (arguments of the outlines)
    n_fwd: int  # free[:n_fwd]: those the forward body uses (the advance's arguments)
    caches: list[SSAValue]  # the caches fwd pushes
    prefix: str


def _top_loops(fn: func.FuncOp) -> list[scf.ForOp]:
    return [o for o in fn.body.block.ops if isinstance(o, scf.ForOp)]


def _pushes(loop: Operation) -> bool:
    return any(isinstance(o, PushOp) for o in loop.walk())


def _defined_inside(value: SSAValue, op: Operation) -> bool:
    owner = value.owner
    start = owner if isinstance(owner, Operation) else owner.parent_op()
    return start is not None and _defined_inside_op(start, op)


@dataclass(frozen=True)
class CheckpointPass(ModulePass):
    """Checkpoints a time loop's reverse sweep: s snapshots, steps replayed taped, reversed."""

    name = "tapeflow-checkpoint"

    snapshots: int = 8
    schedule: str = "binomial"
    loops: tuple[str, ...] = ()

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        check_options(self.name, self.schedule, self.snapshots)
        for inner in op.walk():
            if CHECKPOINT_ATTR in inner.attributes and not isinstance(inner, scf.ForOp):
                raise PassFailedException(
                    op_error(
                        inner, f"{self.name}: '{CHECKPOINT_ATTR}' marks a loop: expected an scf.for"
                    )
                )
        funcs = {f.sym_name.data: f for f in op.ops if isinstance(f, func.FuncOp)}
        named: dict[str, list[str]] = {}
        for spec in self.loops:
            name, _, index = spec.partition(":")
            if name not in funcs:
                raise PassFailedException(f"{self.name}: loops: no function named '{name}'")
            if index and not index.isdigit():
                raise PassFailedException(f"{self.name}: loops: expected F or F:K, got '{spec}'")
            named.setdefault(name, []).append(index)
        chosen: list[tuple[func.FuncOp, scf.ForOp]] = []
        for name, fn in funcs.items():
            if not any(isinstance(o, InitOp) for o in fn.walk()):
                continue  # not a gradient function (the primal keeps its marker)
            tops = _top_loops(fn)
            picks: list[scf.ForOp] = []
            for inner in fn.walk():
                if isinstance(inner, scf.ForOp) and CHECKPOINT_ATTR in inner.attributes:
                    if inner.parent_op() is not fn:
                        raise PassFailedException(
                            op_error(
                                inner,
                                f"{self.name}: a checkpointed loop must be at the"
                                " top level of its function",
                            )
                        )
                    picks.append(inner)
            for index in named.get(name, ()):
                if index:
                    k = int(index)
                    if k >= len(tops):
                        raise PassFailedException(
                            f"{self.name}: loops: @{name} has {len(tops)} top-level loop(s)"
                        )
                    picks.append(tops[k])
                else:
                    picks += [t for t in tops if _pushes(t)][:1]
            if not picks and not self.loops:
                picks = [t for t in tops if _pushes(t)][:1]
            for p in dict.fromkeys(picks):
                chosen.append((fn, p))
        for i, (fn, loop) in enumerate(chosen):  # check everything before rewriting
            self._plan(fn, loop, i)
        for i, (fn, loop) in enumerate(chosen):
            # Planned again: an earlier rewrite in the function replaced values it uses.
            plan = self._plan(fn, loop, i)
            if plan is not None:
                self._rewrite(op, plan)

    # -- analysis -------------------------------------------------------------------
    def _plan(self, fn: func.FuncOp, fwd: scf.ForOp, index: int) -> _Loop | None:
        ident = fwd.attributes.get(LOOP_ATTR)
        revs = [o for o in _top_loops(fn) if o is not fwd and o.attributes.get(LOOP_ATTR) == ident]
        if ident is None or not revs or not _pushes(fwd):
            return None  # an inactive loop or one without tape: nothing to checkpoint
        rev = revs[0]
        if const_int(rev.lb) != 0 or const_int(rev.step) != 1:
            raise PassFailedException(op_error(rev, f"{self.name}: expected a reverse loop 0..n"))
        state: dict[SSAValue, None] = {}
        caches: dict[SSAValue, None] = {}
        for o in fwd.walk():
            if isinstance(o, PushOp):
                caches[o.cache] = None
                continue
            if isinstance(o, PopOp | InitOp | FreeOp):
                raise PassFailedException(op_error(o, f"{self.name}: unexpected tape op"))
            for v in o.operands:
                if not isinstance(v.type, MemRefType) or _defined_inside(v, fwd):
                    continue
                if isinstance(o, memref.LoadOp | memref.DimOp):
                    continue
                if isinstance(o, memref.CopyOp) and v is o.source:
                    continue
                if isinstance(o, memref.StoreOp | memref.CopyOp):
                    if not v.type.has_static_shape():
                        raise PassFailedException(
                            op_error(o, f"{self.name}: the state buffer must have a static shape")
                        )
                    state[v] = None
                    continue
                raise PassFailedException(
                    op_error(o, f"{self.name}: unsupported use of a buffer in a checkpointed loop")
                )
        # A buffer the body reads and the code after the loop overwrites: recomputed steps
        # must read what the forward sweep read, so it is state too.
        walk = list(fn.walk())
        after = walk[walk.index(fwd) + sum(1 for _ in fwd.walk()) :]
        overwritten = {v for o in after for v in _written(o)}
        for o in fwd.walk():
            if isinstance(o, memref.LoadOp | memref.CopyOp):
                v = o.memref if isinstance(o, memref.LoadOp) else o.source
                if v in overwritten and v not in state and not _defined_inside(v, fwd):
                    if not v.type.has_static_shape():  # pyright: ignore
                        raise PassFailedException(
                            op_error(o, f"{self.name}: the state buffer must have a static shape")
                        )
                    state[v] = None
        for c in caches:
            for use in c.uses:
                user = use.operation
                if not (
                    _defined_inside_op(user, fwd)
                    or _defined_inside_op(user, rev)
                    or isinstance(user, FreeOp)
                ):
                    raise PassFailedException(
                        op_error(user, f"{self.name}: a cache of the loop used outside it")
                    )
        for o in rev.walk():
            if isinstance(o, PushOp):
                raise PassFailedException(op_error(o, f"{self.name}: push in a reverse loop"))
        # Values the outlines take as arguments (constants are cloned into them instead):
        # the forward body's (all defined before it), then the reverse body's.
        free: dict[SSAValue, None] = {}
        for loop, extra in ((fwd, [fwd.lb, fwd.step]), (rev, [rev.ub])):
            for v in [*extra, *(u for o in loop.body.walk() for u in o.operands)]:
                if v in caches or v in state or _defined_inside(v, loop):
                    continue
                if not isinstance(v.owner, arith.ConstantOp):
                    free[v] = None
            if loop is fwd:
                n_fwd = len(free)
        prefix = f"{fn.sym_name.data}_ckpt{index}"
        return _Loop(fn, fwd, rev, list(state), list(free), n_fwd, list(caches), prefix)

    # -- rewriting ------------------------------------------------------------------
    def _rewrite(self, module: builtin.ModuleOp, p: _Loop) -> None:
        fn, fwd, rev, s = p.fn, p.fwd, p.rev, self.snapshots
        entry = fn.body.block
        # Cells and snapshot buffers, at the top of the entry block (they dominate all).
        top = _E(InsertPoint.at_start(entry))
        scalars = [v.type for v in fwd.iter_args]
        cells = [top.val(memref.AllocaOp.get(t, shape=[1])) for t in scalars]
        dcells = [top.val(memref.AllocaOp.get(v.type, shape=[1])) for v in rev.iter_args]
        snaps: list[SSAValue] = []
        for ref in p.state:
            mt = ref.type
            assert isinstance(mt, MemRefType)
            snaps.append(top.alloc(mt.element_type, [s + 1, *mt.get_shape()], role=SNAPSHOT_ATTR))
        for t in scalars:
            snaps.append(top.alloc(t, [s + 1], role=SNAPSHOT_ATTR))
        stack = top.val(memref.AllocaOp.get(INDEX, shape=[s + 1]))
        sched = top.val(memref.AllocaOp.get(INDEX, shape=[2]))  # [0] = position p, [1] = top
        state_args = [*p.state, *cells, *snaps]

        # The outlined functions.
        after = InsertPoint.after(fn)
        names = {k: f"{p.prefix}_{k}" for k in ("adv", "seg", "save", "restore", "swap")}
        outlines = [
            self._outline_step(p, names["adv"], cells, dcells, taped=False),
            self._outline_step(p, names["seg"], cells, dcells, taped=True),
            *(_outline_copy(names[m], p.state, cells, snaps, m) for m in ("save", "restore")),
        ]
        if self.schedule == "binomial":
            outlines.append(_outline_copy(names["swap"], p.state, cells, snaps, "swap"))
        for o in outlines:  # `after` stays before fn's old successor: this keeps the order
            Rewriter.insert_op(o, after)

        # Forward sweep: untaped steps with snapshots.
        e = _E(InsertPoint.before(fwd))
        for cell, init in zip(cells, fwd.iter_args, strict=True):
            e.st(init, cell, e.index(0))
        n = e.trip_count(fwd.lb, fwd.ub, fwd.step)
        sargs = [*state_args]

        def adv(em: _E, a, b):
            em.call(names["adv"], [a, b, *p.free[: p.n_fwd], *cells, *dcells, *p.state])

        def seg(em: _E, a, b):
            em.call(names["seg"], [a, b, *p.free, *cells, *dcells, *p.state])

        def save(em: _E, slot):
            em.call(names["save"], [slot, *sargs])

        def restore(em: _E, slot):
            em.call(names["restore"], [slot, *sargs])

        def swap(em: _E, slot):
            em.call(names["swap"], [slot, *sargs])

        nonempty = e.cmp(n, e.index(0), "sgt")
        g = e.when(nonempty)
        last = g.sub(n, g.index(1))
        if self.schedule == "binomial":
            g.st(g.index(0), sched, g.index(0))
            g.st(g.index(0), sched, g.index(1))
            g.st(g.index(0), stack, g.index(0))
            save(g, g.index(0))
            self._advance_to(g, last, sched, stack, adv, save)
            save(g, g.index(s))
            adv(g, last, n)
        else:
            period = g.div(g.add(n, g.index(s - 1)), g.index(s))
            nseg = g.div(g.add(n, g.sub(period, g.index(1))), period)
            body, i = g.loop(g.index(0), nseg)
            a = body.mul(i, period)
            save(body, i)
            adv(body, a, body.min(body.add(a, period), n))
        for r, cell in zip(fwd.res, cells, strict=True):
            r.replace_all_uses_with(e.ld(cell, e.index(0)))

        # Reverse sweep: the driver.
        e = _E(InsertPoint.before(rev))
        for cell, init in zip(dcells, rev.iter_args, strict=True):
            e.st(init, cell, e.index(0))
        g = e.when(nonempty)
        last = g.sub(n, g.index(1))
        # Slot s keeps the memory as the reverse sweep finds it (the end of the forward
        # sweep), restored when the loop is reversed; binomial swaps it with x_{T-1}.
        if self.schedule == "binomial":
            swap(g, g.index(s))
            seg(g, last, n)
            body, k = g.loop(g.index(1), n)
            t = body.sub(last, k)
            height = body.ld(sched, body.index(1))
            past = body.cmp(body.ld(stack, height), t, "sgt")
            height = body.select(past, body.sub(height, body.index(1)), height)
            body.st(height, sched, body.index(1))
            restore(body, height)
            body.st(body.ld(stack, height), sched, body.index(0))
            self._advance_to(body, t, sched, stack, adv, save)
            seg(body, t, body.add(t, body.index(1)))
        else:
            save(g, g.index(s))
            period = g.div(g.add(n, g.index(s - 1)), g.index(s))
            nseg = g.div(g.add(n, g.sub(period, g.index(1))), period)
            body, i = g.loop(g.index(0), nseg)
            j = body.sub(body.sub(nseg, body.index(1)), i)
            a = body.mul(j, period)
            restore(body, j)
            seg(body, a, body.min(body.add(a, period), n))
        restore(g, g.index(s))
        for r, cell in zip(rev.res, dcells, strict=True):
            r.replace_all_uses_with(e.ld(cell, e.index(0)))

        # The old loops and caches go; snapshot buffers are freed before the return.
        Rewriter.erase_op(fwd)
        Rewriter.erase_op(rev)
        for c in p.caches:
            for use in list(c.uses):
                Rewriter.erase_op(use.operation)
            assert isinstance(c.owner, Operation)
            Rewriter.erase_op(c.owner)
        ret = entry.last_op
        assert ret is not None
        for buf in snaps:
            Rewriter.insert_op(memref.DeallocOp.get(buf), InsertPoint.before(ret))

    def _advance_to(self, e: _E, t, sched, stack, adv, save) -> None:
        """From the state at position sched[0] (the top snapshot's), Revolve's advances and
        snapshots until step t is the next one (see the module docstring)."""
        s = self.snapshots
        body, _ = e.loop(e.index(0), e.index(s - 1))
        p, height = body.ld(sched, body.index(0)), body.ld(sched, body.index(1))
        c = body.sub(body.index(s), height)
        steps = body.sub(body.add(t, body.index(1)), p)
        go = body.select(
            body.cmp(steps, body.index(1), "sgt"),
            body.cmp(c, body.index(1), "sgt"),
            body.val(arith.ConstantOp(IntegerAttr(0, i1))),
        )
        w = body.when(go)
        prev, r1 = _repetition(w, steps, c)
        # beta(c-1, r-1) = beta(c, r-1) * c / (c + r - 1), with r1 = r - 1.
        lower = w.div(w.mul(prev, c), w.add(c, r1))
        m = w.min(prev, w.sub(steps, lower))
        q = w.add(p, m)
        adv(w, p, q)
        h1 = w.add(height, w.index(1))
        w.st(q, sched, w.index(0))
        w.st(h1, sched, w.index(1))
        w.st(q, stack, h1)
        save(w, h1)
        adv(e, e.ld(sched, e.index(0)), t)
        e.st(t, sched, e.index(0))

    def _outline_step(self, p: _Loop, name: str, cells, dcells, taped: bool) -> func.FuncOp:
        """`@name(a, b, free..., cells..., dcells..., state...)`: steps a..b-1 of the forward
        loop, untaped (`adv`) or taped and then reversed (`seg`)."""
        fwd, rev = p.fwd, p.rev
        free = p.free if taped else p.free[: p.n_fwd]
        args = [
            INDEX,
            INDEX,
            *(v.type for v in free),
            *(c.type for c in cells),
            *(c.type for c in dcells),
            *(v.type for v in p.state),
        ]
        block = Block(arg_types=args)
        a, b = block.args[0], block.args[1]
        mapping: dict[SSAValue, SSAValue] = {}
        rest = list(block.args[2:])
        for v in free:
            mapping[v] = rest.pop(0)
        fcells = [rest.pop(0) for _ in cells]
        fdcells = [rest.pop(0) for _ in dcells]
        for v in p.state:
            mapping[v] = rest.pop(0)
        e = _E(InsertPoint.at_end(block))
        consts: dict[SSAValue, SSAValue] = {}
        for loop in (fwd, rev) if taped else (fwd,):
            for o in loop.walk():
                for v in o.operands:
                    if isinstance(v.owner, arith.ConstantOp) and not _defined_inside(v, loop):
                        if v not in consts:
                            consts[v] = e.val(v.owner.clone())
        mapping.update(consts)
        inits: list[InitOp] = []
        if taped:
            for cache in p.caches:
                init = InitOp(cache.type.element_type)  # type: ignore[attr-defined]
                e.op(init)
                inits.append(init)
                mapping[cache] = init.cache
        lb = mapping.get(fwd.lb, fwd.lb)
        step = mapping.get(fwd.step, fwd.step)
        new_lb = e.add(lb, e.mul(a, step))
        new_ub = e.add(lb, e.mul(b, step))
        values = [e.ld(c, e.index(0)) for c in fcells]
        single = taped and self.schedule == "binomial"  # a segment is one step, b = a + 1
        if single:
            loop = _one_iteration(
                fwd, mapping, values, e, lambda x, j: x.add(lb, x.mul(x.add(a, j), step))
            )
        else:
            loop = fwd.clone(value_mapper=dict(mapping))
            loop.operands = [new_lb, new_ub, step, *values]
        loop.attributes.pop(CHECKPOINT_ATTR, None)
        if not taped:
            for o in list(loop.walk()):
                if isinstance(o, PushOp):
                    Rewriter.erase_op(o)
                elif isinstance(o, scf.ForOp | scf.WhileOp):
                    o.attributes.pop(LOOP_ATTR, None)
        e.op(loop)
        for r, c in zip(loop.res, fcells, strict=True):
            e.st(r, c, e.index(0))
        if taped:
            n = mapping.get(rev.ub, rev.ub)
            dvals = [e.ld(c, e.index(0)) for c in fdcells]
            if single:
                back = _one_iteration(rev, mapping, dvals, e, lambda x, j: x.add(x.sub(n, b), j))
            else:
                back = rev.clone(value_mapper=dict(mapping))
                back.operands = [e.sub(n, b), e.sub(n, a), mapping.get(rev.step, rev.step), *dvals]
            e.op(back)
            for r, c in zip(back.res, fdcells, strict=True):
                e.st(r, c, e.index(0))
            for init in inits:
                e.op(FreeOp(init.cache))
        e.op(func.ReturnOp())
        return func.FuncOp(name, (args, []), Region(block), "private")


def _one_iteration(loop: scf.ForOp, mapping, inits, e: _E, counter) -> scf.ForOp:
    """`loop`'s body (its attributes kept) as `scf.for %j = 0 to 1`: a trip count the next
    passes see as 1 (the segment's record tape is sized for one step); the old counter is
    `counter(emitter, %j)`, computed first in the body."""
    old = loop.body.block
    block = Block(arg_types=[a.type for a in old.args])
    m = dict(mapping)
    m[old.args[0]] = counter(_E(InsertPoint.at_end(block)), block.args[0])
    m.update(zip(old.args[1:], block.args[1:], strict=True))
    for op in old.ops:
        block.add_op(op.clone(value_mapper=m))
    new = scf.ForOp(e.index(0), e.index(1), e.index(1), inits, Region(block))
    new.attributes.update(loop.attributes)
    return new


def _repetition(e: _E, steps, c) -> tuple[SSAValue, SSAValue]:
    """r, the least with beta(c, r) >= steps (an scf.while; beta(c, r+1) =
    beta(c, r)(c+r+1)/(r+1), exact): returns beta(c, r-1) and r - 1."""
    before = Block(arg_types=[INDEX, INDEX, INDEX])
    r, beta, prev = before.args
    eb = _E(InsertPoint.at_end(before))
    eb.op(scf.ConditionOp(eb.cmp(beta, steps, "slt"), r, beta, prev))
    after = Block(arg_types=[INDEX, INDEX, INDEX])
    r, beta, _ = after.args
    ea = _E(InsertPoint.at_end(after))
    r2 = ea.add(r, ea.index(1))
    beta2 = ea.div(ea.mul(beta, ea.add(c, r2)), r2)
    ea.op(scf.YieldOp(r2, beta2, beta))
    loop = scf.WhileOp(
        [e.index(0), e.index(1), e.index(0)], [INDEX] * 3, Region(before), Region(after)
    )
    e.op(loop)
    return loop.res[2], e.sub(loop.res[0], e.index(1))


def _written(op: Operation) -> list[SSAValue]:
    """The buffers `op` may write (every memref operand but what it only reads)."""
    if isinstance(op, memref.LoadOp | memref.DimOp | memref.DeallocOp):
        return []
    if isinstance(op, memref.CopyOp):
        return [op.destination]
    return [v for v in op.operands if isinstance(v.type, MemRefType)]


def _defined_inside_op(op: Operation, container: Operation) -> bool:
    current: Operation | None = op
    while current is not None:
        if current is container:
            return True
        current = current.parent_op()
    return False


def _outline_copy(name: str, state, cells, snaps, mode: str) -> func.FuncOp:
    """`@name(slot, state..., cells..., snapshots...)`: copies the state to (`save`) or
    from (`restore`) slot `slot`, or exchanges the two (`swap`)."""
    args = [INDEX, *(v.type for v in state), *(c.type for c in cells), *(v.type for v in snaps)]
    block = Block(arg_types=args)
    slot = block.args[0]
    rest = list(block.args[1:])
    bufs = [rest.pop(0) for _ in state]
    fcells = [rest.pop(0) for _ in cells]
    fsnaps = rest
    e = _E(InsertPoint.at_end(block))
    for buf, snap in zip([*bufs, *fcells], fsnaps, strict=True):
        mt = buf.type
        assert isinstance(mt, MemRefType)
        em, ivs = e, []
        if buf in fcells:
            here, there = [e.index(0)], [slot]
        else:
            for size in mt.get_shape():
                em, iv = em.loop(em.index(0), em.index(size))
                ivs.append(iv)
            here, there = ivs, [slot, *ivs]
        if mode == "save":
            em.st(em.ld(buf, *here), snap, *there)
        elif mode == "restore":
            em.st(em.ld(snap, *there), buf, *here)
        else:
            mine, kept = em.ld(buf, *here), em.ld(snap, *there)
            em.st(kept, buf, *here)
            em.st(mine, snap, *there)
    e.op(func.ReturnOp())
    return func.FuncOp(name, (args, []), Region(block), "private")


__all__ = ["CHECKPOINT_ATTR", "SNAPSHOT_ATTR", "CheckpointPass", "check_options", "parse_spec"]
