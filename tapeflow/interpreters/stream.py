"""Interpreter functions for the `stream` dialect: functional DMA semantics, no timing.

Runtime values:
- `!stream.fifo<R, K>` is a `TileFifo`: `num_tiles` slots in DRAM, each holding the
  records of one committed tile (a tuple of K records) or None.
- `!stream.token` is a `DmaToken`: one asynchronous copy of one tile, with its kind,
  FIFO slot, SPM buffer, bytes moved, source and destination memory spaces and offsets.
- an SPM buffer is a `RecordBuffer` (see `tapeflow.interpreters.region`), whose `dma`
  and `acquired` fields hold its state in the protocol below.

A DMA takes its snapshot of the source when issued and lands in the destination when it
is waited for (`stream.wait`, or the acquire that consumes it). Because a buffer with a
DMA in flight may not be read or written, and a slot with a commit in flight may not be
prefetched, that is indistinguishable from any real timing: values move exactly.

Protocol of an SPM buffer: fresh -> `acquire_write` -> (region.write...) -> `commit`
(DMA in flight) -> `acquire_write` again or `wait`; and fresh/released/drained ->
`prefetch` (DMA in flight) -> `acquire_read` -> (region.read...) -> `release`. A writer
drains its last commit with `acquire_write` (or `stream.wait` on its token) and may then
`release` the buffer for prefetching.
Every misuse is an `InterpretationError` naming the op.

For a hardware model (an `Interpreter.Listener`): the `DmaToken` returned by
`stream.commit`/`stream.prefetch` (in `did_interpret_op`'s results) says what moves where
and how many bytes; in `will_interpret_op` of an acquire or `stream.wait`, the token that
op waits for is `args[1]`/`args[0]`, or `args[0].dma` for an acquire without a token.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import ClassVar

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
from tapeflow.dialects import stream
from tapeflow.dialects.region import RecordType, grown
from tapeflow.interpreters.region import DRAM, SPM, Record, RecordBuffer

COMMIT = "commit"
"""`DmaToken.kind` of a commit: SPM buffer -> DRAM slot."""
PREFETCH = "prefetch"
"""`DmaToken.kind` of a prefetch: DRAM slot -> SPM buffer."""

Tile = tuple[Record | None, ...]

_ING = {"write": "writing", "read": "reading"}


@dataclass(eq=False)
class TileFifo:
    """The runtime value of a `!stream.fifo<R, K>`: `num_tiles` tile slots in DRAM."""

    record: RecordType
    tile_records: int
    num_tiles: int
    tiles: list[Tile | None]
    """The records of the tile committed to each slot (None: never committed)."""
    id: int = field(default_factory=lambda: next(TileFifo._ids))
    in_flight: list[DmaToken] = field(default_factory=list)
    """DMAs issued on this FIFO and not yet waited for."""
    freed: bool = False

    _ids: ClassVar[itertools.count[int]] = itertools.count()

    @property
    def tile_bytes(self) -> int:
        """Bytes of one tile: K records, padding included."""
        return self.tile_records * self.record.size

    @property
    def size_bytes(self) -> int:
        return self.num_tiles * self.tile_bytes

    def reserve(self, op: Operation, tiles: int) -> None:
        """`stream.fifo_reserve` of `tiles` slots."""
        if self.freed:
            raise _fail(op, f"FIFO #{self.id} used after stream.fifo_dealloc")
        size = grown(self.num_tiles, tiles)
        self.tiles.extend([None] * (size - self.num_tiles))
        self.num_tiles = size

    def byte_offset(self, tile: int) -> int:
        """Byte offset of slot `tile` from the start of the FIFO's DRAM area."""
        return tile * self.tile_bytes

    def in_flight_on(self, tile: int, kind: str | None = None) -> DmaToken | None:
        for token in self.in_flight:
            if token.tile == tile and (kind is None or token.kind == kind):
                return token
        return None


