"""The AD calling convention's one rule (docs/CONTRACTS.md): which arguments of `@f` the
gradient `@f_grad` follows with a shadow. The runner, the evaluation harness and the
Enzyme-MLIR baseline (which turns it into Enzyme's activities) all ask it here."""

from __future__ import annotations

import re

from xdsl.dialects import func
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type, MemRefType
from xdsl.ir import Attribute


def is_float_type(t: Attribute) -> bool:
    """`t` is a float type the runner reads and writes."""
    return isinstance(t, Float64Type | Float32Type | Float16Type | BFloat16Type)


def shadowed(f: func.FuncOp) -> set[int]:
    """The positions of `f`'s arguments that `@f_grad` follows with a shadow: its float
    memrefs, except those marked `tapeflow.const` (Enzyme's `enzyme_const`)."""
    const = {i for i, d in enumerate(f.arg_attrs or ()) if "tapeflow.const" in d.data}
    return {
        p
        for p, t in enumerate(f.function_type.inputs.data)
        if p not in const and isinstance(t, MemRefType) and is_float_type(t.get_element_type())
    }


def value_name(name: str) -> str:
    """The SSA name hint that prints as the source name `name`: xDSL takes a trailing
    `_<digits>` for its own suffix of a repeated name (`%y_1` reads back as `y`), so `y_1`
    is `y_1_`; `source_name` undoes it (the names `--inputs` and `--args` take)."""
    return f"{name}_" if re.search(r"_\d+$", name) else name


def source_name(hint: str | None) -> str | None:
    """The source name of an argument whose name hint `value_name` made."""
    return hint[:-1] if hint and re.search(r"_\d+_$", hint) else hint
