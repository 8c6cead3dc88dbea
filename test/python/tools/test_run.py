"""tapeflow-run and tapeflow.runner: arguments by the fill rule, text and JSON output,
in-place memref updates, and every error path (`error:` on stderr, exit 1, no traceback)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tapeflow import runner
from tapeflow.diagnostics import ToolError
from tapeflow.tools.run import main

SIN = """
func.func @f(%x: f64) -> f64 {
  %s = math.sin %x : f64
  func.return %s : f64
}
"""

# y[i] = s * tanh(x[i]); returns sum(y).
TANH = """
func.func @f(%x: memref<5xf64>, %y: memref<5xf64>, %s: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f64
  %sum = scf.for %i = %c0 to %c5 step %c1 iter_args(%acc = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<5xf64>
    %t = math.tanh %a : f64
    %m = arith.mulf %t, %s : f64
    memref.store %m, %y[%i] : memref<5xf64>
    %n = arith.addf %acc, %m : f64
    scf.yield %n : f64
  }
  func.return %sum : f64
}
"""

# A 2-D f32 kernel with an index-array argument: out[i, j] = a[idx[i], j] * 2.
GATHER = """
func.func @g(%a: memref<3x2xf32>, %idx: memref<4xindex>, %out: memref<4x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %k = memref.load %idx[%i] : memref<4xindex>
    scf.for %j = %c0 to %c2 step %c1 {
      %v = memref.load %a[%k, %j] : memref<3x2xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %out[%i, %j] : memref<4x2xf32>
    }
  }
  func.return
}
"""

POP_EMPTY = """
func.func @f() -> f64 {
  %c = tape.init : !tape.cache<f64>
  %v = tape.pop %c : !tape.cache<f64>
  func.return %v : f64
}
"""


def fill(seed: int, position: int, size: int) -> np.ndarray:
    """The documented fill rule, restated."""
    return np.random.default_rng([seed, position]).uniform(-1.0, 1.0, size)


@pytest.fixture
def kernel(tmp_path):
    def write(text: str, name: str = "k.mlir") -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------------------------
# Output


@pytest.mark.parametrize("x", [0.5, -2.25, 1e-300, 3.0])
def test_scalar_sin_prints_python_repr(capsys, kernel, x):
    code, out, err = cli(capsys, kernel(SIN), "--entry", "f", "--args", repr(x))
    assert (code, err) == (0, "")
    assert out == f"result[0]: f64 = {math.sin(x)!r}\n"


def test_memref_kernel_follows_the_fill_rule(capsys, kernel):
    code, out, _ = cli(capsys, kernel(TANH), "--entry", "f", "--args", "1.5")
    assert code == 0
    x = fill(0, 0, 5)
    y = [1.5 * math.tanh(v) for v in x]
    total = 0.0
    for v in y:
        total += v
    assert out.splitlines() == [
        f"result[0]: f64 = {total!r}",
        f"arg[0]: memref<5xf64> = {x.tolist()!r}",
        f"arg[1]: memref<5xf64> = {y!r}",
    ]


def test_json_output(capsys, kernel):
    code, out, _ = cli(capsys, kernel(TANH), "--entry", "f", "--args", "1.5", "--json")
    assert code == 0
    data = json.loads(out)
    x = fill(0, 0, 5)
    assert data["function"] == "f"
    assert [r["type"] for r in data["results"]] == ["f64"]
    assert data["results"][0]["value"] == sum(1.5 * math.tanh(v) for v in x)  # in order
    assert [a["index"] for a in data["arguments"]] == [0, 1]
    assert data["arguments"][0] == {
        "index": 0,
        "type": "memref<5xf64>",
        "shape": [5],
        "value": x.tolist(),  # exact: json keeps every bit of a float
    }
    assert data["arguments"][1]["value"] == [1.5 * math.tanh(v) for v in x]


def test_json_non_finite_values_are_strings(capsys, kernel):
    src = """
