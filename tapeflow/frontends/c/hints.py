"""Loop hints: the unroll pragmas over a loop, as the `tapeflow.unroll` attribute of its
`scf.for` (applied by `tapeflow-unroll`).

libclang shows a loop under a loop-hint pragma as an unexposed statement (Clang's
AttributedStmt) with the loop as its one child, and does not expose the hint attribute
itself. The statement's extent starts at the pragma, so the hint is read from its tokens
before the loop: every `#pragma ...` or `_Pragma("...")` there. Forms (Clang's):
`#pragma unroll N`, `#pragma unroll(N)`, `#pragma unroll` (full), `#pragma GCC unroll N`,
`#pragma nounroll`, `#pragma clang loop unroll_count(N)`, `unroll(full)`,
`unroll(disable)`; `unroll(enable)` (Clang's heuristics) and the other `clang loop`
options are no request. A count that is not a literal (`unroll_count(UNROLL_COUNT)`) is
evaluated by Clang itself, with the file's macros (`CFrontend.constant`).
"""

from __future__ import annotations

import re

from xdsl.dialects.builtin import IntegerAttr, StringAttr, i64

from tapeflow.transforms.unroll import UNROLL_ATTR

__all__ = ["UNROLL_ATTR", "unroll_hint"]

_OPTION = re.compile(r"(\w+)\s*\(\s*([^()]*?)\s*\)")


def pragma_texts(stmt, loop) -> list[str]:
    """The texts of the pragmas between `stmt`'s start and `loop`'s (without `#pragma`)."""
    start = loop.extent.start.offset
    tokens = [t.spelling for t in stmt.get_tokens() if t.extent.start.offset < start]
    texts: list[list[str]] = []
    i = 0
    while i < len(tokens):
        if tokens[i] == "#" and i + 1 < len(tokens) and tokens[i + 1] == "pragma":
            texts.append([])
            i += 2
            continue
        if tokens[i] == "_Pragma" and i + 2 < len(tokens):
            literal = tokens[i + 2]
            texts.append([literal[1:-1].replace('\\"', '"')])
            i += 4
            continue
        if texts:
            texts[-1].append(tokens[i])
        i += 1
    return [" ".join(t) for t in texts]


def unroll_request(text: str) -> str | None:
    """The unroll request of one pragma's text: a count expression, "full", or None."""
    words = text.split()
    if not words:
        return None
    if words[0] == "nounroll":
        return "1"
    if words[0] == "GCC" and words[1:2] == ["unroll"]:
        words = words[1:]
    if words[0] == "unroll":
        count = " ".join(words[1:]).strip()
        while count.startswith("(") and count.endswith(")"):
            count = count[1:-1].strip()
        return count or "full"
    if words[:2] == ["clang", "loop"]:
        request = None
        for option, value in _OPTION.findall(" ".join(words[2:])):
            if option == "unroll_count":
                request = value
            elif option == "unroll" and value in ("full", "disable"):
                request = "full" if value == "full" else "1"
        return request
    return None


def unroll_hint(stmt, loop, unit) -> IntegerAttr | StringAttr | None:
    """The `tapeflow.unroll` value of the pragmas over `loop` (the last one wins)."""
    request = None
    for text in pragma_texts(stmt, loop):
        request = unroll_request(text) or request
    if request is None:
        return None
    if request == "full":
        return StringAttr("full")
    # Clang has checked the count (a positive integer constant expression)
    count = int(request) if request.isdigit() else unit.constant(request, stmt)
    return IntegerAttr(count, i64)
