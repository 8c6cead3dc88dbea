# ruff: noqa: E501
"""`tapeflow-autodiff`: every rule and construct, checked against central finite
differences (max relative error <= 1e-6 in f64) and, for a few, hand-derived gradients.

Each case is a small function run in the interpreter (`tapeflow.runner`); `gradcheck`
seeds every output (scalar results and the final contents of every float memref) with
random weights, so in-place updates are checked too.
"""

from __future__ import annotations


import numpy as np
import pytest
from xdsl.utils.exceptions import PassFailedException


from helpers import gradcheck
from tapeflow.dialects.tape import InitOp, PopOp, PushOp
from tapeflow.transforms.autodiff import AutodiffPass

from tapeflow.diagnostics import parse_module
from tapeflow.registry import make_context
from tapeflow.runner import run_function

TOL = 1e-6


def rel_err(text: str, name: str, args, **kw) -> float:
    err, _ = gradcheck.check(text, name, args, **kw)
    return err


def grads(text: str, name: str, args, seeds=(1.0,), weights=None, **kw):
    module = gradcheck.differentiate(text, **kw)
    weights = weights or {
        p: np.zeros_like(a) for p, a in enumerate(args) if isinstance(a, np.ndarray)
        and a.dtype.kind == "f"
    }
    g, result = gradcheck.gradient(module, name, args, list(seeds), weights)
    return g, result


# --- scalar rules -----------------------------------------------------------------------

SCALAR = """
func.func @f(%x: f64, %y: f64) -> f64 attributes {{tapeflow.autodiff}} {{
  {body}
  func.return %r : f64
}}
"""

BINARY_CASES = {
    "addf": "%r = arith.addf %x, %y : f64",
    "subf": "%r = arith.subf %x, %y : f64",
    "mulf": "%r = arith.mulf %x, %y : f64",
    "divf": "%r = arith.divf %x, %y : f64",
    "negf": "%n = arith.negf %x : f64\n  %r = arith.mulf %n, %y : f64",
    "maximumf": "%r = arith.maximumf %x, %y : f64",
    "minimumf": "%r = arith.minimumf %x, %y : f64",
    "maxnumf": "%r = arith.maxnumf %x, %y : f64",
    "minnumf": "%r = arith.minnumf %x, %y : f64",
    "select": "%c = arith.cmpf olt, %x, %y : f64\n  %p = arith.mulf %x, %y : f64\n"
    "  %r = arith.select %c, %p, %y : f64",
    "powf": "%r = math.powf %x, %y : f64",
    "atan2": "%r = math.atan2 %x, %y : f64",
    "copysign": "%n = arith.negf %y : f64\n  %c = math.copysign %x, %n : f64\n"
    "  %r = arith.mulf %c, %y : f64",
    "fma": "%r = math.fma %x, %y, %x : f64",
    "fpowi": "%k = arith.constant 3 : i32\n  %p = math.fpowi %x, %k : f64, i32\n"
    "  %r = arith.mulf %p, %y : f64",
    "sitofp": "%k = arith.fptosi %x : f64 to i32\n  %kf = arith.sitofp %k : i32 to f64\n"
    "  %s = arith.addf %kf, %x : f64\n  %r = arith.mulf %s, %y : f64",
    "chain": "%a = arith.mulf %x, %x : f64\n  %b = arith.divf %a, %y : f64\n"
    "  %c = arith.subf %b, %x : f64\n  %r = arith.mulf %c, %c : f64",
}


@pytest.mark.parametrize("case", sorted(BINARY_CASES))
@pytest.mark.parametrize(("x", "y"), [(1.3, 0.7), (0.4, 2.1)])
def test_binary_rules(case: str, x: float, y: float):
    text = SCALAR.format(body=BINARY_CASES[case])
    assert rel_err(text, "f", [x, y]) <= TOL


UNARY = {
    "exp": "math.exp", "exp2": "math.exp2", "expm1": "math.expm1", "log": "math.log",
    "log2": "math.log2", "log10": "math.log10", "log1p": "math.log1p",
    "sqrt": "math.sqrt", "rsqrt": "math.rsqrt", "sin": "math.sin", "cos": "math.cos",
    "tanh": "math.tanh", "atan": "math.atan", "sinh": "math.sinh", "cosh": "math.cosh",
    "absf": "math.absf", "tan": "math.tan", "asin": "math.asin", "acos": "math.acos",
    "asinh": "math.asinh", "acosh": "math.acosh", "atanh": "math.atanh", "erf": "math.erf",
    "cbrt": "math.cbrt",
}
# Points inside each function's domain (the argument is x * 0.8).
DOMAIN = {
    "log": [0.3, 1.7], "log2": [0.3, 1.7], "log10": [0.3, 1.7], "sqrt": [0.3, 1.7],
    "rsqrt": [0.3, 1.7], "asin": [0.3, -0.6], "acos": [0.3, -0.6], "atanh": [0.3, -0.6],
    "acosh": [1.7, 3.0], "cbrt": [0.3, -1.7],
}


@pytest.mark.parametrize(
    ("op", "x"), [(op, x) for op in sorted(UNARY) for x in DOMAIN.get(op, [0.3, 1.7, -0.6])]
)
def test_unary_math_rules(op: str, x: float):
    body = f"%p = arith.mulf %x, %y : f64\n  %r = {UNARY[op]} %p : f64"
    assert rel_err(SCALAR.format(body=body), "f", [x, 0.8]) <= TOL


def test_hand_derived_polynomial():
    # f(x, y) = x^2 y + sin(y): df/dx = 2xy, df/dy = x^2 + cos(y); seed 2 scales both.
    body = ("%a = arith.mulf %x, %x : f64\n  %b = arith.mulf %a, %y : f64\n"
            "  %s = math.sin %y : f64\n  %r = arith.addf %b, %s : f64")
    _g, result = grads(SCALAR.format(body=body), "f", [1.5, 0.25], seeds=(2.0,))
    assert result.results == pytest.approx([2 * 2 * 1.5 * 0.25, 2 * (1.5**2 + np.cos(0.25))])


