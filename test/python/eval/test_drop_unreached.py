"""`drop_unreached`: a bench job's module keeps only what its gradient's entry calls."""

from __future__ import annotations

from xdsl.dialects import func

from tapeflow.eval.jobs import Job, build_module, drop_unreached
from tapeflow.runner import load_module

MODULE = """
func.func @helper(%x: f64) -> f64 {
  func.return %x : f64
}
func.func @inner(%x: f64) -> f64 {
  %y = func.call @helper(%x) : (f64) -> f64
  func.return %y : f64
}
func.func @k(%x: f64) -> f64 {
  func.return %x : f64
}
func.func @k_grad(%x: f64) -> f64 {
  %y = func.call @inner(%x) : (f64) -> f64
  func.return %y : f64
}
"""


def _names(module) -> list[str]:
    return [f.sym_name.data for f in module.ops if isinstance(f, func.FuncOp)]


def test_keeps_what_the_entry_calls_directly_or_not():
    module = load_module(MODULE)
    drop_unreached(module, "k_grad")
    assert _names(module) == ["helper", "inner", "k_grad"]
    module.verify()


def test_a_module_without_the_entry_stays_whole():
    module = load_module(MODULE)
    drop_unreached(module, "missing")
    assert _names(module) == ["helper", "inner", "k", "k_grad"]


def test_a_jobs_module_is_its_gradient_alone():
    """The primal kernel, which no run calls, is neither cleaned, verified nor compiled."""
    for variant in ("enzyme", "tapeflow"):
        alone = build_module(Job("gemm", variant, size="small"))
        assert _names(alone) == ["gemm_grad"]
        job = Job("gemm", variant, size="small")
        assert _names(build_module(job, job.passes(), {}, {})) == ["gemm_grad"]
