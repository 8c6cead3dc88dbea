"""What the command-line tools share: usage errors as one `error:` line (`ArgumentParser`),
tapeflow-run/-sim/-exec's `--args` values that look like options (`take_scalars`), and
their one rule for a function's arguments (`function_arguments`). Reading `--inputs` is
the library's (`tapeflow.runner.read_inputs`); errors end at
`tapeflow.diagnostics.report_errors`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tapeflow import runner
from tapeflow.diagnostics import ToolError
from tapeflow.frontends import c as c_frontend


class ArgumentParser(argparse.ArgumentParser):
    """Usage errors look like every other error: `error: ...`, exit status 1."""

    def error(self, message: str):  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(1)


SHORT = ("-h", "-e", "-q", "-p", "-j")
"""Short options of tapeflow-run/exec/sim/bench: they end `--args`' values."""


def take_scalars(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """Pulls the values of every `--args` out of argv, so that values argparse would
    take for options (`-1e-3`, `-inf`, `-0x1p3`) still count as values. The values end
    at the next token starting with `--`, or at a short option (`SHORT`)."""
    rest: list[str] = []
    scalars: list[str] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        if token == "--args" or token.startswith("--args="):
            if token.startswith("--args="):
                scalars.append(token.split("=", 1)[1])
            i += 1
            stop = ("--", "-D", "-I")  # -D/-I: the C frontend's options
            while i < len(argv) and not argv[i].startswith(stop) and argv[i] not in SHORT:
                scalars.append(argv[i])
                i += 1
            continue
        rest.append(token)
        i += 1
    return rest, scalars


def parse_run_arguments(parser: argparse.ArgumentParser,
                        argv: Sequence[str] | None) -> argparse.Namespace:  # fmt: skip
    """tapeflow-run/-sim/-exec's command line (`sys.argv` when `argv` is None): `--args`
    values taken first (`take_scalars`), the C frontend's `-D`/`-I` applied."""
    rest, scalars = take_scalars(list(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(rest)
    c_frontend.use_c_arguments(args)
    args.args = scalars
    return args


def zero_positions(specs: Sequence[str]) -> list[int]:
    """The argument positions of `--zero P[,P...]` (repeatable)."""
    positions: list[int] = []
    for spec in specs:
        for part in spec.split(","):
            try:
                positions.append(int(part))
            except ValueError:
                raise ToolError(f"--zero: expected argument positions, got '{part}'") from None
    return positions


def function_arguments(module: ModuleOp, func_op: func.FuncOp,
                       args: argparse.Namespace) -> list[Any]:  # fmt: skip
    """`func_op`'s arguments by tapeflow-run's rule, the same in tapeflow-run, -sim and
    -exec: `--seed`, `--inputs`, `--args`, `--zero` and, for a gradient `@F_grad` of
    `@F` in `module`, primals filled as `@F`'s and zero shadows sized from their primals
    (`runner.gradient_layout`) unless `--plain-fill`."""
    plain = getattr(args, "plain_fill", False)
    mirror, shadows = ({}, []) if plain else runner.gradient_layout(module, func_op)
    return runner.make_arguments(
        func_op,
        seed=args.seed,
        inputs=runner.read_inputs(args.inputs, func_op),
        scalars=args.args,
        zero=[*zero_positions(args.zero), *shadows],
        fill_positions=mirror,
        shape_of=runner.shadow_shapes(module, func_op),
    )
