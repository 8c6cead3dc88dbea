"""`tapeflow-check`: a kernel's gradient against central finite differences.

    tapeflow-check rd.c --inputs u.npz --args 16 4 0.01 0.1

The function marked for differentiation (`tapeflow.autodiff`, or the one a C file hands to
`__enzyme_autodiff`; `--entry` picks another) is differentiated by tapeflow-autodiff and
its gradient run in the interpreter, with the arguments tapeflow-run would give the
function (`tools.common.function_arguments`).

A function returning one float: for a few elements of each differentiated array, the
returned value is recomputed with that element moved by +-h (`--points`).

Any other function (it returns nothing, or writes its results into arrays), or any
function with `--adjoint`: the dot-product test. Random directions u over the active
inputs (float arrays not `enzyme_const`, float scalars) and v over the outputs (those
arrays' final contents, float results) are drawn; reverse mode, seeded with v (each
array's shadow holds v on entry, Enzyme's convention), gives J^T v, and the primal run
at x + h u and x - h u gives J u by central differences: <J^T v, u> must equal <v, J u>.
It is the one-float check of the scalar function <v, F(x)> along u, so the same
error measure and tolerance apply.

Exit status 0 when every check agrees within --tolerance, 1 otherwise.
"""

from __future__ import annotations

import argparse
import copy
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.passes import PassPipeline

from tapeflow import runner
from tapeflow.convention import is_float_type
from tapeflow.diagnostics import ToolError, read_source, report_errors
from tapeflow.eval.kernels import grad_arguments, marked_functions
from tapeflow.frontends import c as c_frontend
from tapeflow.registry import get_all_passes, make_context
from tapeflow.tools.check_adjoint import adjoint_test
from tapeflow.tools.common import ArgumentParser, function_arguments, parse_run_arguments

GRADIENT = "tapeflow-autodiff,tapeflow-lower-tape"
"""The pipeline that makes `@F_grad` (the Enzyme layout: TapeFlow's other pipelines give
bit-identical gradients, which tapeflow-bench checks)."""


def _parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="tapeflow-check", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("file", help="a .c or .mlir kernel file")
    p.add_argument("--entry", "-e", metavar="NAME",
                   help="the function (default: the one marked for differentiation)")
    p.add_argument("--args", nargs="*", default=[], metavar="VALUE",
                   help="its scalar arguments, as tapeflow-run --args")
    p.add_argument("--inputs", action="append", default=[], metavar="FILE",
                   help="its arrays (and scalars by name), as tapeflow-run --inputs")
    p.add_argument("--seed", type=int, default=0, help="seed of the fill rule (0)")
    p.add_argument("--zero", action="append", default=[], metavar="P[,P...]",
                   help="fill these memref arguments with zeros")
    p.add_argument("--points", type=int, default=4, metavar="N",
                   help="elements checked per array, spread over it (4)")
    p.add_argument("--step", type=float, default=1e-6, metavar="H",
                   help="relative finite-difference step (1e-6)")
    p.add_argument("--tolerance", type=float, default=1e-5, metavar="T",
                   help="largest accepted |AD - FD| / max(1, |FD|) (1e-5)")
    p.add_argument("--adjoint", action="store_true",
                   help="the dot-product test even for a function returning one float")
    c_frontend.add_c_arguments(p)
    return p


def _value(module: Any, name: str, values: list[Any]) -> float:
    return runner.run_function(module, name, copy.deepcopy(values)).results[0]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_run_arguments(_parser(), argv)
    with report_errors():
        text, name = read_source(args.file)
        module = runner.load_module(text, name)
        if args.entry is None:
            marked = marked_functions(module)
            if len(marked) != 1:
                raise ToolError(f"{name}: {len(marked)} functions are marked for "
                                "differentiation; say which with --entry")  # fmt: skip
            args.entry = marked[0]
        primal = runner.find_function(module, args.entry)
        values = function_arguments(module, primal, args)
        grad_module = module.clone()
        PassPipeline.parse_spec(get_all_passes(), GRADIENT).apply(make_context(), grad_module)
        outputs = primal.function_type.outputs.data
        if args.adjoint or len(outputs) != 1 or not is_float_type(outputs[0]):
            worst = adjoint_test(module, grad_module, primal, values, args)
            what = "the adjoint test"
        else:
            worst, what = _elements_test(module, grad_module, primal, values, args)
        ok = worst <= args.tolerance
        print(f"{'ok' if ok else 'FAILED'}: @{args.entry}, {what}, largest error "
              f"{worst:.2e} (tolerance {args.tolerance:g})")  # fmt: skip
        return 0 if ok else 1


def _elements_test(module: Any, grad_module: Any, primal: Any, values: list[Any],
                   args: argparse.Namespace) -> tuple[float, str]:  # fmt: skip
    """The one-float check: (largest error, what was checked)."""
    shadowed = sorted(runner.shadowed(primal))
    run = runner.run_function(grad_module, f"{args.entry}_grad",
                              grad_arguments(copy.deepcopy(values), shadowed))  # fmt: skip
    worst, checked = 0.0, 0
    for k, p in enumerate(shadowed):
        gradient = run.arguments[p + k + 1]
        flat = np.asarray(values[p]).reshape(-1)
        for i in np.unique(np.linspace(0, flat.size - 1, args.points).astype(int)):
            h = args.step * max(1.0, abs(float(flat[i])))
            moved = []
            for sign in (1, -1):
                shifted = copy.deepcopy(values)
                shifted[p].reshape(-1)[i] += sign * h
                moved.append(_value(module, args.entry, shifted))
            fd = (moved[0] - moved[1]) / (2 * h)
            ad = float(np.asarray(gradient).reshape(-1)[i])
            error = abs(ad - fd) / max(1.0, abs(fd))
            worst, checked = max(worst, error), checked + 1
            label = runner.arg_names(primal)[p] or f"arg{p}"
            print(f"{label}[{i}]: AD {ad!r}  FD {fd!r}  error {error:.2e}")
    return worst, f"{checked} element(s) of {len(shadowed)} array(s)"


if __name__ == "__main__":
    sys.exit(main())