def test_gradients_of_only_float_scalars_are_returned_and_ints_are_constant():
    text = """
func.func @f(%n: index, %x: f64, %k: i32, %y: f64) -> (f64, i32) attributes {tapeflow.autodiff} {
  %kf = arith.sitofp %k : i32 to f64
  %a = arith.mulf %x, %kf : f64
  %r = arith.mulf %a, %y : f64
  func.return %r, %k : f64, i32
}
"""
    module = gradcheck.differentiate(text)
    result = run_function(module, "f_grad", [0, 2.0, 3, 5.0, 1.0])
    assert result.results == pytest.approx([15.0, 6.0])  # d/dx = k y, d/dy = k x
    assert [str(t) for t in result.argument_types] == ["index", "f64", "i32", "f64", "f64"]
    assert [str(t) for t in result.result_types] == ["f64", "f64"]


# --- memory ------------------------------------------------------------------------------

SUMSQ = """
func.func @sumsq(%x: memref<5xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %c5 step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<5xf64>
    %v2 = arith.mulf %v, %v : f64
    %a = arith.addf %acc, %v2 : f64
    scf.yield %a : f64
  }
  func.return %r : f64
}
"""


def test_hand_derived_sum_of_squares_accumulates_into_shadow():
    x = np.array([0.5, -1.0, 2.0, 0.25, 3.0])
    shadow = np.full(5, 10.0)  # the gradient is accumulated, not assigned
    g, _ = grads(SUMSQ, "sumsq", [x], seeds=(1.0,), weights={0: shadow})
    np.testing.assert_allclose(g[0], 10.0 + 2 * x, rtol=1e-15)


IN_PLACE = """
// x[i] = x[i] * sin(x[i]) + w[i] * x[i-1]: in place, over T time steps (loads of memory
// written later must be cached).
func.func @steps(%x: memref<4xf64>, %w: memref<4xf64>, %T: index) attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %t = %c0 to %T step %c1 {
    scf.for %i = %c1 to %c4 step %c1 {
      %im1 = arith.subi %i, %c1 : index
      %xi = memref.load %x[%i] : memref<4xf64>
      %xp = memref.load %x[%im1] : memref<4xf64>
      %wi = memref.load %w[%i] : memref<4xf64>
      %s = math.sin %xi : f64
      %a = arith.mulf %xi, %s : f64
      %b = arith.mulf %wi, %xp : f64
      %n = arith.addf %a, %b : f64
      memref.store %n, %x[%i] : memref<4xf64>
    }
  }
  func.return
}
"""


@pytest.mark.parametrize("policy", ["min-tape", "cache-all"])
@pytest.mark.parametrize("T", [0, 1, 3])
def test_in_place_time_steps(policy: str, T: int):
    args = [np.array([0.3, -0.7, 0.9, 0.2]), np.array([0.5, 1.1, -0.4, 0.8]), T]
    assert rel_err(IN_PLACE, "steps", args, policy=policy) <= TOL


def test_in_place_caches_overwritten_loads_only():
    module = gradcheck.differentiate(IN_PLACE)
    pushed = [op.value.name_hint for op in module.walk() if isinstance(op, PushOp)]
    # x[i] and x[i-1] are overwritten later; w[i] is not, and sin/mul are recomputed.
    assert sorted(pushed) == ["xi", "xp"]


STENCIL = """
// Two buffers over T steps (jacobi-like): linear, so nothing needs the tape.
func.func @jac(%a: memref<6xf64>, %b: memref<6xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c3 = arith.constant 3 : index
  %third = arith.constant 0.3333 : f64
  %z = arith.constant 0.0 : f64
  scf.for %t = %c0 to %c3 step %c1 {
    scf.for %i = %c1 to %c5 step %c1 {
      %im = arith.subi %i, %c1 : index
      %ip = arith.addi %i, %c1 : index
      %l = memref.load %a[%im] : memref<6xf64>
      %m = memref.load %a[%i] : memref<6xf64>
      %r = memref.load %a[%ip] : memref<6xf64>
      %s = arith.addf %l, %m : f64
      %s2 = arith.addf %s, %r : f64
      %v = arith.mulf %s2, %third : f64
      memref.store %v, %b[%i] : memref<6xf64>
    }
    scf.for %i = %c1 to %c5 step %c1 {
      %im = arith.subi %i, %c1 : index
      %ip = arith.addi %i, %c1 : index
      %l = memref.load %b[%im] : memref<6xf64>
      %m = memref.load %b[%i] : memref<6xf64>
      %r = memref.load %b[%ip] : memref<6xf64>
      %s = arith.addf %l, %m : f64
      %s2 = arith.addf %s, %r : f64
      %v = arith.mulf %s2, %third : f64
      memref.store %v, %a[%i] : memref<6xf64>
    }
  }
  %out = scf.for %i = %c0 to %c6 step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %a[%i] : memref<6xf64>
    %q = arith.mulf %v, %v : f64
    %n = arith.addf %acc, %q : f64
    scf.yield %n : f64
  }
  func.return %out : f64
}
"""


def test_two_buffer_stencil():
    rng = np.random.default_rng(3)
    args = [rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 6)]
    assert rel_err(STENCIL, "jac", args) <= TOL
    module = gradcheck.differentiate(STENCIL)
    assert not [op for op in module.walk() if isinstance(op, InitOp)]


RECURRENCE = """
// h[t+1][j] = tanh(sum_k U[j][k] h[t][k] + x[t][j]): h[t] is never overwritten after it
// is read, so it is read back from the buffer; only the loop results are cached.
func.func @rnn(%h: memref<4x3xf64>, %U: memref<3x3xf64>, %x: memref<3x3xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f64
  scf.for %t = %c0 to %c3 step %c1 {
    %t1 = arith.addi %t, %c1 : index
    scf.for %j = %c0 to %c3 step %c1 {
      %x0 = memref.load %x[%t, %j] : memref<3x3xf64>
      %s = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %x0) -> (f64) {
        %u = memref.load %U[%j, %k] : memref<3x3xf64>
        %hk = memref.load %h[%t, %k] : memref<4x3xf64>
        %p = arith.mulf %u, %hk : f64
        %a = arith.addf %acc, %p : f64
        scf.yield %a : f64
      }
      %y = math.tanh %s : f64
      memref.store %y, %h[%t1, %j] : memref<4x3xf64>
    }
  }
  %l = scf.for %j = %c0 to %c3 step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %h[%c3, %j] : memref<4x3xf64>
    %n = arith.addf %acc, %v : f64
    scf.yield %n : f64
  }
  func.return %l : f64
}
"""


