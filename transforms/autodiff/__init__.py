"""`tapeflow-autodiff`: reverse-mode automatic differentiation with an Enzyme-style tape.

The package follows Enzyme-MLIR's split: `rules/{arith,math,memref}.py` hold the adjoint
of each op (op class -> builder), `scf.py` reverses structured control flow,
`activity.py` decides what is active, `prepare.py` normalises the input (affine lowering,
call inlining, while-loop counters) and `driver.py` is the generic driver.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException, PassFailedException

from tapeflow.diagnostics import op_error
from tapeflow.transforms.autodiff.activity import is_float
from tapeflow.transforms.autodiff.split import SPLIT_ATTR, split, split_names
from tapeflow.transforms.index_utils import check_steps
from tapeflow.transforms.options import DEFAULT_POLICY

POLICIES = ("min-tape", "cache-all")
AUTODIFF_ATTR = "tapeflow.autodiff"
SHADOW_ATTR = "tapeflow.shadow"  # on the shadow globals the pass adds


@dataclass(frozen=True)
class AutodiffPass(ModulePass):
    """Differentiates functions in reverse mode: for each `@f`, adds `@f_grad` beside it.

    Which functions: those carrying the unit attribute `tapeflow.autodiff`, and those named
    by `functions=a,b`. The primal `@f` is left unchanged.

    Calling convention (Enzyme's):
    - each float memref argument `A` is followed by its shadow `dA` (same type); the
      gradient is *accumulated* into `dA`, and `dA` holds the adjoint of `A`'s final
      contents on entry (the seed for results returned in memory); on exit it holds the
      adjoint of `A`'s initial contents, plus what it held for elements never written;
    - float scalar arguments are active: their gradients are returned, in argument order,
      and are the *only* results of `@f_grad`;
    - integer and index arguments (and memrefs of them) are constant: no shadow, no
      gradient; so is a float argument with the argument attribute `tapeflow.const`
      (Enzyme's `enzyme_const`);
    - each float scalar result of `@f` adds a seed argument at the end (the adjoint of that
      result); integer results are dropped;
    - a mutable float global `@g` (`memref.get_global`) written from active data is
      active: its shadow is the global `@g_shadow` (zeros, added to the module; Enzyme's
      shadow global), used as a memref argument's shadow is (the adjoint of `@g`'s final
      contents on entry, of its initial contents on exit), never reset by `@f_grad`.
      With `tapeflow.context` on `@f` (Enzyme's `enzyme_context`), every float global
      `@f` uses is active, even one only read (its gradient accumulates in `@g_shadow`);
    - with `tapeflow.split` on `@f` (Enzyme's split mode), `@f_augment` and `@f_reverse`
      are added too, cut from `@f_grad` (`split.py`): `@f_augment(args and shadows) ->
      tape`, `@f_reverse(args and shadows, seeds, tape) -> gradients`.

    ```
    func.func @f(%x: memref<4xf64>, %n: index, %s: f64) -> f64 attributes {tapeflow.autodiff}
    // becomes, beside @f:
    func.func @f_grad(%x: memref<4xf64>, %dx: memref<4xf64>, %n: index, %s: f64,
                      %seed: f64) -> f64                        // returns d(result)/d(%s)
    ```

    The body of `@f_grad` is the forward sweep (the primal body, with `tape.push` of each
    value kept for the reverse sweep right after it is computed) followed by the reverse
    sweep (`tape.pop`s first in each reversed loop body), then `tape.free`s; every
    `tape.init` is in the entry block. Paired forward and reverse loops carry
    `tapeflow.loop = N : i64`. See docs/CONTRACTS.md.

    Tape policy (`policy=`):
    - `min-tape` (default, as Enzyme): the tape holds only what cannot be recomputed.
      Values of the function's body (outside any loop/branch) are used directly (SSA).
      Constants and induction variables are recomputed; every pure `arith`/`math` op is
      recomputed in the reverse sweep from its operands (themselves recomputed or
      popped); a load is recomputed when no store can overwrite the location after it:
      no store after it in program order and none in a loop around both, except stores
      that provably write another slice (the load reads `A[t+a]`, the store writes
      `A[t+b]` with `b > a`, t the outermost common loop's induction variable: LSTM/RNN
      hidden states `h[t+1] = f(h[t])` are read back from their buffer). Cached are:
      loads from memory written later (in-place updates over time steps), loop-carried
      values (iter_args and while-loop arguments), results of nested loops and
      branches, `scf.if` conditions inside loops, and `scf.while` trip counts (always).
      Index values loaded from memory (indirect accesses) follow the float-load rule:
      cached only when their buffer may be written later; indices computed from
      induction variables and constants are recomputed, and so are `scf.if` conditions
      that depend only on them (a `j != i` mask). Of the recomputable values, those of
      a minimum cut between the cached sources and what the reverse code needs are
      cached instead, bytes weighted by how often their block runs (Enzyme's min-cut,
      `mincut.py`): `tanh(Wh + Ux)` caches the sum, not the two reduction results;
      `z > max` is cached as an i1 rather than the 8-byte running maximum.
    - `cache-all` (ablation): every needed value except constants and induction variables
      is cached.

    Distinct memref arguments and allocations are assumed not to alias (Enzyme with
    `noalias`). Activity analysis (`activity.py`) gives no adjoint, no reverse code and
    no tape to values that cannot affect the result.

    Supported input: `func.func` with `scf.for` (iter_args), `scf.if` (results),
    `scf.while`, `affine.for/load/store/apply` (lowered first), `arith` and `math` float
    ops (see `rules/`), integer/index arithmetic and comparisons, `memref.load/store`,
    `memref.copy`, `memref.get_global` (one buffer per global, `merge_globals`),
    `memref.alloc/alloca/dealloc` (an allocation inside a loop or branch is
    hoisted to the function body when its sizes are known there; an active one whose size
    is computed in the loop is rejected), and `func.call` of functions of the module
    (inlined, except calls of recursive functions and of functions with a custom
    derivative, `enzyme_augment`/`enzyme_gradient`, which stay calls: `calls.py`; a
    recursive `@f` gets `@f_aug` and `@f_rev` beside it). f32 and f64 (f16/bf16 are accepted, untested).
    An op it cannot differentiate, or an unsupported construct, is a `PassFailedException`
    naming the op and its location; the module is then left unchanged.
    """

    name = "tapeflow-autodiff"

    functions: tuple[str, ...] = ()
    policy: str = DEFAULT_POLICY

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        from tapeflow.transforms.autodiff.rules import all_rules

        if self.policy not in POLICIES:
            raise PassFailedException(
                f"{self.name}: unknown policy '{self.policy}' (expected one of "
                f"{', '.join(POLICIES)})"
            )
        funcs = {f.sym_name.data: f for f in op.ops if isinstance(f, func.FuncOp)}
        for name in self.functions:
            if name not in funcs:
                raise PassFailedException(
                    f"{self.name}: functions: no function named '{name}' in the module"
                )
        targets = [
            f
            for f in op.ops
            if isinstance(f, func.FuncOp)
            and (AUTODIFF_ATTR in f.attributes or f.sym_name.data in self.functions)
        ]
        from tapeflow.transforms.autodiff.calls import KeptCalls

        kept = KeptCalls(op, all_rules(), self.policy)
        rules = kept.rules
        built: list[tuple[Operation, Operation]] = []
        global_shadows: dict[str, tuple[builtin.MemRefType, Operation]] = {}
        for primal in targets:
            if not primal.body.blocks:
                name = primal.sym_name.data
                raise PassFailedException(
                    op_error(primal, f"cannot differentiate @{name}: it has no body")
                )
            if len(primal.body.blocks) > 1:  # cf branches: valid upstream, not supported here
                raise PassFailedException(op_error(primal, "unsupported: multi-block function"))
            check_steps(primal)  # reversing a loop divides by its step
            grad_name = f"{primal.sym_name.data}_grad"
            if grad_name in funcs:
                raise PassFailedException(
                    op_error(primal, f"cannot create @{grad_name}: the symbol already exists")
                )
            split_pair = SPLIT_ATTR in primal.attributes
            for name in split_names(grad_name) if split_pair else ():
                if name in funcs:
                    raise PassFailedException(
                        op_error(primal, f"cannot create @{name}: the symbol already exists")
                    )
            if split_pair and primal.sym_name.data in kept.sccs:
                raise PassFailedException(
                    op_error(primal, "split mode of a recursive function is not supported: "
                             "its tape is the stacks all its calls share")
                )
            try:
                fn, shadows, forward_end = self._differentiate(primal, grad_name, op, rules, kept)
                if split_pair:  # Enzyme's split mode
                    seeds = sum(1 for t in primal.function_type.outputs if is_float(t))
                    built += [(primal, f) for f in reversed(split(fn, forward_end, seeds))]
            except DiagnosticException:
                raise
            except Exception as e:  # a bug here must still be a diagnostic, not a traceback
                raise PassFailedException(
                    op_error(primal, f"internal error while differentiating: {e!r}")
                ) from e
            built.append((primal, fn))
            for name, mtype in shadows.items():
                global_shadows.setdefault(name, (mtype, primal))
        # Only now, with every gradient built, touch the module.
        new_globals = _shadow_global_ops(op, global_shadows)
        for primal, fn in built:
            Rewriter.insert_op(fn, InsertPoint.after(primal))
        for primal, aug, rev in kept.functions():
            for name in (aug.sym_name.data, rev.sym_name.data):
                if name in funcs:
                    raise PassFailedException(
                        op_error(primal, f"cannot create @{name}: the symbol already exists")
                    )
            Rewriter.insert_op([aug, rev], InsertPoint.after(primal))
        for glob, after in new_globals:
            Rewriter.insert_op(glob, InsertPoint.after(after))

    def _differentiate(
        self, primal: func.FuncOp, grad_name: str, module: builtin.ModuleOp, rules, kept
    ) -> tuple[func.FuncOp, dict, Operation | None]:
        from tapeflow.transforms.autodiff.driver import Gradient
        from tapeflow.transforms.autodiff.mincut import build_min_tape
        from tapeflow.transforms.autodiff.prepare import (
            count_while_iterations,
            hoist_allocations,
            inline_calls,
            lower_affine,
            merge_globals,
        )

        if primal.sym_name.data in kept.sccs:  # recursive: a wrapper of its pair
            return kept.wrapper(primal, grad_name), {}, None
        fn = primal.clone()
        fn.sym_name = builtin.StringAttr(grad_name)
        fn.attributes.pop(AUTODIFF_ATTR, None)
        fn.attributes.pop("tapeflow.fwddiff", None)  # a mark for forward mode (fwdad.py)
        fn.attributes.pop(SPLIT_ATTR, None)
        fn.res_attrs = None
        fn.sym_visibility = None
        inline_calls(fn, module, kept.keep)
        merge_globals(fn)
        lower_affine(fn)
        hoist_allocations(fn)
        counted = count_while_iterations(fn)
        if self.policy == "min-tape":
            fn, gradient = build_min_tape(fn, rules, self.policy, counted)
        else:
            gradient = Gradient(fn, rules, self.policy, counted)
            gradient.build()
        fn.arg_attrs = None  # read by the build (`tapeflow.const`); the signature changed
        kept.mark_forward(fn, gradient)
        kept.finish(fn)
        return fn, gradient.global_shadows, gradient.forward_end


def _shadow_global_ops(
    module: builtin.ModuleOp, shadows: dict[str, tuple[builtin.MemRefType, Operation]]
) -> list[tuple[Operation, Operation]]:
    """`memref.global @g_shadow {tapeflow.shadow}` (zeros, of `@g`'s type) for each
    active global `@g` whose shadow the module lacks, each to go after `@g`; a symbol of
    that name that is not such a global (a user's own `@g_shadow`) is an error."""
    from xdsl.dialects import memref

    symbols = {
        o.sym_name.data: o
        for o in module.ops
        if isinstance(getattr(o, "sym_name", None), builtin.StringAttr)
    }
    out: list[tuple[Operation, Operation]] = []
    for name, (mtype, primal) in shadows.items():
        existing = symbols.get(name)
        if existing is not None:
            if SHADOW_ATTR in existing.attributes and getattr(existing, "type", None) == mtype:
                continue  # made by an earlier run of the pass
            raise PassFailedException(
                op_error(primal, f"cannot create the shadow global @{name}: the symbol exists")
            )
        tensor = builtin.TensorType(mtype.element_type, mtype.get_shape())
        zeros = builtin.DenseIntOrFPElementsAttr.from_list(tensor, [0.0] * _elements(mtype))
        glob = memref.GlobalOp.get(builtin.StringAttr(name), mtype, zeros)
        glob.attributes[SHADOW_ATTR] = builtin.UnitAttr()
        source = symbols.get(name.removesuffix("_shadow"))
        glob.location = (source or primal).location
        out.append((glob, source or primal))
    return out


def _elements(mtype: builtin.MemRefType) -> int:
    n = 1
    for d in mtype.get_shape():
        n *= d
    return n
