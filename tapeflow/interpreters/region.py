"""Interpreter functions for the `region` dialect: a record tape is a `RecordBuffer`.

`RecordBuffer` is also the runtime value of an SPM tile buffer of the `stream` dialect;
the stream interpreter keeps its DMA state (`dma`, `acquired`) on it, and `region.read`
/ `region.write` refuse to touch a buffer while a DMA on it is in flight.

For a hardware model (an `Interpreter.Listener`): in `will_interpret_op` of a
`region.read`/`region.write`, `args[0]` is the `RecordBuffer` and `args[1]` the index;
the access covers bytes `[buffer.byte_offset(i), buffer.byte_offset(i) + record.size)`
of the buffer, in `buffer.memory_space` (`DRAM` or `SPM`), and `buffer.field_offsets`
give each field's place inside the record.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, ClassVar, NoReturn, Protocol

from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError

from tapeflow.diagnostics import op_error
from tapeflow.dialects import region
from tapeflow.dialects.region import RecordType, TapeType

DRAM = "dram"
"""`RecordBuffer.memory_space` of a tape in DRAM (no memory space in its type)."""
SPM = "spm"
"""`RecordBuffer.memory_space` of a scratchpad buffer (`#stream.spm`)."""

Record = tuple[Any, ...]



class InFlight(Protocol):
    """What a buffer knows of the DMA in flight on it (the stream interpreter's
    `DmaToken`; a protocol, so that this module does not import the stream one)."""

    kind: str


@dataclass(eq=False)
class RecordBuffer:
    """The runtime value of a `!region.tape<R[, #stream.spm]>`: `count` records in one buffer.

    `records[i]` is the tuple of field values of record `i`, or None until written.
    """

    record: RecordType
    count: int
    memory_space: str
    records: list[Record | None]
    id: int = field(default_factory=lambda: next(RecordBuffer._ids))
    """Stable identity (allocation order within the process), for reports and models."""
    freed: bool = False
    dma: InFlight | None = None
    """The DMA in flight on this (SPM) buffer, if any; set by the stream interpreter."""
    acquired: str | None = None
    """`"write"`/`"read"` after `stream.acquire_write`/`acquire_read`, else None."""
    growable: bool = False
    """A tape that `region.reserve` grows (a while region's): a hardware model gives it an
    address window of `semantics.memory.GROWABLE_WINDOW` bytes, not of its first size."""

    _ids: ClassVar[itertools.count[int]] = itertools.count()

    @staticmethod
    def allocate(tape_type: TapeType, count: int) -> RecordBuffer:
        space = SPM if tape_type.in_spm else DRAM
        return RecordBuffer(tape_type.record, count, space, [None] * count)

    @property
    def record_bytes(self) -> int:
        return self.record.size

    @property
    def field_offsets(self) -> tuple[int, ...]:
        return self.record.offsets

    @property
    def size_bytes(self) -> int:
        """Bytes of the whole buffer."""
        return self.count * self.record.size

    def byte_offset(self, index: int) -> int:
        """Byte offset of record `index` from the start of the buffer."""
        return index * self.record.size

    def check_usable(self, op: Operation) -> None:
        """Raises unless the buffer may be read or written by `op` right now."""
        if self.freed:
            raise InterpretationError(op_error(op, f"{self.describe()} used after dealloc"))
        if self.dma is not None:
            raise InterpretationError(
                op_error(
                    op,
                    f"{self.describe()} accessed while a {self.dma.kind} DMA on it is in "
                    f"flight (acquire it first)",
                )
            )

    def check_index(self, op: Operation, index: int) -> None:
        if not 0 <= index < self.count:
            raise InterpretationError(
                op_error(
                    op, f"index {index} out of bounds for {self.describe()} of {self.count} records"
                )
            )

    def reserve(self, op: Operation, count: int) -> bool:
        """`region.reserve` of `count` records; True when the buffer grew."""
        if self.freed:
            raise InterpretationError(op_error(op, f"{self.describe()} used after dealloc"))
        size = region.grown(self.count, count)
        if size == self.count:
            return False
        self.records.extend([None] * (size - self.count))
        self.count = size
        return True

    def describe(self) -> str:
        where = "scratchpad buffer" if self.memory_space == SPM else "tape"
        return f"{where} #{self.id}"


def check_record(op: Operation, buffer: RecordBuffer, index: int) -> None:
    """The checks of a `region.read`/`write` of record `index` (the fast path's too)."""
    buffer.check_usable(op)
    buffer.check_index(op, index)


def record_unwritten(op: Operation, buffer: RecordBuffer, index: int) -> NoReturn:
    raise InterpretationError(
        op_error(op, f"record {index} of {buffer.describe()} read before it was written")
    )


@register_impls
class RegionFunctions(InterpreterFunctions):
    @impl(region.AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: region.AllocOp, args: PythonValues):
        count = op.static_count if op.static_count is not None else int(args[0])
        if count < 0:
            raise InterpretationError(op_error(op, f"record count must be >= 0, got {count}"))
        tape_type = op.tape.type
        assert isinstance(tape_type, TapeType)
        buffer = RecordBuffer.allocate(tape_type, count)
        buffer.growable = op.growable
        return (buffer,)

    @impl(region.WriteOp)
    def run_write(self, interpreter: Interpreter, op: region.WriteOp, args: PythonValues):
        buffer: RecordBuffer = args[0]
        index = int(args[1])
        check_record(op, buffer, index)
        buffer.records[index] = tuple(args[2:])
        return ()

    @impl(region.ReadOp)
    def run_read(self, interpreter: Interpreter, op: region.ReadOp, args: PythonValues):
        buffer: RecordBuffer = args[0]
        index = int(args[1])
        check_record(op, buffer, index)
        values = buffer.records[index]
        if values is None:
            record_unwritten(op, buffer, index)
        return values

    @impl(region.ReserveOp)
    def run_reserve(self, interpreter: Interpreter, op: region.ReserveOp, args: PythonValues):
        args[0].reserve(op, int(args[1]))
        return ()

    @impl(region.DeallocOp)
    def run_dealloc(self, interpreter: Interpreter, op: region.DeallocOp, args: PythonValues):
        buffer: RecordBuffer = args[0]
        if buffer.freed:
            raise InterpretationError(op_error(op, f"{buffer.describe()} deallocated twice"))
        if buffer.dma is not None:
            raise InterpretationError(
                op_error(
                    op,
                    f"{buffer.describe()} deallocated while a {buffer.dma.kind} DMA on it "
                    "is in flight",
                )
            )
        buffer.freed = True
        return ()