func.func @f(%x: f64) -> (f64, f64, f64) {
  %z = arith.constant 0.0 : f64
  %n = arith.divf %z, %z : f64
  %p = arith.divf %x, %z : f64
  %m = arith.negf %p : f64
  func.return %n, %p, %m : f64, f64, f64
}
"""
    code, out, _ = cli(capsys, kernel(src), "--args", "1", "--json")
    assert code == 0
    assert [r["value"] for r in json.loads(out)["results"]] == ["nan", "inf", "-inf"]


def test_seed_changes_memrefs_deterministically(capsys, kernel):
    path = kernel(TANH)
    runs = [cli(capsys, path, "--args", "1", "--seed", s)[1] for s in ("3", "3", "4")]
    assert runs[0] == runs[1] != runs[2]
    assert repr(fill(3, 0, 5).tolist()) in runs[0]


def test_f32_and_index_memrefs_from_inputs(capsys, kernel, tmp_path):
    a = np.arange(6, dtype=np.float64).reshape(3, 2) + 0.1
    idx = np.array([2, 0, 1, 2])
    np.savez(tmp_path / "in.npz", arg0=a, idx=idx)
    code, out, err = cli(
        capsys, kernel(GATHER), "--entry", "g", "--inputs", str(tmp_path / "in.npz")
    )
    assert (code, err) == (0, "")
    a32 = a.astype(np.float32)
    expected = (a32[idx] * np.float32(2)).astype(np.float64).tolist()
    lines = out.splitlines()
    assert lines[0] == f"arg[0]: memref<3x2xf32> = {a32.astype(np.float64).tolist()!r}"
    assert lines[1] == "arg[1]: memref<4xindex> = [2, 0, 1, 2]"
    assert lines[2] == f"arg[2]: memref<4x2xf32> = {expected!r}"


def test_inputs_npy_by_position_and_name(capsys, kernel, tmp_path):
    x = np.linspace(-1, 1, 5)
    np.save(tmp_path / "x.npy", x)
    path = kernel(TANH)
    _, by_pos, _ = cli(capsys, path, "--inputs", f"0={tmp_path / 'x.npy'}", "--args", "1")
    _, by_name, _ = cli(capsys, path, "--inputs", f"x={tmp_path / 'x.npy'}", "--args", "1")
    assert by_pos == by_name
    assert f"arg[0]: memref<5xf64> = {x.tolist()!r}" in by_pos


def test_zero_fills_shadows(capsys, kernel):
    src = """
func.func @f(%a: memref<3xf64>, %da: memref<3xf64>, %b: memref<2xf32>, %db: memref<2xf32>) {
  func.return
}
"""
    code, out, _ = cli(capsys, kernel(src), "--zero", "1,3")
    assert code == 0
    assert out.splitlines() == [
        f"arg[0]: memref<3xf64> = {fill(0, 0, 3).tolist()!r}",
        "arg[1]: memref<3xf64> = [0.0, 0.0, 0.0]",
        f"arg[2]: memref<2xf32> = {fill(0, 2, 2).astype(np.float32).tolist()!r}",
        "arg[3]: memref<2xf32> = [0.0, 0.0]",
    ]


@pytest.mark.slow
def test_stdin_pipe_from_tapeflow_opt(tmp_path):
    bindir = Path(sys.executable).parent
    opt, run = str(bindir / "tapeflow-opt"), str(bindir / "tapeflow-run")
    for tool in (opt, run):
        assert Path(tool).exists(), f"{tool} is not installed (pip install -e .)"
    path = tmp_path / "k.mlir"
    path.write_text(SIN)
    optimized = subprocess.run([opt, str(path)], capture_output=True, text=True, check=True)
    proc = subprocess.run(
        [run, "-", "--entry", "f", "--args", "0.5"],
        input=optimized.stdout,
        capture_output=True,
        text=True,
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == f"result[0]: f64 = {math.sin(0.5)!r}\n"


def test_help_documents_fill_rule_and_formats(capsys):
    code, out, _ = cli(capsys, "--help")
    assert code == 0
    for needle in (
        "default_rng([SEED, p]).uniform(-1.0, 1.0, size)",
        "--inputs",
        "arg0",
        "--json",
        "zeros",
        "error:",
    ):
        assert needle in out


# ------------------------------------------------------------------------------------
# Errors: `error: ...` on stderr, exit status 1, no traceback.

ERRORS = [
    # (source or None for a missing file, argv after the file, expected message part)
    (None, ["--entry", "f"], "no such file"),
    ("func.func @f( {", ["--entry", "f"], "k.mlir:1:"),
    (SIN, ["--entry", "nope", "--args", "1"], "no function @nope in the module (it defines @f)"),
    (SIN, ["--entry", "f"], "@f takes 1 scalar argument(s) (f64), got 0"),
    (SIN, ["--entry", "f", "--args", "1", "2"], "got 2"),
    (SIN, ["--entry", "f", "--args", "abc"], "expected a f64 value, got 'abc'"),
    (POP_EMPTY, ["--entry", "f"], "k.mlir:4:3: 'tape.pop' pop on empty cache"),
    (TANH, ["--inputs", "7=missing.npy", "--args", "1"], "missing.npy: no such file"),
    (TANH, ["--zero", "2", "--args", "1"], "argument 2 is not a memref argument"),
    (TANH, ["--bogus"], "unrecognized arguments: --bogus"),
]


@pytest.mark.parametrize(("src", "argv", "message"), ERRORS)
def test_errors_in_process(capsys, kernel, tmp_path, src, argv, message):
    path = kernel(src) if src is not None else str(tmp_path / "absent.mlir")
    code, out, err = cli(capsys, path, *argv)
    assert code == 1
    assert out == ""
    assert "error: " in err
    assert message in err
    assert "Traceback" not in err


@pytest.mark.slow
@pytest.mark.parametrize(("src", "argv", "message"), ERRORS)
def test_errors_as_a_command(kernel, tmp_path, src, argv, message):
    path = kernel(src) if src is not None else str(tmp_path / "absent.mlir")
    proc = subprocess.run(
        [sys.executable, "-m", "tapeflow.tools.run", path, *argv],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1].startswith("error: ") or "error: " in proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_xdsl_assertion_during_run_is_a_located_error(capsys, kernel):
    src = """
