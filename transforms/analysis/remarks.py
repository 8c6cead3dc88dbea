"""Remarks: why a pass did what it did, for `tapeflow-opt --remarks`.

`remark(op, text)` records one `remark: file:line:col: text` line (collected by
`collect_remarks()`; nothing is recorded outside it); `cache_remark` names the cached
value in source-like terms (`describe`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.dialects import arith, memref
from xdsl.ir import Block, Operation, SSAValue

from tapeflow.diagnostics import location_of
from tapeflow.dialects import tape
from tapeflow.transforms.analysis.constants import const_int

_SINKS: list[list[str]] = []


@contextmanager
def collect_remarks() -> Iterator[list[str]]:
    """Collects the remarks of the passes run inside (`tapeflow-opt --remarks`)."""
    sink: list[str] = []
    _SINKS.append(sink)
    try:
        yield sink
    finally:
        _SINKS.remove(sink)


def remark(op: Operation, text: str) -> None:
    """Records `remark: file:line:col: text` (located at `op`) when remarks are collected."""
    if _SINKS:
        where = location_of(op) or "<unknown>"
        _SINKS[-1].append(f"remark: {where}: {text}")


_BINARY = {arith.AddiOp: "+", arith.SubiOp: "-", arith.MuliOp: "*", arith.AddfOp: "+",
           arith.SubfOp: "-", arith.MulfOp: "*", arith.DivfOp: "/"}  # fmt: skip


def describe(value: SSAValue, depth: int = 0) -> str:
    """A short source-like name of a cached value: `u[i - 1]`, `x * y`, `math.tanh(..)`."""
    owner = value.owner
    if isinstance(owner, Block) or depth > 2:
        return value.name_hint or "..."
    c = const_int(value)
    if c is not None:
        return str(c)
    if isinstance(owner, arith.ConstantOp):
        return str(getattr(owner.value, "value", owner.value).data)  # type: ignore[union-attr]
    if isinstance(owner, memref.LoadOp):
        indices = ", ".join(describe(i, depth + 1) for i in owner.indices)
        return f"{describe(owner.memref, depth + 1)}[{indices}]"
    symbol = _BINARY.get(type(owner))  # type: ignore[arg-type]
    if symbol is not None:
        a, b = (describe(o, depth + 1) for o in owner.operands)
        return f"{a} {symbol} {b}"
    if value.name_hint:
        return value.name_hint
    args = ", ".join(describe(o, depth + 1) for o in owner.operands)
    return f"{owner.name}({args})"


def cache_remark(push: tape.PushOp, text: str) -> None:
    """`cache of 'u[i - 1]' <text>`, located at the cached value (else the push)."""
    value = push.value
    where = value.owner if isinstance(value.owner, Operation) else push
    remark(where, f"cache of '{describe(value)}' {text}")
