"""Loops: a counted `for` (`counted`) as `scf.for`, any other loop as `scf.while`; the
scalars a loop writes become its iter_args. A `while` condition may step a scalar
(`while (n--)`, `x[i++] > 0`): the step is in the before region, so the body and the
code after the loop see the stepped value, as in C.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.builder import Builder
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import i1
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from .clang import children, decl_key, unsupported, walk
from .counted import Counted, counted_for, counter_init
from .function import Final, FunctionState, Loop, Stale, constant_int
from .hints import UNROLL_ATTR
from .trees import assigned_target, assignments, for_parts, has_effects, jumps, refers
from .types import INDEX


class Loops(FunctionState):
    """`for`, `while` and `do` loops, as `scf.for` or `scf.while`."""

    def enter_loop(self, body_trees: list, c) -> tuple[Loop | None, bool]:
        """Flags for a loop whose body jumps; (loop, has_break)."""
        has_break = any(jumps(t)[0] for t in body_trees if t is not None)
        has_jump = any(jumps(t) != (False, False) for t in body_trees if t is not None)
        if not has_jump:
            return None, False
        self.loop_count += 1
        n = self.loop_count
        loop = Loop(("<go>", n), ("<running>", n) if has_break else None)
        if loop.running is not None:
            self.vals[loop.running] = self.const(1, i1, c)
        return loop, has_break

    def carried(self, *trees) -> list[tuple[tuple[str, int], object]]:
        """Scalars defined before `trees` that `trees` assign, in first-assignment order."""
        out: dict = {}
        for tree in trees:
            if tree is None:
                continue
            for c in walk(tree):
                for k in self.struct_fields_assigned(c):
                    out.setdefault(k, None)
                target = assigned_target(c)
                if target is None:
                    continue
                d = target.referenced
                if d is not None and decl_key(d) in self.vals and decl_key(d) not in out:
                    out[decl_key(d)] = d
        for k, d in list(out.items()):
            if self.counter_only(d, trees):
                del out[k]  # dead before and after: a later loop's counter (`int i;` reused)
                self.vals[k] = Stale(f"reading the counter '{d.spelling}' after its for loop")
        return list(out.items())

    def counter_only(self, d, trees) -> bool:
        """Whether `trees` use the variable `d` only as the counter of `scf.for` loops
        (their init assigns it, nothing else does, every read is inside them): its value
        before `trees` is dead, and after them it is a stale counter, so it is not carried.
        When `d` is already stale, the counter of any `for` whose init assigns it counts
        too (`for (j = 3; x[j] > 0; j--)`): carrying would read the stale value."""
        if d is None:
            return False  # a struct field
        stale = isinstance(self.vals.get(decl_key(d)), Stale)
        loops = []
        for tree in trees:
            for c in walk(tree) if tree is not None else ():
                if c.kind.name != "FOR_STMT":
                    continue
                init, cond, inc, body = for_parts(c)
                counted = None if jumps(body)[0] else counted_for(init, cond, inc, body)
                var, start = (counted.var, counted.start) if counted else (None, None)
                if counted is None and stale and init is not None:
                    var, start = counter_init(init)
                if var is not None and decl_key(var) == decl_key(d):
                    if init.kind.name == "DECL_STMT" or refers(start, d):
                        continue
                    loops.append((c, init))
        if not loops:
            return False
        inside = {(n.extent.start.offset, n.hash) for f, _ in loops for n in walk(f)}
        for tree in trees:
            for c in walk(tree) if tree is not None else ():
                if c.kind.name == "DECL_REF_EXPR" and c.referenced is not None:
                    if decl_key(c.referenced) == decl_key(d) and (c.extent.start.offset, c.hash) not in inside:
                        return False
        return True

    def loop_body(self, block: Block, carried, run: Callable[[], object], c) -> None:
        """Binds the carried scalars to `block`'s trailing arguments and fills it."""
        outer, saved = self.builder, dict(self.vals)
        self.builder = Builder(InsertPoint.at_end(block))
        offset = len(block.args) - len(carried)
        for (k, _), arg in zip(carried, block.args[offset:]):
            self.vals[k] = arg
        run()
        self.builder = outer
        self.vals = saved

    def for_stmt(self, s) -> None:
        init, cond, inc, body = for_parts(s)
        counted = None if jumps(body)[0] else counted_for(init, cond, inc, body)
        if counted is None:
            if init is not None:
                self.stmt(init) if not init.kind.is_expression() else self.effect(init)
            self.while_loop(s, cond, [body], inc)  # `for (;;)`: cond None, always true
            return
        var = counted.var
        lb, ub, counter = self.counted_range(counted, s)
        step = self.counted_step(counted, inc)
        self.grow_in_loop(s, body, var, lb, ub, step, counter)  # memory.py
        carried = self.carried(body)
        inits = [self.current(k, d, s) for k, d in carried]
        block = Block(arg_types=[INDEX, *(v.type for v in inits)])
        block.args[0].name_hint = var.spelling if counted.step > 0 else f"{var.spelling}_k"

        loop, _ = self.enter_loop([body], s)

        def run() -> list[SSAValue]:
            self.vals[decl_key(var)] = counter(block.args[0])
            self.loop_iteration(loop, [body], s)
            values = [self.current(k, d, s) for k, d in carried]
            self.emit(scf.YieldOp(*values), s)
            return values

        self.loop_body(block, carried, run, s)
        op = self.emit(scf.ForOp(lb, ub, step, inits, block), s)
        if (hint := self.unroll_hints.get(s.extent.start.offset)) is not None:
            op.attributes[UNROLL_ATTR] = hint
        for (k, _), r in zip(carried, op.results):
            self.vals[k] = r
        if decl_key(var) in self.vals:
            self.vals[decl_key(var)] = Final(lambda: counter(self.first_not_run(lb, ub, step, s)))

    def counted_range(self, counted: Counted, s) -> tuple[SSAValue, SSAValue, Callable]:
        """(lb, ub, counter) of the `scf.for` a counted loop is: up-counting, its counter
        runs from lb below ub; down-counting, the normalised index `k` runs from 0 below
        `hi - lo (+ 1)` and the counter is `hi - k`."""
        start = self.index(self.rvalue(counted.start), counted.start)
        bound = self.index(self.rvalue(counted.bound), counted.bound)
        if counted.step > 0:
            # `i + c < n` is `i < n - c`; `<=` runs the bound too
            ub = self.add_constant(bound, int(counted.inclusive) - counted.offset, counted.bound)
            return start, ub, lambda iv: iv
        net = int(counted.inclusive) + counted.offset
        if (lo := constant_int(bound)) is not None:
            span = self.add_constant(start, net - lo, counted.bound)
        else:
            span = self.emit(arith.SubiOp(start, bound), counted.bound).results[0]
            span = self.add_constant(span, net, counted.bound)

        def counter(k: SSAValue) -> SSAValue:
            value = self.emit(arith.SubiOp(start, k), s).results[0]
            value.name_hint = counted.var.spelling
            return value

        return self.const(0, INDEX, s), span, counter

    def counted_step(self, counted: Counted, inc) -> SSAValue:
        """The positive step of a counted loop's `scf.for`: `|step|`, or `max(s, 1)` for a
        variable one (`Counted.stride`)."""
        if counted.stride is None:
            return self.const(abs(counted.step), INDEX, inc)
        by = self.index(self.rvalue(counted.stride), counted.stride)
        one = self.const(1, INDEX, counted.stride)
        return self.emit(arith.MaxSIOp(by, one), counted.stride).results[0]

    def add_constant(self, v: SSAValue, k: int, c) -> SSAValue:
        if k == 0:
            return v
        if (known := constant_int(v)) is not None:
            return self.const(known + k, INDEX, c)
        op = arith.AddiOp if k > 0 else arith.SubiOp
        return self.emit(op(v, self.const(abs(k), INDEX, c)), c).results[0]

    def first_not_run(self, lb: SSAValue, ub: SSAValue, step: SSAValue, c) -> SSAValue:
        """The induction value after `scf.for lb to ub step step` (the C counter's value
        after its loop): `lb + ceil(max(ub - lb, 0) / step) * step`, `max(lb, ub)` by one."""
        if constant_int(step) == 1:
            return self.emit(arith.MaxSIOp(lb, ub), c).results[0]
        from_zero = constant_int(lb) == 0
        span = ub if from_zero else self.emit(arith.SubiOp(ub, lb), c).results[0]
        span = self.emit(arith.MaxSIOp(span, self.const(0, INDEX, c)), c).results[0]
        trips = self.emit(arith.CeilDivSIOp(span, step), c).results[0]
        moved = self.emit(arith.MuliOp(trips, step), c).results[0]
        return moved if from_zero else self.emit(arith.AddiOp(lb, moved), c).results[0]

    def loop_iteration(self, loop: Loop | None, trees: list, c) -> None:
        """One iteration's statements, with `loop`'s jump flags in scope."""
        if loop is None:
            self.block_items(trees)
            return
        self.loops.append(loop)
        self.vals[loop.go] = self.const(1, i1, c)
        self.block_items(trees)
        self.loops.pop()
        del self.vals[loop.go]

    def loop_test(self, loop: Loop | None, cond, loop_at=None) -> SSAValue:
        """The loop condition, and not broken yet (`running`, first: once a loop broke,
        its condition is not evaluated again, as in C)."""
        # `cond` None (`for (;;)`): true, until it breaks or returns
        if loop is None or loop.running is None:
            return self.const(1, i1, loop_at) if cond is None else self.cond(cond)
        running = self.vals[loop.running]
        if cond is None:
            return running
        if not has_effects(cond):
            return self.emit(arith.AndIOp(running, self.cond(cond)), cond).results[0]
        then = self.branch(lambda: [self.cond(cond)], cond)
        other = self.branch(lambda: [self.const(0, i1, cond)], cond)
        return self.emit(scf.IfOp(running, [i1], then, other), cond).results[0]

    def while_loop(self, s, cond, trees: list, inc=None, test_first: bool = True) -> None:
        """`while (cond) { trees; inc }` as `scf.while`: the test in the before region, the
        iteration in the after region; with `test_first=False` (`do { } while`) both in
        the before region. `inc` (a for loop's increment) runs after `continue` but not
        after `break`."""
        loop, has_break = self.enter_loop(trees, s)
        for c in assignments(cond) if cond is not None else ():
            if assigned_target(c) is None:
                unsupported(c, "an assignment to memory in a loop condition")
            if has_break:  # the condition would run under the loop's `running` flag
                unsupported(c, "an assignment or ++/-- in the condition of a loop that "
                            "breaks or returns")
        carried = self.carried(cond, *trees, inc) + self.return_keys(trees)
        if loop is not None and loop.running is not None:
            carried.append((loop.running, None))
        inits = [self.current(k, d, s) for k, d in carried]
        types = [v.type for v in inits]
        before, after = Block(arg_types=types), Block(arg_types=types)

        def iteration() -> None:
            self.loop_iteration(loop, trees, s)
            if inc is not None and has_break:
                self.emit_if(self.vals[loop.running], [inc], [], inc)  # type: ignore[union-attr]
            elif inc is not None:
                self.stmt(inc)

        def test() -> None:
            if not test_first:
                iteration()
            flag = self.loop_test(loop, cond, s)
            values = [self.current(k, d, s) for k, d in carried]
            self.emit(scf.ConditionOp(flag, *values), cond if cond is not None else s)

        def run() -> None:
            if test_first:
                iteration()
            values = [self.current(k, d, s) for k, d in carried] if test_first else after.args
            self.emit(scf.YieldOp(*values), s)

        self.loop_body(before, carried, test, s)
        self.loop_body(after, carried, run, s)
        op = self.emit(scf.WhileOp(inits, types, Region(before), Region(after)), s)
        for (k, _), r in zip(carried, op.results):
            self.vals[k] = r

    def while_stmt(self, s) -> None:
        cond, body = children(s)
        self.while_loop(s, cond, [body])

    def do_while(self, s) -> None:
        body, cond = children(s)
        self.while_loop(s, cond, [body], test_first=False)
