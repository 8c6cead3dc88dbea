"""enzyme-autodiff (real Enzyme-MLIR, extra `enzyme`) and enzyme-import-tape.

Tests that run Enzyme-MLIR skip, naming the extra, when it is not installed; the dialect,
the activity rule and the error without the extra are tested everywhere."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from xdsl.utils.exceptions import PassFailedException

from tapeflow.baselines import enzyme_mlir
from tapeflow.eval import agreement
from tapeflow.registry import make_context
from tapeflow.runner import (
    find_function,
    gradient_layout,
    load_module,
    make_arguments,
    run_function,
    shadow_shapes,
)
from helpers.paths import ROOT

# One worker: the tests share Enzyme's gradients.
pytestmark = [pytest.mark.enzyme, pytest.mark.xdist_group("enzyme_mlir")]

SMALL = sorted((ROOT / "benchmarks" / "kernels" / "small").glob("*.mlir"))
needs_enzyme = pytest.mark.skipif(
    not enzyme_mlir.available(),
    reason="needs the optional extra `enzyme` (pip install --no-deps enzyme-ad==0.0.16)",
)

SIGNATURE = """
func.func @k(%x: memref<4xf64>, %idx: memref<4xi32>, %s: f64, %n: index,
             %c: memref<4xf64> {tapeflow.const}, %t: f64 {tapeflow.const}) -> (f64, index) {
  %z = arith.constant 0 : index
  func.return %s, %z : f64, index
}
"""


def test_activities_follow_runner_shadowed():
    module = load_module(SIGNATURE)
    f = find_function(module, "k")
    args, results = enzyme_mlir.activities(f)
    assert args == [
        "enzyme_dup", "enzyme_const", "enzyme_active", "enzyme_const", "enzyme_const",
        "enzyme_const",
    ]  # fmt: skip
    assert results == ["enzyme_active", "enzyme_const"]


def test_missing_extra_names_it(monkeypatch):
    monkeypatch.setattr(enzyme_mlir, "_library_path", lambda: None)
    enzyme_mlir.library.cache_clear()
    try:
        marked = SIGNATURE.replace("index) {", "index) attributes {tapeflow.autodiff} {")
        module = load_module(marked)
        with pytest.raises(PassFailedException, match="optional extra `enzyme`"):
            enzyme_mlir.EnzymeAutodiffPass().apply(make_context(), module)
    finally:
        enzyme_mlir.library.cache_clear()


def test_inline_locations_resolves_aliases_and_fused():
    text = (
        'func.func @f() {\n  "test.op"() : () -> () loc(#loc2)\n} loc(#loc1)\n'
        '#loc1 = loc("k.mlir":1:1)\n#loc3 = loc("k.mlir":7:5)\n'
        "#loc2 = loc(fused[#loc3, #loc1])\n"
    )
    out = enzyme_mlir.inline_locations(text)
    assert 'loc("k.mlir":7:5)' in out
    assert "#loc" not in out


def test_enzyme_error_is_one_located_line():
    module = load_module(SIGNATURE, "k.mlir")
    f = find_function(module, "k")
    diagnostic = (
        'loc("k.mlir":4:3): error: could not compute the adjoint for this operation '
        '%2 = "math.erf"(%1) : (f64) -> f64\n'
    )
    assert enzyme_mlir.enzyme_error(f, diagnostic) == (
        "k.mlir:4:3: Enzyme-MLIR cannot differentiate @k: could not compute the adjoint "
        "for this operation ('math.erf')"
    )


SQUARE = "func.func @f(%x: f64) -> f64 {\n  %y = arith.mulf %x, %x : f64\n  return %y : f64\n}\n"


@needs_enzyme
def test_one_process_serves_every_pipeline_and_a_dead_one_is_replaced():
    """Enzyme-MLIR's process is started once and kept (its library loads slower than it
    differentiates a kernel); its diagnostics are each request's own; a process that
    dies fails its request with how it ended, and the next request starts another."""
    first = enzyme_mlir.run_pipeline(SQUARE, "canonicalize")
    server = enzyme_mlir._server.process
    with pytest.raises(ValueError, match="Could not find function 'g'"):
        enzyme_mlir.run_pipeline(SQUARE, "enzyme-wrap{infn=g outfn=h argTys=enzyme_active "
                                 "retTys=enzyme_active mode=ReverseModeCombined}")  # fmt: skip
    assert enzyme_mlir.run_pipeline(SQUARE, "canonicalize") == first
    assert enzyme_mlir._server.process is server
    server.kill()
    server.wait()
    with pytest.raises(ValueError, match="process ended with signal 9"):
        enzyme_mlir.run_pipeline(SQUARE, "canonicalize")
    assert enzyme_mlir.run_pipeline(SQUARE, "canonicalize") == first
    assert enzyme_mlir._server.process is not server


@needs_enzyme
@pytest.mark.parametrize("kernel", SMALL, ids=lambda p: p.stem)
def test_gradient_agrees_with_ours(kernel):
    """Different programs, so not bit identity: 1e-12 relative error per entry."""
    errors = agreement.gradient_agreement(kernel.read_text(), kernel.stem, str(kernel))
    assert errors
    assert max(errors.values()) <= 1e-12, errors


def _run_grad(kernel: Path, passes) -> tuple[list, object]:
    """@kernel_grad's final arguments and results after `passes`, in the interpreter."""
    ctx = make_context()
    module = load_module(kernel.read_text(), str(kernel), ctx)
    for p in passes:
        p.apply(ctx, module)
    grad = find_function(module, f"{kernel.stem}_grad")
    mirror, shadows = gradient_layout(module, grad)
    args = make_arguments(
        grad, scalars=[1.0], zero=shadows, fill_positions=mirror,
        shape_of=shadow_shapes(module, grad),
    )  # fmt: skip
    result = run_function(module, grad.sym_name.data, args, ctx=ctx)
    return [*result.arguments, *result.results], module


