"""Type punning through a scalar's address: `*(int32_t *)&y` reads the bits of the float
`y` as an integer (the fast inverse square root's "evil floating point bit level
hacking"), `*(float *)&i` the other way. Only reads of the same size: an
`arith.bitcast` between the value and an integer of its width (integers are `index`
in the IR, so the integer side goes through `arith.index_cast`, which truncates or
sign-extends as C's conversions do). No derivative flows through an integer.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import SSAValue

from .clang import ADDR_OF, decl_key, strip_casts, unary_op, unsupported
from .types import is_float, scalar_type


def punned(b, e, x) -> SSAValue | None:
    """The value of `*x` when `x` is `(T *)&v` for a scalar local `v`, else None."""
    inner = strip_casts(x)
    if inner.kind.name != "UNARY_OPERATOR" or unary_op(inner) != ADDR_OF:
        return None
    d = b.scalar_address(inner)
    if d is None or d.type.get_canonical() == e.type.get_canonical():
        return None
    size = e.type.get_size()
    if size != d.type.get_size() or size not in (4, 8):
        unsupported(e, f"reading the {d.type.spelling} '{d.spelling}' as a {e.type.spelling}"
                    " (type punning between types of different sizes)")
    bits = IntegerType(size * 8)
    value = b.current(decl_key(d), d, inner)
    if is_float(d.type):
        value = b.emit(arith.BitcastOp(value, bits), e).results[0]
    else:
        value = b.emit(arith.IndexCastOp(value, bits), e).results[0]
    target = scalar_type(e.type, e)
    if is_float(e.type):
        return b.emit(arith.BitcastOp(value, target), e).results[0]
    return b.emit(arith.IndexCastOp(value, target), e).results[0]
