"""Adjoints of the `memref` ops: the shadow-memory rules of DESIGN.md.

- `v = memref.load A[i]`: `dA[i] += dv`.
- `memref.store v, A[i]`: `dv += dA[i]`, then `dA[i] = 0` (the overwritten value's
  adjoint is dead). The zeroing happens even when `v` is inactive.
- `memref.alloc`/`alloca`/`dealloc` have no reverse code; the driver gives an active
  buffer a zeroed shadow next to it and moves deallocations after the reverse sweep.
"""

from __future__ import annotations

from xdsl.dialects import arith, memref
from xdsl.ir import Operation

from tapeflow.transforms.autodiff.rules import ReverseBuilder, Rule


def _load(g: ReverseBuilder, op: memref.LoadOp) -> None:
    d = g.adjoint(op.res)
    shadow = g.shadow(op.memref)
    if d is None or shadow is None:
        return
    indices = [g.primal(i) for i in op.indices]
    old = g.b.insert(memref.LoadOp.get(shadow, indices)).res
    new = g.b.insert(arith.AddfOp(old, d)).result
    g.b.insert(memref.StoreOp.get(new, shadow, indices))


def _store(g: ReverseBuilder, op: memref.StoreOp) -> None:
    shadow = g.shadow(op.memref)
    if shadow is None:
        return
    indices = [g.primal(i) for i in op.indices]
    if g.is_active(op.value):
        g.accumulate(op.value, g.b.insert(memref.LoadOp.get(shadow, indices)).res)
    zero = g.const(0.0, op.value.type)
    g.b.insert(memref.StoreOp.get(zero, shadow, indices))


def _nothing(g: ReverseBuilder, op: Operation) -> None:
    """Handled by the driver (shadow allocation, deallocation after the reverse sweep)."""


RULES: dict[type[Operation], Rule] = {
    memref.LoadOp: _load,
    memref.StoreOp: _store,
    memref.AllocOp: _nothing,
    memref.AllocaOp: _nothing,
    memref.DeallocOp: _nothing,
}