func.func @f(%a: i32, %b: i32) -> i32 {
  %q = arith.divsi %a, %b : i32
  func.return %q : i32
}
"""
    code, _, err = cli(capsys, kernel(src), "--args", "1", "0")
    assert code == 1
    assert "k.mlir:3:3: 'arith.divsi' integer division by zero" in err
    assert "Traceback" not in err and "Assertion" not in err


def test_npz_with_unknown_key_is_an_error(capsys, kernel, tmp_path):
    np.savez(tmp_path / "bad.npz", zz=np.zeros(5))
    code, _, err = cli(capsys, kernel(TANH), "--inputs", str(tmp_path / "bad.npz"), "--args", "1")
    assert code == 1
    assert "input 'zz' matches no argument of @f" in err


def test_wrong_shape_input_is_an_error(capsys, kernel, tmp_path):
    np.save(tmp_path / "x.npy", np.zeros(4))
    code, _, err = cli(capsys, kernel(TANH), "--inputs", f"0={tmp_path / 'x.npy'}", "--args", "1")
    assert code == 1
    assert "given an array of shape [4]" in err


def test_dynamic_memref_needs_inputs(capsys, kernel):
    src = """
func.func @f(%a: memref<?xf64>) {
  func.return
}
"""
    code, _, err = cli(capsys, kernel(src))
    assert code == 1
    assert "dynamic shape" in err


# ------------------------------------------------------------------------------------
# The library API


def test_run_function_updates_numpy_arguments_in_place():
    module = runner.load_module(TANH, "k.mlir")
    x = np.linspace(-1, 1, 5)
    y = np.zeros(5)
    result = runner.run_function(module, "f", [x, y, 2.0])
    expected = [2.0 * math.tanh(v) for v in x]
    assert y.tolist() == expected  # mutated in place
    assert result.arguments[1].tolist() == expected
    assert result.memref_positions == [0, 1]
    assert isinstance(result.results[0], float)
    assert result.results[0] == sum(expected)  # summed in loop order, like the kernel


def test_make_arguments_fill_rule_and_inputs():
    module = runner.load_module(GATHER, "k.mlir")
    func_op = runner.find_function(module, "g")
    a, idx, out = runner.make_arguments(func_op, seed=5)
    assert a.dtype == np.float32
    assert a.shape == (3, 2)
    assert a.tolist() == fill(5, 0, 6).astype(np.float32).reshape(3, 2).tolist()
    assert idx.dtype == np.int64
    assert not idx.any()  # integer memrefs: zeros
    assert out.tolist() == fill(5, 2, 8).astype(np.float32).reshape(4, 2).tolist()
    # Giving one argument does not change the others' values.
    a2, idx2, out2 = runner.make_arguments(func_op, seed=5, inputs={"idx": [1, 1, 1, 1]})
    assert np.array_equal(a2, a)
    assert np.array_equal(out2, out)
    assert idx2.tolist() == [1, 1, 1, 1]
    with pytest.raises(ToolError, match="values out of range"):
        runner.make_arguments(func_op, inputs={1: np.array([2**63, 0, 0, 0], dtype=np.uint64)})
    with pytest.raises(ToolError, match="needs integer data"):
        runner.make_arguments(func_op, inputs={1: [0.5, 0, 0, 0]})


def test_run_function_reports_runtime_errors_with_location():
    from xdsl.utils.exceptions import InterpretationError

    module = runner.load_module(POP_EMPTY, "p.mlir")
    with pytest.raises(InterpretationError) as info:
        runner.run_function(module, "f", [])
    assert str(info.value) == "p.mlir:4:3: 'tape.pop' pop on empty cache"
    assert not getattr(info.value, "__notes__", [])


@pytest.mark.parametrize(
    ("text", "type_", "expected"),
    [
        ("1.5", "f64", 1.5),
        ("0.1", "f32", float(np.float32(0.1))),
        ("0x1.8p1", "f64", 3.0),
        ("-inf", "f64", -math.inf),
        ("255", "i8", -1),
        ("-128", "i8", -128),
        ("0x10", "index", 16),
        ("true", "i1", True),
    ],
)
def test_parse_scalar(text, type_, expected):
    from tapeflow.registry import make_context

    module = runner.load_module(f"func.func @f(%x: {type_}) {{ func.return }}", "t", make_context())
    t = runner.find_function(module, "f").function_type.inputs.data[0]
    assert runner.parse_scalar(text, t) == expected


@pytest.mark.parametrize(
    ("text", "type_"), [("256", "i8"), ("-129", "i8"), ("1.0", "i32"), ("x", "f32")]
)
def test_parse_scalar_rejects(text, type_):
    module = runner.load_module(f"func.func @f(%x: {type_}) {{ func.return }}", "t")
    t = runner.find_function(module, "f").function_type.inputs.data[0]
    with pytest.raises(ToolError):
        runner.parse_scalar(text, t)


# A primal and a hand-written gradient in tapeflow-autodiff's convention: float memrefs
# followed by their shadow, integer memrefs unshadowed, active float scalars' gradients
# returned, the seed last. loss = s * sum_i x[i]^2 (n is unused data).
PAIR = """
func.func @f(%x: memref<4xf64>, %n: memref<4xi32>, %s: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f64
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<4xf64>
    %sq = arith.mulf %a, %a : f64
    %n2 = arith.addf %acc, %sq : f64
    scf.yield %n2 : f64
  }
  %r = arith.mulf %s, %sum : f64
  func.return %r : f64
}
func.func @f_grad(%x: memref<4xf64>, %dx: memref<4xf64>, %n: memref<4xi32>, %s: f64,
                  %seed: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f64
  %two = arith.constant 2.0 : f64
  %ds = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<4xf64>
    %sq = arith.mulf %a, %a : f64
    %t = arith.mulf %sq, %seed : f64
    %acc2 = arith.addf %acc, %t : f64
    %g0 = arith.mulf %a, %two : f64
    %g1 = arith.mulf %g0, %s : f64
    %g = arith.mulf %g1, %seed : f64
    %old = memref.load %dx[%i] : memref<4xf64>
    %new = arith.addf %old, %g : f64
    memref.store %new, %dx[%i] : memref<4xf64>
    scf.yield %acc2 : f64
  }
  func.return %ds : f64
}
"""


def test_gradient_layout():
    module = runner.load_module(PAIR, "k.mlir")
    grad = runner.find_function(module, "f_grad")
    assert runner.gradient_layout(module, grad) == ({0: 0, 2: 1, 3: 2}, [1])
    assert runner.gradient_layout(module, runner.find_function(module, "f")) == ({}, [])


def test_gradient_layout_rejects_a_mismatched_signature():
    # @f_grad with %s and %n swapped does not follow @f's argument order.
    src = PAIR.replace("%n: memref<4xi32>, %s: f64,\n", "%s: f64, %n: memref<4xi32>,\n")
    assert src != PAIR
    module = runner.load_module(src, "k.mlir")
    grad = runner.find_function(module, "f_grad")
    assert runner.gradient_layout(module, grad) == ({}, [])


def test_grad_entry_sees_primal_data_and_zero_shadows(capsys, kernel):
    path = kernel(PAIR)
    code, out, _ = cli(capsys, path, "--entry", "f_grad", "--args", "1.5", "2.0")
    assert code == 0
    x = fill(0, 0, 4).tolist()  # x is argument 0 of @f
    lines = out.splitlines()
    assert lines[0] == f"result[0]: f64 = {sum(v * v * 2.0 for v in x)!r}"
    assert lines[1] == f"arg[0]: memref<4xf64> = {x!r}"
    assert lines[2] == f"arg[1]: memref<4xf64> = {[0.0 + v * 2.0 * 1.5 * 2.0 for v in x]!r}"
    assert lines[3] == "arg[2]: memref<4xi32> = [0, 0, 0, 0]"
    # The primal run sees the same x.
    _, primal, _ = cli(capsys, path, "--entry", "f", "--args", "1.5")
    assert f"arg[0]: memref<4xf64> = {x!r}" in primal
    # --plain-fill: the shadow keeps its fill-rule values, which add to the gradient.
    _, plain, _ = cli(capsys, path, "--entry", "f_grad", "--plain-fill", "--args", "1.5", "2.0")
    dx0 = fill(0, 1, 4).tolist()
    expected = [d + v * 2.0 * 1.5 * 2.0 for d, v in zip(dx0, x)]
    assert f"arg[1]: memref<4xf64> = {expected!r}" in plain


def test_i1_values_print_as_true_false(capsys, kernel):
    src = """
