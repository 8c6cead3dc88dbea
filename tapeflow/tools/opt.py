"""`tapeflow-opt`: xDSL's opt driver with TapeFlow's dialects and passes.

Differences from `xdsl-opt`, each for an mlir-opt user's expectations:
- mlir-opt spellings: `--tapeflow-regions` and `--tapeflow-layers=spm-bytes=4096` mean
  `-p tapeflow-regions,tapeflow-layers{spm-bytes=4096}`, in command-line order, merged
  with any `-p`.
- errors are `error: file:line:col: ...` on stderr with exit code 1, never a traceback;
  pass options are checked before anything runs, in the spelling typed and at the
  `pass-pipeline:1:col` of the mistake (no `true` for an integer, no option twice);
- output is buffered, so a failure writes nothing (no half-written `-o` file);
- the IR is verified on input and after the pipeline (an invalid IR from any pass is
  reported there), between passes only with `--verify-each` (mlir-opt's
  `-verify-each`), to find which pass broke it;
- every op carries its source location, so pass diagnostics can point at the input;
- any file name is read as MLIR, as mlir-opt does.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import io
import sys
import time
from collections.abc import Callable, Sequence
from importlib.metadata import version
from typing import IO, Any, get_type_hints

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline, get_pass_option_infos
from xdsl.printer import Printer
from xdsl.targets.mlir import MLIRTarget
from xdsl.utils.arg_spec import (
    ArgSpec,
    PipelineLexer,
    SpecTokenKind,
    _convert_arg_to_type,  # pyright: ignore[reportPrivateUsage]
    parse_pipeline,
)
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, PassFailedException
from xdsl.utils.hints import type_repr
from xdsl.xdsl_opt_main import xDSLOptMain

from tapeflow import registry
from tapeflow.collector import fewer_collections
from tapeflow.diagnostics import (
    LOCATED,
    LocatedPrinter,
    LocatingParser,
    ToolError,
    decode_source,
    read_source,
    report_errors,
    verify_module,
)
from tapeflow.frontends import c as c_frontend


class _Buffer(io.StringIO):
    """Collects the output; `close()` is a no-op so the text survives `run()`."""

    def close(self) -> None:
        pass


class TapeFlowOptMain(xDSLOptMain):
    version_format = f"tapeflow-opt {version('tapeflow')} built on xdsl version {{xdsl_version}}"

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
        arg_parser.error = _usage_error  # type: ignore[method-assign]
        arg_parser.epilog = _passes_help(self.available_passes)
        arg_parser.add_argument(
            "--verify-upstream",
            action="store_true",
            help="parse and verify the output with upstream MLIR (tapeflow[mlir] or mlir-opt-22)",
        )
        arg_parser.add_argument(
            "--verify-each",
            action="store_true",
            help="verify the IR after each pass, not only the input and the pipeline's result",
        )
        arg_parser.add_argument(
            "--mlir-print-debuginfo",
            dest="print_debuginfo",
            action="store_true",
            help="mlir-opt's spelling of --print-debuginfo: every op's loc(...) (a C "
            "file's lines), which tapeflow-run/-exec errors then name",
        )
        c_frontend.add_c_arguments(arg_parser)
        arg_parser.add_argument(
            "--remarks",
            action="store_true",
            help="print one 'remark: file:line:col: ...' line per tape cache on stderr: "
            "what the pipeline did with it and, where a transform was not applied, why",
        )

    def setup_pipeline(self) -> None:
        self.pass_locations: list[str] = []
        self.pass_specs: list[PassSpec] = []
        self._next_pass = 0
        self._pass_start = time.perf_counter()
        passes = []
        for spec in check_pipeline(self.args.passes, self.available_passes):
            passes.append(spec.build(self.available_passes))
            self.pass_locations.append(spec.location)
            self.pass_specs.append(spec)
        self.pipeline = PassPipeline(tuple(passes), self._between_passes)

    def _between_passes(
        self, previous: ModulePass | None, module: ModuleOp, following: ModulePass | None
    ) -> None:
        """xDSL's callback, with `verify_module` for located verifier errors: on the input
        (passes assume valid IR) and on the pipeline's result (an invalid IR from any pass
        is reported there); between passes only with `--verify-each`, to find which pass
        broke it. Verifying a large module costs as much as a pass."""
        if self.args.time_passes and previous is not None:
            print(f"Pass {previous.name} took {time.perf_counter() - self._pass_start} seconds")
        between = previous is not None and following is not None
        if not self.args.disable_verify and (self.args.verify_each or not between):
            verify_module(module)
        if previous and following and self.args.print_between_passes:
            print(f"IR after {previous.name}:")
            Printer(stream=sys.stdout).print_op(module)
            print("\n\n\n")
        if previous is not None:
            self._next_pass += 1
        self._pass_start = time.perf_counter()

    def apply_passes(self, prog: ModuleOp) -> None:
        self._next_pass = 0
        try:
            super().apply_passes(prog)
        except DiagnosticException as e:
            # A pass that fails on its options names no op: point at it in the pipeline.
            message = str(e)
            if not LOCATED.match(message) and self._next_pass < len(self.pass_locations):
                spec = self.pass_specs[self._next_pass]
                located = spec.option_error(message, self.available_passes)
                where = self.pass_locations[self._next_pass]
                raise PassFailedException(located or f"{where}: {message}") from None
            raise
        if self.args.verify_upstream:
            from tapeflow.upstream import verify_with_upstream

            verify_with_upstream(prog)

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        # Every input is MLIR, whatever its extension, and read as tapeflow-run reads it;
        # except `.c`, which goes through the C frontend.
        if self.args.input_file in (None, "-"):
            return sys.stdin.buffer, "mlir"
        text, _ = read_source(self.args.input_file)
        kind = "c" if self.args.input_file.endswith(".c") else "mlir"
        return io.BytesIO(text.encode()), kind

    def get_input_name(self) -> str:
        return "<stdin>" if self.args.input_file in (None, "-") else self.args.input_file

    def register_all_targets(self) -> None:
        # Only MLIR text: xDSL's other targets (llvm, riscv-asm, csl, wat...) take their
        # own dialects, so on TapeFlow's IR they fail. Native code is `tapeflow-exec`'s.
        self.available_targets = {"mlir": lambda: _LocatedMLIRTarget}

    def register_all_frontends(self) -> None:
        def parse_mlir(stream: IO[bytes]) -> ModuleOp:
            name = self.get_input_name()
            text = decode_source(stream.read(), name)
            parser = LocatingParser(self.ctx, text, name, self._line_offset)
            return parser.parse_module(not self.args.no_implicit_module)

        def parse_c(stream: IO[bytes]) -> ModuleOp:
            from tapeflow.frontends.c import compile_c

            name = self.get_input_name()
            c_frontend.use_c_arguments(self.args)
            return compile_c(decode_source(stream.read(), name), name)

        self.available_frontends["mlir"] = parse_mlir
        self.available_frontends["c"] = parse_c

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0):
        self._line_offset = start_offset
        return super().parse_chunk(chunk, file_extension, start_offset)

    def prepare_output(self) -> IO[str]:
        # Diagnostics modes print errors to stdout between chunks: keep their order.
        if self.args.verify_diagnostics or self.args.parsing_diagnostics:
            return sys.stdout
        return self.buffer


def _usage_error(message: str) -> None:
    """argparse's errors as every other error: one `error:` line, exit status 1."""
    if message.startswith("unrecognized arguments:"):
        typed = message.split(":", 1)[1].split()
        unknown = ", ".join(repr(u) for u in typed)
        known = [f"--{name}" for name in registry.get_all_passes()]
        close = difflib.get_close_matches(typed[0].partition("=")[0], known, n=1, cutoff=0.8)
        hint = f"did you mean '{close[0]}'?" if close else "tapeflow-opt --help lists them"
        message = f"unknown pass or option {unknown} ({hint})"
    elif message.startswith("argument -t/--target: invalid choice"):
        message += "; to run natively (LLVM through upstream MLIR) use tapeflow-exec"
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(1)


