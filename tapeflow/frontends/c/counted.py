"""Counted loops: the C `for` loops whose number of iterations is known when they start
(an integer counter stepped by a constant, or by a variable, and compared with a bound,
neither of which the body changes), so they can be an `scf.for`; any other loop is an
`scf.while`.

Up-counting loops (`i < n`, `i <= n`, `i + 1 < n`, `i += 2`) are an `scf.for` over the
counter itself. Down-counting ones (`for (j = hi; j >= lo; j -= s)`) are an `scf.for` over
a normalised index `k = 0, s, 2s, ...` below `hi - lo + 1` with `j = hi - k`.

Integers are 64-bit `index` values (the frontend's model: C's arithmetic for programs
without overflow). What the model cannot represent is refused here, so the loop stays an
`scf.while` that runs as C does: a down-counting counter of an unsigned type (or compared
unsigned) wraps below zero, so `j >= 0` never ends and `j -= 2` with `j > lo` runs on past
zero unless the bound is a constant that keeps it clear of the wrap.
"""

from __future__ import annotations

from dataclasses import dataclass

from .clang import (
    POST_DEC,
    POST_INC,
    PRE_DEC,
    PRE_INC,
    binary_op,
    children,
    decl_key,
    evaluate,
    strip,
    unary_op,
    walk,
)
from .trees import assigned_target, stored_buffers
from .types import is_int, is_unsigned

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}


@dataclass(frozen=True)
class Counted:
    """`for (var = start; var + offset <op> bound; var += step)`, run as an `scf.for`."""

    var: object
    """The counter's declaration."""
    start: object
    bound: object
    """The expression the counter is compared with (evaluated once, before the loop)."""
    offset: int
    """The counter is compared as `var + offset`, so its bound is `bound - offset`."""
    inclusive: bool
    """`<=` or `>=`: the bound itself is a counter value the body runs with."""
    step: int
    """Signed: negative for a down-counting loop; with `stride`, its sign only."""
    stride: object = None
    """The expression of a variable step (`i += s`, `j -= s`; `s` written nowhere in the
    body), else None. Taken as `max(s, 1)`: a C loop with `s <= 0` that runs at all never
    ends (a signed counter then overflows), so no defined program sees the difference."""


def counted_for(init, cond, inc, body) -> Counted | None:
    """The counted loop `for (init; cond; inc) body` is, or None (it stays a while loop).
    A body that breaks or returns is not counted (the caller checks)."""
    if init is None or cond is None or inc is None:
        return None
    var, start = counter_init(init)
    if var is None or not is_int(var.type):
        return None
    c = strip(cond)
    if c.kind.name != "BINARY_OPERATOR" or binary_op(c) not in _FLIP:
        return None
    op = binary_op(c)
    lhs, rhs = children(c)
    offset = _counter_offset(lhs, var)
    bound = rhs
    if offset is None:
        offset, bound, op = _counter_offset(rhs, var), lhs, _FLIP[op]
    step, stride = _step(inc, var), None
    if step is None:
        step, stride = _variable_step(inc, var)
    if offset is None or step is None or not _terminates(op, step, stride is not None):
        return None
    if is_unsigned(var.type) or is_unsigned(lhs.type):  # `i - 1 < n` from 0, `j >= 0`
        if offset < 0 or stride is not None:
            return None
        if step < 0 and not _clear_of_wrap(op, -step, offset, bound):
            return None
    if not all(_invariant(e, var, body) for e in (bound, stride) if e is not None):
        return None
    return Counted(var, start, bound, offset, op in ("<=", ">="), step, stride)


def counter_init(init) -> tuple[object, object]:
    """(counter, initial value) of `int i = a` or `i = a`, else (None, None)."""
    if init.kind.name == "DECL_STMT":
        decls = children(init)
        if len(decls) == 1 and decls[0].kind.name == "VAR_DECL":
            exprs = [k for k in children(decls[0]) if k.kind.is_expression()]
            if exprs:
                return decls[0], exprs[-1]
    elif init.kind.name == "BINARY_OPERATOR" and binary_op(init) == "=":
        lhs, rhs = children(init)
        if strip(lhs).kind.name == "DECL_REF_EXPR":
            return strip(lhs).referenced, rhs
    return None, None


