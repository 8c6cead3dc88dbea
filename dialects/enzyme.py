"""
The `enzyme` dialect: the ops Enzyme-MLIR leaves in a gradient it has made.

`enzyme-autodiff` (tapeflow.baselines.enzyme_mlir) runs Enzyme-MLIR's `enzyme-wrap` and
parses its output; after `remove-unnecessary-enzyme-ops` what remains of Enzyme's own
dialect is its tape: caches it could not turn into buffers, and accesses to the buffers it
sized itself.

```
%c = enzyme.init : !enzyme.Cache<f64>
enzyme.push %c, %x : !enzyme.Cache<f64>
%y = enzyme.pop %c : !enzyme.Cache<f64>
enzyme.store %x, %buf[%i] ([%n]) : memref<?xf64>
%z = enzyme.load %buf[%i] ([%n]) : memref<?xf64>
```

- `enzyme.init`: an empty cache, a last-in first-out stack (`!enzyme.Cache<T>`, Enzyme's
  own type name); `T` may be a memref: the cache then keeps the reference, not a copy.
- `enzyme.push` / `enzyme.pop`: append a value / remove and return the last one.
- `enzyme.store` / `enzyme.load`: `memref.store` / `memref.load` into a cache buffer that
  Enzyme allocated with a run-time size; the parenthesised operands are that buffer's
  dynamic sizes (one per `?`), which Enzyme keeps beside each access.
- `enzyme.fill_zero %m : memref<?xf64>`: zeroes a buffer (a shadow Enzyme allocated).

Enzyme prints the first three in the generic form (`"enzyme.init"() : () -> ...`); both
forms parse. None of these ops is `Pure`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Generic

from typing_extensions import TypeVar
from xdsl.dialects.builtin import IndexType, MemRefType
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    AnyAttr,
    AttrConstraint,
    AttrSizedOperandSegments,
    IRDLOperation,
    ParamAttrConstraint,
    VarConstraint,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    result_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

_T = TypeVar("_T", bound=Attribute, covariant=True, default=Attribute)


@irdl_attr_definition
class CacheType(ParametrizedAttribute, TypeAttribute, Generic[_T]):
    """Enzyme's tape: a LIFO stack of values of `element_type`."""

    name = "enzyme.Cache"

    element_type: _T

    def __init__(self, element_type: _T):
        super().__init__(element_type)

    @staticmethod
    def constr(element: AttrConstraint = AnyAttr()) -> ParamAttrConstraint:
        return ParamAttrConstraint(CacheType, (element,))


@irdl_op_definition
class InitOp(IRDLOperation):
    """Creates an empty cache."""

    name = "enzyme.init"

    cache = result_def(CacheType)

    assembly_format = "attr-dict `:` type($cache)"

    def __init__(self, element_type: Attribute):
        super().__init__(result_types=[CacheType(element_type)])


@irdl_op_definition
class PushOp(IRDLOperation):
    """Pushes `value` on top of `cache`."""

    name = "enzyme.push"

    T: ClassVar = VarConstraint("T", AnyAttr())
    cache = operand_def(CacheType.constr(T))
    value = operand_def(T)

    assembly_format = "$cache `,` $value attr-dict `:` type($cache)"

    def __init__(self, cache: SSAValue, value: SSAValue):
        super().__init__(operands=[cache, value])


@irdl_op_definition
class PopOp(IRDLOperation):
    """Removes the top of `cache` and returns it; popping an empty cache is an error."""

    name = "enzyme.pop"

    T: ClassVar = VarConstraint("T", AnyAttr())
    cache = operand_def(CacheType.constr(T))
    value = result_def(T)

    assembly_format = "$cache attr-dict `:` type($cache)"

    def __init__(self, cache: SSAValue):
        cache_type = cache.type
        assert isinstance(cache_type, CacheType)
        super().__init__(operands=[cache], result_types=[cache_type.element_type])


