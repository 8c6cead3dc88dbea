"""Backward `goto`s (a loop made of jumps, as Enzyme's controlflow.c writes one): the
function's top-level labels become the cases of a loop, a rewrite of its C text that
the translation then reads as any loop:

    A: s1; if (c) goto A; B: s2;      // becomes
    int __tapeflow_label = 1; while (__tapeflow_label) { if (__tapeflow_label == 1) {
       s1; if (c) { __tapeflow_label = 1; continue; }
       __tapeflow_label = 2; } if (__tapeflow_label == 2) { s2; __tapeflow_label = 0; } }

A goto sets the label to run next and starts the loop's next turn; falling into a label
runs it in the same turn; the end of the body leaves the loop; a `return` returns. The
rewrite keeps every original token on its line. Only a function whose labels are all at
the top level of its body, with no goto inside a loop (its `continue` would be that
loop's), is rewritten; the others keep their gotos (`gotos.py` refuses them, located).
"""

from __future__ import annotations

from .clang import children, walk

STATE = "__tapeflow_label"
_LOOPS = ("FOR_STMT", "WHILE_STMT", "DO_STMT")


def _start(c) -> int:
    return c.extent.start.offset


def _edits(fn, text: bytes) -> list[tuple[int, int, bytes]] | None:
    """The (start, end, replacement) edits of `fn`'s text, or None to leave it."""
    body = next((k for k in fn.get_children() if k.kind.name == "COMPOUND_STMT"), None)
    if body is None:
        return None
    nodes = list(walk(body))
    gotos = [c for c in nodes if c.kind.name == "GOTO_STMT"]
    labels = [c for c in children(body) if c.kind.name == "LABEL_STMT"]
    targets = {}
    for g in gotos:
        ref = next((k.referenced for k in g.get_children() if k.kind.name == "LABEL_REF"), None)
        if ref is None:
            return None
        targets[_start(g)] = _start(ref)
    if not any(t < g for g, t in targets.items()):
        return None  # forward gotos only: gotos.py's
    inner_labels = [c for c in nodes if c.kind.name == "LABEL_STMT" and c not in labels]
    looped = [g for g in gotos for lp in nodes if lp.kind.name in _LOOPS
              and _start(lp) < _start(g) < lp.extent.end.offset]
    if inner_labels or looped or any(c.kind.name == "INDIRECT_GOTO_STMT" for c in nodes):
        return None
    if STATE.encode() in text:
        return None
    number = {_start(lab): k for k, lab in enumerate(labels, 1)}
    edits = []
    for k, lab in enumerate(labels, 1):
        tokens = list(lab.get_tokens())[:2]  # `name :`
        start, end = tokens[0].extent.start.offset, tokens[1].extent.end.offset
        head = (f"int {STATE} = 1; while ({STATE}) {{ " if k == 1
                else f"{STATE} = {k}; }} ")
        edits.append((start, end, f"{head}if ({STATE} == {k}) {{".encode()))
    for g in gotos:
        end = g.extent.end.offset
        rest = text[end:]
        semi = end + len(rest) - len(rest.lstrip()) + 1 if rest.lstrip().startswith(b";") else end
        k = number[targets[_start(g)]]
        edits.append((_start(g), semi, f"{{ {STATE} = {k}; continue; }}".encode()))
    close = body.extent.end.offset - 1  # the body's `}`
    edits.append((close, close, f"{STATE} = 0; }} }} ".encode()))
    return edits


def rewrite_backward_gotos(tu, text: str, name: str) -> tuple[str, list[str]] | None:
    """`text` with the backward gotos of its functions rewritten (module docstring), and
    a remark per function; None when there are none."""
    data = text.encode()
    edits, remarks = [], []
    for fn in tu.cursor.get_children():
        if fn.kind.name != "FUNCTION_DECL" or not fn.is_definition():
            continue
        if fn.location.file is None or fn.location.file.name != name:
            continue
        mine = _edits(fn, data)
        if mine:
            edits += mine
            loc = fn.location
            remarks.append(f"remark: {loc.file.name}:{loc.line}:{loc.column}: the backward "
                           f"gotos of '{fn.spelling}' run as a loop over its labels\n")
    if not edits:
        return None
    for start, end, new in sorted(edits, reverse=True):
        data = data[:start] + new + data[end:]
    return data.decode(), remarks
