"""When the fast path loads a loop kernel numba's cache has (`Trace.jit_load_after`): not
for a short nest, whose Python loop costs less than the load."""

from __future__ import annotations

import pytest

from tapeflow.eval.jobs import Job, build_module, kernel_arguments
from tapeflow.hwmodel.compiled import module as C
from tapeflow.hwmodel import jit
from tapeflow.hwmodel.config import load_machine
from tapeflow.simulate import simulate_fast_many

pytest.importorskip("numba", reason="kernels need numba (extra 'fast')")


def _loads(monkeypatch: pytest.MonkeyPatch, on_disk: bool, **trace: int) -> list[int]:
    """The ops each nest had run when its kernel was asked for (none given: Python)."""
    asked: list[int] = []

    def compile_(self: jit.LoopKernel) -> None:
        asked.append(self.seen)
        self.failed = "not compiled in this test"

    monkeypatch.setenv("TAPEFLOW_JIT", "1")
    monkeypatch.setattr(jit.LoopKernel, "on_disk", property(lambda self: on_disk))
    monkeypatch.setattr(jit.LoopKernel, "compile", compile_)
    for key, value in trace.items():
        monkeypatch.setattr(C.Trace, key, value)
    module = build_module(Job("gemm", "enzyme", size="small"))
    program = C.CompiledModule(module)
    args = kernel_arguments("gemm", "small")
    simulate_fast_many(program, "gemm_grad", args, [load_machine()])
    return asked


def test_a_cached_kernel_loads_once_its_nest_ran_jit_load_after_ops(monkeypatch):
    assert _loads(monkeypatch, True, jit_load_after=10**9) == []
    asked = _loads(monkeypatch, True, jit_load_after=100)
    assert asked and all(seen >= 100 for seen in asked)


def test_jit_after_when_lower(monkeypatch):
    assert _loads(monkeypatch, True, jit_after=0, jit_load_after=10**9)  # as tests force


def test_a_kernel_not_cached_waits_jit_after(monkeypatch):
    assert _loads(monkeypatch, False, jit_load_after=0) == []
    assert _loads(monkeypatch, False, jit_after=100, jit_load_after=10**9)
