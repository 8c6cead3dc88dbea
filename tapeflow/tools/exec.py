"""`tapeflow-exec`: run one function of an MLIR file natively, with upstream MLIR.

    tapeflow-exec kernel.mlir --entry f --args 0.5 3
    tapeflow-opt kernel.mlir --tapeflow | tapeflow-exec - --entry f_grad --json

It is `tapeflow-run` with the interpreter swapped for native execution: the module is
lowered to upstream dialects (`tapeflow-lower-to-std`), compiled to LLVM by `mlir-opt-22`
and run by `mlir-runner-22` (`tapeflow.native`). To keep the command line, the argument
rules and the output identical to `tapeflow-run`'s, it runs `tapeflow-run`'s own `main`
with `tapeflow.runner.run_function` replaced, for this one call, by
`tapeflow.native.run_function_native` (same arguments, same `RunResult`). Values travel
bit for bit, so the output is the interpreter's whenever the native code computes the
same numbers.

One option of its own: `--emit-mlir FILE` writes the upstream MLIR program that is
compiled (the lowered module plus the wrapper that feeds and prints it).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any


def _emit_path(argv: Sequence[str]) -> str | None:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--emit-mlir")
    known, _ = parser.parse_known_args(list(argv))
    return known.emit_mlir


def main(argv: Sequence[str] | None = None) -> int:
    from tapeflow import native, runner
    from tapeflow.tools import run

    argv = list(sys.argv[1:] if argv is None else argv)
    emit = _emit_path(argv)
    run_parser, interpret = run._parser, runner.run_function

    def parser() -> argparse.ArgumentParser:
        p = run_parser()
        p.prog = "tapeflow-exec"
        p.description = (
            "Runs one function of an MLIR module natively and prints its results and its "
            "memref arguments, exactly as tapeflow-run does: the module is lowered to "
            "upstream dialects (tapeflow-lower-to-std), compiled by mlir-opt-22 ("
            + " ".join(native.MLIR_OPT_PIPELINE)
            + ") and run by mlir-runner-22. Needs upstream MLIR: "
            + native.INSTALL_HINT
            + "."
        )
        p.add_argument(
            "--emit-mlir",
            metavar="FILE",
            help="also write the upstream MLIR program that is compiled (for debugging)",
        )
        return p

    def run_natively(module: Any, name: str, args: Sequence[Any], **_: Any) -> Any:
        tools = native.find_tools()
        if emit:
            program, _printed = native.native_program(
                module,
                name,
                [
                    native.argument_value(p, v, t)
                    for p, (v, t) in enumerate(
                        zip(args, runner.find_function(module, name).function_type.inputs.data)
                    )
                ],
            )
            with open(emit, "w") as out:
                out.write(program)
        return native.run_function_native(module, name, args, tools=tools)

    run._parser, runner.run_function = parser, run_natively
    try:
        return run.main(argv)
    finally:
        run._parser, runner.run_function = run_parser, interpret


if __name__ == "__main__":
    sys.exit(main())
