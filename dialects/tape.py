"""
The `tape` dialect: Enzyme's model of the gradient tape.

A `!tape.cache<T>` is a last-in first-out stack of values of type `T`. The forward sweep
of a reverse-mode derivative pushes every value the reverse sweep needs and cannot
recompute; the reverse sweep pops them back in the opposite order. This is exactly the
abstraction of Enzyme-MLIR's `enzyme.init`/`enzyme.push`/`enzyme.pop`, with a readable
syntax and a verifier that ties the element type of every op to its cache.

```
%c = tape.init : !tape.cache<f64>
tape.push %c, %x : !tape.cache<f64>
%y = tape.pop %c : !tape.cache<f64>
tape.free %c : !tape.cache<f64>
```

Ops:
- `tape.init`: creates an empty cache (an optional capacity hint, in elements).
- `tape.push`: appends a value.
- `tape.pop`: removes and returns the most recently pushed value; popping an empty cache
  is a runtime error.
- `tape.free`: releases a cache; every pushed value must have been popped.

None of these ops is `Pure`: they have effects on the cache, so `dce`, `cse` and
`canonicalize` keep them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Generic

from typing_extensions import TypeVar

from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    AnyAttr,
    AttrConstraint,
    IRDLOperation,
    ParamAttrConstraint,
    VarConstraint,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

_T = TypeVar("_T", bound=Attribute, covariant=True, default=Attribute)


@irdl_attr_definition
class CacheType(ParametrizedAttribute, TypeAttribute, Generic[_T]):
    """A LIFO stack of values of `element_type`, kept from the forward to the reverse sweep."""

    name = "tape.cache"

    element_type: _T

    def __init__(self, element_type: _T):
        super().__init__(element_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        # xDSL's generic parser reports a wrong parameter count as zip()'s message.
        start = parser.pos
        types = parser.parse_comma_separated_list(
            parser.Delimiter.ANGLE, parser.parse_type, " in tape.cache"
        )
        if len(types) != 1:
            parser.raise_error(
                f"!tape.cache takes one element type (e.g. !tape.cache<f64>), got {len(types)}",
                start,
                parser.pos,
            )
        return tuple(types)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.element_type)

    @staticmethod
    def constr(element: AttrConstraint = AnyAttr()) -> ParamAttrConstraint:
        return ParamAttrConstraint(CacheType, (element,))

    def verify(self) -> None:
        if isinstance(self.element_type, CacheType):
            raise VerifyException("tape.cache cannot hold another tape.cache")


@irdl_op_definition
class InitOp(IRDLOperation):
    """Creates an empty cache. `capacity`, when given, is a hint in elements (for lowering)."""

    name = "tape.init"

    cache = result_def(CacheType)
    capacity = opt_prop_def(IntegerAttr[IndexType])
    """Expected number of elements pushed, when the producer knows it."""

    assembly_format = "(`capacity` `=` $capacity^)? attr-dict `:` type($cache)"

    def __init__(self, element_type: Attribute, capacity: int | None = None):
        props = {}
        if capacity is not None:
            props["capacity"] = IntegerAttr(capacity, IndexType())
        super().__init__(result_types=[CacheType(element_type)], properties=props)

    def verify_(self) -> None:
        if self.capacity is not None and self.capacity.value.data < 0:
            raise VerifyException(
                f"capacity must be >= 0, got {self.capacity.value.data}"
            )


@irdl_op_definition
class PushOp(IRDLOperation):
    """Pushes `value` on top of `cache`."""

    name = "tape.push"

    T: ClassVar = VarConstraint("T", AnyAttr())
    cache = operand_def(CacheType.constr(T))
    value = operand_def(T)

    assembly_format = "$cache `,` $value attr-dict `:` type($cache)"

    def __init__(self, cache: SSAValue, value: SSAValue):
        super().__init__(operands=[cache, value])


@irdl_op_definition
class PopOp(IRDLOperation):
    """Removes the top of `cache` and returns it. Popping an empty cache is a runtime error."""

    name = "tape.pop"

    T: ClassVar = VarConstraint("T", AnyAttr())
    cache = operand_def(CacheType.constr(T))
    value = result_def(T)

    assembly_format = "$cache attr-dict `:` type($cache)"

    def __init__(self, cache: SSAValue):
        cache_type = cache.type
        assert isinstance(cache_type, CacheType)
        super().__init__(operands=[cache], result_types=[cache_type.element_type])


@irdl_op_definition
class FreeOp(IRDLOperation):
    """Releases `cache`. At run time every value pushed must have been popped by then."""

    name = "tape.free"

    cache = operand_def(CacheType)

    assembly_format = "$cache attr-dict `:` type($cache)"

    def __init__(self, cache: SSAValue):
        super().__init__(operands=[cache])

    def verify_(self) -> None:
        # Freeing twice is a double free of the lowered buffer. (A free inside a loop
        # is a dataflow question left to the runtime.)
        frees = {use.operation for use in self.cache.uses if isinstance(use.operation, FreeOp)}
        if len(frees) < 2:
            return
        top = self
        while (parent := top.parent_op()) is not None:
            top = parent
        first = next(op for op in top.walk() if op in frees)
        if first is not self:
            raise VerifyException("frees a cache that another tape.free already freed")


Tape = Dialect("tape", [InitOp, PushOp, PopOp, FreeOp], [CacheType])
