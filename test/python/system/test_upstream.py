"""Upstream MLIR accepts what TapeFlow emits (`tapeflow-opt --verify-upstream`).

The in-process check uses the upstream MLIR Python bindings that `iree-base-compiler`
ships (`pip install -e '.[mlir]'`); tests that need them skip, with the reason, where they
are absent. IREE registers its own `stream` dialect, so our dialects are renamed
`tapeflow_*` on export; these tests check that this is both needed and enough.
"""

from __future__ import annotations

import functools
import re
import shutil
import sys
from pathlib import Path

import pytest
from tapeflow.transforms.lower_to_std import LowerToStdPass
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.printer import Printer

from tapeflow import registry, upstream
from tapeflow.runner import load_module
from tapeflow.upstream import (
    UpstreamVerifyException,
    export_for_upstream,
    export_generic,
    rename_for_export,
    verify_with_upstream,
)


from tapeflow.eval.bundled import KERNELS
from tapeflow.tools import opt
from helpers.cli import run_main
from helpers.paths import ROOT

pytestmark = pytest.mark.xdist_group("upstream")  # both backends read one export

needs_bindings = pytest.mark.skipif(
    not upstream.bindings_available(),
    reason="upstream MLIR Python bindings missing (pip install -e '.[mlir]': iree-base-compiler)",
)
BACKENDS = [
    pytest.param(
        "bindings",
        marks=pytest.mark.skipif(
            not upstream.bindings_available(),
            reason="upstream MLIR Python bindings missing (pip install -e '.[mlir]')",
        ),
    ),
    pytest.param(
        "mlir-opt",
        marks=pytest.mark.skipif(
            shutil.which("mlir-opt-22") is None,
            reason="mlir-opt-22 missing (apt-get install -y mlir-22-tools)",
        ),
    ),
]

STREAM_IR = """
!R = !region.record<f64, i1>
!B = !region.tape<!R, #stream.spm>
!F = !stream.fifo<!R, 4>
func.func @s(%n: index, %t: index, %x: f64, %p: i1) {
  %buf = region.alloc count = 4 : !B
  %f = stream.fifo_alloc(%n) : !F
  stream.acquire_write %buf : !B
  region.write %buf[%t], %x, %p : !B
  %w = stream.commit %buf -> %f[%t] : !F
  stream.wait %w
  %r = stream.prefetch %f[%t] -> %buf : !F
  stream.acquire_read %buf, %r : !B
  %a, %b = region.read %buf[%t] : !B
  stream.release %buf : !B
  %c = tape.init : !tape.cache<f64>
  tape.push %c, %a : !tape.cache<f64>
  %d = tape.pop %c : !tape.cache<f64>
  tape.free %c : !tape.cache<f64>
  %m = memref.alloc() : memref<4xf64, #stream.spm>
  memref.dealloc %m : memref<4xf64, #stream.spm>
  stream.fifo_dealloc %f : !F
  region.dealloc %buf : !B
  func.return
}
"""

NOT_DOMINATED = """
func.func @f(%x: f64) -> f64 {
  %y = arith.addf %z, %x : f64
  %z = arith.mulf %x, %x : f64
  return %y : f64
}
"""


def _generic(module: ModuleOp) -> str:
    import io

    out = io.StringIO()
    Printer(stream=out, print_generic_format=True).print_op(module)
    return out.getvalue()


def test_rename_touches_only_our_op_names_types_and_attributes():
    text = (
        '%0 = "stream.commit"(%f, %t, %b) {note = "stream.commit", sym = "tape.x"} : '
        "(!stream.fifo<!region.record<f64>, 4>, index, !region.tape<!region.record<f64>, "
        '#stream.spm>) -> !stream.token\n"tape.push"(%c, %v) : (!tape.cache<f64>, f64) -> ()\n'
        '"upstream.stream.op"() : () -> ()'
    )
    renamed = rename_for_export(text)
    assert '"tapeflow_stream.commit"(' in renamed
    assert '"tapeflow_tape.push"(' in renamed
    assert "!tapeflow_stream.fifo<!tapeflow_region.record<f64>, 4>" in renamed
    assert "#tapeflow_stream.spm" in renamed
    assert "!tapeflow_stream.token" in renamed
    # String attributes and other dialects' names are left alone.
    assert 'note = "stream.commit"' in renamed
    assert 'sym = "tape.x"' in renamed
    assert '"upstream.stream.op"()' in renamed


@pytest.mark.parametrize("export", [export_generic, export_for_upstream])
def test_export_leaves_no_name_of_ours(export):
    module = load_module(STREAM_IR, "s.mlir")
    text = export(module)
    for prefix in (
        '"stream.',
        '"region.',
        '"tape.',
        "!stream.",
        "!region.",
        "!tape.",
        "#stream.",
        " stream.",
        " region.",
        " tape.",
    ):
        assert prefix not in text, prefix
    assert len(re.findall(r'"tapeflow_stream\.\w+"\(', text)) == 8
    assert str(module).count("stream.") > 0  # TapeFlow's own IR keeps its names


def test_export_keeps_upstream_custom_syntax():
    text = export_for_upstream(load_module(STREAM_IR, "s.mlir"))
    assert "func.func @s(" in text
    assert 'memref.alloc() : memref<4xf64, "tapeflow_stream.spm">' in text
    assert '"tapeflow_tape.push"(' in text


