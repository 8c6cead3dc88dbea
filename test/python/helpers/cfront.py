"""Calling and checking C-frontend gradients as Enzyme's users would (the C tests share it).

`enzyme_gradient` calls `@name_grad` with Enzyme's signature; `check_fd` compares every
active input's gradient with central differences of `@name`'s result. Nothing here needs
libclang until `compile_and_differentiate` parses C (the tests `importorskip` it first).
"""

from __future__ import annotations

import contextlib
import io
import sys
from typing import Any

import numpy as np
import pytest
from tapeflow.transforms.autodiff import AutodiffPass
from tapeflow.transforms.autodiff.activity import const_args, is_float, is_float_memref
from xdsl.dialects.builtin import ModuleOp

from helpers.runs import copy_args
from tapeflow import runner
from tapeflow.frontends.c import compile_c
from tapeflow.registry import make_context

__all__ = [
    "check_fd", "compile_and_differentiate", "compile_variant", "copy_args", "enzyme_gradient",
    "gradient_bits", "loss_fn", "translate", "u",
]


def u(*shape, seed=0):
    """Seeded inputs uniform in [-1, 1) of `shape`."""
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape)


_TRANSLATIONS: dict[tuple[str, tuple[tuple[str, Any], ...]], tuple[ModuleOp, str]] = {}


def translate(src: str, **options: Any) -> ModuleOp:
    """`compile_c(src, "test.c", **options)`, its remarks on stderr, from one translation
    per source and options (the C tests compile a source for each variant and each check,
    and the frontend costs more than the passes): a clone for each call."""
    key = (src, tuple(sorted((k, tuple(v) if isinstance(v, list) else v)
                             for k, v in options.items())))  # fmt: skip
    if key in _TRANSLATIONS:
        module, remarks = _TRANSLATIONS[key]
        sys.stderr.write(remarks)
        return module.clone()
    remarks = io.StringIO()
    try:
        with contextlib.redirect_stderr(remarks):
            module = compile_c(src, "test.c", **options)
    finally:
        sys.stderr.write(remarks.getvalue())
    if len(_TRANSLATIONS) >= 512:
        _TRANSLATIONS.clear()
    _TRANSLATIONS[key] = (module.clone(), remarks.getvalue())
    return module


def compile_and_differentiate(src: str, **kw) -> ModuleOp:
    module = translate(src, **kw)
    AutodiffPass().apply(make_context(), module)
    return module


def enzyme_gradient(module: ModuleOp, name: str, args):
    """Calls `@name_grad` as Enzyme's signature says (a shadow after each float array not
    `tapeflow.const`, the active scalars' gradients as results, seed 1.0): returns
    ({param: shadow}, {param: gradient})."""
    fn = runner.find_function(module, name)
    const = const_args(fn)
    call: list[Any] = []
    shadows: dict[int, int] = {}
    scalars: list[int] = []
    for p, (a, t) in enumerate(zip(args, fn.function_type.inputs.data)):
        call.append(a.copy() if isinstance(a, np.ndarray) else a)
        if p in const:
            continue
        if is_float_memref(t):
            shadows[p] = len(call)
            call.append(np.zeros_like(a))
        elif is_float(t):
            scalars.append(p)
    if fn.function_type.outputs.data and is_float(fn.function_type.outputs.data[0]):
        call.append(1.0)
    r = runner.run_function(module, f"{name}_grad", call)
    return {p: r.arguments[q] for p, q in shadows.items()}, dict(zip(scalars, r.results))


def loss_fn(module: ModuleOp, name: str, args) -> float:
    return float(runner.run_function(module, name, copy_args(args)).results[0])


def check_fd(module: ModuleOp, name: str, args, eps=1e-6, rtol=1e-6, atol=1e-8):
    """Every active input's gradient against central differences of `@name`'s result;
    returns (shadows, scalar gradients)."""
    arrays, scalars = enzyme_gradient(module, name, args)
    for p, grad in arrays.items():
        for idx in np.ndindex(args[p].shape):
            plus, minus = copy_args(args), copy_args(args)
            plus[p][idx] += eps
            minus[p][idx] -= eps
            fd = (loss_fn(module, name, plus) - loss_fn(module, name, minus)) / (2 * eps)
            assert grad[idx] == pytest.approx(fd, rel=rtol, abs=atol), (p, idx)
    for p, grad in scalars.items():
        plus, minus = copy_args(args), copy_args(args)
        plus[p] += eps
        minus[p] -= eps
        fd = (loss_fn(module, name, plus) - loss_fn(module, name, minus)) / (2 * eps)
        assert grad == pytest.approx(fd, rel=rtol, abs=atol), p
    return arrays, scalars


def compile_variant(src: str, function: str, variant: str) -> ModuleOp:
    """C source `src` through a variant's pipeline (`enzyme`, `regions`, `tapeflow`; every
    region streamed), `function` differentiated: for bit-identity across variants."""
    from tapeflow.eval.jobs import tapeflow_options
    from tapeflow.machines import pipeline

    module = translate(src, functions=[function])
    for p in pipeline(variant, tapeflow_options(2048, 0, 2, mode="always")):
        p.apply(make_context(), module)
    return module


def gradient_bits(src: str, function: str, call: list, variant: str, shadow: int = 1) -> bytes:
    """The bytes of argument `shadow` after `@function_grad(*call)` through a variant."""
    module = compile_variant(src, function, variant)
    r = runner.run_function(module, f"{function}_grad", copy_args(call))
    return r.arguments[shadow].tobytes()
