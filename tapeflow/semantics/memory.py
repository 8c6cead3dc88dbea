"""What the op-by-op hardware model and the fast path share about memory accesses.

- One recorded access is one int64: bit 0 = store, bits 1-16 = the PC (the fast path
  puts a static memory-op id there and maps it to the PC at flush time), bits from
  `ADDR_SHIFT` = the byte address (the fast path: an offset in its buffer, then the
  buffer's provisional id, `hwmodel/compiled/limits.py`).
- Ordinary buffers (a memref's memory, a DRAM record tape) get addresses from
  `FIRST_ADDRESS` on, in order of first access, each `ALIGN`-aligned (`next_base`).
- Un-lowered `tape.cache` arrays get addresses from `TAPE_BASE`, `TAPE_STRIDE` apart, in
  order of first access (far from ordinary buffers).
- The scratchpad test is `tapeflow.dialects.region.is_spm`; the record-tape checks are
  `tapeflow.interpreters.region.check_record` / `record_unwritten`.
- The accesses a region.read/write records (`record_fields`: one per field, each its own
  PC) and those of a memref.copy (`element_run`: every element of each side, one PC per
  side).
"""

from typing import Any

import numpy as np

PC_SHIFT = 1
PC_MASK = 0xFFFF
ADDR_SHIFT = 17

FIRST_ADDRESS = 1 << 16
ALIGN = 64

TAPE_BASE = 1 << 44
TAPE_STRIDE = 1 << 36


def tape_base(k: int) -> int:
    """The base address of the `k`-th tape cache (in first-access order)."""
    return TAPE_BASE + k * TAPE_STRIDE


GROWABLE_WINDOW = 1 << 28
"""Address window of a growable record tape (`region.reserve`; the fast path's largest
buffer): it grows in place there, where a doubling copy would move it to free addresses."""


def address_span(buf: Any) -> int:
    """The bytes of address space a model gives the DRAM record tape `buf` (a
    `RecordBuffer`) at its first access."""
    return GROWABLE_WINDOW if buf.growable else buf.size_bytes


def next_base(base: int, nbytes: int) -> int:
    """The address after a buffer of `nbytes` at `base` (at least one aligned line)."""
    return base + (max(nbytes, 1) + ALIGN - 1) // ALIGN * ALIGN


def encode(address: int, pc: int, write: int) -> int:
    """One recorded access (the fast path: `address` is an offset in its buffer)."""
    return (address << ADDR_SHIFT) | (pc << PC_SHIFT) | write


def record_fields(record: Any) -> tuple[tuple[int, int, int], ...]:
    """The accesses of one region.read/write of a DRAM record (a `region.record` type):
    per field, its byte offset in the record, its PC after the op's first one (each field
    is its own load/store instruction) and its bytes."""
    from tapeflow.dialects.region import field_size

    sizes = [field_size(f) for f in record.field_types]
    return tuple((off, f, size) for f, (off, size) in enumerate(zip(record.offsets, sizes)))


def element_run(first: int, n: int, size: int) -> list[int]:
    """The accesses to `n` consecutive elements of `size` bytes, one PC, from the encoded
    access `first` of element 0 (each side of a memref.copy)."""
    return (np.arange(n, dtype=np.int64) * (size << ADDR_SHIFT) + first).tolist()