# ---------------------------------------------------------------------------------------
# Pass pipelines


@dataclasses.dataclass
class PassSpec:
    """One pass of a `-p` pipeline, with where each of its parts was typed."""

    name: str
    location: str
    options: dict[str, tuple[Any, ...]] = dataclasses.field(default_factory=dict)
    """Option name as typed -> values as xDSL parsed them."""
    texts: dict[str, str] = dataclasses.field(default_factory=dict[str, str])
    """Option name as typed -> value as typed."""
    locations: dict[str, str] = dataclasses.field(default_factory=dict[str, str])

    def build(self, available: dict[str, Callable[[], type[ModulePass]]]) -> ModulePass:
        """The pass, each option checked against its field, errors in the user's words."""
        cls = available[self.name]()
        hints = get_type_hints(cls)
        fields = {f.name.replace("_", "-"): f.name for f in _fields(cls)}
        for typed, values in self.options.items():
            where = self.locations[typed]
            if typed.replace("_", "-") not in fields:
                known = ", ".join(fields) or "none"
                raise ToolError(f"{where}: {self.name} has no option '{typed}' (options: {known})")
            expected = hints[fields[typed.replace("_", "-")]]
            wrong = (
                f"{where}: option '{typed}' of {self.name} expects {type_repr(expected)}, "
                f"got '{self.texts[typed]}'"
            )
            if any(isinstance(v, bool) for v in values) and "bool" not in type_repr(expected):
                raise ToolError(wrong)  # xDSL takes `true` for an int: bool is an int
            try:
                _convert_arg_to_type(values, expected)
            except ValueError:
                raise ToolError(wrong) from None
        spec = ArgSpec(self.name, {k.replace("-", "_"): v for k, v in self.options.items()})
        try:
            return cls.from_pass_spec(spec)
        except ValueError as e:  # a required option missing
            raise ToolError(f"{self.location}: {self.name}: {e}") from None


    def option_error(self, message: str, available: Sequence[str]) -> str | None:
        """A pass's complaint about an option's value (the value, quoted, is in the
        message), at that option as typed; None when the message names no typed value.
        A pipeline pass that hands its options on says which pass complained: that
        prefix goes, the option typed here is named instead."""
        for typed, text in self.texts.items():
            if text and f"'{text}'" in message:
                head, sep, detail = message.partition(": ")
                if sep and head in available:
                    message = detail
                message = message.removeprefix(f"{typed}: ")
                return f"{self.locations[typed]}: option '{typed}' of {self.name}: {message}"
        return None


