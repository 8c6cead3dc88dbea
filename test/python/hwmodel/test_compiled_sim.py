"""The compiled fast path (`hwmodel.compiled`, `hwmodel.fastsim`) against the op-by-op path.

Every check compares the compiled run with the interpreter (values, memref contents,
`OpCounter` counts) and `simulate_fast` with the op-by-op `simulate` (the whole report:
op counts, per-level cache counters, DMA bytes, cycles and their terms, energy, SRAM).
They must be identical, not close.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType
from xdsl.interpreter import OpCounter
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import InterpretationError

from tapeflow import runner
from tapeflow.hwmodel.compiled.limits import UnsupportedOpError
from tapeflow.hwmodel.compiled.module import CompiledModule
from tapeflow.hwmodel.config import load_machine
from tapeflow.simulate import simulate, simulate_auto, simulate_fast, simulate_fast_many
from tapeflow.registry import get_all_passes, make_context

from fuzz.program import SIM_FEATURES, generate, sim_arguments
from helpers.sim import (
    STAGES,
    assert_identical,
    differences,
    kernel_names,
    outcomes_identical,
    stage_module,
)


def interpreter_counts(module, entry: str, args) -> Any:
    counter = OpCounter()
    run = runner.run_function(module, entry, copy.deepcopy(args), listeners=[counter])
    return run, counter.ops


def compiled_counts(program: CompiledModule, entry: str, args) -> Any:
    from tapeflow.simulate import run_compiled

    run, trace = run_compiled(program, entry, copy.deepcopy(args))
    return run, trace.op_counts()


def check_against_interpreter(text: str, entry: str, args) -> Any:
    module = runner.load_module(text, "k.mlir")
    program = CompiledModule(module)  # compiled once, run by every comparison below
    run1, ops1 = interpreter_counts(module, entry, args)
    run2, ops2 = compiled_counts(program, entry, args)
    diffs = differences(run1.results, run2.results, "results")
    diffs += differences(run1.arguments, run2.arguments, "arguments")
    assert not diffs, "\n".join(diffs)
    assert dict(ops1) == dict(ops2)
    ref, _ = assert_identical(module, entry, args, program=program)
    # flushes inside every loop
    assert_identical(module, entry, args, fast_batch=5, ref=ref, program=program)
    for w in (1, 3, 7):  # a phase window ends in (almost) every loop iteration
        assert_identical(module, entry, args, load_machine(overrides=[f"core.window_ops={w}"]),
                         fast_batch=5, program=program)  # fmt: skip
    return run1


# ---------------------------------------------------------------------------------------
# Hand-written functions, one construct each.

SCALAR = """
func.func @f(%x: f64, %y: f64, %a: f32, %b: f32, %n: i32, %m: i32)
    -> (f64, f32, i32, i32, i1, f64) {
  %s = arith.addf %x, %y : f64
  %p = arith.mulf %s, %x : f64
  %d = arith.divf %p, %y : f64
  %z = arith.constant 0.0 : f64
  %inf = arith.divf %x, %z : f64
  %t = math.tanh %d : f64
  %e = math.exp %t : f64
  %l = math.log %e : f64
  %q = math.sqrt %x : f64
  %sn = math.sin %q : f64
  %cs = math.cos %sn : f64
  %ng = arith.negf %cs : f64
  %ab = math.absf %ng : f64
  %pw = math.powf %ab, %y : f64
  %mx = arith.maximumf %pw, %l : f64
  %mn = arith.minnumf %mx, %inf : f64
  %af = arith.addf %a, %b : f32
  %mf = arith.mulf %af, %a : f32
  %df = arith.divf %mf, %b : f32
  %tf = math.tanh %df : f32
  %ni = arith.muli %n, %m : i32
  %ai = arith.addi %ni, %n : i32
  %dv = arith.divsi %ai, %m : i32
  %rm = arith.remsi %ai, %m : i32
  %xo = arith.xori %dv, %rm : i32
  %c = arith.cmpi ult, %xo, %n : i32
  %cf = arith.cmpf une, %mn, %mn : f64
  %cc = arith.andi %c, %cf : i1
  %fi = arith.sitofp %xo : i32 to f64
  %sum = arith.addf %mn, %fi : f64
  func.return %sum, %tf, %xo, %rm, %cc, %inf : f64, f32, i32, i32, i1, f64
}
"""


@pytest.mark.parametrize(
    "args",
    [
        [0.75, 1.25, 0.1, 0.3, 7, 3],
        [2.0, -0.5, 1e30, 3e30, 2_000_000_000, -7],  # f32 overflow, i32 wrap
        [0.0, 0.0, -0.0, 0.0, -5, 2],  # 0/0, nan, sign of zero
    ],
)
def test_scalar_math_bit_identical(args):
    check_against_interpreter(SCALAR, "f", args)


LOOPS = """
func.func @f(%a: memref<6x5xf64>, %b: memref<5xf64>, %n: index) -> (f64, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %z = arith.constant 0.0 : f64
  %r:2 = scf.for %i = %c0 to %c6 step %c1 iter_args(%acc = %z, %cnt = %c0) -> (f64, index) {
    %s = scf.for %j = %c0 to %c5 step %c2 iter_args(%t = %acc) -> (f64) {
      %v = memref.load %a[%i, %j] : memref<6x5xf64>
      %w = memref.load %b[%j] : memref<5xf64>
      %pos = arith.cmpf ogt, %v, %w : f64
      %u = scf.if %pos -> (f64) {
        %m = arith.mulf %v, %w : f64
        memref.store %m, %a[%i, %j] : memref<6x5xf64>
        scf.yield %m : f64
      } else {
        %d = arith.subf %w, %v : f64
        scf.yield %d : f64
      }
      %t2 = arith.addf %t, %u : f64
      scf.yield %t2 : f64
    }
    %k = arith.addi %cnt, %i : index
    scf.yield %s, %k : f64, index
  }
  %w:2 = scf.while (%x = %r#0, %k = %c0) : (f64, index) -> (f64, index) {
    %go = arith.cmpi slt, %k, %n : index
    scf.condition(%go) %x, %k : f64, index
  } do {
  ^bb0(%x2: f64, %k2: index):
    %h = arith.constant 0.5 : f64
    %x3 = arith.mulf %x2, %h : f64
    memref.store %x3, %b[%c1] : memref<5xf64>
    %k3 = arith.addi %k2, %c1 : index
    scf.yield %x3, %k3 : f64, index
  }
  %out = arith.addi %w#1, %r#1 : index
  func.return %w#0, %out : f64, index
}
"""


@pytest.mark.parametrize("n", [0, 1, 4])
def test_loops_iter_args_if_while_memref_traffic(n: int):
    rng = np.random.default_rng(n)
    check_against_interpreter(LOOPS, "f", [rng.uniform(-1, 1, (6, 5)), rng.uniform(-1, 1, 5), n])


TAPE_CALLS = """
func.func @sq(%x: f64) -> f64 {
  %y = arith.mulf %x, %x : f64
  func.return %y : f64
}
func.func @f(%a: memref<8xf64>, %tmp: memref<8xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f64
  %cache = tape.init : !tape.cache<f64>
  %flags = tape.init : !tape.cache<i1>
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %a[%i] : memref<8xf64>
    %s = func.call @sq(%v) : (f64) -> f64
    tape.push %cache, %s : !tape.cache<f64>
    %pos = arith.cmpf ogt, %v, %z : f64
    tape.push %flags, %pos : !tape.cache<i1>
    scf.yield
  }
  %buf = memref.alloc() : memref<8xf64>
  "memref.copy"(%a, %buf) : (memref<8xf64>, memref<8xf64>) -> ()
  %r = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %z) -> (f64) {
    %s = tape.pop %cache : !tape.cache<f64>
    %p = tape.pop %flags : !tape.cache<i1>
    %w = memref.load %buf[%k] : memref<8xf64>
    %t = arith.select %p, %s, %w : f64
    memref.store %t, %tmp[%k] : memref<8xf64>
    %acc2 = arith.addf %acc, %t : f64
    scf.yield %acc2 : f64
  }
  memref.dealloc %buf : memref<8xf64>
  tape.free %cache : !tape.cache<f64>
  tape.free %flags : !tape.cache<i1>
  func.return %r : f64
}
"""


def test_tape_push_pop_calls_alloc_copy():
    rng = np.random.default_rng(1)
    check_against_interpreter(TAPE_CALLS, "f", [rng.uniform(-1, 1, 8), np.zeros(8)])


AFFINE = """
// affine.load/store only with constant maps: xDSL parses every index operand as a map
// symbol, which the op-by-op model (hwmodel/listener.py) evaluates as a dimension.
func.func @f(%a: memref<4x4xf64>, %acc: memref<1xf64>, %n: index) {
  affine.for %i = 0 to 3 {
    affine.for %j = 0 to 4 step 2 {
      %i1 = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
      %v = memref.load %a[%i1, %j] : memref<4x4xf64>
      %k = affine.apply affine_map<(d0)[s0] -> ((d0 + s0) mod 4)>(%j)[%n]
      %kf = arith.index_cast %k : index to i64
      %kd = arith.sitofp %kf : i64 to f64
      %t = affine.load %acc[0] : memref<1xf64>
      %t1 = arith.addf %t, %v : f64
      %t2 = arith.addf %t1, %kd : f64
      affine.store %t2, %acc[0] : memref<1xf64>
      memref.store %t2, %a[%k, %i] : memref<4x4xf64>
    }
  }
  func.return
}
"""


def test_affine_loops_and_maps():
    rng = np.random.default_rng(2)
    check_against_interpreter(AFFINE, "f", [rng.uniform(-1, 1, (4, 4)), np.zeros(1), 3])


MEMREF_VALUES = """
func.func @pick(%c: i1, %a: memref<4xf64>, %b: memref<4xf64>) -> memref<4xf64> {
  %m = scf.if %c -> (memref<4xf64>) {
    scf.yield %a : memref<4xf64>
  } else {
    scf.yield %b : memref<4xf64>
  }
  func.return %m : memref<4xf64>
}
func.func @f(%a: memref<4xf64>, %b: memref<4xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %z, %m = %a) -> (f64, memref<4xf64>) {
    %v = memref.load %m[%i] : memref<4xf64>
    %neg = arith.cmpf olt, %v, %z : f64
    %n = func.call @pick(%neg, %a, %b) : (i1, memref<4xf64>, memref<4xf64>) -> memref<4xf64>
    memref.store %v, %n[%i] : memref<4xf64>
    %acc2 = arith.addf %acc, %v : f64
    scf.yield %acc2, %n : f64, memref<4xf64>
  }
  %w = memref.load %r#1[%c1] : memref<4xf64>
  %s = arith.addf %r#0, %w : f64
  func.return %s : f64
}
"""


def test_memrefs_through_calls_if_and_iter_args():
    rng = np.random.default_rng(4)
    check_against_interpreter(MEMREF_VALUES, "f", [rng.uniform(-1, 1, 4), rng.uniform(-1, 1, 4)])


ELEMENT_TYPES = """
func.func @f(%x: memref<?x3xf32>, %k: memref<5xi32>, %b: memref<4xi1>,
             %ix: memref<2xindex>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %n = memref.dim %x, %c0 : memref<?x3xf32>
  %tmp = memref.alloc(%n) : memref<?x3xf32>
  %z = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f32) {
    %s = scf.for %j = %c0 to %c3 step %c1 iter_args(%t = %acc) -> (f32) {
      %v = memref.load %x[%i, %j] : memref<?x3xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %tmp[%i, %j] : memref<?x3xf32>
      %t2 = arith.addf %t, %w : f32
      scf.yield %t2 : f32
    }
    scf.yield %s : f32
  }
  %k0 = memref.load %k[%c1] : memref<5xi32>
  %k1 = arith.muli %k0, %k0 : i32
  memref.store %k1, %k[%c0] : memref<5xi32>
  %i0 = memref.load %ix[%c1] : memref<2xindex>
  %i1 = arith.addi %i0, %c3 : index
  memref.store %i1, %ix[%c0] : memref<2xindex>
  %bb = memref.load %b[%c0] : memref<4xi1>
  %nb = arith.xori %bb, %bb : i1
  memref.store %nb, %b[%c1] : memref<4xi1>
  %y = memref.load %tmp[%c1, %c1] : memref<?x3xf32>
  %out = arith.addf %r, %y : f32
  memref.dealloc %tmp : memref<?x3xf32>
  func.return %out : f32
}
"""


def test_element_types_and_dynamic_shapes():
    rng = np.random.default_rng(5)
    args = [
        rng.uniform(-1, 1, (4, 3)).astype(np.float32),
        np.array([3, 70000, -2, 9, 1], dtype=np.int32),
        np.array([True, False, True, True]),
        np.array([5, 7], dtype=np.int64),
    ]
    check_against_interpreter(ELEMENT_TYPES, "f", args)


VLA_2D = """
func.func @f(%n: index, %a: memref<?x?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %t = scf.for %j = %c0 to %n step %c1 iter_args(%b = %acc) -> (f64) {
      %v = memref.load %a[%i, %j] : memref<?x?xf64>
      %w = arith.mulf %v, %v : f64
      %u = arith.addf %b, %w : f64
      scf.yield %u : f64
    }
    scf.yield %t : f64
  }
  func.return %s : f64
}
"""


def test_dynamic_inner_dimension():
    """A C99 `double A[n][n]` parameter (memref<?x?xf64>): its row stride is a run-time
    size (the fast path took the dynamic-size marker for it and overflowed)."""
    a = np.arange(20.0).reshape(4, 5)
    check_against_interpreter(VLA_2D, "f", [4, a])


I24 = """
func.func @f(%n: index) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.alloc() : memref<64xi24>
  %cache = tape.init : !tape.cache<i24>
  scf.for %i = %c0 to %n step %c1 {
    %v = arith.index_cast %i : index to i24
    memref.store %v, %m[%i] : memref<64xi24>
    tape.push %cache, %v : !tape.cache<i24>
  }
  %a = tape.pop %cache : !tape.cache<i24>
  %b = memref.load %m[%c1] : memref<64xi24>
  %s = arith.addi %a, %b : i24
  %r = arith.extsi %s : i24 to i64
  memref.dealloc %m : memref<64xi24>
  func.return %r : i64
}
"""


def test_i24_elements_take_four_bytes_on_both_paths():
    """An i24 element is stored in 4 bytes (`region.field_size`): the op-by-op model and
    the compiled path address and count it alike (the compiled path once said 3)."""
    module = runner.load_module(I24, "k.mlir")
    sim = simulate(module, "f", [40])
    assert sim.report == simulate_fast(module, "f", [40]).report
    assert sim.model.tape_cache_bytes == 40 * 4


def test_pop_on_empty_cache_is_an_interpreter_error():
    text = """
