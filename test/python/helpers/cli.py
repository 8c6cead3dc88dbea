"""A tool's `main(argv)` run in the test's process, seen as a user sees it: its exit
status, stdout and stderr. A tool process costs about a second of imports; the tests
about the entry points themselves (the console scripts, `python -m`) keep a process."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from collections.abc import Callable, Sequence
from unittest import mock


def run_main(
    main: Callable[[list[str]], int | None], argv: Sequence[str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`main(argv)` with stdin `stdin` (empty when None), as `subprocess.run(...,
    capture_output=True, text=True)` would return it. An exception that escapes `main` is
    raised here (a process would print its traceback and exit 1)."""
    out, err = io.StringIO(), io.StringIO()
    given = io.TextIOWrapper(io.BytesIO((stdin or "").encode()), encoding="utf-8")
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        mock.patch.object(sys, "stdin", given),
    ):
        try:
            code = main(list(argv))
        except SystemExit as e:  # as the interpreter exits with it
            if isinstance(e.code, str):
                print(e.code, file=sys.stderr)
            code = e.code if isinstance(e.code, int) else (e.code is not None)
    return subprocess.CompletedProcess(list(argv), int(code or 0), out.getvalue(), err.getvalue())
