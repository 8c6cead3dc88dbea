"""Recursive C functions (issue 35 item 1): the AD keeps their calls (`@g_aug` pushes,
`@g_rev` pops, caches shared by every call), so the gradient is right against central
differences, and every stage of the pipeline, and the native run, gives the bits of the
autodiff IR interpreted."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

pytest.importorskip("clang.cindex")

from helpers.cfront import check_fd, compile_and_differentiate, copy_args  # noqa: E402
from helpers.pipelines import stages  # noqa: E402
from helpers.runs import assert_native_bits  # noqa: E402
from tapeflow import runner  # noqa: E402
from tapeflow.frontends.c import compile_c  # noqa: E402
from tapeflow.registry import get_all_passes, make_context  # noqa: E402
from xdsl.passes import PassPipeline  # noqa: E402

HERE = pathlib.Path(__file__).parent / "cfront_recursion"
BLIND = pathlib.Path(__file__).parent / "cfront_blind"
RNG = np.random.default_rng(35)

# (file, differentiated function, arguments of the primal)
CASES = [
    (HERE / "tile.c", "tile", [RNG.uniform(-1, 1, 64), 0, 8, 0, 8]),
    (HERE / "fib.c", "fib_out", [np.array([0.7]), np.array([-1.2]), np.zeros(1), 7]),
    (HERE / "tree.c", "node", [RNG.uniform(-1, 1, 5), RNG.uniform(-1, 1, 4), 3, 0]),
    (HERE / "mutual.c", "even", [1.3, 0.7, 6]),
    (HERE / "cells.c", "walk", [np.array([0.5, -1.0, 2.0, 0.25]), 4]),
    (HERE / "local_array.c", "local", [0.7, -1.3, 3]),
    (HERE / "frames.c", "frames", [RNG.uniform(-1, 1, 6), 6]),
    (BLIND / "recursive_sum.c", "rsum", [np.array([1.0, -2.0, 0.5, 3.0, -1.5]), 5]),
    (BLIND / "mutual_pow.c", "even_pow", [1.3, 6]),
]
IDS = [f"{c[0].stem}" for c in CASES]


def _grad_call(module, name: str, args: list) -> list:
    """`@name_grad`'s arguments: a zero shadow after each float array, seed 1.0 for a
    float result; the output of `fib_out` (argument 2) seeded with 1.0 in its shadow."""
    fn = runner.find_function(module, name)
    call = []
    for p, a in enumerate(args):
        call.append(a.copy() if isinstance(a, np.ndarray) else a)
        if isinstance(a, np.ndarray):
            call.append(np.ones_like(a) if (name, p) == ("fib_out", 2) else np.zeros_like(a))
    if fn.function_type.outputs.data:
        call.append(1.0)
    return call


def _run_bits(module, entry: str, call: list) -> list[bytes]:
    r = runner.run_function(module, entry, copy_args(call))
    return [np.asarray(v).tobytes() for v in (*r.results, *r.arguments)]


@pytest.mark.parametrize("path,name,args", CASES, ids=IDS)
def test_gradient_matches_finite_differences(path, name, args):
    module = compile_and_differentiate(path.read_text())
    if name == "fib_out":  # the result is behind `out`: check d out / d a, d b by hand
        call = _grad_call(module, name, args)
        r = runner.run_function(module, f"{name}_grad", call)
        for p, q in ((0, 1), (1, 3)):
            def f(v, p=p):
                xs = copy_args(args)
                xs[p] = np.array([v])
                return runner.run_function(module, name, xs).arguments[2][0]
            eps = 1e-6
            fd = (f(args[p][0] + eps) - f(args[p][0] - eps)) / (2 * eps)
            assert r.arguments[q][0] == pytest.approx(fd, rel=1e-6)
        return
    arrays, scalars = check_fd(module, name, args)
    assert arrays or scalars  # something was differentiated


@pytest.mark.parametrize("path,name,args", CASES, ids=IDS)
def test_every_stage_gives_the_same_bits(path, name, args):
    source = compile_c(path.read_text(), path.name, functions=[name])
    ad = f"tapeflow-autodiff{{functions={name}}}"
    pipelines = [ad, f"{ad},tapeflow-lower-tape", *stages(name, 2, 4096),
                 f"tapeflow{{functions={name}}}"]
    want = None
    for spec in pipelines:
        module = source.clone()
        PassPipeline.parse_spec(get_all_passes(), spec).apply(make_context(), module)
        module.verify()
        call = _grad_call(module, name, args)
        got = _run_bits(module, f"{name}_grad", call)
        if want is None:
            want = got
        assert got == want, spec
    assert_native_bits(module, f"{name}_grad", call, "tapeflow native")


def test_the_tape_is_on_caches_shared_by_the_calls():
    """`@tile_aug` pushes on, and `@tile_rev` pops from, caches they receive; lowered, each
    is Enzyme's growable stack (`memref<memref<?xf64>>`) passed by reference."""
    source = compile_c((HERE / "tile.c").read_text(), "tile.c", functions=["tile"])
    module = source.clone()
    PassPipeline.parse_spec(get_all_passes(), "tapeflow-autodiff").apply(make_context(), module)
    text = str(module)
    assert "func.func private @tile_aug(" in text and "func.func private @tile_rev(" in text
    assert "!tape.cache<f64>" in text.split("@tile_aug(")[1].split("{")[0]
    PassPipeline.parse_spec(get_all_passes(), "tapeflow-lower-tape").apply(make_context(), module)
    assert "memref<memref<?xf64>>" in str(module).split("@tile_rev(")[1].split("{")[0]
    assert "tape." not in str(module)
