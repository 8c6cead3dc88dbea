"""libclang: the `clang.cindex` module (with the entry points its Python side lacks) and
helpers on cursors: operator kinds, constant evaluation, locations, the one error form
(`file:line:col: unsupported C: ...`), and walks that see through parentheses and casts.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterator
from typing import NoReturn

from tapeflow.diagnostics import ToolError


def cindex():
    """`clang.cindex`, with the libclang 17+ entry points its Python side lacks."""
    try:
        import clang.cindex as ci
    except ImportError:
        raise ToolError(
            "the C frontend needs libclang: pip install 'tapeflow[c]'"
        ) from None
    lib = ci.conf.lib
    if not hasattr(cindex, "ready"):
        for fn, args, res in (
            ("clang_getCursorBinaryOperatorKind", [ci.Cursor], ctypes.c_int),
            ("clang_getBinaryOperatorKindSpelling", [ctypes.c_int], ci._CXString),
            ("clang_getCursorUnaryOperatorKind", [ci.Cursor], ctypes.c_int),
            ("clang_Cursor_Evaluate", [ci.Cursor], ctypes.c_void_p),
            ("clang_EvalResult_getKind", [ctypes.c_void_p], ctypes.c_int),
            ("clang_EvalResult_getAsLongLong", [ctypes.c_void_p], ctypes.c_longlong),
            ("clang_EvalResult_getAsDouble", [ctypes.c_void_p], ctypes.c_double),
            ("clang_EvalResult_dispose", [ctypes.c_void_p], None),
        ):
            f = getattr(lib, fn)
            f.argtypes, f.restype = args, res
        cindex.ready = True  # type: ignore[attr-defined]
    return ci


# CXUnaryOperatorKind
POST_INC, POST_DEC, PRE_INC, PRE_DEC, ADDR_OF, DEREF, PLUS, MINUS, NOT, LNOT = (
    range(1, 11)
)


def binary_op(c) -> str:
    lib = cindex().conf.lib
    kind = lib.clang_getCursorBinaryOperatorKind(c)
    return lib.clang_getBinaryOperatorKindSpelling(kind).spelling.decode()


def unary_op(c) -> int:
    return cindex().conf.lib.clang_getCursorUnaryOperatorKind(c)


def evaluate(c) -> int | float | None:
    """The value of a constant expression (literal, macro, `sizeof`), or None."""
    lib = cindex().conf.lib
    res = lib.clang_Cursor_Evaluate(c)
    if not res:
        return None
    try:
        kind = lib.clang_EvalResult_getKind(res)
        if kind == 1:
            return int(lib.clang_EvalResult_getAsLongLong(res))
        if kind == 2:
            return float(lib.clang_EvalResult_getAsDouble(res))
        return None
    finally:
        lib.clang_EvalResult_dispose(res)


def where(c) -> str:
    loc = c.location
    name = loc.file.name if loc.file else "<unknown>"
    return f"{name}:{loc.line}:{loc.column}"


def unsupported(c, what: str) -> NoReturn:
    raise ToolError(f"{where(c)}: unsupported C: {what}")


def error(c, what: str) -> NoReturn:
    raise ToolError(f"{where(c)}: {what}")


def decl_key(decl) -> tuple[str, int, str]:
    """Identity of a declaration (the same for every reference to it). Its name too: the
    declarations a macro expands to are all located where it is expanded."""
    loc = decl.location
    return (loc.file.name if loc.file else "", loc.offset, decl.spelling)


def children(c) -> list:
    return list(c.get_children())


def strip(c):
    """`c` without parentheses and implicit casts (not explicit ones)."""
    ci = cindex()
    while c.kind in (ci.CursorKind.PAREN_EXPR, ci.CursorKind.UNEXPOSED_EXPR):
        kids = children(c)
        if len(kids) != 1:
            break
        c = kids[0]
    return c


def is_null_pointer(c) -> bool:
    """`NULL`, `0` or `(T *)0`: a null pointer constant."""
    inner = strip_casts(c)
    return inner.kind.name == "INTEGER_LITERAL" and evaluate(inner) == 0


def strip_casts(c):
    ci = cindex()
    while c.kind in (
        ci.CursorKind.PAREN_EXPR,
        ci.CursorKind.UNEXPOSED_EXPR,
        ci.CursorKind.CSTYLE_CAST_EXPR,
    ):
        kids = [k for k in children(c) if k.kind.is_expression()]
        if len(kids) != 1:
            break
        c = kids[0]
    return c


def loop_hint(s):
    """The loop under a loop-hint pragma (`#pragma nounroll`, `#pragma unroll N`,
    `#pragma clang loop ...`: an AttributedStmt, which libclang does not expose), or None.
    The hint only steers Clang's optimizer; the loop means the same without it."""
    if s.kind.name != "UNEXPOSED_STMT":
        return None
    kids = list(s.get_children())
    if len(kids) == 1 and kids[0].kind.name in ("FOR_STMT", "WHILE_STMT", "DO_STMT"):
        return kids[0]
    return None


def walk(c, skip: Callable[[object], bool] | None = None) -> Iterator:
    """`c` and its descendants, in pre-order (not into subtrees `skip` accepts)."""
    if skip is not None and skip(c):
        return
    yield c
    for k in c.get_children():
        yield from walk(k, skip)