def test_recurrence_reads_hidden_states_back():
    rng = np.random.default_rng(4)
    args = [rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (3, 3)), rng.uniform(-1, 1, (3, 3))]
    assert rel_err(RECURRENCE, "rnn", args) <= TOL
    module = gradcheck.differentiate(RECURRENCE)
    pushed = [op.value.name_hint for op in module.walk() if isinstance(op, PushOp)]
    assert pushed == ["s"]


SCRATCH = """
// An active scratch buffer (alloc + dealloc) and an alloca, both get zeroed shadows.
func.func @scratch(%x: memref<4xf64>, %s: f64) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
  %tmp = memref.alloc() : memref<4xf64>
  %cell = memref.alloca() : memref<f64>
  memref.store %z, %cell[] : memref<f64>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf64>
    %e = math.exp %v : f64
    %m = arith.mulf %e, %s : f64
    memref.store %m, %tmp[%i] : memref<4xf64>
    %old = memref.load %cell[] : memref<f64>
    %sq = arith.mulf %m, %m : f64
    %new = arith.addf %old, %sq : f64
    memref.store %new, %cell[] : memref<f64>
  }
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %tmp[%i] : memref<4xf64>
    %q = math.sqrt %v : f64
    %a = arith.addf %acc, %q : f64
    scf.yield %a : f64
  }
  %c = memref.load %cell[] : memref<f64>
  %out = arith.addf %r, %c : f64
  memref.dealloc %tmp : memref<4xf64>
  func.return %out : f64
}
"""


def test_scratch_buffers():
    assert rel_err(SCRATCH, "scratch", [np.array([0.1, -0.3, 0.5, 0.2]), 1.3]) <= TOL


INDIRECT = """
// Gather/scatter through an i32 index array (bundle-adjustment style).
func.func @gather(%p: memref<4xf64>, %idx: memref<6xi32>, %out: memref<4xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %c6 step %c1 iter_args(%acc = %z) -> (f64) {
    %k32 = memref.load %idx[%i] : memref<6xi32>
    %k = arith.index_cast %k32 : i32 to index
    %v = memref.load %p[%k] : memref<4xf64>
    %c = math.cos %v : f64
    %o = memref.load %out[%k] : memref<4xf64>
    %n = arith.addf %o, %c : f64
    memref.store %n, %out[%k] : memref<4xf64>
    %q = arith.mulf %v, %c : f64
    %a = arith.addf %acc, %q : f64
    scf.yield %a : f64
  }
  func.return %r : f64
}
"""


def test_indirect_indexing():
    args = [np.array([0.3, -0.2, 0.9, 0.4]), np.array([2, 0, 2, 3, 1, 2], dtype=np.int32),
            np.array([0.1, 0.2, 0.3, 0.4])]
    assert rel_err(INDIRECT, "gather", args) <= TOL


# --- control flow --------------------------------------------------------------------------

LOOPS = """
// Non-unit lower bound and step, a dynamic upper bound, two iter_args, nested loops.
func.func @loops(%x: memref<9xf64>, %n: index, %s: f64) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f64
  %r:2 = scf.for %i = %c1 to %n step %c2 iter_args(%a = %s, %b = %one) -> (f64, f64) {
    %v = memref.load %x[%i] : memref<9xf64>
    %ab = arith.mulf %a, %b : f64
    %inner = scf.for %j = %c0 to %c3 step %c1 iter_args(%q = %ab) -> (f64) {
      %jv = memref.load %x[%j] : memref<9xf64>
      %t = arith.mulf %q, %jv : f64
      %u = math.sin %t : f64
      scf.yield %u : f64
    }
    %a1 = arith.addf %inner, %v : f64
    %b1 = arith.mulf %b, %v : f64
    scf.yield %a1, %b1 : f64, f64
  }
  %out = arith.addf %r#0, %r#1 : f64
  func.return %out : f64
}
"""


@pytest.mark.parametrize("n", [0, 1, 2, 8, 9])
def test_loop_bounds_steps_and_iter_args(n: int):
    x = np.linspace(-0.9, 0.8, 9)
    assert rel_err(LOOPS, "loops", [x, n, 0.6]) <= TOL


IF = """
// scf.if with results inside a loop: the condition is cached per iteration.
func.func @branch(%x: memref<5xf64>, %s: f64) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %c5 step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<5xf64>
    %c = arith.cmpf ogt, %v, %z : f64
    %y = scf.if %c -> (f64) {
      %p = arith.mulf %v, %s : f64
      %q = math.exp %p : f64
      scf.yield %q : f64
    } else {
      %p = arith.mulf %v, %v : f64
      %q = arith.mulf %p, %acc : f64
      scf.yield %q : f64
    }
    %a = arith.addf %acc, %y : f64
    memref.store %a, %x[%i] : memref<5xf64>
    scf.if %c {
      %w = arith.mulf %a, %s : f64
      memref.store %w, %x[%i] : memref<5xf64>
    }
    scf.yield %a : f64
  }
  %c3 = arith.constant 3 : index
  %last = memref.load %x[%c3] : memref<5xf64>
  %top = arith.cmpf olt, %last, %r : f64
  %out = scf.if %top -> (f64) {
    %m = arith.mulf %last, %r : f64
    scf.yield %m : f64
  } else {
    scf.yield %r : f64
  }
  func.return %out : f64
}
"""


@pytest.mark.parametrize("policy", ["min-tape", "cache-all"])
def test_if_with_results(policy: str):
    args = [np.array([0.3, -0.2, 0.1, -0.5, 0.7]), 0.7]
    assert rel_err(IF, "branch", args, policy=policy) <= TOL