func.func @f() -> f64 {
  %c = tape.init : !tape.cache<f64>
  %v = tape.pop %c : !tape.cache<f64>
  func.return %v : f64
}
"""
    module = runner.load_module(text, "k.mlir")
    with pytest.raises(InterpretationError, match="pop on empty cache"):
        CompiledModule(module).run("f", ())


def test_unsupported_op_names_the_op_and_auto_falls_back():
    text = """
func.func @f(%a: memref<8xf64>) -> f64 {
  %c2 = arith.constant 2 : index
  %v = scf.execute_region -> (f64) {
    %x = memref.load %a[%c2] : memref<8xf64>
    scf.yield %x : f64
  }
  func.return %v : f64
}
"""
    module = runner.load_module(text, "k.mlir")
    with pytest.raises(UnsupportedOpError, match=r"k\.mlir:4:3: 'scf\.execute_region'"):
        CompiledModule(module)
    args = [np.arange(8.0)]
    fast = simulate_auto(module, "f", copy.deepcopy(args))
    ref = simulate(module, "f", copy.deepcopy(args))
    assert fast.report["results"][0]["value"] == 2.0
    assert fast.report.pop("path") == "interp"
    assert not differences(ref.report, fast.report)


def test_comparison_detects_a_different_machine():
    """The identity checks can fail: a smaller L1 changes the op-by-op report."""
    rng = np.random.default_rng(3)
    module = runner.load_module(LOOPS, "k.mlir")
    args = [rng.uniform(-1, 1, (6, 5)), rng.uniform(-1, 1, 5), 2]
    ref = simulate(module, "f", copy.deepcopy(args))
    other = simulate_fast(
        module, "f", copy.deepcopy(args), load_machine(overrides=["ops.fp_add.cycles=3"])
    )
    assert differences(ref.report, other.report)


# ---------------------------------------------------------------------------------------
# The benchmark kernels at their small size, through each stage of the pipeline
# (`helpers.sim.STAGES`).


@pytest.mark.parametrize("stage", list(STAGES))
@pytest.mark.parametrize("name", kernel_names())
def test_kernel_stage_identical(name: str, stage: str, monkeypatch: pytest.MonkeyPatch):
    from tapeflow.hwmodel.compiled.module import Trace

    module, entry, args = stage_module(name, stage)
    program = CompiledModule(module)  # compiled once, run by every comparison below
    _, ops1 = interpreter_counts(module, entry, args)
    _, ops2 = compiled_counts(program, entry, args)
    assert dict(ops1) == dict(ops2)  # every op, by name, as OpCounter counts them
    ref, _ = assert_identical(module, entry, args, program=program)
    if stage.startswith("stream") and ref.report["tape_bytes"] > 0:
        assert ref.report["dma"]["transfers"] > 0  # the DMA path was exercised
    assert_identical(module, entry, args, fast_batch=97, ref=ref, program=program)
    # A tiny cache hierarchy: evictions, write-backs and prefetches at small sizes.
    tiny = load_machine(overrides=["l1.size=1024", "l1.assoc=2", "l2.size=4096", "l2.assoc=4",
                                   "prefetch.table_size=4"])  # fmt: skip
    ref, _ = assert_identical(module, entry, args, tiny, program=program)
    if ref.report["levels"]["L1"]["accesses"] > 2000:
        assert ref.report["levels"]["L1"]["writebacks"] + ref.report["levels"]["L2"]["misses"] > 0
    # Phase windows ending inside bulk-counted loops, between DMA fences, across batches;
    # every streamable loop streamed (the small kernels' loops are shorter than the
    # default `Trace.stream_min`).
    monkeypatch.setattr(Trace, "stream_min", 1)
    for w in (5, 61):
        win = load_machine(overrides=[f"core.window_ops={w}"])
        ref, _ = assert_identical(module, entry, args, win, fast_batch=97, program=program)
        assert ref.report["phases"] > 1


def test_stream_stage_exercises_dma_stalls_and_spm():
    """At least one small kernel streams its tape with DMA, stalls and a scratchpad."""
    module, entry, args = stage_module("gemm", "stream-d1")
    ref, _ = assert_identical(module, entry, args)
    assert ref.report["dma"]["transfers"] > 2
    assert ref.report["sram"]["spm_high_water_bytes"] > 0
    assert ref.report["cycle_terms"]["T_dma_stall"] > 0


def test_phase_timing_is_the_same_in_both_cache_backends():
    """The phase timing runs compiled with the numba backend (`close_phases`, one call per
    batch of phase ends) and interpreted with the python one: both must give the same
    floats. Fractional machine numbers (cycles, bandwidths, latency, mlp) and odd port counts make
    division and product inexact; a short window makes many phases, the streamed stage
    DMA stalls and transfers overlapping phases, the small caches late prefetches."""
    from tapeflow.hwmodel.cache import numba_available

    if not numba_available():
        pytest.skip("numba is not installed (extra 'fast')")
    module, entry, args = stage_module("gemm", "stream-d1")
    machine = load_machine(overrides=[
        "core.window_ops=37", "ops.fp_mul.cycles=1.3", "ops.int.cycles=0.7",
        "ops.int_div.cycles=13.1", "core.issue_width=3", "core.fp_ports=3",
        "core.load_ports=3", "l2.bandwidth=21.7", "dram.bandwidth=3.3",
        "dram.latency=97.3", "core.mlp=3.1", "l1.size=1024", "l2.size=8192",
    ])  # fmt: skip
    reports = [simulate(module, entry, copy.deepcopy(args), machine, backend="python").report]
    for backend in ("python", "numba"):
        fast = simulate_fast(module, entry, copy.deepcopy(args), machine, backend=backend)
        reports.append(fast.report)
    assert not differences(reports[0], reports[1])
    assert not differences(reports[1], reports[2])
    terms = reports[2]["cycle_terms"]
    assert reports[2]["phases"] > 10
    assert terms["T_dma_stall"] > 0 and terms["T_late"] > 0 and terms["T_DRAM"] > 0


@pytest.mark.parametrize("stage", ["autodiff", "tapeflow"])
def test_access_decoding_with_numpy_equals_numba(stage: str, monkeypatch: pytest.MonkeyPatch):
    """`Trace.flush` decodes the packed accesses with numba when it is installed and with
    NumPy otherwise: the same addresses, bases in first-touch order and tape peaks (the
    autodiff stage keeps Enzyme-style tapes), batches small enough to flush mid-loop."""
    from tapeflow.hwmodel.compiled import module as compiled_module
    from tapeflow.hwmodel.cache import numba_available

    if not numba_available():
        pytest.skip("numba is not installed (extra 'fast')")
    module, entry, args = stage_module("lstm", stage)
    with_numba = simulate_fast(module, entry, copy.deepcopy(args), batch=97).report
    monkeypatch.setattr(compiled_module, "numba_decoder", lambda: None)
    with_numpy = simulate_fast(module, entry, copy.deepcopy(args), batch=97).report
    assert not differences(with_numba, with_numpy)
    assert with_numba["levels"]["L1"]["accesses"] > 1000


def test_one_run_many_machines_equals_separate_runs():
    """The cache sweep: one compiled run feeding several machines."""
    sets = [[], ["l2.size=65536"], ["l1.size=4096", "l2.size=16384", "prefetch.enabled=false"]]
    machines = [load_machine(overrides=o) for o in sets]
    if "mlp" in kernel_names():
        module, entry, args = stage_module("mlp", "lower-tape")
    else:
        module, entry, args = runner.load_module(LOOPS, "k.mlir"), "f", [
            np.ones((6, 5)), np.ones(5), 2]  # fmt: skip
    many = simulate_fast_many(module, entry, copy.deepcopy(args), machines)
    reports = []
    for machine, fast in zip(machines, many):
        ref = simulate(module, entry, copy.deepcopy(args), machine)
        assert not differences(ref.report, fast.report)
        reports.append(fast.report)
    assert differences(reports[0], reports[2])  # the machines do differ


MEDIUM = {"gemm": {"M": 24, "N": 16, "K": 4}, "lstm": {"T": 12, "B": 4, "I": 4, "H": 8}}


@pytest.mark.parametrize("stage", ["lower-tape", "stream-d2"])
@pytest.mark.parametrize("name", sorted(MEDIUM))
def test_medium_size_many_batches_identical(name: str, stage: str):
    """Larger runs (tens of thousands of ops): many batches, evictions, many DMA tiles."""
    from tapeflow.eval.bundled import KERNELS
    from benchmarks.kernels.generate import TEMPLATES

    kernel = KERNELS[name]
    module = runner.load_module(TEMPLATES[name](MEDIUM[name]), f"{name}.mlir")
    PassPipeline.parse_spec(get_all_passes(), STAGES[stage]).apply(make_context(), module)
    fn = runner.find_function(module, kernel.grad_entry)
    scalars = [t for t in fn.function_type.inputs.data if not isinstance(t, MemRefType)]
    args = runner.make_arguments(fn, seed=1, scalars=[1.0] * len(scalars))
    small = load_machine(overrides=["l1.size=2048", "l2.size=16384"])
    ref, _ = assert_identical(module, entry=kernel.grad_entry, args=args, machine=small,
                              fast_batch=1000)  # fmt: skip
    assert ref.report["levels"]["L1"]["accesses"] > 5000


# ---------------------------------------------------------------------------------------
# Property: on random programs the compiled path gives the interpreter's values, memref
# contents, errors and hardware report (issue 11, bug 5). The fuzzer's generator with the
# simulator features (`fuzz.program.SIM_FEATURES`): loops (steps > 1, lower bounds > 0,
# iter_args, scf.while, trip counts from memory), scf.if, selects, calls, f64 and f32, i64
# arithmetic with extreme constants (INT64_MIN / -1), NaN and infinities, 1-D and 2-D
# accesses whose indices are sometimes out of bounds (-1, past a dimension, loaded from
# memory), in-place stores.


@pytest.mark.parametrize("seed", range(0, 300, 3))
def test_random_programs_fast_path_equals_interpreter(seed: int, monkeypatch: pytest.MonkeyPatch):
    """Values, memref contents, errors (same message) and the whole report agree; half
    the programs stream every streamable loop's addresses (`Trace.stream_min`)."""
    from tapeflow.hwmodel.compiled.module import Trace

    if seed % 2:
        monkeypatch.setattr(Trace, "stream_min", 1)
    for s in (seed, seed + 1, seed + 2):
        program = generate(s, SIM_FEATURES)
        text = program.render()
        outcomes_identical(runner.load_module(text, "r.mlir"), "f", sim_arguments(program),
                           batch=7, context=f"seed {s}\n{text}")  # fmt: skip


