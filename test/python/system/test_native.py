"""Native execution with upstream MLIR (`tapeflow-lower-to-std`, `tapeflow.native`,
`tapeflow-exec`) gives the interpreter's numbers.

For every benchmark kernel at its small size, and for small hand-written kernels that use
the tape, region and stream dialects directly, the function is run in the xDSL interpreter
and natively (lowered to upstream dialects, compiled by mlir-opt-22, run by
mlir-runner-22) after each stage of the pipeline; every result and every memref argument
must agree to a relative difference of at most 1e-12 (values travel bit for bit, so in
practice they are identical). Tests that need the upstream tools skip, with the reason,
where they are absent; `.ci/run` installs them.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tapeflow.transforms.lower_to_std import (
    LowerToStdPass,
    check_upstream_only,
    lower_stream_and_regions,
)
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import InterpretationError

from tapeflow import native, registry
from tapeflow.diagnostics import ToolError
from tapeflow.runner import (
    RunResult,
    find_function,
    format_json,
    format_text,
    load_module,
    make_arguments,
    run_function,
)


from tapeflow.eval.bundled import KERNELS, make_inputs
from helpers.runs import RTOL, assert_same_run, copy_args, max_rel_diff

pytestmark = pytest.mark.xdist_group("native")  # the stages and native programs are shared

needs_mlir = pytest.mark.skipif(
    not native.tools_available(),
    reason="upstream MLIR 22 is not installed (apt-get install -y mlir-22-tools libmlir-22)",
)


# ---------------------------------------------------------------------------------------
# helpers


@pytest.fixture(scope="module", autouse=True)
def _each_native_program_runs_once():
    """mlir-opt-22 and mlir-runner-22 run once per program text in this file: every stage
    of a kernel without tapes (ba, jacobi2d, pairwise) lowers to one program, the same
    bytes, and both tools are deterministic."""
    compiled: dict[tuple[str, bool], str] = {}
    printed: dict[tuple[str, tuple[str, ...]], str] = {}
    compile_to_llvm, run_llvm = native.compile_to_llvm, native.run_llvm

    def compile_once(program: str, tools=None, verify: bool = False) -> str:
        if (program, verify) not in compiled:
            compiled[program, verify] = compile_to_llvm(program, tools, verify)
        return compiled[program, verify]

    def run_once(llvm: str, tools=None, flags: Sequence[str] = ()) -> str:
        if (llvm, tuple(flags)) not in printed:
            printed[llvm, tuple(flags)] = run_llvm(llvm, tools, flags)
        return printed[llvm, tuple(flags)]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(native, "compile_to_llvm", compile_once)
        patch.setattr(native, "run_llvm", run_once)
        yield


def interpret_and_native(module: ModuleOp, entry: str, args: Sequence[Any]) -> None:
    expected = run_function(module, entry, copy_args(args))
    actual = native.run_function_native(module, entry, copy_args(args))
    assert_same_run(expected, actual)


def apply_pipeline(module: ModuleOp, spec: str) -> ModuleOp:
    if not spec:
        return module
    result = module.clone()
    PassPipeline.parse_spec(registry.get_all_passes(), spec).apply(registry.make_context(), result)
    result.verify()
    return result


# ---------------------------------------------------------------------------------------
# hand-written kernels: a gradient in the autodiff contract's form, and region/stream IR

GRAD = """
func.func @f_grad(%x: memref<37xf64>, %dx: memref<37xf64>, %n: index, %seed: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %nm1 = arith.subi %n, %c1 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %t = tape.init : !tape.cache<f64>
  %b = tape.init capacity = 2 : !tape.cache<i1>
  %j = tape.init : !tape.cache<index>
  %loss = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %v = memref.load %x[%i] : memref<37xf64>
    %th = math.tanh %v : f64
    tape.push %t, %th : !tape.cache<f64>
    %p = arith.cmpf ogt, %v, %zero : f64
    tape.push %b, %p : !tape.cache<i1>
    %i2 = arith.muli %i, %i : index
    tape.push %j, %i2 : !tape.cache<index>
    %s = arith.select %p, %th, %v : f64
    %a2 = arith.addf %acc, %s : f64
    scf.yield %a2 : f64
  } {tapeflow.loop = 0 : i64}
  scf.for %k = %c0 to %n step %c1 {
    %i2 = tape.pop %j : !tape.cache<index>
    %p = tape.pop %b : !tape.cache<i1>
    %th = tape.pop %t : !tape.cache<f64>
    %i = arith.subi %nm1, %k : index
    %th2 = arith.mulf %th, %th : f64
    %d = arith.subf %one, %th2 : f64
    %g = arith.select %p, %d, %one : f64
    %gs = arith.mulf %g, %seed : f64
    %i2i = arith.index_cast %i2 : index to i64
    %i2f = arith.sitofp %i2i : i64 to f64
    %w = arith.divf %gs, %i2f : f64
    %old = memref.load %dx[%i] : memref<37xf64>
    %new = arith.addf %old, %w : f64
    memref.store %new, %dx[%i] : memref<37xf64>
  } {tapeflow.loop = 0 : i64}
  tape.free %t : !tape.cache<f64>
  tape.free %b : !tape.cache<i1>
  tape.free %j : !tape.cache<index>
  return %loss : f64
}
"""

REGION_STREAM = """
!R = !region.record<f64, i1, index>
!B = !region.tape<!R, #stream.spm>
!F = !stream.fifo<!R, 4>
func.func @g(%a: memref<12xf64>, %out: memref<12xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
  %b0 = region.alloc count = 4 : !B
  %b1 = region.alloc(%c4) : !B
  %f = stream.fifo_alloc(%c3) : !F
  %scratch = memref.alloc() : memref<4xf64, #stream.spm>
  scf.for %t = %c0 to %c3 step %c1 {
    %odd = arith.remsi %t, %c2 : index
    %isodd = arith.cmpi eq, %odd, %c1 : index
    %buf = arith.select %isodd, %b1, %b0 : !B
    stream.acquire_write %buf : !B
    scf.for %k = %c0 to %c4 step %c1 {
      %t4 = arith.muli %t, %c4 : index
      %i = arith.addi %t4, %k : index
      %x = memref.load %a[%i] : memref<12xf64>
      %s = math.tanh %x : f64
      memref.store %s, %scratch[%k] : memref<4xf64, #stream.spm>
      %p = arith.cmpf ogt, %s, %z : f64
      region.write %buf[%k], %s, %p, %i : !B
    }
    %w = stream.commit %buf -> %f[%t] : !F
    stream.wait %w
  }
  %r = scf.for %u = %c0 to %c3 step %c1 iter_args(%acc = %z) -> (f64) {
    %t2 = arith.subi %c3, %u : index
    %t = arith.subi %t2, %c1 : index
    %tok = stream.prefetch %f[%t] -> %b0 : !F
    stream.acquire_read %b0, %tok : !B
    %acc2 = scf.for %k = %c0 to %c4 step %c1 iter_args(%a2 = %acc) -> (f64) {
      %v, %p, %i = region.read %b0[%k] : !B
      %w = arith.select %p, %v, %z : f64
      %sc = memref.load %scratch[%k] : memref<4xf64, #stream.spm>
      %w2 = arith.addf %w, %sc : f64
      memref.store %w2, %out[%i] : memref<12xf64>
      %y = arith.addf %a2, %w2 : f64
      scf.yield %y : f64
    }
    stream.release %b0 : !B
    scf.yield %acc2 : f64
  }
  memref.dealloc %scratch : memref<4xf64, #stream.spm>
  stream.fifo_dealloc %f : !F
  region.dealloc %b0 : !B
  region.dealloc %b1 : !B
  return %r : f64
}
"""

SCALARS = """
func.func @scalars(%a: f64, %b: f32, %c: i32, %d: index, %e: i1, %m: memref<2x3xi32>,
                   %v: memref<?xf64>) -> (f64, f32, i32, index, i1, f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %third = arith.constant 3.0 : f64
  %q = arith.divf %a, %third : f64
  %x = memref.load %v[%c1] : memref<?xf64>
  %y = arith.mulf %x, %q : f64
  memref.store %y, %v[%c0] : memref<?xf64>
  %neg = arith.constant -7 : i32
  memref.store %neg, %m[%c1, %c1] : memref<2x3xi32>
  return %q, %b, %c, %d, %e, %x : f64, f32, i32, index, i1, f64
}
"""

EMPTY_POP = """
func.func @e(%x: f64) -> f64 {
  %t = tape.init : !tape.cache<f64>
  tape.push %t, %x : !tape.cache<f64>
  %a = tape.pop %t : !tape.cache<f64>
  %b = tape.pop %t : !tape.cache<f64>
  %s = arith.addf %a, %b : f64
  tape.free %t : !tape.cache<f64>
  return %s : f64
}
"""

OWN_STAGES = {
    "input": "",
    "lower-tape": "tapeflow-lower-tape",
    "regions": "tapeflow-regions",
    "lower-regions": "tapeflow-regions,tapeflow-lower-regions",
    "layers": "tapeflow-regions,tapeflow-layers{spm-bytes=128}",
    "stream-depth1": "tapeflow-regions,tapeflow-layers{spm-bytes=128},"
    "tapeflow-stream{tile-bytes=48 depth=1}",
    "stream-depth2": "tapeflow-regions,tapeflow-layers{spm-bytes=128},"
    "tapeflow-stream{tile-bytes=64 depth=2}",
}


def _grad_args(n: int) -> list[Any]:
    module = load_module(GRAD, "grad.mlir")
    return make_arguments(find_function(module, "f_grad"), seed=3, scalars=[str(n), "1.5"])


@needs_mlir
@pytest.mark.parametrize("stage", sorted(OWN_STAGES))
@pytest.mark.parametrize("n", [1, 37])
def test_own_gradient_kernel_each_stage(stage: str, n: int):
    module = apply_pipeline(load_module(GRAD, "grad.mlir"), OWN_STAGES[stage])
    interpret_and_native(module, "f_grad", _grad_args(n))


@needs_mlir
def test_region_and_stream_ops_with_double_buffers():
    module = load_module(REGION_STREAM, "rs.mlir")
    args = [np.linspace(-1.0, 1.3, 12), np.zeros(12)]
    interpret_and_native(module, "g", args)
    out = copy_args(args)
    result = native.run_function_native(module, "g", out)
    assert np.count_nonzero(out[1]) > 0, "the native run wrote nothing"
    assert result.results[0] != 0.0


@needs_mlir
def test_scalars_and_memrefs_travel_bit_for_bit():
    module = load_module(SCALARS, "s.mlir")
    v = np.array([0.0, 0.1, 0.7])
    args = [1 / 7, 0.1, -123456, 2**40, True, np.arange(6, dtype=np.int32).reshape(2, 3), v]
    expected = run_function(module, "scalars", copy_args(args))
    actual = native.run_function_native(module, "scalars", copy_args(args))
    assert format_text(actual) == format_text(expected)
    assert format_json(actual) == format_json(expected)
    q = actual.results[0]
    assert q == (1 / 7) / 3.0
    assert f"{q:.6f}" != repr(q)
    assert actual.results[1:5] == [float(np.float32(0.1)), -123456, 2**40, True]
    assert actual.arguments[5][1, 1] == -7
    assert actual.arguments[5].dtype == np.int32
    assert actual.arguments[6][0] == 0.1 * q


MATH_UNARY = (
    "sin cos tan tanh sinh cosh exp exp2 expm1 log log2 log10 log1p sqrt rsqrt cbrt erf atan "
    "atanh asin acos absf floor ceil round roundeven trunc"
).split()
MATH_OTHER = {
    "powf": "math.powf %absf, %h : f64",
    "fpowi": "math.fpowi %v, %three : f64, i32",
    "atan2": "math.atan2 %v, %h : f64",
    "fma": "math.fma %v, %h, %v : f64",
    "copysign": "math.copysign %h, %v : f64",
    "negf": "arith.negf %v : f64",
    "divf": "arith.divf %h, %v : f64",
    "maxnumf": "arith.maxnumf %v, %h : f64",
    "minimumf": "arith.minimumf %v, %h : f64",
    "extf": "arith.extf %t32 : f32 to f64",
    "sitofp": "arith.sitofp %fi : i32 to f64",
}


def math_kernel() -> tuple[str, list[str]]:
    """Stores every math/arith op the AD rules emit, applied to x[i], into out[op, i]."""
    exprs = [(u, f"math.{u} %v : f64") for u in MATH_UNARY] + list(MATH_OTHER.items())
    rows = len(exprs)
    body = [
        f"func.func @m(%x: memref<8xf64>, %out: memref<{rows}x8xf64>) {{",
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        "  %c8 = arith.constant 8 : index",
        "  %three = arith.constant 3 : i32",
        "  %h = arith.constant 0.37 : f64",
        "  scf.for %i = %c0 to %c8 step %c1 {",
        "    %v = memref.load %x[%i] : memref<8xf64>",
        "    %t32 = arith.truncf %v : f64 to f32",
    ]
    for row, (name, expr) in enumerate(exprs):
        body.append(f"    %{name} = {expr}")
        if name == "powf":
            body.append("    %fi = arith.fptosi %powf : f64 to i32")
        body.append(f"    %r{row} = arith.constant {row} : index")
        body.append(f"    memref.store %{name}, %out[%r{row}, %i] : memref<{rows}x8xf64>")
    body += ["  }", "  func.return", "}"]
    return "\n".join(body) + "\n", [name for name, _ in exprs]


@needs_mlir
def test_math_ops_native_equal_interpreter():
    """Every math op natively within 1e-12 of the interpreter, tiny arguments included
    (upstream expands expm1/log1p inexactly; the native program calls libm for them)."""
    text, names = math_kernel()
    module = load_module(text, "math.mlir")
    x = np.array([0.3, -0.7, 1e-10, -0.05, 0.5, 0.123456789, -1e-300, 0.999])
    out = np.zeros((len(names), 8))
    expected = run_function(module, "m", [x, out.copy()])
    actual = native.run_function_native(module, "m", [x, out.copy()])
    for row, name in enumerate(names):
        e, a = expected.arguments[1][row], actual.arguments[1][row]
        assert max_rel_diff(e, a) <= RTOL, (name, e, a)


MEMREF_RESULT = """
func.func @r(%b: memref<2x3xi1>, %n: index) -> (memref<?xf64>, i64) {
  %m = memref.alloc(%n) : memref<?xf64>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = arith.constant 2.5 : f64
  scf.for %i = %c0 to %n step %c1 {
    memref.store %x, %m[%i] : memref<?xf64>
  }
  %t = arith.constant true
  memref.store %t, %b[%c1, %c0] : memref<2x3xi1>
  %k = arith.constant -5 : i64
  return %m, %k : memref<?xf64>, i64
}
"""


@needs_mlir
def test_memref_results_and_bool_arrays():
    module = load_module(MEMREF_RESULT, "r.mlir")
    b = np.array([[True, False, True], [False, False, True]])
    expected = run_function(module, "r", [b.copy(), 4])
    actual = native.run_function_native(module, "r", [b.copy(), 4])
    assert format_text(actual) == format_text(expected)
    assert actual.results[0].tolist() == [2.5] * 4
    assert actual.results[1] == -5
    assert actual.arguments[0].tolist() == [[True, False, True], [True, False, True]]


@needs_mlir
def test_native_updates_given_arrays_in_place():
    module = load_module(SCALARS, "s.mlir")
    m, v = np.zeros((2, 3), dtype=np.int32), np.array([0.0, 2.0, 0.0])
    native.run_function_native(module, "scalars", [3.0, 1.0, 1, 1, False, m, v])
    assert m[1, 1] == -7
    assert v[0] == 2.0


@needs_mlir
def test_pop_on_empty_cache_is_a_native_runtime_error():
    module = load_module(EMPTY_POP, "empty.mlir")
    with pytest.raises(InterpretationError, match=r"empty\.mlir:6:3: 'tape\.pop' pop on empty"):
        native.run_function_native(module, "e", [2.0])


def test_lowered_module_uses_upstream_dialects_only():
    for text in (GRAD, REGION_STREAM):
        module = load_module(text)
        LowerToStdPass().apply(registry.make_context(), module)
        check_upstream_only(module)
        names = {op.dialect_name() for op in module.walk()}
        assert not names & {"tape", "region", "stream"}
        assert "#stream.spm" not in str(module)


def test_missing_tools_say_how_to_install(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(native.shutil, "which", lambda name: None)
    with pytest.raises(ToolError, match=r"apt-get install -y mlir-22-tools libmlir-22"):
        native.find_tools()


def test_tapeflow_exec_without_tools_exits_1(tmp_path: Path):
    source = tmp_path / "k.mlir"
    source.write_text(EMPTY_POP)
    exe = Path(sys.executable).parent / "tapeflow-exec"
    assert exe.exists(), "tapeflow-exec is not installed beside python (pip install -e .)"
    env = {"PATH": str(tmp_path), "TAPEFLOW_MLIR_LIB_DIR": str(tmp_path)}
    done = subprocess.run(
        [str(exe), str(source), "--args", "1"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 1
    assert "apt-get install" in done.stderr
    assert "Traceback" not in done.stderr


# ---------------------------------------------------------------------------------------
# the benchmark kernels


def _kernel_module(name: str, size: str = "small") -> ModuleOp:
    kernel = KERNELS[name]
    return load_module(kernel.source(size), str(kernel.path(size)))


@needs_mlir
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_primal_kernel_native_equals_interpreter(name: str):
    kernel = KERNELS[name]
    module = _kernel_module(name)
    args = [a for a in make_inputs(name, "small", 0)]
    interpret_and_native(module, kernel.entry, args)


KERNEL_STAGES = {
    "autodiff": "tapeflow-autodiff",
    "lower-tape": "tapeflow-autodiff,tapeflow-lower-tape",
    "regions": "tapeflow-autodiff,tapeflow-regions",
    "lower-regions": "tapeflow-autodiff,tapeflow-regions,tapeflow-lower-regions",
    "layers": "tapeflow-autodiff,tapeflow-regions,tapeflow-layers{spm-bytes=256}",
    "stream": "tapeflow-autodiff,tapeflow-regions,tapeflow-layers{spm-bytes=256},"
    "tapeflow-stream{depth=2}",
    "stream-tiny-depth1": "tapeflow-autodiff,tapeflow-regions,tapeflow-layers{spm-bytes=96},"
    "tapeflow-stream{depth=1}",
    "stream-depth4": "tapeflow-autodiff,tapeflow-regions,"
    "tapeflow-layers{spm-bytes=512 depth=4},tapeflow-stream{depth=4}",
    "tapeflow": "tapeflow{mode=always}",
}


def gradient_arguments(name: str, module: ModuleOp, size: str = "small") -> tuple[str, list[Any]]:
    """`@<entry>_grad`'s arguments: the kernel's inputs, each float memref followed by a
    zero shadow (CONTRACTS.md), then 1.0 for every float scalar (the seed)."""
    kernel = KERNELS[name]
    entry = f"{kernel.entry}_grad"
    func_op = find_function(module, entry)
    args: list[Any] = []
    for a in make_inputs(name, size, 0):
        args.append(a)
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            args.append(np.zeros_like(a))
    types = func_op.function_type.inputs.data
    while len(args) < len(types) and not isinstance(types[len(args)], MemRefType):
        args.append(1.0)
    if len(args) != len(types):
        return entry, make_arguments(
            func_op, seed=0, scalars=["1.0" for t in types if not isinstance(t, MemRefType)]
        )
    return entry, args


@functools.cache
def _kernel_stage(name: str, stage: str) -> tuple[ModuleOp, str, list[Any], RunResult]:
    """The kernel at `stage`, its gradient's entry and arguments and the interpreter's run
    of it, made once for the tests below (both the native and the lowering check compare
    against that run). Read-only: a test takes clones of the module and copies of the
    arguments."""
    module = apply_pipeline(_kernel_module(name), KERNEL_STAGES[stage])
    entry, args = gradient_arguments(name, module)
    return module, entry, args, run_function(module, entry, copy_args(args))


@needs_mlir
@pytest.mark.parametrize("stage", list(KERNEL_STAGES))
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_gradient_kernel_native_equals_interpreter_each_stage(name: str, stage: str):
    module, entry, args, expected = _kernel_stage(name, stage)
    assert_same_run(expected, native.run_function_native(module.clone(), entry, copy_args(args)))


@pytest.mark.parametrize("stage", ["regions", "layers", "stream", "stream-tiny-depth1"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_region_stream_lowering_keeps_meaning_in_the_interpreter(name: str, stage: str):
    """Without upstream tools: the region/stream part of tapeflow-lower-to-std (struct of
    arrays, copies for DMA) interpreted gives the numbers of the unlowered stage."""
    module, entry, args, expected = _kernel_stage(name, stage)
    lowered = module.clone()
    lower_stream_and_regions(lowered)
    lowered.verify()
    assert not any(op.dialect_name() in ("region", "stream") for op in lowered.walk())
    assert_same_run(expected, run_function(lowered, entry, copy_args(args)))


@pytest.mark.slow
@needs_mlir
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_default_size_enzyme_layout_and_tapeflow_agree_natively(name: str):
    base = apply_pipeline(_kernel_module(name, "default"), KERNEL_STAGES["lower-tape"])
    flow = apply_pipeline(_kernel_module(name, "default"), KERNEL_STAGES["tapeflow"])
    entry, args = gradient_arguments(name, base, "default")
    assert_same_run(
        native.run_function_native(base, entry, copy_args(args)),
        native.run_function_native(flow, entry, copy_args(args)),
    )


@pytest.mark.slow
@needs_mlir
def test_tapeflow_exec_prints_what_tapeflow_run_prints(tmp_path: Path):
    source = tmp_path / "grad.mlir"
    source.write_text(GRAD)
    bindir = Path(sys.executable).parent
    for tool in ("tapeflow-exec", "tapeflow-run"):
        assert (bindir / tool).exists(), f"{tool} is not installed beside python (pip install -e .)"
    for extra in ([], ["--json"]):
        command = [str(source), "--entry", "f_grad", "--args", "37", "1.5", "--zero", "1", *extra]
        run = subprocess.run(
            [str(bindir / "tapeflow-run"), *command], capture_output=True, text=True
        )
        exe = subprocess.run(
            [str(bindir / "tapeflow-exec"), *command], capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        assert exe.returncode == 0, exe.stderr
        assert exe.stdout == run.stdout


@needs_mlir
def test_timed_calls_each_start_from_the_given_inputs():
    """`time_function_native` calls the gradient several times in one process; each call
    starts from the pristine inputs, so the shadows after three calls are those of one
    (they accumulate: a call that saw the previous one's shadows would double them)."""
    module, entry, args, _ = _kernel_stage("gemm", "tapeflow")
    once = native.run_function_native(module, entry, copy_args(args))
    seconds, final = native.time_function_native(module, entry, copy_args(args), calls=3)
    assert len(seconds) == 3 and all(s >= 0 for s in seconds)
    memrefs = [once.arguments[p] for p in once.memref_positions]
    assert len(final) == len(memrefs)
    for got, want in zip(final, memrefs):
        assert np.array_equal(got, want)
    assert any(np.any(m != 0) for m in memrefs[1::2])  # the shadows are not all zero
