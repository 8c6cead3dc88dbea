"""Adjoints of the `memref` ops: the shadow-memory rules of DESIGN.md.

- `v = memref.load A[i]`: `dA[i] += dv`.
- `memref.store v, A[i]`: `dv += dA[i]`, then `dA[i] = 0` (the overwritten value's
  adjoint is dead). The zeroing happens even when `v` is inactive.
- `memref.copy src, dst`: `dsrc += ddst`, then `ddst = 0` (a loop nest).
- `memref.alloc`/`alloca`/`dealloc` have no reverse code; the driver gives an active
  buffer a zeroed shadow next to it and moves deallocations after the reverse sweep.
- `memref.cast` has none either: its shadow is the same cast of its source's shadow.
"""

from __future__ import annotations

from tapeflow.transforms.autodiff.builder import ReverseBuilder, Rule
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType
from xdsl.ir import Block, Operation, Region, SSAValue


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


def _copy(g: ReverseBuilder, op: memref.CopyOp) -> None:
    """dst = src elementwise: dsrc[i] += ddst[i]; ddst[i] = 0, as a loop nest."""
    dst_shadow = g.shadow(op.destination)
    if dst_shadow is None:
        return
    src_shadow = g.shadow(op.source)
    mtype = op.source.type
    assert isinstance(mtype, MemRefType)
    index = IndexType()
    c0 = g.b.insert(arith.ConstantOp(IntegerAttr(0, index))).result
    c1 = g.b.insert(arith.ConstantOp(IntegerAttr(1, index))).result
    bounds: list[SSAValue] = []
    for dim, size in enumerate(mtype.get_shape()):
        if size < 0:
            cd = g.b.insert(arith.ConstantOp(IntegerAttr(dim, index))).result
            bounds.append(
                g.b.insert(memref.DimOp.from_source_and_index(g.primal(op.source), cd)).result
            )
        else:
            bounds.append(g.b.insert(arith.ConstantOp(IntegerAttr(size, index))).result)
    zero = g.const(0.0, mtype.element_type)

    def body(ivs: list[SSAValue]) -> list[Operation]:
        d = memref.LoadOp.get(dst_shadow, ivs)
        ops: list[Operation] = [d]
        if src_shadow is not None:
            old = memref.LoadOp.get(src_shadow, ivs)
            new = arith.AddfOp(old, d)
            ops += [old, new, memref.StoreOp.get(new, src_shadow, ivs)]
        ops.append(memref.StoreOp.get(zero, dst_shadow, ivs))
        return ops

    def nest(depth: int, ivs: list[SSAValue]) -> list[Operation]:
        if depth == len(bounds):
            return body(ivs)
        block = Block(arg_types=[index])
        block.add_ops(nest(depth + 1, [*ivs, block.args[0]]))
        block.add_op(scf.YieldOp())
        return [scf.ForOp(c0, bounds[depth], c1, [], Region(block))]

    for o in nest(0, []):
        g.b.insert(o)


def _nothing(g: ReverseBuilder, op: Operation) -> None:
    """Handled by the driver (shadow allocation, deallocation after the reverse sweep)."""


RULES: dict[type[Operation], Rule] = {
    memref.LoadOp: _load,
    memref.StoreOp: _store,
    memref.CopyOp: _copy,
    memref.AllocOp: _nothing,
    memref.AllocaOp: _nothing,
    memref.DeallocOp: _nothing,
    memref.GetGlobalOp: _nothing,  # its shadow is the global `<name>_shadow` (driver)
    memref.CastOp: _nothing,  # its shadow is the cast of its source's shadow (driver)
}
