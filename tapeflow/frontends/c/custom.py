"""Enzyme's custom derivatives in C: `void *__enzyme_register_gradient_NAME[3] =
{(void *)f, (void *)augment, (void *)gradient}`.

The function `f` gets the attributes `enzyme_augment = @augment` and `enzyme_gradient =
@gradient` (Enzyme's metadata of those names), and `tapeflow-autodiff` calls them instead
of differentiating `f` (`autodiff/calls.py`, Enzyme's conventions): both take `f`'s
arguments, each pointer followed by its shadow; the gradient then takes the adjoint of
`f`'s float result and the augment's tape, and returns the gradients of `f`'s float
scalar arguments. The derivative is the user's: a wrong one gives a wrong gradient.

The tape is whatever the augment returns besides `f`'s result. A `void *` tape (the
usual spelling) is supported when it carries nothing: every `return` of the augment
returns a null pointer and the gradient never reads its `tape` parameter; the augment is
then translated as returning nothing and the gradient without that parameter. A tape
that carries data (a malloc'd struct) is refused.

A call of `f` on pointers into arrays (`f(&a[i])`) calls `f`'s variant taking their
offsets (`view_variant`); that variant's custom derivative is a pair of variants of the
augment and gradient with each such pointer and its shadow views at the one offset
(`custom_variant`), so the user's rule applies to the element the call points to.
"""

from __future__ import annotations

from xdsl.dialects.builtin import AnyFloat, MemRefType, SymbolRefAttr

from .clang import children, evaluate, strip_casts, unsupported, walk
from .types import type_kind

REGISTER_GRADIENT = "__enzyme_register_gradient_"


class CustomDerivatives:
    """The registrations of a file (`register`) and what they change in its translation."""

    custom: dict[str, tuple[str, str]]
    """f -> (augment, gradient)."""
    null_tapes: set[str]
    """Augments whose `void *` tape is dropped (module docstring)."""
    tape_params: set[str]
    """Gradients whose last parameter (the dropped tape) is not translated."""

    def register_gradient(self, c) -> None:
        """`__enzyme_register_gradient_NAME = {f, augment, gradient}`."""
        if not hasattr(self, "custom"):
            self.custom, self.null_tapes, self.tape_params = {}, set(), set()
        inits = [k for k in children(c) if k.kind.name == "INIT_LIST_EXPR"]
        items = [strip_casts(k) for k in children(inits[0])] if inits else []
        fns = [k.referenced if k.kind.name == "DECL_REF_EXPR" else None for k in items]
        if len(fns) != 3 or any(f is None or f.kind.name != "FUNCTION_DECL" for f in fns):
            unsupported(c, f"{c.spelling} other than {{(void *)f, (void *)augment, "
                        "(void *)gradient}")
        defs = [f.get_definition() for f in fns]
        for f, d in zip(fns, defs, strict=True):
            if d is None:
                unsupported(c, f"{c.spelling}: '{f.spelling}' is not defined in this file")
        fn, aug, grad = defs
        if fn.spelling in self.custom:
            unsupported(c, f"a second custom gradient of '{fn.spelling}'")
        if type_kind(aug.result_type) == "POINTER":
            self._null_tape(c, aug, grad)
        self.custom[fn.spelling] = (aug.spelling, grad.spelling)

    def _null_tape(self, c, aug, grad) -> None:
        returns = [r for r in walk(aug) if r.kind.name == "RETURN_STMT"]
        null = all(children(r) and _is_null(children(r)[0]) for r in returns)
        params = list(grad.get_arguments())
        tape = params[-1] if params and type_kind(params[-1].type) == "POINTER" else None
        read = tape is not None and any(
            k.kind.name == "DECL_REF_EXPR" and k.referenced is not None
            and k.referenced == tape for k in walk(grad)
        )
        if not null or tape is None or read:
            unsupported(c, f"a custom derivative's tape that carries data ('{aug.spelling}' "
                        "returns a pointer the gradient reads; TapeFlow supports a NULL tape)")
        self.null_tapes.add(aug.spelling)
        self.tape_params.add(grad.spelling)

    def custom_roots(self, name: str) -> list[str]:
        """The functions a call of `name` needs besides it: its augment and gradient."""
        return list(getattr(self, "custom", {}).get(name, ()))

    def custom_variant(self, name: str, at: tuple[int, ...], variant: str, c) -> None:
        """`variant` is `name` with its pointer parameters `at` views into the caller's
        arrays (`view_variant`, for a call `f(&a[i])`): its custom derivative is the pair
        of variants of `name`'s augment and gradient in which each such parameter and its
        shadow are views at the same offset, passed after the parameters that mirror
        `name`'s, where the AD passes it (`autodiff/calls.py`)."""
        pair = getattr(self, "custom", {}).get(name)
        if pair is None:
            return
        groups = self.signatures[name].groups
        mirror: list[tuple[int, ...]] = []  # name's parameter -> the augment's
        k = 0
        for group in groups:
            shadowed = len(group) == 1 and isinstance(group[0], MemRefType) and isinstance(
                group[0].element_type, AnyFloat)
            mirror.append((k, k + 1) if shadowed else (k,))
            k += len(mirror[-1])
        if any(len(groups[n]) != 1 for n in at):
            unsupported(c, f"a struct pointer into an array passed to '{name}', which has a "
                        "custom derivative")
        views = tuple(mirror[n] for n in at)
        for f in pair:
            if len(self.signatures[f].params) < k:
                unsupported(c, f"the custom derivative '{f}' of '{name}' does not take its "
                            "arguments, each pointer followed by its shadow")
        suffix = f"_at{'_'.join(str(v[0]) for v in views)}_with_shadows"
        aug, grad = (self.variant((f, views, k), f + suffix) for f in pair)
        self.custom[variant] = (aug, grad)

    def mark_custom(self, name: str, fn) -> None:
        """`enzyme_augment`/`enzyme_gradient` on `name`'s function, if it has them."""
        pair = getattr(self, "custom", {}).get(name)
        if pair is not None:
            fn.attributes["enzyme_augment"] = SymbolRefAttr(pair[0])
            fn.attributes["enzyme_gradient"] = SymbolRefAttr(pair[1])


def _is_null(e) -> bool:
    """`NULL`, `0`, `(void *)0`."""
    e = strip_casts(e)
    return e.kind.name == "GNU_NULL_EXPR" or evaluate(e) == 0
