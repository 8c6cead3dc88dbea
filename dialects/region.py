"""
The `region` dialect: TapeFlow's record tapes (an array of structs in one buffer).

Enzyme keeps one cache per value (struct of arrays). TapeFlow groups the values that one
iteration of a tape region pushes into one *record*, and keeps the records of all
iterations in one *record tape*, indexed by the iteration. The forward loop writes record
`i`, the reverse loop reads record `i` back; the same tape SSA value ties the two.

```
%t = region.alloc(%n) : !region.tape<!region.record<f64, f64, i1>>
region.write %t[%i], %a, %b, %c : !region.tape<!region.record<f64, f64, i1>>
%a2, %b2, %c2 = region.read %t[%i] : !region.tape<!region.record<f64, f64, i1>>
region.dealloc %t : !region.tape<!region.record<f64, f64, i1>>
```

Types:
- `!region.record<T0, T1, ...>`: a record of integer, index or float fields, laid out
  with the C struct rule in the order given: each field at the next multiple of its
  natural alignment, the size rounded up to the record's alignment (the largest field
  alignment). `RecordType.offsets`, `.size` and `.alignment` are the only place this
  layout is computed; nothing of it is printed.
- `!region.tape<R>`: a tape of records `R` in DRAM (the default memory space);
  `!region.tape<R, #stream.spm>` is a tape in the scratchpad (a tile buffer of the
  `stream` dialect).

Ops:
- `region.alloc`: allocates a tape of `count` records, given as an `index` operand
  (`region.alloc(%n)`) or as a constant (`region.alloc count = 64`).
- `region.write`: writes one whole record at an index; operand types are the fields.
- `region.read`: reads one whole record at an index; result types are the fields.
  Reading a record never written, or an index out of bounds, is a runtime error.
- `region.reserve`: makes a DRAM tape hold at least `count` records, doubling it (or
  more, to `count`) when it holds fewer; the records written stay. A tape whose record
  count is known only as the forward sweep runs (an `scf.while`) grows by it.
- `region.dealloc`: releases a tape.

None of these ops is `Pure`: they read or write the tape's memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from tapeflow.dialects.utils import count_operand_or_property, verify_count_operand_or_property
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
)
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

INDEX_BYTES = 8
"""Byte size (and alignment) of an `index` field and of a pointer: a 64-bit target."""


def field_size(field: Attribute) -> int:
    """Byte size of one value of a scalar type, as memory stores it (a record field, a
    memref or tape element); its natural alignment is the same number. The one rule:
    the interpreter's storage (xDSL's `compile_time_size`) and LLVM's alloc size agree
    (i1 and i8 1 byte, i24 4, index 8, f16 and bf16 2)."""
    if isinstance(field, IndexType):
        return INDEX_BYTES
    if isinstance(field, IntegerType | AnyFloat):
        nbytes = max(1, (field.bitwidth + 7) // 8)
        # Natural alignment is a power of two: i24 -> 4 bytes, f80 -> 16 bytes.
        return 1 << (nbytes - 1).bit_length()
    raise VerifyException(f"record fields must be integer, index or float types, got {field}")


def element_size(element: Attribute) -> int:
    """Byte size of one memref element: a scalar's `field_size`; a memref of memrefs holds
    pointers (a growable tape's buffer slot)."""
    if isinstance(element, MemRefType):
        return INDEX_BYTES
    return field_size(element)


@irdl_attr_definition
class RecordType(ParametrizedAttribute, TypeAttribute):
    """A record of scalar fields, laid out as a C struct (see the module docstring)."""

    name = "region.record"

    fields: ArrayAttr[Attribute]

    def __init__(self, fields: Sequence[Attribute] | ArrayAttr[Attribute]):
        if not isinstance(fields, ArrayAttr):
            fields = ArrayAttr(fields)
        super().__init__(fields)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        fields = parser.parse_comma_separated_list(
            parser.Delimiter.ANGLE, parser.parse_type, " in region.record"
        )
        return (ArrayAttr(fields),)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_list(self.fields.data, printer.print_attribute)

    def verify(self) -> None:
        if not self.fields.data:
            raise VerifyException("region.record must have at least one field")
        for field in self.fields.data:
            field_size(field)

    @property
    def field_types(self) -> tuple[Attribute, ...]:
        return self.fields.data

    @property
    def offsets(self) -> tuple[int, ...]:
        """Byte offset of each field within the record."""
        offsets: list[int] = []
        end = 0
        for field in self.fields.data:
            size = field_size(field)
            start = (end + size - 1) // size * size
            offsets.append(start)
            end = start + size
        return tuple(offsets)

    @property
    def alignment(self) -> int:
        """The record's alignment: the largest field alignment."""
        return max(field_size(f) for f in self.fields.data)

    @property
    def size(self) -> int:
        """Byte size of one record, padding included (the stride between records)."""
        last = self.fields.data[-1]
        end = self.offsets[-1] + field_size(last)
        align = self.alignment
        return (end + align - 1) // align * align


def is_spm(space: Attribute) -> bool:
    """The one test for "this memory space is the scratchpad" (`#stream.spm`), for memrefs
    and record tapes alike (the hardware model and the fast path ask it too). By name, so
    that this dialect does not import the stream dialect, which builds on its types."""
    return getattr(space, "name", None) == "stream.spm"


@irdl_attr_definition
class TapeType(ParametrizedAttribute, TypeAttribute):
    """An array of records `record` in one buffer, in DRAM or (`#stream.spm`) the scratchpad."""

    name = "region.tape"

    record: RecordType
    memory_space: Attribute
    """`NoneAttr()` for DRAM (printed as nothing), or `#stream.spm`."""

    def __init__(self, record: RecordType, memory_space: Attribute | None = None):
        super().__init__(record, memory_space if memory_space is not None else NoneAttr())

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            record = parser.parse_type()
            space: Attribute = NoneAttr()
            if parser.parse_optional_punctuation(",") is not None:
                space = parser.parse_attribute()
        return (record, space)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.record)
            if not isinstance(self.memory_space, NoneAttr):
                printer.print_string(", ")
                printer.print_attribute(self.memory_space)

    def verify(self) -> None:
        if not isinstance(self.memory_space, NoneAttr) and not is_spm(self.memory_space):
            raise VerifyException(
                "region.tape memory space must be absent (DRAM) or #stream.spm, "
                f"got {self.memory_space}"
            )

    @property
    def in_spm(self) -> bool:
        """True for a scratchpad tile buffer, False for a DRAM tape."""
        return is_spm(self.memory_space)


