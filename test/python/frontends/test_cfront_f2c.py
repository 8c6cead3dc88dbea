"""The pointers and addresses of Enzyme's own C tests and of f2c's BLAS (issue 35): rows of
a pointer to pointers, pointer parameters the function moves, malloc'ed structs, `&a` of
an array, scalars living in a cell because a pointer holds their address, string literals
and one cell passed twice to pointers to const. Gradients against finite differences and
bit-identical across the TapeFlow variants."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.cfront import check_fd, compile_and_differentiate, compile_variant
from helpers.paths import ROOT

from tapeflow import runner

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

ROWS = (ROOT / "test" / "tapeflow-cc" / "pointer-rows.c").read_text()
F2C = (ROOT / "test" / "tapeflow-cc" / "f2c-style.c").read_text()
PP = np.random.default_rng(1).uniform(0.5, 1.5, (2, 5))
V = np.array([0.7, -1.3, 2.1])


@pytest.fixture(scope="module")
def rows():
    return compile_and_differentiate(ROWS, functions=["rows", "moved", "pair", "first_of"])


@pytest.fixture(scope="module")
def f2c():
    return compile_and_differentiate(F2C, functions=["run"])


def test_rows_of_a_pointer_to_pointers(rows):
    assert runner.run_function(rows, "rows", [PP.copy(), 5]).results[0] == pytest.approx(
        float(PP[0] @ PP[1]), rel=1e-15)
    shadows, _ = check_fd(rows, "rows", [PP.copy(), 5])
    assert np.allclose(shadows[0], PP[::-1])


def test_moved_pointer_parameters(rows):
    x, a = V.copy(), V[::-1].copy()
    assert runner.run_function(rows, "moved", [x.copy(), a.copy()]).results[0] == x[1] * a[1]
    shadows, _ = check_fd(rows, "moved", [x, a])
    assert list(shadows[0]) == [0.0, a[1], 0.0]


def test_malloced_struct_and_address_of_array(rows):
    _, grads = check_fd(rows, "pair", [1.25])
    assert grads[0] == 4 * 1.25 + 6  # d(2x (x + 3))/dx
    shadows, _ = check_fd(rows, "first_of", [V.copy()])
    assert list(shadows[0]) == [1.0, 1.0, 0.0]


@pytest.mark.parametrize("flag", ["N", "T"])
def test_cells_and_string_literals(f2c, flag):
    """`scale` multiplies by 3 through a pointer to its local, then by *alpha (one cell
    passed twice): d/dx is 3 whichever flag."""
    assert runner.run_function(f2c, "run", [0.5, ord(flag)]).results[0] == 1.5
    _, grads = check_fd(f2c, "run", [0.5, ord(flag)])
    assert grads[0] == 3.0


@pytest.mark.parametrize("variant", ["regions", "tapeflow"])
def test_variants_bit_identical(variant):
    def shadows(v):
        rows = runner.run_function(compile_variant(ROWS, "rows", v), "rows_grad",
                                   [PP.copy(), np.zeros_like(PP), 5, 1.0]).arguments[1]
        moved = runner.run_function(compile_variant(ROWS, "moved", v), "moved_grad",
                                    [V.copy(), np.zeros(3), V.copy(), np.zeros(3), 1.0])
        run = runner.run_function(compile_variant(F2C, "run", v), "run_grad", [0.5, 78, 1.0])
        return rows.tobytes() + moved.arguments[1].tobytes() + moved.arguments[3].tobytes() + \
            np.array(run.results).tobytes()

    assert shadows(variant) == shadows("enzyme")



STRUCT = (ROOT / "test" / "tapeflow-cc" / "struct-local-pointer-fields.c").read_text()


def test_local_struct_with_a_pointer_field():
    """run(x) = 3 x[n-1]^2 + 0 through the struct's malloc'ed field: d/dx[n-1] = 6 x[n-1]."""
    module = compile_and_differentiate(STRUCT, functions=["run"])
    x = V.copy()
    assert runner.run_function(module, "run", [x.copy(), 3]).results[0] == 3.0 * x[2] * x[2]
    shadows, _ = check_fd(module, "run", [x, 3])
    assert list(shadows[0]) == [0.0, 0.0, 6.0 * x[2]]
    bits = [runner.run_function(compile_variant(STRUCT, "run", v), "run_grad",
                                [x.copy(), np.zeros(3), 3, 1.0]).arguments[1].tobytes()
            for v in ("enzyme", "regions", "tapeflow")]
    assert bits[0] == bits[1] == bits[2]
