"""Delta debugging (Zeller's ddmin) over the statements of a failing program.

The units are the statements (`Op`, `For`, `If`, `While` nodes) of every function; a
candidate drops a set of them (a dropped loop or branch takes its body with it), and the
renderer substitutes defaults for the values that disappear, so every candidate is a
valid program. A candidate is kept when it fails with the same `Failure.signature()`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from fuzz.checks import Failure, Hang, check_program, time_limit
from fuzz.program import Node, Program, _children


def without(program: Program, dropped: set[int]) -> Program:
    """A copy of `program` without the nodes whose `id` is in `dropped`."""

    def keep(body: list[Node]) -> list[Node]:
        out = []
        for node in body:
            if id(node) in dropped:
                continue
            node = copy.copy(node)
            for name in ("body", "then", "other"):
                if hasattr(node, name):
                    setattr(node, name, keep(getattr(node, name)))
            out.append(node)
        return out

    functions = [copy.copy(fn) for fn in program.functions]
    for fn in functions:
        fn.body = keep(fn.body)
    return Program(program.seed, functions, program.float_type)


def _alive(program: Program, dropped: set[int]) -> list[int]:
    """Ids of the units not dropped and not inside a dropped node."""
    out: list[int] = []

    def walk(body: list[Node]) -> None:
        for node in body:
            if id(node) in dropped:
                continue
            out.append(id(node))
            for child in _children(node):
                walk(child)

    for fn in program.functions:
        walk(fn.body)
    return out


def ddmin(program: Program, fails: Callable[[Program], bool]) -> Program:
    """A program (1-minimal in statements) that `fails` still holds for."""
    dropped: set[int] = set()
    n = 2
    while True:
        alive = _alive(program, dropped)
        if not alive:
            break
        n = min(n, len(alive))
        chunks = [alive[i * len(alive) // n : (i + 1) * len(alive) // n] for i in range(n)]
        for chunk in chunks:
            trial = dropped | set(chunk)
            if fails(without(program, trial)):
                dropped = trial
                n = max(n - 1, 2)
                break
        else:
            if n >= len(alive):
                break
            n = min(2 * n, len(alive))
    return without(program, dropped)


def unwrap(program: Program, fails: Callable[[Program], bool]) -> Program:
    """Replaces loops and branches by one of their bodies while `fails` holds (the
    induction variable and loop-carried value become the renderer's defaults)."""
    changed = True
    while changed:
        changed = False
        for body, i in list(program.nodes()):
            for child in _children(body[i]):
                node = body[i]
                body[i : i + 1] = child
                if fails(program):
                    changed = True
                    break
                body[i : i + len(child)] = [node]
            if changed:
                break
    return program


def minimize(
    program: Program, failure: Failure, features: frozenset[str], seconds: float = 60.0
) -> Program:
    """`program` reduced while it fails with `failure`'s signature (the check family that
    failed is the only one rerun)."""
    target = failure.signature()

    def fails(candidate: Program) -> bool:
        try:
            with time_limit(seconds):
                check_program(candidate, features, families=(failure.family,))
        except Failure as f:
            return f.signature() == target
        except Hang:
            return failure.kind == "hang"
        return False

    small = ddmin(program, fails)
    if fails(small):  # unwrapping works in place: only on a copy that still fails
        small = ddmin(unwrap(without(small, set()), fails), fails)
    return small
