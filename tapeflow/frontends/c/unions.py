"""Local unions of same-size scalars (`union { double d; uint64_t u; } v;`): one SSA value,
the last one written, kept as the union's storage field (its first float field, else its
first field); reading another field reinterprets the bits (`arith.bitcast` through an
integer of the size), so no derivative flows through an integer view. Any other union
(a pointer to one, one in a struct or an array, fields of different sizes or not scalars,
the whole union as a value) stays refused (`types.refuse_union`).
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, i64
from xdsl.ir import SSAValue

from .clang import decl_key, strip, unsupported
from .function import FunctionState
from .types import is_float, is_int, is_unsigned, scalar_type


def scalar_union(t):
    """The canonical type of `t` when it is a union of scalars of one size, else None."""
    t = t.get_canonical()
    if t.kind.name != "RECORD" or t.get_declaration().kind.name != "UNION_DECL":
        return None
    fields = [f.type.get_canonical() for f in t.get_fields()]
    if not fields or not all(is_float(f) or is_int(f) for f in fields):
        return None
    return t if len({f.get_size() for f in fields}) == 1 else None


class Unions(FunctionState):
    """Reads and writes of the fields of a local scalar union."""

    def union_local(self, d, exprs: list) -> None:
        t = scalar_union(d.type)
        key = decl_key(d)
        fields = [f.type.get_canonical() for f in t.get_fields()]
        self.unions[key] = next((f for f in fields if is_float(f)), fields[0])
        self.structs[key] = t
        init = [strip(e) for e in exprs]
        if not init:  # reading it before writing is undefined in C: zero
            self.vals[(key, ())] = self.const(0, scalar_type(self.unions[key], d), d)
            return
        if init[-1].kind.name != "INIT_LIST_EXPR" or len(list(init[-1].get_children())) != 1:
            unsupported(d, "a union initialized other than by '{value}' of its first field")
        self.union_store(key, fields[0], self.rvalue(next(init[-1].get_children())), d)

    def union_field(self, e):
        """(union key, C type of the field) when `e` is a field of a local scalar union."""
        place = self.struct_place(e) if self.unions else None
        if place is None or place[0] not in self.unions or not place[1]:
            return None
        return place[0], place[2]

    def union_store(self, key, ftype, value: SSAValue, c) -> SSAValue:
        v = self.convert(value, ftype, c)
        self.vals[(key, ())] = self.reinterpret(v, ftype, self.unions[key], c)
        return v

    def union_load(self, key, ftype, c) -> SSAValue:
        return self.reinterpret(self.current((key, ()), None, c), self.unions[key], ftype, c)

    def reinterpret(self, v: SSAValue, src, dst, c) -> SSAValue:
        """The value of C type `dst` with the bits of `v` (of C type `src`, same size)."""
        same_ints = is_int(src) and is_int(dst)
        if (is_float(src) and is_float(dst)) or (
            same_ints and (src.get_size() == 8 or is_unsigned(src) == is_unsigned(dst))
        ):
            return v
        bits = IntegerType(8 * src.get_size())
        if is_float(src):
            raw = self.emit(arith.BitcastOp(v, bits), c).results[0]
        else:
            raw = self.emit(arith.IndexCastOp(v, bits), c).results[0]
        if is_float(dst):
            return self.emit(arith.BitcastOp(raw, scalar_type(dst, c)), c).results[0]
        if is_unsigned(dst) and bits.bitwidth < 64:
            raw = self.emit(arith.ExtUIOp(raw, i64), c).results[0]
        return self.emit(arith.IndexCastOp(raw, scalar_type(dst, c)), c).results[0]
