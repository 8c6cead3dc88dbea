"""Every benchmark kernel parses, verifies, and its interpreted primal loss equals NumPy's.

The NumPy references (`tapeflow/eval/bundled.py`) are written independently of the
MLIR (vectorised, other summation order), so agreement is to rounding: rtol 1e-12.
"""

from __future__ import annotations


import numpy as np
import pytest


from tapeflow.eval.bundled import KERNELS, make_inputs, reference
from benchmarks.kernels import generate
from benchmarks.kernels.harness import parse, run


@pytest.mark.parametrize("name", sorted(KERNELS))
@pytest.mark.parametrize("size", ["small", "default"])
def test_kernel_file_is_generated_and_verifies(name: str, size: str):
    kernel = KERNELS[name]
    text = kernel.source(size)
    assert text == generate.render(name, kernel.sizes[size]), "regenerate: generate.py"
    module = parse(text, str(kernel.path(size)))
    funcs = [op for op in module.ops if op.name == "func.func"]
    assert [f.sym_name.data for f in funcs] == [kernel.entry]
    assert "tapeflow.autodiff" in funcs[0].attributes
    # The argument list matches the manifest (types and shapes).
    arg_types = funcs[0].function_type.inputs.data
    assert len(arg_types) == len(kernel.args)
    for spec, t in zip(kernel.args, arg_types, strict=True):
        assert tuple(t.get_shape()) == spec.shape(kernel.sizes[size]), spec.name
        assert str(t.element_type) == ("i32" if spec.kind == "index" else "f64")
    assert [str(t) for t in funcs[0].function_type.outputs.data] == ["f64"]


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_primal_matches_numpy(name: str):
    kernel = KERNELS[name]
    for seed in (0, 1):
        arrays = make_inputs(name, "small", seed)
        expected = reference(name, arrays)
        module = parse(kernel.source("small"))
        (loss,), _ = run(module, kernel.entry, arrays)
        assert isinstance(loss, float)
        assert loss == pytest.approx(expected, rel=1e-12, abs=1e-300), (name, seed)
        assert expected != 0.0


def test_index_arrays_in_range():
    for name, kernel in KERNELS.items():
        for size in ("small", "default"):
            arrays = make_inputs(name, size, 3)
            for spec, a in zip(kernel.args, arrays, strict=True):
                if spec.kind != "index":
                    continue
                # cam_idx/pt_idx/labels index a dimension of their target array; lens
                # (ragged_rnn's sequence lengths) are trip counts up to that dimension.
                target = {"labels": ("Z", 1), "cam_idx": ("cams", 0), "pt_idx": ("pts", 0),
                          "lens": ("X", 1)}  # fmt: skip
                tname, dim = target[spec.name]
                bound = dict(zip([s.name for s in kernel.args], arrays))[tname].shape[dim]
                bound += spec.name == "lens"
                assert a.min() >= 0 and a.max() < bound, (name, spec.name)


def test_reference_detects_a_wrong_loss():
    # The comparison is not a tautology: perturbing one input changes the loss.
    arrays = make_inputs("gemm", "small", 0)
    base = reference("gemm", arrays)
    arrays[0][0, 0] += 1e-3
    assert reference("gemm", arrays) != pytest.approx(base, rel=1e-12)
    module = parse(KERNELS["gemm"].source("small"))
    (loss,), _ = run(module, "gemm", arrays)
    assert loss != pytest.approx(base, rel=1e-12)
    assert np.isfinite(loss)
