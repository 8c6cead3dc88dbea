"""How far real Enzyme-MLIR's gradient is from ours on one kernel: both run with
tapeflow-run's arguments, in the interpreter or natively, compared entry by entry. They are
different programs, so the measure is a relative error, not bit identity.

The bench judges agreement per array by `normwise_error` (max |a - b| / max |b|, b ours),
the usual measure for two programs that sum in different orders, and reports the
per-entry `relative_error` beside it: an entry where a sum cancels to a value far below
its array's largest can differ in most of its digits without either gradient being
wrong. An entry that is NaN in both, or the same infinity, is equal (salam/matd at its
real size: 0 times a product that overflows, NaN everywhere in both, bit for bit).
Measured natively at default sizes (enzyme-ad 0.0.16): gemm, conv2d, pwl,
ragged_rnn and softmax_ce are bit-identical; jacobi2d (1.3e-12), lstm (1.2e-10),
mass_spring (3.7e-12) and mlp (3.3e-12) exceed 1e-12 per entry, in 2, 13, 4 and 1
entries, each 5 to 7 orders of magnitude below the array's largest, where a sum cancels;
normwise every kernel is within 4e-15. Two causes: Enzyme marks its adjoint arithmetic
`fastmath<fast>`, which lets LLVM contract and reassociate it natively (without the flags
mass_spring and mlp are bit-identical, lstm 4.6e-11); and Enzyme accumulates some adjoints
in another order than ours (jacobi2d, lstm). Not `enzyme-simplify-math`: without it every
error is the same. In the interpreter (the bench's hardware model) the flags do nothing."""

from __future__ import annotations

import numpy as np
from xdsl.dialects import builtin

from tapeflow.baselines.enzyme_mlir import EnzymeAutodiffPass
from tapeflow.native import run_function_native
from tapeflow.registry import make_context
from tapeflow.runner import (
    find_function,
    gradient_layout,
    load_module,
    make_arguments,
    run_function,
    shadow_shapes,
)
from tapeflow.transforms.autodiff import AutodiffPass


def _differing(ours, theirs) -> tuple[np.ndarray, np.ndarray] | None:
    """Both arrays flattened, at the entries where they differ (an entry NaN in both, or
    the same infinity, does not: the same value); None when the shapes differ or an entry
    that differs is not finite (no error measures it)."""
    a = np.asarray(ours, dtype=np.float64).ravel()
    b = np.asarray(theirs, dtype=np.float64).ravel()
    if a.shape != b.shape:
        return None
    differ = ~((a == b) | (np.isnan(a) & np.isnan(b)))
    a, b = a[differ], b[differ]
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return None
    return a, b


def normwise_error(ours, theirs) -> float:
    """`max |a - b| / max |b|` over one array, `b` ours: the error relative to the array's
    scale (what the bench's agreement is judged by), over its finite entries. 0 when the
    arrays are equal (NaN where both are); infinite when ours is all zeros and theirs is
    not, or when they differ in a non-finite entry."""
    pair = _differing(ours, theirs)
    if pair is None:
        return float("inf")
    b, a = pair
    if not a.size:
        return 0.0
    finite = np.asarray(ours, dtype=np.float64)
    scale = float(np.max(np.abs(finite[np.isfinite(finite)]), initial=0.0))
    diff = float(np.max(np.abs(a - b)))
    return diff / scale if scale > 0 else float("inf")


def relative_error(ours, theirs) -> float:
    """The largest `|a - b| / max(|a|, |b|)` over the entries (0 where they are equal, NaN
    in both included): the per-entry figure, reported beside `normwise_error`; infinite
    where they differ in a non-finite entry."""
    pair = _differing(ours, theirs)
    if pair is None:
        return float("inf")
    a, b = pair
    if not a.size:
        return 0.0
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(a), np.abs(b))))


def gradient_agreement(
    text: str, name: str, filename: str = "<kernel>", seed: float = 1.0, native: bool = False
):
    """Runs `@name_grad` as `tapeflow-autodiff` and as Enzyme-MLIR make it, with
    tapeflow-run's arguments and seed `seed`, in the interpreter or natively
    (`tapeflow-exec`'s path): {argument or result: relative error}."""
    runs = []
    for make in (AutodiffPass, EnzymeAutodiffPass):
        ctx = make_context()
        module = load_module(text, filename, ctx)
        make().apply(ctx, module)
        grad = find_function(module, f"{name}_grad")
        mirror, shadows = gradient_layout(module, grad)
        scalars = [seed] * sum(
            1 for t in grad.function_type.inputs.data if not isinstance(t, builtin.MemRefType)
        )
        args = make_arguments(
            grad, scalars=scalars, zero=shadows, fill_positions=mirror,
            shape_of=shadow_shapes(module, grad),
        )  # fmt: skip
        run = run_function_native if native else run_function
        runs.append(run(module, grad.sym_name.data, args, ctx=ctx))
    ours, theirs = runs
    pairs = enumerate(zip(ours.arguments, theirs.arguments, strict=True))
    errors = {f"arg{p}": relative_error(a, b) for p, (a, b) in pairs}
    results = enumerate(zip(ours.results, theirs.results, strict=True))
    errors.update({f"result{i}": relative_error(a, b) for i, (a, b) in results})
    return errors
