"""What the bench's tasks no longer do more than once: a job's module keeps only what its
gradient's entry calls (`drop_unreached`); a machine table is validated once
(`machine_from_raw`)."""

from __future__ import annotations

import copy

import pytest
from xdsl.dialects import func

from tapeflow.eval.jobs import Job, build_module, default_raw, drop_unreached, machine_from_raw
from tapeflow.hwmodel.config import ConfigError
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


def test_a_machine_table_is_validated_once_per_l2_size():
    raw = default_raw()
    machine = machine_from_raw(raw)
    assert machine_from_raw(copy.deepcopy(raw)) is machine  # the same table, by content
    assert machine.raw == raw and machine.raw is not raw  # a copy: the caller's stays its own
    small = machine_from_raw(raw, 64 * 1024)
    assert small is not machine and small.l2.size == 64 * 1024
    assert machine_from_raw(raw, 64 * 1024) is small


def test_a_bad_table_fails_every_time():
    raw = copy.deepcopy(default_raw())
    raw["l2"]["size"] = "big"
    for _ in range(2):
        with pytest.raises(ConfigError):
            machine_from_raw(raw)


def test_the_machines_enzyme_mlir_jobs_differentiate_once(monkeypatch: pytest.MonkeyPatch):
    """Real Enzyme-MLIR's `enzyme-autodiff` is shared like `tapeflow-autodiff`: one call
    of Enzyme for the machines' jobs of a kernel, and each gets the module it gets alone."""
    enzyme_mlir = pytest.importorskip("tapeflow.baselines.enzyme_mlir")
    if not enzyme_mlir.available():
        pytest.skip(enzyme_mlir.MISSING)
    from tapeflow.eval.jobs import ir_key

    calls = []
    differentiate = enzyme_mlir.differentiate
    monkeypatch.setattr(enzyme_mlir, "differentiate",
                        lambda *a, **k: calls.append(1) or differentiate(*a, **k))  # fmt: skip
    jobs = [Job("gemm", "enzyme-mlir", size="small", machine_label=m)
            for m in ("default-45nm", "accel-salam")]  # fmt: skip
    shared, cleaned = {}, {}
    modules = [build_module(job, job.passes(), shared, cleaned) for job in jobs]
    assert len(calls) == 1
    for job, module in zip(jobs, modules, strict=True):
        assert ir_key(module) == ir_key(build_module(job))
    assert len(calls) == 3
