"""Gradient checking for `tapeflow-autodiff` output: central finite differences.

`check(text, name, args)` differentiates `@name` (the module text must mark it or it is
named explicitly), calls `@name_grad` with random output seeds, and compares every
gradient (float scalars returned, float memrefs through their shadows) with central
differences of the scalar loss  L = sum_j seed_j*result_j + sum_A <wA, A_final>.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from tapeflow.transforms.autodiff import AutodiffPass
from tapeflow.transforms.autodiff.activity import is_float, is_float_memref
from xdsl.dialects.builtin import MemRefType, ModuleOp

from helpers.runs import copy_args
from tapeflow.diagnostics import parse_module
from tapeflow.registry import make_context
from tapeflow.runner import find_function, run_function


def differentiate(text: str, functions: Sequence[str] = (), policy: str = "min-tape") -> ModuleOp:
    module = parse_module(make_context(), text, "test.mlir")
    AutodiffPass(functions=tuple(functions), policy=policy).apply(make_context(), module)
    module.verify()
    return module


def loss(module: ModuleOp, name: str, args: Sequence[Any], seeds, weights) -> float:
    args = copy_args(args)
    result = run_function(module, name, args)
    floats = [r for r, t in zip(result.results, result.result_types, strict=True) if is_float(t)]
    total = sum(s * r for s, r in zip(seeds, floats, strict=True))
    for p, w in weights.items():
        total += float(np.sum(w * args[p]))
    return float(total)


def gradient(module: ModuleOp, name: str, args: Sequence[Any], seeds, weights):
    """Runs @name_grad; returns {position: gradient} for every float argument."""
    fn = find_function(module, name)
    types = list(fn.function_type.inputs.data)
    grad_args: list[Any] = []
    for p, (a, t) in enumerate(zip(args, types, strict=True)):
        grad_args.append(a.copy() if isinstance(a, np.ndarray) else a)
        if is_float_memref(t):
            grad_args.append(np.array(weights[p], dtype=a.dtype, copy=True))
    grad_args.extend(seeds)
    result = run_function(module, f"{name}_grad", grad_args)
    grads: dict[int, Any] = {}
    k = 0
    scalar_grads = iter(result.results)
    for p, t in enumerate(types):
        if is_float_memref(t):
            grads[p] = grad_args[k + 1]
            k += 2
        else:
            if is_float(t):
                grads[p] = next(scalar_grads)
            k += 1
    return grads, result


def finite_differences(module, name, args, seeds, weights, step=1e-5):
    fn = find_function(module, name)
    types = list(fn.function_type.inputs.data)
    fd: dict[int, Any] = {}
    for p, t in enumerate(types):
        if is_float_memref(t):
            g = np.zeros_like(args[p], dtype=np.float64)
            for idx in np.ndindex(args[p].shape):
                x = args[p][idx]
                h = step * max(1.0, abs(x))
                plus, minus = copy_args(args), copy_args(args)
                plus[p][idx] = x + h
                minus[p][idx] = x - h
                g[idx] = (
                    loss(module, name, plus, seeds, weights)
                    - loss(module, name, minus, seeds, weights)
                ) / (2 * h)
            fd[p] = g
        elif is_float(t):
            x = args[p]
            h = step * max(1.0, abs(x))
            plus, minus = copy_args(args), copy_args(args)
            plus[p] = x + h
            minus[p] = x - h
            fd[p] = (
                loss(module, name, plus, seeds, weights) - loss(module, name, minus, seeds, weights)
            ) / (2 * h)
    return fd


def max_rel_error(grads, fd) -> float:
    worst = 0.0
    for p in fd:
        g = np.asarray(grads[p], dtype=np.float64)
        f = np.asarray(fd[p], dtype=np.float64)
        scale = max(float(np.max(np.abs(f))) if f.size else 0.0, 1e-3)
        err = np.abs(g - f) / np.maximum(np.maximum(np.abs(f), np.abs(g)), scale * 1e-2)
        worst = max(worst, float(np.max(err)) if err.size else 0.0)
    return worst


def check(
    text: str,
    name: str,
    args: Sequence[Any],
    *,
    functions: Sequence[str] = (),
    policy: str = "min-tape",
    rng_seed: int = 0,
    module: ModuleOp | None = None,
):
    """Differentiates and compares with finite differences; returns (max rel error, grads)."""
    module = module or differentiate(text, functions, policy)
    fn = find_function(module, name)
    rng = np.random.default_rng(rng_seed)
    types = list(fn.function_type.inputs.data)
    weights = {
        p: rng.uniform(-1.0, 1.0, size=np.shape(args[p]))
        for p, t in enumerate(types)
        if isinstance(t, MemRefType) and is_float_memref(t)
    }
    seeds = [float(rng.uniform(0.5, 1.5)) for t in fn.function_type.outputs.data if is_float(t)]
    grads, _ = gradient(module, name, args, seeds, weights)
    fd = finite_differences(module, name, args, seeds, weights)
    return max_rel_error(grads, fd), grads
