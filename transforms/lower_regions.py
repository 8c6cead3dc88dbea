"""`tapeflow-lower-regions`: the "regions only" variant, every tape in plain DRAM buffers.

Run after `tapeflow-regions` (instead of `tapeflow-layers`/`tapeflow-stream`), it yields a
program whose gradient tape is entirely in DRAM, so that the effect of the record layout
alone can be measured by the hardware model:

- every region tape stays a `!region.tape<R>` in DRAM, which *is* its memory layout: one
  contiguous buffer per tape, record `i` at byte `i * R.size`, field `f` at
  `i * R.size + R.offsets[f]` (the interpreter's `RecordBuffer` and the hardware model
  charge exactly those bytes). The pass folds a constant record count into the
  `count` property and records the tape's size in bytes as `tapeflow.bytes` on
  `region.alloc` when it is known at compile time;
- the caches `tapeflow-regions` left alone (pushes under nested `scf.if`s, ...) are
  lowered with the baseline's layout (`tapeflow-lower-tape`), so no `tape` op is left and
  both variants treat those values the same way.

A region tape already in the scratchpad (output of `tapeflow-stream`) is an error: the
pass is the DRAM-only alternative to streaming. Lowering records further to
`memref<N x i8>` plus views is not done: xDSL's interpreter has no `memref.view`, and the
hardware model charges the same bytes either way.
"""

from __future__ import annotations

from dataclasses import dataclass

from tapeflow.dialects import region, tape
from tapeflow.transforms.analysis.constants import const_int
from tapeflow.transforms.index_utils import erase_dead
from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from tapeflow.diagnostics import op_error

BYTES_ATTR = "tapeflow.bytes"
"""On a DRAM `region.alloc` with a compile-time count: the tape's size in bytes."""


@dataclass(frozen=True)
class LowerRegionsPass(ModulePass):
    """Keeps region tapes as contiguous DRAM record buffers; lowers leftover caches."""

    name = "tapeflow-lower-regions"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        allocs = [o for o in op.walk() if isinstance(o, region.AllocOp)]
        for alloc in allocs:
            tape_type = alloc.tape.type
            assert isinstance(tape_type, region.TapeType)
            if tape_type.in_spm:
                raise PassFailedException(
                    op_error(
                        alloc,
                        "is a scratchpad buffer: tapeflow-lower-regions runs on the output "
                        "of tapeflow-regions, not of tapeflow-stream",
                    )
                )
        for alloc in allocs:
            count = alloc.static_count
            if count is None and alloc.dynamic_count is not None:
                folded = const_int(alloc.dynamic_count)
                if folded is not None and folded >= 1:
                    new = region.AllocOp(alloc.tape.type, folded)  # type: ignore[arg-type]
                    new.attributes.update(alloc.attributes)
                    Rewriter.insert_op(new, InsertPoint.before(alloc))
                    old_count = alloc.dynamic_count
                    alloc.tape.replace_all_uses_with(new.tape)
                    Rewriter.erase_op(alloc)
                    erase_dead(old_count)
                    alloc, count = new, folded
            if count is not None:
                size = region.record_of(alloc.tape).size
                alloc.attributes[BYTES_ATTR] = IntegerAttr(count * size, i64)
        if any(isinstance(o, tape.InitOp) for o in op.walk()):
            from tapeflow.transforms.lower_tape import LowerTapePass

            LowerTapePass().apply(ctx, op)
