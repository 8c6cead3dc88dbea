"""`tapeflow-cc`: a C file (the subset of `tapeflow.frontends.c`) as upstream MLIR.

    tapeflow-cc kernel.c -o kernel.mlir
    tapeflow-cc kernel.c --function f -DN=64 | tapeflow-opt --tapeflow
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from tapeflow.diagnostics import LocatedPrinter, ToolError, read_source, report_errors


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tapeflow-cc",
        description=(
            "Translates a C file into upstream MLIR (func, scf, memref, arith, math) with C "
            "locations. Functions named by __enzyme_autodiff calls or --function get "
            "tapeflow.autodiff; only they and their callees are translated (every function "
            "when there is none). Pointer parameters are memref<?xT>, array parameters "
            "(double a[N][M]) take their declared shape, integer scalars are index."
        ),
    )
    p.add_argument("input", help="C source file ('-' for stdin)")
    p.add_argument("-o", "--output", metavar="FILE", help="output file (default stdout)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=V]",
                   help="preprocessor definition (repeatable)")
    p.add_argument("-I", dest="includes", action="append", default=[], metavar="DIR",
                   help="include directory (repeatable)")
    p.add_argument("--std", default=None, metavar="STD", help="C standard (default gnu11)")
    p.add_argument("-O0", dest="optimize", action="store_false",
                   help="the translation as is: no clean-up (cse, canonicalize, scalar "
                   "promotion) and unroll pragmas left as tapeflow.unroll attributes")
    p.add_argument("--function", action="append", default=[], metavar="NAME",
                   help="differentiate NAME (as if it had an __enzyme_autodiff call)")
    return p


def clang_args(defines: Sequence[str], includes: Sequence[str], std: str | None) -> list[str]:
    return [
        *(f"-D{d}" for d in defines),
        *(f"-I{i}" for i in includes),
        *([f"-std={std}"] if std else []),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    with report_errors():
        from tapeflow.frontends.c import compile_c

        text, name = read_source(args.input)
        module = compile_c(
            text, name, clang_args(args.defines, args.includes, args.std), args.function,
            optimize=args.optimize,
        )
        import io

        out = io.StringIO()
        LocatedPrinter(stream=out, print_debuginfo=True).print_op(module)
        out.write("\n")
        if args.output:
            try:
                with open(args.output, "w") as f:
                    f.write(out.getvalue())
            except OSError as e:
                raise ToolError(f"{args.output}: {e.strerror}") from None
        else:
            sys.stdout.write(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
