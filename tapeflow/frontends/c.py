"""The C frontend: a C subset, parsed by Clang (`libclang`), as upstream MLIR.

`compile_c(text, name)` returns a `ModuleOp` of `func`, `scf`, `memref`, `arith` and
`math` ops; every op carries the C `file:line:col` it comes from (`FileLineColLoc`), so
later diagnostics and the simulator's per-op reports point at C lines.

What to translate. Functions to differentiate are named by Enzyme's entry point,
`__enzyme_autodiff((void*)f, enzyme_dup, x, dx, enzyme_const, n, ...)` (or any function
whose name contains `__enzyme_autodiff`, as for Enzyme) anywhere in the file, or by
`functions=`; a call of another `__enzyme_*` function is an error. Each call's activities follow Enzyme's rules (unannotated: a
pointer is dup, a float scalar active, an integer constant); the signature that is
TapeFlow's calling convention (README "The AD calling convention") gives `f` the unit
attribute `tapeflow.autodiff`, any other a specialization `f_<letters>` calling `f`
with its constant float arguments marked `tapeflow.const` (README "C kernels"). Only
those functions and the functions they call are translated, so the driver around the
Enzyme call (`main`, `printf`, ...) may use anything. With no target, every function
defined in the file is translated. Enzyme's attributes `enzyme_inactive` (and
`_noblock`), `enzyme_function_like`, `enzyme_nofree` and `enzyme_no_escaping_allocation`
are honoured, any other is an error.

Types (the rules, documented in the README section "C kernels"):
- `double`/`float` scalars are `f64`/`f32`; every C integer scalar (`int`, `long`,
  `size_t`, `unsigned`, ...) is `index`: integer arithmetic is 64-bit, equal to C's for
  programs without overflow;
- an array parameter takes its shape from its declaration: `double a[N][M]` is
  `memref<NxMxf64>`, `double a[][M]` `memref<?xMxf64>`; a pointer parameter `double *a`
  is one-dimensional and dynamic, `memref<?xf64>` (index it with computed offsets,
  `a[i*n + j]`). Integer arrays keep their C width in memory (`int` -> `i32`, `long` and
  `size_t` -> `i64`) and are converted to `index` when loaded;
- a pointer to a struct is one memref of its float fields, one (`i64`) of its integer
  fields and one per pointer field; a struct by value is one scalar per field (SROA);
  unions are refused;
- distinct pointer parameters are assumed not to alias, as if declared `restrict`
  (TapeFlow's AD assumes it of distinct memref arguments, as Enzyme with `noalias`);
- local arrays are `memref.alloca`, `malloc`/`calloc(n * sizeof(T))` `memref.alloc`,
  `free` `memref.dealloc`; `static const` tables are copied into a stack array at the
  start of each function that reads them; mutable globals are `memref.global`s (a
  scalar one element) shared by every function through `memref.get_global`;
- `&x` of a scalar passed to a function of the file is a one-element `memref.alloca`
  holding `x` for the call (an out-parameter), read back into `x` after it;
- pointers (README "C kernels"): a pointer into an array is a view (the memref and an
  element offset); a returned pointer is that offset (into a parameter) or the memref
  (a malloc of the callee); a `void *` takes the element type it is converted to; a
  local `T **` whose rows are malloc'ed with one length is a dense 2-D memref; `T *p =
  NULL` is bound by its first assignment; a null test of a bound pointer (`if (!p)`) is
  a constant (allocations are assumed to succeed).

Control flow is structured: a canonical `for (i = a; i < b; i += c)` (integer counter
not written in the body, bound not written in the body) is `scf.for`, any other loop
`scf.while`; scalars written in a loop or a branch become its iter_args / results;
`break`/`continue` become i1 flags (`_Loop`); `switch` is a chain of `scf.if`.
Anything outside the subset is `file.c:line:col: unsupported C: <what>` (a `ToolError`),
as are Clang's own errors.
"""

from __future__ import annotations

import ctypes
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from xdsl.builder import Builder
from xdsl.dialects import arith, func, math, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FileLineColLoc,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from tapeflow.diagnostics import ToolError

AUTODIFF_ATTR = "tapeflow.autodiff"
ENZYME_ENTRY = "__enzyme_autodiff"
INDEX = IndexType()

# Declarations Enzyme's header provides; added only for the names the file leaves
# undeclared, so a file written for Enzyme compiles once its header include is removed.
_ENZYME_DECLS = {
    "enzyme_dup": "extern int enzyme_dup;",
    "enzyme_dupnoneed": "extern int enzyme_dupnoneed;",
    "enzyme_const": "extern int enzyme_const;",
    "enzyme_out": "extern int enzyme_out;",
    ENZYME_ENTRY: f"extern double {ENZYME_ENTRY}(void *, ...);",
}
_PRELUDE = "/tapeflow-c-frontend/enzyme-declarations.h"
# The wheel ships libclang without Clang's builtin headers; the C library's headers
# (<stdlib.h>, <stdio.h>) include these, so the frontend provides them itself, the same
# on every machine.
_BUILTIN_DIR = "/tapeflow-c-frontend/include"
_BUILTIN_HEADERS = {
    "stddef.h": """#ifndef _TAPEFLOW_STDDEF_H
#define _TAPEFLOW_STDDEF_H
typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
typedef __WCHAR_TYPE__ wchar_t;
typedef struct { long long __ll; long double __ld; } max_align_t;
#define NULL ((void *)0)
#define offsetof(t, m) __builtin_offsetof(t, m)
#endif
""",
    "stdarg.h": """#ifndef _TAPEFLOW_STDARG_H
#define _TAPEFLOW_STDARG_H
typedef __builtin_va_list va_list;
typedef __builtin_va_list __gnuc_va_list;
#define va_start(ap, last) __builtin_va_start(ap, last)
#define va_arg(ap, type) __builtin_va_arg(ap, type)
#define va_end(ap) __builtin_va_end(ap)
#define va_copy(d, s) __builtin_va_copy(d, s)
#endif
""",
    "limits.h": """#ifndef _TAPEFLOW_LIMITS_H
#define _TAPEFLOW_LIMITS_H
#define CHAR_BIT __CHAR_BIT__
#define SCHAR_MAX __SCHAR_MAX__
#define SCHAR_MIN (-__SCHAR_MAX__ - 1)
#define UCHAR_MAX (__SCHAR_MAX__ * 2 + 1)
#define CHAR_MAX __SCHAR_MAX__
#define CHAR_MIN SCHAR_MIN
#define SHRT_MAX __SHRT_MAX__
#define SHRT_MIN (-__SHRT_MAX__ - 1)
#define USHRT_MAX (__SHRT_MAX__ * 2 + 1)
#define INT_MAX __INT_MAX__
#define INT_MIN (-__INT_MAX__ - 1)
#define UINT_MAX (__INT_MAX__ * 2U + 1U)
#define LONG_MAX __LONG_MAX__
#define LONG_MIN (-__LONG_MAX__ - 1L)
#define ULONG_MAX (__LONG_MAX__ * 2UL + 1UL)
#define LLONG_MAX __LONG_LONG_MAX__
#define LLONG_MIN (-__LONG_LONG_MAX__ - 1LL)
#define ULLONG_MAX (__LONG_LONG_MAX__ * 2ULL + 1ULL)
#endif
""",
    "float.h": """#ifndef _TAPEFLOW_FLOAT_H
#define _TAPEFLOW_FLOAT_H
#define FLT_RADIX __FLT_RADIX__
#define FLT_MANT_DIG __FLT_MANT_DIG__
#define DBL_MANT_DIG __DBL_MANT_DIG__
#define FLT_DIG __FLT_DIG__
#define DBL_DIG __DBL_DIG__
#define FLT_EPSILON __FLT_EPSILON__
#define DBL_EPSILON __DBL_EPSILON__
#define FLT_MIN __FLT_MIN__
#define DBL_MIN __DBL_MIN__
#define FLT_MAX __FLT_MAX__
#define DBL_MAX __DBL_MAX__
#endif
""",
    "stdbool.h": """#ifndef _TAPEFLOW_STDBOOL_H
#define _TAPEFLOW_STDBOOL_H
#define bool _Bool
#define true 1
#define false 0
#endif
""",
}
# Output calls in translated code are dropped (with a remark): they do not change results.
_OUTPUT_CALLS = ("printf", "fprintf", "puts", "putchar", "fflush")
_MEM_CALLS = ("memcpy", "memmove", "memset")
_ALLOCATORS = ("malloc", "calloc", "realloc", "aligned_alloc")


def _is_output_call(c) -> bool:
    return c.kind.name == "CALL_EXPR" and c.spelling in _OUTPUT_CALLS


# What `assert(e)` expands to calls on failure (glibc, macOS, BSD, MSVC, Bionic).
_ASSERT_CALLS = ("__assert_fail", "__assert_rtn", "__assert", "_assert", "__assert2")


def _is_assert(c) -> bool:
    """`assert(...)`: an expression statement that calls libc's assertion failure (the
    macro's expansion; libclang gives no tokens of it)."""
    return c.kind.is_expression() and any(
        k.kind.name == "CALL_EXPR" and k.spelling in _ASSERT_CALLS for k in _walk(c)
    )


def _is_entry(name: str) -> bool:
    """Enzyme differentiates the calls of every function whose name contains
    __enzyme_autodiff (`__enzyme_autodiff_d`, one prototype per signature)."""
    return ENZYME_ENTRY in name

_ANNOTATIONS = ("enzyme_dup", "enzyme_dupnoneed", "enzyme_const", "enzyme_out")
# Enzyme's function attributes that are honoured: `_noblock` is `enzyme_inactive` here (it
# only tells Enzyme's activity analysis not to stop at the call); `enzyme_nofree` and
# `enzyme_no_escaping_allocation` promise what TapeFlow's AD assumes anyway.
_ENZYME_ATTRIBUTES = ("enzyme_inactive", "enzyme_inactive_noblock", "enzyme_nofree",
                      "enzyme_no_escaping_allocation", "enzyme_function_like")
# `<enzyme/enzyme.h>`, shipped with the package (package data) and on the include path
# after the user's own `-I` directories.
INCLUDE_DIR = str(Path(__file__).resolve().parent / "include")
CONST_ARG_ATTR = "tapeflow.const"
# One letter per parameter in the name of a specialization (README "C kernels").
_LETTER = {"dup": "d", "const": "c", "out": "a"}


def _cindex():
    """`clang.cindex`, with the libclang 17+ entry points its Python side lacks."""
    try:
        import clang.cindex as ci
    except ImportError:
        raise ToolError(
            "the C frontend needs libclang: pip install 'tapeflow[c]'"
        ) from None
    lib = ci.conf.lib
    if not hasattr(_cindex, "ready"):
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
        _cindex.ready = True  # type: ignore[attr-defined]
    return ci


# CXUnaryOperatorKind
_POST_INC, _POST_DEC, _PRE_INC, _PRE_DEC, _ADDR_OF, _DEREF, _PLUS, _MINUS, _NOT, _LNOT = (
    range(1, 11)
)


def _binary_op(c) -> str:
    lib = _cindex().conf.lib
    kind = lib.clang_getCursorBinaryOperatorKind(c)
    return lib.clang_getBinaryOperatorKindSpelling(kind).spelling.decode()


def _unary_op(c) -> int:
    return _cindex().conf.lib.clang_getCursorUnaryOperatorKind(c)


def _evaluate(c) -> int | float | None:
    """The value of a constant expression (literal, macro, `sizeof`), or None."""
    lib = _cindex().conf.lib
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


def _where(c) -> str:
    loc = c.location
    name = loc.file.name if loc.file else "<unknown>"
    return f"{name}:{loc.line}:{loc.column}"


def _unsupported(c, what: str) -> NoReturn:
    raise ToolError(f"{_where(c)}: unsupported C: {what}")


def _error(c, what: str) -> NoReturn:
    raise ToolError(f"{_where(c)}: {what}")


def _key(decl) -> tuple[str, int]:
    """Identity of a declaration (the same for every reference to it)."""
    loc = decl.location
    return (loc.file.name if loc.file else "", loc.offset)


def _children(c) -> list:
    return list(c.get_children())


def _outside_signature(fn, offset: int) -> bool:
    """Whether `offset` (of an attribute in function `fn`'s extent) is on the function:
    not inside its parameter list (a parameter's attribute) nor its body (a local's)."""
    depth, start = 0, None
    for t in fn.get_tokens():
        o = t.extent.start.offset
        if start is None and t.spelling == "(" and o > fn.location.offset:
            start = o
        if start is None:
            continue
        depth += {"(": 1, ")": -1}.get(t.spelling, 0)
        if depth == 0:
            if start < offset < o:
                return False  # in the parameter list
            break
    body = [k for k in fn.get_children() if k.kind.name == "COMPOUND_STMT"]
    return not any(b.extent.start.offset <= offset <= b.extent.end.offset for b in body)


def _strip(c):
    """`c` without parentheses and implicit casts (not explicit ones)."""
    ci = _cindex()
    while c.kind in (ci.CursorKind.PAREN_EXPR, ci.CursorKind.UNEXPOSED_EXPR):
        kids = _children(c)
        if len(kids) != 1:
            break
        c = kids[0]
    return c


def _is_null_pointer(c) -> bool:
    """`NULL`, `0` or `(T *)0`: a null pointer constant."""
    inner = _strip_casts(c)
    return inner.kind.name == "INTEGER_LITERAL" and _evaluate(inner) == 0


def _strip_casts(c):
    ci = _cindex()
    while c.kind in (
        ci.CursorKind.PAREN_EXPR,
        ci.CursorKind.UNEXPOSED_EXPR,
        ci.CursorKind.CSTYLE_CAST_EXPR,
    ):
        kids = [k for k in _children(c) if k.kind.is_expression()]
        if len(kids) != 1:
            break
        c = kids[0]
    return c


def _loop_hint(s):
    """The loop under a loop-hint pragma (`#pragma nounroll`, `#pragma unroll N`,
    `#pragma clang loop ...`: an AttributedStmt, which libclang does not expose), or None.
    The hint only steers Clang's optimizer; the loop means the same without it."""
    if s.kind.name != "UNEXPOSED_STMT":
        return None
    kids = list(s.get_children())
    if len(kids) == 1 and kids[0].kind.name in ("FOR_STMT", "WHILE_STMT", "DO_STMT"):
        return kids[0]
    return None


def _walk(c, skip: Callable[[object], bool] | None = None) -> Iterator:
    """`c` and its descendants, in pre-order (not into subtrees `skip` accepts)."""
    if skip is not None and skip(c):
        return
    yield c
    for k in c.get_children():
        yield from _walk(k, skip)


# ---------------------------------------------------------------------------------------
# Types

_INT_KINDS = {
    "BOOL", "CHAR_U", "UCHAR", "CHAR_S", "SCHAR", "SHORT", "USHORT", "INT", "UINT", "LONG",
    "ULONG", "LONGLONG", "ULONGLONG",
}  # fmt: skip
_UNSIGNED_KINDS = {"BOOL", "CHAR_U", "UCHAR", "USHORT", "UINT", "ULONG", "ULONGLONG"}


def _kind(t) -> str:
    return t.get_canonical().kind.name


def _is_float(t) -> bool:
    return _kind(t) in ("DOUBLE", "FLOAT")


def _is_int(t) -> bool:
    return _kind(t) in _INT_KINDS or _kind(t) == "ENUM"


def _is_unsigned(t) -> bool:
    return _kind(t) in _UNSIGNED_KINDS


def _scalar_type(t, c) -> Attribute:
    """The IR type of a C scalar value (integers are `index`)."""
    kind = _kind(t)
    if kind == "DOUBLE":
        return f64
    if kind == "FLOAT":
        return f32
    if _is_int(t):
        return INDEX
    _unsupported(c, f"values of type '{t.spelling}'")


def _element_type(t, c) -> Attribute:
    """The IR type of a C scalar stored in memory (integers keep their width)."""
    kind = _kind(t)
    if kind in ("DOUBLE", "FLOAT"):
        return _scalar_type(t, c)
    if kind in ("INT", "UINT", "ENUM"):
        return i32
    if kind in ("LONG", "ULONG", "LONGLONG", "ULONGLONG"):
        return i64
    _unsupported(c, f"arrays of '{t.spelling}'")


def _array_shape(t, c) -> tuple[list[int], object]:
    """Shape (DYNAMIC_INDEX for unknown extents) and element C type of an array type."""
    shape: list[int] = []
    t = t.get_canonical()
    first = True  # a pointer here, or after pointers only: `double **a` is `?x?`
    while True:
        kind = t.kind.name
        if kind == "CONSTANTARRAY":
            shape.append(t.get_array_size())
            t = t.get_array_element_type().get_canonical()
        elif kind in ("INCOMPLETEARRAY", "VARIABLEARRAY", "DEPENDENTSIZEDARRAY") or (
            kind == "POINTER" and first
        ):
            shape.append(DYNAMIC_INDEX)
            t = (t.get_pointee() if kind == "POINTER" else t.get_array_element_type())
            t = t.get_canonical()
        elif kind == "POINTER":
            _unsupported(c, "pointers to pointers after an array dimension")
        else:
            return shape, t
        first = first and kind == "POINTER"


def _is_buffer_type(t) -> bool:
    return _kind(t) in ("POINTER", "CONSTANTARRAY", "INCOMPLETEARRAY", "VARIABLEARRAY")


def _record_scalar(t):
    """The float type every field of struct `t` is made of (scalars, arrays and structs of
    it, so C lays it out as consecutive floats), or None."""
    t = t.get_canonical()
    if t.kind.name != "RECORD" or t.get_declaration().kind.name != "STRUCT_DECL":
        return None
    found = None
    for f in t.get_fields():
        ft = f.type.get_canonical()
        while ft.kind.name == "CONSTANTARRAY":
            ft = ft.get_array_element_type().get_canonical()
        inner = _record_scalar(ft) if ft.kind.name == "RECORD" else ft
        if inner is None or inner.kind.name not in ("DOUBLE", "FLOAT"):
            return None
        if found is not None and inner.kind != found.kind:
            return None
        found = inner
    return found


def _record(t):
    """The canonical type of `t` when it is a struct (not a union), else None."""
    t = t.get_canonical()
    if t.kind.name == "RECORD" and t.get_declaration().kind.name == "STRUCT_DECL":
        return t
    return None


def _union_in(t):
    """A union in `t`: itself, its element or pointee, or a field of a struct in it
    (pointers inside a struct are not followed: `struct node *next`), else None."""
    t = t.get_canonical()
    while t.kind.name in ("POINTER", "CONSTANTARRAY", "INCOMPLETEARRAY", "VARIABLEARRAY"):
        t = (t.get_pointee() if t.kind.name == "POINTER" else t.get_array_element_type())
        t = t.get_canonical()
    if t.kind.name != "RECORD":
        return None
    if t.get_declaration().kind.name == "UNION_DECL":
        return t
    for f in t.get_fields():
        ft = f.type.get_canonical()
        if ft.kind.name != "POINTER" and (u := _union_in(ft)) is not None:
            return u
    return None


def _refuse_union(t, c) -> None:
    if (u := _union_in(t)) is not None:
        name = "(unnamed)" if "(" in u.spelling else f"'{u.spelling}'"
        _unsupported(c, f"union {name} (its fields share memory; use a struct)")


def _leaves(t, path: tuple = ()) -> list[tuple[tuple, object]]:
    """The scalars a struct (or array) type is made of, in declaration order: (path of
    field names and array indices, C type). A struct value is one SSA value per leaf."""
    t = t.get_canonical()
    if t.kind.name == "CONSTANTARRAY":
        e = t.get_array_element_type()
        return [leaf for n in range(t.get_array_size()) for leaf in _leaves(e, (*path, n))]
    if t.kind.name == "RECORD":
        return [leaf for f in t.get_fields() for leaf in _leaves(f.type, (*path, f.spelling))]
    return [(path, t)]


def _leaf_kind(t) -> str | None:
    """The memref a struct field lives in: "f" its floats, "i" its integers, "p" (a
    pointer field) its own."""
    if _is_float(t):
        return "f"
    return "i" if _is_int(t) else "p" if t.get_canonical().kind.name == "POINTER" else None