TWO_NANS = """
func.func @f(%x: memref<1xf64>, %h: memref<1xf32>, %s: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = math.sqrt %s : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %m) -> (f64) {
    %p = math.absf %a : f64
    %b = arith.addf %p, %a : f64
    scf.yield %b : f64 }
  %t = arith.truncf %r : f64 to f32
  memref.store %t, %h[%c0] : memref<1xf32>
  memref.store %r, %x[%c0] : memref<1xf64>
  func.return %r : f64 }
"""


def test_nan_of_two_nan_operands_is_compared_by_nan_ness():
    """+nan + -nan (sqrt(-1) is `NAN`, absf clears its sign): which operand's NaN comes
    out is open (`tapeflow.semantics`); the interpreter's float + gives the second, the
    generated loop's `a + b` the first once CPython specialises it (fuzz seed 101 of the
    simulator programs stored such a NaN into a memref), so memrefs compare NaN-ness."""
    args = [np.zeros(1), np.zeros(1, np.float32), -1.0, 20]
    outcomes_identical(runner.load_module(TWO_NANS, "k.mlir"), "f", args)
    nan, other_nan = np.array([np.nan, 1.0]), np.array([-np.nan, 1.0])
    assert not differences(nan, other_nan)
    assert differences(nan, np.array([1.0, 1.0])) and differences(nan, np.array([np.nan, -1.0]))
    assert differences(np.array([0.0]), np.array([-0.0]))


