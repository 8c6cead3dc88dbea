"""`tapeflow-exec`: run one function of an MLIR file natively, with upstream MLIR.

    tapeflow-exec kernel.mlir --entry f --args 0.5 3
    tapeflow-opt kernel.mlir --tapeflow | tapeflow-exec - --entry f_grad --json

Same command line, argument rules and output as `tapeflow-run` (it reuses its parser and
`tapeflow.runner`), but the module is lowered to upstream dialects
(`tapeflow-lower-to-std`), compiled to LLVM by `mlir-opt-22` and run by `mlir-runner-22`
(`tapeflow.native`). Values are exchanged bit for bit, so the output is the interpreter's
whenever the native code computes the same numbers.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from tapeflow.diagnostics import report_errors


def _parser():
    from tapeflow.native import INSTALL_HINT, MLIR_OPT_PIPELINE
    from tapeflow.tools import run

    parser = run._parser()
    parser.prog = "tapeflow-exec"
    parser.description = (
        "Runs one function of an MLIR module natively: lowers it to upstream dialects "
        "(tapeflow-lower-to-std), compiles it with mlir-opt-22 ("
        + " ".join(MLIR_OPT_PIPELINE)
        + ") and runs it with mlir-runner-22. Arguments and output are tapeflow-run's. "
        "Needs upstream MLIR: " + INSTALL_HINT + "."
    )
    parser.add_argument(
        "--emit-mlir",
        metavar="FILE",
        help="also write the upstream MLIR program that is compiled (for debugging)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from xdsl.dialects.builtin import MemRefType

    from tapeflow import native, runner
    from tapeflow.tools import run

    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    with report_errors():
        tools = native.find_tools()
        text, name = run._read_source(args.file)
        module = runner.load_module(text, name)
        func_op = runner.find_function(module, args.entry)
        memrefs = [
            p
            for p, t in enumerate(func_op.function_type.inputs.data)
            if isinstance(t, MemRefType)
        ]
        values = runner.make_arguments(
            func_op,
            seed=args.seed,
            inputs=run._read_inputs(args.inputs, memrefs),
            scalars=args.args,
            zero=run._zero_positions(args.zero),
        )
        entry = func_op.sym_name.data
        if args.emit_mlir:
            program, _ = native.native_program(module, entry, values)
            with open(args.emit_mlir, "w") as out:
                out.write(program)
        result = native.run_function_native(module, entry, values, tools=tools)
        if args.json:
            output = json.dumps(runner.format_json(result), allow_nan=False) + "\n"
        else:
            output = runner.format_text(result)
        sys.stdout.write(output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
