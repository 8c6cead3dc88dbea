"""`--set` machine overrides reach TapeFlow's cost model: the bench's and the sweep's
TapeFlow pipelines carry them as `tapeflow{set=...}`, so the cost model decides for the
machine simulated (the pass itself: test/tapeflow-pipeline/cost-model.mlir)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tapeflow.diagnostics import ToolError
from tapeflow.eval.jobs import Job, pipeline_spec, set_text
from tapeflow.eval.sweep.engine import pipeline_of
from tapeflow.eval.sweep.spec import load_spec


def test_bench_job_passes_its_overrides_and_machine() -> None:
    job = Job("gemm", "tapeflow", machine_label="accel-salam",
                    machine_sets=("l2.size=65536", 'dma.path="l2"'))  # fmt: skip
    assert 'machine="accel-salam" set="l2.size=65536","dma.path=l2"' in job.spec
    assert "set=" not in Job("gemm", "enzyme", machine_sets=("l2.size=1",)).spec
    # the pass's default machine is not spelled out; `mode=always` needs no machine keys
    assert "machine=" not in Job("gemm", "tapeflow", machine_label="default-45nm").spec
    assert "set=" not in pipeline_spec("tapeflow", 1024, 0, 2, mode="always",
                                             sets=["l2.size=1"])  # fmt: skip


def test_bench_refuses_an_override_a_pass_option_cannot_carry() -> None:
    with pytest.raises(ToolError, match="machine key 'meta.name'"):
        set_text("meta.name=a b")


def test_sweep_points_pass_their_set_keys(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text('kernels = ["gemm"]\nmachines = ["accel-salam"]\n'
                    '[set]\n"l2.size" = [65536, 131072]\n')  # fmt: skip
    points = load_spec(spec).points
    specs = [pipeline_of("tapeflow", p) for p in points]
    assert [s.split(" machine=")[1].removesuffix(" cleanup=true}") for s in specs] == [
        '"accel-salam" set="l2.size=65536"', '"accel-salam" set="l2.size=131072"']
    # the Enzyme layout's IR does not depend on the machine: one compile serves both
    assert len({pipeline_of("enzyme", p) for p in points}) == 1