def _count(t, kind: str) -> int:
    """How many `kind` scalars a value of type `t` holds."""
    t = t.get_canonical()
    if t.kind.name == "CONSTANTARRAY":
        return t.get_array_size() * _count(t.get_array_element_type(), kind)
    if t.kind.name == "RECORD":
        return sum(_count(f.type, kind) for f in t.get_fields())
    return int(_leaf_kind(t) == kind)


def _position(record, name: str, kind: str, c) -> int:
    """Where field `name` of `record` starts among the struct's `kind` scalars."""
    n = 0
    for f in record.get_fields():
        if f.spelling == name:
            return n
        n += _count(f.type, kind)
    _unsupported(c, f"the field '{name}' of '{record.spelling}' (an anonymous member)")


def _struct_layout(t, c) -> tuple[Attribute | None, bool, list[Attribute]]:
    """(float type or None, has integers, element type of each pointer field) of a
    struct a pointer parameter points to: its float fields (all of one type) are one
    memref, its integer fields an `i64` one, each pointer field (to floats or integers)
    a memref of its own."""
    floats: set[str] = set()
    ints = False
    pointers = []
    for path, lt in _leaves(t):
        pointee = lt.get_pointee().get_canonical() if lt.kind.name == "POINTER" else None
        if _is_float(lt):
            floats.add(_kind(lt))
        elif _is_int(lt):
            ints = True
        elif pointee is not None and (_is_float(pointee) or _is_int(pointee)):
            pointers.append(_element_type(pointee, c))
        else:
            field = ".".join(str(x) for x in path)
            _unsupported(
                c, f"the field '{field}' of type '{lt.spelling}' in '{t.spelling}' (struct "
                "pointers hold floats, integers and pointers to them)"
            )
    if len(floats) > 1:
        _unsupported(c, f"'{t.spelling}' has both float and double fields")
    return (f64 if "DOUBLE" in floats else f32) if floats else None, ints, pointers


def _memref_type(t, c) -> MemRefType:
    _refuse_union(t, c)
    shape, elem = _array_shape(t, c)
    if _kind(elem) in ("FUNCTIONPROTO", "FUNCTIONNOPROTO"):
        _unsupported(c, "function pointers")
    if _kind(elem) in ("RECORD",):
        scalar = _record_scalar(elem)
        if scalar is None or len(shape) != 1:
            _unsupported(
                c,
                f"arrays of '{elem.spelling}' (structs and unions; only pointers to structs of "
                "float fields)"
            )
        n = elem.get_size() // scalar.get_size()
        size = DYNAMIC_INDEX if shape[0] == DYNAMIC_INDEX else shape[0] * n
        return MemRefType(_element_type(scalar, c), [size])
    return MemRefType(_element_type(elem, c), shape)


# ---------------------------------------------------------------------------------------
# Values of local variables

@dataclass
class _Buffer:
    """A C array or pointer: a memref and the C type of its elements; for a pointer to a
    struct of float fields, the memref holds the structs' floats (C's own layout) and
    `record` is the struct type. A struct pointer with integer or pointer fields has
    its integers in `ints` (an `i64` memref) and one buffer per pointer field in
    `fields`; `ref` is its floats (`floats`) or, without float fields, its first other
    memref."""

    ref: SSAValue
    elem: object
    record: object = None
    ints: SSAValue | None = None
    fields: tuple[_Buffer, ...] = ()
    floats: bool = True

    def mixed(self) -> bool:
        """A struct pointer of more than one memref (or not of floats)."""
        return self.ints is not None or bool(self.fields) or not self.floats

    def parts(self) -> list[SSAValue]:
        """The memrefs a struct pointer is passed as (README "C kernels")."""
        ints = [] if self.ints is None else [self.ints]
        return [self.ref] * self.floats + ints + [f.ref for f in self.fields]


class _Unset:
    """A scalar declared without an initializer (reading it is undefined in C)."""


@dataclass
class _Stale:
    """A for-loop counter after its loop: we do not compute its final value."""

    why: str


@dataclass
class _Loop:
    """The i1 flags of a loop with `break`/`continue`: `go` is false from a jump to the
    end of the current iteration, `running` (loops with `break`) false once it broke."""

    go: tuple[str, int]
    running: tuple[str, int] | None


@dataclass
class _Function:
    """What one C function becomes."""

    cursor: object
    name: str
    params: list[object]
    arg_types: list[Attribute]
    result_types: list[Attribute]
    # each parameter's IR arguments (several for structs, README "C kernels")
    groups: list[list[Attribute]] = None  # type: ignore[assignment]


# ---------------------------------------------------------------------------------------
# Translation unit


@dataclass
class CFrontend:
    """Translates one C file; `compile()` returns the module."""

    text: str
    name: str
    clang_args: Sequence[str] = ()
    functions: Sequence[str] = ()
    # function returning a pointer -> what it points into: ("param", k) or ("alloc",)
    pointer_results: dict[str, tuple] = field(default_factory=dict)
    # remarks (dropped output calls, asserts), printed once the file compiles: a refused
    # file gives its one `error:` line only
    remarks: list[str] = field(default_factory=list)

    def compile(self) -> ModuleOp:
        tu = self._parse()
        defs = self.defs = {}
        for c in tu.cursor.get_children():
            if c.kind.name == "FUNCTION_DECL" and c.is_definition():
                defs[c.spelling] = c
        for name in sorted(self.inactive & set(defs)):
            floats = {
                _key(p) for p in defs[name].get_arguments()
                if _is_buffer_type(p.type) and _is_float(_array_shape(p.type, p)[1])
            }
            if _stored_buffers(defs[name]) & floats:
                _unsupported(
                    defs[name],
                    f"the enzyme_inactive function '{name}' writes float arrays (only a result "
                    "is made inactive)"
                )
        # function -> its activity signatures (one per parameter: dup/const/out), in order
        targets: dict[str, list[tuple[str, ...]]] = {}
        for name in self.functions:
            if name not in defs:
                raise ToolError(f"{self.name}: --function {name}: no function '{name}' is defined")
            targets[name] = [_default_activity(defs[name])]
        calls: dict[tuple[str, tuple[str, ...]], object] = {}
        for call, fn in self._enzyme_calls(defs):
            activity = self._activity(call, fn)
            sigs = targets.setdefault(fn.spelling, [])
            if activity not in sigs:
                sigs.append(activity)
                calls[(fn.spelling, activity)] = call
        own = [n for n, c in defs.items() if c.location.file and c.location.file.name == self.name]
        order = self._reachable(list(targets) or own, defs)
        module = ModuleOp([])
        self.signatures = {n: self._signature(defs[n]) for n in order}
        self.variants: dict[tuple[str, tuple[int, ...]], str] = {}
        self.pending: list[tuple[str, tuple[int, ...], str]] = []
        for n in order:
            fn = _FunctionBuilder(self, self.signatures[n]).build()
            module.body.block.add_op(fn)
            for activity in targets.get(n, []):
                if activity == _default_activity(defs[n]):
                    fn.attributes[AUTODIFF_ATTR] = UnitAttr()
                    continue
                name = f"{n}_{''.join(_LETTER[a] for a in activity)}"
                if name in defs:
                    _error(
                        calls[(n, activity)],
                        f"{ENZYME_ENTRY}: the specialization '{name}' of '{n}' for this "
                        "activity is already a function of the file"
                    )
                spec = self._specialization(name, fn, activity, calls[(n, activity)])
                module.body.block.add_op(spec)
        while self.pending:  # variants of callees that get pointers into arrays
            n, at, name = self.pending.pop(0)
            fn = _FunctionBuilder(self, self.signatures[n], views=at, name=name).build()
            module.body.block.add_op(fn)
        for g in reversed(list(getattr(self, "global_ops", {}).values())):
            module.body.block.insert_op_before(g, module.body.block.first_op)
        return module

    def _specialization(self, name: str, primal: func.FuncOp, activity, call) -> func.FuncOp:
        """`name(args) = primal(args)`, marked for AD, its `enzyme_const` float arguments
        `tapeflow.const`: its gradient `name_grad` has Enzyme's signature for `activity`."""
        types = primal.function_type
        block = Block(arg_types=types.inputs)
        loc = self._loc(call)
        for a, b in zip(block.args, primal.body.block.args):
            a.name_hint, a.location = b.name_hint, b.location
        op = func.CallOp(primal.sym_name.data, list(block.args), list(types.outputs))
        ret = func.ReturnOp(*op.results)
        op.location = ret.location = loc
        block.add_ops([op, ret])
        fn = func.FuncOp(name, (types.inputs, types.outputs), Region(block))
        fn.location = loc
        fn.attributes[AUTODIFF_ATTR] = UnitAttr()
        fn.arg_attrs = ArrayAttr(
            [
                DictionaryAttr(
                    {CONST_ARG_ATTR: UnitAttr()} if a == "const" and _float_type(t) else {}
                )
                for a, t in zip(self._argument_activity(primal, activity), types.inputs)
            ]
        )
        return fn

    # --- mutable globals

    def global_buffer(self, c, d) -> SSAValue:
        """A fresh `memref.get_global` of `d` (not inserted), creating the module's
        `memref.global` for it on first use: its C initializer (constants) or zeros."""
        if not hasattr(self, "global_ops"):
            self.global_ops: dict[str, memref.GlobalOp] = {}
        name = d.spelling
        if name not in self.global_ops:
            defn = d.get_definition() or d
            if defn.storage_class.name == "EXTERN" and not any(
                k.kind.is_expression() for k in _children(defn)
            ):
                _unsupported(c, f"the extern global '{name}' (it has no definition in this file)")
            if _kind(defn.type.get_canonical()) == "RECORD":
                _unsupported(c, f"the global struct or union '{name}'")
            if _is_buffer_type(defn.type):
                if _kind(defn.type) != "CONSTANTARRAY":
                    _unsupported(c, f"the global '{name}' is a pointer (only arrays and scalars)")
                mtype = _memref_type(defn.type, defn)
                shape, elem = _array_shape(defn.type, defn)
            else:
                elem = defn.type
                mtype = MemRefType(_element_type(elem, defn), [1])
                shape = [1]
            if _kind(elem.get_canonical()) not in ("DOUBLE", "FLOAT") and not _is_int(elem):
                _unsupported(c, f"the global '{name}' of type '{defn.type.spelling}' (only double, float and integer scalars and arrays)")
            init = [k for k in _children(defn) if k.kind.is_expression()]
            if _is_buffer_type(defn.type):  # the other expressions are the array's sizes
                init = [k for k in init[-1:] if _strip(k).kind.name == "INIT_LIST_EXPR"]
            total = 1
            for n in shape:
                total *= n
            values: list[int | float] = [0] * total
            if init and _is_buffer_type(defn.type):
                flat = _FunctionBuilder.flatten_init(None, _strip(init[-1]), shape)  # type: ignore[arg-type]
                items = sorted(flat.items())
            else:
                items = [(0, init[-1])] if init else []
            for pos, item in items:
                v = _evaluate(item)
                if v is None:
                    _unsupported(item, f"the initializer of the global '{name}' is not a constant")
                values[pos] = v
            kind = float if _is_float(elem) else int
            tensor = TensorType(mtype.element_type, mtype.get_shape())  # upstream wants a tensor
            dense = DenseIntOrFPElementsAttr.from_list(tensor, [kind(v) for v in values])  # type: ignore[arg-type]
            op = memref.GlobalOp.get(StringAttr(name), mtype, dense)
            op.location = self._loc(defn)
            self.global_ops[name] = op
        ref = memref.GetGlobalOp(name, self.global_ops[name].type).results[0]
        ref.name_hint = name
        return ref
    def _argument_activity(self, primal: func.FuncOp, activity) -> list[str]:
        """One activity per IR argument: a struct parameter's applies to each of its
        arguments (its memrefs, or its fields by value)."""
        groups = self.signatures[primal.sym_name.data].groups
        return [a for a, g in zip(activity, groups, strict=True) for _ in g]

    # --- Clang

    def _parse(self):
        ci = _cindex()
        args = ["-x", "c", "-std=gnu11", "-isystem", _BUILTIN_DIR, *self.clang_args,
                "-isystem", INCLUDE_DIR]
        builtins = [(f"{_BUILTIN_DIR}/{n}", text) for n, text in _BUILTIN_HEADERS.items()]
        prelude = ""
        for attempt in range(2):
            unsaved = [(self.name, self.text), *builtins]
            if prelude:
                unsaved.append((_PRELUDE, prelude))
            tu = ci.Index.create().parse(self.name, args=args, unsaved_files=unsaved)
            missing = [
                n
                for n in _ENZYME_DECLS
                if any(
                    d.severity >= 3 and "undeclared" in d.spelling and f"'{n}'" in d.spelling
                    for d in tu.diagnostics
                )
            ]
            if attempt == 0 and missing:
                # Only the declarations the file lacks: a user's own (possibly different)
                # declaration of the others must not conflict with ours.
                prelude = "\n".join(_ENZYME_DECLS[n] for n in missing) + "\n"
                args = [*args, "-include", _PRELUDE]
                continue
            break
        errors = [d for d in tu.diagnostics if d.severity >= 3]
        if not errors:
            self._enzyme_attributes(tu)
            self._enzyme_registrations(tu)
        if errors:
            # The first error only: one located line (later ones often follow from it, and
            # Clang's "too many errors emitted" has no location).
            loc = errors[0].location
            where = f"{loc.file.name}:{loc.line}:{loc.column}" if loc.file else self.name
            raise ToolError(f"{where}: {errors[0].spelling}")
        return tu

    def _enzyme_attributes(self, tu) -> None:
        """Enzyme's function attributes. Clang (without Enzyme's plugin) drops them with
        a warning at the attribute; each is given to the function declared around or
        right after it. `enzyme_inactive` (the result carries no derivative),
        `enzyme_nofree` (nothing to do here) and `enzyme_function_like("name")` (the
        function is the <math.h> function `name`) are honoured; any other `enzyme_*`
        attribute is an error, not ignored."""
        self.inactive: set[str] = set()
        self.function_like: dict[str, str] = {}
        found = []
        for d in tu.diagnostics:
            m = re.fullmatch(r"unknown attribute '(enzyme_\w+)' ignored", d.spelling)
            if d.severity == 2 and m and d.location.file:
                found.append((d.location, m.group(1)))
        if not found:
            return
        # every file-scope declaration (a struct's or typedef's attribute is theirs, not
        # the next function's)
        decls = [c for c in tu.cursor.get_children() if c.location.file]
        texts: dict[str, str] = {}
        for loc, attr in found:
            where = f"{loc.file.name}:{loc.line}:{loc.column}"
            file = loc.file.name
            owner = before = None
            for c in decls:
                if c.extent.start.file is None or c.extent.start.file.name != file:
                    continue
                if c.extent.start.offset <= loc.offset <= c.extent.end.offset or (
                    c.extent.start.offset > loc.offset
                ):
                    owner = c
                    break
                before = c
            if file not in texts:
                texts[file] = self.text if file == self.name else Path(file).read_text()
            if before is not None and (owner is None or owner.extent.start.offset > loc.offset):
                # After a declaration's extent (`typedef double real __attribute__((...));`,
                # whose extent ends before it): its own unless a `;` or `}` ends it first.
                gap = texts[file][before.extent.end.offset : loc.offset]
                if ";" not in gap and "}" not in gap:
                    owner = before
            if attr not in _ENZYME_ATTRIBUTES:
                raise ToolError(f"{where}: unsupported C: the Enzyme attribute '{attr}'")
            if owner is None or owner.kind.name != "FUNCTION_DECL" or not _outside_signature(
                owner, loc.offset
            ):
                raise ToolError(
                    f"{where}: unsupported C: the Enzyme attribute '{attr}' on something other "
                    "than a function"
                )
            name = owner.spelling
            if attr in ("enzyme_inactive", "enzyme_inactive_noblock"):
                self.inactive.add(name)
            elif attr == "enzyme_function_like":
                pattern = r'enzyme_function_like\s*\(\s*"([^"]*)"\s*\)'
                m = re.match(pattern, texts[file][loc.offset :])
                self._function_like(where, owner, m.group(1) if m else None)

    def _enzyme_registrations(self, tu) -> None:
        """Enzyme's file-scope registrations: `void *__enzyme_function_like[2] = {(void *)f,
        "log1p"}` is `enzyme_function_like("log1p")` on `f`; any other `__enzyme_*`
        variable (custom gradients `__enzyme_register_gradient_*`, `__enzyme_allocation_like`,
        ...) is an error, not ignored (its function would be differentiated as written)."""
        for c in tu.cursor.get_children():
            if c.kind.name != "VAR_DECL" or not c.spelling.startswith("__enzyme_"):
                continue
            if c.spelling != "__enzyme_function_like":
                _unsupported(c, f"the Enzyme registration '{c.spelling}' (custom derivatives)")
            inits = [k for k in _children(c) if k.kind.name == "INIT_LIST_EXPR"]
            items = [_strip_casts(k) for k in _children(inits[0])] if inits else []
            fn = items[0].referenced if items and items[0].kind.name == "DECL_REF_EXPR" else None
            like = items[1].spelling.strip('"') if len(items) == 2 and (
                items[1].kind.name == "STRING_LITERAL") else None
            if fn is None or fn.kind.name != "FUNCTION_DECL" or like is None:
                _unsupported(c, "__enzyme_function_like other than {(void *)f, \"name\"}")
            self._function_like(_where(c), fn, like)

    def _function_like(self, where: str, owner, like: str | None) -> None:
        """`owner` computes the <math.h> function `like`: calls of it are that op."""
        name = owner.spelling
        if like not in _MATH:
            raise ToolError(
                f"{where}: unsupported C: enzyme_function_like({like or '?'}): only "
                f"<math.h> functions ({', '.join(sorted(_MATH))})"
            )
        if len(list(owner.get_arguments())) != _ARITY.get(like, 1):
            raise ToolError(
                f"{where}: enzyme_function_like(\"{like}\"): '{name}' does not take "
                f"{_ARITY.get(like, 1)} argument(s) as {like} does"
            )
        self.function_like[name] = like

    def _loc(self, c) -> FileLineColLoc:
        loc = c.location
        name = loc.file.name if loc.file else self.name
        return FileLineColLoc(StringAttr(name), IntAttr(loc.line), IntAttr(loc.column))

    # --- which functions

    def _enzyme_calls(self, defs) -> Iterator[tuple[object, object]]:
        for fn in defs.values():
            for c in _walk(fn):
                if c.kind.name == "CALL_EXPR" and c.spelling.startswith("__enzyme_") and not (
                    _is_entry(c.spelling)
                ):
                    _unsupported(c, f"the Enzyme function '{c.spelling}' (of Enzyme's "
                                 f"functions TapeFlow has {ENZYME_ENTRY} only)")
                if c.kind.name == "CALL_EXPR" and _is_entry(c.spelling):
                    args = [a for a in c.get_arguments()]
                    if not args:
                        _error(c, f"{ENZYME_ENTRY} needs the function to differentiate")
                    target = _strip_casts(args[0])
                    if target.kind.name == "UNARY_OPERATOR" and _unary_op(target) == _ADDR_OF:
                        target = _strip_casts(_children(target)[0])  # `(void *)&f`
                    ref = target.referenced if target.kind.name == "DECL_REF_EXPR" else None
                    if ref is None or ref.kind.name != "FUNCTION_DECL":
                        _unsupported(args[0], f"{ENZYME_ENTRY} of something other than a named function")
                    if ref.spelling not in defs:
                        _error(args[0], f"{ENZYME_ENTRY}: function '{ref.spelling}' has no definition in this file")
                    yield c, defs[ref.spelling]

    def _activity(self, call, fn) -> tuple[str, ...]:
        """The activity of each parameter of `fn` in an Enzyme call, by Enzyme's rules: an
        annotation applies to the next argument; unannotated, a pointer is enzyme_dup (its
        shadow follows it), a float scalar active, an integer constant."""
        args = list(call.get_arguments())[1:]
        params = list(fn.get_arguments())
        out: list[str] = []
        i = 0
        name = fn.spelling
        while i < len(args):
            a = _strip_casts(args[i])
            note = None
            if a.kind.name == "DECL_REF_EXPR" and a.spelling.startswith("enzyme_"):
                if a.spelling not in _ANNOTATIONS:
                    _unsupported(a, f"the Enzyme marker '{a.spelling}' in {ENZYME_ENTRY}")
                note = a.spelling
                i += 1
                if i >= len(args):
                    _error(a, f"{ENZYME_ENTRY}: '{note}' is not followed by an argument")
            if len(out) >= len(params):
                _error(args[i], f"{ENZYME_ENTRY}: more arguments than '{name}' has parameters")
            param = params[len(out)]
            pname = f"argument '{param.spelling}' of '{name}'"
            _refuse_union(param.type, args[i])
            if _is_buffer_type(param.type):
                elem = _array_shape(param.type, param)[1]
                if _record(elem) is not None and _record_scalar(elem) is None:
                    _struct_layout(elem, param)
                if note == "enzyme_out":
                    _error(
                        args[i],
                        f"{ENZYME_ENTRY}: {pname} is a pointer: it is enzyme_dup or "
                        "enzyme_const, not enzyme_out"
                    )
                if note == "enzyme_const":
                    out.append("const")
                    i += 1
                    continue
                i += 2  # the primal and its shadow
                if i > len(args):
                    _error(
                        call,
                        f"{ENZYME_ENTRY}: {pname} is {note or 'a pointer, so enzyme_dup'} but "
                        "has no shadow"
                    )
                # an integer array's shadow is ignored: it has no derivative
                out.append("dup" if _is_float(elem) or _kind(elem) == "RECORD" else "const")
            elif _record(param.type) is not None:
                out.append(self._struct_value_activity(param, note, args[i], pname))
                i += 1
            elif _is_float(param.type):
                if note in ("enzyme_dup", "enzyme_dupnoneed"):
                    _error(
                        args[i],
                        f"{ENZYME_ENTRY}: {pname} is a float scalar: it is active (enzyme_out "
                        f"or unannotated) or enzyme_const, not {note}"
                    )
                out.append("const" if note == "enzyme_const" else "out")
                i += 1
            else:
                if note not in (None, "enzyme_const"):
                    _error(
                        args[i],
                        f"{ENZYME_ENTRY}: {pname} is an integer (constant for TapeFlow), so it "
                        f"must be enzyme_const or unannotated, not {note}",
                    )
                out.append("const")
                i += 1
        if len(out) != len(params):
            _error(
                call,
                f"{ENZYME_ENTRY}: '{name}' has {len(params)} parameters, the call gives "
                f"{len(out)}"
            )
        return tuple(out)

    def _struct_value_activity(self, param, note, arg, pname: str) -> str:
        """A struct by value in an Enzyme call: active (its float fields' gradients are
        results) unless `enzyme_const`; it has no shadow, so not `enzyme_dup`."""
        if note in ("enzyme_dup", "enzyme_dupnoneed"):
            _error(
                arg,
                f"{ENZYME_ENTRY}: {pname} is a struct by value: it is active (enzyme_out or "
                f"unannotated) or enzyme_const, not {note}"
            )
        return "const" if note == "enzyme_const" else _struct_activity(param.type)

    def view_variant(self, name: str, at: tuple[int, ...]) -> str:
        """The function `name_at<i>[_<j>]`: `name` whose pointer parameters `at` are views
        into the caller's arrays, their element offsets as extra trailing `index`
        arguments (so the AD, inlining it, sees the caller's arrays)."""
        if (name, at) not in self.variants:
            variant = f"{name}_at{'_'.join(map(str, at))}"
            if variant in self.defs:
                _error(
                    self.defs[variant],
                    f"'{variant}' is the name of the variant of '{name}' for pointers into "
                    "arrays",
                )
            self.variants[(name, at)] = variant
            self.pending.append((name, at, variant))
        return self.variants[(name, at)]

    def dropped(self, name: str) -> bool:
        """Whether calls to `name` are not translated as calls: a function
        `enzyme_function_like` a <math.h> one (its op instead), or an `enzyme_inactive`
        one without result (it cannot change the differentiated result)."""
        if name in self.function_like:
            return True
        return name in self.inactive and _kind(self.defs[name].result_type) == "VOID"

    def _reachable(self, roots: list[str], defs) -> list[str]:
        """`roots` and every function they call, in source order; recursion is an error."""
        seen: set[str] = set()

        def visit(name: str, stack: list[str]) -> None:
            if name in stack:
                _unsupported(defs[name], f"recursion ({' -> '.join([*stack[stack.index(name):], name])})")
            if name in seen:
                return
            for c in _walk(defs[name]):
                if c.kind.name == "CALL_EXPR":
                    callee = c.referenced
                    if (
                        callee is not None
                        and callee.spelling in defs
                        and not _is_entry(callee.spelling)
                        and not self.dropped(callee.spelling)
                    ):
                        visit(callee.spelling, [*stack, name])
            seen.add(name)

        for r in roots:
            visit(r, [])
        return [n for n in defs if n in seen]

    def _signature(self, c) -> _Function:
        params = list(c.get_arguments())
        groups = [self._param_types(c, p) for p in params]
        types = [t for g in groups for t in g]
        rt = c.result_type
        _refuse_union(rt, c)
        if _kind(rt) == "POINTER":
            results = [self.pointer_result(c)]
        else:
            results = [] if _kind(rt) == "VOID" else _value_types(rt, c)
        return _Function(c, c.spelling, params, types, results, groups)

    def _param_types(self, c, p) -> list[Attribute]:
        """A parameter's IR arguments: one, except for structs (README "C kernels"): a
        pointer to a struct with integer fields is its float memref and its integer
        memref, a struct by value one scalar per field."""
        t = p.type
        _refuse_union(t, p)
        if _kind(t) == "POINTER" and _kind(t.get_pointee()) == "VOID":
            elem = _void_element(c, p)  # `void *p` the function converts to `double *`
            return [MemRefType(_element_type(elem, p), [DYNAMIC_INDEX])]
        if _is_buffer_type(t):
            shape, elem = _array_shape(t, p)
            if _record(elem) is not None and _record_scalar(elem) is None:
                if len(shape) != 1:
                    _unsupported(p, f"arrays of '{elem.spelling}' with more than one dimension")
                scalar, ints, pointers = _struct_layout(elem, p)
                types = [] if scalar is None else [(scalar, _count(elem, "f"))]
                types += [(i64, _count(elem, "i"))] if ints else []
                return [
                    MemRefType(et, [shape[0] if shape[0] == DYNAMIC_INDEX else shape[0] * n])
                    for et, n in types
                ] + [MemRefType(et, [DYNAMIC_INDEX]) for et in pointers]
            return [_memref_type(t, p)]
        if _record(t) is not None:
            return _value_types(t, p)
        return [_scalar_type(t, p)]

    def pointer_result(self, fn) -> Attribute:
        """The IR result of a function returning a pointer, by what it points into (read
        from the C): into its parameter `k`, the element offset (an `index`; the caller
        keeps its own array, so the AD sees the aliasing exactly); a buffer it allocates,
        that memref (a new array, aliasing nothing)."""
        name = fn.spelling
        if name in self.functions or name in self._targets():
            _unsupported(fn, f"differentiating '{name}', which returns a pointer")
        body = next(k for k in fn.get_children() if k.kind.name == "COMPOUND_STMT")
        returns = [r for r in _walk(body) if r.kind.name == "RETURN_STMT"]
        stmts = _children(body)
        if len(returns) != 1 or not stmts or stmts[-1] != returns[0] or not _children(returns[0]):
            _unsupported(fn, f"'{name}' returns a pointer other than by one 'return' at its end")
        origin = self.points_into(_children(returns[0])[0], fn, set())
        self.pointer_results[name] = origin
        if origin[0] == "param":
            return INDEX
        shape, elem = _array_shape(fn.result_type, fn)
        return MemRefType(_element_type(elem, fn), [DYNAMIC_INDEX])

    def _targets(self) -> set[str]:
        return {fn.spelling for _, fn in self._enzyme_calls(self.defs)}

    def points_into(self, e, fn, seen: set) -> tuple:
        """What the pointer expression `e` of function `fn` points into: ("param", k),
        ("alloc",) (a malloc of `fn`'s own), or an error."""
        c = _strip_casts(e)
        k = c.kind.name
        if k == "BINARY_OPERATOR" and _binary_op(c) in ("+", "-"):
            a, b = _children(c)
            return self.points_into(a if _kind(_strip(a).type) == "POINTER" else b, fn, seen)
        if k == "UNARY_OPERATOR" and _unary_op(c) == _ADDR_OF:
            inner = _strip(_children(c)[0])
            while inner.kind.name == "ARRAY_SUBSCRIPT_EXPR":
                inner = _strip(_children(inner)[0])
            return self.points_into(inner, fn, seen)
        if k == "CALL_EXPR" and c.spelling in _ALLOCATORS:
            return ("alloc",)
        if k == "CALL_EXPR" and c.spelling in self.defs and _kind(c.type) == "POINTER":
            callee = self.defs[c.spelling]
            if c.spelling not in self.pointer_results:
                self._signature(callee)
            origin = self.pointer_results[c.spelling]
            if origin[0] == "param":
                return self.points_into(list(c.get_arguments())[origin[1]], fn, seen)
            return origin
        if k == "DECL_REF_EXPR" and c.referenced is not None:
            d = c.referenced
            params = [_key(p) for p in fn.get_arguments()]
            if _key(d) in params:
                return ("param", params.index(_key(d)))
            init = [x for x in _children(d) if x.kind.is_expression()]
            if d.kind.name == "VAR_DECL" and _kind(d.type) == "POINTER" and init and _key(d) not in seen:
                return self.points_into(init[-1], fn, seen | {_key(d)})
            if d.kind.name == "VAR_DECL" and _kind(d.type) != "POINTER":
                _unsupported(e, f"returning a pointer to the local array '{d.spelling}'")
        _unsupported(e, "a returned pointer that is not into a parameter or a malloc of the function")


