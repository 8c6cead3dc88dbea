"""Enzyme's custom derivatives in C (issue 35 item 2): `__enzyme_register_gradient_*`
makes the AD call the user's augment and gradient instead of differentiating the
function. They are honoured exactly: a deliberately wrong one shows up in the gradient
(the derivative is the user's), a right one matches finite differences, and every stage
gives the bits of the autodiff IR."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

pytest.importorskip("clang.cindex")

from helpers.cfront import (  # noqa: E402
    check_fd,
    compile_and_differentiate,
    copy_args,
    enzyme_gradient,
)
from helpers.cli import run_main  # noqa: E402
from helpers.pipelines import stages  # noqa: E402
from helpers.runs import assert_native_bits  # noqa: E402
from tapeflow import runner  # noqa: E402
from tapeflow.frontends.c import compile_c  # noqa: E402
from tapeflow.tools import cc  # noqa: E402
from tapeflow.registry import get_all_passes, make_context  # noqa: E402
from xdsl.passes import PassPipeline  # noqa: E402

HERE = pathlib.Path(__file__).parent / "cfront_custom"


def _module(name: str):
    return compile_and_differentiate((HERE / name).read_text())


def test_a_wrong_custom_gradient_is_used_not_rederived():
    """square(x) = square_(x): the custom gradient sets d x = 13 whatever x (2 * x would
    be right), and the augment, not square_, runs in the forward sweep (y = 7)."""
    module = _module("combined.c")
    for x in (3.0, -0.5):
        _, grads = enzyme_gradient(module, "square", [x])
        assert grads[0] == 13.0
    text = str(module)
    assert "func.call @augment_square_(" in text and "func.call @gradient_square_(" in text
    assert "func.call @square_(" not in text.split("@square_grad")[1]


def test_a_right_custom_gradient_matches_finite_differences():
    """The inverse square root through the bit hack: its custom gradient (the exact
    derivative evaluated with the approximation) against finite differences of the
    hack, which is smooth between its kinks."""
    module = _module("rsqrt.c")
    A = np.array([1.0, 2.0, 3.0])
    arrays, _ = enzyme_gradient(module, "invmag", [A, 3])
    exact = -A / np.sum(A * A) ** 1.5
    assert np.allclose(arrays[0], exact, rtol=2e-3)


def test_custom_gradient_with_a_tape_in_a_loop_and_a_recursion():
    """`aug_soft` returns the primal result and a saved sigmoid (the tape, cached per
    call in the loop of a recursive function); `grad_soft` is the exact derivative."""
    module = _module("scaled.c")
    arrays, scalars = check_fd(module, "chain", [np.array([0.1, -0.2, 0.3, 0.4]), 1.5, 3])
    assert arrays[0].any() and scalars[1] != 0.0


def test_custom_gradient_of_local_arrays():
    """Local arrays passed to `total` (cast to `double *` at the call) get their shadows
    cast the same way: `grad_total`'s weights 1, 2, 3 (not the sum's 1, 1, 1) show in
    the gradient, by hand: t_i = w_i k + w_i^2 + k, result sum t_i^2 + k + k^2 + w_0."""
    module = _module("local_array.c")
    w, k = np.array([0.5, -1.0, 2.0, 0.25]), 1.5
    arrays, scalars = enzyme_gradient(module, "spread", [w, k, 4])
    t = w * k + w * w + k
    want_w = 2 * t * (1 * k + 2 * 2 * w) + np.array([3.0, 0.0, 0.0, 0.0])
    want_k = np.sum(2 * t * (1 * w + 3 * 1)) + 1 * 1 + 2 * 2 * k
    assert np.allclose(arrays[0], want_w, rtol=1e-12)
    assert scalars[1] == pytest.approx(want_k, rel=1e-12)


CASES = [
    ("combined.c", "square", [3.0]),
    ("local_array.c", "spread", [np.array([0.5, -1.0, 2.0, 0.25]), 1.5, 4]),
    ("rsqrt.c", "invmag", [np.array([1.0, 2.0, 3.0]), 3]),
    ("scaled.c", "chain", [np.array([0.1, -0.2, 0.3, 0.4]), 1.5, 3]),
]


@pytest.mark.parametrize("file,name,args", CASES, ids=[c[0] for c in CASES])
def test_every_stage_gives_the_same_bits(file, name, args):
    source = compile_c((HERE / file).read_text(), file, functions=[name])
    ad = f"tapeflow-autodiff{{functions={name}}}"
    want = None
    for spec in [ad, f"{ad},tapeflow-lower-tape", *stages(name, 2, 4096)]:
        module = source.clone()
        PassPipeline.parse_spec(get_all_passes(), spec).apply(make_context(), module)
        call = []
        for a in args:
            call.append(a.copy() if isinstance(a, np.ndarray) else a)
            if isinstance(a, np.ndarray):
                call.append(np.zeros_like(a))
        call.append(1.0)
        r = runner.run_function(module, f"{name}_grad", copy_args(call))
        got = [np.asarray(v).tobytes() for v in (*r.results, *r.arguments)]
        if want is None:
            want = got
        assert got == want, spec
    assert_native_bits(module, f"{name}_grad", call, "tapeflow native")


REFUSED = {
    "tape.c": (
        "double f(double x) { return x; }\n"
        "void *aug(double x) { double *t = 0; return t; }\n"
        "double grad(double x, double d, void *tape) { return d * *(double *)tape; }\n"
        "void *__enzyme_register_gradient_f[3] = {(void *)f, (void *)aug, (void *)grad};\n"
        "double g(double x) { return f(x); }\n",
        "tape.c:4:7: unsupported C: a custom derivative's tape that carries data",
    ),
    "pair.c": (
        "double f(double x) { return x; }\n"
        "void *__enzyme_register_gradient_f[2] = {(void *)f, (void *)f};\n"
        "double g(double x) { return f(x); }\n",
        "pair.c:2:7: unsupported C: __enzyme_register_gradient_f other than",
    ),
}


@pytest.mark.parametrize("file", sorted(REFUSED))
def test_refusals_are_one_located_line(tmp_path, file):
    text, message = REFUSED[file]
    path = tmp_path / file
    path.write_text(text)
    done = run_main(cc.main, [str(path), "--function", "g"])
    code, out, err = done.returncode, done.stdout, done.stderr
    assert code != 0 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], err