WHILE = """
// A data-dependent trip count: double (and perturb) until the value exceeds a limit.
func.func @grow(%x: memref<2xf64>, %s: f64) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %lim = arith.constant 10.0 : f64
  %two = arith.constant 2.0 : f64
  %v0 = memref.load %x[%c0] : memref<2xf64>
  %w0 = memref.load %x[%c1] : memref<2xf64>
  %r:2 = scf.while (%v = %v0, %w = %w0) : (f64, f64) -> (f64, f64) {
    %sq = arith.mulf %v, %v : f64
    %c = arith.cmpf olt, %sq, %lim : f64
    %ww = arith.addf %w, %sq : f64
    scf.condition(%c) %v, %ww : f64, f64
  } do {
  ^bb0(%a: f64, %b: f64):
    %m = arith.mulf %a, %two : f64
    %e = arith.mulf %m, %s : f64
    %sin = math.sin %e : f64
    %n = arith.addf %m, %sin : f64
    %bb = arith.mulf %b, %s : f64
    scf.yield %n, %bb : f64, f64
  }
  %q = arith.mulf %r#0, %r#1 : f64
  func.return %q : f64
}
"""


@pytest.mark.parametrize("v0", [0.3, 0.05, 5.0])
@pytest.mark.parametrize("policy", ["min-tape", "cache-all"])
def test_while_data_dependent_trip_count(v0: float, policy: str):
    assert rel_err(WHILE, "grow", [np.array([v0, 0.4]), 0.7], policy=policy) <= TOL


WHILE_IN_FOR = """
// A while loop inside a for loop: one trip count per outer iteration on the tape.
func.func @nested(%x: memref<3xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f64
  %lim = arith.constant 4.0 : f64
  %k = arith.constant 1.5 : f64
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<3xf64>
    %w = scf.while (%a = %v) : (f64) -> f64 {
      %c = arith.cmpf olt, %a, %lim : f64
      scf.condition(%c) %a : f64
    } do {
    ^bb0(%b: f64):
      %m = arith.mulf %b, %k : f64
      %e = math.exp %m : f64
      %n = arith.addf %b, %e : f64
      scf.yield %n : f64
    }
    %a2 = arith.addf %acc, %w : f64
    scf.yield %a2 : f64
  }
  func.return %r : f64
}
"""


def test_while_inside_for():
    x = np.array([0.2, -0.4, 1.0])
    assert rel_err(WHILE_IN_FOR, "nested", [x]) <= TOL


CALL = """
func.func @sq(%a: f64) -> f64 {
  %r = arith.mulf %a, %a : f64
  func.return %r : f64
}
func.func @axpy(%v: memref<3xf64>, %i: index, %s: f64) -> f64 {
  %x = memref.load %v[%i] : memref<3xf64>
  %y = func.call @sq(%x) : (f64) -> f64
  %t = math.tanh %y : f64
  %r = arith.mulf %t, %s : f64
  memref.store %r, %v[%i] : memref<3xf64>
  func.return %r : f64
}
func.func @caller(%v: memref<3xf64>, %s: f64) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %z) -> (f64) {
    %y = func.call @axpy(%v, %i, %s) : (memref<3xf64>, index, f64) -> f64
    %q = func.call @sq(%y) : (f64) -> f64
    %a = arith.addf %acc, %q : f64
    scf.yield %a : f64
  }
  func.return %r : f64
}
"""


def test_calls_are_differentiated_through():
    assert rel_err(CALL, "caller", [np.array([0.4, -0.8, 1.2]), 0.9]) <= TOL
    module = gradcheck.differentiate(CALL)
    names = [op.sym_name.data for op in module.ops]
    assert names == ["sq", "axpy", "caller", "caller_grad"]


AFFINE = """
#map = affine_map<(d0)[s0] -> (d0 + s0)>
func.func @aff(%x: memref<8xf64>, %y: memref<8xf64>, %n: index) -> f64 attributes {tapeflow.autodiff} {
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  affine.for %i = 0 to %n {
    %v = affine.load %x[%i + 1] : memref<8xf64>
    %j = affine.apply #map(%i)[%c1]
    %w = affine.load %y[%j] : memref<8xf64>
    %p = arith.mulf %v, %w : f64
    %e = math.exp %p : f64
    affine.store %e, %y[%i] : memref<8xf64>
  }
  %r = affine.for %i = 0 to 8 step 2 iter_args(%acc = %z) -> (f64) {
    %v = affine.load %y[%i] : memref<8xf64>
    %a = arith.addf %acc, %v : f64
    affine.yield %a : f64
  }
  func.return %r : f64
}
"""


@pytest.mark.parametrize("n", [0, 3, 7])
def test_affine_loops(n: int):
    rng = np.random.default_rng(5)
    args = [rng.uniform(-1, 1, 8), rng.uniform(-1, 1, 8), n]
    assert rel_err(AFFINE, "aff", args) <= TOL


F32 = """
func.func @f(%x: memref<3xf32>, %s: f32) -> f32 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %z) -> (f32) {
    %v = memref.load %x[%i] : memref<3xf32>
    %p = arith.mulf %v, %s : f32
    %t = math.tanh %p : f32
    %w = arith.extf %t : f32 to f64
    %w2 = arith.mulf %w, %w : f64
    %b = arith.truncf %w2 : f64 to f32
    %a = arith.addf %acc, %b : f32
    scf.yield %a : f32
  }
  func.return %r : f32
}
"""


def test_f32_against_hand_derived_gradient():
    x = np.array([0.5, -0.25, 1.0], dtype=np.float32)
    s = 0.75
    g, result = grads(F32, "f", [x, s])
    t = np.tanh(x.astype(np.float64) * s)
    # d/dx_i tanh(x_i s)^2 = 2 t (1 - t^2) s ; d/ds = sum 2 t (1 - t^2) x_i
    np.testing.assert_allclose(g[0], 2 * t * (1 - t * t) * s, rtol=2e-6)
    assert result.results[0] == pytest.approx(float(np.sum(2 * t * (1 - t * t) * x)), rel=2e-6)


