"""Adjoint rules, one module per dialect, in the spirit of Enzyme's `*Derivatives.td`.

Each dialect module exports `RULES: dict[type[Operation], Rule]`: the op class maps to a
function `rule(g, op)` (`autodiff.builder.Rule`) that emits, at the current point of the
reverse sweep, the adjoint code of `op`. A rule talks to the driver only through the
`autodiff.builder.ReverseBuilder` protocol: it asks for primal values (the driver
recomputes or pops them), reads the adjoints of the op's results, and accumulates
contributions into the adjoints of its operands (or into shadow memory). Control flow
(scf.for, scf.if, scf.while) lives in `autodiff/scf.py`.
"""

from __future__ import annotations

from xdsl.ir import Operation

from tapeflow.transforms.autodiff.builder import Rule


def all_rules() -> dict[type[Operation], Rule]:
    """The registry: op class -> adjoint builder, over every dialect."""
    from tapeflow.transforms.autodiff.rules import arith, math, memref

    rules: dict[type[Operation], Rule] = {}
    for module in (arith, math, memref):
        rules.update(module.RULES)
    return rules
