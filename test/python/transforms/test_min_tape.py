"""min-tape keeps Enzyme's tape on the two held-out shapes of issue 10, with gradients
checked against central finite differences.

- `Inputs/rnn_step.mlir`: z = W h + U x (two reduction loops), h' = tanh(z). One f64 per
  (t, i) is cached: z, not its two partial sums.
- `Inputs/pairwise_masked.mlir`: a `j != i` mask inside a time loop. The mask depends only
  on induction variables and is recomputed; d = X[i] - X[j], computed under it from
  memory the next step overwrites, goes on a static stack sized by the exact push count
  T*N*(N-1).
Tape bytes are those of `tapeflow-lower-tape`'s buffers (the Enzyme layout).
"""

from __future__ import annotations


from helpers import gradcheck
import numpy as np
import pytest
from tapeflow.dialects.tape import PushOp
from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType

from tapeflow.transforms.lower_tape import TAPE_ATTR, lower_tape
from helpers.paths import INPUTS



def _tape_bytes(text: str, policy: str = "min-tape") -> tuple[int, list[str]]:
    module = gradcheck.differentiate(text, policy=policy)
    pushed = [str(op.value.type) for op in module.walk() if isinstance(op, PushOp)]
    lower_tape(module)
    total = 0
    for op in module.walk():
        if isinstance(op, memref.AllocOp) and TAPE_ATTR in op.attributes:
            t = op.memref.type
            assert isinstance(t, MemRefType)
            width = 1 if str(t.element_type) == "i1" else 8
            total += int(np.prod(t.get_shape())) * width
    return total, pushed


def _rnn_args(rng: np.random.Generator) -> list[np.ndarray]:
    H = np.zeros((4, 4))
    H[0] = rng.uniform(-1, 1, 4)
    return [rng.uniform(-0.6, 0.6, (4, 4)), rng.uniform(-0.6, 0.6, (4, 3)),
            rng.uniform(-1, 1, (3, 3)), H]  # fmt: skip


@pytest.mark.parametrize("policy", ["min-tape", "cache-all"])
def test_rnn_step_gradient(policy: str):
    text = (INPUTS / "rnn_step.mlir").read_text()
    err, _ = gradcheck.check(text, "rnn", _rnn_args(np.random.default_rng(3)), policy=policy)
    assert err < 1e-6


def test_rnn_step_caches_z_only():
    """Enzyme's tape: one f64 per (t, i) = 3 * 4 * 8 bytes (it was 192: both sums)."""
    nbytes, pushed = _tape_bytes((INPUTS / "rnn_step.mlir").read_text())
    assert pushed == ["f64"]
    assert nbytes == 3 * 4 * 8


@pytest.mark.parametrize("policy", ["min-tape", "cache-all"])
def test_pairwise_masked_gradient(policy: str):
    text = (INPUTS / "pairwise_masked.mlir").read_text()
    X = np.random.default_rng(5).uniform(-1, 1, 4)
    err, _ = gradcheck.check(text, "pairwise_masked", [X], policy=policy)
    assert err < 1e-6


def test_pairwise_masked_tape_is_exact():
    """d per (t, i, j != i): 36 * 8 bytes, no i1 mask. It was X[i] per (t, i) (12 * 8),
    the mask per (t, i, j) (48 i1) and X[j] on a stack sized T*N*N (48 * 8): 528 bytes."""
    nbytes, pushed = _tape_bytes((INPUTS / "pairwise_masked.mlir").read_text())
    assert pushed == ["f64"]
    assert nbytes == 3 * 4 * 3 * 8


@pytest.mark.parametrize(
    ("file", "name", "args"),
    [
        ("rnn_step.mlir", "rnn", lambda: _rnn_args(np.random.default_rng(3))),
        ("pairwise_masked.mlir", "pairwise_masked",
         lambda: [np.random.default_rng(5).uniform(-1, 1, 4)]),
    ],
)
def test_lowered_tape_gives_the_same_gradients(file: str, name: str, args):
    """The exactly sized stacks hold every push: Enzyme's layout computes the gradients of
    the tape IR bit for bit."""
    text = (INPUTS / file).read_text()
    values = args()
    weights = {p: np.zeros_like(a) for p, a in enumerate(values)}
    tape_ir = gradcheck.differentiate(text)
    lowered = gradcheck.differentiate(text)
    lower_tape(lowered)
    expected, _ = gradcheck.gradient(tape_ir, name, values, [1.0], weights)
    got, _ = gradcheck.gradient(lowered, name, values, [1.0], weights)
    assert expected.keys() == got.keys()
    for p in expected:
        assert np.array_equal(expected[p], got[p])
