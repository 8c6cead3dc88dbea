"""`tapeflow-enzyme-ideal-tape`: Enzyme-MLIR's tape counted but free, as
`tapeflow-lower-tape{ideal_tape=true}` makes the Enzyme layout's (gem5-SALAM's "ad" runs,
where their modified Enzyme tags its tape's loads and stores, which commit at once).

Run after `enzyme-autodiff`. Enzyme-MLIR keeps its tape in two forms: caches
(`enzyme.push`/`enzyme.pop`) and buffers it sized itself (the `memref.alloc`s
`enzyme-autodiff` marks `tapeflow.tape`), written and read by `memref`/`enzyme`
stores and loads, a buffer reaching the reverse sweep through a cache of buffers or a
buffer of buffers. Every push and pop, and every load and store of such a buffer, gets
the unit attribute `tapeflow.ideal_tape`: the hardware model counts it
(`ops.ideal_tape`) and charges it no memory access, port or latency. Nothing else
changes, so the gradient is the same, bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from tapeflow.dialects import enzyme
from tapeflow.transforms.lower_tape import IDEAL_TAPE_ATTR, TAPE_ATTR

_ACCESSES = (memref.LoadOp, memref.StoreOp, enzyme.LoadOp, enzyme.StoreOp)


def is_tape_buffer(value: SSAValue, seen: frozenset[SSAValue] = frozenset()) -> bool:
    """Whether `value` is one of Enzyme's tape buffers: allocated `tapeflow.tape`, or
    popped from a cache (loaded from a buffer) that only ever holds such buffers."""
    owner = value.owner
    if value in seen or not isinstance(owner, Operation):
        return False
    seen = seen | {value}
    if isinstance(owner, memref.AllocOp | memref.AllocaOp):
        return TAPE_ATTR in owner.attributes
    if isinstance(owner, memref.CastOp):
        return is_tape_buffer(owner.source, seen)
    if isinstance(owner, memref.LoadOp | enzyme.LoadOp):
        return is_tape_buffer(owner.memref, seen)
    if isinstance(owner, enzyme.PopOp):
        pushes = [u.operation for u in owner.cache.uses if isinstance(u.operation, enzyme.PushOp)]
        return bool(pushes) and all(is_tape_buffer(p.value, seen) for p in pushes)
    return False


def tag_ideal_tape(module: ModuleOp) -> int:
    """Tags Enzyme-MLIR's tape accesses in `module` free (module docstring); returns how
    many ops it tagged."""
    tagged: list[Operation] = [
        op for op in module.walk()
        if isinstance(op, enzyme.PushOp | enzyme.PopOp)
        or (isinstance(op, _ACCESSES) and is_tape_buffer(op.memref))
    ]  # fmt: skip
    for op in tagged:
        op.attributes[IDEAL_TAPE_ATTR] = builtin.UnitAttr()
    return len(tagged)


@dataclass(frozen=True)
class EnzymeIdealTapePass(ModulePass):
    """Enzyme-MLIR's tape accesses counted but free (module docstring)."""

    name = "tapeflow-enzyme-ideal-tape"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        tag_ideal_tape(op)
