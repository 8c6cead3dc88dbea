"""Enzyme's split mode in C: `__enzyme_augmentfwd(f, args...)` runs `f` and returns its tape,
`__enzyme_reverse(f, args..., [d_result,] tape)` runs the reverse sweep from it.

Each call's arguments follow `__enzyme_autodiff`'s activity rules; the markers
`enzyme_allocated, size` (the tape is a caller's buffer of `size` bytes) and
`enzyme_tape, tape` (that buffer, or the tape to consume) may come anywhere after the
function. The function (or its specialization for the activity) gets `tapeflow.split`,
and `tapeflow-autodiff` adds `@f_augment` and `@f_reverse` beside `@f_grad`, cut from it
(`transforms/autodiff/split.py` says what the tape holds). An `enzyme_allocated` size
smaller than that tape is the error Enzyme gives ("need N bytes have M bytes"), found
here by differentiating a copy of the module.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tapeflow.diagnostics import ToolError

from .clang import error, evaluate, strip_casts, where

AUGMENT_ENTRY = "__enzyme_augmentfwd"
REVERSE_ENTRY = "__enzyme_reverse"
SPLIT_ATTR = "tapeflow.split"  # the pass's (transforms/autodiff/split.py), for layering
TAPE_BYTES_ATTR = "tapeflow.tape_bytes"
_SPLIT_MARKERS = ("enzyme_allocated", "enzyme_tape")


def is_split(name: str) -> bool:
    """Enzyme's split-mode entry points (any name containing them, as for autodiff)."""
    return AUGMENT_ENTRY in name or REVERSE_ENTRY in name


def split_entry(name: str) -> str:
    return AUGMENT_ENTRY if AUGMENT_ENTRY in name else REVERSE_ENTRY


class SplitCalls:
    """The `CFrontend` part that reads split-mode calls."""

    def _split_arguments(self, call, fn) -> tuple[list, int | None]:
        """The arguments of a split-mode call that `_activity` reads (its own markers, the
        tape and the result's adjoint taken out) and its `enzyme_allocated` size."""
        entry = split_entry(call.spelling)
        args = list(call.get_arguments())
        kept, size, tape = args[:1], None, None
        i = 1
        while i < len(args):
            a = strip_casts(args[i])
            if a.kind.name == "DECL_REF_EXPR" and a.spelling in _SPLIT_MARKERS:
                if i + 1 >= len(args):
                    error(a, f"{entry}: '{a.spelling}' is not followed by an argument")
                if a.spelling == "enzyme_allocated":
                    size = evaluate(args[i + 1])
                    if not isinstance(size, int):
                        error(args[i + 1], f"{entry}: the enzyme_allocated size is not an "
                              "integer constant")
                else:
                    tape = args[i + 1]
                i += 2
                continue
            kept.append(args[i])
            i += 1
        if size is not None and tape is None:
            error(call, f"{entry}: enzyme_allocated without enzyme_tape (the buffer)")
        if entry == REVERSE_ENTRY:
            # after the arguments: the result's adjoint (a float result), then the tape
            # (unless given by enzyme_tape)
            drop = (tape is None) + (fn.result_type.kind.name in ("DOUBLE", "FLOAT"))
            if len(kept) - 1 < drop:
                error(call, f"{entry}: too few arguments (the tape and the result's adjoint "
                      "follow the function's arguments)")
            kept = kept[: len(kept) - drop]
        return kept, size


def check_allocated_tapes(module: ModuleOp, allocated: list[tuple[object, int, str]]) -> None:
    """Each `enzyme_allocated` size (call, size, the marked function) holds its tape
    (`tapeflow.tape_bytes` of `@f_augment`, from a copy of the module differentiated):
    else Enzyme's error, at the call."""
    if not allocated:
        return
    from tapeflow.registry import make_context
    from tapeflow.transforms.autodiff import AutodiffPass
    from xdsl.utils.exceptions import DiagnosticException

    copy = module.clone()
    try:
        AutodiffPass().apply(make_context(), copy)
    except DiagnosticException:
        return  # tapeflow-autodiff reports it, located, when the module is differentiated
    sizes = {
        f.sym_name.data.removesuffix("_augment"): f.attributes[TAPE_BYTES_ATTR].value.data
        for f in copy.ops
        if isinstance(f, func.FuncOp) and TAPE_BYTES_ATTR in f.attributes
    }
    for call, size, name in allocated:
        need = sizes.get(name)
        if need is not None and need > size:
            raise ToolError(f"{where(call)}: Enzyme: need {need} bytes have {size} bytes")
