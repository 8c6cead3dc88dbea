"""`tapeflow-exec`: run one function of an MLIR file natively, with upstream MLIR.

    tapeflow-exec kernel.mlir --entry f --args 0.5 3
    tapeflow-opt kernel.mlir --tapeflow | tapeflow-exec - --entry f_grad --json

It is `tapeflow-run` with the interpreter swapped for native execution: the module is
lowered to upstream dialects (`tapeflow-lower-to-std`), compiled to LLVM by `mlir-opt-22`
and run by `mlir-runner-22` (`tapeflow.native`). To keep the command line, the argument
rules and the output identical to `tapeflow-run`'s, it calls `tapeflow-run`'s own `main`
with its parser (one more option) and `tapeflow.native.run_function_native` as the
function that runs the call (same arguments, same `RunResult`). Values travel
bit for bit, so the output is the interpreter's whenever the native code computes the
same numbers.

Two options of its own: `--emit-mlir FILE` writes the upstream MLIR program that is
compiled (the lowered module plus the wrapper that feeds and prints it); `-p PIPELINE`
runs passes (`tapeflow-opt`'s pipeline syntax and checks) on the module first, with the
cost model of every `tapeflow{...}` deciding for `machine=native` unless the pipeline
names a machine: native code runs on a CPU without a DMA engine, whatever machine
`tapeflow-opt` defaults to (docs/CONTRACTS.md, "The cost model of mode=auto", rule 4).

    tapeflow-exec kernel.mlir -p tapeflow --entry f_grad --args 1.0
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from xdsl.passes import PassPipeline

from tapeflow import native, runner
from tapeflow.registry import get_all_passes, make_context
from tapeflow.tools import run
from tapeflow.tools.opt import check_pipeline
from tapeflow.transforms.analysis.cost_model import NATIVE
from tapeflow.transforms.pipeline import TapeFlowPipelinePass


def _parser() -> argparse.ArgumentParser:
    p = run.parser()
    p.prog = "tapeflow-exec"
    p.description = (
        "Runs one function of an MLIR module natively and prints its results and its "
        "memref arguments, exactly as tapeflow-run does: the module is lowered to "
        "upstream dialects (tapeflow-lower-to-std), compiled by mlir-opt-22 ("
        + " ".join(native.VERIFIED_PIPELINE)
        + ") and run by mlir-runner-22. Needs upstream MLIR: "
        + native.INSTALL_HINT
        + "."
    )
    p.add_argument(
        "-p",
        "--passes",
        metavar="PIPELINE",
        default="",
        help="passes to run first, as tapeflow-opt -p takes them; tapeflow{...} decides "
        "for machine=native unless it names a machine",
    )
    p.add_argument(
        "--emit-mlir",
        metavar="FILE",
        help="also write the upstream MLIR program that is compiled, in custom form "
        "(compiled in generic form, with locations; for debugging)",
    )
    p.add_argument(
        "--no-runtime-checks",
        action="store_true",
        help="compile without upstream's runtime verification (on by default: an "
        "out-of-bounds access is an error at its op's location, not a wrong number); "
        "for timing",
    )
    return p


def _run_natively(module: Any, name: str, args: Sequence[Any], options: argparse.Namespace) -> Any:
    tools = native.find_tools()
    if options.emit_mlir:
        types = runner.find_function(module, name).function_type.inputs.data
        values = [native.argument_value(p, v, t) for p, (v, t) in enumerate(zip(args, types))]
        program, _printed = native.native_program(module, name, values, located=False)
        with open(options.emit_mlir, "w") as out:
            out.write(program)
    return native.run_function_native(module, name, args, tools=tools,
                                      verify=not options.no_runtime_checks)  # fmt: skip


def native_passes(text: str) -> list[Any]:
    """The passes of pipeline `text`, checked as `tapeflow-opt -p` checks them, with
    `machine=native` added to each `tapeflow{...}` that names no machine."""
    available = get_all_passes()
    specs = check_pipeline(text, available)
    for spec in specs:
        if spec.name == TapeFlowPipelinePass.name and "machine" not in spec.options:
            spec.options["machine"] = (NATIVE,)
            spec.texts["machine"], spec.locations["machine"] = NATIVE, spec.location
    return [spec.build(available) for spec in specs]


def _apply_passes(module: Any, options: argparse.Namespace) -> None:
    if options.passes:
        PassPipeline(tuple(native_passes(options.passes))).apply(make_context(), module)
        module.verify()


def main(argv: Sequence[str] | None = None) -> int:
    return run.main(argv, parser=_parser, execute=_run_natively, prepare=_apply_passes)


if __name__ == "__main__":
    sys.exit(main())