# --- policies, activity, tape shape -------------------------------------------------------

def _caches(module) -> int:
    return sum(isinstance(op, InitOp) for op in module.walk())


@pytest.mark.parametrize(("text", "name", "args"), [
    (IN_PLACE, "steps", [np.array([0.3, -0.7, 0.9, 0.2]), np.array([0.5, 1.1, -0.4, 0.8]), 2]),
    (IF, "branch", [np.array([0.3, -0.2, 0.1, -0.5, 0.7]), 0.7]),
    (RECURRENCE, "rnn", [np.full((4, 3), 0.3), np.eye(3) * 0.5, np.full((3, 3), -0.2)]),
])
def test_policies_agree_bit_for_bit_and_cache_all_keeps_more(text, name, args):
    out = {}
    for policy in ("min-tape", "cache-all"):
        module = gradcheck.differentiate(text, policy=policy)
        weights = {p: np.ones_like(a) for p, a in enumerate(args)
                   if isinstance(a, np.ndarray) and a.dtype.kind == "f"}
        seeds = [1.0] if name != "steps" else []
        g, _ = gradcheck.gradient(module, name, args, seeds, weights)
        out[policy] = (g, _caches(module))
    for p in out["min-tape"][0]:
        assert np.array_equal(out["min-tape"][0][p], out["cache-all"][0][p])
    assert out["cache-all"][1] > out["min-tape"][1]


def test_inactive_values_get_no_reverse_code_and_no_tape():
    # %k only feeds an integer result; the sin chain on constants is inactive.
    text = """
func.func @f(%x: memref<4xf64>, %n: index) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %k = arith.constant 0.5 : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<4xf64>
    %junk = math.cos %v : f64
    %c = math.sin %k : f64
    %p = arith.mulf %v, %c : f64
    %a = arith.addf %acc, %p : f64
    scf.yield %a : f64
  }
  func.return %r : f64
}
"""
    module = gradcheck.differentiate(text)
    grad = next(op for op in module.ops if op.sym_name.data == "f_grad")
    names = [op.name for op in grad.walk()]
    assert names.count("math.cos") == 1  # only the forward one: %junk is useless
    assert names.count("math.sin") == 2  # forward + recomputed for d(%v)
    assert "tape.init" not in names
    assert rel_err(text, "f", [np.array([0.1, 0.2, 0.3, 0.4]), 4]) <= TOL


def test_pops_balance_pushes_and_loops_are_paired():
    module = gradcheck.differentiate(IF)
    grad = next(op for op in module.ops if op.sym_name.data == "branch_grad")
    pushes = [op for op in grad.walk() if isinstance(op, PushOp)]
    pops = [op for op in grad.walk() if isinstance(op, PopOp)]
    assert {p.cache for p in pushes} == {p.cache for p in pops}
    loops = [op for op in grad.walk() if "tapeflow.loop" in op.attributes]
    ids = sorted(op.attributes["tapeflow.loop"].value.data for op in loops)
    assert ids == [0, 0]
    # inits are in the entry block, before everything else
    entry = list(grad.body.block.ops)
    inits = [i for i, op in enumerate(entry) if isinstance(op, InitOp)]
    assert inits == list(range(len(inits)))
    assert inits


def test_functions_option_selects_unmarked_functions():
    text = SUMSQ.replace(" attributes {tapeflow.autodiff}", "")
    module = gradcheck.differentiate(text, functions=["sumsq"])
    assert [op.sym_name.data for op in module.ops] == ["sumsq", "sumsq_grad"]
    module = gradcheck.differentiate(text)
    assert [op.sym_name.data for op in module.ops] == ["sumsq"]


# --- errors ---------------------------------------------------------------------------------

def _fails(text: str, match: str, **options):
    module = parse_module(make_context(), text, "bad.mlir")
    before = str(module)
    with pytest.raises(PassFailedException, match=match):
        AutodiffPass(**options).apply(make_context(), module)
    assert str(module) == before  # nothing emitted


CAST = """
func.func @f(%x: memref<4xf64>, %y: memref<4xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %d = "memref.cast"(%x) : (memref<4xf64>) -> memref<?xf64>
  %v = memref.load %d[%c0] : memref<?xf64>
  %w = memref.load %y[%c0] : memref<4xf64>
  %r = arith.mulf %w, %w : f64
  func.return %r : f64
}
"""


# A cast copied into a cast (prepare folds only a cast's loads, stores and dims).
CAST_COPY = CAST.replace(
    "%v = memref.load %d[%c0] : memref<?xf64>",
    '%e = "memref.cast"(%y) : (memref<4xf64>) -> memref<?xf64>\n'
    '  "memref.copy"(%d, %e) : (memref<?xf64>, memref<?xf64>) -> ()',
)

# A view with no adjoint rule, copied from.
EXPAND_COPY = """
func.func @f(%x: memref<4xf64>, %y: memref<1x4xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %d = "memref.expand_shape"(%x) <{reassociation = [[0, 1]], static_output_shape = array<i64: 1, 4>}> : (memref<4xf64>) -> memref<1x4xf64>
  "memref.copy"(%d, %y) : (memref<1x4xf64>, memref<1x4xf64>) -> ()
  %w = memref.load %y[%c0, %c0] : memref<1x4xf64>
  %r = arith.mulf %w, %w : f64
  func.return %r : f64
}
"""


def test_error_op_without_rule_names_op_and_location():
    # %d is an active memref (it views %x) copied into %y: the view has no rule.
    _fails(EXPAND_COPY, r"bad.mlir:4:3: 'memref.expand_shape' cannot be differentiated")


def test_cast_copied_from_has_the_cast_of_its_source_shadow():
    # The copy's adjoint reaches %x's shadow through the casts of the shadows: r = x0^2.
    module = gradcheck.differentiate(CAST_COPY)
    x, y = np.array([2.0, 1.0, 0, 0]), np.zeros(4)
    dx, dy = np.zeros(4), np.zeros(4)
    run_function(module, "f_grad", [x, dx, y, dy, 1.0])
    np.testing.assert_array_equal(dx, [4.0, 0, 0, 0])
    np.testing.assert_array_equal(dy, [0.0, 0, 0, 0])