@dataclass(eq=False)
class DmaToken:
    """The runtime value of a `!stream.token`: one asynchronous tile copy."""

    kind: str
    """`COMMIT` (SPM buffer -> DRAM slot) or `PREFETCH` (DRAM slot -> SPM buffer)."""
    fifo: TileFifo
    tile: int
    buffer: RecordBuffer
    data: Tile
    """The records moved (snapshot of the source when the DMA was issued)."""
    op: Operation
    """The `stream.commit` / `stream.prefetch` that issued it."""
    id: int = field(default_factory=lambda: next(DmaToken._ids))
    done: bool = False
    """True once waited for."""

    _ids: ClassVar[itertools.count[int]] = itertools.count()

    @property
    def bytes(self) -> int:
        """Bytes moved: the records moved (the whole tile, K records, unless the op gave a
        count), padding included."""
        return len(self.data) * self.fifo.record.size

    @property
    def source(self) -> str:
        """Memory space read: `SPM` for a commit, `DRAM` for a prefetch."""
        return SPM if self.kind == COMMIT else DRAM

    @property
    def destination(self) -> str:
        return DRAM if self.kind == COMMIT else SPM

    @property
    def dram_offset(self) -> int:
        """Byte offset of the DRAM slot within the FIFO."""
        return self.fifo.byte_offset(self.tile)

    def describe(self) -> str:
        return f"{self.kind} token #{self.id} (tile {self.tile})"


def _fail(op: Operation, message: str) -> InterpretationError:
    return InterpretationError(op_error(op, message))


def _complete(op: Operation, token: DmaToken) -> None:
    """Waits for `token`: its data lands in the destination."""
    if token.done:
        raise _fail(op, f"{token.describe()} waited for twice")
    token.done = True
    token.fifo.in_flight.remove(token)
    token.buffer.dma = None
    if token.kind == COMMIT:
        token.fifo.tiles[token.tile] = token.data
    else:
        data = list(token.data)
        token.buffer.records = data + [None] * (token.buffer.count - len(data))


def _check_slot(op: Operation, fifo: TileFifo, tile: int, buffer: RecordBuffer) -> None:
    if fifo.freed:
        raise _fail(op, f"FIFO #{fifo.id} used after stream.fifo_dealloc")
    if not 0 <= tile < fifo.num_tiles:
        raise _fail(op, f"tile index {tile} out of range for a FIFO of {fifo.num_tiles} tiles")
    if buffer.freed:
        raise _fail(op, f"{buffer.describe()} used after dealloc")
    if buffer.count != fifo.tile_records:
        raise _fail(
            op,
            f"{buffer.describe()} holds {buffer.count} records but a tile has {fifo.tile_records}",
        )
    if buffer.dma is not None:
        raise _fail(
            op,
            f"{buffer.describe()} still has a {buffer.dma.kind} DMA in flight (acquire it first)",
        )


def _records(op: Operation, args: PythonValues, whole: int) -> int:
    """The record count of a commit/prefetch (its optional operand, else `whole`)."""
    if len(args) <= 3:
        return whole
    count = int(args[3])
    k = args[0].tile_records
    if not 0 <= count <= k:
        raise _fail(op, f"record count {count} out of range for a tile of {k} records")
    return count


def _acquire(op: Operation, buffer: RecordBuffer, token: DmaToken | None, kind: str) -> None:
    """Waits for the `kind` DMA on `buffer` (`token`, or the one in flight on it)."""
    mode = "write" if kind == COMMIT else "read"
    if buffer.freed:
        raise _fail(op, f"{buffer.describe()} used after dealloc")
    if buffer.acquired is not None:
        raise _fail(op, f"{buffer.describe()} is already acquired for {_ING[buffer.acquired]}")
    if token is None:
        token = buffer.dma
        if token is None and kind == PREFETCH:
            raise _fail(op, f"no prefetch in flight into {buffer.describe()}")
    elif token.buffer is not buffer:
        raise _fail(
            op,
            f"{token.describe()} is a DMA on {token.buffer.describe()}, not on {buffer.describe()}",
        )
    if token is not None:
        if token.kind != kind:
            raise _fail(op, f"expected a {kind} on {buffer.describe()}, got {token.describe()}")
        _complete(op, token)
    buffer.acquired = mode


