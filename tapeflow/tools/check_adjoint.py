"""tapeflow-check's dot-product test, for a function whose results are not one float.

With F the map from the active inputs (float arrays not `enzyme_const`, float scalars)
to the outputs (those arrays' final contents, the float results), reverse mode seeded
with an output direction v gives J^T v; the primal at x + h u and x - h u gives J u by
central differences; <J^T v, u> = <v, J u> holds for a correct gradient, and a wrong one
passes only for u, v in a set of measure zero (a wrong J^T v orthogonal to u). It is
the one-float check of g(x) = <v, F(x)> along u, so its error measure, step and
tolerance are that check's.
"""

from __future__ import annotations

import argparse
import copy
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type
from xdsl.ir import Attribute

from tapeflow import runner
from tapeflow.convention import is_float_type, shadowed
from tapeflow.diagnostics import ToolError


def _rounded(x: float, t: Attribute) -> float:
    """`x` as a scalar of type `t` holds it (so a move of the input is the one made)."""
    if isinstance(t, Float32Type):
        return float(np.float32(x))
    if isinstance(t, Float16Type):
        return float(np.float16(x))
    return float(x)


def _seed(rng: np.random.Generator, shape: Any, double: bool) -> np.ndarray:
    """Output directions: uniform in [-1, 1) for f64; for a narrower type, multiples
    k/8 (0 < |k| <= 8), exact in it, so that the reverse sweep's sums of a seed stay
    exact up to 2^21 terms (a single-precision sum of 10^6 continuous seeds is off by
    1e-2; Enzyme's tests seed 1.0). A wrong derivative then cancels only when its
    output's seed hits one value of 16 (for a continuous seed: never)."""
    if double:
        return rng.uniform(-1.0, 1.0, shape)
    return rng.integers(1, 9, shape) * rng.choice([-1.0, 1.0], shape) / 8


def active_scalars(primal: func.FuncOp) -> list[int]:
    """Positions of the float scalar arguments whose gradients `@F_grad` returns."""
    const = {i for i, d in enumerate(primal.arg_attrs or ()) if "tapeflow.const" in d.data}
    return [p for p, t in enumerate(primal.function_type.inputs.data)
            if is_float_type(t) and p not in const]  # fmt: skip


def adjoint_test(module: Any, grad_module: Any, primal: func.FuncOp, values: list[Any],
                 args: argparse.Namespace) -> float:  # fmt: skip
    """Prints the test's inputs, outputs and its one comparison; returns its error,
    |AD - FD| / max(1, |FD|)."""
    name = primal.sym_name.data
    types = list(primal.function_type.inputs.data)
    arrays, scalars = sorted(shadowed(primal)), active_scalars(primal)
    results = [k for k, t in enumerate(primal.function_type.outputs.data) if is_float_type(t)]
    if not arrays and not scalars:
        raise ToolError(f"@{name} has no active input (a float array not enzyme_const, a "
                        "float scalar): its gradient is empty")  # fmt: skip
    if not arrays and not results:
        raise ToolError(f"@{name} has no output with a derivative (a float array not "
                        "enzyme_const, a float result): its gradient is empty")  # fmt: skip
    rng = np.random.default_rng(args.seed)
    u = {p: rng.uniform(-1.0, 1.0, np.shape(values[p])) for p in arrays}
    u |= {p: float(rng.uniform(-1.0, 1.0)) for p in scalars}
    v = {p: _seed(rng, np.shape(values[p]), values[p].dtype == np.float64)
         .astype(values[p].dtype) for p in arrays}  # fmt: skip
    outputs = primal.function_type.outputs.data
    seeds = [float(_seed(rng, (), isinstance(outputs[k], Float64Type))) for k in results]
    scale = max([1.0, *(float(np.max(np.abs(values[p]), initial=0.0)) for p in arrays),
                 *(abs(float(values[p])) for p in scalars)])  # fmt: skip
    h = args.step * scale

    def moved(t: float) -> list[Any]:
        out = copy.deepcopy(values)
        for p in arrays:
            out[p] = (values[p] + t * u[p]).astype(values[p].dtype)
        for p in scalars:
            out[p] = _rounded(values[p] + t * u[p], types[p])
        return out

    def along(x: list[Any]) -> float:
        """<v, F(x)> (x unchanged: the run writes into copies)."""
        run = runner.run_function(module, name, copy.deepcopy(x))
        return sum(float(np.vdot(v[p].astype(np.float64), run.arguments[p])) for p in arrays) \
            + sum(s * run.results[k] for s, k in zip(seeds, results))

    plus, minus = moved(h), moved(-h)
    fd = (along(plus) - along(minus)) / (2 * h)
    grad_args: list[Any] = []
    shadow_at: dict[int, int] = {}
    for p, value in enumerate(copy.deepcopy(values)):
        grad_args.append(value)
        if p in arrays:
            shadow_at[p] = len(grad_args)
            grad_args.append(v[p].copy())
    run = runner.run_function(grad_module, f"{name}_grad", [*grad_args, *seeds])
    if len(run.results) != len(scalars):
        raise ToolError(f"@{name}_grad returns {len(run.results)} value(s), not the "
                        f"gradients of {len(scalars)} float scalar(s)")  # fmt: skip
    # <J^T v, d> over the move d = x+ - x- actually made (inputs rounded to their type).
    ad = sum(float(np.vdot(run.arguments[shadow_at[p]].astype(np.float64),
                           plus[p].astype(np.float64) - minus[p])) for p in arrays)
    ad += sum(g * (plus[p] - minus[p]) for g, p in zip(run.results, scalars))
    ad /= 2 * h
    labels = [n or f"arg{p}" for p, n in enumerate(runner.arg_names(primal))]
    inputs = [f"{labels[p]}[{np.size(values[p])}]" for p in arrays] + [labels[p] for p in scalars]
    outs = [f"{labels[p]}[{np.size(values[p])}]" for p in arrays] + [
        f"result {k}" for k in results]
    print(f"u over {', '.join(inputs)}; v over {', '.join(outs)}; step {h:g}")
    error = abs(ad - fd) / max(1.0, abs(fd))
    print(f"<v,Ju>: AD {ad!r}  FD {fd!r}  error {error:.2e}")
    return error