def test_cast_loaded_from_is_its_source():
    # A load through a cast (a static buffer passed as memref<?xf64>) reads the source:
    # its adjoint reaches the source's shadow (it was silently dropped before).
    text = CAST.replace("%r = arith.mulf %w, %w", "%r = arith.mulf %v, %w")
    module = gradcheck.differentiate(text)
    x = np.array([2.0, 0, 0, 0])
    y = np.array([3.0, 0, 0, 0])
    dx, dy = np.zeros(4), np.zeros(4)
    run_function(module, "f_grad", [x, dx, y, dy, 1.0])
    np.testing.assert_array_equal(dx, [3.0, 0, 0, 0])  # d(x0*y0)/dx0 = y0
    np.testing.assert_array_equal(dy, [2.0, 0, 0, 0])


def test_error_inactive_op_without_rule_is_fine():
    # %v does not reach the result: the cast is inactive and needs no rule.
    text = CAST.replace("memref<4xf64>, %y", "memref<4xi32>, %y").replace(
        "(memref<4xf64>) -> memref<?xf64>", "(memref<4xi32>) -> memref<?xi32>").replace(
        "%d[%c0] : memref<?xf64>", "%d[%c0] : memref<?xi32>")
    module = gradcheck.differentiate(text)
    x = np.zeros(4, dtype=np.int32)
    y = np.array([3.0, 0, 0, 0])
    dy = np.zeros(4)
    run_function(module, "f_grad", [x, y, dy, 1.0])
    np.testing.assert_array_equal(dy, [6.0, 0, 0, 0])


def test_error_bad_policy_and_unknown_function():
    _fails(SUMSQ, "unknown policy 'fast'", policy="fast")
    _fails(SUMSQ, "no function named 'nope'", functions=("nope",))


RECURSIVE = """
func.func @pw(%x: f64, %a: memref<3xf64>, %n: index) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f64
  %done = arith.cmpi eq, %n, %c0 : index
  %r = scf.if %done -> (f64) {
    scf.yield %one : f64
  } else {
    %m = arith.subi %n, %c1 : index
    %i = arith.remui %n, %c3 : index
    %v = memref.load %a[%i] : memref<3xf64>
    %w = arith.mulf %v, %x : f64
    memref.store %w, %a[%i] : memref<3xf64>
    %s = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %w) -> (f64) {
      %rec = func.call @pw(%acc, %a, %m) : (f64, memref<3xf64>, index) -> f64
      %p = arith.mulf %rec, %x : f64
      %q = math.sin %p : f64
      scf.yield %q : f64
    }
    scf.yield %s : f64
  }
  func.return %r : f64
}
"""


LOCAL_BUFFER = """
func.func @r(%x: f64, %n: index) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = memref.alloca() : memref<1xf64>
  %sq = arith.mulf %x, %x : f64
  memref.store %sq, %t[%c0] : memref<1xf64>
  %done = arith.cmpi eq, %n, %c0 : index
  %r = scf.if %done -> (f64) {
    %v = memref.load %t[%c0] : memref<1xf64>
    scf.yield %v : f64
  } else {
    %m = arith.subi %n, %c1 : index
    %s = math.sin %x : f64
    %y = func.call @r(%s, %m) : (f64, index) -> f64
    %v = memref.load %t[%c0] : memref<1xf64>
    %z = arith.mulf %y, %v : f64
    memref.store %z, %t[%c0] : memref<1xf64>
    %w = memref.load %t[%c0] : memref<1xf64>
    scf.yield %w : f64
  }
  func.return %r : f64
}
"""


def test_local_buffer_in_recursion():
    """A recursive function's buffer (and its shadow) outlives its forward function: on
    the heap, passed to the reverse through a cache of memrefs, freed there."""
    module = gradcheck.differentiate(LOCAL_BUFFER)
    rev = next(f for f in module.ops if f.sym_name.data == "r_rev")
    assert "!tape.cache<memref<1xf64>>" in str(rev.function_type)
    assert "memref.dealloc" in str(rev) and "memref.alloca" not in str(module).split("@r_aug")[1]
    err, _ = gradcheck.check(LOCAL_BUFFER, "r", [0.7, 3], module=module)
    assert err < 1e-6


def test_error_buffer_sized_in_a_loop_of_a_recursion():
    text = """
func.func @r(%x: f64, %n: index) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %done = arith.cmpi eq, %n, %c0 : index
  %r = scf.if %done -> (f64) {
    scf.yield %x : f64
  } else {
    %m = arith.subi %n, %c1 : index
    %t = memref.alloca(%m) : memref<?xf64>
    memref.store %x, %t[%c0] : memref<?xf64>
    %v = memref.load %t[%c0] : memref<?xf64>
    %y = func.call @r(%v, %m) : (f64, index) -> f64
    scf.yield %y : f64
  }
  func.return %r : f64
}
"""
    _fails(text, r"bad.mlir:10:5: .memref.alloca. unsupported: a buffer allocated in a loop or "
           "branch of @r, a recursive function")


def test_recursion_kept_as_calls():
    """A recursive function's calls stay calls (`@pw_aug`, `@pw_rev`: the caches are
    shared by every call), the recursive call inside a loop, its buffer overwritten
    after the loads the reverse needs: the gradient matches finite differences."""
    module = gradcheck.differentiate(RECURSIVE)
    names = [f.sym_name.data for f in module.ops]
    assert names == ["pw", "pw_aug", "pw_rev", "pw_grad"]
    err, _ = gradcheck.check(RECURSIVE, "pw", [0.7, np.array([0.5, -0.3, 0.9]), 3], module=module)
    assert err < 1e-6


