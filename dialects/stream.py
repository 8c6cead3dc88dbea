"""
The `stream` dialect: streaming record tapes between DRAM and the scratchpad by DMA.

A record tape too large for the scratchpad (SPM) is cut into *tiles* of `K` records. The
forward sweep fills a tile in an SPM buffer and commits it, by DMA, to a slot of a
DRAM-backed FIFO; the reverse sweep prefetches tiles back into SPM buffers just before it
needs them. DMAs are asynchronous: each returns a `!stream.token`, and the program waits
for completion explicitly. Every buffer, tile index and wait is explicit in the IR.

```
%buf = region.alloc count = 8 : !region.tape<!region.record<f64, i1>, #stream.spm>
%f = stream.fifo_alloc(%ntiles) : !stream.fifo<!region.record<f64, i1>, 8>
// writer (forward sweep), for each tile %t:
stream.acquire_write %buf : !region.tape<!region.record<f64, i1>, #stream.spm>
region.write %buf[%k], %x, %c : !region.tape<!region.record<f64, i1>, #stream.spm>
%w = stream.commit %buf -> %f[%t] : !stream.fifo<!region.record<f64, i1>, 8>
// ...
stream.wait %w
// reader (reverse sweep), for each tile %t:
%r = stream.prefetch %f[%t] -> %buf : !stream.fifo<!region.record<f64, i1>, 8>
stream.acquire_read %buf, %r : !region.tape<!region.record<f64, i1>, #stream.spm>
%x2, %c2 = region.read %buf[%k] : !region.tape<!region.record<f64, i1>, #stream.spm>
stream.release %buf : !region.tape<!region.record<f64, i1>, #stream.spm>
stream.fifo_dealloc %f : !stream.fifo<!region.record<f64, i1>, 8>
```

Attributes and types:
- `#stream.spm`: the scratchpad memory space, usable on `memref<64xf64, #stream.spm>` and
  on `!region.tape<R, #stream.spm>` (an SPM tile buffer).
- `!stream.fifo<R, K>`: a FIFO in DRAM of tiles, each `K` records `R`; tiles are addressed
  by an explicit `index` (slot) and keep their order.
- `!stream.token`: the completion token of one asynchronous DMA.

Ops (a "buffer" is a `!region.tape<R, #stream.spm>` of `K` records):
- `stream.fifo_alloc` / `stream.fifo_dealloc`: create / release a FIFO of `num_tiles` slots.
- `stream.fifo_reserve %f, %n`: makes `%f` hold at least `%n` slots, doubling it (or
  more, to `%n`) when it holds fewer; the committed tiles stay.
- `stream.acquire_write %buf[, %tok]`: waits until `%buf` may be written, i.e. its previous
  commit (`%tok`, or whichever DMA is in flight on it when no token is given) completed.
- `stream.commit %buf -> %f[%t][, %n]`: starts the copy SPM buffer -> DRAM slot `%t` (of
  its first `%n` records when given: a partial tile moves only its filled part); returns
  its token. The buffer must not be touched until it is acquired again.
- `stream.prefetch %f[%t] -> %buf[, %n]`: starts the copy DRAM slot `%t` -> SPM buffer
  (the slot must hold a completed commit of at least `%n` records); returns its token.
- `stream.acquire_read %buf[, %tok]`: waits for the prefetch into `%buf`; the buffer is
  then readable.
- `stream.release %buf`: the holder of `%buf` is done with it: the reader after its last
  read, or a writer that commits nothing more (e.g. after draining the last commit with
  `acquire_write`). The buffer may then be prefetched into again.
- `stream.wait %tok`: waits for one DMA (e.g. to drain the last commits).

A token is waited on exactly once (by `stream.wait` or an acquire). None of these ops is
`Pure`.
"""

from __future__ import annotations

from collections.abc import Sequence