@register_impls
class StreamFunctions(InterpreterFunctions):
    @impl(stream.FifoAllocOp)
    def run_fifo_alloc(self, interpreter: Interpreter, op: stream.FifoAllocOp, args: PythonValues):
        fifo_type = op.fifo.type
        assert isinstance(fifo_type, stream.FifoType)
        n = op.num_tiles.value.data if op.num_tiles is not None else int(args[0])
        if n < 0:
            raise _fail(op, f"number of tiles must be >= 0, got {n}")
        return (TileFifo(fifo_type.record, fifo_type.k, n, [None] * n),)

    @impl(stream.FifoReserveOp)
    def run_fifo_reserve(
        self, interpreter: Interpreter, op: stream.FifoReserveOp, args: PythonValues
    ):
        args[0].reserve(op, int(args[1]))
        return ()

    @impl(stream.FifoDeallocOp)
    def run_fifo_dealloc(
        self, interpreter: Interpreter, op: stream.FifoDeallocOp, args: PythonValues
    ):
        fifo: TileFifo = args[0]
        if fifo.freed:
            raise _fail(op, f"FIFO #{fifo.id} deallocated twice")
        if fifo.in_flight:
            pending = ", ".join(t.describe() for t in fifo.in_flight)
            raise _fail(op, f"FIFO #{fifo.id} deallocated with DMAs in flight: {pending}")
        fifo.freed = True
        return ()

    @impl(stream.AcquireWriteOp)
    def run_acquire_write(
        self, interpreter: Interpreter, op: stream.AcquireWriteOp, args: PythonValues
    ):
        _acquire(op, args[0], args[1] if len(args) > 1 else None, COMMIT)
        return ()

    @impl(stream.AcquireReadOp)
    def run_acquire_read(
        self, interpreter: Interpreter, op: stream.AcquireReadOp, args: PythonValues
    ):
        _acquire(op, args[0], args[1] if len(args) > 1 else None, PREFETCH)
        return ()

    @impl(stream.CommitOp)
    def run_commit(self, interpreter: Interpreter, op: stream.CommitOp, args: PythonValues):
        fifo: TileFifo = args[0]
        tile = int(args[1])
        buffer: RecordBuffer = args[2]
        _check_slot(op, fifo, tile, buffer)
        if buffer.acquired != "write":
            raise _fail(
                op,
                f"{buffer.describe()} must be acquired with stream.acquire_write before "
                "it is committed",
            )
        busy = fifo.in_flight_on(tile)
        if busy is not None:
            raise _fail(op, f"tile {tile} already has {busy.describe()} in flight")
        count = _records(op, args, fifo.tile_records)
        token = DmaToken(COMMIT, fifo, tile, buffer, tuple(buffer.records[:count]), op)
        buffer.acquired = None
        buffer.dma = token
        fifo.in_flight.append(token)
        return (token,)

    @impl(stream.PrefetchOp)
    def run_prefetch(self, interpreter: Interpreter, op: stream.PrefetchOp, args: PythonValues):
        fifo: TileFifo = args[0]
        tile = int(args[1])
        buffer: RecordBuffer = args[2]
        _check_slot(op, fifo, tile, buffer)
        if buffer.acquired is not None:
            hint = "release it" if buffer.acquired == "read" else "commit it"
            raise _fail(
                op,
                f"{buffer.describe()} is still acquired for {_ING[buffer.acquired]} ({hint} first)",
            )
        pending = fifo.in_flight_on(tile, COMMIT)
        if pending is not None:
            raise _fail(
                op,
                f"tile {tile} is still being committed ({pending.describe()}); wait for it first",
            )
        data = fifo.tiles[tile]
        if data is None:
            raise _fail(op, f"tile {tile} was never committed")
        count = _records(op, args, len(data))
        if len(args) > 3 and count > len(data):
            raise _fail(op, f"prefetch of {count} records from tile {tile}, which holds "
                            f"{len(data)} committed records")  # fmt: skip
        token = DmaToken(PREFETCH, fifo, tile, buffer, data[:count], op)
        buffer.dma = token
        fifo.in_flight.append(token)
        return (token,)

    @impl(stream.ReleaseOp)
    def run_release(self, interpreter: Interpreter, op: stream.ReleaseOp, args: PythonValues):
        buffer: RecordBuffer = args[0]
        if buffer.acquired is None:
            raise _fail(op, f"{buffer.describe()} released without being acquired")
        buffer.acquired = None
        return ()

    @impl(stream.WaitOp)
    def run_wait(self, interpreter: Interpreter, op: stream.WaitOp, args: PythonValues):
        _complete(op, args[0])
        return ()
