"""C types as IR types: scalars (`double` -> f64, every integer -> index), arrays and
pointers as memrefs (integers keep their C width in memory, `char` i8 to `long` i64),
and the layout of structs (a pointer to a struct is one memref per kind of field, a
struct by value one scalar per field).
"""

from __future__ import annotations

from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, MemRefType, f32, f64, i8, i16, i32, i64
from xdsl.ir import Attribute

from .clang import unsupported


INDEX = IndexType()
_INT_KINDS = {
    "BOOL", "CHAR_U", "UCHAR", "CHAR_S", "SCHAR", "SHORT", "USHORT", "INT", "UINT", "LONG",
    "ULONG", "LONGLONG", "ULONGLONG",
}  # fmt: skip


_UNSIGNED_KINDS = {"BOOL", "CHAR_U", "UCHAR", "USHORT", "UINT", "ULONG", "ULONGLONG"}


def type_kind(t) -> str:
    return t.get_canonical().kind.name


def is_float(t) -> bool:
    return type_kind(t) in ("DOUBLE", "FLOAT")


def is_int(t) -> bool:
    return type_kind(t) in _INT_KINDS or type_kind(t) == "ENUM"


def is_unsigned(t) -> bool:
    return type_kind(t) in _UNSIGNED_KINDS


def scalar_type(t, c) -> Attribute:
    """The IR type of a C scalar value (integers are `index`)."""
    kind = type_kind(t)
    if kind == "DOUBLE":
        return f64
    if kind == "FLOAT":
        return f32
    if is_int(t) or is_function_pointer(t):  # a function pointer: its number (fnptrs.py)
        return INDEX
    unsupported(c, f"values of type '{t.spelling}'")


def element_type(t, c) -> Attribute:
    """The IR type of a C scalar stored in memory (integers keep their width)."""
    kind = type_kind(t)
    if kind in ("DOUBLE", "FLOAT"):
        return scalar_type(t, c)
    if kind in ("BOOL", "CHAR_U", "UCHAR", "CHAR_S", "SCHAR"):
        return i8
    if kind in ("SHORT", "USHORT"):
        return i16
    if kind in ("INT", "UINT", "ENUM"):
        return i32
    if kind in ("LONG", "ULONG", "LONGLONG", "ULONGLONG"):
        return i64
    unsupported(c, f"arrays of '{t.spelling}'")


def array_shape(t, c) -> tuple[list[int], object]:
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
            unsupported(c, "pointers to pointers after an array dimension")
        else:
            return shape, t
        first = first and kind == "POINTER"


def is_buffer_type(t) -> bool:
    kinds = ("POINTER", "CONSTANTARRAY", "INCOMPLETEARRAY", "VARIABLEARRAY")
    return type_kind(t) in kinds and not is_function_pointer(t)


def is_function_pointer(t) -> bool:
    t = t.get_canonical()
    return t.kind.name == "POINTER" and t.get_pointee().get_canonical().kind.name in (
        "FUNCTIONPROTO", "FUNCTIONNOPROTO")


def holds_functions(t) -> bool:
    """A function pointer or an array (of arrays) of them."""
    t = t.get_canonical()
    while t.kind.name in ("CONSTANTARRAY", "INCOMPLETEARRAY"):
        t = t.get_array_element_type().get_canonical()
    return is_function_pointer(t)


# The host objects of Enzyme's checkpointing schemes (<enzyme/checkpoint.h>): a pointer to
# one is no IR argument and no struct field (checkpoint.py).
OPAQUE = ("EnzymeCheckpointScheme", "EnzymeCkptConfig", "EnzymeCkptStats")


def is_opaque(t) -> bool:
    """A pointer to a scheme, its configuration or its statistics (`OPAQUE`)."""
    t = t.get_canonical()
    if t.kind.name != "POINTER":
        return False
    elem = t.get_pointee().get_canonical()
    return elem.kind.name == "RECORD" and elem.get_declaration().spelling in OPAQUE


def record_scalar(t):
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
        inner = record_scalar(ft) if ft.kind.name == "RECORD" else ft
        if inner is None or inner.kind.name not in ("DOUBLE", "FLOAT"):
            return None
        if found is not None and inner.kind != found.kind:
            return None
        found = inner
    return found


def as_struct(t):
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


def refuse_union(t, c) -> None:
    if (u := _union_in(t)) is not None:
        name = "(unnamed)" if "(" in u.spelling else f"'{u.spelling}'"
        unsupported(c, f"union {name} (its fields share memory; use a struct)")


def scalar_leaves(t, path: tuple = ()) -> list[tuple[tuple, object]]:
    """The scalars a struct (or array) type is made of, in declaration order: (path of
    field names and array indices, C type). A struct value is one SSA value per leaf."""
    t = t.get_canonical()
    if t.kind.name == "CONSTANTARRAY":
        e = t.get_array_element_type()
        return [leaf for n in range(t.get_array_size()) for leaf in scalar_leaves(e, (*path, n))]
    if t.kind.name == "RECORD":
        return [leaf for f in t.get_fields() for leaf in scalar_leaves(f.type, (*path, f.spelling))]
    return [(path, t)]


