"""Op costs: what one execution of an op is charged, the one home of these facts.

The op-by-op listener (`tapeflow.hwmodel.listener`) and the fast path's adapter
(`tapeflow.hwmodel.fastsim`, `tapeflow.hwmodel.compiled`) both charge by these rules:
an op's class (`classify`, a key of `[ops.*]` in the machine TOML), the loads, stores
and bytes of a memory op (`memory_charges`, `copy_charges`) and the counts they add to
(`mem_columns`), a free tape access (`is_ideal_tape`), the PCs an op occupies (`pc_count`) and the loop ends where a phase may
close (`is_loop_end`, `is_charged`: hwmodel/timing/phases.py).
"""

from __future__ import annotations

from typing import Any

from xdsl.ir import Operation

from tapeflow.dialects import enzyme, region, stream, tape
from tapeflow.dialects.region import element_size, is_spm
from tapeflow.semantics import cost_class

_FREE = {
    "arith.constant", "memref.alloc", "memref.alloca", "memref.dealloc", "memref.get_global",
    "memref.cast", "memref.subview", "memref.reinterpret_cast", "memref.collapse_shape",
    "memref.expand_shape", "memref.view", "memref.dim", "memref.global", tape.InitOp.name,
    tape.FreeOp.name, enzyme.InitOp.name, region.AllocOp.name, region.DeallocOp.name,
    *(stream.OPS - stream.DMA_OPS), "scf.for", "affine.for",
    "scf.while", "func.func", "builtin.module", "scf.execute_region",
    "builtin.unrealized_conversion_cast",
}  # fmt: skip
_BRANCH = {
    "scf.if", "func.call", "func.return", "scf.condition", "cf.br", "cf.cond_br",
    region.ReserveOp.name,  # a compare and branch around a growable tape's doubling
}  # fmt: skip

# Enzyme-MLIR's tape ops (enzyme-autodiff) cost what their tape/memref twins cost (an
# enzyme.load/store's trailing sizes operands are not indices: zip stops at the rank).
ACCESS_OPS = ("memref.load", "memref.store", "affine.load", "affine.store",
               enzyme.LoadOp.name, enzyme.StoreOp.name)  # fmt: skip
PUSH_OPS = (tape.PushOp.name, enzyme.PushOp.name)
TAPE_OPS = (*PUSH_OPS, tape.PopOp.name, enzyme.PopOp.name)
RECORD_OPS = (region.WriteOp.name, region.ReadOp.name)
_IDEAL_ATTR = "tapeflow.ideal_tape"  # transforms.lower_tape.IDEAL_TAPE_ATTR


def classify(op: Operation) -> str:
    """The op class (a key of `[ops.*]`) that `op` is charged as."""
    name = op.name
    if name in _FREE:
        return "free"
    if name in _BRANCH:
        return "branch"
    if name in ("scf.yield", "affine.yield"):
        return "branch" if is_loop_end(op) else "free"
    cls = cost_class(name)  # scalar ops: the table's class (tapeflow.semantics)
    if cls is not None:
        return cls
    if name in ACCESS_OPS or name in TAPE_OPS or name in RECORD_OPS:
        return "mem"
    if name in stream.DMA_OPS:
        return "dma"
    return ""  # unknown: charged as `int`, and listed in the report


def memory_charges(op: Operation) -> tuple[int, int, bool, int] | None:
    """(loads, stores, in the scratchpad, bytes) one execution of a memory op is charged
    (the listener's rule, which `fastsim.op_charges` reuses); None for other ops."""
    name = op.name
    if name in ACCESS_OPS:
        mtype = op.memref.type  # type: ignore[attr-defined]
        load = name.endswith("load")
        return (int(load), int(not load), is_spm(mtype.memory_space),
                element_size(mtype.element_type))  # fmt: skip
    if name in TAPE_OPS:
        size = element_size(op.operands[0].type.element_type)  # type: ignore[attr-defined]
        return (0, 1, False, size) if name in PUSH_OPS else (1, 0, False, size)
    if name in RECORD_OPS:
        ttype = op.operands[0].type
        sizes = [element_size(f) for f in ttype.record.field_types]  # type: ignore[attr-defined]
        n = len(sizes)
        write = name == region.WriteOp.name
        return (0 if write else n, n if write else 0, ttype.in_spm, sum(sizes))  # type: ignore[attr-defined]
    return None


