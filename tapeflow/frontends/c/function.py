"""The state of one function being translated (`FunctionState`): what each C variable is
now (an SSA value, a `Buffer`, unset or stale), the loops' jump flags, and the two
emission helpers every part of the builder uses (`emit`, `const`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import Float32Type, Float64Type, FloatAttr, IntegerAttr
from xdsl.ir import Attribute, Block, Operation, SSAValue

from .clang import children, decl_key, strip, strip_casts, unsupported, walk
from .types import element_type, type_kind


@dataclass
class Buffer:
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
    fields: tuple[Buffer, ...] = ()
    floats: bool = True
    # a row of a 2-D memref as a one-dimensional array (`double *r = *pp;`, `pp[k]`):
    # the row's index, put before each subscript (pointers.row_view)
    row: SSAValue | None = None

    def mixed(self) -> bool:
        """A struct pointer of more than one memref (or not of floats)."""
        return self.ints is not None or bool(self.fields) or not self.floats

    def parts(self) -> list[SSAValue]:
        """The memrefs a struct pointer is passed as (README "C kernels")."""
        ints = [] if self.ints is None else [self.ints]
        return [self.ref] * self.floats + ints + [f.ref for f in self.fields]


class Unset:
    """A scalar declared without an initializer (reading it is undefined in C)."""


@dataclass
class Stale:
    """A variable whose value is not known here (a counter after the loop around its for
    loop): reading it is refused with `why`."""

    why: str


@dataclass
class Final:
    """A counted loop's counter after the loop: `value()` emits its final value where it
    is read (the loop's bounds dominate every later read), so an unread one costs nothing."""

    value: Callable[[], SSAValue]


@dataclass
class Loop:
    """The i1 flags of a loop with `break`/`continue`: `go` is false from a jump to the
    end of the current iteration, `running` (loops with `break`) false once it broke."""

    go: tuple[str, int]
    running: tuple[str, int] | None


@dataclass
class Function:
    """What one C function becomes."""

    cursor: object
    name: str
    params: list[object]
    arg_types: list[Attribute]
    result_types: list[Attribute]
    # each parameter's IR arguments (several for structs, README "C kernels")
    groups: list[list[Attribute]] = None  # type: ignore[assignment]


def constant_int(v: SSAValue) -> int | None:
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def erase_unused_arith(v: SSAValue, keep) -> None:
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
        erase_unused_arith(x, keep)


def mixed_view(buf: Buffer) -> str:
    return (
        f"a pointer into an array of '{buf.record.spelling}' (a struct with pointer fields)"
    )


def in_struct(e) -> bool:
    """Whether the place `e` is a member of a struct (`p->x`, `p[i].v[k]`)."""
    c = strip(e)
    while c.kind.name == "ARRAY_SUBSCRIPT_EXPR":
        c = strip(children(c)[0])
        if c.kind.name == "MEMBER_REF_EXPR" and type_kind(c.type) == "POINTER":
            return False  # p->data[k]: in the array a pointer field points to
    return c.kind.name == "MEMBER_REF_EXPR"


def void_element_type(scope, d):
    """The element type of the `void *` variable or parameter `d`: the pointee of every
    typed pointer the function `scope` converts it to (`(double *)p`, `double *x = p`),
    one type."""
    found = {}
    for c in walk(scope):
        if c.kind.name not in ("CSTYLE_CAST_EXPR", "UNEXPOSED_EXPR"):
            continue
        if type_kind(c.type) != "POINTER":
            continue
        pointee = c.type.get_canonical().get_pointee()
        if type_kind(pointee) == "VOID":
            continue
        ref = strip_casts(c)
        if ref.kind.name == "DECL_REF_EXPR" and ref.referenced is not None:
            if decl_key(ref.referenced) == decl_key(d):
                found.setdefault(element_type(pointee, c), pointee)
    if len(found) != 1:
        what = "never converted to a typed pointer" if not found else (
            "converted to pointers of different element types ("
            + ", ".join(sorted(t.spelling for t in found.values())) + ")"
        )
        unsupported(d, f"the void * '{d.spelling}' is {what}")
    return next(iter(found.values())).get_canonical()


class FunctionState:
    """What the parts of a function's builder share: `unit` (the file's `CFrontend`), the
    C signature, and `vals`, which maps each scalar variable to its current SSA value."""

    def __init__(
        self, unit, sig: Function, views: tuple[tuple[int, ...], ...] = (),
        name: str | None = None, offsets_at: int | None = None,
    ):
        self.unit = unit
        self.sig = sig
        # parameters that are views, one offset per group (a pointer and its shadow share
        # one in a custom derivative's variant); the offsets come after the first
        # `offsets_at` parameters, last by default
        self.view_params = views
        self.offsets_at = len(sig.params) if offsets_at is None else offsets_at
        self.name = name or sig.name
        self.vals: dict[tuple[str, int], object] = {}
        self.bufs: dict[tuple[str, int], Buffer] = {}
        self.constants: dict[tuple[Attribute, str], arith.ConstantOp] = {}
        self.loops: list[Loop] = []
        self.loop_count = 0
        # (returned flag, returned value) keys, for a function with an early `return`
        self.ret: tuple[tuple[str, int], tuple[str, int] | None] | None = None
        # pointer variables that point into another array: their element offset (an
        # index) is the scalar `vals[key]`, so loops and branches carry it
        self.views: set[tuple[str, int]] = set()
        # scalar mutable globals: one-element memrefs, loaded and stored at each use
        self.cells: dict[tuple[str, int], Buffer] = {}
        # `&x` call arguments: x's one-element alloca (per parameter type), see build
        # and the homes of locals a pointer points to, string literals (pointers.py)
        self.address_cells: dict[tuple[object, object], Operation] = {}
        self.row_tables: set[tuple[str, int]] = set()  # local `T **` tables of rows
        # `p = realloc(p, ...)` calls in counted loops, sized before the loop (memory.py)
        self.grown: set[int] = set()
        # local arrays of pointers whose rows are not allocated yet (memory.py)
        self.pointer_arrays: dict[tuple[str, int], object] = {}
        # structs by value (parameters and locals): their record type; field `path` of
        # the struct `key` is the scalar `vals[(key, path)]` (SROA)
        self.structs: dict[tuple[str, int], object] = {}
        # pointers to one malloc'ed struct (`T *p = malloc(sizeof(T))`): structs by value
        # as the others, `p->f` is `s.f` (`homes` has the block of its malloc)
        self.boxes: set[tuple[str, int]] = set()
        # local (and malloc'ed) structs with pointer fields: the block declaring them,
        # whose top level binds those fields
        self.homes: dict[tuple[str, int], Block] = {}
        # local unions of same-size scalars: their storage field's C type; the union is
        # the one scalar `vals[(key, ())]` (unions.py)
        self.unions: dict[tuple[str, int], object] = {}
        # fields of structs by value passed as `&s` to the call being emitted: (key,
        # stack memref, index), read back after it
        self.spilled: list[tuple[object, SSAValue, SSAValue]] = []
        # loops under an unroll pragma (by their offset): their `tapeflow.unroll` value
        self.unroll_hints: dict[int, Attribute] = {}
        self.builder: Builder

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