func.func @f(%m: memref<2x2xi1>, %x: f64) -> i1 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = arith.constant true
  memref.store %t, %m[%c1, %c0] : memref<2x2xi1>
  %z = arith.constant 0.0 : f64
  %r = arith.cmpf ogt, %x, %z : f64
  func.return %r : i1
}
"""
    code, out, _ = cli(capsys, kernel(src), "--args", "-1")
    assert code == 0
    assert out.splitlines() == [
        "result[0]: i1 = false",
        "arg[0]: memref<2x2xi1> = [[false, false], [true, false]]",
    ]
    _, out, _ = cli(capsys, kernel(src), "--args", "1", "--json")
    data = json.loads(out)
    assert data["results"][0]["value"] is True
    assert data["arguments"][0]["value"] == [[False, False], [True, False]]


def test_dynamic_memref_from_inputs(capsys, kernel, tmp_path):
    src = """
func.func @f(%a: memref<?x2xf64>) -> index {
  %c0 = arith.constant 0 : index
  %n = memref.dim %a, %c0 : memref<?x2xf64>
  func.return %n : index
}
"""
    np.save(tmp_path / "a.npy", np.ones((3, 2)))
    code, out, err = cli(capsys, kernel(src), "--inputs", str(tmp_path / "a.npy"))
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "result[0]: index = 3",
        "arg[0]: memref<?x2xf64> = [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]",
    ]
    np.save(tmp_path / "b.npy", np.ones((3, 3)))
    code, _, err = cli(capsys, kernel(src), "--inputs", str(tmp_path / "b.npy"))
    assert code == 1
    assert "given an array of shape [3, 3]" in err


def test_npz_positional_arrays(capsys, kernel, tmp_path):
    x = np.linspace(0, 1, 5)
    np.savez(tmp_path / "pos.npz", x)  # numpy names it arr_0
    code, out, _ = cli(capsys, kernel(TANH), "--inputs", str(tmp_path / "pos.npz"), "--args", "1")
    assert code == 0
    assert f"arg[0]: memref<5xf64> = {x.tolist()!r}" in out