def _is_var(e, var) -> bool:
    e = strip(e)
    return e.kind.name == "DECL_REF_EXPR" and e.referenced is not None and (
        decl_key(e.referenced) == decl_key(var)
    )


def _constant(e) -> int | None:
    v = evaluate(strip(e))
    return v if isinstance(v, int) else None


def _counter_offset(e, var) -> int | None:
    """`c` when `e` is the counter plus a constant (`i`, `i + 1`, `1 + i`, `i - 1`)."""
    if _is_var(e, var):
        return 0
    e = strip(e)
    if e.kind.name != "BINARY_OPERATOR" or binary_op(e) not in ("+", "-"):
        return None
    a, b = children(e)
    if _is_var(a, var) and (k := _constant(b)) is not None:
        return k if binary_op(e) == "+" else -k
    if binary_op(e) == "+" and _is_var(b, var) and (k := _constant(a)) is not None:
        return k
    return None


def _step(inc, var) -> int | None:
    """The constant, non-zero amount `inc` adds to the counter: `i++`, `--i`, `i += 2`,
    `i -= s` (s constant), `i = i + 2`, `i = i - 1`."""
    c = strip(inc)
    k = c.kind.name
    if k == "UNARY_OPERATOR" and unary_op(c) in (PRE_INC, POST_INC, PRE_DEC, POST_DEC):
        if not _is_var(children(c)[0], var):
            return None
        return 1 if unary_op(c) in (PRE_INC, POST_INC) else -1
    amount = None
    if k == "COMPOUND_ASSIGNMENT_OPERATOR" and binary_op(c) in ("+=", "-="):
        target, by = children(c)
        if _is_var(target, var) and (amount := _constant(by)) is not None:
            amount = amount if binary_op(c) == "+=" else -amount
    elif k == "BINARY_OPERATOR" and binary_op(c) == "=":
        target, value = children(c)
        if _is_var(target, var):
            offset = _counter_offset(value, var)
            amount = offset if offset is not None and not _is_var(value, var) else None
    return amount or None


def _variable_step(inc, var) -> tuple[int | None, object]:
    """(direction, amount) of `i += s` or `i -= s` with `s` an integer variable, else
    (None, None)."""
    c = strip(inc)
    if c.kind.name != "COMPOUND_ASSIGNMENT_OPERATOR" or binary_op(c) not in ("+=", "-="):
        return None, None
    target, by = children(c)
    if not _is_var(target, var) or not is_int(by.type) or is_unsigned(by.type):
        return None, None
    return (1 if binary_op(c) == "+=" else -1), by


def _terminates(op: str, step: int, variable: bool = False) -> bool:
    """Whether the test eventually fails as the counter moves by `step`: `<`, `<=` going up,
    `>`, `>=` going down, `!=` by a constant one (taken as `<` or `>`, as the bound is
    reached)."""
    if op == "!=":
        return abs(step) == 1 and not variable
    return op in ("<", "<=") if step > 0 else op in (">", ">=")


def _clear_of_wrap(op: str, stride: int, offset: int, bound) -> bool:
    """Whether an unsigned counter going down by `stride` never wraps below zero before its
    test fails: by one with a strict test (it stops at the bound), else a constant bound
    at least `stride - 1` (strict) or `stride` (`>=`) above zero."""
    if offset != 0:
        return False
    if op in (">", "!=") and stride == 1:
        return True
    b = _constant(bound)
    if b is None:
        return False
    return b >= stride - (op != ">=")


def _invariant(bound, var, body) -> bool:
    """Whether the bound (or a variable step) is the same at every test: it reads no
    variable or array the body writes, not the counter, and calls nothing; and the body
    does not write the counter."""
    targets = map(assigned_target, walk(body))
    written = {decl_key(t.referenced) for t in targets if t is not None}
    if decl_key(var) in written:
        return False
    changed = written | stored_buffers(body) | {decl_key(var)}
    for r in walk(bound):
        if r.kind.name == "DECL_REF_EXPR" and r.referenced is not None:
            if decl_key(r.referenced) in changed:
                return False
        if r.kind.name == "CALL_EXPR":
            return False
    return True
