"""The cost model predicts a lockstep core's tape latency by that core's timing rule."""

from tapeflow.hwmodel.config import load_machine
from tapeflow.machines import machine_costs
from tapeflow.transforms.analysis.cost_model import lockstep_hits


def _costs(*sets: str):
    return machine_costs(load_machine("accel-salam", list(sets)), "accel-salam")


def test_datapath_rule_launches_a_records_accesses_together() -> None:
    """accel-salam's datapath rule: a record's caches push (pop) in one dependence level,
    `ports x in_flight` requests per step, each step costing the cache's latency beyond
    the scratchpad's (3 - 1 cycles): 2 sweeps x 10 records x ceil(caches / 4) x 2."""
    costs = _costs("datapath.in_flight=4")
    assert (costs.rule, costs.in_flight) == ("datapath", 4)
    assert lockstep_hits(costs, 10, 4) == 2 * 10 * 1 * 2
    assert lockstep_hits(costs, 10, 5) == 2 * 10 * 2 * 2
    assert lockstep_hits(_costs("datapath.in_flight=4", "datapath.ports=2"), 10, 5) == 40


def test_phase_rule_lockstep_pays_every_access() -> None:
    """Without the datapath rule, lockstep pays each access, lockstep_mlp of them at once."""
    costs = _costs("datapath.enabled=false")
    assert costs.rule == "lockstep"
    assert lockstep_hits(costs, 10, 5) == 2 * 10 * 5 * 2
    assert lockstep_hits(_costs("datapath.enabled=false", "core.lockstep_mlp=2"), 10, 5) == 100


def test_no_lockstep_no_stall() -> None:
    costs = machine_costs(load_machine(None), "default-45nm")
    assert costs.rule == "sum"
    assert lockstep_hits(costs, 10, 5) == 0
