"""The malformed-input corpus: every case through every tool, in process.

For each case and each of tapeflow-opt, tapeflow-run and tapeflow-sim the tool must exit
1 with exactly one `error:` line, located (`file:line:col`) when the mistake is in the
input, no traceback and no "internal error", no hang (an alarm per call) and, for
tapeflow-opt, no `-o` file. Cases come from:
- test/corpus/cases.mlir (stored, one chunk per case, each saying why it is there),
- the invalid chunks of test/dialects/*/verify.mlir (our dialects' ops misused),
- truncations and byte flips of the bundled small kernels, deep nesting, huge numbers,
- bad options (pass pipelines, --args, --inputs .npz/.npy, --zero, --entry, --set) on a
  valid kernel.
The counts (cases, tools, errors with locations) are printed in pytest's terminal summary.
"""

from __future__ import annotations

import contextlib
import io
import random
import re
import signal
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from tapeflow.tools import opt, run, sim
from helpers.paths import ROOT

KERNELS = sorted((ROOT / "benchmarks" / "kernels" / "small").glob("*.mlir"))
TOOLS = {"tapeflow-opt": opt.main, "tapeflow-run": run.main, "tapeflow-sim": sim.main}
TIMEOUT_S = 20
LOCATED = re.compile(r"^error: \S+:\d+:\d+: ")

VALID = """\
func.func @f(%m: memref<4xf64>, %x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<4xf64>
  %y = arith.mulf %v, %x : f64
  func.return %y : f64
}
"""


@dataclass
class Case:
    name: str
    source: bytes
    located: bool = True
    """The mistake is in the input, so the message must say where."""
    argv: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    """Extra arguments per tool; a tool not listed runs with `default_argv`."""
    tools: tuple[str, ...] = tuple(TOOLS)
    files: dict[str, bytes] = field(default_factory=dict[str, bytes])
    """Other files the arguments name (written next to the input)."""


def default_argv(tool: str) -> list[str]:
    return ["-p", "tapeflow"] if tool == "tapeflow-opt" else ["--args", "0.5"]


def _chunks(path: Path) -> list[str]:
    return [c for c in path.read_text().split("// -----") if re.search(r"^[^/\s]", c, re.M)]


def stored_cases() -> list[Case]:
    cases = [
        Case(f"cases.mlir#{i}", chunk.encode())
        for i, chunk in enumerate(_chunks(ROOT / "test" / "corpus" / "cases.mlir"))
    ]
    for path in sorted((ROOT / "test" / "dialects").glob("*/verify.mlir")):
        for i, chunk in enumerate(_chunks(path)):
            cases.append(Case(f"{path.parent.name}/verify.mlir#{i}", chunk.encode()))
    unparsable = ROOT / "test" / "tapeflow-opt" / "Inputs" / "unparsable.mlir"
    cases.append(Case("unparsable.mlir", unparsable.read_bytes()))
    return cases


def generated_cases() -> list[Case]:
    rng = random.Random(11)
    cases: list[Case] = []
    for path in KERNELS:
        data = path.read_bytes()
        body = [m.start() for m in re.finditer(rb"[^\s]", data)]
        for k in range(1, 4):  # truncations (never after the closing brace)
            cut = len(data) * k // 4
            cases.append(Case(f"{path.name}[:{cut}]", data[:cut]))
        for pos in rng.sample(body, 2):  # an invalid UTF-8 byte
            cases.append(Case(f"{path.name}@{pos}=0xff", data[:pos] + b"\xff" + data[pos + 1 :]))
        code = [p for p in body if not _in_comment(data, p)]
        for pos in rng.sample(code, 2):  # a character MLIR never has outside strings
            cases.append(Case(f"{path.name}@{pos}=`", data[:pos] + b"`" + data[pos + 1 :]))
    depth = 400
    nested = "func.func @f(%c: i1) {\n" + "scf.if %c {\n" * depth + "}\n" * depth + "}\n"
    cases.append(Case(f"scf.if nested {depth} deep", nested.encode()))
    deep_type = "memref<1x" * depth + "f64" + ">" * depth
    cases.append(Case("type nested 400 deep", f"func.func @f(%a: {deep_type}) {{\n}}\n".encode()))
    digits = "9" * 5000
    cases.append(
        Case(
            "5000-digit integer",
            f"func.func @f() -> i64 {{\n  %x = arith.constant {digits} : i64\n"
            "  func.return %x : i64\n}\n".encode(),
        )
    )
    big = "func.func @f(%m: memref<100000000000xf64>) {\n  func.return\n}\n"
    cases.append(
        Case("memref of 800 GB", big.encode(), argv={"tapeflow-run": [], "tapeflow-sim": []},
             tools=("tapeflow-run", "tapeflow-sim"))  # fmt: skip
    )
    cases.append(Case("unterminated string", b'"' + b"a" * 40 + b"\n"))
    return cases


def _in_comment(data: bytes, pos: int) -> bool:
    line_start = data.rfind(b"\n", 0, pos) + 1
    return b"//" in data[line_start:pos]


