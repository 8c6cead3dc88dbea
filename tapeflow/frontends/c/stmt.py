"""Statements: dispatch by cursor kind (`STATEMENTS`), blocks with `break`,
`continue` and early `return` as i1 flags, declarations, `if` and `switch` as `scf.if`.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import i1
from xdsl.ir import Region, SSAValue

from .clang import (
    children,
    decl_key,
    evaluate,
    is_null_pointer,
    loop_hint,
    strip,
    unsupported,
    walk,
    where,
)
from .enzyme import ENZYME_ENTRY, is_entry
from .function import FunctionState, Unset
from .gotos import Gotos
from .hints import unroll_hint
from .libc import MEM_CALLS, is_assert, is_output_call
from .loops import Loops
from .trees import jumps, loop_returns, returns, switch_break
from .types import (
    INDEX,
    array_shape,
    holds_functions,
    is_function_pointer,
    is_int,
    refuse_union,
    scalar_type,
    type_kind,
)
from .unions import scalar_union


class Statements(FunctionState):
    """Statements of the C subset; `stmt` dispatches on the cursor kind."""

    def stmt(self, s) -> None:
        """One statement, translated by the method its cursor kind names in `STATEMENTS`;
        an expression is evaluated for its effect, a loop under a hint pragma as the loop."""
        translate = STATEMENTS.get(s.kind.name)
        if translate is not None:
            translate(self, s)
        elif s.kind.is_expression():
            self.effect(s)
        elif (loop := loop_hint(s)) is not None:
            if (hint := unroll_hint(s, loop, self.unit)) is not None:
                self.unroll_hints[loop.extent.start.offset] = hint
            self.stmt(loop)
        else:
            unsupported(s, f"the statement {s.kind.name.lower()}")

    def compound_stmt(self, s) -> None:
        self.block_items(children(s))

    def decl_stmt(self, s) -> None:
        for d in s.get_children():
            self.decl(d)

    def null_stmt(self, s) -> None:
        pass

    def return_stmt(self, s) -> None:
        """A `return` before the end: sets the returned flag and value (`self.ret`)."""
        if self.ret is None:
            unsupported(s, "'return' before the end of the function")
        _, value = self.ret
        kids = children(s)
        if value is not None and kids:
            result_type = self.sig.cursor.result_type
            self.vals[value] = self.convert(self.rvalue(kids[0]), result_type, s)
        self.leave(s)

    def leave(self, s) -> None:
        """Sets the early-return (or goto) flag and leaves every loop around `s`."""
        self.vals[self.ret[0]] = self.const(1, i1, s)  # type: ignore[index]
        if self.loops:  # a break here, then see block_items
            loop = self.loops[-1]
            false = self.const(0, i1, s)
            self.vals[loop.go] = false
            assert loop.running is not None
            self.vals[loop.running] = false

    def jump_stmt(self, s) -> None:
        """`break` or `continue`: clears the loop's flags (`Loop`)."""
        loop = self.loops[-1]  # Clang rejects a jump outside a loop (switch is refused)
        false = self.const(0, i1, s)
        self.vals[loop.go] = false
        if s.kind.name == "BREAK_STMT":
            assert loop.running is not None
            self.vals[loop.running] = false

    def block_items(self, items: list) -> None:
        """A statement list; after a statement that may `break`/`continue`, the rest runs
        under `if (go)` (structured control flow has no jumps)."""
        for n, t in enumerate(items):
            if t.kind.name == "RETURN_STMT" and self.ret is None:
                unsupported(t, "'return' before the end of the function")
            self.stmt(t)
            if t.kind.name in ("RETURN_STMT", "GOTO_STMT"):
                return  # what follows is unreachable
            rest = items[n + 1 :]
            if self.ret is not None and self.loops and loop_returns(t):
                # a return in a loop nested in `t` left that loop: leave this one too
                loop = self.loops[-1]
                stay = self.not_returned(t)
                for k in (loop.go, loop.running):
                    assert k is not None
                    self.vals[k] = self.emit(arith.AndIOp(self.vals[k], stay), t).results[0]
            if rest and self.loops and jumps(t) != (False, False):
                self.emit_if(self.vals[self.loops[-1].go], rest, [], t)
                return
            if rest and not self.loops and self.ret is not None and returns(t):
                stay = self.not_returned(t)
                self.emit_if(stay, rest, [], t)
                return

    def not_returned(self, c) -> SSAValue:
        assert self.ret is not None
        flag = self.vals[self.ret[0]]
        return self.emit(arith.XOrIOp(flag, self.const(1, i1, c)), c).results[0]  # type: ignore[arg-type]

    def jump_keys(self, items: list) -> list[tuple[tuple[str, int], None]]:
        """The flags that `items` may change (for the results of an if around them)."""
        keys = self.return_keys(items)
        if not self.loops or all(jumps(t) == (False, False) for t in items):
            return keys
        loop = self.loops[-1]
        return [(k, None) for k in (loop.go, loop.running) if k is not None] + keys

    def return_keys(self, items: list) -> list[tuple[tuple[str, int], None]]:
        """The early-return flag and value, when `items` may return."""
        if self.ret is None or not any(returns(t) for t in items if t is not None):
            return []
        return [(k, None) for k in self.ret if k is not None]

    def decl(self, d) -> None:
        if d.kind.name == "UNION_DECL" and scalar_union(d.type) is not None:
            return  # the type of a local union (`union { double d; uint64_t u; } v;`)
        if d.kind.name != "VAR_DECL":
            unsupported(d, f"the declaration {d.kind.name.lower()}")
        if d.storage_class.name == "STATIC":
            if not self.referenced(d):
                return  # never read nor written: nothing to translate (f2c's format strings)
            unsupported(d, "static local variables")
        t = d.type
        exprs = [k for k in children(d) if k.kind.is_expression()]
        if scalar_union(t) is not None:
            self.union_local(d, exprs)
            return
        refuse_union(t, d)
        if type_kind(t) in ("CONSTANTARRAY", "VARIABLEARRAY"):
            if holds_functions(t):
                return  # a table of functions: read where it is indexed (fnptrs.py)
            if self.is_pointer_array(t, exprs):
                self.pointer_array(d)  # memory.py
                return
            if type_kind(array_shape(t, d)[1]) == "RECORD":
                self.bufs[decl_key(d)] = self.struct_array(d, exprs)
                return
            init = exprs[-1] if exprs and strip(exprs[-1]).kind.name == "INIT_LIST_EXPR" else None
            self.bufs[decl_key(d)] = self.local_array(d, init)
        elif type_kind(t) == "POINTER" and not is_function_pointer(t):
            if not exprs or is_null_pointer(exprs[-1]):
                # `T *p;` or `T *p = NULL;`: a pointer that points nowhere until assigned
                self.bufs.pop(decl_key(d), None)
                self.vals[decl_key(d)] = Unset()
                if self.reassigned(d):
                    self.views.add(decl_key(d))
                return
            if (record := self.boxed_record(d, exprs[-1])) is not None:
                self.struct_box(d, record)
                return
            self.bufs[decl_key(d)] = self.pointer_value(d, exprs[-1])
        elif type_kind(t) in ("RECORD", "ELABORATED"):
            self.struct_local(d, exprs)
        else:
            scalar_type(t, d)
            value = self.convert(self.rvalue(exprs[-1]), t, d) if exprs else Unset()
            if self.stored_address(d):
                self.address_cell(d, value)
                return
            self.vals[decl_key(d)] = value

    def referenced(self, d) -> bool:
        """Whether the function's body names the local `d` (after its declaration)."""
        return any(
            c.kind.name == "DECL_REF_EXPR" and c.referenced is not None
            and decl_key(c.referenced) == decl_key(d)
            for c in walk(self.sig.cursor)
        )

    def effect(self, e) -> SSAValue | None:
        """An expression evaluated for its effect (its value is returned, if any)."""
        c = strip(e)
        k = c.kind.name
        if k == "CALL_EXPR" and c.spelling.removeprefix("__builtin_") in MEM_CALLS:
            self.mem_call(c)
            return None
        if (arg := self.unit.freed(c)) is not None:  # free, or a registered deallocator
            if self.is_row(arg) or self.is_box(arg):
                return None  # freed with the table; a malloc'ed struct is its fields' values
            buf = self.buffer(arg)
            if buf.row is not None:
                unsupported(c, "freeing a row of a pointer to pointers")
            self.emit(memref.DeallocOp.get(buf.ref), c)
            return None
        if k == "CSTYLE_CAST_EXPR" and type_kind(c.type) == "VOID":  # `(void)x;`
            self.effect(children(c)[-1])
            return None
        if k == "CALL_EXPR" and is_entry(c.spelling):
            unsupported(c, f"{ENZYME_ENTRY} inside a function that is itself translated")
        if is_assert(c):
            self.unit.remarks.append(
                f"remark: {where(c)}: assert in translated code is dropped (as with NDEBUG: "
                "its check has no derivative, and TapeFlow does not abort)\n"
            )
            return None
        if is_output_call(c):
            self.unit.remarks.append(
                f"remark: {where(c)}: {c.spelling} in translated code is dropped (it has "
                "no derivative)\n"
            )
            return None
        return self.rvalue(e, discard=True)

    def if_stmt(self, s) -> None:
        kids = children(s)
        flag = self.cond(kids[0])
        self.emit_if(flag, [kids[1]], kids[2:], s)

    def emit_if(self, flag: SSAValue, then: list, other: list, s) -> None:
        """`scf.if` running the statements `then` / `other`; the scalars (and jump flags)
        they assign are its results."""
        carried = self.carried(*then, *other) + self.jump_keys([*then, *other])
        keys = [k for k, _ in carried]
        for k, d in carried:
            self.current(k, d, s)
        before = dict(self.vals)

        def arm(items: list) -> Region:
            self.vals = dict(before)

            def body() -> list[SSAValue]:
                self.block_items(items)
                return [self.current(k, d, s) for k, d in carried]

            return self.branch(body, s)

        then_region = arm(then)
        else_region = arm(other) if other or carried else Region()
        self.vals = before
        types = [self.vals[k].type for k in keys]  # type: ignore[union-attr]
        op = self.emit(scf.IfOp(flag, types, then_region, else_region), s)
        for k, r in zip(keys, op.results):
            self.vals[k] = r

    def switch_stmt(self, s) -> None:
        """`switch (v)` on an integer: `if (v == a || v == b) {...} else if ...`, the
        `default` arm last. Cases that fall through into the next are one arm, each case's
        statements under `if (entered at it or before)`; a `break` elsewhere than at the
        end of a case, a `return` or `continue` in a case that falls through, and case
        ranges are refused (structured control flow has no jump into another arm)."""
        cond, body = children(s)[0], children(s)[-1]
        if not is_int(strip(cond).type):
            unsupported(cond, "switch on a non-integer value")
        value = self.index(self.rvalue(cond), cond)
        items = children(body) if body.kind.name == "COMPOUND_STMT" else [body]
        groups: list[tuple[list[int], bool, list]] = []  # (labels, is default, statements)
        for t in items:
            if t.kind.name not in ("CASE_STMT", "DEFAULT_STMT"):
                if not groups:
                    unsupported(t, "a statement before the first case of a switch")
                groups[-1][2].append(t)
                continue
            labels: list[int] = []
            default = False
            while t.kind.name in ("CASE_STMT", "DEFAULT_STMT"):
                kids = children(t)
                if t.kind.name == "DEFAULT_STMT":
                    default = True
                else:
                    if len(kids) != 2:
                        unsupported(t, "a case range ('case a ... b')")
                    label = evaluate(kids[0])
                    if not isinstance(label, int):
                        unsupported(kids[0], "a case label that is not an integer constant")
                    labels.append(label)
                t = kids[-1]
            groups.append((labels, default, [t]))
        arms: list[tuple[list[int], list]] = []
        fallback: list = []
        chain: list[tuple[list[int], bool, list]] = []  # cases falling into the next
        for n, (labels, default, stmts) in enumerate(groups):
            ends = bool(stmts) and stmts[-1].kind.name in (
                "BREAK_STMT", "RETURN_STMT", "CONTINUE_STMT"
            )
            if stmts and stmts[-1].kind.name == "BREAK_STMT":
                stmts = stmts[:-1]
            for t in stmts:
                jump = switch_break(t)
                if jump is not None:
                    unsupported(jump, "'break' before the end of a case of a switch")
                if not ends and n < len(groups) - 1 and (returns(t) or jumps(t)[1]):
                    unsupported(t, "a 'return' or 'continue' in a case that falls through "
                                "into the next")
            chain.append((labels, default, stmts))
            if not ends and n < len(groups) - 1:
                continue
            pieces = self.fall_through(chain)
            if any(d for _, d, _ in chain):
                fallback = pieces
            else:
                arms.append(([k for ls, _, _ in chain for k in ls], pieces))
            chain = []
        self.switch_arms(value, arms, fallback, s)

    @staticmethod
    def fall_through(chain: list) -> list[tuple[tuple[list[int], bool] | None, list]]:
        """The pieces of an arm of cases falling into each other: (guard, statements),
        where the guard (None: always) is (labels, True) `value in labels`, or (labels,
        False) `value not in labels`. A case runs when the switch entered at it or an
        earlier one: its labels or an earlier one's, or, once the default (any value no
        label names) is among them, no later case's label."""
        pieces: list = []
        for j, (_, _, stmts) in enumerate(chain):
            if j == len(chain) - 1:
                pieces.append((None, stmts))
            elif any(d for _, d, _ in chain[: j + 1]):
                pieces.append((([k for ls, _, _ in chain[j + 1 :] for k in ls], False), stmts))
            else:
                pieces.append((([k for ls, _, _ in chain[: j + 1] for k in ls], True), stmts))
        return pieces

    def in_labels(self, value: SSAValue, labels: list[int], s) -> SSAValue:
        """`value == a || value == b || ...` (false for no labels)."""
        flag = None
        for label in labels:
            eq = self.emit(arith.CmpiOp(value, self.const(label, INDEX, s), "eq"), s).results[0]
            flag = eq if flag is None else self.emit(arith.OrIOp(flag, eq), s).results[0]
        return self.const(0, i1, s) if flag is None else flag

    def run_pieces(self, value: SSAValue, pieces: list, s) -> None:
        """An arm's statements, each case's under its guard (`fall_through`)."""
        for guard, stmts in pieces:
            if guard is None:
                self.block_items(stmts)
                continue
            labels, inside = guard
            flag = self.in_labels(value, labels, s)
            if not inside:
                flag = self.emit(arith.XOrIOp(flag, self.const(1, i1, s)), s).results[0]
            self.emit_if(flag, stmts, [], s)

    def switch_arms(self, value: SSAValue, arms: list, fallback: list, s) -> None:
        """`if (value in arms[0]) {...} else <the other arms>`, scalars and jump flags
        assigned in any arm its results (as `emit_if`)."""
        if not arms:
            self.run_pieces(value, fallback, s)
            return
        labels, pieces = arms[0]
        flag = self.in_labels(value, labels, s)
        every = [t for _, ps in [*arms, ([], fallback)] for _, ts in ps for t in ts]
        carried = self.carried(*every) + self.jump_keys(every)
        for k, d in carried:
            self.current(k, d, s)
        before = dict(self.vals)

        def arm(run: Callable[[], None]) -> Region:
            self.vals = dict(before)

            def body() -> list[SSAValue]:
                run()
                return [self.current(k, d, s) for k, d in carried]

            return self.branch(body, s)

        then_region = arm(lambda: self.run_pieces(value, pieces, s))
        else_region = arm(lambda: self.switch_arms(value, arms[1:], fallback, s))
        self.vals = before
        types = [self.vals[k].type for k, _ in carried]  # type: ignore[union-attr]
        op = self.emit(scf.IfOp(flag, types, then_region, else_region), s)
        for (k, _), r in zip(carried, op.results):
            self.vals[k] = r


# Cursor kind -> the method that translates a statement of that kind.
STATEMENTS: dict[str, Callable[..., None]] = {
    "COMPOUND_STMT": Statements.compound_stmt,
    "DECL_STMT": Statements.decl_stmt,
    "NULL_STMT": Statements.null_stmt,
    "FOR_STMT": Loops.for_stmt,
    "WHILE_STMT": Loops.while_stmt,
    "DO_STMT": Loops.do_while,
    "IF_STMT": Statements.if_stmt,
    "RETURN_STMT": Statements.return_stmt,
    "BREAK_STMT": Statements.jump_stmt,
    "CONTINUE_STMT": Statements.jump_stmt,
    "GOTO_STMT": Gotos.goto_stmt,
    "LABEL_STMT": Gotos.label_stmt,
    "SWITCH_STMT": Statements.switch_stmt,
}
