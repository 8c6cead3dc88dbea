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
from tapeflow.hwmodel.compiled import CompiledModule, UnsupportedOpError
from tapeflow.hwmodel.config import load_machine
from tapeflow.hwmodel.fastsim import simulate_auto, simulate_fast, simulate_fast_many
from tapeflow.hwmodel.model import simulate
from tapeflow.registry import get_all_passes, make_context


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Every place where two reports (nested dicts/lists/arrays/numbers) differ."""
    out: list[str] = []
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                out.append(f"{path}.{key}: missing on one side")
            else:
                out += differences(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype or a.tobytes() != b.tobytes():
            out.append(f"{path}: arrays differ")
    elif isinstance(a, list | tuple) and isinstance(b, list | tuple):
        if len(a) != len(b):
            out.append(f"{path}: lengths {len(a)} != {len(b)}")
        else:
            for i, (x, y) in enumerate(zip(a, b)):
                out += differences(x, y, f"{path}[{i}]")
    elif type(a) is not type(b) and not (
        isinstance(a, int | float) and isinstance(b, int | float) and type(a) is not bool
    ):
        out.append(f"{path}: types {type(a).__name__} != {type(b).__name__}")
    elif isinstance(a, float) and np.isnan(a):
        if not (isinstance(b, float) and np.isnan(b)):
            out.append(f"{path}: {a!r} != {b!r}")
    elif a != b or (isinstance(a, float) and repr(a) != repr(b)):
        out.append(f"{path}: {a!r} != {b!r}")
    return out


def both(module, entry: str, args, machine=None, fast_batch: int = 1 << 16):
    """Runs the op-by-op and the compiled simulation on copies of `args`."""
    ref = simulate(module, entry, copy.deepcopy(args), machine)
    fast = simulate_fast(module, entry, copy.deepcopy(args), machine, batch=fast_batch)
    return ref, fast


def assert_identical(module, entry: str, args, machine=None, fast_batch: int = 1 << 16):
    ref, fast = both(module, entry, args, machine, fast_batch)
    diffs = differences(ref.report, fast.report)
    diffs += differences(ref.run.results, fast.run.results, "results")
    diffs += differences(ref.run.arguments, fast.run.arguments, "arguments")
    assert not diffs, "\n".join(diffs[:20])
    return ref, fast


def interpreter_counts(module, entry: str, args) -> Any:
    counter = OpCounter()
    run = runner.run_function(module, entry, copy.deepcopy(args), listeners=[counter])
    return run, counter.ops


def compiled_counts(module, entry: str, args) -> Any:
    from tapeflow.hwmodel.fastsim import run_compiled

    run, trace = run_compiled(CompiledModule(module), entry, copy.deepcopy(args))
    return run, trace.op_counts()


def check_against_interpreter(text: str, entry: str, args) -> Any:
    module = runner.load_module(text, "k.mlir")
    run1, ops1 = interpreter_counts(module, entry, args)
    run2, ops2 = compiled_counts(module, entry, args)
    diffs = differences(run1.results, run2.results, "results")
    diffs += differences(run1.arguments, run2.arguments, "arguments")
    assert not diffs, "\n".join(diffs)
    assert dict(ops1) == dict(ops2)
    assert_identical(module, entry, args)
    assert_identical(module, entry, args, fast_batch=5)  # flushes inside every loop
    for w in (1, 3, 7):  # a phase window ends in (almost) every loop iteration
        assert_identical(module, entry, args, load_machine(overrides=[f"core.window_ops={w}"]),
                         fast_batch=5)  # fmt: skip
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
// symbol, which the op-by-op model (hwmodel/model.py) evaluates as a dimension.
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
# The benchmark kernels at their small size, through each stage of the pipeline.

STAGES = {
    "primal": None,
    "autodiff": "tapeflow-autodiff",
    "lower-tape": "tapeflow-autodiff,tapeflow-lower-tape",
    "regions": "tapeflow-autodiff,tapeflow-regions",
    "stream-d1": "tapeflow-autodiff,tapeflow-regions,tapeflow-layers{spm-bytes=64 depth=1},"
    "tapeflow-stream{depth=1}",
    "stream-d2": "tapeflow-autodiff,tapeflow-regions,tapeflow-layers{spm-bytes=2048},"
    "tapeflow-stream",
    "tapeflow": "tapeflow",
}


def _kernels() -> list[str]:
    try:
        from benchmarks.kernels import KERNELS
    except ImportError:
        return []
    return list(KERNELS)


def _stage_module(name: str, stage: str):
    from benchmarks.kernels import KERNELS

    kernel = KERNELS[name]
    module = runner.load_module(kernel.source("small"), f"{name}.mlir")
    spec = STAGES[stage]
    if spec is None:
        return module, kernel.entry, kernel.inputs("small")
    passes = get_all_passes()
    try:
        PassPipeline.parse_spec(passes, spec).apply(make_context(), module)
    except ModuleNotFoundError as e:  # a pass not written yet
        pytest.skip(f"{stage}: {e}")
    module.verify()
    fn = runner.find_function(module, kernel.grad_entry)
    scalars = [t for t in fn.function_type.inputs.data if not isinstance(t, MemRefType)]
    args = runner.make_arguments(fn, seed=0, scalars=[1.0] * len(scalars))
    return module, kernel.grad_entry, args


@pytest.mark.parametrize("stage", list(STAGES))
@pytest.mark.parametrize("name", _kernels())
def test_kernel_stage_identical(name: str, stage: str):
    module, entry, args = _stage_module(name, stage)
    _, ops1 = interpreter_counts(module, entry, args)
    _, ops2 = compiled_counts(module, entry, args)
    assert dict(ops1) == dict(ops2)  # every op, by name, as OpCounter counts them
    ref, _ = assert_identical(module, entry, args)
    if stage.startswith("stream") and ref.report["tape_bytes"] > 0:
        assert ref.report["dma"]["transfers"] > 0  # the DMA path was exercised
    assert_identical(module, entry, args, fast_batch=97)
    # A tiny cache hierarchy: evictions, write-backs and prefetches at small sizes.
    tiny = load_machine(overrides=["l1.size=1024", "l1.assoc=2", "l2.size=4096", "l2.assoc=4",
                                   "prefetch.table_size=4"])  # fmt: skip
    ref, _ = assert_identical(module, entry, args, tiny)
    if ref.report["levels"]["L1"]["accesses"] > 2000:
        assert ref.report["levels"]["L1"]["writebacks"] + ref.report["levels"]["L2"]["misses"] > 0
    # Phase windows ending inside bulk-counted loops, between DMA fences, across batches.
    for w in (5, 61):
        win = load_machine(overrides=[f"core.window_ops={w}"])
        ref, _ = assert_identical(module, entry, args, win, fast_batch=97)
        assert ref.report["phases"] > 1


def test_stream_stage_exercises_dma_stalls_and_spm():
    """At least one small kernel streams its tape with DMA, stalls and a scratchpad."""
    if "gemm" not in _kernels():
        pytest.skip("no benchmark kernels")
    module, entry, args = _stage_module("gemm", "stream-d1")
    ref, _ = assert_identical(module, entry, args)
    assert ref.report["dma"]["transfers"] > 2
    assert ref.report["sram"]["spm_high_water_bytes"] > 0
    assert ref.report["cycle_terms"]["T_dma_stall"] > 0


def test_one_run_many_machines_equals_separate_runs():
    """The cache sweep: one compiled run feeding several machines."""
    sets = [[], ["l2.size=65536"], ["l1.size=4096", "l2.size=16384", "prefetch.enabled=false"]]
    machines = [load_machine(overrides=o) for o in sets]
    if "mlp" in _kernels():
        module, entry, args = _stage_module("mlp", "lower-tape")
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
    try:
        from benchmarks.kernels import KERNELS
        from benchmarks.kernels.generate import TEMPLATES
    except ImportError:
        pytest.skip("no benchmark kernels")
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
