"""Loops: a canonical `for` as `scf.for`, any other loop as `scf.while`; the scalars a
loop writes become its iter_args.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.builder import Builder
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import i1
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from .clang import binary_op, children, decl_key, strip, unsupported, walk
from .function import FunctionState, Loop, Stale
from .hints import UNROLL_ATTR
from .trees import (
    assigned_target,
    assigns,
    for_parts,
    has_effects,
    jumps,
    refers,
    step_of,
    stored_buffers,
)
from .types import INDEX, is_int


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
        before `trees` is dead, and after them it is a stale counter, so it is not carried."""
        loops = []
        for tree in trees:
            for c in walk(tree) if tree is not None else ():
                if c.kind.name != "FOR_STMT":
                    continue
                init, cond, inc, body = for_parts(c)
                canonical = None if jumps(body)[0] else self.canonical_for(init, cond, inc, body)
                if canonical is not None and decl_key(canonical[0]) == decl_key(d):
                    if init.kind.name == "DECL_STMT" or refers(canonical[1], d):
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
        canonical = None if jumps(body)[0] else self.canonical_for(init, cond, inc, body)
        if canonical is None:
            if init is not None:
                self.stmt(init) if not init.kind.is_expression() else self.effect(init)
            self.while_loop(s, cond, [body], inc)  # `for (;;)`: cond None, always true
            return
        var, lb_expr, ub_expr, inclusive, step = canonical
        lb = self.index(self.rvalue(lb_expr), lb_expr)
        ub = self.index(self.rvalue(ub_expr), ub_expr)
        if inclusive:
            ub = self.emit(arith.AddiOp(ub, self.const(1, INDEX, ub_expr)), ub_expr).results[0]
        stepv = self.const(step, INDEX, inc)
        carried = self.carried(body)
        inits = [self.current(k, d, s) for k, d in carried]
        block = Block(arg_types=[INDEX, *(v.type for v in inits)])
        block.args[0].name_hint = var.spelling

        loop, _ = self.enter_loop([body], s)

        def run() -> list[SSAValue]:
            self.vals[decl_key(var)] = block.args[0]
            self.loop_iteration(loop, [body], s)
            values = [self.current(k, d, s) for k, d in carried]
            self.emit(scf.YieldOp(*values), s)
            return values

        self.loop_body(block, carried, run, s)
        op = self.emit(scf.ForOp(lb, ub, stepv, inits, block), s)
        if (hint := self.unroll_hints.get(s.extent.start.offset)) is not None:
            op.attributes[UNROLL_ATTR] = hint
        for (k, _), r in zip(carried, op.results):
            self.vals[k] = r
        if decl_key(var) in self.vals:
            why = f"reading the counter '{var.spelling}' after its for loop"
            self.vals[decl_key(var)] = Stale(why)

    def canonical_for(self, init, cond, inc, body):
        """(counter, lb, ub, inclusive, step) when the loop is an `scf.for`, else None."""
        if init is None or cond is None or inc is None:
            return None
        var, lb = None, None
        if init.kind.name == "DECL_STMT":
            decls = children(init)
            if len(decls) == 1 and decls[0].kind.name == "VAR_DECL":
                exprs = [k for k in children(decls[0]) if k.kind.is_expression()]
                if exprs:
                    var, lb = decls[0], exprs[-1]
        elif init.kind.name == "BINARY_OPERATOR" and binary_op(init) == "=":
            lhs, rhs = children(init)
            if strip(lhs).kind.name == "DECL_REF_EXPR":
                var, lb = strip(lhs).referenced, rhs
        if var is None or not is_int(var.type):
            return None
        c = strip(cond)
        if c.kind.name != "BINARY_OPERATOR" or binary_op(c) not in ("<", "<=", "!="):
            return None
        lhs, ub = children(c)
        counter = strip(lhs)
        if counter.kind.name != "DECL_REF_EXPR" or decl_key(counter.referenced) != decl_key(var):
            return None
        step = step_of(inc, var)
        if step is None or step <= 0 or (binary_op(c) == "!=" and step != 1):
            return None
        targets = map(assigned_target, walk(body))
        written = {decl_key(t.referenced) for t in targets if t is not None}
        if decl_key(var) in written:
            return None
        stored = stored_buffers(body)
        for r in walk(ub):
            if r.kind.name == "DECL_REF_EXPR" and r.referenced is not None:
                if decl_key(r.referenced) in written | stored | {decl_key(var)}:
                    return None
            if r.kind.name == "CALL_EXPR":
                return None
        return var, lb, ub, binary_op(c) == "<=", step

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
        if cond is not None and (bad := assigns(cond)) is not None:
            unsupported(bad, "an assignment or ++/-- in a loop condition")
        loop, has_break = self.enter_loop(trees, s)
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