def leaf_kind(t) -> str | None:
    """The memref a struct field lives in: "f" its floats, "i" its integers, "p" (a
    pointer field) its own."""
    if is_float(t):
        return "f"
    if is_int(t):
        return "i"
    return "p" if t.get_canonical().kind.name == "POINTER" and not is_opaque(t) else None


def count_scalars(t, kind: str) -> int:
    """How many `kind` scalars a value of type `t` holds."""
    t = t.get_canonical()
    if t.kind.name == "CONSTANTARRAY":
        return t.get_array_size() * count_scalars(t.get_array_element_type(), kind)
    if t.kind.name == "RECORD":
        return sum(count_scalars(f.type, kind) for f in t.get_fields())
    return int(leaf_kind(t) == kind)


def field_position(record, name: str, kind: str, c) -> int:
    """Where field `name` of `record` starts among the struct's `kind` scalars."""
    n = 0
    for f in record.get_fields():
        if f.spelling == name:
            return n
        n += count_scalars(f.type, kind)
    unsupported(c, f"the field '{name}' of '{record.spelling}' (an anonymous member)")


def struct_layout(t, c) -> tuple[Attribute | None, bool, list[Attribute]]:
    """(float type or None, has integers, element type of each pointer field) of a
    struct a pointer parameter points to: its float fields (all of one type) are one
    memref, its integer fields an `i64` one, each pointer field (to floats or integers)
    a memref of its own."""
    floats: set[str] = set()
    ints = False
    pointers = []
    for path, lt in scalar_leaves(t):
        pointee = lt.get_pointee().get_canonical() if lt.kind.name == "POINTER" else None
        if is_opaque(lt):
            continue  # a checkpointing scheme's object: no memref, never read
        if is_float(lt):
            floats.add(type_kind(lt))
        elif is_int(lt):
            ints = True
        elif pointee is not None and (is_float(pointee) or is_int(pointee)):
            pointers.append(element_type(pointee, c))
        else:
            field = ".".join(str(x) for x in path)
            unsupported(
                c, f"the field '{field}' of type '{lt.spelling}' in '{t.spelling}' (struct "
                "pointers hold floats, integers and pointers to them)"
            )
    if len(floats) > 1:
        unsupported(c, f"'{t.spelling}' has both float and double fields")
    return (f64 if "DOUBLE" in floats else f32) if floats else None, ints, pointers


def memref_type(t, c) -> MemRefType:
    refuse_union(t, c)
    shape, elem = array_shape(t, c)
    if type_kind(elem) in ("FUNCTIONPROTO", "FUNCTIONNOPROTO"):
        unsupported(c, "function pointers")
    if type_kind(elem) in ("RECORD",):
        scalar = record_scalar(elem)
        if scalar is None or len(shape) != 1:
            unsupported(
                c,
                f"arrays of '{elem.spelling}' (structs and unions; only pointers to structs of "
                "float fields)"
            )
        n = elem.get_size() // scalar.get_size()
        size = DYNAMIC_INDEX if shape[0] == DYNAMIC_INDEX else shape[0] * n
        return MemRefType(element_type(scalar, c), [size])
    return MemRefType(element_type(elem, c), shape)


def flat_memref(t: MemRefType) -> MemRefType:
    """The one-dimensional memref a view of a multi-dimensional array parameter is."""
    return MemRefType(t.element_type, [DYNAMIC_INDEX])


def value_types(t, c) -> list[Attribute]:
    """The IR types of a C value: a struct by value is one scalar per field."""
    if as_struct(t) is None:
        return [scalar_type(t, c)]
    out = []
    for path, lt in scalar_leaves(t):
        if not (is_float(lt) or is_int(lt)):
            field = ".".join(str(x) for x in path)
            unsupported(c, f"the field '{field}' of type '{lt.spelling}' in a struct by value")
        out.append(scalar_type(lt, c))
    return out


def pointee(t):
    """The element type of a pointer or array type (else `t`)."""
    t = t.get_canonical()
    if t.kind.name == "POINTER":
        return t.get_pointee().get_canonical()
    if t.kind.name in ("CONSTANTARRAY", "INCOMPLETEARRAY", "VARIABLEARRAY"):
        return t.get_array_element_type().get_canonical()
    return t


def aggregate(t) -> list | None:
    """The types of the sub-objects a brace initializer of `t` lists, or None (a scalar)."""
    t = t.get_canonical()
    if t.kind.name == "CONSTANTARRAY":
        return [t.get_array_element_type()] * t.get_array_size()
    if as_struct(t) is not None:
        return [f.type for f in t.get_fields()]
    return None


def is_struct_pointer(t) -> bool:
    """A pointer (or array) of structs with integer fields: several memrefs."""
    if not is_buffer_type(t):
        return False
    elem = array_shape(t, None)[1]
    return as_struct(elem) is not None and record_scalar(elem) is None
