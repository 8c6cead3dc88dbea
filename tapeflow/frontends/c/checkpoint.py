"""Enzyme's checkpointed and fixed-point loops (`<enzyme/checkpoint.h>`,
`<enzyme/fixed_point.h>`, shipped in include/enzyme/): each entry point is the loop of
step calls it stands for, which TapeFlow differentiates as any loop.

    __enzyme_checkpoint_for(step, start, n, markers..., args...)
        for (int64_t i = start; i < start + n; i++) step(i, args...);
    __enzyme_checkpoint_while(step, markers..., args...)
    __enzyme_fixed_point(step, markers..., args...)
        int64_t i = 0; while (step(i++, args...));
    __enzyme_set_fixed_point(...)   (inside a loop: that loop is a fixed point)
        nothing

A checkpointing scheme only decides what Enzyme stores and recomputes, never the
gradient; TapeFlow streams the tape of every step instead, so the scheme, its
configuration and the snapshot regions are not read (a remark says so) and parameters of
their types (`types.OPAQUE`) have no IR argument. A fixed-point loop is differentiated through
every iteration, where Enzyme iterates the adjoint of one step at the converged state: the
same gradient once both have converged, said in a remark with the differences
(include/enzyme/fixed_point.h).
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import i1
from xdsl.ir import Block, Region

from tapeflow.diagnostics import ToolError

from .clang import error, strip_casts, unsupported, walk, where
from .function import FunctionState
from .types import INDEX, type_kind

CHECKPOINT_FOR = "__enzyme_checkpoint_for"
CHECKPOINT_WHILE = "__enzyme_checkpoint_while"
FIXED_POINT = "__enzyme_fixed_point"
SET_FIXED_POINT = "__enzyme_set_fixed_point"
LOOP_ENTRIES = (CHECKPOINT_FOR, CHECKPOINT_WHILE, FIXED_POINT, SET_FIXED_POINT)

# marker -> how many operands follow it
MARKERS = {
    "enzyme_scheme": 2,  # &scheme, &config
    "enzyme_checkpoint_region": 2,  # ptr, bytes
    "enzyme_fp_state": 2,  # ptr, bytes
    "enzyme_fp_reduction": 1,
    "enzyme_fp_max_iters": 1,
    "enzyme_fp_control": 1,
}
_ENTRY_MARKERS = {
    CHECKPOINT_FOR: ("enzyme_scheme", "enzyme_checkpoint_region"),
    CHECKPOINT_WHILE: ("enzyme_scheme", "enzyme_checkpoint_region"),
    FIXED_POINT: ("enzyme_fp_state", "enzyme_fp_reduction", "enzyme_fp_max_iters",
                  "enzyme_fp_control", "enzyme_checkpoint_region"),
}

# Enzyme's loop annotations asking for checkpointing (`[[enzyme_checkpointing_enable(
# "binomial", 2)]] for (...)`): a schedule, never a gradient, so a remark.
LOOP_ATTRIBUTES = ("enzyme_checkpointing_enable", "enzyme_checkpoint")


def split_arguments(call) -> tuple[object, list, list]:
    """(step, marker operands, step arguments after `i`) of a loop entry's call; for
    `__enzyme_checkpoint_for` the step arguments start after `start, n`."""
    name = call.spelling
    args = list(call.get_arguments())
    if not args:
        error(call, f"{name} needs the step function")
    step = strip_casts(args[0])
    if step.kind.name != "DECL_REF_EXPR" or step.referenced is None or (
        step.referenced.kind.name != "FUNCTION_DECL"
    ):
        unsupported(args[0], f"{name} of something other than a named function")
    i = 3 if name == CHECKPOINT_FOR else 1
    if len(args) < i:
        error(call, f"{name} needs the step function, the first step and the number of steps")
    markers: list = []
    while i < len(args):
        a = strip_casts(args[i])
        if a.kind.name != "DECL_REF_EXPR" or a.spelling not in MARKERS:
            break
        if a.spelling not in _ENTRY_MARKERS[name]:
            unsupported(a, f"the Enzyme marker '{a.spelling}' in {name}")
        if i + MARKERS[a.spelling] >= len(args):
            error(a, f"{name}: '{a.spelling}' is not followed by its operands")
        markers += args[i : i + 1 + MARKERS[a.spelling]]
        i += 1 + MARKERS[a.spelling]
    rest = args[i:]
    for a in rest:
        b = strip_casts(a)
        if b.kind.name == "DECL_REF_EXPR" and b.spelling in MARKERS:
            unsupported(b, f"'{b.spelling}' after the step's arguments in {name} (the "
                        "markers come first)")
    return step.referenced, markers, rest


def marker_operands(body, strict: bool = True) -> set[tuple[int, int]]:
    """The (offset, hash) of the cursors only Enzyme's runtime reads in `body`: the
    markers of its loop entries and their operands, and a `__enzyme_set_fixed_point` call
    (the function never reads them, so a global named there needs no binding). Not
    `strict`: a malformed call is skipped (`body` may be a driver, never translated)."""
    out = set()
    for c in walk(body):
        if c.kind.name != "CALL_EXPR" or c.spelling not in LOOP_ENTRIES:
            continue
        try:
            skipped = [c] if c.spelling == SET_FIXED_POINT else split_arguments(c)[1]
        except ToolError:
            if strict:
                raise
            continue
        out |= {(k.extent.start.offset, k.hash) for m in skipped for k in walk(m)}
    return out


class MarkedLoops(FunctionState):
    """The builder part that translates the loop entries as their loops."""

    def marked_loop(self, e, name: str) -> None:
        """The loop `e` (a call of one of `LOOP_ENTRIES`) stands for."""
        if name == SET_FIXED_POINT:
            self.unit.remarks.append(
                f"remark: {where(e)}: {name}: the loop around it is differentiated through "
                "every iteration (Enzyme iterates the adjoint of one step at the fixed "
                "point: the same gradient once both have converged); its reduction, "
                "iteration limit and control function are not used\n"
            )
            return None
        step, markers, rest = split_arguments(e)
        fn = self.unit.defs.get(step.spelling)
        if fn is None:
            error(e, f"{name}: the step function '{step.spelling}' has no definition in "
                  "this file")
        params = list(fn.get_arguments())
        if len(params) != len(rest) + 1:
            error(e, f"{name}: '{step.spelling}' has {len(params)} parameters, the call "
                  f"gives it {len(rest) + 1} (the step number and {len(rest)} arguments)")
        if name != CHECKPOINT_FOR and type_kind(fn.result_type) == "VOID":
            error(e, f"{name}: the step function '{step.spelling}' returns nothing (it returns "
                  "whether to go on)")
        for a in rest:
            if (d := self.scalar_address(a)) is not None:
                unsupported(a, f"'&{d.spelling}' as a step argument of {name} (the step may "
                            "write it)")
        self.unit.remarks.append(_loop_remark(e, name, step.spelling, markers))
        if name == CHECKPOINT_FOR:
            args = list(e.get_arguments())
            start = self.index(self.rvalue(args[1]), args[1])
            count = self.index(self.rvalue(args[2]), args[2])
            end = self.emit(arith.AddiOp(start, count), args[2]).results[0]
            block = Block(arg_types=[INDEX])
            block.args[0].name_hint = "i"

            def run() -> None:
                self.call(e, True, step.spelling, [block.args[0], *rest])
                self.emit(scf.YieldOp(), e)

            self.loop_body(block, [], run, e)
            self.emit(scf.ForOp(start, end, self.const(1, INDEX, e), [], block), e)
            return None
        # int64_t i = 0; while (step(i++, args...));
        before, after = Block(arg_types=[INDEX]), Block(arg_types=[INDEX])
        before.args[0].name_hint = after.args[0].name_hint = "i"

        def test() -> None:
            i = before.args[0]
            more = self.call(e, False, step.spelling, [i, *rest])
            if more.type != i1:
                zero = self.const(0, more.type, e)
                cmp = arith.CmpiOp(more, zero, "ne") if more.type == INDEX else (
                    arith.CmpfOp(more, zero, "une"))
                more = self.emit(cmp, e).results[0]
            nxt = self.emit(arith.AddiOp(i, self.const(1, INDEX, e)), e).results[0]
            self.emit(scf.ConditionOp(more, nxt), e)

        def run() -> None:
            self.emit(scf.YieldOp(after.args[0]), e)

        self.loop_body(before, [], test, e)
        self.loop_body(after, [], run, e)
        self.emit(scf.WhileOp([self.const(0, INDEX, e)], [INDEX], Region(before),
                              Region(after)), e)
        return None


def _loop_remark(e, name: str, step: str, markers: list) -> str:
    if name == FIXED_POINT:
        return (
            f"remark: {where(e)}: {name}: the loop of '{step}' is differentiated through "
            "every iteration (Enzyme iterates the adjoint of one step at the fixed point: "
            "the same gradient once both have converged); its markers are not used\n"
        )
    scheme = " (its scheme and snapshot regions are not used)" if markers else ""
    return (
        f"remark: {where(e)}: {name}: the loop of '{step}' is differentiated as "
        f"written{scheme}: TapeFlow streams the tape of every step instead of storing "
        "snapshots and recomputing, with the same gradient\n"
    )


def loop_attribute_remark(where: str, attr: str) -> str:
    return (
        f"remark: {where}: the checkpointing annotation '{attr}' is not used: TapeFlow "
        "streams the tape of every step of the loop instead of storing snapshots and "
        "recomputing, with the same gradient\n"
    )