def _fields(cls: type[ModulePass]) -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(cls) if f.init and f.name != "name"]


def quote_colon_values(text: str) -> tuple[str, list[int]]:
    """`text` with every bare option value that holds a `:` or `=` quoted
    (`{checkpoint=binomial:8}`, `{set=l2.size=65536}` are mlir-opt's spelling; xDSL's
    pipeline lexer takes them only inside quotes), and the positions in `text` before
    which a quote was inserted (to report columns as typed)."""
    out: list[str] = []
    inserted: list[int] = []
    depth, i = 0, 0
    while i < len(text):
        ch = text[i]
        if ch == '"':  # a quoted value: copied as it is
            end = text.find('"', i + 1)
            end = len(text) - 1 if end < 0 else end
            out.append(text[i : end + 1])
            i = end + 1
            continue
        out.append(ch)
        i += 1
        depth += (ch == "{") - (ch == "}")
        if depth == 1 and ch == "=":
            end = i
            while end < len(text) and text[end] not in ' }"':
                end += 1
            elements = []
            for element in text[i:end].split(","):  # a tuple value: each element alone
                bare = ":" not in element and "=" not in element
                if not bare:
                    inserted += [i, i + len(element)]
                elements.append(element if bare else f'"{element}"')
                i += len(element) + 1
            out.append(",".join(elements))
            i = end
    return "".join(out), inserted


