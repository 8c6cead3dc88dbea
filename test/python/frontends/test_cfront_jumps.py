"""Forward goto, switch fall-through and `while (n--)` (issue 35 item 6): the gradients
of the lit tests' functions against finite differences, on the paths each construct
takes (a goto taken and not, every case entered, the countdown stepped in the test),
and bit-identical across the variants."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.cfront import check_fd, compile_and_differentiate, gradient_bits

from helpers.paths import ROOT

from tapeflow import runner

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

LIT = ROOT / "test" / "tapeflow-cc"
SRC = "\n".join(
    (LIT / f).read_text().replace("double demo(void)", f"static double demo{n}(void)")
    for n, f in enumerate(("goto-forward.c", "switch-fallthrough.c", "while-countdown.c"))
)
FUNCTIONS = ["scaled_sum", "terms", "tail_sum", "product"]
X = np.array([0.7, -1.3, 2.5, 0.4])


@pytest.fixture(scope="module")
def module():
    return compile_and_differentiate(SRC, functions=FUNCTIONS)


@pytest.mark.parametrize("cap", [5.0, 2.0, 0.5])  # no goto, goto at x[2], goto at x[0]
def test_goto_gradient(module, cap):
    arrays, scalars = check_fd(module, "scaled_sum", [X.copy(), 4, cap])
    stop = next((i for i, v in enumerate(X) if v > cap), None)
    # no goto: 0.5 * sum(x^2) + 1; a goto at `stop`: sum(x[:stop]^2) + 1
    want = X if stop is None else 2 * X * (np.arange(4) < stop)
    np.testing.assert_allclose(arrays[0], want)
    assert scalars[2] == 0.0


@pytest.mark.parametrize("degree", [2, 1, 7, 5, 4, 0])
def test_fall_through_gradient(module, degree):
    _, scalars = check_fd(module, "terms", [1.7, degree])
    want = {2: 2 * 1.7 + 1, 1: 1.0}.get(degree, 0.0)
    assert scalars[0] == pytest.approx(want)


@pytest.mark.parametrize("name", ["tail_sum", "product"])
def test_countdown_gradient(module, name):
    arrays, _ = check_fd(module, name, [X.copy(), 4])
    want = np.arange(1, 5) if name == "tail_sum" else np.prod(X) / X
    np.testing.assert_allclose(arrays[0], want)


def test_countdown_value_after_loop(module):
    """`n` is -1 after `while (n--)`, as in C."""
    x = X.copy()
    assert runner.run_function(module, "tail_sum", [x, 4]).results[0] == pytest.approx(
        float(np.sum(X * np.arange(1, 5))) - 1.0)


@pytest.mark.parametrize("variant", ["regions", "tapeflow"])
@pytest.mark.parametrize("name,args", [
    ("scaled_sum", [2.0]), ("tail_sum", []), ("product", []),
])
def test_variants_bit_identical(variant, name, args):
    call = [X, np.zeros(4), 4, *args, 1.0]
    assert gradient_bits(SRC, name, call, variant) == gradient_bits(SRC, name, call, "enzyme")
