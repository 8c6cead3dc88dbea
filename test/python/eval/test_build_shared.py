"""`build_module(..., shared=)`: a task's pipelines compile clones of one parsed and
differentiated kernel, and give the IR each pipeline gives alone (tapeflow-bench's tasks)."""

from __future__ import annotations

import io

import pytest
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IntegerAttr
from xdsl.printer import Printer
from xdsl.utils.exceptions import PassFailedException

from tapeflow.eval.jobs import VARIANTS, Job, build_module, ir_key
from tapeflow.hwmodel.config import load_machine


def _text(module: object) -> str:
    out = io.StringIO()
    Printer(stream=out).print_op(module)  # type: ignore[arg-type]
    return out.getvalue()


@pytest.mark.parametrize("kernel", ["gemm", "ragged_rnn", "mass_spring"])
def test_shared_builds_give_each_pipelines_own_ir(kernel: str) -> None:
    salam = load_machine("accel-salam").raw
    jobs = [Job(kernel, v, size="small") for v in VARIANTS]
    jobs += [Job(kernel, "tapeflow", size="small", spm_bytes=4096),
             Job(kernel, "tapeflow", size="small", machine=salam, machine_label="accel-salam"),
             Job(kernel, "tapeflow", size="small", mode="always")]  # fmt: skip
    shared: dict[object, object] = {}
    texts = [_text(build_module(job, job.passes(), shared)) for job in jobs]
    assert texts == [_text(build_module(job)) for job in jobs]
    # The parsed kernel, it differentiated (one AD pass), and that hoisted (the first step of
    # every TapeFlow pipeline, whatever its machine and options).
    assert len(shared) == 3
    assert all(f"func.func @{kernel}_grad" in t for t in texts)


def test_shared_build_validates_the_tapeflow_options_first() -> None:
    job = Job("gemm", "tapeflow", size="small", depth=0)
    with pytest.raises(PassFailedException) as alone:
        build_module(job)
    shared: dict[object, object] = {}
    with pytest.raises(PassFailedException) as together:
        build_module(job, job.passes(), shared)
    assert str(together.value) == str(alone.value)
    assert "depth" in str(alone.value)
    assert len(shared) == 1  # parsed, not differentiated


@pytest.mark.parametrize("kernel", ["gemm", "pwl"])
def test_pipelines_with_the_same_ir_before_the_cleanup_share_it(kernel: str) -> None:
    salam = load_machine("accel-salam").raw
    jobs = [Job(kernel, v, size="small") for v in VARIANTS]
    jobs += [Job(kernel, "tapeflow", size="small", machine=salam, machine_label="accel-salam"),
             Job(kernel, "enzyme", size="small", cleanup=False)]  # fmt: skip
    shared: dict[object, object] = {}
    cleaned: dict[object, object] = {}
    modules = [build_module(job, job.passes(), shared, cleaned) for job in jobs]
    assert [_text(m) for m in modules] == [_text(build_module(job)) for job in jobs]
    distinct = {id(m) for m in modules[:-1]}
    assert len(cleaned) == len(distinct) < len(jobs) - 1  # two pipelines gave one IR
    assert modules[-1] not in modules[:-1]  # no cleanup: its own module


def test_ir_key_tells_apart_what_printing_does() -> None:
    module = build_module(Job("gemm", "enzyme", size="small"))
    assert ir_key(module.clone()) == ir_key(module)
    changed = module.clone()
    load = next(o for o in changed.walk() if isinstance(o, memref.LoadOp))
    load.results[0].name_hint = "renamed"
    assert ir_key(changed) != ir_key(module)
    changed = module.clone()
    constant = next(o for o in changed.walk()
                    if isinstance(o, arith.ConstantOp) and isinstance(o.value, IntegerAttr))
    constant.value = IntegerAttr(12345, constant.value.type)
    assert ir_key(changed) != ir_key(module)
