"""TapeFlow's pass options (transforms/options.py) and the machine the `tapeflow` pass
decides for (tapeflow/machines.py): every default written once, the scratchpad budget
from the machine's `spm.size`, pipelines as pass objects equal to their text."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import PassFailedException

from tapeflow.diagnostics import ToolError, parse_module
from tapeflow.hwmodel.config import load_machine
from tapeflow.machines import VARIANTS, load_costs, machine_costs, pipeline
from tapeflow.registry import get_all_passes, make_context
from tapeflow.transforms.layers import LayersPass
from tapeflow.transforms.options import (
    DEFAULT_SPM_BYTES,
    TapeFlowOptions,
    scratchpad_bytes,
)
from tapeflow.transforms.pipeline import TapeFlowPipelinePass
from tapeflow.transforms.stream import StreamPass

KERNEL = """
func.func @sq(%x: memref<40xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c40 = arith.constant 40 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %c40 step %c1 iter_args(%a = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<40xf64>
    %s = arith.mulf %v, %v : f64
    %t = math.sin %s : f64
    %b = arith.addf %a, %t : f64
    scf.yield %b : f64
  }
  func.return %r : f64
}
"""


def _text(passes) -> str:
    ctx = make_context()
    module = parse_module(ctx, KERNEL, "k.mlir")
    if isinstance(passes, str):
        passes = PassPipeline.parse_spec(get_all_passes(), passes).passes
    PassPipeline(tuple(passes)).apply(ctx, module)
    return str(module)


def test_the_default_scratchpad_is_the_default_machines():
    assert DEFAULT_SPM_BYTES == load_machine().spm_size
    assert LayersPass().spm_bytes == DEFAULT_SPM_BYTES
    assert LayersPass().depth == StreamPass().depth == TapeFlowOptions().depth


def test_the_tapeflow_default_scratchpad_is_its_machines(tmp_path: Path):
    """`tapeflow{machine=M}` without spm-bytes lays out for M's scratchpad, not 32 KiB."""
    toml = tmp_path / "small.toml"
    toml.write_text("[spm]\nsize = 128\n")
    small = _text(f'tapeflow{{machine="{toml}" policy=cache-all mode=always}}')
    assert small == _text("tapeflow{spm-bytes=128 policy=cache-all mode=always}")
    default = _text("tapeflow{policy=cache-all mode=always}")
    assert small != default
    spelled = f"tapeflow{{spm-bytes={DEFAULT_SPM_BYTES} policy=cache-all mode=always}}"
    assert default == _text(spelled)


def test_transforms_alone_cannot_load_a_machine():
    """The pass of transforms/ has no machine loader (transforms never import the
    hardware model): a located error, not an import of hwmodel."""
    ctx = make_context()
    module = parse_module(ctx, KERNEL, "k.mlir")
    with pytest.raises(PassFailedException, match="machine 'default': no machine loader"):
        TapeFlowPipelinePass().apply(ctx, module)


def test_a_bad_machine_name_fails_the_pass():
    with pytest.raises(PassFailedException, match="tapeflow: machine 'no-such-machine'"):
        load_costs("no-such-machine")


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_pipeline_of_pass_objects_equals_its_text(variant: str):
    """`machines.pipeline` (costs loaded once by the caller) compiles as the text the
    benchmark harness writes for the same variant."""
    text = {"enzyme": "tapeflow-autodiff,tapeflow-lower-tape,tapeflow-cleanup",
            "regions": "tapeflow-autodiff,tapeflow-regions,tapeflow-lower-regions,tapeflow-cleanup",
            "tapeflow": 'tapeflow{spm-bytes=4096 depth=3 policy=cache-all machine="accel-salam" '
                        'set="l2.size=65536" cleanup=true}',
            "ideal-tape": "tapeflow-autodiff,tapeflow-lower-tape{ideal_tape=true},"
                          "tapeflow-cleanup"}[variant]  # fmt: skip
    options = TapeFlowOptions(spm_bytes=4096, depth=3, policy="cache-all", cleanup=True,
                              machine="accel-salam", set=("l2.size=65536",))  # fmt: skip
    costs = machine_costs(load_machine("accel-salam", ["l2.size=65536"]), "accel-salam")
    assert _text(pipeline(variant, options, costs)) == _text(text)
    assert _text(pipeline(variant, options)) == _text(text)


def test_scratchpad_bytes_defaults_to_and_is_bounded_by_the_machines():
    assert scratchpad_bytes(None, 32768, "m") == 32768
    assert scratchpad_bytes(4096, 32768, "m") == 4096
    with pytest.raises(ToolError, match="spm-bytes 65536 exceeds the spm.size 32768 of machine m"):
        scratchpad_bytes(65536, 32768, "m")
