"""Enzyme's forward mode in C: the `__enzyme_fwddiff` calls of a file, each argument's
activity by Enzyme's forward-mode rules, and the function the `tapeflow-fwdad` pass
differentiates for it (`f` itself, or a specialization `f_<letters>` that marks its
constant float arguments, shared with reverse mode's of the same name).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, UnitAttr

from .clang import ADDR_OF, children, error, strip_casts, unary_op, unsupported
from .types import (
    array_shape,
    as_struct,
    is_buffer_type,
    is_float,
    is_opaque,
    record_scalar,
    struct_layout,
    type_kind,
)

FWD_ENTRY = "__enzyme_fwddiff"
FWD_ATTR = "tapeflow.fwddiff"  # the pass's (transforms/fwdad.py), spelled here for layering
_ANNOTATIONS = ("enzyme_dup", "enzyme_dupnoneed", "enzyme_const")


def is_forward(name: str) -> bool:
    """Enzyme differentiates in forward mode the calls of every function whose name
    contains __enzyme_fwddiff (one prototype per signature)."""
    return FWD_ENTRY in name


def forward_default(fn) -> tuple[str, ...]:
    """The activity that marks `f` itself (`f_fwd`): every float array and scalar dup."""
    out = []
    for p in fn.get_arguments():
        t = array_shape(p.type, p)[1] if is_buffer_type(p.type) else p.type
        record = type_kind(t) == "RECORD" and not is_opaque(p.type)
        out.append("dup" if is_float(t) or record else "const")
    return tuple(out)


def read_marker(args, i: int, entry: str, allowed, hint: str = "") -> tuple[str | None, int]:
    """The activity marker (`enzyme_dup`, ...) at `args[i]` of an Enzyme call, if any, and
    the position of the argument it applies to."""
    a = strip_casts(args[i])
    if a.kind.name == "UNARY_OPERATOR" and unary_op(a) == ADDR_OF:
        a = strip_casts(children(a)[0])  # `&enzyme_dup`: Enzyme reads the global's address too
    if a.kind.name != "DECL_REF_EXPR" or not a.spelling.startswith("enzyme_"):
        return None, i
    if a.spelling not in allowed:
        unsupported(a, f"the Enzyme marker '{a.spelling}' in {entry}{hint}")
    if i + 1 >= len(args):
        error(a, f"{entry}: '{a.spelling}' is not followed by an argument")
    return a.spelling, i + 1


class ForwardCalls:
    """The `CFrontend` part that reads `__enzyme_fwddiff` calls."""

    def _forward_activity(self, call, fn) -> tuple[str, ...]:
        """The activity of each parameter of `fn` in a `__enzyme_fwddiff` call: an
        annotation applies to the next argument; unannotated, a pointer or a float scalar
        is enzyme_dup (its tangent follows it), an integer constant. enzyme_dupnoneed is
        enzyme_dup here (the primal is computed anyway)."""
        args = list(call.get_arguments())[1:]
        params = list(fn.get_arguments())
        name = fn.spelling
        out: list[str] = []
        i = 0
        while i < len(args):
            note, i = read_marker(args, i, FWD_ENTRY, _ANNOTATIONS, " (forward mode takes "
                                  "enzyme_dup, enzyme_dupnoneed and enzyme_const)")
            if len(out) >= len(params):
                error(args[i], f"{FWD_ENTRY}: more arguments than '{name}' has parameters")
            param = params[len(out)]
            pname = f"argument '{param.spelling}' of '{name}'"
            if is_opaque(param.type):
                out.append(self._opaque_activity(note, args[i], pname, FWD_ENTRY))
                i += 1
                continue
            if as_struct(param.type) is not None:
                unsupported(args[i], f"{FWD_ENTRY} of a struct by value ({pname})")
            if is_buffer_type(param.type):
                elem = array_shape(param.type, param)[1]
                if as_struct(elem) is not None and record_scalar(elem) is None:
                    struct_layout(elem, param)
                differentiable = is_float(elem) or type_kind(elem) == "RECORD"
            else:
                differentiable = is_float(param.type)
                if not differentiable and note not in (None, "enzyme_const"):
                    error(args[i], f"{FWD_ENTRY}: {pname} is an integer (constant for "
                          f"TapeFlow), so it must be enzyme_const or unannotated, not {note}")
            if note == "enzyme_const" or not (differentiable or is_buffer_type(param.type)):
                out.append("const")
                i += 1
                continue
            i += 2  # the primal and its tangent (an integer array's is ignored)
            if i > len(args):
                error(call, f"{FWD_ENTRY}: {pname} is {note or 'enzyme_dup'} but has no tangent")
            out.append("dup" if differentiable else "const")
        if len(out) != len(params):
            error(call, f"{FWD_ENTRY}: '{name}' has {len(params)} parameters, the call gives "
                  f"{len(out)}")
        return tuple(out)

    def _mark_forward(self, module: ModuleOp, fn: func.FuncOp, calls: dict) -> None:
        """Marks `fn` (the default activity) or its specialization for each activity of
        `calls` (activity -> its first call)."""
        name = fn.sym_name.data
        functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
        for activity in calls:
            if activity == forward_default(self.defs[name]):
                fn.attributes[FWD_ATTR] = UnitAttr()
                continue
            spec = f"{name}_{''.join('d' if a == 'dup' else 'c' for a in activity)}"
            if spec in self.defs:
                error(calls[activity], f"{FWD_ENTRY}: the specialization '{spec}' of '{name}' "
                      "for this activity is already a function of the file")
            if spec in functions:  # reverse mode's of the same activity
                functions[spec].attributes[FWD_ATTR] = UnitAttr()
                continue
            op = self._specialization(spec, fn, activity, calls[activity])
            del op.attributes["tapeflow.autodiff"]
            op.attributes[FWD_ATTR] = UnitAttr()
            module.body.block.add_op(op)
            functions[spec] = op
