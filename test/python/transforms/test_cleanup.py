"""`tapeflow-cleanup` (canonicalize, cse, licm) keeps every gradient bit-identical, and
xDSL's `canonicalize` no longer trips over what `tapeflow-autodiff` leaves behind.

The cleanup runs before simulation on every variant `tapeflow-bench` compares, so a
change of meaning there would silently change the comparison: the test runs each kernel's
three bench pipelines with and without it and compares results and every buffer bit for
bit.
"""

from __future__ import annotations

import pytest
from xdsl.dialects import func
from xdsl.transforms.canonicalize import CanonicalizePass

from tapeflow.eval.jobs import VARIANTS, pipeline_spec
from tapeflow.registry import make_context

from helpers.pipelines import KERNELS, apply, grad_args, op_counts, run

CLEANED_AWAY = ("arith.divsi", "arith.muli", "arith.addi")


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_cleanup_keeps_gradients_bit_identical(name: str, variant: str):
    kernel = KERNELS[name]
    args = grad_args(name)
    raw = pipeline_spec(variant, 32768, 0, 2, cleanup=False)
    clean = pipeline_spec(variant, 32768, 0, 2, cleanup=True)
    assert raw != clean
    expected = run(apply(kernel.source("small"), raw), kernel.grad_entry, args)
    assert run(apply(kernel.source("small"), clean), kernel.grad_entry, args) == expected


def test_cleanup_removes_index_arithmetic():
    """gemm's Enzyme-layout gradient loses integer ops (`divsi x, 1`, `muli x, 1`, ...)."""
    source = KERNELS["gemm"].source("small")
    before = op_counts(apply(source, pipeline_spec("enzyme", 32768, 0, 2, cleanup=False)))
    after = op_counts(apply(source, pipeline_spec("enzyme", 32768, 0, 2, cleanup=True)))
    assert sum(after.get(n, 0) for n in CLEANED_AWAY) < sum(before.get(n, 0) for n in CLEANED_AWAY)


def test_canonicalize_after_autodiff_of_returned_single_trip_loop():
    """Regression: `@f_grad` used to keep the primal `func.return` detached but alive, a
    user of the returned value; canonicalize inlining the single-iteration loop that
    produced it then failed with "Operation insertion point must have a parent block"
    (first seen on softmax_ce's TapeFlow output)."""
    text = """
    func.func @f(%x: memref<1xf64>) -> f64 attributes {tapeflow.autodiff} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %z = arith.constant 0.0 : f64
      %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %z) -> (f64) {
        %v = memref.load %x[%i] : memref<1xf64>
        %s = arith.mulf %v, %v : f64
        %a2 = arith.addf %a, %s : f64
        scf.yield %a2 : f64
      }
      func.return %r : f64
    }
    """
    module = apply(text, "tapeflow-autodiff")  # in memory, as a pipeline hands it on
    CanonicalizePass().apply(make_context(), module)
    module.verify()
    names = {o.sym_name.data for o in module.walk() if isinstance(o, func.FuncOp)}
    assert names == {"f", "f_grad"}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_no_dangling_users_after_autodiff(name: str):
    """Every user of every value of the gradient is an op of the module."""
    module = apply(KERNELS[name].source("small"), "tapeflow-autodiff")
    attached = {id(op) for op in module.walk()}
    for op in module.walk():
        values = list(op.results) + [a for r in op.regions for b in r.blocks for a in b.args]
        for value in values:
            for use in value.uses:
                assert id(use.operation) in attached, (op.name, use.operation.name)