def option_cases() -> list[Case]:
    valid = VALID.encode()
    opt_pipelines = [
        "no-such-pass",
        "tapeflow{spm-bytes=true}",
        "tapeflow{spm-bytes=4096 spm-bytes=8192}",
        "tapeflow-layers{bogus=1}",
        "tapeflow-layers{spm-bytes=abc}",
        "tapeflow-layers{spm-bytes=0}",
        "tapeflow-layers{",
        "tapeflow-autodiff{policy=fast}",
        "tapeflow-stream{depth=0}",
        "tapeflow,,cse",
    ]
    cases = [
        Case(f"-p '{p}'", valid, argv={"tapeflow-opt": ["-p", p]}, tools=("tapeflow-opt",))
        for p in opt_pipelines
    ]
    cases.append(
        Case("--no-such-option", valid, located=False, argv={"tapeflow-opt": ["--no-such"]},
             tools=("tapeflow-opt",))  # fmt: skip
    )
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as z:
        z.writestr("arg0.npy", b"not an array")
    files = {
        "corrupt.npz": b"PK\x03\x04 this is no zip file",
        "bad-member.npz": zipped.getvalue(),
        "complex.npz": _npz(arg0=np.ones(4) * 1j),
        "shape.npz": _npz(arg0=np.ones(5)),
        "unknown.npz": _npz(nosuch=np.ones(4)),
        "scalar-complex.npz": _npz(arg1=np.array(1j)),
        "text.npy": b"hello",
    }
    bad_runs = [
        ["--args"],
        ["--args", "0.5", "0.5"],
        ["--args", "abc"],
        ["--args", "0.5", "--inputs", "corrupt.npz"],
        ["--args", "0.5", "--inputs", "bad-member.npz"],
        ["--args", "0.5", "--inputs", "complex.npz"],
        ["--args", "0.5", "--inputs", "shape.npz"],
        ["--args", "0.5", "--inputs", "unknown.npz"],
        ["--inputs", "scalar-complex.npz"],
        ["--args", "0.5", "--inputs", "0=text.npy"],
        ["--args", "0.5", "--inputs", "missing.npz"],
        ["--args", "0.5", "--zero", "x"],
        ["--args", "0.5", "--zero", "1"],
        ["--args", "0.5", "--entry", "nosuch"],
        ["--args", "0.5", "--seed", "x"],
    ]
    for argv in bad_runs:
        cases.append(
            Case(" ".join(argv), valid, located=False, files=files,
                 argv={"tapeflow-run": argv, "tapeflow-sim": argv},
                 tools=("tapeflow-run", "tapeflow-sim"))  # fmt: skip
        )
    for setting in ["nosuch.key=1", "l2.size=abc", "l2.size"]:
        cases.append(
            Case(f"--set {setting}", valid, located=False,
                 argv={"tapeflow-sim": ["--args", "0.5", "--set", setting]},
                 tools=("tapeflow-sim",))  # fmt: skip
        )
    return cases


def _npz(**arrays: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


def _in_folder(arg: str, folder: Path) -> str:
    """`arg` with a data file name (`x.npz`, `P=x.npy`) made a path in `folder`."""
    key, sep, name = arg.rpartition("=")
    return f"{key}{sep}{folder / name}" if name.endswith((".npz", ".npy")) else arg


class _Hang(BaseException):
    """Raised by the alarm; a BaseException so no `except Exception` in the tools hides it."""


def _call(tool: str, argv: list[str]) -> tuple[int, str]:
    """(exit status, stderr) of `tool argv`, run in this process under an alarm."""

    def alarm(signum, frame):
        raise _Hang

    err, out = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(TIMEOUT_S)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                code = TOOLS[tool](argv)
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 1
    except _Hang:
        return -1, f"hang: no answer in {TIMEOUT_S} s"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return code, err.getvalue()


CASES = stored_cases() + generated_cases() + option_cases()


def test_corpus(tmp_path, request):
    failures: list[str] = []
    calls = located = 0
    for n, case in enumerate(CASES):
        folder = tmp_path / str(n)
        folder.mkdir()
        source = folder / "input.mlir"
        source.write_bytes(case.source)
        for name, data in case.files.items():
            (folder / name).write_bytes(data)
        for tool in case.tools:
            argv = [_in_folder(a, folder) for a in case.argv.get(tool, default_argv(tool))]
            out = folder / f"{tool}.out"
            extra = ["-o", str(out)] if tool == "tapeflow-opt" else []
            code, err = _call(tool, [str(source), *argv, *extra])
            calls += 1
            errors = [line for line in err.splitlines() if line.startswith("error:")]
            problem = None
            if code != 1:
                problem = f"exit status {code}"
            elif len(errors) != 1:
                problem = f"{len(errors)} error lines"
            elif "Traceback" in err or "internal error" in err:
                problem = "a traceback or an internal error"
            elif case.located and not LOCATED.match(errors[0]):
                problem = "no file:line:col"
            elif out.exists():
                problem = "a partial -o file"
            if errors and LOCATED.match(errors[0]):
                located += 1
            if problem:
                failures.append(f"{case.name} | {tool}: {problem}: {err.strip()[:300]!r}")
    summary = (
        f"malformed-input corpus: {len(CASES)} cases, {calls} tool runs over "
        f"{len(TOOLS)} tools, {located} errors with file:line:col, {len(failures)} failures"
    )
    _print_in_summary(request, summary)
    assert not failures, summary + "\n" + "\n".join(failures)


def _print_in_summary(request: pytest.FixtureRequest, line: str) -> None:
    """Adds `line` to pytest's terminal summary (shown with or without -s)."""

    class _Summary:
        def pytest_terminal_summary(self, terminalreporter) -> None:
            terminalreporter.write_line(line)

    request.config.pluginmanager.register(_Summary(), "tapeflow-corpus-summary")