# ---------------------------------------------------------------------------------------
# Issue 11 regressions: the growable tape, Python's limits, the interpreter's semantics.

GROWABLE = """
func.func @f(%x: memref<1xf64>, %n: memref<2xindex>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %x0 = memref.load %x[%c0] : memref<1xf64>
  %s = scf.for %j = %c0 to %c2 step %c1 iter_args(%o = %x0) -> (f64) {
    %hi = memref.load %n[%j] : memref<2xindex>
    %t = scf.for %i = %c0 to %hi step %c1 iter_args(%a = %o) -> (f64) {
      %b = math.sin %a : f64
      scf.yield %b : f64 }
    scf.yield %t : f64 }
  func.return %s : f64 }
"""


def test_growable_tape_both_paths_agree_and_charge_the_tape():
    """Bug 2: the memref-of-memrefs slot of Enzyme's growable tape crashed both paths."""
    module = runner.load_module(GROWABLE, "g.mlir")
    PassPipeline.parse_spec(get_all_passes(), "tapeflow-autodiff,tapeflow-lower-tape").apply(
        make_context(), module
    )
    text = str(module)
    assert "memref<memref<?xf64>>" in text
    args = [np.array([0.7]), np.zeros(1), np.array([3, 20]), 1.0]
    run = check_against_interpreter(text, "f_grad", args)
    x, d = 0.7, 1.0
    for _ in range(23):  # the chain rule through 23 sines, in the order the tape pops
        d, x = d * np.cos(x), np.sin(x)
    assert run.arguments[1][0] == pytest.approx(d, rel=1e-12)
    ref = simulate(runner.load_module(text, "g.mlir"), "f_grad", copy.deepcopy(args))
    # 3 meta cells (8 B) + the 16-entry buffer + its 32-entry copy while both are live.
    assert ref.report["tape_bytes"] == 24 + 16 * 8 + 32 * 8


