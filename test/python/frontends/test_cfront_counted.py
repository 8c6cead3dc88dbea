"""Counted C loops that are not `for (i = a; i < b; i += c)` (issue 34 item 2): a
down-counting back-substitution over a triangular inner loop, stepped loops either way,
`i + 1 < n`, `!=`, and counters read after their loops. The C frontend makes them
`scf.for`, so regions, layers and streaming apply: their gradients match finite
differences and NumPy, and are bit-identical at every stage (Enzyme's layout, regions,
layers, stream, `tapeflow{mode=always}`), in the interpreter and natively.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

from helpers.cfront import check_fd, compile_and_differentiate, loss_fn
from helpers.paths import ROOT
from helpers.pipelines import apply, run, stages

from tapeflow.frontends.c import compile_c

# x solves U x = b by back-substitution (U upper triangular, rows from the last), then
# every other x from the last, squared, is the loss: the inner loop's trip count varies
# with the down-counting outer one (a ragged region). The lit test's kernel.
BACKSUB = (ROOT / "test" / "tapeflow-cc" / "for-down-regions.c").read_text()

# A smoothing sweep `i + 1 < n` over unsigned counters, a stride-3 down-counting tanh
# chain, a `!=` loop, a variable stride `m += s`, and the counters' values after their
# loops as indices.
STEPPED = """
#include <math.h>
#include <stddef.h>
double stepped(double *u, double *v, size_t n, int s) {
  size_t i;
  for (i = 1; i + 1 < n; i++)
    v[i] = u[i] * sin(u[i - 1] + u[i + 1]);
  double a = 0.5;
  int j;
  for (j = n - 1; j > 0; j -= 3)
    a = tanh(a * v[j] + u[j]);
  for (size_t k = n; k != 2; k--)
    a = a * cos(v[k - 1]);
  int m;
  for (m = 0; m < (int)n; m += s)
    a = a + sin(a * u[m]);
  return a + u[i] * u[j + 2] + u[m - s];
}
"""


def _backsub_reference(U, b, x, n):
    x = x.copy()
    for i in range(n - 1, -1, -1):
        s = b[i]
        for j in range(i + 1, n):
            s -= U[i * n + j] * x[j]
        x[i] = s / U[i * n + i]
    return float(sum(x[i] * x[i] for i in range(n - 1, -1, -2)))


def _stepped_reference(u, v, n, s):
    v = v.copy()
    for i in range(1, n - 1):
        v[i] = u[i] * np.sin(u[i - 1] + u[i + 1])
    a = 0.5
    j = n - 1
    while j > 0:
        a = np.tanh(a * v[j] + u[j])
        j -= 3
    for k in range(n, 2, -1):
        a = a * np.cos(v[k - 1])
    for m in range(0, n, s):
        a = a + np.sin(a * u[m])
    return float(a + u[n - 1] * u[j + 2] + u[m])


def _backsub_args(n: int = 6, seed: int = 2) -> list:
    rng = np.random.default_rng(seed)
    U = np.triu(rng.uniform(-1, 1, (n, n))) + 3.0 * np.eye(n)
    return [U.ravel(), rng.uniform(-1, 1, n), np.zeros(n), n]


def _stepped_args(n: int = 11, seed: int = 4) -> list:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, n), np.zeros(n), n, 4]


KERNELS = {
    "backsub": (BACKSUB, _backsub_args, _backsub_reference),
    "stepped": (STEPPED, _stepped_args, _stepped_reference),
}


def _grad_args(args: list) -> list:
    """`@kernel_grad`'s arguments: a zero shadow after each float array, then the seed."""
    out: list = []
    for a in args:
        out.append(a)
        if isinstance(a, np.ndarray):
            out.append(np.zeros_like(a))
    return [*out, 1.0]


@pytest.mark.parametrize("name", KERNELS)
def test_counted_loops_are_scf_for(name: str):
    src, _, _ = KERNELS[name]
    names = [op.name for op in compile_c(src, "test.c").walk()]
    assert "scf.while" not in names and names.count("scf.for") >= 3


@pytest.mark.parametrize("name", KERNELS)
def test_primal_matches_numpy_and_gradient_matches_fd(name: str):
    src, make, reference = KERNELS[name]
    args = make()
    module = compile_and_differentiate(src, functions=[name])
    assert loss_fn(module, name, args) == pytest.approx(reference(*args), rel=1e-12)
    arrays, _ = check_fd(module, name, args, rtol=1e-5, atol=1e-7)
    assert all(np.any(g != 0) for p, g in arrays.items() if p == 0)


@pytest.mark.parametrize("depth,records", [(1, 1), (2, 3), (3, 5)])
@pytest.mark.parametrize("name", KERNELS)
def test_bit_identical_every_stage(name: str, depth: int, records: int):
    """Every stage gives the autodiff IR's bits; the streamed ones keep no Enzyme cache."""
    src, make, _ = KERNELS[name]
    text = str(compile_c(src, "test.c"))
    args = _grad_args(make())
    ad = f"tapeflow-autodiff{{functions={name}}}"
    expected = run(apply(text, ad), f"{name}_grad", args)
    assert run(apply(text, f"{ad},tapeflow-lower-tape"), f"{name}_grad", args) == expected
    for pipeline in stages(name, depth, 64 * depth * records):
        module = apply(text, pipeline)
        assert run(module, f"{name}_grad", args) == expected, pipeline
        names = {op.name for op in module.walk()}
        assert "region.alloc" in names or "lower-regions" in pipeline, pipeline
        if "stream" in pipeline or "mode=always" in pipeline:
            assert "stream.commit" in names, pipeline
            assert not any(n.startswith("tape.") for n in names), pipeline


@pytest.mark.parametrize("name", KERNELS)
def test_native_identical(name: str):
    """Lowered to upstream MLIR and run natively, each stage gives the interpreter's bits."""
    from helpers.runs import assert_native_bits
    from tapeflow import native

    if not native.tools_available():
        pytest.skip("upstream MLIR 22 is not installed (apt-get install mlir-22-tools)")
    src, make, _ = KERNELS[name]
    text = str(compile_c(src, "test.c"))
    args = _grad_args(make())
    ad = f"tapeflow-autodiff{{functions={name}}}"
    for pipeline in [ad, *stages(name, 2, 128)[1:]]:
        assert_native_bits(apply(text, pipeline), f"{name}_grad", args, pipeline)
