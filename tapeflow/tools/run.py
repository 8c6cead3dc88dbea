"""`tapeflow-run`: run one function of an MLIR file in TapeFlow's interpreter.

    tapeflow-run kernel.mlir --entry f --args 0.5 3
    tapeflow-opt kernel.mlir --tapeflow-autodiff | tapeflow-run - --entry f_grad --json

The work is done by `tapeflow.runner`; this module only reads the command line and the
files, and prints.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from tapeflow import runner
from tapeflow.diagnostics import read_source, report_errors
from tapeflow.frontends import c as c_frontend
from tapeflow.tools.common import ArgumentParser, function_arguments, parse_run_arguments

_EPILOG = """\
arguments of the function:
  scalars (float, integer, index, i1)
      come from --args, in signature order, skipping memref arguments. Floats take
      Python syntax (1.5, -2e-3, inf, nan) or hex (0x1.8p1) and are rounded to the
      argument's type (f32 is exact f32); integers take 12, -3, 0xff; i1 takes
      true/false/1/0. Their number must match.
  memrefs (the default fill rule)
      element k (row-major) of the memref at position p (0-based, counting every
      argument) is the k-th value of
          numpy.random.default_rng([SEED, p]).uniform(-1.0, 1.0, size)
      drawn in float64 and rounded to the element type; SEED is --seed (default 0).
      Integer, index and i1 memrefs are filled with zeros. --zero P fills memref P
      with zeros. A memref with a dynamic shape (memref<?xf64>) must be given, but
      a gradient's shadow (zero-filled) takes the shape of its primal.
  gradients (@F_grad made by tapeflow-autodiff from @F, both in the module)
      @F_grad takes @F's arguments, each float memref followed by its shadow, then
      the seed (given in --args). Each primal argument is filled as @F's argument at
      its position in @F, so @F_grad sees the same data as a run of @F, and every
      shadow starts at zero: after the run the shadows hold the gradients.
      --plain-fill turns this off (positions in @F_grad, shadows filled too).
  --inputs
      data.npz: arrays named arg0, arg1 ... (or 0, 1 ..., arr_0, arr_1 ... as
      numpy.savez names unnamed arrays, or the argument's SSA name in the source,
      e.g. A for %A) replace the fill rule for those arguments. Positions count
      every argument, memref or scalar.
      P=data.npy or NAME=data.npy: one array for argument P (or %NAME).
      data.npy alone: the function's only memref argument. Arrays must have the
      memref's shape; they are cast to its element type (integers must fit).

output:
  text (default): one line per returned value, then one per memref argument after the
  run (arguments are updated in place: @f_grad leaves gradients in its shadows):
      result[0]: f64 = 0.479425538604203
      arg[1]: memref<4xf64> = [0.1, -0.25, 0.5, 1.0]
  Floats print as Python's repr, the shortest exact spelling (an f32 prints its exact
  value as a double: 0.1 : f32 is 0.10000000149011612); arrays as nested lists.
  --json: {"function": ..., "results": [{"index", "type", "value"}],
           "arguments": [{"index", "type", "shape", "value"}]}
  with floats at full precision and NaN/infinities as "nan", "inf", "-inf".

errors (missing file, bad IR, unknown function, wrong --args, runtime failures such as
tape.pop on an empty cache) print `error: ...` on stderr and exit with status 1.
"""


def parser() -> argparse.ArgumentParser:
    """tapeflow-run's parser (tapeflow-exec adds its options to it)."""
    parser = ArgumentParser(
        prog="tapeflow-run",
        description="Runs one function of an MLIR module in TapeFlow's interpreter and\n"
        "prints its results and its memref arguments afterwards.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", help="input MLIR file, or - for standard input")
    parser.add_argument(
        "--entry",
        "-e",
        metavar="NAME",
        help="the function to run (default: the module's only function)",
    )
    parser.add_argument(
        "--args",
        nargs="*",
        default=[],
        metavar="VALUE",
        help="the scalar arguments, in order (see below); they run up to the next --option",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the fill rule (0)")
    parser.add_argument(
        "--inputs",
        action="append",
        default=[],
        metavar="FILE",
        help="memref data: data.npz, P=data.npy, NAME=data.npy or data.npy (repeatable)",
    )
    parser.add_argument(
        "--zero",
        action="append",
        default=[],
        metavar="P[,P...]",
        help="fill these memref arguments with zeros (e.g. shadows)",
    )
    parser.add_argument(
        "--plain-fill",
        action="store_true",
        help="for @F_grad, use the plain fill rule (no primal data, no zero shadows)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    c_frontend.add_c_arguments(parser)
    return parser


Execute = Callable[[Any, str, list[Any], argparse.Namespace], Any]
"""Runs `(module, function name, argument values, parsed options)` to a `RunResult`."""


def _interpret(module: Any, name: str, values: list[Any], _options: argparse.Namespace) -> Any:
    return runner.run_function(module, name, values)


def main(
    argv: Sequence[str] | None = None,
    *,
    parser: Callable[[], argparse.ArgumentParser] = parser,
    execute: Execute = _interpret,
    prepare: Callable[[Any, argparse.Namespace], None] | None = None,
) -> int:
    """tapeflow-run; `tapeflow-exec` is this with its own `parser` (more options),
    `execute` (native code instead of the interpreter) and `prepare` (its `-p` pipeline,
    run on the module before the entry is looked up)."""
    args = parse_run_arguments(parser(), argv)
    with report_errors():
        text, name = read_source(args.file)
        module = runner.load_module(text, name)
        if prepare is not None:
            prepare(module, args)
        func_op = runner.find_function(module, args.entry)
        values = function_arguments(module, func_op, args)
        result = execute(module, func_op.sym_name.data, values, args)
        if args.json:
            output = json.dumps(runner.format_json(result), allow_nan=False) + "\n"
        else:
            output = runner.format_text(result)
        sys.stdout.write(output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
