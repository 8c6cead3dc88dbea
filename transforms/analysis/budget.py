"""What the scratchpad budget decides in a `tapeflow` compile, replayed for other budgets.

The `tapeflow` pipeline's output depends on its scratchpad budget (`spm-bytes`, and the
machine's `spm.size` through the costs it decides with) in two places only: the cost
model's decision per region loop (`cost_model.decide`) and the records per layer of each
function (`layers.layer_records`). A compile run inside `record_budget()` records both
rules with every other input bound (`decided`, `layered`); `BudgetRecord.key` replays
them for another budget, so that a caller compiling one kernel for several scratchpad
capacities (`tapeflow-bench`'s scratchpad sweep) compiles once per distinct program:
budgets with equal keys compile to the same program.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from tapeflow.transforms.analysis.cost_model import Decision, MachineCosts

Rule = Callable[..., Decision]
"""A region loop's `decide`, every input but the costs and the budget bound: called as
`rule(costs, spm_bytes=N)`."""


@dataclass
class BudgetRecord:
    """The budget's rules in one compile: each region loop's decision (what it was, and
    the rule to redo it) and each layered function's records per layer."""

    decisions: list[tuple[tuple[bool, bool], Rule]] = field(default_factory=list)
    layers: list[Callable[[int], int]] = field(default_factory=list)

    def key(self, costs: MachineCosts | None, spm_bytes: int) -> tuple[int, ...] | None:
        """Records per layer of each function for this budget when every region loop is
        decided as in the recorded compile (then equal keys, the same program); None
        when a decision changes (only compiling tells what the program becomes)."""
        for was, rule in self.decisions:
            now = rule(costs, spm_bytes=spm_bytes)
            if (now.stream, now.regions) != was:
                return None
        return tuple(layer(spm_bytes) for layer in self.layers)


_SINKS: list[BudgetRecord] = []


@contextmanager
def record_budget() -> Iterator[BudgetRecord]:
    """Records the budget's rules of the compiles run inside (`BudgetRecord`)."""
    sink = BudgetRecord()
    _SINKS.append(sink)
    try:
        yield sink
    finally:
        _SINKS.remove(sink)


def decided(rule: Rule, costs: MachineCosts | None, spm_bytes: int) -> Decision:
    """`rule(costs, spm_bytes=spm_bytes)`, recorded when a `record_budget()` is open."""
    decision = rule(costs, spm_bytes=spm_bytes)
    if _SINKS:
        _SINKS[-1].decisions.append(((decision.stream, decision.regions), rule))
    return decision


def layered(rule: Callable[[int], int], spm_bytes: int) -> int:
    """`rule(spm_bytes)` (a function's records per layer), recorded likewise."""
    if _SINKS:
        _SINKS[-1].layers.append(rule)
    return rule(spm_bytes)
