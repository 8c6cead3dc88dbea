"""`--set` machine overrides reach TapeFlow's cost model: the bench's and the sweep's
TapeFlow passes decide with the costs of the machine simulated, overrides included, and
their text carries them as `tapeflow{set=...}` (the pass itself:
test/tapeflow-pipeline/cost-model.mlir)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from xdsl.passes import PassPipeline

from tapeflow.eval.jobs import Job, pipeline_key, pipeline_spec, pipeline_text
from tapeflow.eval.sweep.engine import pipeline_of
from tapeflow.eval.sweep.spec import load_spec
from tapeflow.hwmodel.config import load_machine
from tapeflow.machines import TapeFlowPass, machine_costs
from tapeflow.registry import get_all_passes
from tapeflow.tools.bench import plan


def test_bench_job_passes_its_overrides_and_machine() -> None:
    job = Job("gemm", "tapeflow", machine_label="accel-salam",
                    machine_sets=("l2.size=65536", 'dma.path="l2"'))  # fmt: skip
    assert 'machine="accel-salam" set="l2.size=65536","dma.path=l2"' in job.spec
    assert "set=" not in Job("gemm", "enzyme", machine_sets=("l2.size=1",)).spec
    # the pass's default machine is not spelled out; `mode=always` needs no machine keys
    assert "machine=" not in Job("gemm", "tapeflow", machine_label="default-45nm").spec
    assert "set=" not in pipeline_spec("tapeflow", 1024, 0, 2, mode="always",
                                             sets=["l2.size=1"])  # fmt: skip


def test_an_override_with_spaces_reaches_the_cost_model() -> None:
    """A string value with a space: the costs come from the job's machine, not from the
    pass's text, which quotes it."""
    _, _, _, setups, planned = plan(["--kernels", "gemm", "--machine", "accel-salam",
                                     "--set", "meta.name=my machine", "--no-progress"])  # fmt: skip
    assert setups[0][1].raw["meta"]["name"] == "my machine"
    job = next(j for j in planned if j.variant == "tapeflow")
    assert 'set="meta.name=my machine"' in job.spec
    [tapeflow] = job.passes()
    assert tapeflow.set == ("meta.name=my machine",)
    assert tapeflow.machine_costs() == machine_costs(load_machine("accel-salam"), "accel-salam")
    # and the text a user runs reads it back
    [parsed] = PassPipeline.parse_spec(get_all_passes(), job.spec).passes
    assert parsed == TapeFlowPass(**asdict(job.options))


def test_sweep_points_pass_their_set_keys(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text('kernels = ["gemm"]\nmachines = ["accel-salam"]\n'
                    '[set]\n"l2.size" = [65536, 131072]\n')  # fmt: skip
    points = load_spec(spec).points
    specs = [pipeline_text(pipeline_of("tapeflow", p)) for p in points]
    assert [s.split(" machine=")[1].removesuffix(" cleanup=true}") for s in specs] == [
        '"accel-salam" set="l2.size=65536"', '"accel-salam" set="l2.size=131072"']
    # the Enzyme layout's IR does not depend on the machine: one compile serves both
    assert len({pipeline_key(pipeline_of("enzyme", p)) for p in points}) == 1
    # TapeFlow's decides with each point's machine: one compile each
    costs = [pipeline_of("tapeflow", p)[0].machine_costs() for p in points]
    assert [c.l2_bytes for c in costs] == [65536, 131072]


def test_jobs_of_two_machines_compile_apart() -> None:
    """The same text (an unnamed machine, its own scratchpad) but two machines: the passes
    decide with each machine's costs and budget, and their keys tell them apart."""
    small = load_machine(None, ["spm.size=256"])
    jobs = [Job("mass_spring", "tapeflow", size="small", machine=raw, mode="always")
            for raw in ({}, small.raw)]  # fmt: skip
    assert jobs[0].spec == jobs[1].spec
    [big_pass], [small_pass] = (job.passes() for job in jobs)
    assert (big_pass.spm_bytes, small_pass.spm_bytes) == (32768, 256)
    assert pipeline_key([big_pass]) != pipeline_key([small_pass])