def _flat(t: MemRefType) -> MemRefType:
    """The one-dimensional memref a view of a multi-dimensional array parameter is."""
    return MemRefType(t.element_type, [DYNAMIC_INDEX])


def _value_types(t, c) -> list[Attribute]:
    """The IR types of a C value: a struct by value is one scalar per field."""
    if _record(t) is None:
        return [_scalar_type(t, c)]
    out = []
    for path, lt in _leaves(t):
        if not (_is_float(lt) or _is_int(lt)):
            field = ".".join(str(x) for x in path)
            _unsupported(c, f"the field '{field}' of type '{lt.spelling}' in a struct by value")
        out.append(_scalar_type(lt, c))
    return out


def _struct_activity(t) -> str:
    """A struct by value is active when it has float fields (each field's gradient is
    a result, README "C kernels"), else constant."""
    return "out" if _count(t, "f") else "const"


def _float_type(t: Attribute) -> bool:
    if isinstance(t, MemRefType):
        t = t.element_type
    return isinstance(t, (Float64Type, Float32Type))


def _default_activity(fn) -> tuple[str, ...]:
    """TapeFlow's convention (the `_grad` of the primal itself): float arrays dup, float
    scalars active, the rest constant."""
    out = []
    for p in fn.get_arguments():
        if _is_buffer_type(p.type):
            elem = _array_shape(p.type, p)[1]
            out.append("dup" if _is_float(elem) or _kind(elem) == "RECORD" else "const")
        elif _record(p.type) is not None:
            out.append(_struct_activity(p.type))
        else:
            out.append("out" if _is_float(p.type) else "const")
    return tuple(out)


# ---------------------------------------------------------------------------------------
# One function


