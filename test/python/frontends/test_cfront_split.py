"""Enzyme's split mode (`__enzyme_augmentfwd` + `__enzyme_reverse`): `@f_augment` then
`@f_reverse` give `@f_grad`'s gradients bit for bit, in every TapeFlow variant, and the
gradients of Enzyme's own test (allocatedtape.c) are its expected values."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("clang.cindex")

from helpers.cfront import check_fd, compile_and_differentiate, copy_args
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tapeflow import runner
from tapeflow.diagnostics import ToolError
from tapeflow.frontends.c import compile_c
from tapeflow.registry import make_context

HEADER = """
#include <math.h>
extern int enzyme_const, enzyme_dup, enzyme_allocated, enzyme_tape;
void *__enzyme_augmentfwd(void *, ...);
double __enzyme_reverse(void *, ...);
"""

# a loop with a branch, a local array, a float scalar argument and a float result: the
# tape holds caches, a scalar and a shadow buffer
LOOP = HEADER + """
double g(double *x, double s, int n) {
  double acc = 0;
  double tmp[4] = {0};
  for (int i = 0; i < n; i++) {
    tmp[i % 4] += x[i] * s;
    acc += sin(acc + tmp[i % 4]);
    if (acc > 1.0) acc = acc * 0.5;
    x[i] = acc;
  }
  return acc * s + tmp[1];
}
void *g_aug(double *x, double *dx, double s, int n) {
  return __enzyme_augmentfwd((void *)g, x, dx, s, enzyme_const, n);
}
double g_rev(double *x, double *dx, double s, int n, double dret, void *tape) {
  return __enzyme_reverse((void *)g, x, dx, s, enzyme_const, n, dret, tape);
}
"""

# Enzyme's allocatedtape.c (its main's values below)
ALLOCATED = HEADER + """
#define TAPE_SIZE 100
void f(double* x) {
    x[0] += x[1]*x[1];
    x[1] = -x[1];
}
void f_aug(double* x, double* x_b, void* tape) {
    __enzyme_augmentfwd(f, enzyme_dup, x, x_b, enzyme_allocated, TAPE_SIZE, enzyme_tape, tape);
}
void f_rev(double* x, double* x_b, void* tape) {
    __enzyme_reverse(f, enzyme_dup, x, x_b, enzyme_allocated, TAPE_SIZE, enzyme_tape, tape);
}
"""


def with_driver(module: ModuleOp, name: str) -> str:
    """Adds `@name_split(args of @name_grad)`: `@name_augment`, then `@name_reverse` on
    its tape; returns its name."""
    fns = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    grad, aug, rev = (fns[f"{name}_{k}"] for k in ("grad", "augment", "reverse"))
    inputs = grad.function_type.inputs.data
    driver = func.FuncOp(f"{name}_split", (inputs, grad.function_type.outputs.data))
    args = driver.body.block.args
    tape = func.CallOp(aug.sym_name.data, list(args[: len(aug.function_type.inputs)]),
                       list(aug.function_type.outputs.data))
    back = func.CallOp(rev.sym_name.data, [*args, *tape.results],
                       list(rev.function_type.outputs.data))
    driver.body.block.add_ops([tape, back, func.ReturnOp(*back.results)])
    module.body.block.add_op(driver)
    return driver.sym_name.data


def bits(result: runner.RunResult) -> list[bytes]:
    out = [np.float64(r).tobytes() for r in result.results]
    return out + [result.arguments[p].tobytes() for p in result.memref_positions]


def test_split_equals_combined_bit_for_bit():
    module = compile_and_differentiate(LOOP)
    call = [np.linspace(0.1, 0.9, 6), np.zeros(6), 0.7, 6, 1.0]
    driver = with_driver(module, "g")
    combined = runner.run_function(module, "g_grad", copy_args(call))
    split = runner.run_function(module, driver, copy_args(call))
    assert bits(split) == bits(combined)
    assert split.arguments[1].any()  # a gradient, not zeros
    fns = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    assert fns["g_augment"].attributes["tapeflow.tape_bytes"].value.data == 40


def test_split_gradient_is_finite_differences():
    module = compile_and_differentiate(LOOP)
    check_fd(module, "g", [np.linspace(0.1, 0.9, 6), 0.7, 6])


@pytest.mark.parametrize("variant", ["enzyme", "regions", "tapeflow"])
def test_split_bits_across_variants(variant):
    from tapeflow.eval.jobs import tapeflow_options
    from tapeflow.machines import pipeline

    call = [np.linspace(0.1, 0.9, 6), np.zeros(6), 0.7, 6, 1.0]
    reference = compile_and_differentiate(LOOP)
    want = bits(runner.run_function(reference, with_driver(reference, "g"), copy_args(call)))
    module = compile_c(LOOP, "test.c")
    for p in pipeline(variant, tapeflow_options(2048, 0, 2, mode="always")):
        p.apply(make_context(), module)
    driver = with_driver(module, "g")
    assert bits(runner.run_function(module, driver, copy_args(call))) == want
    assert bits(runner.run_function(module, "g_grad", copy_args(call))) == want


def test_allocatedtape_expected_values():
    """Enzyme's allocatedtape.c: its main's inputs and APPROX_EQ expectations."""
    module = compile_and_differentiate(ALLOCATED)
    x0, x1, x0_b, x1_b = 1.2, 3.4, 5.6, 7.8
    r = runner.run_function(module, with_driver(module, "f"),
                            [np.array([x0, x1]), np.array([x0_b, x1_b])])
    x, x_b = r.arguments[0], r.arguments[1]
    assert x.tolist() == pytest.approx([x0 + x1 * x1, -x1], abs=1e-10)
    assert x_b.tolist() == pytest.approx([x0_b, x0_b * 2 * x1 - x1_b], abs=1e-10)


def test_allocated_tape_too_small():
    """Enzyme's allocatedtape_err.c: the error Enzyme gives, at the call."""
    src = HEADER + """
void f(double* x) { x[0] = sin(x[0]); }
void f_rev(double* x, double* x_b, void* tape) {
    __enzyme_reverse(f, x, x_b, enzyme_allocated, 1, enzyme_tape, tape);
}
"""
    with pytest.raises(ToolError, match=r"^test.c:9:5: Enzyme: need 8 bytes have 1 bytes$"):
        compile_c(src, "test.c")


@pytest.mark.parametrize("variant", ["enzyme", "tapeflow"])
def test_split_native_bits(variant):
    """Lowered to upstream MLIR and run natively, the pair gives the interpreter's bits."""
    from helpers.runs import assert_native_bits
    from tapeflow import native
    from tapeflow.eval.jobs import tapeflow_options
    from tapeflow.machines import pipeline

    if not native.tools_available():
        pytest.skip("mlir-opt/mlir-runner not installed")
    module = compile_c(LOOP, "test.c")
    for p in pipeline(variant, tapeflow_options(2048, 0, 2, mode="always")):
        p.apply(make_context(), module)
    driver = with_driver(module, "g")
    call = [np.linspace(0.1, 0.9, 6), np.zeros(6), 0.7, 6, 1.0]
    assert_native_bits(module, driver, call, variant)