def _nested_loops(depth: int) -> str:
    head = ["func.func @f(%a: memref<2xf64>) -> f64 {", "%c0 = arith.constant 0 : index",
            "%c1 = arith.constant 1 : index", "%x = memref.load %a[%c0] : memref<2xf64>"]  # fmt: skip
    loops = [f"scf.for %i{k} = %c0 to %c1 step %c1 {{" for k in range(depth)]
    return "\n".join([*head, *loops, "memref.store %x, %a[%c1] : memref<2xf64>",
                      *["}"] * depth, "func.return %x : f64", "}"])  # fmt: skip


@pytest.mark.parametrize("depth", [21, 100])
def test_deep_nests_fall_back_to_the_interpreter(depth: int):
    """Bug 3: Python's limit of 20 nested blocks (IndentationError from ~98) is a
    fast-path limit: compiling says so, `simulate_auto` runs the op-by-op path."""
    module = runner.load_module(_nested_loops(depth), "n.mlir")
    with pytest.raises(UnsupportedOpError, match="beyond Python's limits"):
        CompiledModule(module)
    args = [np.array([1.5, 0.0])]
    auto = simulate_auto(module, "f", copy.deepcopy(args))
    ref = simulate(module, "f", copy.deepcopy(args))
    assert auto.report.pop("path") == "interp"
    assert not differences(ref.report, auto.report)
    assert auto.run.arguments[0][1] == 1.5


