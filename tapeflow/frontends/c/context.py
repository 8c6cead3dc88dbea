"""Enzyme's shadow contexts in C: `__enzyme_autodiff(f, enzyme_context, ctx, args...)`
differentiates `f` with the shadows of the globals it uses kept in `ctx`, made by
`void *ctx = __enzyme_context(1)`, read by `__enzyme_shadow(ctx, &g, 0)` and zeroed by
`__enzyme_zero_shadows(ctx)`, every global then being active, even one only read.

TapeFlow has one shadow per global, the global `@g_shadow` (README "The AD calling
convention"): a file with one context is that; the function gets `tapeflow.context`,
which makes `tapeflow-autodiff` give every float global it uses a shadow (a global only
read is an input, its gradient accumulated there). The context calls are the driver's
(untranslated) business; a width other than 1, or several contexts (their shadows would
be one), are refused, located.
"""

from __future__ import annotations

from .clang import error, evaluate, strip_casts, unsupported

CONTEXT_ATTR = "tapeflow.context"  # the pass's (transforms/autodiff/activity.py)
CONTEXT_CALLS = ("__enzyme_context", "__enzyme_shadow", "__enzyme_zero_shadows")


def context_arguments(call, args: list, entry: str) -> tuple[list, bool]:
    """`args` of an Enzyme call without its `enzyme_context, ctx` pair, and whether it
    had one."""
    for i, a in enumerate(args[1:], 1):
        a = strip_casts(a)
        if a.kind.name == "DECL_REF_EXPR" and a.spelling == "enzyme_context":
            if i + 1 >= len(args):
                error(a, f"{entry}: 'enzyme_context' is not followed by an argument")
            return args[:i] + args[i + 2:], True
    return args, False


class ContextCalls:
    """The `CFrontend` part that checks the context calls of the file."""

    def _context_call(self, c) -> None:
        """A call of `__enzyme_context`/`__enzyme_shadow`/`__enzyme_zero_shadows` (in a
        function that is not translated): one context of width 1 per file."""
        if c.spelling != "__enzyme_context":
            return
        args = list(c.get_arguments())
        if not args or evaluate(args[0]) != 1:
            unsupported(c, "__enzyme_context of a width other than 1 (vector mode)")
        seen = getattr(self, "_context_seen", None)
        if seen is not None and seen != (c.location.file.name, c.location.offset):
            unsupported(c, "a second __enzyme_context (TapeFlow has one shadow per global, "
                        "so one context per file)")
        self._context_seen = (c.location.file.name, c.location.offset)
