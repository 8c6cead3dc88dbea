"""Mutable globals, `&` of a scalar local and `switch` in C written for Enzyme (issue 23):
each construct's gradient against central differences, and for globals the shadow
global against central differences in the global's initial value and the gradient after
the region/stream passes bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

from helpers.pipelines import apply, run
from helpers.cfront import check_fd, compile_and_differentiate, u
from xdsl.dialects import memref
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType

from tapeflow import runner
from tapeflow.diagnostics import parse_module
from tapeflow.interpreters import make_interpreter
from tapeflow.registry import make_context

# `g` is written by one callee and read by the caller, `w` updated in place by another
# callee and read by a third, `&g` passed to a fourth (Enzyme's tests global_written_in_callee and
# global_shadow_other_function do the same), `scale` only read (inactive), `calls` an
# integer counter (inactive).
GLOBALS = """
double g = 1.0;
double w[3] = {0.5, 2.0};
double scale = 2.0;
int calls;

static void f(double *x) { g = x[0] * x[0]; calls++; }
static void bump(double *p, double v) { *p += v * v; }
static void accumulate(double *x) { for (int i = 0; i < 3; i++) w[i] += x[i] * g; }
static double loss(void) {
  double s = 0;
  for (int i = 0; i < 3; i++) s += w[i] * w[i];
  return s;
}
double h(double *x) {
  f(x);
  bump(&g, x[1]);
  accumulate(x);
  return scale * (g + loss()) * calls;
}
void driver(double *x, double *dx) { __enzyme_autodiff((void *)h, x, dx); }
"""


def _with_initial(module, name: str, values: np.ndarray):
    """`module` (a copy) with the global `@name` starting at `values`."""
    copy = parse_module(make_context(), str(module), "<test>")
    glob = next(
        o for o in copy.ops if isinstance(o, memref.GlobalOp) and o.sym_name.data == name
    )
    tensor = TensorType(glob.type.element_type, glob.type.get_shape())
    glob.initial_value = DenseIntOrFPElementsAttr.from_list(tensor, list(map(float, values)))
    return copy


def _shadow_after_grad(module, x: np.ndarray, name: str, size: int) -> np.ndarray:
    """`@name_shadow` after one `@h_grad(x, 0, 1.0)`, read in the same interpreter."""
    text = str(module)
    reader = (
        f"func.func @read(%out: memref<{size}xf64>) {{\n"
        f"  %s = memref.get_global @{name}_shadow : memref<{size}xf64>\n"
        f'  "memref.copy"(%s, %out) : (memref<{size}xf64>, memref<{size}xf64>) -> ()\n'
        "  func.return\n}\n"
    )
    cut = text.rindex("}")
    with_reader = parse_module(make_context(), text[:cut] + reader + text[cut:], "<test>")
    interpreter = make_interpreter(with_reader)
    runner.run_function(with_reader, "h_grad", [x.copy(), np.zeros_like(x), 1.0],
                        interpreter=interpreter)  # fmt: skip
    out = np.zeros(size)
    runner.run_function(with_reader, "read", [out], interpreter=interpreter)
    return out


def test_globals_gradient_and_shadow_globals():
    module = compile_and_differentiate(GLOBALS)
    x = u(3)
    check_fd(module, "h", [x])
    names = {o.sym_name.data for o in module.ops if isinstance(o, memref.GlobalOp)}
    assert {"g_shadow", "w_shadow"} <= names
    assert not names & {"scale_shadow", "calls_shadow"}  # only read / integer: inactive
    # The shadow global holds d(result)/d(initial contents): central differences in
    # the global's initializer.
    eps = 1e-6
    for name, size, start in (("w", 3, np.array([0.5, 2.0, 0.0])), ("g", 1, np.array([1.0]))):
        shadow = _shadow_after_grad(module, x, name, size)
        for k in range(size):
            plus, minus = start.copy(), start.copy()
            plus[k] += eps
            minus[k] -= eps
            hp = runner.run_function(_with_initial(module, name, plus), "h", [x.copy()])
            hm = runner.run_function(_with_initial(module, name, minus), "h", [x.copy()])
            fd = (hp.results[0] - hm.results[0]) / (2 * eps)
            assert shadow[k] == pytest.approx(fd, rel=1e-6, abs=1e-8), (name, k)
    assert _shadow_after_grad(module, x, "w", 3).any()  # w's initial value is read


def test_globals_gradient_identical_after_region_and_stream_passes():
    text = str(compile_and_differentiate(GLOBALS))
    args = [u(3), np.zeros(3), 1.0]
    expected = run(apply(text, ""), "h_grad", args)
    for pipeline in (
        "tapeflow-regions",
        "tapeflow-regions,tapeflow-lower-regions",
        "tapeflow-regions,tapeflow-layers{spm-bytes=16 depth=1},tapeflow-stream{depth=1}",
        "tapeflow-regions,tapeflow-layers,tapeflow-stream",
    ):
        assert run(apply(text, pipeline), "h_grad", args) == expected, pipeline


ADDRESS = """
#include <math.h>
void step(double *s, const double *x, int i) { *s = *s * 0.5 + x[i] * x[i]; }
void count(int *k) { *k += 2; }
static void both(double *lo, double *hi, double v) { *lo = fmin(*lo, v); *hi = fmax(*hi, v); }
double run(double *x, int n, double t) {
  double acc = t, lo = 1e9, hi = -1e9;
  int k = 0;
  for (int i = 0; i < n; i++) {
    step(&acc, x, i);
    count(&k);
    both(&lo, &hi, x[i] * t);
  }
  return acc * k + hi - lo;
}
"""


def test_address_of_scalar_locals_as_out_parameters():
    module = compile_and_differentiate(ADDRESS, functions=["run"])
    arrays, scalars = check_fd(module, "run", [u(5), 5, 0.7])
    assert set(arrays) == {0} and set(scalars) == {2}


SWITCH = """
double pick(double *x, int n, int mode) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    switch ((mode + i) % 4) {
    case 0:
      s += x[i];
      break;
    case 1:
    case 2:
      s += x[i] * x[i] * s;
      break;
    case 3:
      if (x[i] > 0.0)
        continue;
      return s * x[i];
    default:
      s -= 1.0;
    }
    s += 0.5 * x[i];
  }
  return s;
}
"""


@pytest.mark.parametrize("mode", [0, 1, 3])
def test_switch_gradient(mode: int):
    module = compile_and_differentiate(SWITCH, functions=["pick"])
    x = u(6) - 0.5
    check_fd(module, "pick", [x, 6, mode])


KINDS = """
double m[2][3] = {{1, 2, 3}, {4}};
float fs[2] = {1.5f};
int n = 3;
long hist[4];
double f(double *x) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    m[1][i] += x[i];
    s += m[1][i] * fs[0];
    hist[i]++;
  }
  switch (n) {
  case 3:
    s *= 2;
    break;
  }
  return s * m[0][2] + hist[0];
}
"""


def test_global_kinds_two_dimensional_float_integer_and_uninitialized():
    """Initializers with missing elements and none at all (zeros), a float global, an
    integer global as a loop bound and a `switch` value: C's values, and the gradient."""
    module = compile_and_differentiate(KINDS, functions=["f"])
    x = np.array([0.3, -0.7, 1.1])
    # m[1] = {4, 0, 0} + x, s = 1.5 * sum(m[1]) * 2, times m[0][2] = 3, plus hist[0] = 1
    assert runner.run_function(module, "f", [x.copy()]).results[0] == pytest.approx(
        1.5 * (4.0 + x.sum()) * 2 * 3 + 1
    )
    arrays, _ = check_fd(module, "f", [x])
    assert arrays[0] == pytest.approx(np.full(3, 9.0))


def test_extern_globals_defined_in_the_file_set():
    """`extern` declarations in a header, definitions in the file and in a file it
    includes (test/tapeflow-cc/extern-globals.c): the gradient against differences."""
    from helpers.paths import ROOT

    lit = ROOT / "test" / "tapeflow-cc"
    path = lit / "extern-globals.c"
    module = compile_and_differentiate(
        path.read_text(), clang_args=[f"-I{lit / 'Inputs' / 'extern'}"], functions=["f"]
    )
    arrays, _ = check_fd(module, "f", [u(3)])
    assert np.array_equal(arrays[0], 3.0 * np.array([1.0, 2.0, 3.0]))