def test_runtime_limit_falls_back_to_the_interpreter(monkeypatch: pytest.MonkeyPatch):
    """A limit of the trace encoding met during a run (here a buffer larger than the
    offset field, made small): `simulate_auto` reruns the op-by-op path from the
    arguments as they were, `simulate_fast` says so."""
    from tapeflow.hwmodel.compiled import module as compiled_module
    from tapeflow.hwmodel.compiled.limits import FastPathLimit

    module = runner.load_module(LOOPS, "k.mlir")
    rng = np.random.default_rng(5)
    args = [rng.uniform(-1, 1, (6, 5)), rng.uniform(-1, 1, 5), 2]
    ref = simulate(module, "f", copy.deepcopy(args))
    monkeypatch.setattr(compiled_module, "OFF_LIMIT", 64)
    with pytest.raises(FastPathLimit, match="limit 64"):
        simulate_fast(module, "f", copy.deepcopy(args))
    auto = simulate_auto(module, "f", copy.deepcopy(args))
    assert auto.report.pop("path") == "interp"
    assert not differences(ref.report, auto.report)


def test_python_error_in_generated_code_falls_back(monkeypatch: pytest.MonkeyPatch):
    """Any Python error inside the generated code is a fast-path limit (located at the
    function), not the program's error: `simulate_auto` runs the op-by-op path."""
    from tapeflow.hwmodel.compiled import module as compiled_module
    from tapeflow.hwmodel.compiled.limits import FastPathLimit

    def broken_view(sa: Any) -> Any:
        raise ValueError("no view")

    module = runner.load_module(LOOPS, "k.mlir")
    rng = np.random.default_rng(6)
    args = [rng.uniform(-1, 1, (6, 5)), rng.uniform(-1, 1, 5), 2]
    ref = simulate(module, "f", copy.deepcopy(args))
    monkeypatch.setattr(compiled_module, "memref_view", broken_view)
    with pytest.raises(FastPathLimit, match=r"^k\.mlir:\d+:\d+: 'func\.func' fast path: ValueError: no view$"):
        simulate_fast(module, "f", copy.deepcopy(args))
    auto = simulate_auto(module, "f", copy.deepcopy(args))
    assert auto.report.pop("path") == "interp"
    assert not differences(ref.report, auto.report)


NESTED_MODULE = """
builtin.module {
  builtin.module {
    func.func @f(%x: f64, %a: i64, %b: i64) -> (f64, i64, i64) {
      %y = arith.mulf %x, %x : f64
      %q = arith.divsi %a, %b : i64
      %r = arith.remsi %a, %b : i64
      func.return %y, %q, %r : f64, i64, i64
    }
  }
}
"""


def test_nested_module_and_int64_min_divided_by_minus_one():
    """Bug 5: a function in a nested module runs (as in tapeflow-run), and INT64_MIN / -1
    wraps to INT64_MIN as in the interpreter (it gave 2^63)."""
    run = check_against_interpreter(NESTED_MODULE, "f", [3.0, -(1 << 63), -1])
    assert run.results == [9.0, -(1 << 63), 0]


UNSIGNED_DIV = """
func.func @f(%a: index, %b: index, %x: i32, %y: i32) -> (index, index, i32, i32) {
  %q = arith.divui %a, %b : index
  %r = arith.remui %a, %b : index
  %qx = arith.divui %x, %y : i32
  %rx = arith.remui %x, %y : i32
  func.return %q, %r, %qx, %rx : index, index, i32, i32
}
"""


