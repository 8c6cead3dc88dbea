"""Questions about a statement or expression tree, asked before it is translated: does it
return, jump, assign or have effects, which buffers it stores to, and the parts of a
canonical `for`.
"""

from __future__ import annotations

from .clang import (
    ADDR_OF,
    DEREF,
    POST_DEC,
    POST_INC,
    PRE_DEC,
    PRE_INC,
    binary_op,
    children,
    decl_key,
    strip,
    strip_casts,
    unary_op,
    unsupported,
    walk,
)
from .libc import BUILTIN_CONSTANTS


def refers(tree, d) -> bool:
    """Whether the expression `tree` reads the variable `d`."""
    return any(
        c.kind.name == "DECL_REF_EXPR" and c.referenced is not None and decl_key(c.referenced) == decl_key(d)
        for c in walk(tree)
    )


def returns(tree) -> bool:
    """Whether `tree` may return early or jump forward to a label (gotos.py: the same flag)."""
    return any(c.kind.name in ("RETURN_STMT", "GOTO_STMT") for c in walk(tree))


def loop_returns(tree) -> bool:
    """Whether a loop in `tree` (or `tree`) contains a `return`."""
    loops = ("FOR_STMT", "WHILE_STMT", "DO_STMT")
    return any(c.kind.name in loops and returns(c) for c in walk(tree))


def jumps(tree) -> tuple[bool, bool]:
    """(has `break`, has `continue`) of the innermost loop around `tree`: jumps inside a
    loop nested in `tree` belong to that loop, except `return`, a break of every loop."""
    brk = returns(tree)
    cont = False
    stack = [tree]
    while stack:
        c = stack.pop()
        k = c.kind.name
        if k == "BREAK_STMT":
            brk = True
        elif k == "CONTINUE_STMT":
            cont = True
        elif k == "SWITCH_STMT":  # its breaks leave the switch, its continues the loop
            cont = cont or jumps(children(c)[-1])[1]
        elif k not in ("FOR_STMT", "WHILE_STMT", "DO_STMT"):
            stack.extend(c.get_children())
    return brk, cont


def switch_break(tree):
    """A `break` in `tree` that leaves the switch around it (not a nested loop's or
    switch's), or None."""
    if tree.kind.name == "BREAK_STMT":
        return tree
    if tree.kind.name in ("FOR_STMT", "WHILE_STMT", "DO_STMT", "SWITCH_STMT"):
        return None
    for k in tree.get_children():
        found = switch_break(k)
        if found is not None:
            return found
    return None


def assigned_target(c):
    """The variable reference `c` assigns (`x = `, `x += `, `x++`), or None."""
    k = c.kind.name
    if k == "BINARY_OPERATOR" and binary_op(c) == "=" or k == "COMPOUND_ASSIGNMENT_OPERATOR":
        t = strip(children(c)[0])
    elif k == "UNARY_OPERATOR" and unary_op(c) in (PRE_INC, PRE_DEC, POST_INC, POST_DEC):
        t = strip(children(c)[0])
    elif k == "UNARY_OPERATOR" and unary_op(c) == ADDR_OF:  # `f(&x)` may write x
        t = strip(children(c)[0])
    else:
        return None
    return t if t.kind.name == "DECL_REF_EXPR" else None


def assignments(tree) -> list:
    """The assignments and ++/-- in `tree`."""
    return [
        c for c in walk(tree)
        if c.kind.name == "COMPOUND_ASSIGNMENT_OPERATOR"
        or (c.kind.name == "BINARY_OPERATOR" and binary_op(c) == "=")
        or (c.kind.name == "UNARY_OPERATOR"
            and unary_op(c) in (PRE_INC, PRE_DEC, POST_INC, POST_DEC))
    ]


def assigns(tree):
    """The first assignment or ++/-- in `tree`, or None."""
    return next(iter(assignments(tree)), None)


def has_effects(tree) -> bool:
    """Whether evaluating `tree` may read memory, call or assign (so it must not be hoisted)."""
    return assigns(tree) is not None or any(
        c.kind.name in ("ARRAY_SUBSCRIPT_EXPR", "MEMBER_REF_EXPR")
        or (
            c.kind.name == "CALL_EXPR"
            and c.spelling.removeprefix("__builtin_") not in BUILTIN_CONSTANTS
        )
        or (c.kind.name == "UNARY_OPERATOR" and unary_op(c) == DEREF)
        for c in walk(tree)
    )


def stored_buffers(tree) -> set:
    """Keys of the arrays `tree` may write: subscripted assignment targets, call arguments."""
    out = set()
    for c in walk(tree):
        k = c.kind.name
        target = None
        if k == "BINARY_OPERATOR" and binary_op(c) == "=" or k == "COMPOUND_ASSIGNMENT_OPERATOR":
            target = strip(children(c)[0])
        elif k == "UNARY_OPERATOR" and unary_op(c) in (PRE_INC, PRE_DEC, POST_INC, POST_DEC):
            target = strip(children(c)[0])
        elif k == "CALL_EXPR":
            for a in c.get_arguments():
                b = strip_casts(a)
                while b.kind.name in ("UNARY_OPERATOR", "MEMBER_REF_EXPR") and (
                    b.kind.name == "MEMBER_REF_EXPR" or unary_op(b) == ADDR_OF
                ):  # g(&s), g(&s.inner): s may change
                    b = strip(children(b)[0])
                if b.kind.name == "DECL_REF_EXPR" and b.referenced is not None:
                    out.add(decl_key(b.referenced))
        places = ("ARRAY_SUBSCRIPT_EXPR", "UNARY_OPERATOR", "MEMBER_REF_EXPR")
        while target is not None and target.kind.name in places:
            target = strip(children(target)[0])
        if target is not None and target.kind.name == "DECL_REF_EXPR" and target.referenced is not None:
            out.add(decl_key(target.referenced))
    return out


def factors_of(c) -> list:
    """The operands of a product `a * b * c` (any nesting), left to right."""
    c = strip(c)
    if c.kind.name == "BINARY_OPERATOR" and binary_op(c) == "*":
        a, b = children(c)
        return factors_of(a) + factors_of(b)
    return [c]


def for_parts(s):
    """(init, cond, inc, body) of a `for`; libclang omits the absent ones, so place the
    present ones in the header's non-empty parts, read from its tokens (in a `for` from a
    macro the tokens are the macro's and the children's offsets are where it expands, so
    the two cannot be compared)."""
    kids = children(s)
    body = kids[-1]
    header = kids[:-1]
    if len(header) == 3:  # all present: no tokens to read (a `for` a macro expands to)
        return header[0], header[1], header[2], body
    segments: list[list] = [[]]
    depth = 0
    for t in s.get_tokens():
        if t.spelling == "(":
            depth += 1
            if depth == 1:
                continue
        elif t.spelling == ")":
            depth -= 1
            if depth == 0:
                break
        elif t.spelling == ";" and depth == 1:
            segments.append([])
            continue
        if depth >= 1:
            segments[-1].append(t)
    present = [n for n, seg in enumerate(segments) if seg]
    if len(segments) != 3 or len(present) != len(header):
        unsupported(s, "a for loop whose header parts come from macros that expand to nothing")
    parts: list = [None, None, None]
    for n, k in zip(present, header):
        parts[n] = k
    return parts[0], parts[1], parts[2], body