from tapeflow.dialects.region import AllocOp, RecordType, TapeType
from tapeflow.dialects.utils import count_operand_or_property, verify_count_operand_or_property
from xdsl.dialects.builtin import IndexType, IntAttr, IntegerAttr
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


@irdl_attr_definition
class SpmAttr(ParametrizedAttribute):
    """`#stream.spm`: the scratchpad memory space (memrefs and record tapes)."""

    name = "stream.spm"


@irdl_attr_definition
class FifoType(ParametrizedAttribute, TypeAttribute):
    """A DRAM-backed FIFO of tiles, each `tile_records` records of type `record`."""

    name = "stream.fifo"

    record: RecordType
    tile_records: IntAttr
    """K, the number of records in one tile."""

    def __init__(self, record: RecordType, tile_records: int | IntAttr):
        if isinstance(tile_records, int):
            tile_records = IntAttr(tile_records)
        super().__init__(record, tile_records)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            record = parser.parse_type()
            parser.parse_punctuation(",", " between record type and tile size")
            k = parser.parse_integer(allow_boolean=False, allow_negative=True)
        return (record, IntAttr(k))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.record)
            printer.print_string(f", {self.tile_records.data}")

    def verify(self) -> None:
        if self.tile_records.data < 1:
            raise VerifyException(
                f"stream.fifo tile size must be >= 1 record, got {self.tile_records.data}"
            )

    @property
    def k(self) -> int:
        """Records per tile."""
        return self.tile_records.data

    @property
    def tile_bytes(self) -> int:
        """Bytes of one tile (K records, padding included)."""
        return self.k * self.record.size

    @property
    def buffer_type(self) -> TapeType:
        """The type of an SPM buffer holding one tile of this FIFO."""
        return TapeType(self.record, SpmAttr())


@irdl_attr_definition
class TokenType(ParametrizedAttribute, TypeAttribute):
    """The completion token of one asynchronous DMA (commit or prefetch)."""

    name = "stream.token"


def _verify_buffer(value: SSAValue) -> TapeType:
    if not isinstance(value.type, TapeType) or not value.type.in_spm:
        raise VerifyException(
            f"expected a scratchpad buffer !region.tape<R, #stream.spm>, got {value.type}"
        )
    return value.type


def _static_count(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, AllocOp):
        return owner.static_count
    return None


@irdl_op_definition
class FifoAllocOp(IRDLOperation):
    """Allocates a FIFO of `num_tiles` tile slots in DRAM (operand or `tiles` property)."""

    name = "stream.fifo_alloc"

    dynamic_num_tiles = opt_operand_def(IndexType)
    num_tiles = opt_prop_def(IntegerAttr[IndexType])
    fifo = result_def(FifoType)

    assembly_format = (
        "(`(` $dynamic_num_tiles^ `)`)? (`tiles` `=` $num_tiles^)? attr-dict `:` type($fifo)"
    )

    def __init__(self, fifo_type: FifoType, num_tiles: SSAValue | int):
        super().__init__(
            result_types=[fifo_type], **count_operand_or_property(num_tiles, "num_tiles")
        )

    def verify_(self) -> None:
        verify_count_operand_or_property(
            self.dynamic_num_tiles, self.num_tiles, "tile count", "tiles"
        )


@irdl_op_definition
class FifoDeallocOp(IRDLOperation):
    """Releases a FIFO. No DMA on it may be in flight."""

    name = "stream.fifo_dealloc"

    fifo = operand_def(FifoType)

    assembly_format = "$fifo attr-dict `:` type($fifo)"

    def __init__(self, fifo: SSAValue):
        super().__init__(operands=[fifo])


@irdl_op_definition
class FifoReserveOp(IRDLOperation):
    """Makes `fifo` hold at least `num_tiles` slots: when it holds fewer, it grows to
    `max(2 x its slots, num_tiles)`, keeping the tiles committed (the FIFO of a growable
    record tape, whose tile count is known only as the forward sweep runs)."""

    name = "stream.fifo_reserve"

    fifo = operand_def(FifoType)
    num_tiles = operand_def(IndexType)

    assembly_format = "$fifo `,` $num_tiles attr-dict `:` type($fifo)"

    def __init__(self, fifo: SSAValue, num_tiles: SSAValue):
        super().__init__(operands=[fifo, num_tiles])