class _FunctionBuilder:
    """Emits one function; `vals` maps each scalar variable to its current SSA value."""

    def __init__(
        self, unit: CFrontend, sig: _Function, views: tuple[int, ...] = (), name: str | None = None
    ):
        self.unit = unit
        self.sig = sig
        self.view_params = views  # parameters that are views: their offsets come last
        self.name = name or sig.name
        self.vals: dict[tuple[str, int], object] = {}
        self.bufs: dict[tuple[str, int], _Buffer] = {}
        self.constants: dict[tuple[Attribute, str], arith.ConstantOp] = {}
        self.loops: list[_Loop] = []
        self.loop_count = 0
        # (returned flag, returned value) keys, for a function with an early `return`
        self.ret: tuple[tuple[str, int], tuple[str, int] | None] | None = None
        # pointer variables that point into another array: their element offset (an
        # index) is the scalar `vals[key]`, so loops and branches carry it
        self.views: set[tuple[str, int]] = set()
        # scalar mutable globals: one-element memrefs, loaded and stored at each use
        self.cells: dict[tuple[str, int], _Buffer] = {}
        # `&x` call arguments: x's one-element alloca (per parameter type), see build
        self.address_cells: dict[tuple[tuple[str, int], Attribute], Operation] = {}
        self.row_tables: set[tuple[str, int]] = set()  # local `T **` tables of rows
        # structs by value (parameters and locals): their record type; field `path` of
        # the struct `key` is the scalar `vals[(key, path)]` (SROA)
        self.structs: dict[tuple[str, int], object] = {}
        # fields of structs by value passed as `&s` to the call being emitted: (key,
        # stack memref, index), read back after it
        self.spilled: list[tuple[object, SSAValue, SSAValue]] = []
        self.builder: Builder

    # --- emission helpers

    def emit(self, op: Operation, c) -> Operation:
        op.location = self.unit._loc(c)
        self.builder.insert(op)
        return op

    def const(self, value: float | int, type: Attribute, c) -> SSAValue:
        """One `arith.constant` per value in the entry block (located at its first use):
        loop bounds are then defined outside every loop, as the region passes want."""
        if isinstance(type, (Float64Type, Float32Type)):
            value = float(value)
            attr = FloatAttr(value, type)
        else:
            value = int(value)
            attr = IntegerAttr(value, type)
        key = (type, repr(value))
        if key not in self.constants:
            op = arith.ConstantOp(attr)
            op.location = self.unit._loc(c)
            self.constants[key] = op
        return self.constants[key].result

    def build(self) -> func.FuncOp:
        sig = self.sig
        starts = [sum(map(len, sig.groups[:n])) for n in range(len(sig.params))]  # structs
        flat = {starts[n] for n in self.view_params}
        arg_types = [
            _flat(t) if k in flat else t for k, t in enumerate(sig.arg_types)
        ] + [INDEX for _ in self.view_params]
        block = self.entry = Block(arg_types=arg_types)
        self.builder = Builder(InsertPoint.at_end(block))
        pos = 0
        for p, types in zip(sig.params, sig.groups):
            group, pos = block.args[pos : pos + len(types)], pos + len(types)
            if self.struct_parameter(p, group):
                continue
            arg = group[0]
            arg.name_hint = p.spelling or None
            arg.location = self.unit._loc(p)
            if isinstance(arg.type, MemRefType):
                elem = _array_shape(p.type, p)[1]
                if _kind(elem) == "VOID":
                    elem = self.void_element(p)
                if _kind(elem) == "RECORD":
                    self.bufs[_key(p)] = _Buffer(arg, _record_scalar(elem), elem.get_canonical())
                else:
                    self.bufs[_key(p)] = _Buffer(arg, elem)
            else:
                self.vals[_key(p)] = arg
        for j, n in enumerate(self.view_params):
            p, offset = sig.params[n], block.args[len(sig.arg_types) + j]
            offset.name_hint = f"{p.spelling}_offset"
            offset.location = self.unit._loc(p)
            self.views.add(_key(p))
            self.vals[_key(p)] = offset
        body = next(k for k in sig.cursor.get_children() if k.kind.name == "COMPOUND_STMT")
        self.globals(body)
        stmts = _children(body)
        result: list[SSAValue] = []
        if any(r.kind.name == "RETURN_STMT" and (not stmts or r != stmts[-1]) for r in _walk(body)):
            if _record(sig.cursor.result_type) is not None:
                _unsupported(
                    sig.cursor, f"a 'return' before the end of '{sig.name}', which returns a struct"
                )
            # An early return: a flag and the value so far, carried like `break`'s flags;
            # after a statement that may return, the rest runs under `if (!returned)`.
            value = ("<retval>", 0) if sig.result_types else None
            self.ret = (("<returned>", 0), value)
            self.vals[self.ret[0]] = self.const(0, i1, body)
            if value is not None:
                self.vals[value] = self.const(0, sig.result_types[0], body)
            self.block_items(stmts)
            result = [self.vals[value]] if value is not None else []  # type: ignore[list-item]
            stmts = []
        for n, s in enumerate(stmts):
            if s.kind.name == "RETURN_STMT":
                if n != len(stmts) - 1:
                    _unsupported(s, "statements after 'return'")
                kids = _children(s)
                if kids and sig.name in self.unit.pointer_results:
                    result = [self.returned_pointer(kids[0])]
                elif kids:
                    result = self.returned(kids[0], s)
                continue
            self.stmt(s)
        if sig.result_types and not result and self.ret is None:
            _unsupported(sig.cursor, f"'{sig.name}' returns a value but does not end with 'return'")
        ret = stmts[-1] if stmts else body
        self.emit(func.ReturnOp(*result), ret)
        if self.address_cells:  # after the constants (their sizes), before everything else
            block.insert_ops_before(list(self.address_cells.values()), block.first_op)
        block.insert_ops_before(list(self.constants.values()), block.first_op)
        fn = func.FuncOp(self.name, (arg_types, sig.result_types), Region(block))
        fn.location = self.unit._loc(sig.cursor)
        return fn

    # --- globals: `static const` scalars and tables

    def globals(self, body) -> None:
        done: set = set()
        for c in _walk(body, skip=_is_output_call):
            if c.kind.name != "DECL_REF_EXPR":
                continue
            d = c.referenced
            if d is None or d.kind.name != "VAR_DECL" or d.semantic_parent is None:
                continue
            if d.semantic_parent.kind.name != "TRANSLATION_UNIT" or _key(d) in done:
                continue
            done.add(_key(d))
            if d.spelling in _ANNOTATIONS:
                continue
            if not d.type.get_canonical().is_const_qualified() and not (
                _is_buffer_type(d.type)
                and _array_shape(d.type, d)[1].is_const_qualified()
            ):
                self.mutable_global(c, d)
                continue
            init = [k for k in _children(d) if k.kind.is_expression()]
            if not init:
                _unsupported(c, f"the global '{d.spelling}' has no initializer")
            if _is_buffer_type(d.type):
                self.bufs[_key(d)] = self.local_array(d, init[-1])
            else:
                v = _evaluate(init[-1])
                if v is None:
                    _unsupported(init[-1], f"the initializer of '{d.spelling}' is not a constant")
                self.vals[_key(d)] = self.const(v, _scalar_type(d.type, d), d)

    def mutable_global(self, c, d) -> None:
        """A mutable global (scalar or array of double/float/int): the module's
        `memref.global @name` (a scalar is one element), read and written through one
        `memref.get_global` at the start of each function that uses it, so every
        function and callee shares its memory and the AD sees it as one buffer."""
        ref = self.unit.global_buffer(c, d)
        self.emit(ref.owner, d)  # type: ignore[arg-type]
        if _is_buffer_type(d.type):
            self.bufs[_key(d)] = _Buffer(ref, _array_shape(d.type, d)[1])
        else:
            self.cells[_key(d)] = _Buffer(ref, d.type)

    # --- statements

    def stmt(self, s) -> None:
        k = s.kind.name
        if k == "COMPOUND_STMT":
            self.block_items(_children(s))
        elif k == "DECL_STMT":
            for d in s.get_children():
                self.decl(d)
        elif k == "NULL_STMT":
            pass
        elif k == "FOR_STMT":
            self.for_stmt(s)
        elif k == "WHILE_STMT":
            cond, body = _children(s)
            self.while_loop(s, cond, [body])
        elif k == "DO_STMT":
            self.do_while(s)
        elif k == "IF_STMT":
            self.if_stmt(s)
        elif k == "RETURN_STMT":
            if self.ret is None:
                _unsupported(s, "'return' before the end of the function")
            flag, value = self.ret
            kids = _children(s)
            if value is not None and kids:
                result_type = self.sig.cursor.result_type
                self.vals[value] = self.convert(self.rvalue(kids[0]), result_type, s)
            self.vals[flag] = self.const(1, i1, s)
            if self.loops:  # leaves every loop around it: a break here, then see block_items
                loop = self.loops[-1]
                false = self.const(0, i1, s)
                self.vals[loop.go] = false
                assert loop.running is not None
                self.vals[loop.running] = false
        elif k in ("BREAK_STMT", "CONTINUE_STMT"):
            loop = self.loops[-1]  # Clang rejects a jump outside a loop (switch is refused)
            false = self.const(0, i1, s)
            self.vals[loop.go] = false
            if k == "BREAK_STMT":
                assert loop.running is not None
                self.vals[loop.running] = false
        elif k in ("GOTO_STMT", "LABEL_STMT", "INDIRECT_GOTO_STMT"):
            _unsupported(s, "goto and labels")
        elif k == "SWITCH_STMT":
            self.switch_stmt(s)
        elif s.kind.is_expression():
            self.effect(s)
        elif _loop_hint(s) is not None:
            self.stmt(_loop_hint(s))
        else:
            _unsupported(s, f"the statement {k.lower()}")

    def block_items(self, items: list) -> None:
        """A statement list; after a statement that may `break`/`continue`, the rest runs
        under `if (go)` (structured control flow has no jumps)."""
        for n, t in enumerate(items):
            if t.kind.name == "RETURN_STMT" and self.ret is None:
                _unsupported(t, "'return' before the end of the function")
            self.stmt(t)
            if t.kind.name == "RETURN_STMT":
                return  # what follows is unreachable
            rest = items[n + 1 :]
            if self.ret is not None and self.loops and _loop_returns(t):
                # a return in a loop nested in `t` left that loop: leave this one too
                loop = self.loops[-1]
                stay = self.not_returned(t)
                for k in (loop.go, loop.running):
                    assert k is not None
                    self.vals[k] = self.emit(arith.AndIOp(self.vals[k], stay), t).results[0]
            if rest and self.loops and _jumps(t) != (False, False):
                self.emit_if(self.vals[self.loops[-1].go], rest, [], t)
                return
            if rest and not self.loops and self.ret is not None and _returns(t):
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
        if not self.loops or all(_jumps(t) == (False, False) for t in items):
            return keys
        loop = self.loops[-1]
        return [(k, None) for k in (loop.go, loop.running) if k is not None] + keys

    def return_keys(self, items: list) -> list[tuple[tuple[str, int], None]]:
        """The early-return flag and value, when `items` may return."""
        if self.ret is None or not any(_returns(t) for t in items if t is not None):
            return []
        return [(k, None) for k in self.ret if k is not None]

    def enter_loop(self, body_trees: list, c) -> tuple[_Loop | None, bool]:
        """Flags for a loop whose body jumps; (loop, has_break)."""
        has_break = any(_jumps(t)[0] for t in body_trees if t is not None)
        has_jump = any(_jumps(t) != (False, False) for t in body_trees if t is not None)
        if not has_jump:
            return None, False
        self.loop_count += 1
        n = self.loop_count
        loop = _Loop(("<go>", n), ("<running>", n) if has_break else None)
        if loop.running is not None:
            self.vals[loop.running] = self.const(1, i1, c)
        return loop, has_break

    def decl(self, d) -> None:
        if d.kind.name != "VAR_DECL":
            _unsupported(d, f"the declaration {d.kind.name.lower()}")
        if d.storage_class.name == "STATIC":
            _unsupported(d, "static local variables")
        t = d.type
        _refuse_union(t, d)
        exprs = [k for k in _children(d) if k.kind.is_expression()]
        if _kind(t) in ("CONSTANTARRAY", "VARIABLEARRAY"):
            if _kind(_array_shape(t, d)[1]) == "RECORD":
                self.bufs[_key(d)] = self.struct_array(d, exprs)
                return
            init = exprs[-1] if exprs and _strip(exprs[-1]).kind.name == "INIT_LIST_EXPR" else None
            self.bufs[_key(d)] = self.local_array(d, init)
        elif _kind(t) == "POINTER":
            if _kind(t.get_canonical().get_pointee()) in ("FUNCTIONPROTO", "FUNCTIONNOPROTO"):
                _unsupported(d, "function pointers")
            if not exprs or _is_null_pointer(exprs[-1]):
                # `T *p;` or `T *p = NULL;`: a pointer that points nowhere until assigned
                self.bufs.pop(_key(d), None)
                self.vals[_key(d)] = _Unset()
                if self.reassigned(d):
                    self.views.add(_key(d))
                return
            self.bufs[_key(d)] = self.pointer_value(d, exprs[-1])
        elif _kind(t) in ("RECORD", "ELABORATED"):
            self.struct_local(d, exprs)
        else:
            _scalar_type(t, d)
            self.vals[_key(d)] = self.convert(self.rvalue(exprs[-1]), t, d) if exprs else _Unset()

    def local_array(self, d, init) -> _Buffer:
        mtype = _memref_type(d.type, d)
        shape, elem = _array_shape(d.type, d)
        dynamic: list[SSAValue] = []
        if DYNAMIC_INDEX in shape:
            if len(shape) != 1:
                _unsupported(d, "multi-dimensional variable-length arrays")
            size = [k for k in _children(d) if k.kind.is_expression()]
            dynamic = [self.index(self.rvalue(size[0]), size[0])]
        ref = self.emit(
            memref.AllocaOp.get(mtype.element_type, shape=shape, dynamic_sizes=dynamic), d
        ).results[0]
        ref.name_hint = d.spelling
        if init is not None:
            flat = self.flatten_init(_strip(init), shape)
            strides = [1] * len(shape)
            for n in range(len(shape) - 2, -1, -1):
                strides[n] = strides[n + 1] * shape[n + 1]
            total = 1
            for e in shape:
                total *= e
            for pos in range(total):
                item = flat.get(pos)
                if item is None:
                    value = self.const(0, mtype.element_type, init)
                else:
                    value = self.to_memory(self.convert(self.rvalue(item), elem, item), mtype, item)
                idx = [self.const((pos // strides[n]) % shape[n], INDEX, init) for n in range(len(shape))]
                self.emit(memref.StoreOp.get(value, ref, idx), item if item is not None else init)
        return _Buffer(ref, elem)

    def flatten_init(self, init, shape: list[int]) -> dict[int, object]:
        """Row-major position -> initializer expression (missing ones are zero)."""
        out: dict[int, object] = {}

        def go(c, dims: list[int], base: int) -> None:
            c = _strip(c)
            if c.kind.name != "INIT_LIST_EXPR":
                if dims:
                    _unsupported(c, "a brace-elided or non-list array initializer")
                out[base] = c
                return
            inner = 1
            for e in dims[1:]:
                inner *= e
            for n, k in enumerate(c.get_children()):
                go(k, dims[1:], base + n * inner)

        if DYNAMIC_INDEX in shape:
            _unsupported(init, "an initializer for a variable-length array")
        go(init, shape, 0)
        return out

    def pointer_value(self, d, e) -> _Buffer:
        """A pointer variable's value: an allocation, another array, or a view into one
        (`a + i*n`, `&a[k]`, or a pointer the function moves): the same memref with an
        element offset, so the AD sees every access of the array it aliases."""
        inner = _strip_casts(e)
        if (
            inner.kind.name == "CALL_EXPR"
            and inner.spelling in _ALLOCATORS
            and _kind(d.type.get_canonical().get_pointee()) == "POINTER"
        ):
            return self.row_table(d, inner)
        if inner.kind.name == "CALL_EXPR" and inner.spelling == "realloc":
            return self.realloc(d, inner)
        if inner.kind.name == "CALL_EXPR" and inner.spelling in _ALLOCATORS:
            return self.allocation(d, inner)
        if _is_buffer_type(inner.type) or _kind(inner.type) == "POINTER":
            buf, off = self.pointer(e)
            self.same_elements(d, buf, e)
            if off is None and not self.reassigned(d):
                return buf
            self.views.add(_key(d))
            self.vals[_key(d)] = off if off is not None else self.const(0, INDEX, e)
            return buf
        _unsupported(e, "this pointer initializer (use malloc/calloc, or an array)")

    def reassigned(self, d) -> bool:
        return any(
            t is not None and _key(t.referenced) == _key(d)
            for t in map(_assigned_target, _walk(self.sig.cursor))
        )

    def pointer(self, e) -> tuple[_Buffer, SSAValue | None]:
        """The array a pointer expression points into and its element offset (None: its
        start): `p`, `a + k`, `k + a`, `a - k`, `&a[k]`, of one-dimensional arrays."""
        c = _strip_casts(e)
        k = c.kind.name
        if k == "MEMBER_REF_EXPR" and _kind(c.type) == "POINTER":
            return self.pointer_field(c), None
        if k == "DECL_REF_EXPR":
            d = c.referenced
            if d is not None and _key(d) in self.views and _key(d) in self.bufs:
                return self.bufs[_key(d)], self.current(_key(d), d, c)
        if k == "CALL_EXPR" and c.spelling in self.unit.pointer_results:
            return self.pointer_call(c)
        if k == "BINARY_OPERATOR" and _binary_op(c) in ("+", "-"):
            a, b = _children(c)
            if _binary_op(c) == "+" and _is_int(_strip(a).type):
                a, b = b, a
            if _is_buffer_type(_strip(a).type) and _is_int(_strip(b).type):
                buf, off = self.pointer(a)
                self.one_dimensional(buf, c)
                step = self.scaled(buf, self.index(self.rvalue(b), b), c)
                if _binary_op(c) == "-":
                    step = self.emit(arith.SubiOp(self.const(0, INDEX, c), step), c).results[0]
                if off is None:
                    return buf, step
                return buf, self.emit(arith.AddiOp(off, step), c).results[0]
        if k == "UNARY_OPERATOR" and _unary_op(c) == _ADDR_OF:
            inner = _strip(_children(c)[0])
            d = inner.referenced if inner.kind.name == "DECL_REF_EXPR" else None
            if d is not None and _key(d) in self.cells:  # `&g` of a scalar global
                return self.cells[_key(d)], None
            if inner.kind.name == "ARRAY_SUBSCRIPT_EXPR" and not _in_struct(inner):
                base = _strip(_children(inner)[0])
                if _kind(base.type) == "POINTER" and _kind(base.type.get_pointee()) == "RECORD":
                    if _is_struct_pointer(base.type):  # &ps[i]: struct i, counted in structs
                        return self.struct_offset(inner, c)
                    buf, at, _ = self.member(inner)  # &ps[i]: the i-th struct
                    return buf, at["f"]
                buf, idx = self.access(inner)
                self.one_dimensional(buf, c)
                return buf, idx[0]
        return self.buffer(e), None

    def pointer_call(self, c) -> tuple[_Buffer, SSAValue | None]:
        """A call of a function of the file returning a pointer (`row(a, i, n)`): into
        its argument `k`, that argument's array at the returned offset; else the memref it
        allocated."""
        origin = self.unit.pointer_results[c.spelling]
        v = self.call(c, False)
        if origin[0] == "param":
            return self.call_bufs[origin[1]], v
        elem = _array_shape(c.type, c)[1]
        return _Buffer(v, elem), None

    def returned_pointer(self, e) -> SSAValue:
        """The result of a function returning a pointer (see `CFrontend.pointer_result`),
        checked against what the C said it points into."""
        origin = self.unit.pointer_results[self.sig.name]
        buf, off = self.pointer(e)
        if origin[0] == "param":
            param = self.sig.params[origin[1]]
            if self.bufs.get(_key(param)) is not buf:
                _unsupported(e, f"a returned pointer that is not into the parameter '{param.spelling}'")
            return off if off is not None else self.const(0, INDEX, e)
        if off is not None or not isinstance(buf.ref.owner, memref.AllocOp):
            _unsupported(e, "returning a pointer into the middle of an allocation")
        want = self.sig.result_types[0]
        if buf.ref.type != want:
            return self.emit(memref.CastOp.get(buf.ref, want), e).results[0]
        return buf.ref

    def scaled(self, buf: _Buffer, count: SSAValue, c) -> SSAValue:
        """`count` elements of `buf` as a float offset (a struct is several floats)."""
        if buf.record is None:
            return count
        if buf.mixed():  # several memrefs: the offset counts structs (kinds)
            if buf.fields:
                _unsupported(c, _mixed_view(buf))
            return count
        size = self.const(buf.record.get_size() // buf.elem.get_size(), INDEX, c)
        return self.index_op(arith.MuliOp, count, size, c)

    def one_dimensional(self, buf: _Buffer, c) -> None:
        if buf.ref.type.get_num_dims() != 1:
            _unsupported(c, "pointer arithmetic on a multi-dimensional array (index it)")

    def move_pointer(
        self, target, c, rhs=None, step: int = 0, amount=None, minus=False
    ) -> SSAValue:
        """`p = q + k`, `p += k`, `p++` on a view `p` (it stays in one array)."""
        d = _strip(target).referenced
        key = _key(d)
        if rhs is not None:
            buf, off = self.pointer(rhs)
        else:
            if key not in self.bufs:
                _unsupported(c, f"moving the pointer '{d.spelling}' before it points into an array")
            buf = self.bufs[key]
            off = self.current(key, d, c)
            if amount is None:
                amount = self.const(step, INDEX, c)
            amount = self.scaled(buf, amount, c)
            op = arith.SubiOp if minus else arith.AddiOp
            off = self.emit(op(off, amount), c).results[0]
        if key in self.bufs and self.bufs[key].ref is not buf.ref:
            _unsupported(c, f"the pointer '{d.spelling}' moves to another array")
        self.bufs[key] = buf
        self.vals[key] = off if off is not None else self.const(0, INDEX, c)
        return self.vals[key]  # type: ignore[return-value]

    def is_view(self, target) -> bool:
        t = _strip(target)
        return (
            t.kind.name == "DECL_REF_EXPR"
            and t.referenced is not None
            and _key(t.referenced) in self.views
        )

    def allocation(self, d, call) -> _Buffer:
        shape, elem = _array_shape(d.type, d)
        if len(shape) != 1:
            _unsupported(call, "allocating a multi-dimensional array")
        if _kind(elem) == "VOID":
            elem = self.void_element(d)
        mtype = MemRefType(_element_type(elem, d), [DYNAMIC_INDEX])
        esize = elem.get_size()
        args = list(call.get_arguments())
        if call.spelling == "calloc":
            if len(args) == 2 and _evaluate(args[1]) != esize and _evaluate(args[0]) == esize:
                args.reverse()  # calloc(sizeof(T), n)
            if len(args) != 2 or _evaluate(args[1]) != esize:
                _unsupported(call, f"calloc(count, sizeof({elem.spelling})) is the supported form")
            count = self.index(self.rvalue(args[0]), args[0])
        elif call.spelling == "aligned_alloc":  # (alignment, size): alignment is the memory's
            count = self.element_count(args[1], esize)
        else:
            count = self.element_count(args[0], esize)
        ref = self.emit(
            memref.AllocOp.get(mtype.element_type, shape=[DYNAMIC_INDEX], dynamic_sizes=[count]),
            call,
        ).results[0]
        ref.name_hint = d.spelling
        if call.spelling == "calloc":
            zero = self.const(0, mtype.element_type, call)
            self.fill(ref, count, zero, call)
        return _Buffer(ref, elem)

    def row_table(self, d, call) -> _Buffer:
        """`double **m = malloc(n * sizeof(double *))` whose rows the function allocates
        (`m[i] = malloc(k * sizeof(double))`, every one the same length `k`, which must
        not change after `m` is declared): one dense `memref<?x?xT>` allocated here, as
        `double **` parameters are, so `m[i][j]` is a 2-D access; the row allocations and
        `free(m[i])` are no-ops and `free(m)` frees it."""
        shape, elem = _array_shape(d.type, d)
        if len(shape) != 2 or call.spelling not in ("malloc", "calloc"):
            _unsupported(call, f"{call.spelling} of a '{d.type.spelling}' (only malloc of a 'T **' table of rows)")
        rows_call = None
        for c in _walk(self.sig.cursor):
            if c.kind.name != "BINARY_OPERATOR" or _binary_op(c) != "=":
                continue
            lhs, rhs = (_strip(k) for k in _children(c))
            base = _strip_casts(_children(lhs)[0]) if lhs.kind.name == "ARRAY_SUBSCRIPT_EXPR" else None
            if base is None or base.kind.name != "DECL_REF_EXPR" or _key(base.referenced) != _key(d):
                continue
            r = _strip_casts(rhs)
            if r.kind.name != "CALL_EXPR" or r.spelling not in ("malloc", "calloc"):
                _unsupported(c, f"a row of '{d.spelling}' that is not malloc'ed (a local 'T **' is a dense 2-D array)")
            if rows_call is None:
                rows_call = r
            elif (r.spelling, self.text(r)) != (rows_call.spelling, self.text(rows_call)):
                _unsupported(
                    r,
                    f"rows of '{d.spelling}' of different lengths (a local 'T **' is a dense 2-D "
                    "array: every row one length)"
                )
        if rows_call is None:
            _unsupported(call, f"the rows of '{d.spelling}' are not allocated here (m[i] = malloc(...))")
        written = {_key(t.referenced) for t in map(_assigned_target, _walk(self.sig.cursor)) if t is not None}
        for r in _walk(rows_call):
            v = r.referenced if r.kind.name == "DECL_REF_EXPR" else None
            if v is None or v.kind.name not in ("VAR_DECL", "PARM_DECL"):
                continue
            if _key(v) in written or (
                v.kind.name == "VAR_DECL" and v.location.offset > d.location.offset
            ):
                _unsupported(
                    rows_call,
                    f"a row length of '{d.spelling}' that depends on '{v.spelling}' (a local "
                    "'T **' is a dense 2-D array: every row one length, known where it is declared)"
                )
        esize = elem.get_size()
        args = list(call.get_arguments())
        count = self.element_count(args[0], 8) if call.spelling == "malloc" else self.index(self.rvalue(args[0]), args[0])
        row_args = list(rows_call.get_arguments())
        if rows_call.spelling == "malloc":
            length = self.element_count(row_args[0], esize)
        elif len(row_args) == 2 and _evaluate(row_args[1]) == esize:
            length = self.index(self.rvalue(row_args[0]), row_args[0])
        else:
            _unsupported(rows_call, f"calloc(count, sizeof({elem.spelling})) is the supported form")
        mtype = MemRefType(_element_type(elem, d), [DYNAMIC_INDEX, DYNAMIC_INDEX])
        ref = self.emit(
            memref.AllocOp.get(mtype.element_type, shape=mtype.shape, dynamic_sizes=[count, length]),
            call,
        ).results[0]
        ref.name_hint = d.spelling
        if rows_call.spelling == "calloc":
            zero = self.const(0, mtype.element_type, rows_call)
            lb, step = self.const(0, INDEX, call), self.const(1, INDEX, call)
            body = Block(arg_types=[INDEX])
            outer = self.builder
            self.builder = Builder(InsertPoint.at_end(body))
            self.fill(ref, length, zero, rows_call, row=body.args[0])
            self.emit(scf.YieldOp(), call)
            self.builder = outer
            self.emit(scf.ForOp(lb, count, step, [], body), call)
        self.row_tables.add(_key(d))
        return _Buffer(ref, elem)

    def is_row(self, e) -> bool:
        """Whether `e` is a row `m[i]` of a local table of rows (see `row_table`)."""
        c = _strip_casts(e)
        if c.kind.name != "ARRAY_SUBSCRIPT_EXPR":
            return False
        base = _strip_casts(_children(c)[0])
        return (
            base.kind.name == "DECL_REF_EXPR"
            and base.referenced is not None
            and _key(base.referenced) in self.row_tables
        )

    def void_element(self, d):
        return _void_element(self.sig.cursor, d)

    def same_elements(self, d, buf: _Buffer, c) -> None:
        """A typed pointer to `buf` (through `void *` or a cast) reads its elements as they
        are: another element type would reinterpret their bits."""
        elem = _array_shape(d.type, d)[1]
        if buf.record is not None or _kind(elem) in ("VOID", "RECORD"):
            return
        if _element_type(elem, d) != buf.ref.type.element_type:
            _unsupported(
                c,
                f"'{d.spelling}' reads a buffer of '{buf.elem.spelling}' as '{elem.spelling}' "
                "(a cast that reinterprets memory)"
            )

    def at_top_level(self) -> bool:
        return self.builder.insertion_point.block is self.entry

    def realloc(self, d, call) -> _Buffer:
        """`realloc(p, size)`, copy semantics: a new allocation, the old elements copied
        (as many as both hold), the old one freed. At the function's top level (a buffer
        bound in a loop or branch would not outlive it), of a buffer the function mallocs."""
        args = list(call.get_arguments())
        old = self.buffer(args[0])
        if not self.at_top_level():
            _unsupported(call, "realloc inside a loop or branch (only at the function's top level)")
        if not isinstance(old.ref.owner, memref.AllocOp):
            _unsupported(args[0], "realloc of a buffer that this function does not allocate")
        self.same_elements(d, old, call)
        count = self.element_count(args[1], old.elem.get_size())
        mtype = old.ref.type
        ref = self.emit(
            memref.AllocOp.get(mtype.element_type, shape=[DYNAMIC_INDEX], dynamic_sizes=[count]),
            call,
        ).results[0]
        ref.name_hint = d.spelling
        zero = self.const(0, INDEX, call)
        size = self.emit(memref.DimOp(old.ref, zero), call).results[0]
        kept = self.emit(arith.MinSIOp(size, count), call).results[0]
        self.copy(ref, old.ref, kept, call)
        self.emit(memref.DeallocOp.get(old.ref), call)
        return _Buffer(ref, old.elem)

    def copy(self, dst: SSAValue, src: SSAValue, count: SSAValue, c) -> None:
        lb, step = self.const(0, INDEX, c), self.const(1, INDEX, c)
        body = Block(arg_types=[INDEX])
        outer = self.builder
        self.builder = Builder(InsertPoint.at_end(body))
        value = self.emit(memref.LoadOp.get(src, [body.args[0]]), c).results[0]
        self.emit(memref.StoreOp.get(value, dst, [body.args[0]]), c)
        self.emit(scf.YieldOp(), c)
        self.builder = outer
        self.emit(scf.ForOp(lb, count, step, [], body), c)

    def assign_allocation(self, target, call, c) -> None:
        """`p = malloc(...)` into a pointer declared without one, `p = realloc(p, ...)`:
        `p` names the new buffer from here on (at the function's top level)."""
        t = _strip(target)
        if self.is_row(t):
            return  # allocated with the table (`row_table`)
        if t.kind.name != "DECL_REF_EXPR" or _kind(t.type) != "POINTER":
            _unsupported(c, f"storing the result of {call.spelling} (only into a pointer variable)")
        d = t.referenced
        key = _key(d)
        if not self.at_top_level():
            _unsupported(c, f"assigning {call.spelling} to '{d.spelling}' inside a loop or branch (declare it there)")
        if call.spelling == "realloc":
            self.bufs[key] = self.realloc(d, call)
        elif key in self.bufs:
            _unsupported(c, f"a second allocation into the pointer '{d.spelling}' (free it and use another)")
        else:
            self.bufs[key] = self.allocation(d, call)
        if key in self.views:
            self.vals[key] = self.const(0, INDEX, c)

    def posix_memalign(self, e) -> SSAValue:
        """`posix_memalign(&p, alignment, size)`: `p` is a new buffer (the alignment is the
        memory's concern); the call returns 0 (success)."""
        args = list(e.get_arguments())
        target = _strip_casts(args[0]) if len(args) == 3 else None
        if target is None or target.kind.name != "UNARY_OPERATOR" or _unary_op(target) != _ADDR_OF:
            _unsupported(e, "posix_memalign(&pointer, alignment, size) is the supported form")
        ref = _strip(_children(target)[0])
        if ref.kind.name != "DECL_REF_EXPR" or _key(ref.referenced) in self.bufs:
            _unsupported(args[0], "posix_memalign into a pointer that already points to a buffer")
        if not self.at_top_level():
            _unsupported(e, "posix_memalign inside a loop or branch (only at the function's top level)")
        d = ref.referenced
        shape, elem = _array_shape(d.type, d)
        if _kind(elem) == "VOID":
            elem = self.void_element(d)
        count = self.element_count(args[2], elem.get_size())
        mtype = MemRefType(_element_type(elem, d), [DYNAMIC_INDEX])
        buf = self.emit(
            memref.AllocOp.get(mtype.element_type, shape=[DYNAMIC_INDEX], dynamic_sizes=[count]), e
        ).results[0]
        buf.name_hint = d.spelling
        self.bufs[_key(d)] = _Buffer(buf, elem)
        if _key(d) in self.views:
            self.vals[_key(d)] = self.const(0, INDEX, e)
        return self.const(0, INDEX, e)

    def element_count(self, size, esize: int) -> SSAValue:
        """`n * sizeof(T)` (either order) or a constant multiple of sizeof(T)."""
        c = _strip(size)
        whole = _evaluate(c)
        if isinstance(whole, int):
            if whole % esize:
                _unsupported(size, f"malloc of {whole} bytes: not a multiple of the element size {esize}")
            return self.const(whole // esize, INDEX, size)
        if c.kind.name == "BINARY_OPERATOR" and _binary_op(c) == "*":
            a, b = _children(c)
            for x, y in ((a, b), (b, a)):
                if _evaluate(_strip(y)) == esize and _strip(y).kind.name in ("UNARY_EXPR", "CXX_UNARY_EXPR"):
                    return self.index(self.rvalue(x), x)
            # a longer product, `sizeof` anywhere in it: `sizeof(double) * 2 * n`
            factors = _factors(c)
            for n, f in enumerate(factors):
                if _evaluate(f) == esize and f.kind.name in ("UNARY_EXPR", "CXX_UNARY_EXPR"):
                    rest = [self.index(self.rvalue(g), g) for g in factors[:n] + factors[n + 1 :]]
                    count = rest[0]
                    for v in rest[1:]:
                        count = self.emit(arith.MuliOp(count, v), size).results[0]
                    return count
        _unsupported(
            size,
            f"malloc size: write it as a product with sizeof(element), element size {esize}"
        )

    def mem_call(self, c) -> None:
        """`memcpy(dst, src, n * sizeof(T))`, `memmove` and `memset(dst, 0, n * sizeof(T))`:
        an element loop of loads and stores, which the AD differentiates like any other;
        views give their offsets. A memmove within one array (`memmove(x + 1, x, ...)`,
        which may overlap) copies through a temporary buffer, as C's "as if" copy."""
        name = c.spelling.removeprefix("__builtin_")
        args = list(c.get_arguments())
        if len(args) != 3:
            _unsupported(c, f"{name} with {len(args)} arguments")
        dst, dst_off = self.pointer(args[0])
        if dst.mixed():
            _unsupported(c, f"{name} of structs with integer fields")
        self.one_dimensional(dst, c)
        esize = dst.elem.get_size()
        count = self.element_count(args[2], esize)
        if name == "memset":
            if _evaluate(args[1]) != 0:
                _unsupported(args[1], "memset to a value other than 0")
            value = self.const(0, dst.ref.type.element_type, c)
            if dst_off is None:
                self.fill(dst.ref, count, value, c)
                return
            self.copy_loop(None, None, dst.ref, dst_off, count, c, value)
            return
        src, src_off = self.pointer(args[1])
        self.one_dimensional(src, c)
        if src.ref.type.element_type != dst.ref.type.element_type:
            _unsupported(c, f"{name} between arrays of different element types")
        if name == "memmove" and src.ref == dst.ref:
            elem = dst.ref.type.element_type
            tmp = self.emit(
                memref.AllocOp.get(elem, shape=[DYNAMIC_INDEX], dynamic_sizes=[count]), c
            ).results[0]
            self.copy_loop(src.ref, src_off, tmp, None, count, c)
            self.copy_loop(tmp, None, dst.ref, dst_off, count, c)
            self.emit(memref.DeallocOp.get(tmp), c)
            return
        self.copy_loop(src.ref, src_off, dst.ref, dst_off, count, c)

    def copy_loop(self, src, src_off, dst, dst_off, count, c, value=None) -> None:
        """`for i < count: dst[dst_off + i] = src[src_off + i]` (or `= value`)."""
        lb, step = self.const(0, INDEX, c), self.const(1, INDEX, c)
        body = Block(arg_types=[INDEX])
        outer = self.builder
        self.builder = Builder(InsertPoint.at_end(body))
        i = body.args[0]

        def at(off):
            return i if off is None else self.emit(arith.AddiOp(off, i), c).results[0]

        if src is not None:
            value = self.emit(memref.LoadOp.get(src, [at(src_off)]), c).results[0]
        self.emit(memref.StoreOp.get(value, dst, [at(dst_off)]), c)
        self.emit(scf.YieldOp(), c)
        self.builder = outer
        self.emit(scf.ForOp(lb, count, step, [], body), c)

    def fill(self, ref: SSAValue, count: SSAValue, value: SSAValue, c, row=None) -> None:
        lb, step = self.const(0, INDEX, c), self.const(1, INDEX, c)
        body = Block(arg_types=[INDEX])
        outer = self.builder
        self.builder = Builder(InsertPoint.at_end(body))
        at = [body.args[0]] if row is None else [row, body.args[0]]
        self.emit(memref.StoreOp.get(value, ref, at), c)
        self.emit(scf.YieldOp(), c)
        self.builder = outer
        self.emit(scf.ForOp(lb, count, step, [], body), c)

    # --- assignments and side effects

    def effect(self, e) -> SSAValue | None:
        """An expression evaluated for its effect (its value is returned, if any)."""
        c = _strip(e)
        k = c.kind.name
        if k == "CALL_EXPR" and c.spelling.removeprefix("__builtin_") in _MEM_CALLS:
            self.mem_call(c)
            return None
        if k == "CALL_EXPR" and c.spelling == "free":
            arg = list(c.get_arguments())[0]
            if self.is_row(arg):
                return None  # freed with the table
            buf = self.buffer(arg)
            self.emit(memref.DeallocOp.get(buf.ref), c)
            return None
        if k == "CALL_EXPR" and _is_entry(c.spelling):
            _unsupported(c, f"{ENZYME_ENTRY} inside a function that is itself translated")
        if _is_assert(c):
            self.unit.remarks.append(
                f"remark: {_where(c)}: assert in translated code is dropped (as with NDEBUG: "
                "its check has no derivative, and TapeFlow does not abort)\n"
            )
            return None
        if _is_output_call(c):
            self.unit.remarks.append(
                f"remark: {_where(c)}: {c.spelling} in translated code is dropped (it has "
                "no derivative)\n"
            )
            return None
        return self.rvalue(e, discard=True)

    def assign(self, target, value: SSAValue, c) -> SSAValue:
        """Stores `value` into the lvalue `target`; returns the value stored (C's)."""
        t = _strip(target)
        if (field := self.struct_field(t)) is not None:
            v = self.vals[field] = self.convert(value, t.type, c)
            return v
        if t.kind.name == "DECL_REF_EXPR":
            d = t.referenced
            if _key(d) in self.cells:
                return self.store_cell(self.cells[_key(d)], value, c)
            if _key(d) in self.bufs or _kind(d.type) == "POINTER":
                _unsupported(c, f"assigning the pointer '{d.spelling}' (only in its declaration)")
            if _key(d) not in self.vals:
                _unsupported(c, f"assigning the global '{d.spelling}'")
            v = self.convert(value, d.type, c)
            self.vals[_key(d)] = v
            return v
        buf, idx = self.access(t)
        v = self.convert(value, buf.elem, c)
        mem = self.to_memory(v, buf.ref.type, c)
        self.emit(memref.StoreOp.get(mem, buf.ref, idx), c)
        return v

    def store_cell(self, cell: _Buffer, value: SSAValue, c) -> SSAValue:
        """`g = value` for a scalar global `g` (a one-element memref)."""
        v = self.convert(value, cell.elem, c)
        mem = self.to_memory(v, cell.ref.type, c)
        self.emit(memref.StoreOp.get(mem, cell.ref, [self.const(0, INDEX, c)]), c)
        return v

    def read_lvalue(self, target) -> tuple[SSAValue, object]:
        t = _strip(target)
        if (field := self.struct_field(t)) is not None:
            return self.current(field, None, t), t.type
        if t.kind.name == "DECL_REF_EXPR":
            return self.variable(t), t.type
        buf, idx = self.access(t)
        return self.load(buf, idx, t), buf.elem

    # --- expressions

    def rvalue(self, e, discard: bool = False) -> SSAValue:
        k = e.kind.name
        kids = _children(e)
        if k == "PAREN_EXPR":
            return self.rvalue(kids[0], discard)
        if k in ("UNEXPOSED_EXPR", "CSTYLE_CAST_EXPR"):
            exprs = [x for x in kids if x.kind.is_expression()]
            if len(exprs) != 1:
                _unsupported(e, f"the expression '{self.text(e)}'")
            inner = exprs[0]
            if _is_buffer_type(e.type):
                _unsupported(e, "a pointer used as a value (index it instead)")
            folded = _evaluate(inner) if _is_float(e.type) and not _has_effects(inner) else None
            if folded is not None:  # `x * M` with `#define M 4`: one f64 constant, as written
                return self.const(folded, _scalar_type(e.type, e), e)
            return self.convert(self.rvalue(inner, discard), e.type, e)
        if k in ("INTEGER_LITERAL", "FLOATING_LITERAL", "CHARACTER_LITERAL", "UNARY_EXPR", "CXX_UNARY_EXPR"):
            v = _evaluate(e)
            if v is None:
                _unsupported(e, f"the expression '{self.text(e)}'")
            return self.const(v, _scalar_type(e.type, e), e)
        if k == "DECL_REF_EXPR":
            return self.variable(e)
        if k in ("ARRAY_SUBSCRIPT_EXPR", "MEMBER_REF_EXPR"):
            if (field := self.struct_field(e)) is not None:
                return self.current(field, None, e)
            buf, idx = self.access(e)
            return self.load(buf, idx, e)
        if k in ("BINARY_OPERATOR", "UNARY_OPERATOR") and _is_int(e.type) and _assigns(e) is None:
            folded = _evaluate(e)  # integer constant expressions (`2 * H`, `N - 1`) fold
            if isinstance(folded, int) and not _has_effects(e):
                return self.const(folded, INDEX, e)
        if k == "BINARY_OPERATOR":
            return self.binary(e, _binary_op(e), kids)
        if k == "COMPOUND_ASSIGNMENT_OPERATOR" and self.is_view(kids[0]):
            if _binary_op(e) not in ("+=", "-="):
                _unsupported(e, f"'{_binary_op(e)}' on a pointer")
            amount = self.index(self.rvalue(kids[1]), kids[1])
            return self.move_pointer(kids[0], e, amount=amount, minus=_binary_op(e) == "-=")
        if k == "COMPOUND_ASSIGNMENT_OPERATOR":
            op = _binary_op(e)[:-1]
            old, old_type = self.read_lvalue(kids[0])
            rhs = self.rvalue(kids[1])
            work = e.type if _is_float(old_type) or not _is_float(kids[1].type) else kids[1].type
            new = self.arith(op, self.convert(old, work, e), self.convert(rhs, work, e), work, e)
            return self.assign(kids[0], new, e)
        if k == "UNARY_OPERATOR":
            return self.unary(e, _unary_op(e), kids[0])
        if k == "CONDITIONAL_OPERATOR":
            return self.conditional(e, kids)
        if k == "CALL_EXPR":
            return self.call(e, discard)
        if k == "INIT_LIST_EXPR":
            _unsupported(e, "an initializer list here")
        _unsupported(e, f"the expression '{self.text(e)}' ({k.lower()})")

    def text(self, c) -> str:
        return " ".join(t.spelling for t in c.get_tokens())[:60]

    def variable(self, e) -> SSAValue:
        d = e.referenced
        if d is not None and d.kind.name == "ENUM_CONSTANT_DECL":
            return self.const(d.enum_value, INDEX, e)
        if d is not None and _key(d) in self.cells:
            return self.load(self.cells[_key(d)], [self.const(0, INDEX, e)], e)
        if d is None or _key(d) not in self.vals:
            if d is not None and _key(d) in self.bufs:
                _unsupported(e, f"the array '{d.spelling}' used as a value (index it)")
            if d is not None and d.kind.name == "FUNCTION_DECL":
                _unsupported(e, "function pointers")
            _unsupported(e, f"the variable '{e.spelling}' here")
        if _key(d) in self.views:
            _unsupported(e, f"the pointer '{d.spelling}' used as a value (index it)")
        v = self.vals[_key(d)]
        if isinstance(v, _Unset):
            v = self.const(0, _scalar_type(d.type, d), e)
            self.vals[_key(d)] = v
        if isinstance(v, _Stale):
            _unsupported(e, v.why)
        return v  # type: ignore[return-value]

    def buffer(self, e) -> _Buffer:
        c = _strip_casts(e)
        if c.kind.name == "DECL_REF_EXPR":
            d = c.referenced
            if d is not None and _key(d) in self.bufs:
                return self.bufs[_key(d)]
        if c.kind.name == "BINARY_OPERATOR":
            _unsupported(e, "pointer arithmetic (index the array instead)")
        if c.kind.name == "UNARY_OPERATOR" and _unary_op(c) == _ADDR_OF:
            self.address_refusal(c)
        if _is_null_pointer(e):
            _unsupported(e, "a null pointer as an array (arrays are assumed non-null)")
        _unsupported(e, f"'{self.text(e)}' as an array")

    def member(self, e) -> tuple[_Buffer, dict[str, SSAValue | None], object]:
        """(buffer, flat index of the place among the struct memory's floats `"f"` and
        integers `"i"` (the kinds the buffer has), C type) of a place inside a struct
        pointer's memory: `p->x`, `p[i].v[k]`, `(*p).x`, `p->inner.y`."""
        c = _strip(e)
        k = c.kind.name
        if k == "MEMBER_REF_EXPR":
            base = _strip(_children(c)[0])
            if _kind(base.type) == "POINTER":  # p->f
                buf, off = self.pointer(base)
                if buf.record is None:
                    _unsupported(c, f"the member access '{self.text(c)}'")
                record, at = base.type.get_pointee().get_canonical(), self.kinds(buf, off, c)
            else:  # s.f, with s itself a place in the memory
                buf, at, record = self.member(base)
            for kind, start in at.items():
                idx = self.const(_position(record, c.spelling, kind, c), INDEX, c)
                at[kind] = idx if start is None else self.index_op(arith.AddiOp, start, idx, c)
            return buf, at, c.type.get_canonical()
        if k == "ARRAY_SUBSCRIPT_EXPR":
            base, sub = _children(c)
            if _is_buffer_type(_strip(sub).type):
                base, sub = sub, base
            base = _strip(base)
            if base.kind.name == "MEMBER_REF_EXPR" or _kind(_pointee(base.type)) == "RECORD":
                if base.kind.name == "MEMBER_REF_EXPR":
                    buf, at, t = self.member(base)
                    elem = t.get_array_element_type().get_canonical()
                else:  # ps[i], with ps a struct pointer or a local array of structs
                    buf, off = self.pointer(base)
                    at, elem = self.kinds(buf, off, c), _pointee(base.type)
                strides = {kind: self.const(_count(elem, kind), INDEX, c) for kind in at}
                i = self.index(self.rvalue(sub), sub)
                for kind, stride in strides.items():
                    step = self.index_op(arith.MuliOp, i, stride, c)
                    if at[kind] is not None:
                        step = self.index_op(arith.AddiOp, at[kind], step, c)
                    at[kind] = step
                return buf, at, elem
        if k == "UNARY_OPERATOR" and _unary_op(c) == _DEREF:
            buf, off = self.pointer(_children(c)[0])
            if buf.record is not None:
                record = _strip(_children(c)[0]).type.get_pointee().get_canonical()
                return buf, self.kinds(buf, off, c), record
        _unsupported(c, f"'{self.text(c)}' as a place in a struct")

    def struct_offset(self, e, c) -> tuple[_Buffer, SSAValue]:
        """`&ps[i]` into an array of structs with integer fields: the view's offset in
        structs (each memref's index is it times the struct's count of that kind)."""
        base, sub = _children(_strip(e))
        if _is_buffer_type(_strip(sub).type):
            base, sub = sub, base
        buf, off = self.pointer(base)
        if buf.fields:
            _unsupported(c, _mixed_view(buf))
        i = self.index(self.rvalue(sub), sub)
        return buf, i if off is None else self.index_op(arith.AddiOp, off, i, c)

    def erase_unused(self, v: SSAValue) -> None:
        """Erases the unused index computation `v` of a struct field's other kind."""
        _erase_unused(v, {x for x in self.vals.values() if isinstance(x, SSAValue)})

    def pointer_field(self, c) -> _Buffer:
        """The array the pointer field `p->data` (`s->inner.data`, `ps[0].data`) points to:
        a memref argument of its own (its shadow, Enzyme's `dp->data`, follows it)."""
        buf, at, _ = self.member(c)
        n = _constant_int(at["p"]) if "p" in at and at["p"] is not None else None
        for v in at.values():
            if v is not None:
                self.erase_unused(v)
        if n is None or n >= len(buf.fields):
            _unsupported(
                c, f"the pointer field '{c.spelling}' of a struct in an array (only of the struct "
                "a parameter points to)"
            )
        return buf.fields[n]

    def kinds(self, buf: _Buffer, off: SSAValue | None, c) -> dict[str, SSAValue | None]:
        """The start of a struct place per memref kind the struct pointer has (`off`, a
        view's offset: in floats for a struct of floats, else in structs)."""
        if not buf.mixed():
            return {"f": off}
        kinds = "f" * buf.floats + "i" * (buf.ints is not None) + "p" * bool(buf.fields)
        if off is None:
            return dict.fromkeys(kinds)
        counts = {kind: self.const(_count(buf.record, kind), INDEX, c) for kind in kinds}
        return {kind: self.index_op(arith.MuliOp, off, n, c) for kind, n in counts.items()}

    def field_access(
        self, buf: _Buffer, at: dict[str, SSAValue | None], t, c
    ) -> tuple[_Buffer, SSAValue]:
        """The memref (as a buffer of `t`) and index of the scalar field of type `t` at
        `at`; the other kind's index computation, unused, is erased."""
        kind = _leaf_kind(t)
        if kind == "p":
            _unsupported(
                c, f"the pointer field '{c.spelling}' as a value (index it: only its elements "
                "are read and written)"
            )
        if kind is None or kind not in at:
            _unsupported(c, f"a whole '{t.spelling}' as a value (use its fields)")
        for other, v in at.items():
            if other != kind and v is not None:
                self.erase_unused(v)
        idx = at[kind] if at[kind] is not None else self.const(0, INDEX, c)
        if kind == "f":
            return buf, idx
        return _Buffer(buf.ints, t), idx  # type: ignore[arg-type]

    def memory_fields(self, buf: _Buffer, at, t, c) -> list[tuple[_Buffer, SSAValue]]:
        """(memref as a buffer, index) of each field of the struct of type `t` at `at` in
        a struct pointer's memory, in `_leaves` order."""
        seen = dict.fromkeys(at, 0)
        out = []
        for _, lt in _leaves(t):
            kind = _leaf_kind(lt)
            if kind not in at:
                _unsupported(c, f"a field of type '{lt.spelling}' in struct memory")
            n = self.const(seen[kind], INDEX, c)
            seen[kind] += 1
            start = at[kind]
            idx = n if start is None else self.index_op(arith.AddiOp, start, n, c)
            part = buf if kind == "f" else _Buffer(buf.ints, lt)  # type: ignore[arg-type]
            out.append((part, idx))
        for kind, v in at.items():
            if not seen[kind] and v is not None:
                self.erase_unused(v)
        return out

    # --- structs by value: one scalar per field (SROA), README "C kernels"

    def struct_parameter(self, p, group: Sequence[SSAValue]) -> bool:
        """Binds a struct parameter's IR arguments (its fields by value, or the memrefs of
        a pointer to a struct with integer fields); False for any other parameter."""
        t = p.type
        if _record(t) is not None:
            key = _key(p)
            self.structs[key] = _record(t)
            for (path, _), arg in zip(_leaves(t), group, strict=True):
                arg.name_hint = "_".join([p.spelling, *map(str, path)]) if p.spelling else None
                arg.location = self.unit._loc(p)
                self.vals[(key, path)] = arg  # type: ignore[index]
            return True
        if not _is_struct_pointer(t):
            return False
        record = _array_shape(t, p)[1].get_canonical()
        leaves = _leaves(record)
        scalar = next((lt for _, lt in leaves if _is_float(lt)), None)
        ints = any(_is_int(lt) for _, lt in leaves)
        names = [""] * (scalar is not None) + ["_ints"] * ints
        pointers = [(path, lt) for path, lt in leaves if lt.kind.name == "POINTER"]
        names += ["_" + "_".join(map(str, path)) for path, _ in pointers]
        for arg, suffix in zip(group, names, strict=True):
            arg.name_hint = f"{p.spelling}{suffix}" if p.spelling else None
            arg.location = self.unit._loc(p)
        fields = tuple(
            _Buffer(a, lt.get_pointee().get_canonical())
            for a, (_, lt) in zip(group[len(group) - len(pointers) :], pointers)
        )
        elem = scalar
        if elem is None and ints:
            elem = next(lt for _, lt in leaves if _is_int(lt))
        self.bufs[_key(p)] = _Buffer(
            group[0], elem, record, ints=group[int(scalar is not None)] if ints else None,
            fields=fields, floats=scalar is not None,
        )
        return True

    def struct_local(self, d, exprs: list) -> None:
        """`struct P p;`, `= {...}`, `= q`, `= make(...)`: one scalar per field."""
        t = _record(d.type)
        _value_types(t, d)
        key = _key(d)
        self.structs[key] = t
        if exprs:
            values = self.struct_value(exprs[-1])
        else:  # reading it before writing is undefined in C: zero
            values = [self.const(0, _scalar_type(lt, d), d) for _, lt in _leaves(t)]
        for (path, lt), v in zip(_leaves(t), values, strict=True):
            self.vals[(key, path)] = self.convert(v, lt, d)  # type: ignore[index]

    def struct_array(self, d, exprs: list) -> _Buffer:
        """A local array of structs `P vs[N]` (`= {...}` too): stack memrefs in the layout
        of a struct pointer, of dynamic type (`memref<?xf64>`, as a callee's parameter:
        no memref.cast)."""
        shape, elem = _array_shape(d.type, d)
        record = _record(elem)
        if len(shape) != 1 or shape[0] == DYNAMIC_INDEX or record is None:
            _unsupported(d, f"the local array '{d.spelling}' of structs (one constant dimension)")
        scalar, ints, pointers = _struct_layout(record, d)
        if pointers:
            _unsupported(d, f"a local array of '{elem.spelling}' (a struct with pointer fields)")
        refs = {}
        for kind, et in (("f", scalar), ("i", i64 if ints else None)):
            if et is not None:
                n = self.const(shape[0] * _count(record, kind), INDEX, d)
                op = memref.AllocaOp.get(et, shape=[DYNAMIC_INDEX], dynamic_sizes=[n])
                refs[kind] = self.emit(op, d).results[0]
                refs[kind].name_hint = d.spelling + ("_ints" if kind == "i" else "")
        leaves = [lt for _, lt in _leaves(record)]
        first = next(lt for lt in leaves if _leaf_kind(lt) == ("f" if scalar else "i"))
        if _record_scalar(record) is not None:  # floats only: as a struct pointer's
            buf = _Buffer(refs["f"], first, record)
        else:
            ref = refs.get("f", refs.get("i"))
            buf = _Buffer(ref, first, record, ints=refs.get("i"), floats="f" in refs)
        init = exprs[-1] if exprs and _strip(exprs[-1]).kind.name == "INIT_LIST_EXPR" else None
        if init is not None:
            values = self.struct_init(d.type, _strip(init))
            places = self.memory_fields(buf, self.kinds(buf, None, d), d.type, d)
            for (part, idx), v, (_, lt) in zip(places, values, _leaves(d.type), strict=True):
                mem = self.to_memory(self.convert(v, lt, d), part.ref.type, d)
                self.emit(memref.StoreOp.get(mem, part.ref, [idx]), d)
        return buf

    def struct_place(self, e) -> tuple[tuple[str, int], tuple, object] | None:
        """(struct key, field path, C type) when `e` is a struct by value or a place in
        one (`s`, `s.x`, `s.v[1]`, `s.a.y`), else None (e.g. `p->x`, in memory)."""
        c = _strip(e)
        steps: list = []
        while c.kind.name in ("MEMBER_REF_EXPR", "ARRAY_SUBSCRIPT_EXPR"):
            if c.kind.name == "MEMBER_REF_EXPR":
                base = _strip(_children(c)[0])
                if _kind(base.type) == "POINTER":
                    return None
                steps.append(c.spelling)
            else:
                base, sub = _children(c)
                if _is_buffer_type(_strip(sub).type):
                    base, sub = sub, base
                steps.append(sub)
                base = _strip(base)
            c = base
        d = c.referenced if c.kind.name == "DECL_REF_EXPR" else None
        if d is None or _key(d) not in self.structs:
            return None
        path = []
        for step in reversed(steps):
            if not isinstance(step, str):
                n = _evaluate(step)
                if not isinstance(n, int):
                    _unsupported(
                        step, "a subscript that is not a constant, into an array in a struct by "
                        "value"
                    )
                step = n
            path.append(step)
        return _key(d), tuple(path), _strip(e).type.get_canonical()

    def struct_field(self, e) -> tuple | None:
        """The `vals` key of the scalar field `e` of a struct by value, or None."""
        place = self.struct_place(e)
        if place is None:
            return None
        key, path, t = place
        if _leaf_kind(t) is None:
            _unsupported(e, f"a whole '{t.spelling}' as a value here (use its fields)")
        if (key, path) not in self.vals:
            _unsupported(e, f"'{self.text(e)}': an index outside the array in the struct")
        return (key, path)

    def struct_fields_assigned(self, c) -> list[tuple]:
        """The fields of a struct by value that `c` assigns (for loops and branches to
        carry): `s.x = `, `s.v[1] += `, `s.n++`, `s = q` (every field)."""
        if not self.structs:
            return []
        k = c.kind.name
        if k == "CALL_EXPR":  # g(&s) may write every field of s
            return [
                (key, (*prefix, *path))
                for key, prefix, t in filter(None, map(self.struct_address, c.get_arguments()))
                for path, _ in _leaves(t)
                if (key, (*prefix, *path)) in self.vals
            ]
        steps = (_PRE_INC, _PRE_DEC, _POST_INC, _POST_DEC)
        if not (
            k == "COMPOUND_ASSIGNMENT_OPERATOR"
            or (k == "BINARY_OPERATOR" and _binary_op(c) == "=")
            or (k == "UNARY_OPERATOR" and _unary_op(c) in steps)
        ):
            return []
        place = self.struct_place(_children(c)[0])
        if place is None:
            return []
        key, prefix, _ = place
        return [
            (key, path) for path, _ in _leaves(self.structs[key])
            if path[: len(prefix)] == prefix and (key, path) in self.vals
        ]

    def struct_value(self, e) -> list[SSAValue]:
        """The field values (in `_leaves` order) of a struct-valued expression: a struct
        by value, a call returning one, `{...}`, `(struct P){...}`, or a struct in a
        struct pointer's memory (`*p`, `ps[i]`, `p->inner`: loads)."""
        c = _strip(e)
        k = c.kind.name
        t = _record(c.type)
        if t is None:
            _refuse_union(c.type, c)
            _unsupported(e, f"'{self.text(e)}' as a struct")
        if k == "CALL_EXPR":
            values = self.call(c, False)
            if not isinstance(values, list):
                _unsupported(e, f"'{self.text(e)}' as a struct")
            return values
        if k == "INIT_LIST_EXPR":
            return self.struct_init(t, c)
        if k == "COMPOUND_LITERAL_EXPR":
            init = next(x for x in _children(c) if x.kind.name == "INIT_LIST_EXPR")
            return self.struct_init(t, init)
        if (place := self.struct_place(c)) is not None:
            key, prefix, _ = place
            return [self.current((key, (*prefix, *path)), None, c) for path, _ in _leaves(t)]
        if k in ("MEMBER_REF_EXPR", "ARRAY_SUBSCRIPT_EXPR", "UNARY_OPERATOR"):
            buf, at, _ = self.member(c)
            return [self.load(part, [idx], c) for part, idx in self.memory_fields(buf, at, t, c)]
        _unsupported(e, f"the struct expression '{self.text(e)}'")

    def struct_assign(self, target, src, e) -> None:
        """`s = q`, `*p = q`, `ps[i] = make(...)`: every field."""
        values = self.struct_value(src)
        t = _strip(target)
        leaves = _leaves(t.type)
        if (place := self.struct_place(t)) is not None:
            key, prefix, _ = place
            for (path, lt), v in zip(leaves, values, strict=True):
                self.vals[(key, (*prefix, *path))] = self.convert(v, lt, e)  # type: ignore[index]
            return None
        buf, at, rt = self.member(t)
        places = self.memory_fields(buf, at, rt, e)
        for (part, idx), v, (_, lt) in zip(places, values, leaves, strict=True):
            mem = self.to_memory(self.convert(v, lt, e), part.ref.type, e)
            self.emit(memref.StoreOp.get(mem, part.ref, [idx]), e)
        return None

    def struct_init(self, t, init) -> list[SSAValue]:
        """The fields of an initializer list for struct `t`: nested or elided braces,
        missing fields zero (as C); designated initializers are refused."""
        out: list[SSAValue] = []

        def zeros(t) -> None:
            out.extend(self.const(0, _scalar_type(lt, init), init) for _, lt in _leaves(t))

        def braced(t, lst) -> None:
            items = _children(lst)
            for x in items:
                if _kind(x.type) == "VOID":
                    _unsupported(x, "designated initializers ('.x = ', '[k] = ')")
            if _aggregate(t) is None:
                if items:
                    out.append(self.convert(self.rvalue(items[0]), t, items[0]))
                else:
                    zeros(t)
                return
            n = fill(t, items, 0)
            if n < len(items):
                _unsupported(items[n], "more initializers than fields")

        def fill(t, items: list, n: int) -> int:
            for sub in _aggregate(t):
                if n >= len(items):
                    zeros(sub)
                    continue
                x = _strip(items[n])
                if x.kind.name == "INIT_LIST_EXPR":
                    braced(sub, x)
                elif _record(sub) is not None and _record(x.type) is not None:
                    out.extend(self.struct_value(x))
                elif _aggregate(sub) is not None:  # brace elision: `{1, 2, 3}` for `{1, {2, 3}}`
                    n = fill(sub, items, n)
                    continue
                else:
                    out.append(self.convert(self.rvalue(items[n]), sub, items[n]))
                n += 1
            return n

        braced(t, init)
        return out

    def returned(self, e, s) -> list[SSAValue]:
        """The results of `return e` (a struct: its fields)."""
        rt = self.sig.cursor.result_type
        if _record(rt) is None:
            return [self.convert(self.rvalue(e), rt, s)]
        values = self.struct_value(e)
        return [self.convert(v, lt, s) for v, (_, lt) in zip(values, _leaves(rt), strict=True)]

    def struct_arguments(
        self, p, a, group: list[Attribute]
    ) -> tuple[list[SSAValue], SSAValue | None]:
        """A call's IR arguments for the struct parameter `p` (the fields of a struct by
        value, the memrefs of a pointer to a struct with integer fields) and, for a
        pointer into an array of them (`&ps[i]`), its offset in structs."""
        if _record(p.type) is not None:
            values = self.struct_value(a)
            leaves = _leaves(p.type)
            return [self.convert(v, lt, a) for v, (_, lt) in zip(values, leaves, strict=True)], None
        off = None
        if (place := self.struct_address(a)) is not None:
            refs = self.spill(place, group, a)
        else:
            buf, off = self.pointer(a)
            if not buf.mixed() and (off is not None or len(group) != 1):
                _unsupported(a, f"'{self.text(a)}' as a '{p.type.spelling}' argument")
            refs = buf.parts()
        out = []
        for ref, t in zip(refs, group, strict=True):
            if ref.type != t:
                ref = self.emit(memref.CastOp.get(ref, t), a).results[0]
            out.append(ref)
        return out, off

    def struct_address(self, a):
        """(key, path, type) of the struct by value `s` (or `s.inner`) in `&s`, or None."""
        c = _strip_casts(a)
        if c.kind.name != "UNARY_OPERATOR" or _unary_op(c) != _ADDR_OF:
            return None
        place = self.struct_place(_children(c)[0])
        return place if place is not None and _record(place[2]) is not None else None

    def spill(self, place, group: list[Attribute], a) -> list[SSAValue]:
        """`g(&s)` for a struct by value `s`: its fields stored into stack memrefs in the
        layout of a struct pointer (one per kind), read back into `s` after the call."""
        key, prefix, record = place
        if any(k[0] == key for k, _, _ in self.spilled):
            _unsupported(a, f"'{self.text(a)}' passed twice to one call")
        kinds = [kind for kind in "fi" if _count(record, kind)]
        refs = {}
        for kind, t in zip(kinds, group, strict=True):
            # the callee's own type (`memref<?xf64>`: a dynamic size), so no memref.cast;
            # one per struct and kind in the entry block, as `&x`'s cells (address_argument)
            cell = ((key, prefix, kind), t)
            if cell not in self.address_cells:
                n = self.const(_count(record, kind), INDEX, a)
                dynamic = [n] if t.get_shape()[0] == DYNAMIC_INDEX else []
                op = memref.AllocaOp.get(t.element_type, shape=t.get_shape(), dynamic_sizes=dynamic)
                op.location = self.unit._loc(a)
                self.address_cells[cell] = op  # type: ignore[index]
            refs[kind] = self.address_cells[cell].results[0]  # type: ignore[index]
        seen = dict.fromkeys(kinds, 0)
        for path, lt in _leaves(record):
            kind = _leaf_kind(lt)
            idx = self.const(seen[kind], INDEX, a)
            seen[kind] += 1
            field = (key, (*prefix, *path))
            v = self.to_memory(self.current(field, None, a), refs[kind].type, a)
            self.emit(memref.StoreOp.get(v, refs[kind], [idx]), a)
            self.spilled.append((field, refs[kind], idx))
        return [refs[kind] for kind in kinds]

    def reload_spilled(self, c) -> None:
        """After a call: the fields of the structs passed as `&s`, from their memrefs."""
        for field, ref, idx in self.spilled:
            self.vals[field] = self.load(_Buffer(ref, None), [idx], c)
        self.spilled = []

    def index_op(self, cls, a: SSAValue, b: SSAValue, c) -> SSAValue:
        """`a + b` or `a * b` on index values, folded when both are constants (struct
        field offsets)."""
        x, y = (_constant_int(v) for v in (a, b))
        if x is not None and y is not None:
            return self.const(x + y if cls is arith.AddiOp else x * y, INDEX, c)
        return self.emit(cls(a, b), c).results[0]

    def access(self, e) -> tuple[_Buffer, list[SSAValue]]:
        """The buffer and `index` subscripts of `a[i][j]` or `*p`."""
        if _in_struct(e):
            buf, at, t = self.member(e)
            part, idx = self.field_access(buf, at, t, e)
            return part, [idx]
        indices = []
        c = _strip(e)
        while c.kind.name == "ARRAY_SUBSCRIPT_EXPR":
            base, sub = _children(c)
            if _is_buffer_type(_strip(sub).type):
                base, sub = sub, base  # i[a] is a[i]
            indices.insert(0, sub)
            c = _strip(base)
        if not indices and c.kind.name == "UNARY_OPERATOR" and _unary_op(c) == _DEREF:
            buf, off = self.pointer(_children(c)[0])
            idx = [off if off is not None else self.const(0, INDEX, c)]
        else:
            buf, off = self.pointer(c)
            idx = [self.index(self.rvalue(i), i) for i in indices]
            if len(idx) > 1 and buf.ref.type.get_num_dims() == 1:
                idx = [self.flat_index(c, off, idx, e)]
                off = None
            if off is not None and idx:
                self.one_dimensional(buf, c)
                idx[0] = self.emit(arith.AddiOp(off, idx[0]), c).results[0]
        rank = buf.ref.type.get_num_dims()
        if len(idx) != rank:
            _unsupported(e, f"{len(idx)} subscript(s) on a {rank}-dimensional array (a row as a pointer)")
        return buf, idx

    def flat_index(self, base, off: SSAValue | None, idx: list[SSAValue], c) -> SSAValue:
        """`a[i][j]` on a flat view (`double a[][M]` given `x + k*M`): `off + i*M + j`, so
        the access is one of the caller's array, which the AD sees as is."""
        shape = _array_shape(base.type, base)[0]
        if len(idx) != len(shape) or DYNAMIC_INDEX in shape[1:]:
            _unsupported(c, f"{len(idx)} subscript(s) on a view of '{base.type.spelling}'")
        flat = off
        for n, i in enumerate(idx):
            stride = 1
            for extent in shape[n + 1 :]:
                stride *= extent
            term = self.index_op(arith.MuliOp, i, self.const(stride, INDEX, c), c) if stride != 1 else i
            flat = term if flat is None else self.emit(arith.AddiOp(flat, term), c).results[0]
        assert flat is not None
        return flat

    def load(self, buf: _Buffer, idx: list[SSAValue], c) -> SSAValue:
        v = self.emit(memref.LoadOp.get(buf.ref, idx), c).results[0]
        if isinstance(v.type, IntegerType):
            v = self.emit(arith.IndexCastOp(v, INDEX), c).results[0]
        return v

    def to_memory(self, v: SSAValue, mtype: MemRefType, c) -> SSAValue:
        if isinstance(mtype.element_type, IntegerType):
            return self.emit(arith.IndexCastOp(v, mtype.element_type), c).results[0]
        return v

    def index(self, v: SSAValue, c) -> SSAValue:
        if isinstance(v.type, IndexType):
            return v
        if v.type == i1:
            return self.convert(v, None, c, target=INDEX)
        _unsupported(c, "a non-integer subscript or bound")

    def convert(self, v: SSAValue, ctype, c, target: Attribute | None = None) -> SSAValue:
        """`v` as a value of C type `ctype` (or IR type `target`)."""
        to = target if target is not None else _scalar_type(ctype, c)
        src = v.type
        if src == to:
            return v
        if src == i1:
            ext = self.emit(arith.ExtUIOp(v, i64), c).results[0]
            return self.convert(ext, ctype, c, target=to) if to != i64 else ext
        if isinstance(src, (Float64Type, Float32Type)):
            if isinstance(to, (Float64Type, Float32Type)):
                op = arith.ExtFOp if to == f64 else arith.TruncFOp
                return self.emit(op(v, to), c).results[0]
            n = self.emit(arith.FPToSIOp(v, i64), c).results[0]
            return self.emit(arith.IndexCastOp(n, INDEX), c).results[0]
        if isinstance(src, IndexType):
            if isinstance(to, (Float64Type, Float32Type)):
                n = self.emit(arith.IndexCastOp(v, i64), c).results[0]
                return self.emit(arith.SIToFPOp(n, to), c).results[0]
        if isinstance(src, IntegerType) and isinstance(to, IndexType):
            return self.emit(arith.IndexCastOp(v, INDEX), c).results[0]
        _unsupported(c, f"converting {src} to {to}")

    def bound_pointer(self, e) -> bool:
        """`e` names a pointer bound to an array (a parameter, an allocation, a view):
        never null here, allocations being assumed to succeed (as `memref.alloc`)."""
        t = _strip_casts(e)
        return (
            t.kind.name == "DECL_REF_EXPR"
            and _kind(t.type) == "POINTER"
            and _key(t.referenced) in self.bufs
        )

    def null_test(self, e, op: str, a, b) -> SSAValue | None:
        """`p == NULL` / `p != NULL` (either order) of a bound pointer: false / true."""
        for p, q in ((a, b), (b, a)):
            if self.bound_pointer(p) and _is_null_pointer(q):
                return self.const(int(op == "!="), i1, e)
        return None

    def cond(self, e) -> SSAValue:
        """`e` as an i1 (C's 'non-zero'); a bound pointer (`if (p)`, `!p`) is true."""
        if self.bound_pointer(e):
            return self.const(1, i1, e)
        v = self.rvalue(e)
        if v.type == i1:
            return v
        if isinstance(v.type, IndexType):
            zero = self.const(0, INDEX, e)
            return self.emit(arith.CmpiOp(v, zero, "ne"), e).results[0]
        zero = self.const(0.0, v.type, e)
        return self.emit(arith.CmpfOp(v, zero, "une"), e).results[0]

    _CMPI = {"<": "slt", "<=": "sle", ">": "sgt", ">=": "sge", "==": "eq", "!=": "ne"}
    _CMPU = {"<": "ult", "<=": "ule", ">": "ugt", ">=": "uge", "==": "eq", "!=": "ne"}
    _CMPF = {"<": "olt", "<=": "ole", ">": "ogt", ">=": "oge", "==": "oeq", "!=": "une"}

    def binary(self, e, op: str, kids) -> SSAValue:
        a, b = kids
        if op == "=":
            if _strip_casts(b).kind.name == "CALL_EXPR" and _strip_casts(b).spelling in _ALLOCATORS:
                self.assign_allocation(a, _strip_casts(b), e)
                return None  # type: ignore[return-value]
            if self.is_view(a):
                return self.move_pointer(a, e, rhs=b)
            if _record(a.type) is not None:
                return self.struct_assign(a, b, e)
            if _kind(a.type) == "POINTER" and _strip(a).kind.name == "MEMBER_REF_EXPR":
                _unsupported(
                    e, f"assigning the pointer field '{_strip(a).spelling}' (the caller sets it)"
                )
            return self.assign(a, self.rvalue(b), e)
        if op == ",":
            self.effect(a)
            return self.rvalue(b)
        if op in ("&&", "||"):
            return self.logical(e, op, a, b)
        if op in ("==", "!=") and (v := self.null_test(e, op, a, b)) is not None:
            return v
        if op in self._CMPI:
            x, y = self.rvalue(a), self.rvalue(b)
            if x.type == i1 and y.type != i1:
                x = self.convert(x, None, e, target=y.type)
            if y.type == i1 and x.type != i1:
                y = self.convert(y, None, e, target=x.type)
            if isinstance(x.type, (Float64Type, Float32Type)):
                return self.emit(arith.CmpfOp(x, y, self._CMPF[op]), e).results[0]
            table = self._CMPU if _is_unsigned(_strip(a).type) else self._CMPI
            return self.emit(arith.CmpiOp(x, y, table[op]), e).results[0]
        x = self.convert(self.rvalue(a), e.type, e)
        y = self.convert(self.rvalue(b), e.type, e)
        return self.arith(op, x, y, e.type, e)

    def arith(self, op: str, x: SSAValue, y: SSAValue, ctype, e) -> SSAValue:
        if _is_float(ctype):
            ops = {"+": arith.AddfOp, "-": arith.SubfOp, "*": arith.MulfOp, "/": arith.DivfOp}
        elif _is_unsigned(ctype):
            ops = {"+": arith.AddiOp, "-": arith.SubiOp, "*": arith.MuliOp, "/": arith.DivUIOp,
                   "%": arith.RemUIOp, "&": arith.AndIOp, "|": arith.OrIOp, "^": arith.XOrIOp,
                   "<<": arith.ShLIOp, ">>": arith.ShRUIOp}  # fmt: skip
        else:
            ops = {"+": arith.AddiOp, "-": arith.SubiOp, "*": arith.MuliOp, "/": arith.DivSIOp,
                   "%": arith.RemSIOp, "&": arith.AndIOp, "|": arith.OrIOp, "^": arith.XOrIOp,
                   "<<": arith.ShLIOp, ">>": arith.ShRSIOp}  # fmt: skip
        if op not in ops:
            _unsupported(e, f"the operator '{op}' on '{ctype.spelling}'")
        return self.emit(ops[op](x, y), e).results[0]

    def logical(self, e, op: str, a, b) -> SSAValue:
        x = self.cond(a)
        if not _has_effects(b):
            y = self.cond(b)
            cls = arith.AndIOp if op == "&&" else arith.OrIOp
            return self.emit(cls(x, y), e).results[0]
        # Short-circuit: `b` only runs when it decides (it may read out of bounds otherwise).
        then = self.branch(lambda: [self.cond(b)], e)
        other = self.branch(lambda: [self.const(op == "||", i1, e)], e)
        regions = (then, other) if op == "&&" else (other, then)
        return self.emit(scf.IfOp(x, [i1], *regions), e).results[0]

    def branch(self, body: Callable[[], list[SSAValue]], c) -> Region:
        block = Block()
        outer = self.builder
        self.builder = Builder(InsertPoint.at_end(block))
        values = body()
        self.emit(scf.YieldOp(*values), c)
        self.builder = outer
        return Region(block)

    def unary(self, e, op: int, x) -> SSAValue:
        if op in (_PRE_INC, _PRE_DEC, _POST_INC, _POST_DEC) and self.is_view(x):
            return self.move_pointer(x, e, step=1 if op in (_PRE_INC, _POST_INC) else -1)
        if op in (_PRE_INC, _PRE_DEC, _POST_INC, _POST_DEC):
            old, ctype = self.read_lvalue(x)
            one = self.convert(self.const(1, INDEX, e), ctype, e)
            new = self.arith("+" if op in (_PRE_INC, _POST_INC) else "-", old, one, ctype, e)
            self.assign(x, new, e)
            return new if op in (_PRE_INC, _PRE_DEC) else old
        if op == _DEREF:
            buf, idx = self.access(e)
            return self.load(buf, idx, e)
        if op == _PLUS:
            return self.convert(self.rvalue(x), e.type, e)
        if op == _MINUS:
            v = self.convert(self.rvalue(x), e.type, e)
            if _is_float(e.type):
                return self.emit(arith.NegfOp(v), e).results[0]
            return self.emit(arith.SubiOp(self.const(0, INDEX, e), v), e).results[0]
        if op == _LNOT:
            v = self.cond(x)
            return self.emit(arith.XOrIOp(v, self.const(1, i1, e)), e).results[0]
        if op == _NOT:
            v = self.convert(self.rvalue(x), e.type, e)
            return self.emit(arith.XOrIOp(v, self.const(-1, INDEX, e)), e).results[0]
        if op == _ADDR_OF:
            self.address_refusal(e)
        _unsupported(e, f"the operator in '{self.text(e)}'")

    def conditional(self, e, kids) -> SSAValue:
        c, a, b = kids
        flag = self.cond(c)
        if not _has_effects(a) and not _has_effects(b):
            x = self.convert(self.rvalue(a), e.type, e)
            y = self.convert(self.rvalue(b), e.type, e)
            return self.emit(arith.SelectOp(flag, x, y), e).results[0]
        t = _scalar_type(e.type, e)
        then = self.branch(lambda: [self.convert(self.rvalue(a), e.type, e)], e)
        other = self.branch(lambda: [self.convert(self.rvalue(b), e.type, e)], e)
        return self.emit(scf.IfOp(flag, [t], then, other), e).results[0]

    def call(self, e, discard: bool) -> SSAValue:
        name = e.spelling
        args = list(e.get_arguments())
        if name == "posix_memalign":
            return self.posix_memalign(e)
        if name in self.unit.function_like:
            name = self.unit.function_like[name]
        elif self.unit.dropped(name):
            if not discard:
                _unsupported(e, f"the value of the void function '{name}'")
            return None  # type: ignore[return-value]
        if name in self.unit.signatures:
            sig = self.unit.signatures[name]
            values = []
            at: list[int] = []
            offsets: list[SSAValue] = []
            cells: list[tuple[SSAValue, object]] = []  # `&x` of scalars, copied back
            bufs: dict[int, _Buffer] = {}  # for `pointer_call`
            for n, (p, a, group) in enumerate(zip(sig.params, args, sig.groups, strict=True)):
                if (
                    _record(p.type) is not None or len(group) != 1 or _is_struct_pointer(p.type)
                    or self.struct_address(a) is not None
                ):
                    refs, off = self.struct_arguments(p, a, group)
                    values.extend(refs)
                    if off is not None:  # `ke(&ps[i])`: the variant taking i as well
                        at.append(n)
                        offsets.append(off)
                    continue
                t = group[0]
                if isinstance(t, MemRefType) and self.scalar_address(a) is not None:
                    values.append(self.address_argument(a, t, cells))
                    continue
                if isinstance(t, MemRefType):
                    buf, off = self.pointer(a)
                    bufs[n] = buf
                    if t.get_num_dims() > 1 and buf.ref.type.get_num_dims() == 1:
                        t = _flat(t)  # `g(x + i*M)` for `double a[][M]`: a flat view
                        off = off if off is not None else self.const(0, INDEX, a)
                    if off is not None:  # `g(a + k)`: the variant of g taking k as well
                        if t.get_num_dims() != 1:
                            _unsupported(a, "a pointer into a multi-dimensional array passed as an array parameter")
                        at.append(n)
                        offsets.append(off)
                    ref = buf.ref
                    if ref.type != t:
                        ref = self.emit(memref.CastOp.get(ref, t), a).results[0]
                    values.append(ref)
                else:
                    values.append(self.convert(self.rvalue(a), p.type, a))
            self.call_bufs = bufs
            if at:
                name = self.unit.view_variant(name, tuple(at))
            op = self.emit(func.CallOp(name, [*values, *offsets], sig.result_types), e)
            for ref, d in cells:
                zero = self.const(0, INDEX, e)
                self.vals[_key(d)] = self.convert(self.load(_Buffer(ref, d.type), [zero], e), d.type, e)
            self.reload_spilled(e)
            if _record(sig.cursor.result_type) is not None:  # a struct: its fields
                fields = list(op.results)
                if e.spelling in self.unit.inactive:
                    fields = [self.stop_derivative(v, e) for v in fields]
                return fields  # type: ignore[return-value]
            if not op.results:
                if not discard:
                    _unsupported(e, f"the value of the void function '{name}'")
                return None  # type: ignore[return-value]
            if e.spelling in self.unit.inactive:
                return self.stop_derivative(op.results[0], e)
            return op.results[0]
        if name.startswith("__builtin_"):  # Clang's spellings of <math.h> (and INFINITY)
            name = name[len("__builtin_"):]
            if name in _BUILTIN_CONSTANTS:
                return self.const(_BUILTIN_CONSTANTS[name], _scalar_type(e.type, e), e)
        maker = _MATH.get(name) or _MATH.get(name[:-1] if name.endswith("f") else "")
        if maker is None:
            if name in ("malloc", "calloc"):
                _unsupported(e, f"{name} outside a pointer declaration")
            _unsupported(e, f"call to '{name}' (not defined in this file, nor a <math.h> function "
                         "that tapeflow-cc translates)")
        ctype = e.type
        values = [self.convert(self.rvalue(a), ctype, a) for a in args]
        op = maker(*values)
        return self.emit(op, e).results[0]

    def scalar_address(self, a):
        """The scalar local (or parameter) `x` of an argument `&x`, or None."""
        c = _strip_casts(a)
        if c.kind.name != "UNARY_OPERATOR" or _unary_op(c) != _ADDR_OF:
            return None
        inner = _strip(_children(c)[0])
        d = inner.referenced if inner.kind.name == "DECL_REF_EXPR" else None
        if d is None or _key(d) not in self.vals or _key(d) in self.views:
            return None
        return d

    def address_refusal(self, e) -> NoReturn:
        d = self.scalar_address(e)
        if d is not None:
            _unsupported(
                e, f"'&{d.spelling}' other than as an argument of a call to a function of the file"
            )
        _unsupported(e, "taking an address ('&')")

    def address_argument(self, a, t: MemRefType, cells: list) -> SSAValue:
        """`&x` passed to a function taking a pointer: a one-element `memref.alloca` of
        the parameter's type (in the entry block: in a loop, the stack would grow each
        iteration) holding `x`, read back into `x` after the call (the callee reads and
        writes `x` through it, as an out-parameter). The scalar stays an SSA value
        elsewhere, so `&x` is only a call argument."""
        d = self.scalar_address(a)
        if t.element_type != _element_type(d.type, a):
            _unsupported(a, f"'&{d.spelling}' passed as a pointer to another type")
        if any(_key(d) == _key(other) for _, other in cells):
            _unsupported(a, f"'&{d.spelling}' passed twice to one call (they would alias)")
        if (_key(d), t) not in self.address_cells:  # one per variable, in the entry block
            one = self.const(1, INDEX, a)
            dynamic = [one] if t.get_shape()[0] == DYNAMIC_INDEX else []
            op = memref.AllocaOp.get(t.element_type, shape=list(t.get_shape()), dynamic_sizes=dynamic)
            op.location = self.unit._loc(a)
            op.results[0].name_hint = f"{d.spelling}_cell"
            self.address_cells[(_key(d), t)] = op
        ref = self.address_cells[(_key(d), t)].results[0]
        value = self.to_memory(self.convert(self.current(_key(d), d, a), d.type, a), t, a)
        self.emit(memref.StoreOp.get(value, ref, [self.const(0, INDEX, a)]), a)
        cells.append((ref, d))
        return ref

    def stop_derivative(self, v: SSAValue, c) -> SSAValue:
        """`v`, through a bitcast to an integer and back: the same bits, but the AD's
        activity analysis does not follow integers, so no derivative flows through it
        (the result of an `enzyme_inactive` function)."""
        if not isinstance(v.type, (Float64Type, Float32Type)):
            return v
        bits = self.emit(arith.BitcastOp(v, i64 if v.type == f64 else i32), c).results[0]
        return self.emit(arith.BitcastOp(bits, v.type), c).results[0]

    # --- control flow

    def carried(self, *trees) -> list[tuple[tuple[str, int], object]]:
        """Scalars defined before `trees` that `trees` assign, in first-assignment order."""
        out: dict = {}
        for tree in trees:
            if tree is None:
                continue
            for c in _walk(tree):
                for k in self.struct_fields_assigned(c):
                    out.setdefault(k, None)
                target = _assigned_target(c)
                if target is None:
                    continue
                d = target.referenced
                if d is not None and _key(d) in self.vals and _key(d) not in out:
                    out[_key(d)] = d
        for k, d in list(out.items()):
            if self.counter_only(d, trees):
                del out[k]  # dead before and after: a later loop's counter (`int i;` reused)
                self.vals[k] = _Stale(f"reading the counter '{d.spelling}' after its for loop")
        return list(out.items())

    def counter_only(self, d, trees) -> bool:
        """Whether `trees` use the variable `d` only as the counter of `scf.for` loops
        (their init assigns it, nothing else does, every read is inside them): its value
        before `trees` is dead, and after them it is a stale counter, so it is not carried."""
        loops = []
        for tree in trees:
            for c in _walk(tree) if tree is not None else ():
                if c.kind.name != "FOR_STMT":
                    continue
                init, cond, inc, body = _for_parts(c)
                canonical = None if _jumps(body)[0] else self.canonical_for(init, cond, inc, body)
                if canonical is not None and _key(canonical[0]) == _key(d):
                    if init.kind.name == "DECL_STMT" or _refers(canonical[1], d):
                        continue
                    loops.append((c, init))
        if not loops:
            return False
        inside = {(n.extent.start.offset, n.hash) for f, _ in loops for n in _walk(f)}
        for tree in trees:
            for c in _walk(tree) if tree is not None else ():
                if c.kind.name == "DECL_REF_EXPR" and c.referenced is not None:
                    if _key(c.referenced) == _key(d) and (c.extent.start.offset, c.hash) not in inside:
                        return False
        return True

    def current(self, key, decl, c) -> SSAValue:
        v = self.vals[key]
        if isinstance(v, _Unset):
            t = INDEX if key in self.views else _scalar_type(decl.type, decl)
            v = self.vals[key] = self.const(0, t, c)
        if isinstance(v, _Stale):
            _unsupported(c, v.why)
        return v  # type: ignore[return-value]

    def if_stmt(self, s) -> None:
        kids = _children(s)
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

    # --- switch: a chain of scf.if, one per case (README "C kernels")

    def switch_stmt(self, s) -> None:
        """`switch (v)` on an integer: `if (v == a || v == b) {...} else if ...`, the
        `default` arm last. Each case must end with `break` (or `return`, `continue`); a case that
        falls into the next, a `break` elsewhere in a case and case ranges are refused
        (structured control flow has no jump into the middle of another arm)."""
        cond, body = _children(s)[0], _children(s)[-1]
        if not _is_int(_strip(cond).type):
            _unsupported(cond, "switch on a non-integer value")
        value = self.index(self.rvalue(cond), cond)
        items = _children(body) if body.kind.name == "COMPOUND_STMT" else [body]
        groups: list[tuple[list[int], bool, list]] = []  # (labels, is default, statements)
        for t in items:
            if t.kind.name not in ("CASE_STMT", "DEFAULT_STMT"):
                if not groups:
                    _unsupported(t, "a statement before the first case of a switch")
                groups[-1][2].append(t)
                continue
            labels: list[int] = []
            default = False
            while t.kind.name in ("CASE_STMT", "DEFAULT_STMT"):
                kids = _children(t)
                if t.kind.name == "DEFAULT_STMT":
                    default = True
                else:
                    if len(kids) != 2:
                        _unsupported(t, "a case range ('case a ... b')")
                    label = _evaluate(kids[0])
                    if not isinstance(label, int):
                        _unsupported(kids[0], "a case label that is not an integer constant")
                    labels.append(label)
                t = kids[-1]
            groups.append((labels, default, [t]))
        arms: list[tuple[list[int], list]] = []
        fallback: list = []
        for n, (labels, default, stmts) in enumerate(groups):
            last = n == len(groups) - 1
            ends = bool(stmts) and stmts[-1].kind.name in ("BREAK_STMT", "RETURN_STMT", "CONTINUE_STMT")
            if not ends and not last:
                _unsupported(
                    groups[n + 1][2][0] if groups[n + 1][2] else s,
                    "falling through from one case of a switch into the next (end each "
                    "case with 'break')"
                )
            if stmts and stmts[-1].kind.name == "BREAK_STMT":
                stmts = stmts[:-1]
            for t in stmts:
                jump = _switch_break(t)
                if jump is not None:
                    _unsupported(jump, "'break' before the end of a case of a switch")
            if default:
                fallback = stmts
                if labels:  # `case 1: default:` is the default
                    continue
            else:
                arms.append((labels, stmts))
        self.switch_arms(value, arms, fallback, s)

    def switch_arms(self, value: SSAValue, arms: list, fallback: list, s) -> None:
        """`if (value in arms[0]) {...} else <the other arms>`, scalars and jump flags
        assigned in any arm its results (as `emit_if`)."""
        if not arms:
            self.block_items(fallback)
            return
        labels, stmts = arms[0]
        flag = None
        for label in labels:
            eq = self.emit(arith.CmpiOp(value, self.const(label, INDEX, s), "eq"), s).results[0]
            flag = eq if flag is None else self.emit(arith.OrIOp(flag, eq), s).results[0]
        every = [*stmts, *(t for _, ts in arms[1:] for t in ts), *fallback]
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

        then_region = arm(lambda: self.block_items(stmts))
        else_region = arm(lambda: self.switch_arms(value, arms[1:], fallback, s))
        self.vals = before
        types = [self.vals[k].type for k, _ in carried]  # type: ignore[union-attr]
        op = self.emit(scf.IfOp(flag, types, then_region, else_region), s)
        for (k, _), r in zip(carried, op.results):
            self.vals[k] = r

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
        init, cond, inc, body = _for_parts(s)
        canonical = None if _jumps(body)[0] else self.canonical_for(init, cond, inc, body)
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
            self.vals[_key(var)] = block.args[0]
            self.loop_iteration(loop, [body], s)
            values = [self.current(k, d, s) for k, d in carried]
            self.emit(scf.YieldOp(*values), s)
            return values

        self.loop_body(block, carried, run, s)
        op = self.emit(scf.ForOp(lb, ub, stepv, inits, block), s)
        for (k, _), r in zip(carried, op.results):
            self.vals[k] = r
        if _key(var) in self.vals:
            self.vals[_key(var)] = _Stale(f"reading the counter '{var.spelling}' after its for loop")

    def canonical_for(self, init, cond, inc, body):
        """(counter, lb, ub, inclusive, step) when the loop is an `scf.for`, else None."""
        if init is None or cond is None or inc is None:
            return None
        var, lb = None, None
        if init.kind.name == "DECL_STMT":
            decls = _children(init)
            if len(decls) == 1 and decls[0].kind.name == "VAR_DECL":
                exprs = [k for k in _children(decls[0]) if k.kind.is_expression()]
                if exprs:
                    var, lb = decls[0], exprs[-1]
        elif init.kind.name == "BINARY_OPERATOR" and _binary_op(init) == "=":
            lhs, rhs = _children(init)
            if _strip(lhs).kind.name == "DECL_REF_EXPR":
                var, lb = _strip(lhs).referenced, rhs
        if var is None or not _is_int(var.type):
            return None
        c = _strip(cond)
        if c.kind.name != "BINARY_OPERATOR" or _binary_op(c) not in ("<", "<=", "!="):
            return None
        lhs, ub = _children(c)
        if _strip(lhs).kind.name != "DECL_REF_EXPR" or _key(_strip(lhs).referenced) != _key(var):
            return None
        step = _step_of(inc, var)
        if step is None or step <= 0 or (_binary_op(c) == "!=" and step != 1):
            return None
        written = {_key(t.referenced) for t in map(_assigned_target, _walk(body)) if t is not None}
        if _key(var) in written:
            return None
        stored = _stored_buffers(body)
        for r in _walk(ub):
            if r.kind.name == "DECL_REF_EXPR" and r.referenced is not None:
                if _key(r.referenced) in written | stored | {_key(var)}:
                    return None
            if r.kind.name == "CALL_EXPR":
                return None
        return var, lb, ub, _binary_op(c) == "<=", step

    def loop_iteration(self, loop: _Loop | None, trees: list, c) -> None:
        """One iteration's statements, with `loop`'s jump flags in scope."""
        if loop is None:
            self.block_items(trees)
            return
        self.loops.append(loop)
        self.vals[loop.go] = self.const(1, i1, c)
        self.block_items(trees)
        self.loops.pop()
        del self.vals[loop.go]

    def loop_test(self, loop: _Loop | None, cond, loop_at=None) -> SSAValue:
        """The loop condition, and not broken yet (`running`, first: once a loop broke,
        its condition is not evaluated again, as in C)."""
        # `cond` None (`for (;;)`): true, until it breaks or returns
        if loop is None or loop.running is None:
            return self.const(1, i1, loop_at) if cond is None else self.cond(cond)
        running = self.vals[loop.running]
        if cond is None:
            return running
        if not _has_effects(cond):
            return self.emit(arith.AndIOp(running, self.cond(cond)), cond).results[0]
        then = self.branch(lambda: [self.cond(cond)], cond)
        other = self.branch(lambda: [self.const(0, i1, cond)], cond)
        return self.emit(scf.IfOp(running, [i1], then, other), cond).results[0]

    def while_loop(self, s, cond, trees: list, inc=None, test_first: bool = True) -> None:
        """`while (cond) { trees; inc }` as `scf.while`: the test in the before region, the
        iteration in the after region; with `test_first=False` (`do { } while`) both in
        the before region. `inc` (a for loop's increment) runs after `continue` but not
        after `break`."""
        if cond is not None and (bad := _assigns(cond)) is not None:
            _unsupported(bad, "an assignment or ++/-- in a loop condition")
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

    def do_while(self, s) -> None:
        body, cond = _children(s)
        self.while_loop(s, cond, [body], test_first=False)


# ---------------------------------------------------------------------------------------
# AST queries


def _constant_int(v: SSAValue) -> int | None:
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def _erase_unused(v: SSAValue, keep) -> None:
    """Erases the index arithmetic that computes `v` when nothing uses it (constants are
    shared, and values in `keep`, variables' values, stay)."""
    op = v.owner
    if v.first_use is not None or not isinstance(op, (arith.AddiOp, arith.MuliOp)):
        return
    if op.parent is None or v in keep:
        return
    operands = list(op.operands)
    op.detach()
    op.erase()
    for x in operands:
        _erase_unused(x, keep)


def _pointee(t):
    """The element type of a pointer or array type (else `t`)."""
    t = t.get_canonical()
    if t.kind.name == "POINTER":
        return t.get_pointee().get_canonical()
    if t.kind.name in ("CONSTANTARRAY", "INCOMPLETEARRAY", "VARIABLEARRAY"):
        return t.get_array_element_type().get_canonical()
    return t


def _aggregate(t) -> list | None:
    """The types of the sub-objects a brace initializer of `t` lists, or None (a scalar)."""
    t = t.get_canonical()
    if t.kind.name == "CONSTANTARRAY":
        return [t.get_array_element_type()] * t.get_array_size()
    if _record(t) is not None:
        return [f.type for f in t.get_fields()]
    return None


def _mixed_view(buf: _Buffer) -> str:
    return (
        f"a pointer into an array of '{buf.record.spelling}' (a struct with pointer fields)"
    )


def _is_struct_pointer(t) -> bool:
    """A pointer (or array) of structs with integer fields: several memrefs."""
    if not _is_buffer_type(t):
        return False
    elem = _array_shape(t, None)[1]
    return _record(elem) is not None and _record_scalar(elem) is None


def _in_struct(e) -> bool:
    """Whether the place `e` is a member of a struct (`p->x`, `p[i].v[k]`)."""
    c = _strip(e)
    while c.kind.name == "ARRAY_SUBSCRIPT_EXPR":
        c = _strip(_children(c)[0])
        if c.kind.name == "MEMBER_REF_EXPR" and _kind(c.type) == "POINTER":
            return False  # p->data[k]: in the array a pointer field points to
    return c.kind.name == "MEMBER_REF_EXPR"


def _void_element(scope, d):
    """The element type of the `void *` variable or parameter `d`: the pointee of every
    typed pointer the function `scope` converts it to (`(double *)p`, `double *x = p`),
    one type."""
    found = {}
    for c in _walk(scope):
        if c.kind.name not in ("CSTYLE_CAST_EXPR", "UNEXPOSED_EXPR") or _kind(c.type) != "POINTER":
            continue
        pointee = c.type.get_canonical().get_pointee()
        if _kind(pointee) == "VOID":
            continue
        ref = _strip_casts(c)
        if ref.kind.name == "DECL_REF_EXPR" and ref.referenced is not None:
            if _key(ref.referenced) == _key(d):
                found.setdefault(_element_type(pointee, c), pointee)
    if len(found) != 1:
        what = "never converted to a typed pointer" if not found else (
            "converted to pointers of different element types ("
            + ", ".join(sorted(t.spelling for t in found.values())) + ")"
        )
        _unsupported(d, f"the void * '{d.spelling}' is {what}")
    return next(iter(found.values())).get_canonical()


def _refers(tree, d) -> bool:
    """Whether the expression `tree` reads the variable `d`."""
    return any(
        c.kind.name == "DECL_REF_EXPR" and c.referenced is not None and _key(c.referenced) == _key(d)
        for c in _walk(tree)
    )


def _returns(tree) -> bool:
    return any(c.kind.name == "RETURN_STMT" for c in _walk(tree))


def _loop_returns(tree) -> bool:
    """Whether a loop in `tree` (or `tree`) contains a `return`."""
    loops = ("FOR_STMT", "WHILE_STMT", "DO_STMT")
    return any(c.kind.name in loops and _returns(c) for c in _walk(tree))


def _jumps(tree) -> tuple[bool, bool]:
    """(has `break`, has `continue`) of the innermost loop around `tree`: jumps inside a
    loop nested in `tree` belong to that loop, except `return`, a break of every loop."""
    brk = _returns(tree)
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
            cont = cont or _jumps(_children(c)[-1])[1]
        elif k not in ("FOR_STMT", "WHILE_STMT", "DO_STMT"):
            stack.extend(c.get_children())
    return brk, cont


def _switch_break(tree):
    """A `break` in `tree` that leaves the switch around it (not a nested loop's or
    switch's), or None."""
    if tree.kind.name == "BREAK_STMT":
        return tree
    if tree.kind.name in ("FOR_STMT", "WHILE_STMT", "DO_STMT", "SWITCH_STMT"):
        return None
    for k in tree.get_children():
        found = _switch_break(k)
        if found is not None:
            return found
    return None


def _assigned_target(c):
    """The variable reference `c` assigns (`x = `, `x += `, `x++`), or None."""
    k = c.kind.name
    if k == "BINARY_OPERATOR" and _binary_op(c) == "=" or k == "COMPOUND_ASSIGNMENT_OPERATOR":
        t = _strip(_children(c)[0])
    elif k == "UNARY_OPERATOR" and _unary_op(c) in (_PRE_INC, _PRE_DEC, _POST_INC, _POST_DEC):
        t = _strip(_children(c)[0])
    elif k == "UNARY_OPERATOR" and _unary_op(c) == _ADDR_OF:  # `f(&x)` may write x
        t = _strip(_children(c)[0])
    else:
        return None
    return t if t.kind.name == "DECL_REF_EXPR" else None


def _assigns(tree):
    """The first assignment or ++/-- in `tree`, or None."""
    for c in _walk(tree):
        k = c.kind.name
        if (
            k == "COMPOUND_ASSIGNMENT_OPERATOR"
            or (k == "BINARY_OPERATOR" and _binary_op(c) == "=")
            or (k == "UNARY_OPERATOR" and _unary_op(c) in (_PRE_INC, _PRE_DEC, _POST_INC, _POST_DEC))
        ):
            return c
    return None


def _has_effects(tree) -> bool:
    """Whether evaluating `tree` may read memory, call or assign (so it must not be hoisted)."""
    return _assigns(tree) is not None or any(
        c.kind.name in ("ARRAY_SUBSCRIPT_EXPR", "MEMBER_REF_EXPR")
        or (
            c.kind.name == "CALL_EXPR"
            and c.spelling.removeprefix("__builtin_") not in _BUILTIN_CONSTANTS
        )
        or (c.kind.name == "UNARY_OPERATOR" and _unary_op(c) == _DEREF)
        for c in _walk(tree)
    )


def _stored_buffers(tree) -> set:
    """Keys of the arrays `tree` may write: subscripted assignment targets, call arguments."""
    out = set()
    for c in _walk(tree):
        k = c.kind.name
        target = None
        if k == "BINARY_OPERATOR" and _binary_op(c) == "=" or k == "COMPOUND_ASSIGNMENT_OPERATOR":
            target = _strip(_children(c)[0])
        elif k == "UNARY_OPERATOR" and _unary_op(c) in (_PRE_INC, _PRE_DEC, _POST_INC, _POST_DEC):
            target = _strip(_children(c)[0])
        elif k == "CALL_EXPR":
            for a in c.get_arguments():
                b = _strip_casts(a)
                while b.kind.name in ("UNARY_OPERATOR", "MEMBER_REF_EXPR") and (
                    b.kind.name == "MEMBER_REF_EXPR" or _unary_op(b) == _ADDR_OF
                ):  # g(&s), g(&s.inner): s may change
                    b = _strip(_children(b)[0])
                if b.kind.name == "DECL_REF_EXPR" and b.referenced is not None:
                    out.add(_key(b.referenced))
        places = ("ARRAY_SUBSCRIPT_EXPR", "UNARY_OPERATOR", "MEMBER_REF_EXPR")
        while target is not None and target.kind.name in places:
            target = _strip(_children(target)[0])
        if target is not None and target.kind.name == "DECL_REF_EXPR" and target.referenced is not None:
            out.add(_key(target.referenced))
    return out


def _factors(c) -> list:
    """The operands of a product `a * b * c` (any nesting), left to right."""
    c = _strip(c)
    if c.kind.name == "BINARY_OPERATOR" and _binary_op(c) == "*":
        a, b = _children(c)
        return _factors(a) + _factors(b)
    return [c]


def _step_of(inc, var) -> int | None:
    c = _strip(inc)
    k = c.kind.name
    if k == "UNARY_OPERATOR" and _unary_op(c) in (_PRE_INC, _POST_INC):
        t = _strip(_children(c)[0])
        return 1 if t.kind.name == "DECL_REF_EXPR" and _key(t.referenced) == _key(var) else None
    if k == "COMPOUND_ASSIGNMENT_OPERATOR" and _binary_op(c) == "+=":
        t, amount = _children(c)
        t = _strip(t)
        if t.kind.name == "DECL_REF_EXPR" and _key(t.referenced) == _key(var):
            v = _evaluate(_strip(amount))
            return v if isinstance(v, int) else None
    return None


def _for_parts(s):
    """(init, cond, inc, body) of a `for`; libclang omits the absent ones, so place the
    present ones in the header's non-empty parts, read from its tokens (in a `for` from a
    macro the tokens are the macro's and the children's offsets are where it expands, so
    the two cannot be compared)."""
    kids = _children(s)
    body = kids[-1]
    header = kids[:-1]
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
        _unsupported(s, "a for loop whose header parts come from macros that expand to nothing")
    parts: list = [None, None, None]
    for n, k in zip(present, header):
        parts[n] = k
    return parts[0], parts[1], parts[2], body


def _max(a: SSAValue, b: SSAValue) -> Operation:
    return arith.MaxnumfOp(a, b)


def _min(a: SSAValue, b: SSAValue) -> Operation:
    return arith.MinnumfOp(a, b)


# `INFINITY`, `HUGE_VAL` and `NAN` expand to these builtins.
_BUILTIN_CONSTANTS = {
    "inf": float("inf"), "inff": float("inf"), "huge_val": float("inf"),
    "huge_valf": float("inf"), "nan": float("nan"), "nanf": float("nan"),
}  # fmt: skip
_ARITY = {"pow": 2, "atan2": 2, "copysign": 2, "fma": 3, "fmax": 2, "fmin": 2}
_MATH: dict[str, Callable[..., Operation]] = {
    "sin": math.SinOp, "cos": math.CosOp, "tan": math.TanOp, "asin": math.AsinOp,
    "acos": math.AcosOp, "atan": math.AtanOp, "sinh": math.SinhOp, "cosh": math.CoshOp,
    "tanh": math.TanhOp, "asinh": math.AsinhOp, "acosh": math.AcoshOp, "atanh": math.AtanhOp,
    "exp": math.ExpOp, "exp2": math.Exp2Op, "expm1": math.ExpM1Op, "log": math.LogOp,
    "log2": math.Log2Op, "log10": math.Log10Op, "log1p": math.Log1pOp, "sqrt": math.SqrtOp,
    "cbrt": math.CbrtOp, "erf": math.ErfOp, "fabs": math.AbsFOp, "floor": math.FloorOp,
    "ceil": math.CeilOp, "trunc": math.TruncOp, "round": math.RoundOp,
    "pow": math.PowFOp, "atan2": math.Atan2Op, "copysign": math.CopySignOp,
    "fma": math.FmaOp, "fmax": _max, "fmin": _min,
}  # fmt: skip


# `-D`/`-I` of the tool that runs (tapeflow-opt/run/exec/sim take a `.c` file): applied to
# every C file it compiles, before the caller's own arguments.
_TOOL_CLANG_ARGS: list[str] = []


def add_c_arguments(parser, what: str = "a .c input") -> None:
    """`-D NAME[=V]` and `-I DIR` on a tool's argparse parser (for `what`)."""
    parser.add_argument("-D", dest="c_defines", action="append", default=[], metavar="NAME[=V]",
                        help=f"C preprocessor definition for {what} (repeatable)")
    parser.add_argument("-I", dest="c_includes", action="append", default=[], metavar="DIR",
                        help=f"C include directory for {what} (repeatable)")


def c_arguments(args) -> list[str]:
    """The parsed `-D`/`-I` (`add_c_arguments`) as Clang arguments."""
    return [
        *(f"-D{d}" for d in getattr(args, "c_defines", []) or []),
        *(f"-I{i}" for i in getattr(args, "c_includes", []) or []),
    ]


def use_c_arguments(args) -> list[str]:
    """Makes the parsed `-D`/`-I` apply to every C file compiled from now on."""
    _TOOL_CLANG_ARGS[:] = c_arguments(args)
    return list(_TOOL_CLANG_ARGS)


def compile_c(
    text: str,
    name: str,
    clang_args: Sequence[str] = (),
    functions: Sequence[str] = (),
) -> ModuleOp:
    """The module for C source `text` (file `name`); errors are `ToolError`s. Its remarks
    go to stderr once it compiles."""
    unit = CFrontend(text, name, [*_TOOL_CLANG_ARGS, *clang_args], functions)
    module = unit.compile()
    module.verify()
    sys.stderr.write("".join(unit.remarks))
    return module