def check_pipeline(
    text: str, available: dict[str, Callable[[], type[ModulePass]]]
) -> list[PassSpec]:
    """The passes of `text` (xDSL's pipeline syntax; a bare option value may hold a `:`,
    as in mlir-opt), each located as `pass-pipeline:1:col`; a ToolError for a syntax error,
    an unknown pass or an option given twice (xDSL silently keeps the last)."""
    typed_text = text
    text, inserted = quote_colon_values(text)

    def column(pos: int) -> int:
        """The column in the text as typed of position `pos` of the quoted text."""
        for k, at in enumerate(inserted):
            if at + k >= pos:
                return pos - k + 1
        return pos - len(inserted) + 1

    try:
        parsed = list(parse_pipeline(text))
    except ArgSpecParseError as e:
        # xDSL's message: a header, `pass-pipeline:1:col`, the source line, a caret, the message.
        lines = str(e).splitlines()
        col = int(lines[1].rsplit(":", 1)[1]) - 1
        raise ToolError(
            f"pass-pipeline:1:{column(col)}: {lines[-1].strip()} (in '{typed_text}')"
        ) from None
    specs: list[PassSpec] = []
    depth, in_value, key = 0, False, ""
    lexer = PipelineLexer(text)
    while True:
        token = lexer.lex()
        where = f"pass-pipeline:1:{column(token.span.start)}"
        kind, typed = token.kind, token.span.text
        if kind is SpecTokenKind.L_BRACE:
            depth, in_value = 1, False
        elif kind is SpecTokenKind.R_BRACE:
            depth = 0
        elif kind is SpecTokenKind.EQUALS:
            in_value = True
        elif kind is SpecTokenKind.SPACE:
            in_value = False
        elif depth == 0 and kind is SpecTokenKind.IDENT:
            specs.append(PassSpec(typed, where))
        elif depth == 1 and not in_value and kind is SpecTokenKind.IDENT:
            key, spec = typed, specs[-1]
            if typed.replace("_", "-") in {k.replace("_", "-") for k in spec.locations}:
                raise ToolError(f"{where}: option '{typed}' of {spec.name} given twice")
            spec.locations[key], spec.texts[key] = where, ""
        elif depth == 1 and in_value and kind is SpecTokenKind.STRING_LIT:
            specs[-1].texts[key] += typed[1:-1]  # the value, as the pass quotes it back
        elif depth == 1 and in_value and kind is not SpecTokenKind.EOF:
            specs[-1].texts[key] += typed
        if kind is SpecTokenKind.EOF:
            break
    for spec, arg_spec in zip(specs, parsed, strict=True):
        if spec.name not in available:
            close = difflib.get_close_matches(spec.name, list(available), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ToolError(f"{spec.location}: unknown pass '{spec.name}'{hint}")
        spec.options = dict(arg_spec.parameters)
    return specs


@dataclasses.dataclass(frozen=True)
class _LocatedMLIRTarget(MLIRTarget):
    """xDSL's MLIR output with `LocatedPrinter`, so `--print-debuginfo` output reads back."""

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        if self.syntax_highlight:
            return super().emit(ctx, module, output)
        printer = LocatedPrinter(
            stream=output,
            print_generic_format=self.print_generic_format,
            print_properties_as_attributes=self.print_properties_as_attributes,
            print_debuginfo=self.print_debuginfo,
        )
        printer.print_op(module)
        printer.print_metadata(ctx.loaded_dialects)
        print("\n", file=output)


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
    with report_errors(), fewer_collections():
        opt = TapeFlowOptMain(args=argv)
        from tapeflow.transforms.analysis.remarks import collect_remarks

        with collect_remarks() as remarks:
            opt.run()
        if opt.args.remarks:
            for line in remarks:
                print(line, file=sys.stderr)
        text = opt.buffer.getvalue()
        if opt.args.output_file:
            with open(opt.args.output_file, "w") as out:
                out.write(text)
        else:
            sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
