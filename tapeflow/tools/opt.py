"""`tapeflow-opt`: xDSL's opt driver with TapeFlow's dialects and passes.

Differences from `xdsl-opt`, each for an mlir-opt user's expectations:
- mlir-opt spellings: `--tapeflow-regions` and `--tapeflow-layers=spm-bytes=4096` mean
  `-p tapeflow-regions,tapeflow-layers{spm-bytes=4096}`, in command-line order, merged
  with any `-p`.
- errors are `error: file:line:col: ...` on stderr with exit code 1, never a traceback;
- output is buffered, so a failure writes nothing (no half-written `-o` file);
- every op carries its source location, so pass diagnostics can point at the input.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Callable, Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, get_pass_option_infos
from xdsl.xdsl_opt_main import xDSLOptMain

from tapeflow import registry
from tapeflow.diagnostics import LocatingParser, report_errors


class _Buffer(io.StringIO):
    """Collects the output; `close()` is a no-op so the text survives `run()`."""

    def close(self) -> None:
        pass


class TapeFlowOptMain(xDSLOptMain):
    version_format = "tapeflow-opt built on xdsl version {xdsl_version}"

    def __init__(self, args: Sequence[str] | None = None):
        self._line_offset = 0
        self.buffer = _Buffer()
        super().__init__(description=_description(), args=args)

    def register_all_dialects(self) -> None:
        for name, factory in registry.get_all_dialects().items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        for name, factory in registry.get_all_passes().items():
            self.register_pass(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        arg_parser.epilog = _passes_help(self.available_passes)
        arg_parser.add_argument(
            "--verify-upstream",
            action="store_true",
            help="parse and verify the output with upstream MLIR (tapeflow[mlir] or mlir-opt-22)",
        )

    def apply_passes(self, prog: ModuleOp) -> None:
        super().apply_passes(prog)
        if self.args.verify_upstream:
            from tapeflow.upstream import verify_with_upstream

            verify_with_upstream(prog)

    def register_all_frontends(self) -> None:
        def parse_mlir(stream: IO[bytes]) -> ModuleOp:
            text = stream.read().decode()
            parser = LocatingParser(self.ctx, text, self.get_input_name(), self._line_offset)
            return parser.parse_module(not self.args.no_implicit_module)

        self.available_frontends["mlir"] = parse_mlir

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0):
        self._line_offset = start_offset
        return super().parse_chunk(chunk, file_extension, start_offset)

    def prepare_output(self) -> IO[str]:
        # Diagnostics modes print errors to stdout between chunks: keep their order.
        if self.args.verify_diagnostics or self.args.parsing_diagnostics:
            return sys.stdout
        return self.buffer


def _description() -> str:
    return (
        "TapeFlow's modular optimizer: parses MLIR, runs a pass pipeline and prints the "
        "result. Passes are given as -p 'a{opt=v},b' or, as in mlir-opt, --a=opt=v --b."
    )


# One-line descriptions for xDSL's passes whose classes have no docstring.
_UPSTREAM_DOCS = {
    "cse": "Eliminates common subexpressions.",
    "dce": "Removes dead operations.",
    "lower-affine": "Lowers affine loops and accesses to scf, arith and memref.",
}


def _passes_help(passes: dict[str, Callable[[], type[ModulePass]]]) -> str:
    """The `--help` epilog: every pass with its first docstring line and its options."""
    lines = ["passes (use with -p 'NAME{opt=v ...}' or --NAME[=opt=v ...]):"]
    for name in sorted(passes):
        cls = passes[name]()
        doc = (cls.__doc__ or "").strip().splitlines()
        lines.append(f"  {name:26} {doc[0] if doc else _UPSTREAM_DOCS.get(name, '')}")
        for info in get_pass_option_infos(cls):
            option = info.name.replace("_", "-")
            kind = info.expected_type.strip("'")
            lines.append(f"  {'':26}   {option}={info.default_value}  ({kind})")
    return "\n".join(lines)


def mlir_opt_spellings(argv: Sequence[str], pass_names: Sequence[str]) -> list[str]:
    """Rewrites `--name` / `--name=opts` for known passes into one `-p` pipeline.

    The pipeline keeps command-line order; an explicit `-p`/`--passes` joins it at its
    position. `--name=a=1 b=2` style options become `name{a=1 b=2}`.
    """
    pipeline: list[str] = []
    rest: list[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-p", "--passes") and i + 1 < len(args):
            if args[i + 1]:
                pipeline.append(args[i + 1])
            i += 2
            continue
        if arg.startswith("--passes="):
            pipeline.append(arg.split("=", 1)[1])
            i += 1
            continue
        if arg.startswith("--"):
            name, _, opts = arg[2:].partition("=")
            if name in pass_names:
                pipeline.append(f"{name}{{{opts}}}" if opts else name)
                i += 1
                continue
        rest.append(arg)
        i += 1
    if pipeline:
        rest += ["-p", ",".join(pipeline)]
    return rest


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    argv = mlir_opt_spellings(argv, list(registry.get_all_passes()))
    with report_errors():
        opt = TapeFlowOptMain(args=argv)
        opt.run()
        text = opt.buffer.getvalue()
        if opt.args.output_file:
            with open(opt.args.output_file, "w") as out:
                out.write(text)
        else:
            sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