def test_error_active_alloc_in_loop():
    text = """
func.func @f(%x: memref<2xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %z) -> (f64) {
    %m = arith.addi %i, %c1 : index
    %t = memref.alloc(%m) : memref<?xf64>
    %v = memref.load %x[%i] : memref<2xf64>
    memref.store %v, %t[%c0] : memref<?xf64>
    %w = memref.load %t[%c0] : memref<?xf64>
    %a = arith.addf %acc, %w : f64
    memref.dealloc %t : memref<?xf64>
    scf.yield %a : f64
  }
  func.return %r : f64
}
"""
    _fails(text, r"bad.mlir:9:\d+: 'memref.alloc' unsupported")


SCRATCH_IN_LOOP = """
// Per-row scratch buffers allocated (and freed) inside the row loop, softmax style: the
// pass hoists them to the function body; their contents are overwritten every row, so
// what the reverse sweep reads from them is cached.
func.func @rows(%Z: memref<3x4xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %b = %c0 to %c3 step %c1 iter_args(%l = %z) -> (f64) {
    %e = memref.alloc() : memref<4xf64>
    %cell = memref.alloca() : memref<f64>
    memref.store %z, %cell[] : memref<f64>
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %Z[%b, %j] : memref<3x4xf64>
      %x = math.exp %v : f64
      memref.store %x, %e[%j] : memref<4xf64>
      %s = memref.load %cell[] : memref<f64>
      %s1 = arith.addf %s, %x : f64
      memref.store %s1, %cell[] : memref<f64>
    }
    %sum = memref.load %cell[] : memref<f64>
    %lb = scf.for %j = %c0 to %c4 step %c1 iter_args(%a = %l) -> (f64) {
      %x = memref.load %e[%j] : memref<4xf64>
      %p = arith.divf %x, %sum : f64
      %q = arith.mulf %p, %p : f64
      %a1 = arith.addf %a, %q : f64
      scf.yield %a1 : f64
    }
    memref.dealloc %e : memref<4xf64>
    scf.yield %lb : f64
  }
  func.return %r : f64
}
"""


@pytest.mark.parametrize("policy", ["min-tape", "cache-all"])
def test_scratch_allocated_inside_a_loop(policy: str):
    rng = np.random.default_rng(8)
    assert rel_err(SCRATCH_IN_LOOP, "rows", [rng.uniform(-1, 1, (3, 4))], policy=policy) <= TOL


def test_error_second_function_fails_first_not_emitted():
    _fails(SUMSQ + EXPAND_COPY, "'memref.expand_shape'")


COPY = """
// memref.copy between active buffers: the adjoint flows back from dst to src.
func.func @cp(%x: memref<2x3xf64>, %y: memref<2x3xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f64
  %tmp = memref.alloc() : memref<2x3xf64>
  "memref.copy"(%x, %tmp) : (memref<2x3xf64>, memref<2x3xf64>) -> ()
  "memref.copy"(%tmp, %y) : (memref<2x3xf64>, memref<2x3xf64>) -> ()
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %tmp[%i, %c1] : memref<2x3xf64>
    %e = math.exp %v : f64
    %a = arith.addf %acc, %e : f64
    scf.yield %a : f64
  }
  memref.dealloc %tmp : memref<2x3xf64>
  func.return %r : f64
}
"""


def test_memref_copy():
    rng = np.random.default_rng(6)
    assert rel_err(COPY, "cp", [rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (2, 3))]) <= TOL


def test_several_float_results_take_one_seed_each():
    text = """
func.func @two(%x: f64, %y: f64) -> (f64, i32, f64) attributes {tapeflow.autodiff} {
  %k = arith.constant 7 : i32
  %a = arith.mulf %x, %y : f64
  %b = math.sin %x : f64
  func.return %a, %k, %b : f64, i32, f64
}
"""
    assert rel_err(text, "two", [0.4, 1.3]) <= TOL
    module = gradcheck.differentiate(text)
    # seeds 2 (for %a) and 3 (for %b): dx = 2y + 3cos x, dy = 2x
    result = run_function(module, "two_grad", [0.4, 1.3, 2.0, 3.0])
    assert result.results == pytest.approx([2 * 1.3 + 3 * np.cos(0.4), 2 * 0.4])


I32_LOOP = """
// Loop bounds and induction variable of type i32 (not index).
func.func @f(%x: memref<6xf64>, %n: i32) -> f64 attributes {tapeflow.autodiff} {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c1 to %n step %c2 iter_args(%acc = %z) -> (f64) : i32 {
    %ii = arith.index_cast %i : i32 to index
    %v = memref.load %x[%ii] : memref<6xf64>
    %p = arith.mulf %v, %acc : f64
    %q = arith.addf %p, %v : f64
    scf.yield %q : f64
  }
  func.return %r : f64
}
"""


@pytest.mark.parametrize("n", [0, 4, 6])
def test_i32_loop_bounds(n: int):
    assert rel_err(I32_LOOP, "f", [np.linspace(0.1, 0.9, 6), n]) <= TOL


SWAP = """
// iter_args that swap every iteration, and a loop whose yield is an outer value.
func.func @swap(%x: f64, %y: f64, %n: index) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x, %b = %y) -> (f64, f64) {
    %p = arith.mulf %a, %b : f64
    %s = math.sin %p : f64
    scf.yield %s, %a : f64, f64
  }
  %q = scf.for %i = %c0 to %n step %c1 iter_args(%a = %r#1) -> (f64) {
    scf.yield %x : f64
  }
  %out = arith.mulf %r#0, %q : f64
  func.return %out : f64
}
"""


@pytest.mark.parametrize("n", [0, 1, 4])
def test_swapping_iter_args_and_yield_of_outer_value(n: int):
    assert rel_err(SWAP, "swap", [0.7, 1.2, n]) <= TOL