def _tapeflow_passes():
    from tapeflow.transforms.layers import LayersPass
    from tapeflow.transforms.lower_tape import LowerTapePass
    from tapeflow.transforms.regions import RegionsPass
    from tapeflow.transforms.stream import StreamPass

    from tapeflow.baselines.enzyme_tape import ImportEnzymeTapePass

    return {
        "import": [ImportEnzymeTapePass()],
        "regions": [ImportEnzymeTapePass(), RegionsPass()],
        "streamed": [
            ImportEnzymeTapePass(),
            RegionsPass(),
            LayersPass(spm_bytes=1024),
            StreamPass(),
            LowerTapePass(),
        ],
    }


@functools.cache
def _enzymes_gradient(kernel: Path) -> list:
    """Enzyme-MLIR's gradient of `kernel` as it builds it, once for the three stages."""
    return _run_grad(kernel, [enzyme_mlir.EnzymeAutodiffPass()])[0]


@needs_enzyme
@pytest.mark.parametrize("stage", ["import", "regions", "streamed"])
@pytest.mark.parametrize("kernel", SMALL, ids=lambda p: p.stem)
def test_tapeflow_on_enzymes_tape_is_bit_identical(kernel, stage):
    """TapeFlow's passes on Enzyme-MLIR's own tape keep Enzyme's gradient bit for bit."""
    theirs = _enzymes_gradient(kernel)
    ours, module = _run_grad(kernel, [enzyme_mlir.EnzymeAutodiffPass(),
                                      *_tapeflow_passes()[stage]])  # fmt: skip
    assert not any(op.name.startswith("enzyme.") for op in module.walk())
    for a, b in zip(theirs, ours, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@needs_enzyme
def test_import_forwards_memref_references():
    """Small lstm: Enzyme pushes 21 buffers (one each, at every iteration); each pop is
    that buffer, so only its 11 caches of scalars become tape caches."""
    from tapeflow.dialects import enzyme, tape

    from tapeflow.baselines.enzyme_tape import ImportEnzymeTapePass

    kernel = next(k for k in SMALL if k.stem == "lstm")
    ctx = make_context()
    module = load_module(kernel.read_text(), str(kernel), ctx)
    enzyme_mlir.EnzymeAutodiffPass().apply(ctx, module)
    caches = [op.cache.type.element_type for op in module.walk() if isinstance(op, enzyme.InitOp)]
    assert len(caches) == 32
    ImportEnzymeTapePass().apply(ctx, module)
    imported = [op for op in module.walk() if isinstance(op, tape.InitOp)]
    assert len(imported) == len([t for t in caches if not t.name == "memref"]) == 11


@needs_enzyme
def test_simulated_as_its_tape_twin():
    """The hardware model charges enzyme.push/pop/load/store as tape.push/pop and
    memref.load/store: no op of Enzyme's output is left unclassified."""
    from tapeflow.simulate import simulate

    kernel = next(k for k in SMALL if k.stem == "pairwise")
    ctx = make_context()
    module = load_module(kernel.read_text(), str(kernel), ctx)
    enzyme_mlir.EnzymeAutodiffPass().apply(ctx, module)
    assert any(op.name == "enzyme.store" for op in module.walk())
    grad = find_function(module, "pairwise_grad")
    mirror, shadows = gradient_layout(module, grad)
    args = make_arguments(grad, scalars=[1.0], zero=shadows, fill_positions=mirror)
    report = simulate(module, "pairwise_grad", args).report
    assert report["ops"]["unclassified"] == {}
    assert report["ops"]["by_class"]["mem"] > 0


@needs_enzyme
@pytest.mark.parametrize("kernel", SMALL, ids=lambda p: p.stem)
def test_fast_path_takes_enzymes_gradient(kernel):
    """Strided views, caches of memrefs, cache buffers: the compiled fast path runs
    Enzyme-MLIR's gradient (no fallback) with the op-by-op model's whole report."""
    from helpers.sim import assert_identical
    from tapeflow.hwmodel.compiled.module import CompiledModule

    ctx = make_context()
    module = load_module(kernel.read_text(), str(kernel), ctx)
    enzyme_mlir.EnzymeAutodiffPass().apply(ctx, module)
    program = CompiledModule(module)  # compiles: no fallback
    grad = find_function(module, f"{kernel.stem}_grad")
    mirror, shadows = gradient_layout(module, grad)
    scalars = [1.0] * sum(1 for t in grad.function_type.inputs.data if t.name != "memref")
    args = make_arguments(grad, scalars=scalars, zero=shadows, fill_positions=mirror,
                          shape_of=shadow_shapes(module, grad))  # fmt: skip
    assert_identical(module, grad.sym_name.data, args, program=program)


FILL = """
func.func @f(%n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f64
  %m = memref.alloc(%n) : memref<2x?xf64>
  %c1 = arith.constant 1 : index
  memref.store %one, %m[%c1, %c0] : memref<2x?xf64>
  %cast = memref.cast %m : memref<2x?xf64> to memref<?x?xf64>
  enzyme.fill_zero %cast : memref<?x?xf64>
  %x = memref.load %m[%c1, %c0] : memref<2x?xf64>
  func.return %x : f64
}
"""


def test_output_cast_and_fill_zero_are_read_and_expanded():
    """Two forms of Enzyme's output xDSL 0.74 did not read: `memref.cast` in its custom
    form (read in its generic one), and `enzyme.fill_zero` (expanded into its stores)."""
    text = enzyme_mlir.inline_locations(FILL)
    assert '"memref.cast"(%m) : (memref<2x?xf64>) -> memref<?x?xf64>' in text
    module = load_module(text)
    f = find_function(module, "f")
    enzyme_mlir.expand_fill_zero(f)
    assert not any(op.name == "enzyme.fill_zero" for op in module.walk())
    assert sum(op.name == "scf.for" for op in module.walk()) == 2
    assert run_function(module, "f", [3]).results == [0.0]


OUTPUT = """#loc = loc(unknown)
#loc1 = loc("k.mlir":1:1)
module {
  func.func @f(%arg0: memref<3xf64> loc(unknown)) -> f64 {
    %c0 = arith.constant 0 : index loc(#loc2)
    %0 = memref.load %arg0[%c0] : memref<3xf64> loc(#loc3)
    return %0 : f64 loc(#loc1)
  } loc(#loc1)
  func.func private @f_grad(%arg0: memref<3xf64> loc(unknown), %arg1: memref<3xf64> loc(unknown), %arg2: f64 loc("k.mlir":1:1)) {
    %c0 = arith.constant 0 : index loc(#loc)
    %c3 = arith.constant 3 : index loc(#loc2)
    %0 = "enzyme.init"() : () -> !enzyme.Cache<memref<3xf64>> loc(#loc4)
    %t = memref.alloc() : memref<2xmemref<3xf64>> loc(#loc3)
    %m = memref.alloc(%c3) : memref<2x?xf64> loc(#loc5)
    %cast = memref.cast %m : memref<2x?xf64> to memref<?x?xf64> loc(#loc3)
    scf.for %arg3 = %c0 to %c3 step %c3 {
      %1 = memref.load %arg1[%arg3] : memref<3xf64> loc(#loc2)
      %2 = arith.addf %1, %arg2 : f64 loc(#loc4)
      memref.store %2, %arg1[%arg3] : memref<3xf64> loc(#loc6)
    } loc(#loc3)
    return loc(#loc1)
  } loc(#loc1)
} loc(#loc)
#loc2 = loc("k.mlir":2:3)
#loc3 = loc("k\\\\dir/k.mlir":3:3)
#loc4 = loc(fused[#loc3, #loc2])
#loc5 = loc("f"(#loc2))
"""


def test_read_output_reads_what_inline_locations_writes():
    """`read_output`, which parses Enzyme's output without substituting its location
    aliases, shares its types and skips the functions it gives back, gives the added
    functions the ops and locations that parsing `inline_locations`' text gives them (an
    escaped file name, a fused and a named location, an unknown one replaced by where the
    op is, an alias used but not defined, a buffer of buffers, a cache, a cast)."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import FileLineColLoc

    from tapeflow.diagnostics import parse_module

    def added(module):
        return [op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data != "f"]

    ctx = make_context()
    old = added(parse_module(ctx, enzyme_mlir.inline_locations(OUTPUT), "<enzyme-mlir>"))
    new = added(enzyme_mlir.read_output(ctx, OUTPUT, {"f"}))
    assert [op.sym_name.data for op in new] == ["f_grad"]
    pairs = list(zip(old[0].walk(), new[0].walk(), strict=True))
    assert all(str(a) == str(b) and a.location == b.location for a, b in pairs)
    where = {(at.filename.data, at.line.data) for _, b in pairs
             if isinstance(at := b.location, FileLineColLoc)}  # fmt: skip
    assert {("k\\dir/k.mlir", 3), ("k.mlir", 2), ("<enzyme-mlir>", 10)} <= where
