"""The dependence-level datapath rule (hwmodel/timing/datapath.py) of `accel-salam`: lockstep steps
over each block's dependence graph, as gem5-SALAM's llvm_interface.cc schedules a basic
block. Numbers are derived by hand from the preset's latencies (fadd 5, fmul 4, fdiv 16,
cluster-cache hit 3, miss 3 + 8) and checked on both paths (op by op and compiled)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from tapeflow.hwmodel.config import load_machine
from tapeflow.simulate import simulate, simulate_fast

from fuzz.program import SIM_FEATURES, generate, sim_arguments
from helpers.sim import assert_identical, differences, outcomes_identical, stage_module

from tapeflow import runner

CHAIN = """
func.func @f(%a: f64, %b: f64) -> f64 {
  %x = arith.addf %a, %b : f64
  %y = arith.mulf %x, %b : f64
  %z = arith.divf %y, %b : f64
  func.return %z : f64 }
"""


def machine(*sets: str):
    return load_machine("accel-salam", list(sets))


def datapath_cycles(text: str, args, m) -> float:
    """T_datapath of a run; both paths must agree on the whole report."""
    ref, _ = assert_identical(runner.load_module(text, "k.mlir"), "f", args, m)
    return ref.report["cycle_terms"]["T_datapath"]


def test_dependent_chain_costs_the_sum_of_its_latencies():
    """fadd -> fmul -> fdiv, each waiting for the last: 5 + 4 + 16 steps (CycleCounts.py)."""
    m = machine()
    assert [m.raw["ops"][c]["latency"] for c in ("fp_add", "fp_mul", "fp_div")] == [5, 4, 16]
    t = datapath_cycles(CHAIN, [1.5, 2.0], m)
    assert t == 5 + 4 + 16
    assert simulate(runner.load_module(CHAIN, "k.mlir"), "f", [1.5, 2.0], m).report[
        "cycles"] == 5 + 4 + 16  # fmt: skip
    # Independent ops share a step: fadd and fmul of the inputs, then the fdiv of both.
    wide = CHAIN.replace("%y = arith.mulf %x, %b", "%y = arith.mulf %a, %b").replace(
        "%z = arith.divf %y, %b", "%z = arith.divf %y, %x")  # fmt: skip
    assert datapath_cycles(wide, [1.5, 2.0], m) == max(5, 4) + 16


LOADS = """
func.func @f(%A: memref<16xf64>, %n: index) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  {consts}
  scf.for %i = %c0 to %n step %c1 {{
    {body}
    scf.yield }}
  func.return }}
