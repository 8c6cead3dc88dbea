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

# the shadows `@step` zeroes and reads back, in `out` after the gradient
SHADOWS = [("scale", 0), ("weights", 0), ("weights", 1), ("hidden", 0)]


def _step() -> str:
    """`@step(x, out)`: __enzyme_zero_shadows, dx = f_grad(x, 1), then out = [dx, the
    shadows of SHADOWS]."""
    sizes = {"scale": 1, "weights": 2, "hidden": 1}
    body = [f"%c{k} = arith.constant {k} : index" for k in range(len(SHADOWS) + 1)]
    body += ["%zero = arith.constant 0.0 : f64", "%one = arith.constant 1.0 : f64"]
    body += [f"%{g} = memref.get_global @{g}_shadow : memref<{n}xf64>" for g, n in sizes.items()]
    body += [f"memref.store %zero, %{g}[%c{k}] : memref<{sizes[g]}xf64>" for g, k in SHADOWS]
    body += ["%dx = func.call @f_grad(%x, %one) : (f64, f64) -> f64",
             "memref.store %dx, %out[%c0] : memref<5xf64>"]
    for n, (g, k) in enumerate(SHADOWS, 1):
        body += [f"%d{n} = memref.load %{g}[%c{k}] : memref<{sizes[g]}xf64>",
                 f"memref.store %d{n}, %out[%c{n}] : memref<5xf64>"]
    lines = "\n".join(f"  {b}" for b in [*body, "func.return"])
    return f"func.func @step(%x: f64, %out: memref<5xf64>) {{\n{lines}\n}}\n"


def test_global_shadow_zero_expected_values():
    module = compile_and_differentiate(ZERO)
    text = str(module)
    cut = text.rindex("}")
    module = parse_module(make_context(), text[:cut] + _step() + text[cut:], "<test>")
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