def is_ideal_tape(op: Operation) -> bool:
    """A tape access tagged free (`tapeflow.ideal_tape`): counted, no memory access (a
    load/store of the Enzyme layout's cached values, or an Enzyme-MLIR push/pop)."""
    return _IDEAL_ATTR in op.attributes and (op.name in ACCESS_OPS or op.name in TAPE_OPS)


def copy_charges(src: Any, dst: Any) -> tuple[int, int, bool, int]:
    """`memory_charges` of one memref.copy from `src` to `dst` (it depends on their sizes):
    every element read and written through the caches (the listener's and the fast
    path's `_Runtime.copy` rule)."""
    return (src.size, dst.size, False,
            src.size * buffer_memory(src)[3] + dst.size * buffer_memory(dst)[3])  # fmt: skip


def mem_columns(loads: int, stores: int, spm: bool, nbytes: int,
                ideal: bool = False) -> tuple[int, ...]:  # fmt: skip
    """What charges (`memory_charges`) add to the counts `MEM_COLUMNS` (the one rule the
    listener's `charge` and `fastsim.op_charges` apply); `ideal`: a free tape access
    (`is_ideal_tape`), only counted."""
    if ideal:
        return (0, 0, 0, 0, 0, 0, loads, stores)
    return (loads, stores, 0, loads, stores, nbytes, 0, 0) if spm else \
        (loads, stores, nbytes, 0, 0, 0, 0, 0)  # fmt: skip


MEM_COLUMNS = ("loads", "stores", "cache_bytes", "spm_loads", "spm_stores", "spm_bytes",
               "ideal_loads", "ideal_stores")  # fmt: skip


def charge(c: Any, loads: int, stores: int, spm: bool, nbytes: int, ideal: bool = False,
           ) -> None:  # fmt: skip
    """Adds charges (`memory_charges`) to the counts `c` (the `MEM_COLUMNS` of `Counts`)
    by `mem_columns`' rule."""
    dl, ds, dc, dsl, dss, dsb, dil, dis = mem_columns(loads, stores, spm, nbytes, ideal)
    c.ideal_loads += dil
    c.ideal_stores += dis
    c.loads += dl
    c.stores += ds
    c.cache_bytes += dc
    c.spm_loads += dsl
    c.spm_stores += dss
    c.spm_bytes += dsb


def is_loop_end(op: Operation) -> bool:
    """An `scf.yield`/`affine.yield` that ends an iteration of an scf.for, affine.for or
    scf.while body: where a phase may close after `core.window_ops` charged ops."""
    if op.name not in ("scf.yield", "affine.yield"):
        return False
    parent = op.parent_op()
    return parent is not None and parent.name in ("scf.for", "affine.for", "scf.while")


def is_charged(op: Operation) -> bool:
    """True when `op` counts towards the phase window (every op class but `free`)."""
    return classify(op) != "free"


def pc_count(op: Operation) -> int:
    """How many PCs (instruction addresses) `op` occupies: one per field for a
    region.read/write (each field is its own load/store instruction), two for memref.copy
    (its load and its store), one otherwise. PCs are numbered in first-execution order."""
    if op.name in RECORD_OPS:
        return max(1, len(op.operands[0].type.record.field_types))  # type: ignore[attr-defined]
    if op.name == "memref.copy":
        return 2
    return 1


def buffer_memory(array: Any) -> tuple[Any, int, int, int]:
    """(memory object, byte offset, bytes, element bytes) of a memref's storage. A memref
    of memrefs (a growable tape's slot) holds its elements in a list (`ObjectStorage`):
    each is a pointer, 8 bytes."""
    ptr = array.data_ptr
    raw = getattr(ptr, "raw", None)
    if raw is None:
        return ptr, 0, 8 * len(ptr), 8
    return raw.memory, raw.offset, len(raw.memory), ptr.xtype.compile_time_size