def _tape_type(op: Operation, value: SSAValue) -> TapeType:
    if not isinstance(value.type, TapeType):
        raise VerifyException(f"{op.name} expects a !region.tape, got {value.type}")
    return value.type


def _parse_indexed_tape(parser: Parser) -> tuple[UnresolvedOperand, UnresolvedOperand]:
    """Parses `%tape[%index]`."""
    tape = parser.parse_unresolved_operand()
    parser.parse_punctuation("[")
    index = parser.parse_unresolved_operand()
    parser.parse_punctuation("]")
    return tape, index


def _print_indexed_tape(printer: Printer, tape: SSAValue, index: SSAValue) -> None:
    """Prints ` %tape[%index]` (what `_parse_indexed_tape` parses)."""
    printer.print_string(" ")
    printer.print_operand(tape)
    with printer.in_square_brackets():
        printer.print_operand(index)


def _verify_record_types(op: WriteOp | ReadOp, values: Sequence[SSAValue], what: str) -> None:
    """The types of `values` (the op's `what`s) are the record fields of `op.tape`, in order."""
    fields = _tape_type(op, op.tape).record.field_types
    types = tuple(v.type for v in values)
    if types != fields:
        raise VerifyException(
            f"{what} types ({', '.join(map(str, types))}) do not match the record "
            f"fields ({', '.join(map(str, fields))})"
        )


def _parse_tape_type(parser: Parser) -> TapeType:
    pos = parser.pos
    tape_type = parser.parse_type()
    if not isinstance(tape_type, TapeType):
        parser.raise_error(f"expected a !region.tape type, got {tape_type}", pos)
    return tape_type


@irdl_op_definition
class AllocOp(IRDLOperation):
    """Allocates a tape of `count` records (an `index` operand, or the `count` property).

    The records are uninitialised: reading one before writing it is a runtime error.
    """

    name = "region.alloc"

    dynamic_count = opt_operand_def(IndexType)
    """Number of records, when known only at run time."""
    count = opt_prop_def(IntegerAttr[IndexType])
    """Number of records, when known at compile time."""
    tape = result_def(TapeType)

    assembly_format = "(`(` $dynamic_count^ `)`)? (`count` `=` $count^)? attr-dict `:` type($tape)"

    def __init__(self, tape_type: TapeType, count: SSAValue | int):
        super().__init__(result_types=[tape_type], **count_operand_or_property(count, "count"))

    def verify_(self) -> None:
        verify_count_operand_or_property(self.dynamic_count, self.count, "count", "count")

    @property
    def static_count(self) -> int | None:
        """The number of records when it is a compile-time constant."""
        return None if self.count is None else self.count.value.data

    @property
    def growable(self) -> bool:
        """The tape grows (a `region.reserve` uses it): `count` is its first size."""
        return any(isinstance(use.operation, ReserveOp) for use in self.tape.uses)


