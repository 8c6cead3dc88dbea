"""How many C files of a directory `tapeflow-cc` accepts, and why it refuses the others.

    python benchmarks/enzyme_corpus.py DIR [-I INCLUDE_DIR ...] [--list] [--check]

Runs the `tapeflow-cc` CLI (a subprocess, as a user would) on every `*.c` under DIR and
prints a Markdown table: accepted, refused with one located `unsupported C:` line,
refused with a Clang error (one located line too), and anything else (a traceback, several
lines, another exit code: a bug). Then a histogram of the first refusals, their text
without the location and with quoted names replaced by `'…'` so that the same refusal
of different names counts once. `--list` adds each file's outcome.

Made for Enzyme's own C integration tests (enzyme/test/Integration/ReverseMode/*.c); the
files are not in this repository. They include `"../test_utils.h"`: keep Enzyme's layout
(Integration/test_utils.h beside ReverseMode/) and pass `-I Integration` for the files that
include it by its bare name.

`--check` then checks each accepted file's gradient with `tapeflow-check` (every
function the file differentiates: one returning one float element by element against
central finite differences, any other by the adjoint dot-product test) and prints a
second table: correct, wrong (the first disagreeing element, or the dot products),
unchecked (tapeflow-check cannot run it: one located line saying why) and broken. The
project cannot run a file's own `main` (translating it is out of the C subset), so its
APPROX_EQ checks do not decide; the arguments are generic instead:
dynamic arrays of CHECK_SIZE elements drawn from [0.5, 1.5), integer scalars
CHECK_COUNT (smaller, so that a count argument stays in bounds), float scalars 0.75;
a function with f32 values is checked with step 1e-3 and tolerance F32_TOLERANCE.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

_LOCATED = re.compile(r"^error: (?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*)$")
_QUOTED = re.compile(r"'[^']*'|`[^`]*`|\"[^\"]*\"")
_CHAIN = re.compile(r"\((\w+ -> )+\w+\)")
_ELEMENT = re.compile(r"^(?P<what>\S+): AD (?P<ad>\S+)  FD (?P<fd>\S+)  error (?P<err>\S+)$")
CHECK_SIZE = 8
CHECK_COUNT = 4
TOLERANCE = 1e-5
"""tapeflow-check's default tolerance."""
F32_TOLERANCE = 1e-3
"""For a function with f32 values: central differences in single precision with
tapeflow-check's 1e-6 step measure rounding, not the derivative; step 1e-3 instead."""


def classify(path: Path, includes: list[str], output: str = "/dev/null") -> tuple[str, str]:
    """(outcome, message) of `tapeflow-cc path -o output`: outcome is accepted,
    unsupported, error (another located error) or broken."""
    cmd = [sys.executable, "-m", "tapeflow.tools.cc", str(path), "-o", output]
    for inc in includes:
        cmd += ["-I", inc]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip() and not ln.startswith("remark:")]
    if p.returncode == 0:
        return "accepted", ""
    m = _LOCATED.match(lines[0]) if lines else None
    if p.returncode != 1 or len(lines) != 1 or m is None or "Traceback" in p.stderr:
        return "broken", (lines[-1] if lines else f"exit {p.returncode}")[:160]
    msg = m.group("msg")
    if msg.startswith("unsupported C: "):
        return "unsupported", msg[len("unsupported C: "):]
    return "error", msg


def check_arguments(func_op: Any, workdir: Path) -> list[str]:
    """tapeflow-check's `--args`/`--inputs` for `func_op`: the generic values of the
    module docstring (static arrays keep tapeflow-check's own fill rule)."""
    from xdsl.dialects.builtin import MemRefType

    entry = func_op.sym_name.data
    rng = np.random.default_rng(0)
    scalars, inputs = [], []
    for p, t in enumerate(func_op.function_type.inputs.data):
        if isinstance(t, MemRefType) and any(d < 0 for d in t.get_shape()):
            shape = [CHECK_SIZE if d < 0 else d for d in t.get_shape()]
            dtype = {"f64": np.float64, "f32": np.float32}.get(str(t.element_type), np.int64)
            path = workdir / f"{entry}_{p}.npy"
            np.save(path, rng.uniform(0.5, 1.5, shape).astype(dtype))
            inputs += ["--inputs", f"{p}={path}"]
        elif not isinstance(t, MemRefType):
            scalars.append("0.75" if str(t).startswith(("f", "bf")) else str(CHECK_COUNT))
    return [*(["--args", *scalars] if scalars else []), *inputs]


