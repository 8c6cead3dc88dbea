"""How many C files of a directory `tapeflow-cc` accepts, and why it refuses the others.

    python benchmarks/enzyme_corpus.py DIR [-I INCLUDE_DIR ...] [--list]

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
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
from pathlib import Path

_LOCATED = re.compile(r"^error: (?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*)$")
_QUOTED = re.compile(r"'[^']*'|`[^`]*`|\"[^\"]*\"")
_CHAIN = re.compile(r"\((\w+ -> )+\w+\)")


def classify(path: Path, includes: list[str]) -> tuple[str, str]:
    """(outcome, message) of `tapeflow-cc path`: outcome is accepted, unsupported,
    error (another located error) or broken."""
    cmd = [sys.executable, "-m", "tapeflow.tools.cc", str(path), "-o", "/dev/null"]
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


def normalise(msg: str) -> str:
    return _CHAIN.sub("(…)", _QUOTED.sub("'…'", msg))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("directory", type=Path)
    p.add_argument("-I", dest="includes", action="append", default=[],
                   help="include directory passed to tapeflow-cc (repeatable)")
    p.add_argument("--list", action="store_true", help="print each file's outcome")
    args = p.parse_args(argv)
    files = sorted(args.directory.glob("*.c"))
    results = {f.name: classify(f, args.includes) for f in files}
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