@irdl_op_definition
class WriteOp(IRDLOperation):
    """Writes one whole record, `values` (one per field, in order), at `tape[index]`."""

    name = "region.write"

    tape = operand_def(TapeType)
    index = operand_def(IndexType)
    values = var_operand_def()

    def __init__(self, tape: SSAValue, index: SSAValue, values: Sequence[SSAValue]):
        super().__init__(operands=[tape, index, list(values)])

    def verify_(self) -> None:
        _verify_record_types(self, self.values, "value")

    @classmethod
    def parse(cls, parser: Parser) -> WriteOp:
        tape, index = _parse_indexed_tape(parser)
        values: list[UnresolvedOperand] = []
        values_start = parser.pos
        while parser.parse_optional_punctuation(",") is not None:
            values.append(parser.parse_unresolved_operand())
        values_end = parser.pos
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        tape_type = _parse_tape_type(parser)
        fields = tape_type.record.field_types
        if len(values) != len(fields):
            parser.raise_error(
                f"region.write expects {len(fields)} value(s) for {tape_type.record}, "
                f"got {len(values)}",
                values_start,
                values_end,
            )
        op = cls(
            parser.resolve_operand(tape, tape_type),
            parser.resolve_operand(index, IndexType()),
            [parser.resolve_operand(v, t) for v, t in zip(values, fields)],
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        _print_indexed_tape(printer, self.tape, self.index)
        for value in self.values:
            printer.print_string(", ")
            printer.print_operand(value)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.tape.type)


@irdl_op_definition
class ReadOp(IRDLOperation):
    """Reads the whole record at `tape[index]`: one result per field, in order."""

    name = "region.read"

    tape = operand_def(TapeType)
    index = operand_def(IndexType)
    values = var_result_def()

    def __init__(self, tape: SSAValue, index: SSAValue):
        tape_type = tape.type
        assert isinstance(tape_type, TapeType)
        super().__init__(operands=[tape, index], result_types=[list(tape_type.record.field_types)])

    def verify_(self) -> None:
        _verify_record_types(self, self.values, "result")

    @classmethod
    def parse(cls, parser: Parser) -> ReadOp:
        tape, index = _parse_indexed_tape(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        tape_type = _parse_tape_type(parser)
        op = cls(
            parser.resolve_operand(tape, tape_type),
            parser.resolve_operand(index, IndexType()),
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        _print_indexed_tape(printer, self.tape, self.index)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.tape.type)


@irdl_op_definition
class DeallocOp(IRDLOperation):
    """Releases `tape`. A scratchpad buffer must have no DMA in flight by then."""

    name = "region.dealloc"

    tape = operand_def(TapeType)

    assembly_format = "$tape attr-dict `:` type($tape)"

    def __init__(self, tape: SSAValue):
        super().__init__(operands=[tape])


@irdl_op_definition
class ReserveOp(IRDLOperation):
    """Makes `tape` (in DRAM) hold at least `count` records: when it holds fewer, it grows to
    `max(2 x its records, count)`, keeping the records written (a growable record tape, as
    Enzyme's caches under an `scf.while` grow)."""

    name = "region.reserve"

    tape = operand_def(TapeType)
    count = operand_def(IndexType)

    assembly_format = "$tape `,` $count attr-dict `:` type($tape)"

    def __init__(self, tape: SSAValue, count: SSAValue):
        super().__init__(operands=[tape, count])

    def verify_(self) -> None:
        if _tape_type(self, self.tape).in_spm:
            raise VerifyException("region.reserve grows a DRAM tape, not a scratchpad buffer")


def grown(capacity: int, count: int) -> int:
    """The records a tape of `capacity` records holds after `region.reserve` of `count`."""
    return capacity if count <= capacity else max(2 * capacity, count)


def record_of(value: SSAValue) -> RecordType:
    """The record type of a tape value (helper for passes)."""
    return cast(TapeType, value.type).record


Region = Dialect(
    "region",
    [AllocOp, WriteOp, ReadOp, ReserveOp, DeallocOp],
    [RecordType, TapeType],
)