@pytest.mark.parametrize(
    "args",
    [
        [7, 2, 9, 4],  # both non-negative: Python's // and % in the generated code
        [-7, 2, -9, 4],  # a negative dividend is a large unsigned one: the interpreter's
        [7, -2, 9, -4],
        [-7, -2, -9, -4],
        [-(1 << 63), 1, -(1 << 31), 1],
    ],
)
def test_unsigned_division_bit_identical(args):
    """`arith.divui`/`remui` (Enzyme-MLIR's reversed loops compute their iteration with
    one) are Python's operators where both operands are non-negative, the interpreter's
    otherwise."""
    check_against_interpreter(UNSIGNED_DIV, "f", args)


def test_unsigned_division_by_zero_is_the_interpreters_error():
    module = runner.load_module(UNSIGNED_DIV, "u.mlir")
    errors = []
    for sim in (simulate, simulate_fast):
        with pytest.raises(InterpretationError) as info:
            sim(module, "f", [7, 0, 9, 4])
        errors.append(str(info.value))
    assert errors[0] == errors[1] and errors[0].startswith("u.mlir:3:")


@pytest.mark.parametrize(
    "index, message",
    [("-1", r"index \[-1\] out of bounds"), ("4", r"index \[4\] out of bounds")],
)
def test_out_of_bounds_is_the_interpreters_error(index: str, message: str):
    """Bug 5: a store at -1 wrapped silently on the fast path; now the same one-line,
    located error as the interpreter (no IR dump)."""
    text = f"""
func.func @f(%a: memref<4xf64>, %m: memref<2x4xf64>, %x: f64) {{
  %i = arith.constant {index} : index
  %c0 = arith.constant 0 : index
  memref.store %x, %m[%c0, %c0] : memref<2x4xf64>
  memref.store %x, %a[%i] : memref<4xf64>
  func.return
}}
"""
    module = runner.load_module(text, "o.mlir")
    args = [np.zeros(4), np.zeros((2, 4)), 1.0]
    errors = []
    for sim in (simulate, simulate_fast):
        with pytest.raises(InterpretationError, match=message) as info:
            sim(module, "f", copy.deepcopy(args))
        errors.append(str(info.value))
    assert errors[0] == errors[1]
    assert errors[0].startswith("o.mlir:6:3: 'memref.store'") and "\n" not in errors[0]


ZERO_PLUS_ONE = """
func.func @f(%a: memref<4xf64>, %x: f64) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.addi %c0, %c1 : index
  %n = arith.muli %c1, %one : index
  scf.for %i = %c0 to %n step %c1 {
    memref.store %x, %a[%i] : memref<4xf64>
  }
  func.return %one : index
}
"""


def test_identity_fold_keeps_the_non_unit_operand():
    """`0 + 1` folded to 0 (the fold of x+0/0+x kept the wrong operand): the loop
    bounded by it ran no iteration on the fast path only."""
    run = check_against_interpreter(ZERO_PLUS_ONE, "f", [np.zeros(4), 2.0])
    assert run.results == [1]
    assert list(run.arguments[0]) == [2.0, 0.0, 0.0, 0.0]


# Fuzzer seeds 1023 and 1004 (minimized), streamed with lower bound 1 / growable
# tapes: the reverse loop's bounds (`0 - i + 1` with i constant 0) folded to an empty
# range, so the fast path skipped it (fewer ops; or "tape.free ... never popped").
FUZZ_1023 = """
func.func @f(%x: memref<4xf64>, %y: memref<4xf64>, %s: f64, %n: index, %cnt: memref<4xindex>) -> f64 attributes {tapeflow.autodiff} {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %r40 = scf.for %i2 = %c1 to %c3 step %c2 iter_args(%a3 = %s) -> (f64) {
    %v42_s = math.sin %s : f64
    %v42 = arith.mulf %v42_s, %a3 : f64
    memref.store %v42, %x[%i2] : memref<4xf64>
    %r40_y = arith.addf %a3, %a3 : f64
    scf.yield %r40_y : f64
  }
  func.return %s : f64
}
"""

FUZZ_1004 = """
func.func @h1(%hx: memref<4xf32>, %s: f32, %hb: f32) -> f32 {
  func.return %s : f32
}
func.func @f(%x: memref<4xf32>, %y: memref<4xf32>, %s: f32, %n: index, %cnt: memref<4xindex>) -> f32 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %r35 = scf.for %i6 = %c0 to %n step %c1 iter_args(%a7 = %s) -> (f32) {
    %v37_s = math.sin %s : f32
    %v37 = arith.mulf %v37_s, %a7 : f32
    memref.store %v37, %x[%i6] : memref<4xf32>
    %r16 = scf.for %i8 = %c0 to %c1 step %c1 iter_args(%a9 = %s) -> (f32) {
      %r15:2 = scf.while (%r15_w = %a9, %r15_k = %c0) : (f32, index) -> (f32, index) {
        %r15_b = arith.cmpi slt, %r15_k, %c4 : index
        scf.condition(%r15_b) %r15_w, %r15_k : f32, index
      } do {
      ^bb0(%w11: f32, %k12: index):
        %r15_o = math.sin %w11 : f32
        %r15_p = arith.addf %r15_o, %w11 : f32
        %r15_q = arith.addi %k12, %c1 : index
        scf.yield %r15_p, %r15_q : f32, index
      }
      %r16_y = arith.addf %a9, %r15#0 : f32
      scf.yield %r16_y : f32
    }
    %r33 = scf.for %i18 = %c1 to %c3 step %c1 iter_args(%a19 = %s) -> (f32) {
      %v20 = arith.maximumf %a19, %r16 : f32
      %r32_c = arith.cmpf ogt, %s, %s : f32
      %r32 = scf.if %r32_c -> (f32) {
        scf.yield %s : f32
      } else {
        %v31 = func.call @h1(%y, %v20, %r16) : (memref<4xf32>, f32, f32) -> f32
        scf.yield %v31 : f32
      }
      %r33_y = arith.addf %a19, %r32 : f32
      scf.yield %r33_y : f32
    }
    %v34 = arith.addf %r33, %s : f32
    %v38 = arith.addf %v37, %v34 : f32
    %r35_y = arith.addf %a7, %v38 : f32
    scf.yield %r35_y : f32
  }
  func.return %s : f32
}
"""