class _AcquireOp(IRDLOperation):
    """Shared shape of the two acquires: `buffer`, optionally the token to wait for."""

    buffer = operand_def(TapeType)
    token = opt_operand_def(TokenType)

    assembly_format = "$buffer (`,` $token^)? attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue, token: SSAValue | None = None):
        super().__init__(operands=[buffer, [] if token is None else [token]])

    def verify_(self) -> None:
        _verify_buffer(self.buffer)


@irdl_op_definition
class AcquireWriteOp(_AcquireOp):
    """Waits until `buffer` may be written: its previous commit (`token`, or the DMA in
    flight on it when no token is given) completed. A fresh buffer is free at once."""

    name = "stream.acquire_write"


@irdl_op_definition
class AcquireReadOp(_AcquireOp):
    """Waits for the prefetch into `buffer` (`token`, or the one in flight on it); the
    buffer then holds the tile and is readable until `stream.release`."""

    name = "stream.acquire_read"


@irdl_op_definition
class ReleaseOp(IRDLOperation):
    """The holder of acquired `buffer` is done with it; it may be prefetched into again.

    Usually the reader after its last `region.read`; a writer may also release a buffer it
    acquired but will not commit (its contents are then simply never copied out).
    """

    name = "stream.release"

    buffer = operand_def(TapeType)

    assembly_format = "$buffer attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue):
        super().__init__(operands=[buffer])

    def verify_(self) -> None:
        _verify_buffer(self.buffer)


class _DmaOp(IRDLOperation):
    """Shared shape of commit and prefetch: `fifo[tile]`, an SPM `buffer`, a token."""

    fifo = operand_def(FifoType)
    tile = operand_def(IndexType)
    buffer = operand_def(TapeType)
    records = opt_operand_def(IndexType)
    """How many records (from the first) the DMA moves; absent: the whole tile (K). A
    partial tile (a run-time trip count, the last layer) moves only its filled part."""
    token = result_def(TokenType)

    def __init__(
        self, fifo: SSAValue, tile: SSAValue, buffer: SSAValue, records: SSAValue | None = None
    ):
        super().__init__(
            operands=[fifo, tile, buffer, [] if records is None else [records]],
            result_types=[TokenType()],
        )

    def verify_(self) -> None:
        fifo_type = self.fifo.type
        assert isinstance(fifo_type, FifoType)
        buffer_type = _verify_buffer(self.buffer)
        if buffer_type.record != fifo_type.record:
            raise VerifyException(
                f"buffer record {buffer_type.record} does not match the FIFO's record "
                f"{fifo_type.record}"
            )
        count = _static_count(self.buffer)
        if count is not None and count != fifo_type.k:
            raise VerifyException(
                f"buffer holds {count} records but a tile of the FIFO has {fifo_type.k}"
            )

    @staticmethod
    def _parse_slot(parser: Parser) -> tuple[UnresolvedOperand, UnresolvedOperand]:
        fifo = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        tile = parser.parse_unresolved_operand()
        parser.parse_punctuation("]")
        return fifo, tile

    @staticmethod
    def _parse_records(parser: Parser) -> UnresolvedOperand | None:
        if parser.parse_optional_punctuation(",") is None:
            return None
        return parser.parse_unresolved_operand()

    def _print_records(self, printer: Printer) -> None:
        if self.records is not None:
            printer.print_string(", ")
            printer.print_operand(self.records)

    @staticmethod
    def _parse_fifo_type(parser: Parser) -> FifoType:
        parser.parse_punctuation(":")
        pos = parser.pos
        fifo_type = parser.parse_type()
        if not isinstance(fifo_type, FifoType):
            parser.raise_error(f"expected a !stream.fifo type, got {fifo_type}", pos)
        return fifo_type

    def _print_slot(self, printer: Printer) -> None:
        printer.print_operand(self.fifo)
        with printer.in_square_brackets():
            printer.print_operand(self.tile)

    def _print_tail(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.fifo.type)