"""


def per_iteration(body: str, consts: str, m) -> float:
    """The datapath cycles one more iteration of `body` adds (warm cache: the runs with 3
    and 2 iterations differ by one iteration whose accesses all hit)."""
    text = LOADS.format(body=body, consts=consts)
    a = np.arange(16, dtype=np.float64)
    return datapath_cycles(text, [a, 3], m) - datapath_cycles(text, [a, 2], m)


CONSTS = "\n  ".join(f"%k{j} = arith.constant {j} : index" for j in range(8))
EIGHT = "\n    ".join(f"%v{j} = memref.load %A[%k{j}] : memref<16xf64>" for j in range(8))


def test_independent_loads_share_a_step_up_to_the_port_limit():
    """8 independent loads of one block cost one hit latency when 8 may be in flight; with
    4 in flight, two; one at a time, eight."""
    hit = machine().get("l2", "latency")
    assert per_iteration(EIGHT, CONSTS, machine("datapath.in_flight=8")) == hit
    assert per_iteration(EIGHT, CONSTS, machine("datapath.in_flight=4")) == 2 * hit
    assert per_iteration(EIGHT, CONSTS, machine("datapath.in_flight=1")) == 8 * hit
    assert per_iteration(EIGHT, CONSTS, machine("datapath.ports=2", "datapath.in_flight=2")) \
        == 2 * hit  # fmt: skip


def test_a_load_after_a_store_waits_for_the_store():
    """A load after a store of the same block (another address, no SSA link) waits for the
    store; before it, both go in one step."""
    hit = machine().get("l2", "latency")
    store = "memref.store %x, %A[%k1] : memref<16xf64>"
    load = "%v = memref.load %A[%k2] : memref<16xf64>"
    consts = CONSTS + "\n  %x = arith.constant 1.0 : f64"
    assert per_iteration(f"{store}\n    {load}", consts, machine()) == 2 * hit
    assert per_iteration(f"{load}\n    {store}", consts, machine()) == hit


def test_loop_iterations_never_overlap():
    """Each iteration is scheduled alone: an iteration whose fadd depends on nothing of the
    previous one still costs its 5 steps (the latch's add and compare, 2, share its step);
    a load-then-fadd body costs hit + 5 each time."""
    consts = CONSTS + "\n  %x = arith.constant 1.0 : f64"
    assert per_iteration("%y = arith.addf %x, %x : f64", consts, machine()) == 5
    assert per_iteration("", consts, machine()) == 2  # the latch alone
    body = "%v = memref.load %A[%k1] : memref<16xf64>\n    %y = arith.addf %v, %x : f64"
    assert per_iteration(body, consts, machine()) == machine().get("l2", "latency") + 5


def test_a_miss_costs_the_dram_latency_and_the_cpu_keeps_its_rule():
    """The first access of a line misses (hit + DRAM latency); the CPU preset has no
    datapath term (its reports keep the phase rule's terms)."""
    text = LOADS.format(body="%v = memref.load %A[%k0] : memref<16xf64>", consts=CONSTS)
    a = np.arange(16, dtype=np.float64)
    m = machine()
    one = datapath_cycles(text, [a, 1], m) - datapath_cycles(text, [a, 0], m)
    assert one == m.get("l2", "latency") + m.get("dram", "latency")
    cpu = simulate(runner.load_module(text, "k.mlir"), "f", [a, 1], None).report
    assert "T_datapath" not in cpu["cycle_terms"]


@pytest.mark.parametrize("seed", range(0, 120, 3))
def test_random_programs_fast_path_equals_interpreter_on_accel_salam(
        seed: int, monkeypatch: pytest.MonkeyPatch):  # fmt: skip
    """On the fuzzer's programs the compiled path and the listener agree on every field of
    the report under the datapath rule (tiny batches: instances split across batches;
    half the programs stream every streamable loop's addresses with NumPy)."""
    from tapeflow.hwmodel.compiled.module import Trace

    if seed % 2:
        monkeypatch.setattr(Trace, "stream_min", 1)
    m = machine()
    for s in (seed, seed + 1, seed + 2):
        program = generate(s, SIM_FEATURES)
        text = program.render()
        outcomes_identical(runner.load_module(text, "r.mlir"), "f", sim_arguments(program),
                           m, batch=7, context=f"seed {s}\n{text}")  # fmt: skip


@pytest.mark.parametrize("stage", ["autodiff", "lower-tape", "ideal-tape", "stream-d1", "tapeflow"])
@pytest.mark.parametrize("name", ["gemm", "lstm"])
def test_kernel_stages_identical_on_accel_salam(name: str, stage: str,
                                                monkeypatch: pytest.MonkeyPatch):  # fmt: skip
    """Tapes, free tapes, records, scratchpad tiles and DMA fences under the datapath rule;
    both cache backends give the same report, and so do the loop nests' numba kernels."""
    from tapeflow.hwmodel.compiled.module import Trace

    module, entry, args = stage_module(name, stage)
    m = machine("core.window_ops=61")
    ref, _ = assert_identical(module, entry, args, m, fast_batch=97)
    assert ref.report["cycle_terms"]["T_datapath"] > 0
    py = simulate_fast(module, entry, copy.deepcopy(args), m, backend="python").report
    assert not differences(py, ref.report)
    monkeypatch.setattr(Trace, "jit_after", 0)
    monkeypatch.setattr(Trace, "jit_min_ops", 0)
    jit = simulate_fast(module, entry, copy.deepcopy(args), m, batch=97).report
    assert not differences(jit, ref.report)


def test_free_tape_accesses_have_no_slot_on_salams_pathfinder():
    """A free tape access (`ideal-tape`) reaches no cache, so it is no access slot of its
    block: pathfinder's blocks (default size) that begin with one once left their level
    code unreset and indexed past the memo (an IndexError in Python, memory corruption
    under numba). Both backends of the fast path agree; the small size on every path."""
    from tapeflow.eval.jobs import Job, build_module
    from tapeflow.eval.kernels import salam_suite

    kernel = salam_suite()["pathfinder"]
    m = machine()
    for size in ("small", "default"):
        module = build_module(Job("pathfinder", "ideal-tape", size=size, file_kernel=kernel))
        entry, args = kernel.grad_entry, kernel.grad_arguments(size, 0)
        py = simulate_fast(module, entry, copy.deepcopy(args), m, backend="python").report
        fast = simulate_fast(module, entry, copy.deepcopy(args), m).report
        assert not differences(py, fast)
        assert py["ops"]["ideal_tape"]["loads"] > 0
        if size == "small":
            ref, _ = assert_identical(module, entry, args, m)
            assert not differences(py, ref.report)
