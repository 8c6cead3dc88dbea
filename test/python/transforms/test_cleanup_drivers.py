"""transforms/cleanup.py's canonicalize, cse, licm and dead-code pass make exactly the
rewrites of xDSL's passes they stand for: the printed IR is the same, on every bundled
kernel's pipelines (before their cleanup, and TapeFlow's before its hoisting) and on IR
written to reach the corners (unreachable blocks, loops whose only effects are reads,
reads across a write, unregistered ops, constants in nested loops)."""

from __future__ import annotations

import io

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import (
    CommonSubexpressionElimination,
)
from xdsl.transforms.dead_code_elimination import region_dce as xdsl_region_dce
from xdsl.transforms.loop_invariant_code_motion import LoopInvariantCodeMotionPass

from tapeflow.eval.jobs import VARIANTS, Job, split_autodiff
from tapeflow.eval.kernels import bundled
from tapeflow.registry import make_context
from tapeflow.transforms import cleanup
from tapeflow.transforms.pipeline import CleanupPass, hoist_invariants


def _text(module: ModuleOp) -> str:
    out = io.StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


def _xdsl_cleanup(ctx: Context, module: ModuleOp) -> None:
    CanonicalizePass().apply(ctx, module)
    _xdsl_hoist(ctx, module)


def _xdsl_hoist(ctx: Context, module: ModuleOp) -> None:
    CommonSubexpressionElimination().apply(ctx, module)
    LoopInvariantCodeMotionPass().apply(ctx, module)
    CommonSubexpressionElimination().apply(ctx, module)


def _same(ctx: Context, module: ModuleOp, ours, theirs) -> str:  # type: ignore[no-untyped-def]
    mine, reference = module.clone(), module.clone()
    ours(ctx, mine)
    theirs(ctx, reference)
    assert _text(mine) == _text(reference)
    return _text(mine)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kernel", sorted(bundled()))
def test_kernel_pipelines_clean_up_as_xdsl_does(kernel: str, variant: str) -> None:
    job = Job(kernel, variant, size="small")
    ad, steps = split_autodiff(job.passes())
    module = bundled()[kernel].load("small")
    ctx = make_context()
    if ad is not None:
        ad.apply(ctx, module)
    compared = 0
    for step in steps:
        if step is hoist_invariants:
            assert _same(ctx, module, hoist_invariants, _xdsl_hoist) != _text(module)
            compared += 1
        elif isinstance(getattr(step, "__self__", None), CleanupPass):
            _same(ctx, module, step, _xdsl_cleanup)
            compared += 1
        step(ctx, module)
    assert compared == (2 if variant == "tapeflow" else 1)


CORNERS = """
func.func @unreachable(%m: memref<4xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %x = memref.load %m[%c0] : memref<4xf64>
  cf.br ^exit
^dead:
  %y = arith.addf %x, %x : f64
  cf.br ^exit
^exit:
  func.return %x : f64
}

func.func @loops(%m: memref<4xf64>, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f64
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      %k = arith.muli %i, %c1 : index
      %v = memref.load %m[%k] : memref<4xf64>
      %two = arith.constant 2 : index
      %w = arith.addi %two, %n : index
    }
  }
  %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f64) {
    %bound = arith.addi %n, %c1 : index
    %bound2 = arith.addi %n, %c1 : index
    %t = arith.index_cast %bound2 : index to i64
    %a = memref.load %m[%i] : memref<4xf64>
    %b = memref.load %m[%i] : memref<4xf64>
    memref.store %a, %m[%c0] : memref<4xf64>
    %c = memref.load %m[%i] : memref<4xf64>
    %sum = arith.addf %a, %b : f64
    %sum2 = arith.addf %sum, %c : f64
    %next = arith.addf %acc, %sum2 : f64
    scf.yield %next : f64
  }
  func.return %s : f64
}

func.func @unregistered(%x: f64) -> f64 {
  %u = "test.unknown"(%x) : (f64) -> f64
  %v = "test.unknown"(%x) : (f64) -> f64
  %dead = arith.mulf %x, %x : f64
  func.return %x : f64
}
"""


def _corners() -> tuple[Context, ModuleOp]:
    ctx = make_context(allow_unregistered=True)
    return ctx, Parser(ctx, CORNERS).parse_module()


def test_corners_clean_up_as_xdsl_does() -> None:
    ctx, module = _corners()
    text = _same(ctx, module, CleanupPass().apply, _xdsl_cleanup)
    assert text != _text(module)
    assert "arith.addf %x" not in text  # the unreachable block's op, and the block, gone
    assert text.count('"test.unknown"') == 2  # effects unknown: kept
    assert _same(ctx, module, hoist_invariants, _xdsl_hoist) != _text(module)


def test_dead_code_pass_erases_what_xdsls_does() -> None:
    ctx, module = _corners()
    mine, reference = module.clone(), module.clone()
    assert cleanup.region_dce(mine.body) == xdsl_region_dce(reference.body) is True
    assert _text(mine) == _text(reference)
    assert "arith.mulf" not in _text(mine)
    assert cleanup.region_dce(mine.body) == xdsl_region_dce(reference.body) is False


def test_effects_of_a_loop_are_those_of_its_body() -> None:
    from xdsl.dialects import scf
    from xdsl.traits import get_effects

    _, module = _corners()
    effects = cleanup.Effects(memo=True)
    for op in module.walk():
        assert effects.of(op) == get_effects(op)
    loops = [op for op in module.walk() if isinstance(op, scf.ForOp)]
    assert any(effects.of(loop) for loop in loops)  # a store, reads