WHILE_INDEX = """
// A while loop walking an index through memory, with a branch inside: the index
// (a while-loop argument) is cached, the loads are recomputed from it.
func.func @walk(%x: memref<8xf64>, %s: f64) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f64
  %lim = arith.constant 2.0 : f64
  %r:2 = scf.while (%i = %c0, %acc = %z) : (index, f64) -> (index, f64) {
    %in = arith.cmpi slt, %i, %c8 : index
    %small = arith.cmpf olt, %acc, %lim : f64
    %go = arith.andi %in, %small : i1
    scf.condition(%go) %i, %acc : index, f64
  } do {
  ^bb0(%j: index, %a: f64):
    %v = memref.load %x[%j] : memref<8xf64>
    %pos = arith.cmpf ogt, %v, %z : f64
    %t = scf.if %pos -> (f64) {
      %m = arith.mulf %v, %s : f64
      %e = math.exp %m : f64
      scf.yield %e : f64
    } else {
      %m = arith.mulf %v, %v : f64
      scf.yield %m : f64
    }
    %a1 = arith.addf %a, %t : f64
    %j1 = arith.addi %j, %c1 : index
    scf.yield %j1, %a1 : index, f64
  }
  %out = arith.mulf %r#1, %s : f64
  func.return %out : f64
}
"""


@pytest.mark.parametrize("policy", ["min-tape", "cache-all"])
def test_while_with_index_and_branch(policy: str):
    x = np.array([0.1, -0.3, 0.25, -0.2, 0.4, 0.3, -0.1, 0.2])
    assert rel_err(WHILE_INDEX, "walk", [x, 0.9], policy=policy) <= TOL
    assert rel_err(WHILE_INDEX, "walk", [x * 0.01, 0.9], policy=policy) <= TOL  # all 8 steps


DYNAMIC = """
// Dynamic shapes: a memref<?xf64> argument and a scratch buffer alloc(%n).
func.func @dyn(%x: memref<?xf64>, %n: index) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %t = memref.alloc(%n) : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    %c = math.cos %v : f64
    memref.store %c, %t[%i] : memref<?xf64>
  }
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %t[%i] : memref<?xf64>
    %w = memref.load %x[%i] : memref<?xf64>
    %p = arith.mulf %v, %w : f64
    %a = arith.addf %acc, %p : f64
    scf.yield %a : f64
  }
  memref.dealloc %t : memref<?xf64>
  func.return %r : f64
}
"""


def test_dynamic_shapes():
    assert rel_err(DYNAMIC, "dyn", [np.array([0.2, -0.5, 0.9, 1.4]), 4]) <= TOL


INIT_AND_FREE = """
// %s is both the init of the iter_arg and used inside the loop body (found by fuzzing: the
// init's contribution was lost when the free-value adjoint was written back after it).
func.func @f(%x: memref<4xf64>, %s: f64) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %s) -> (f64) {
    %v = memref.load %x[%i] : memref<4xf64>
    %p = arith.mulf %v, %s : f64
    %n = arith.addf %a, %p : f64
    scf.yield %n : f64
  }
  func.return %r : f64
}
"""


def test_init_that_is_also_used_inside_the_loop():
    x = np.array([0.5, -1.0, 2.0, 0.25])
    g, result = grads(INIT_AND_FREE, "f", [x, 0.3])
    assert result.results[0] == pytest.approx(1.0 + x.sum())  # d/ds (s + s*sum x)
    np.testing.assert_allclose(g[0], np.full(4, 0.3))  # d/dx_i = s
    assert rel_err(INIT_AND_FREE, "f", [x, 0.3]) <= TOL


COMPACT = """
// An index iter_arg bumped under a condition (stream compaction): the index is a
// loop-carried integer, cached per iteration, and the scf.if yields an index.
func.func @compact(%x: memref<6xf64>, %y: memref<6xf64>, %s: f64) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %z = arith.constant 0.0 : f64
  %k = scf.for %i = %c0 to %c6 step %c1 iter_args(%kk = %c0) -> (index) {
    %v = memref.load %x[%i] : memref<6xf64>
    %pos = arith.cmpf ogt, %v, %z : f64
    %next = scf.if %pos -> (index) {
      %e = math.exp %v : f64
      %w = arith.mulf %e, %s : f64
      memref.store %w, %y[%kk] : memref<6xf64>
      %k1 = arith.addi %kk, %c1 : index
      scf.yield %k1 : index
    } else {
      scf.yield %kk : index
    }
    scf.yield %next : index
  }
  %r = scf.for %j = %c0 to %k step %c1 iter_args(%acc = %z) -> (f64) {
    %w = memref.load %y[%j] : memref<6xf64>
    %q = arith.mulf %w, %w : f64
    %a = arith.addf %acc, %q : f64
    scf.yield %a : f64
  }
  func.return %r : f64
}
"""


@pytest.mark.parametrize("policy", ["min-tape", "cache-all"])
def test_conditional_index_bump(policy: str):
    x = np.array([0.3, -0.2, 0.5, -0.1, 0.7, 0.2])
    y = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    assert rel_err(COMPACT, "compact", [x, y, 0.8], policy=policy) <= TOL
    module = gradcheck.differentiate(COMPACT, policy=policy)
    pushed = {str(op.value.type) for op in module.walk() if isinstance(op, PushOp)}
    assert {"index", "i1"} <= pushed


AFFINE_CALLEE = """
// The callee is written with affine ops: inlined first, then lowered.
func.func @dot(%a: memref<4xf64>, %b: memref<4xf64>) -> f64 {
  %z = arith.constant 0.0 : f64
  %r = affine.for %i = 0 to 4 iter_args(%acc = %z) -> (f64) {
    %x = affine.load %a[%i] : memref<4xf64>
    %y = affine.load %b[%i] : memref<4xf64>
    %p = arith.mulf %x, %y : f64
    %s = arith.addf %acc, %p : f64
    affine.yield %s : f64
  }
  func.return %r : f64
}
func.func @f(%a: memref<4xf64>, %b: memref<4xf64>) -> f64 attributes {tapeflow.autodiff} {
  %d = func.call @dot(%a, %b) : (memref<4xf64>, memref<4xf64>) -> f64
  %t = math.tanh %d : f64
  func.return %t : f64
}
"""


def test_affine_callee():
    rng = np.random.default_rng(9)
    assert rel_err(AFFINE_CALLEE, "f", [rng.uniform(-1, 1, 4), rng.uniform(-1, 1, 4)]) <= TOL