def _parse_access(parser: Parser):
    """`%m[%i, ...] ([%n, ...]) : memref<...>`, Enzyme's syntax for a cache access."""
    memref = parser.parse_unresolved_operand()
    index = IndexType()
    delimiter = parser.Delimiter.SQUARE
    indices = parser.parse_comma_separated_list(delimiter, parser.parse_unresolved_operand)
    parser.parse_punctuation("(")
    sizes = parser.parse_comma_separated_list(delimiter, parser.parse_unresolved_operand)
    parser.parse_punctuation(")")
    parser.parse_punctuation(":")
    start = parser.pos
    memref_type = parser.parse_type()
    if not isinstance(memref_type, MemRefType):
        parser.raise_error(f"expected a memref type, got {memref_type}", start, parser.pos)
    return (
        parser.resolve_operand(memref, memref_type),
        [parser.resolve_operand(i, index) for i in indices],
        [parser.resolve_operand(n, index) for n in sizes],
        memref_type,
    )


def _print_access(printer: Printer, memref: SSAValue, indices, sizes) -> None:
    printer.print_string(" ")
    printer.print_operand(memref)
    with printer.in_square_brackets():
        printer.print_list(indices, printer.print_operand)
    printer.print_string(" ([")
    printer.print_list(sizes, printer.print_operand)
    printer.print_string("]) : ")
    printer.print_attribute(memref.type)


def _verify_access(
    memref_type: Attribute, indices: Sequence[SSAValue], sizes, element: Attribute
) -> None:
    if not isinstance(memref_type, MemRefType):
        raise VerifyException(f"expected a memref, got {memref_type}")
    if element != memref_type.get_element_type():
        raise VerifyException(f"accesses a {element} in a memref of {memref_type.element_type}")
    rank = len(memref_type.get_shape())
    if len(indices) != rank:
        raise VerifyException(f"expected {rank} indices, got {len(indices)}")
    dynamic = sum(1 for d in memref_type.get_shape() if d < 0)
    if len(sizes) != dynamic:
        raise VerifyException(
            f"expected {dynamic} sizes (one per dynamic dimension), got {len(sizes)}"
        )


@irdl_op_definition
class StoreOp(IRDLOperation):
    """`memref.store` into a cache buffer of run-time size `sizes`."""

    name = "enzyme.store"

    value = operand_def()
    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    sizes = var_operand_def(IndexType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, value: SSAValue, memref: SSAValue, indices, sizes):
        super().__init__(operands=[value, memref, indices, sizes])

    @classmethod
    def parse(cls, parser: Parser) -> StoreOp:
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        memref, indices, sizes, memref_type = _parse_access(parser)
        element = memref_type.get_element_type()
        return cls(parser.resolve_operand(value, element), memref, indices, sizes)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.value)
        printer.print_string(",")
        _print_access(printer, self.memref, self.indices, self.sizes)

    def verify_(self) -> None:
        _verify_access(self.memref.type, self.indices, self.sizes, self.value.type)


@irdl_op_definition
class LoadOp(IRDLOperation):
    """`memref.load` from a cache buffer of run-time size `sizes`."""

    name = "enzyme.load"

    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    sizes = var_operand_def(IndexType)
    result = result_def()

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, memref: SSAValue, indices, sizes):
        memref_type = memref.type
        assert isinstance(memref_type, MemRefType)
        super().__init__(
            operands=[memref, indices, sizes], result_types=[memref_type.get_element_type()]
        )

    @classmethod
    def parse(cls, parser: Parser) -> LoadOp:
        memref, indices, sizes, _ = _parse_access(parser)
        return cls(memref, indices, sizes)

    def print(self, printer: Printer) -> None:
        _print_access(printer, self.memref, self.indices, self.sizes)

    def verify_(self) -> None:
        _verify_access(self.memref.type, self.indices, self.sizes, self.result.type)


@irdl_op_definition
class FillZeroOp(IRDLOperation):
    """Sets every element of `memref` to zero (a shadow Enzyme allocates); `enzyme-autodiff`
    expands it into the stores it stands for."""

    name = "enzyme.fill_zero"

    memref = operand_def(MemRefType)

    assembly_format = "$memref attr-dict `:` type($memref)"

    def __init__(self, memref: SSAValue):
        super().__init__(operands=[memref])


Enzyme = Dialect("enzyme", [InitOp, PushOp, PopOp, StoreOp, LoadOp, FillZeroOp], [CacheType])