@irdl_op_definition
class CommitOp(_DmaOp):
    """Starts the DMA of SPM `buffer` (one tile) into DRAM slot `fifo[tile]`.

    Custom syntax: `%tok = stream.commit %buf -> %fifo[%t] : !stream.fifo<R, K>` (the
    buffer's type is `!region.tape<R, #stream.spm>`). The buffer must be acquired for
    writing; it is not accessible again until the next `stream.acquire_write`.
    """

    name = "stream.commit"

    @classmethod
    def parse(cls, parser: Parser) -> CommitOp:
        buffer = parser.parse_unresolved_operand()
        parser.parse_punctuation("->")
        fifo, tile = cls._parse_slot(parser)
        records = cls._parse_records(parser)
        attrs = parser.parse_optional_attr_dict()
        fifo_type = cls._parse_fifo_type(parser)
        op = cls(
            parser.resolve_operand(fifo, fifo_type),
            parser.resolve_operand(tile, IndexType()),
            parser.resolve_operand(buffer, fifo_type.buffer_type),
            None if records is None else parser.resolve_operand(records, IndexType()),
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.buffer)
        printer.print_string(" -> ")
        self._print_slot(printer)
        self._print_records(printer)
        self._print_tail(printer)


@irdl_op_definition
class PrefetchOp(_DmaOp):
    """Starts the DMA of DRAM slot `fifo[tile]` (a completed commit) into SPM `buffer`.

    Custom syntax: `%tok = stream.prefetch %fifo[%t] -> %buf : !stream.fifo<R, K>`. The
    buffer must be free (fresh, released, or its commit waited for); it is readable after
    `stream.acquire_read`.
    """

    name = "stream.prefetch"

    @classmethod
    def parse(cls, parser: Parser) -> PrefetchOp:
        fifo, tile = cls._parse_slot(parser)
        parser.parse_punctuation("->")
        buffer = parser.parse_unresolved_operand()
        records = cls._parse_records(parser)
        attrs = parser.parse_optional_attr_dict()
        fifo_type = cls._parse_fifo_type(parser)
        op = cls(
            parser.resolve_operand(fifo, fifo_type),
            parser.resolve_operand(tile, IndexType()),
            parser.resolve_operand(buffer, fifo_type.buffer_type),
            None if records is None else parser.resolve_operand(records, IndexType()),
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        self._print_slot(printer)
        printer.print_string(" -> ")
        printer.print_operand(self.buffer)
        self._print_records(printer)
        self._print_tail(printer)


@irdl_op_definition
class WaitOp(IRDLOperation):
    """Waits for the DMA of `token` to complete. A token is waited on exactly once."""

    name = "stream.wait"

    token = operand_def(TokenType)

    assembly_format = "$token attr-dict"

    def __init__(self, token: SSAValue):
        super().__init__(operands=[token])


Stream = Dialect(
    "stream",
    [
        FifoAllocOp,
        FifoReserveOp,
        FifoDeallocOp,
        AcquireWriteOp,
        CommitOp,
        PrefetchOp,
        AcquireReadOp,
        ReleaseOp,
        WaitOp,
    ],
    [SpmAttr, FifoType, TokenType],
)

OPS = frozenset(op.name for op in Stream.operations)
"""Every stream op: events of a run (each runs with the model around it), never compute."""

DMA_OPS = frozenset({CommitOp.name, PrefetchOp.name})
"""The ops that start a DMA transfer between DRAM and the scratchpad (op class `dma`)."""

WAIT_OPS = frozenset({AcquireWriteOp.name, AcquireReadOp.name, WaitOp.name})
"""The ops that wait for a DMA transfer."""
