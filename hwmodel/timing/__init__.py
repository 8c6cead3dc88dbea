"""The timing rules: how the counts of a run become cycles, one rule per kind of core.

`rule_for` (`rule_of(machine)`) is the one place that picks a preset's rule; the listener
(`tapeflow.hwmodel.listener`) times every phase by it, and the fast path drives that same
listener, so both paths apply one rule. The rules (`RULES`), all timed per phase by
`tapeflow.hwmodel.timing.phases` (its docstring has the equations):

- "sum" (`core.overlap = "sum"`, default-45nm: an out-of-order CPU, ECM-style): a phase's
  memory terms add up and overlap its arithmetic;
- "max" (`core.overlap = "max"`): every term overlaps every other;
- "lockstep" (`core.lockstep` without `datapath.enabled`: gem5-SALAM's lockstep_mode, no
  dependence graph): every access's latency stalls the datapath, `core.lockstep_mlp` of
  them overlapping;
- "datapath" (`datapath.enabled`, accel-salam): the dependence-level datapath rule of
  `tapeflow.hwmodel.timing.datapath` (lockstep steps over each executed block's dependence
  graph) gives the phase's `T_datapath`, bound below by the L2 link's and DRAM's times.

A new rule is a name in `RULES`, the settings that choose it in `rule_for`, its formula in
`FORMULAS` and its own module in this package.
"""

from __future__ import annotations

from tapeflow.hwmodel.config import Machine

RULES = ("sum", "max", "lockstep", "datapath")

FORMULAS = {
    "sum": "max(T_OL, T_nOL + T_L2 + T_DRAM) + T_exposed + T_late",
    "max": "max(T_OL, T_nOL, T_L2, T_DRAM, T_exposed) + T_late",
    "lockstep": "max(T_OL, T_nOL, T_L2, T_DRAM) + T_hit + T_exposed + T_late",
    "datapath": "max(T_datapath, T_L2, T_DRAM) + T_late",
}
"""One phase's cycles under each rule, as phases.py's docstring writes them (the reports
print it)."""


def rule_for(lockstep: bool, overlap: str | None, datapath: bool = False) -> str:
    """The timing rule (one of `RULES`) of a core with these `core.lockstep`,
    `core.overlap` and `datapath.enabled` settings: the datapath first, then lockstep,
    then the overlap."""
    if datapath:
        return "datapath"
    if lockstep:
        return "lockstep"
    return "max" if overlap == "max" else "sum"


def rule_of(machine: Machine) -> str:
    """The timing rule of `machine` (`rule_for` its core)."""
    core = machine.raw["core"]
    return rule_for(core["lockstep"], core["overlap"],
                    bool(machine.raw.get("datapath", {}).get("enabled", False)))