@pytest.mark.parametrize(
    "text, pipeline, dtype",
    [
        (FUZZ_1023, "tapeflow{spm-bytes=64 depth=4 tile-bytes=8 policy=min-tape}", np.float64),
        (FUZZ_1004, "tapeflow{spm-bytes=48 depth=2 tile-bytes=24 policy=min-tape}", np.float32),
    ],
)
def test_fuzzed_streamed_programs_identical(text: str, pipeline: str, dtype: Any):
    module = runner.load_module(text, "z.mlir")
    PassPipeline.parse_spec(get_all_passes(), pipeline).apply(make_context(), module)
    x = np.array([0.3, -0.2, 0.5, 0.1], dtype)
    s, seed = dtype(0.5), dtype(1.0)
    args = [x, np.ones(4, dtype), x[::-1].copy(), np.zeros(4, dtype), s, 2,
            np.zeros(4, np.int64), seed]  # fmt: skip
    run = check_against_interpreter(str(module), "f_grad", args)
    assert run.arguments[1][1] == 0.0  # the reverse loop ran: d_x[1] was read and zeroed


SHIFTS = """
func.func @f(%a: i64, %b: i32, %n: index) -> (i64, i32, index) {
  %c3 = arith.constant 3 : i64
  %c5 = arith.constant 5 : i32
  %c1 = arith.constant 1 : index
  %x = arith.shrsi %a, %c3 : i64
  %y = arith.shrsi %b, %c5 : i32
  %z = arith.shrsi %n, %c1 : index
  func.return %x, %y, %z : i64, i32, index
}
"""


@pytest.mark.parametrize("a, b, n", [(-17, -1000, 9), (1 << 62, 2**31 - 1, -7), (-(1 << 63), 0, 0)])
def test_shift_right_by_a_constant_inline(a: int, b: int, n: int):
    """arith.shrsi by a constant is inline Python (no interpreter call); negative values
    shift arithmetically as in the interpreter."""
    assert "_RUN(" not in CompiledModule(runner.load_module(SHIFTS, "s.mlir")).source
    run = check_against_interpreter(SHIFTS, "f", [a, b, n])
    assert run.results == [a >> 3, b >> 5, n >> 1]


def test_ideal_tape_is_enzymes_program_with_a_free_tape():
    """`ideal-tape` (gem5-SALAM's "ad"): the Enzyme layout's program, op for op, with every
    tape data access counted but making no memory access (no cache access, no port, no
    latency); both paths agree (every kernel: `test_kernel_stage_identical`)."""
    module, entry, args = stage_module("gemm", "lower-tape")
    ideal, _, _ = stage_module("gemm", "ideal-tape")
    enzyme, _ = assert_identical(module, entry, args)
    free, _ = assert_identical(ideal, entry, args)
    e, f = enzyme.report, free.report
    tagged = [op for op in ideal.walk() if "tapeflow.ideal_tape" in op.attributes]
    assert {op.name for op in tagged} == {"memref.load", "memref.store"}
    assert f["ops"]["by_class"] == e["ops"]["by_class"]  # the same compute, op for op
    assert f["ops"]["instructions"] == e["ops"]["instructions"]
    n = f["ops"]["ideal_tape"]
    assert n["loads"] == n["stores"] > 0 and "ideal_tape" not in e["ops"]
    assert f["ops"]["loads"] == e["ops"]["loads"] - n["loads"]  # the tape's accesses left
    assert f["ops"]["stores"] == e["ops"]["stores"] - n["stores"]  # the memory ports
    # The tape's traffic was the whole difference: the cache saw exactly the rest.
    assert f["levels"]["L1"]["accesses"] == e["levels"]["L1"]["accesses"] - 2 * n["loads"]
    assert f["tape_bytes"] == e["tape_bytes"] > 0  # the same tape, allocated, never touched
    assert f["cycles"] < e["cycles"]
    for a, b in zip(enzyme.run.arguments, free.run.arguments, strict=True):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()  # the same gradients


def test_ideal_growable_tape_both_paths_agree():
    """A growable stack with a free tape: the values' accesses are free, its size,
    capacity, slot and the buffer's copy when it doubles are not; both paths agree."""
    module = runner.load_module(GROWABLE, "g.mlir")
    PassPipeline.parse_spec(get_all_passes(), "tapeflow-autodiff,"
                            "tapeflow-lower-tape{ideal_tape=true}").apply(make_context(), module)
    args = [np.array([0.7]), np.zeros(1), np.array([3, 20]), 1.0]
    ref, _ = assert_identical(module, "f_grad", args)
    assert ref.report["ops"]["ideal_tape"] == {"loads": 23, "stores": 23}  # 23 sines
    assert ref.report["ops"]["loads"] > 0  # the stack's bookkeeping is charged
