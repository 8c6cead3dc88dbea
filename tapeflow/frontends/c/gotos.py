"""Forward `goto` to a label at the top level of the function body (`goto out;` to a
cleanup or exit label): the statements before the label run as if they were a function
of their own with an early `return` (stmt.py's flag): a `goto` sets the label's i1 flag
and leaves every loop around it, and what follows it up to the label runs under
`if (!jumped)`. The label's statement and the rest run unconditionally. A backward goto
(a loop made of jumps), a goto over another label, a label inside a block, a `return`
before a label that a goto targets and computed gotos are refused.
"""

from __future__ import annotations

from xdsl.dialects.builtin import i1

from .clang import children, unsupported, walk
from .function import FunctionState


def label_of(goto):
    """The LABEL_STMT a GOTO_STMT jumps to."""
    return next(c.referenced for c in goto.get_children() if c.kind.name == "LABEL_REF")


def offset(c) -> int:
    return c.extent.start.offset


class Gotos(FunctionState):
    """Labels at the top level of the body, each ending a region a goto may leave."""

    def before_labels(self, body, stmts: list) -> list:
        """Translates the top-level statements before the function's last label (each
        label's region with its goto flag) and returns the statements from there on."""
        gotos = [c for c in walk(body) if c.kind.name in ("GOTO_STMT", "INDIRECT_GOTO_STMT")]
        top = {offset(t): n for n, t in enumerate(stmts) if t.kind.name == "LABEL_STMT"}
        for c in walk(body):
            if c.kind.name == "LABEL_STMT" and offset(c) not in top:
                unsupported(c, "a label inside a block (a goto may jump only to a label at "
                            "the top level of the function body)")
        for g in gotos:
            if g.kind.name == "INDIRECT_GOTO_STMT":
                unsupported(g, "a computed goto ('goto *p')")
            target = offset(label_of(g))
            if target < offset(g):
                unsupported(g, "a backward goto (a loop made of jumps; write a loop)")
            if any(offset(g) < k < target for k in top):
                unsupported(g, "a goto over another label")
        start = 0
        for k in sorted(top.values()):
            to_label = [g for g in gotos if offset(label_of(g)) == offset(stmts[k])]
            self.goto_region(stmts[start:k], to_label)
            stmts[k] = children(stmts[k])[-1]  # the labelled statement
            start = k
        return stmts[start:]

    def goto_region(self, items: list, gotos: list) -> None:
        """The statements before a label: with gotos to it, under a flag of their own."""
        if not gotos:
            self.block_items(items)
            return
        for r in (c for t in items for c in walk(t) if c.kind.name == "RETURN_STMT"):
            unsupported(r, "a 'return' before a label that a goto jumps to")
        saved = self.ret
        self.ret = (("<jumped>", offset(gotos[0])), None)
        self.vals[self.ret[0]] = self.const(0, i1, gotos[0])
        self.block_items(items)
        del self.vals[self.ret[0]]
        self.ret = saved

    def goto_stmt(self, s) -> None:
        """A forward `goto` (checked by `before_labels`): sets the region's flag and leaves
        every loop around it, as an early return does."""
        self.leave(s)

    def label_stmt(self, s) -> None:
        unsupported(s, "a label inside a block (a goto may jump only to a label at the top "
                    "level of the function body)")
