"""Enzyme's shadow contexts (`enzyme_context`, `__enzyme_context`/`__enzyme_shadow`/
`__enzyme_zero_shadows` in the driver): every global the function uses gets a shadow,
even one only read, and Enzyme's own test global_shadow_zero.c gives its expected values
when its main is replayed in one interpreter (zeroing the shadows before each call)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

from helpers.cfront import compile_and_differentiate

from tapeflow import runner
from tapeflow.diagnostics import ToolError, parse_module
from tapeflow.frontends.c import compile_c
from tapeflow.interpreters import make_interpreter
from tapeflow.registry import make_context

CONTEXT = """
extern void *__enzyme_context(int);
extern void *__enzyme_shadow(void *, void *, int);
extern void __enzyme_zero_shadows(void *);
extern double __enzyme_autodiff(double (*)(double), ...);
extern int enzyme_context;
"""

# Enzyme's global_shadow_zero.c, its main replayed by `_replay`
ZERO = CONTEXT + """
double scale = 2.0;
double weights[2] = {3.0, 5.0};
double hidden = 7.0;

double f(double x) {
  return scale * (weights[0] + weights[1]) * x * x + hidden * x;
}

int main() {
  void *ctx = __enzyme_context(1);
  double *dscale = (double *)__enzyme_shadow(ctx, &scale, 0);
  double *dw = (double *)__enzyme_shadow(ctx, &weights, 0);
  for (int i = 1; i <= 3; i++) {
    __enzyme_zero_shadows(ctx);
    double x = i;
    double dx = __enzyme_autodiff(f, enzyme_context, ctx, x);
  }
  return 0;
}
"""

# @step(x, out): __enzyme_zero_shadows, dx = f_grad(x, 1), then out = dx and the shadows
STEP = """
func.func @step(%x: f64, %out: memref<5xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %s = memref.get_global @scale_shadow : memref<1xf64>
  %w = memref.get_global @weights_shadow : memref<2xf64>
  %h = memref.get_global @hidden_shadow : memref<1xf64>
  memref.store %zero, %s[%c0] : memref<1xf64>
  memref.store %zero, %w[%c0] : memref<2xf64>
  memref.store %zero, %w[%c1] : memref<2xf64>
  memref.store %zero, %h[%c0] : memref<1xf64>
  %dx = func.call @f_grad(%x, %one) : (f64, f64) -> f64
  memref.store %dx, %out[%c0] : memref<5xf64>
  %ds = memref.load %s[%c0] : memref<1xf64>
  memref.store %ds, %out[%c1] : memref<5xf64>
  %dw0 = memref.load %w[%c0] : memref<2xf64>
  memref.store %dw0, %out[%c2] : memref<5xf64>
  %dw1 = memref.load %w[%c1] : memref<2xf64>
  memref.store %dw1, %out[%c3] : memref<5xf64>
  %dh = memref.load %h[%c0] : memref<1xf64>
  memref.store %dh, %out[%c4] : memref<5xf64>
  func.return
}
"""


def test_global_shadow_zero_expected_values():
    module = compile_and_differentiate(ZERO)
    text = str(module)
    cut = text.rindex("}")
    module = parse_module(make_context(), text[:cut] + STEP + text[cut:], "<test>")
    interpreter = make_interpreter(module)
    for i in (1, 2, 3):  # one interpreter: the shadows live on, zeroed by @step
        out = np.zeros(5)
        runner.run_function(module, "step", [float(i), out], interpreter=interpreter)
        x = float(i)
        # global_shadow_zero.c's APPROX_EQs (and d/d hidden = x)
        assert out.tolist() == pytest.approx(
            [2 * 2.0 * 8.0 * x + 7.0, 8.0 * x * x, 2.0 * x * x, 2.0 * x * x, x], abs=1e-10
        )


def test_without_context_a_read_global_is_constant():
    src = ZERO.replace("enzyme_context, ctx, ", "")
    names = {o.sym_name.data for o in compile_and_differentiate(src).ops
             if hasattr(o, "sym_name")}
    assert not names & {"scale_shadow", "weights_shadow", "hidden_shadow"}


@pytest.mark.parametrize("body,message", [
    ("void *a = __enzyme_context(1); void *b = __enzyme_context(1);",
     r"^test.c:7:57: unsupported C: a second __enzyme_context"),
    ("void *a = __enzyme_context(2);",
     r"^test.c:7:26: unsupported C: __enzyme_context of a width other than 1"),
])
def test_context_refusals(body, message):
    src = CONTEXT + "double f(double x) { return x; }\nvoid g(void) { " + body + " }\n"
    src = src.replace("extern void __enzyme_zero_shadows(void *);\n", "")
    with pytest.raises(ToolError, match=message):
        compile_c(src, "test.c", functions=["f"])


@pytest.mark.parametrize("variant", ["enzyme", "regions", "tapeflow"])
def test_context_gradient_bits_across_variants(variant):
    from helpers.cfront import compile_variant

    want = runner.run_function(compile_and_differentiate(ZERO), "f_grad", [1.5, 1.0]).results
    got = runner.run_function(compile_variant(ZERO, "f", variant), "f_grad", [1.5, 1.0]).results
    assert [np.float64(v).tobytes() for v in got] == [np.float64(v).tobytes() for v in want]