def check(mlir: Path, workdir: Path) -> tuple[str, str]:
    """(verdict, message) of tapeflow-check on every function `mlir` differentiates:
    correct, wrong (the first disagreeing element), unchecked or broken."""
    from tapeflow import runner
    from tapeflow.eval.kernels import marked_functions

    try:
        module = runner.load_module(mlir.read_text(), str(mlir))
    except Exception as e:  # noqa: BLE001 - a module tapeflow-cc wrote must load
        return "broken", f"{type(e).__name__}: {e}"[:160]
    entries = marked_functions(module)
    if not entries:
        return "unchecked", "no function is differentiated"
    for entry in entries:
        func_op = runner.find_function(module, entry)
        single = "f32" in str(func_op.function_type)
        cmd = [sys.executable, "-m", "tapeflow.tools.check", str(mlir), "--entry", entry,
               *check_arguments(func_op, workdir),
               *(["--step", "1e-3", "--tolerance", str(F32_TOLERANCE)] if single else [])]
        p = subprocess.run(cmd, capture_output=True, text=True, check=False)
        errors = [ln for ln in p.stderr.splitlines() if ln.strip()
                  and not ln.startswith("remark:")]  # fmt: skip
        if p.returncode == 0:
            continue
        lines = p.stdout.splitlines()
        if p.returncode == 1 and lines and lines[-1].startswith("FAILED"):
            first = next((ln for ln in lines if (m := _ELEMENT.match(ln))
                          and not float(m.group("err")) <= (F32_TOLERANCE if single
                                                            else TOLERANCE)), lines[-1])
            return "wrong", f"@{entry} {first}"
        if p.returncode == 1 and len(errors) == 1 and "Traceback" not in p.stderr:
            return "unchecked", f"@{entry}: {errors[0]}"
        return "broken", f"@{entry}: {(errors[-1] if errors else f'exit {p.returncode}')[:160]}"
    return "correct", ""


def normalise(msg: str) -> str:
    return _CHAIN.sub("(…)", _QUOTED.sub("'…'", msg))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("directory", type=Path)
    p.add_argument("-I", dest="includes", action="append", default=[],
                   help="include directory passed to tapeflow-cc (repeatable)")
    p.add_argument("--list", action="store_true", help="print each file's outcome")
    p.add_argument("--check", action="store_true",
                   help="check each accepted file's gradient against finite differences")
    args = p.parse_args(argv)
    files = sorted(args.directory.glob("*.c"))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        results = {f.name: classify(f, args.includes, str(work / f"{f.stem}.mlir"))
                   for f in files}  # fmt: skip
        verdicts = {name: check(work / f"{Path(name).stem}.mlir", work)
                    for name, (outcome, _) in results.items()
                    if args.check and outcome == "accepted"}  # fmt: skip
    counts = collections.Counter(outcome for outcome, _ in results.values())
    n = len(files)
    print(f"| outcome | files (of {n}) |")
    print("|---|---:|")
    for outcome, what in (("accepted", "accepted"),
                          ("unsupported", "refused: one located `unsupported C:` line"),
                          ("error", "refused: one located error line of another kind"),
                          ("broken", "anything else (traceback, several lines)")):
        print(f"| {what} | {counts[outcome]} |")
    hist = collections.Counter(
        (outcome, normalise(msg)) for outcome, msg in results.values() if outcome != "accepted"
    )
    print()
    print("| first refusal | files |")
    print("|---|---:|")
    for (outcome, msg), k in sorted(hist.items(), key=lambda kv: (-kv[1], kv[0])):
        label = msg if outcome == "unsupported" else f"({outcome}) {msg}"
        print(f"| {label.replace('|', '/')} | {k} |")
    if args.list:
        print()
        for name, (outcome, msg) in results.items():
            print(f"{name}: {outcome}{': ' + msg if msg else ''}")
    if args.check:
        print_verdicts(verdicts)
    return 0


def print_verdicts(verdicts: dict[str, tuple[str, str]]) -> None:
    """The `--check` table, then every verdict but correct with its file."""
    counts = collections.Counter(verdict for verdict, _ in verdicts.values())
    print()
    print(f"| gradient (finite differences) | files (of {len(verdicts)} accepted) |")
    print("|---|---:|")
    for verdict in ("correct", "wrong", "unchecked", "broken"):
        print(f"| {verdict} | {counts[verdict]} |")
    print()
    for name, (verdict, msg) in verdicts.items():
        if verdict != "correct":
            print(f"{name}: {verdict}: {msg}")


if __name__ == "__main__":
    sys.exit(main())