@pytest.mark.parametrize("backend", BACKENDS)
def test_our_dialects_verify_upstream_after_renaming(backend: str):
    verify_with_upstream(load_module(STREAM_IR, "s.mlir"), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_scratchpad_memory_space_needs_a_string_upstream(backend: str):
    module = load_module(STREAM_IR, "s.mlir")
    text = export_for_upstream(module)
    assert 'memref<4xf64, "tapeflow_stream.spm">' in text
    assert "#stream.spm" in str(module)  # our IR is unchanged
    if backend == "mlir-opt":  # upstream rejects an unregistered attribute as memory space
        opaque = text.replace('"tapeflow_stream.spm">', "#tapeflow_stream.spm>")
        with pytest.raises(UpstreamVerifyException, match="unsupported memory space"):
            verify_with_upstream(opaque, backend)


@needs_bindings
def test_iree_stream_dialect_is_why_we_rename():
    raw = _generic(load_module(STREAM_IR, "s.mlir"))
    with pytest.raises(UpstreamVerifyException, match=r"dialect `stream`"):
        verify_with_upstream(raw)


@pytest.mark.parametrize("backend", BACKENDS)
def test_upstream_finds_what_xdsl_does_not(backend: str):
    module = load_module(NOT_DOMINATED, "d.mlir")  # xDSL 0.74 verifies it
    with pytest.raises(UpstreamVerifyException, match=r"d\.mlir:3:3: .*does not dominate"):
        verify_with_upstream(module, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_upstream_rejects_unparsable_text(backend: str):
    with pytest.raises(UpstreamVerifyException, match="upstream MLIR rejects"):
        verify_with_upstream('"func.return"(%undefined) : (f64) -> ()', backend)


def test_missing_bindings_and_tools_give_the_install_hints(monkeypatch: pytest.MonkeyPatch):
    def no_bindings():
        raise ImportError("No module named 'iree'")

    monkeypatch.setattr(upstream, "_ir", no_bindings)
    with pytest.raises(UpstreamVerifyException, match=r"pip install -e '\.\[mlir\]'"):
        verify_with_upstream(load_module(NOT_DOMINATED), "bindings")
    monkeypatch.setattr(upstream, "_mlir_opt", lambda: None)
    with pytest.raises(UpstreamVerifyException, match=r"mlir-22-tools"):
        verify_with_upstream(load_module(NOT_DOMINATED), "mlir-opt")
    with pytest.raises(UpstreamVerifyException, match=r"\[mlir\].*mlir-22-tools"):
        verify_with_upstream(load_module(NOT_DOMINATED))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dialect", ["tape", "region", "stream"])
def test_dialect_round_trip_files_verify_upstream(dialect: str, backend: str):
    path = ROOT / "test" / "dialects" / dialect / "ops.mlir"
    text = path.read_text()
    for chunk in text.split("// -----"):
        if "=" in chunk or '"' in chunk:
            verify_with_upstream(load_module(chunk, str(path)), backend)


STAGES = {
    "primal": "",
    "autodiff": "tapeflow-autodiff",
    "lower-tape": "tapeflow-autodiff,tapeflow-lower-tape",
    "regions": "tapeflow-autodiff,tapeflow-regions",
    "layers": "tapeflow-autodiff,tapeflow-regions,tapeflow-layers{spm-bytes=256}",
    "stream": "tapeflow-autodiff,tapeflow-regions,tapeflow-layers{spm-bytes=256},"
    "tapeflow-stream{depth=2}",
}


def _stage(name: str, spec: str) -> ModuleOp:
    kernel = KERNELS[name]
    module = load_module(kernel.source("small"), str(kernel.path("small")))
    if spec:
        passes = registry.get_all_passes()
        PassPipeline.parse_spec(passes, spec).apply(registry.make_context(), module)
    return module


@functools.cache
def _exported(name: str, stage: str) -> tuple[str, str]:
    """The stage and its lowering as upstream reads them (`export_for_upstream`), made once
    for both backends."""
    module = _stage(name, STAGES[stage])
    staged = export_for_upstream(module)
    LowerToStdPass().apply(registry.make_context(), module)
    return staged, export_for_upstream(module)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("stage", list(STAGES))
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_stage_and_its_lowering_verify_upstream(name: str, stage: str, backend: str):
    staged, lowered = _exported(name, stage)
    verify_with_upstream(staged, backend)
    verify_with_upstream(lowered, backend)


@pytest.mark.skipif(
    not upstream.bindings_available() and shutil.which("mlir-opt-22") is None,
    reason="neither the upstream bindings (pip install -e '.[mlir]') nor mlir-opt-22",
)
@pytest.mark.slow
def test_tapeflow_opt_verify_upstream_cli(tmp_path: Path):
    exe = Path(sys.executable).parent / "tapeflow-opt"
    assert exe.exists(), "tapeflow-opt is not installed beside python (pip install -e .)"
    good = tmp_path / "good.mlir"
    good.write_text(STREAM_IR)
    done = run_main(opt.main, [str(good), "--verify-upstream"])
    assert done.returncode == 0, done.stderr
    assert "stream.commit" in done.stdout  # the output keeps our names
    bad = tmp_path / "bad.mlir"
    bad.write_text(NOT_DOMINATED)
    done = run_main(opt.main, [str(bad), "--verify-upstream", "-o", str(tmp_path / "out.mlir")])
    assert done.returncode == 1
    assert done.stderr.startswith("error: upstream MLIR rejects the module")
    assert f"{bad}:3:3: operand #0 does not dominate this use" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out.mlir").exists()
    # Without the flag, the same file passes (xDSL alone does not check dominance).
    done = run_main(opt.main, [str(bad)])
    assert done.returncode == 0
