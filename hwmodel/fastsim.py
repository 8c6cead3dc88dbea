"""`ModelTrace`: the hardware model's counts from a compiled run (`hwmodel.compiled`).

The op-by-op model (`tapeflow.hwmodel.listener.HardwareModel`, an interpreter listener) is the
reference. This adapter drives the *same* `HardwareModel` object from a compiled run, so
that the cache simulator, the DMA/timing code and `build_report` are the model's own:

- the access stream, with the model's base addresses (given at each buffer's first
  access, in the same order as the listener) and PCs (the order in which ops first run),
  is fed to `model.cache.access_batch` in batches;
- op counts per class, loads/stores and bytes per memory are computed from the segment
  counters (`Trace.block_counts`) and each op's static contribution, and written into
  `model.counts`; before a DMA, acquire or wait they are brought up to that exact op
  (the segment's ops after it are subtracted), so `model.now()` is the listener's;
- allocation, DMA and FIFO ops run through the interpreter's own implementation with the
  model's `will_interpret_op`/`did_interpret_op` around them (SPM capacity, high-water
  mark, tape bytes, DMA timing and stalls are the model's code).
- window phase ends (`core.window_ops`, see hwmodel/timing/phases.py): the compiled code keeps a
  count of charged ops per segment entry and checks it at every loop-iteration end
  (bulk-counted loops compute the iteration of their next phase end); each end is
  recorded with its access position and segment counts (`Trace.phase_ends`) and replayed
  at the next flush: the cache runs up to each end (`CacheSim.access_batch_cuts`, one
  call per batch) and `HardwareModel.close_phases_at` closes them with those counts.

`tapeflow.simulate.simulate_fast` runs a program with this trace and returns the same
`SimResult` as the op-by-op `tapeflow.simulate.simulate`; `simulate_auto` falls back to the
op-by-op path when the compiler does not support an op.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from tapeflow.hwmodel.compiled.module import MEMREF, RECORDS, TAPE, CompiledModule, Trace
from tapeflow.hwmodel.cache import DP_CYCLES
from tapeflow.hwmodel.config import OP_CLASSES
from tapeflow.hwmodel.costs import MEM_COLUMNS, classify, is_ideal_tape, mem_columns
from tapeflow.hwmodel.costs import memory_charges
from tapeflow.hwmodel.listener import HardwareModel
from tapeflow.dialects import stream
from tapeflow.semantics.memory import tape_base

_NCLS = len(OP_CLASSES)
_CLASS_INDEX = {name: i for i, name in enumerate(OP_CLASSES)}
_FREE = _CLASS_INDEX["free"]
# Columns after the op classes: the counts `costs.mem_columns` charges.
LOADS, STORES, CACHE_BYTES, SPM_LOADS, SPM_STORES, SPM_BYTES = range(_NCLS, _NCLS + 6)
IDEAL_LOADS, IDEAL_STORES = range(_NCLS + 6, _NCLS + 8)
_NCOLS = _NCLS + len(MEM_COLUMNS)

_TIMED = stream.DMA_OPS | stream.WAIT_OPS


def op_charges(op: Operation) -> np.ndarray:
    """What one execution of `op` adds to the model's counts (as `will_interpret_op`:
    its class, and `costs.memory_charges`)."""
    v = np.zeros(_NCOLS, dtype=np.int64)
    cls = classify(op) or "int"
    v[_CLASS_INDEX[cls]] = 1
    charges = memory_charges(op)
    if charges is not None:
        v[LOADS:] += mem_columns(*charges, ideal=is_ideal_tape(op))
    return v


class ModelTrace(Trace):
    """A compiled run that drives one or several `HardwareModel`s (module docstring).

    With several models (machines that differ, e.g. in cache sizes), the program runs
    once and every model hears the same run: the cache-capacity sweep costs one
    execution plus one cache simulation per machine."""

    def __init__(
        self, program: CompiledModule, model: HardwareModel | Sequence[HardwareModel],
        batch_size: int,
    ):  # fmt: skip
        super().__init__(program, batch_size)
        self.models = [model] if isinstance(model, HardwareModel) else list(model)
        self.model = self.models[0]
        self._charges = _segment_charges(program)
        self._tails: dict[Operation, np.ndarray] = {}
        self._dp_vecs: dict[Any, np.ndarray] = {}  # by `Datapath.static_key`
        built: dict[Any, dict[Operation, Any]] = {}
        for m in self.models:  # the datapaths that charge alike build each graph once
            if m.datapath is not None:
                m.datapath.built = built.setdefault(m.datapath.static_key, {})
        windows = {int(m.machine.raw["core"]["window_ops"]) for m in self.models}
        if len(windows) != 1:
            raise ValueError(f"the machines differ in core.window_ops ({sorted(windows)})")
        self.window_ops = windows.pop()

    # -- addresses and PCs: the model's rules, the model's state ---------------------------
    def base_of(self, kind: str, obj: Any, size: int) -> int:
        bases = {_model_base(m, kind, obj, size) for m in self.models}
        if len(bases) != 1:  # pragma: no cover - the rule does not depend on the machine
            raise AssertionError(f"hardware models disagree on a base address: {bases}")
        return bases.pop()

    def tape_peak(self, cache: list[Any], peak: int) -> None:
        for m in self.models:
            tapes = m._tapes  # pyright: ignore[reportPrivateUsage]
            obj, base, old = tapes[id(cache)]
            tapes[id(cache)] = (obj, base, max(old, peak))

    def first(self, k: int) -> None:
        before = len(self.order)
        super().first(k)
        events = self.program.event_set
        for op in self.order[before:]:
            for m in self.models:
                m._pcs[op] = self.pc_of[op]  # pyright: ignore[reportPrivateUsage]
                if op not in events and not classify(op):
                    u = m.counts.unclassified
                    u[op.name] = u.get(op.name, 0) + 1

    def consume(self, addrs: Any, pcs: Any, writes: Any) -> None:
        if self.phase_ends:  # window phase ends inside this batch: replay them in order
            start = self.flushed - len(addrs)
            cuts = [pos - start for pos, _, _ in self.phase_ends]
            snaps = [m.cache.access_batch_cuts(addrs, pcs, writes, cuts) for m in self.models]
            self._replay_phase_ends(snaps)
            return
        for m in self.models:
            m.cache.access_batch(addrs, pcs, writes)

    def flush(self) -> None:
        super().flush()
        if self.phase_ends:  # phase ends with no access since the last flush
            snaps = [[m.cache.raw_counters()] * len(self.phase_ends) for m in self.models]
            self._replay_phase_ends(snaps)

    def _replay_phase_ends(self, snaps: list[Any]) -> None:
        """Closes each model's window phases (recorded by `Trace.window_end`/`window_bulk`)
        with the counts and cache counters at their ends, as the listener does: one
        `close_phases_at` call per model."""
        ends = self.phase_ends
        self.phase_ends = []
        counts = np.asarray([bc for _, bc, _ in ends], dtype=np.int64)
        vecs = counts @ self._charges
        dyn = np.asarray([d for _, _, d in ends], dtype=np.int64)
        loads = vecs[:, LOADS] + dyn[:, 0]
        stores = vecs[:, STORES] + dyn[:, 1]
        for m, out in zip(self.models, snaps):
            if m.datapath is not None:  # the static blocks' datapath cycles, as `_snapshot`
                out = _with_static(out, counts @ self._dp_static(m))
            m.close_phases_at(vecs[:, :_NCLS], loads, stores, out)

    # -- counts ----------------------------------------------------------------------------
    def sync(self, before: Operation | None = None) -> None:
        """Brings each model's counts (and cache) up to now; with `before`, to just before
        that op (which the models are about to hear of)."""
        self.flush()
        counts = np.asarray(self.block_counts, dtype=np.int64)
        vec = counts @ self._charges
        if before is not None:
            vec = vec - self._tail(before)
        for m in self.models:
            c = m.counts
            if m.datapath is not None:
                c.dp_static = int(counts @ self._dp_static(m))
                if before is not None:
                    seg = self.program.segments[self.program.segment_of[before]]
                    c.dp_static -= sum(m.datapath.static_charge(o)
                                       for o in seg[seg.index(before) :])  # fmt: skip
            c.ops = [int(x) for x in vec[:_NCLS]]
            c.loads = int(vec[LOADS]) + self.dyn[0]
            c.stores = int(vec[STORES]) + self.dyn[1]
            c.cache_bytes = int(vec[CACHE_BYTES]) + self.dyn[2]
            c.spm_loads = int(vec[SPM_LOADS])
            c.spm_stores = int(vec[SPM_STORES])
            c.spm_bytes = int(vec[SPM_BYTES])
            c.ideal_loads = int(vec[IDEAL_LOADS])
            c.ideal_stores = int(vec[IDEAL_STORES])

    def _dp_static(self, m: HardwareModel) -> np.ndarray:
        """Per segment: the datapath cycles one execution charges (`static_charge`), once
        for the models whose datapaths charge alike."""
        dp = m.datapath
        assert dp is not None
        vec = self._dp_vecs.get(dp.static_key)
        if vec is None or len(vec) != len(self.program.segments):
            vec = np.asarray([sum(dp.static_charge(op) for op in seg)
                              for seg in self.program.segments] or [0], dtype=np.int64)  # fmt: skip
            self._dp_vecs[dp.static_key] = vec
        return vec

    def _tail(self, op: Operation) -> np.ndarray:
        """Charges of `op` and the ops after it in its segment (counted, not yet run)."""
        tail = self._tails.get(op)
        if tail is None:
            seg = self.program.segments[self.program.segment_of[op]]
            tail = np.zeros(_NCOLS, dtype=np.int64)
            for o in seg[seg.index(op) :]:
                tail += op_charges(o)
            self._tails[op] = tail
        return tail

    def run_event(self, k: int, op: Operation, args: tuple[Any, ...]) -> tuple[Any, ...]:
        timed = op.name in _TIMED
        if timed:
            self.sync(op)
        closes = self.model._closes  # pyright: ignore[reportPrivateUsage]
        for m in self.models:
            m.will_interpret_op(op, args)
        results = tuple(self.program.run_op(op, args))
        for m in self.models:
            m.did_interpret_op(op, results)
        if timed and self.model._closes != closes:  # pyright: ignore[reportPrivateUsage]
            # A DMA fence closed a phase at `op` (after charging it): the window restarts
            # just after `op` (the segment counter already holds `op` and the ops after it).
            after = self._tail(op) - op_charges(op)
            self.window[1] = self.window[0] - int(after[:_NCLS].sum() - after[_FREE])
        return results


def _with_static(rows: Any, static: np.ndarray) -> Any:
    """Counter rows (`access_batch_cuts`' snapshots) with `static` added to their
    `DP_CYCLES` slot (new rows: the python backend may repeat one row object)."""
    if isinstance(rows, np.ndarray):
        rows = rows.copy()
        rows[:, DP_CYCLES] += static
        return rows
    out = [list(row) for row in rows]
    for row, s in zip(out, static):
        row[DP_CYCLES] += int(s)
    return out


def _model_base(m: HardwareModel, kind: str, obj: Any, size: int) -> int:
    """The base address `m` gives a buffer at its first access (its own rule and state)."""
    if kind == MEMREF:
        return m._base_of(obj, size)  # pyright: ignore[reportPrivateUsage]
    if kind == RECORDS:
        return m.records_base(obj)
    assert kind == TAPE
    tapes = m._tapes  # pyright: ignore[reportPrivateUsage]
    entry = (obj, tape_base(len(tapes)), 0)
    tapes[id(obj)] = entry
    return entry[1]


def _segment_charges(program: CompiledModule) -> np.ndarray:
    cached = getattr(program, "_model_charges", None)
    if cached is not None:
        return cached
    out = np.zeros((max(1, len(program.segments)), _NCOLS), dtype=np.int64)
    memo: dict[Operation, np.ndarray] = {}
    for k, ops in enumerate(program.segments):
        for op in ops:
            v = memo.get(op)
            if v is None:
                v = memo[op] = op_charges(op)
            out[k] += v
    program._model_charges = out  # type: ignore[attr-defined]
    return out


def compiled(module: ModuleOp) -> CompiledModule:
    """`CompiledModule(module)` (compile once and pass the program around to reuse it:
    nothing is cached here, since passes mutate modules in place)."""
    return CompiledModule(module)
