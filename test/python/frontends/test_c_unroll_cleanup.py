"""The C path's clean-up and unrolling keep gradients bit for bit (issue 29 item 2).

- Unrolling (`tapeflow-unroll`) copies iterations in order: on every bundled kernel (every
  loop marked with a factor of 3, which leaves remainders, and "full" where that is
  small) and on the gem5-SALAM C kernels (their own pragmas), the gradient of every
  variant is the rolled Enzyme layout's, bit for bit.
- The clean-up (`tapeflow.frontends.c.optimize`: canonicalize, cse, scalar promotion)
  folds no float op on a non-constant and changes only how many loads feed one value;
  the gradients of the salam kernels are the uncleaned program's, bit for bit. A merged
  load's adjoint sums its uses before the shadow update, so where one shadow entry also
  takes other iterations' contributions (a stencil's u[i-1], u[i], u[i+1]) the sum is
  associated differently: the reaction-diffusion gradient moves in its last bits
  (1e-14 of its largest entry at most; 0 to 14 ulp per entry at n = 64, T = 4).
- A C file's tape after the C path equals the tape after `cse,canonicalize` by hand
  (issue 30's reaction-diffusion case).
"""

from __future__ import annotations

import struct
from functools import cache

import numpy as np
import pytest
from helpers.paths import INPUTS

from tapeflow.eval.bundled import KERNELS as BUNDLED
from tapeflow.eval.suites import KERNELS as SALAM
from tapeflow.transforms.unroll import UNROLL_ATTR

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

VARIANTS = ("enzyme", "regions", "tapeflow")


def _passes(variant: str):
    from tapeflow.eval.jobs import tapeflow_options
    from tapeflow.machines import pipeline

    # mode=always streams every region; unrolled records are longer than a 256-byte budget
    return pipeline(variant, tapeflow_options(2048, 0, 2, mode="always"))


def _compiled(module, variant: str):
    from tapeflow.registry import make_context

    module = module.clone()
    for p in _passes(variant):
        p.apply(make_context(), module)
    module.verify()
    return module


def _arrays(module, entry: str, args) -> list[np.ndarray]:
    """Every array argument after `entry` ran on copies of `args`."""
    from benchmarks.kernels.harness import run

    _, values = run(module, entry, [a.copy() if isinstance(a, np.ndarray) else a for a in args])
    return [np.array(v.data, dtype=np.float64) for v in values if hasattr(v, "data")]


def _bits(module, entry: str, args) -> list[bytes]:
    """The bytes of every array argument after `entry` ran on copies of `args`."""
    return [struct.pack(f"<{a.size}d", *a.reshape(-1)) for a in _arrays(module, entry, args)]


def _unroll(module, mark) -> object:
    from tapeflow.registry import make_context
    from tapeflow.transforms.unroll import UnrollPass
    from xdsl.dialects import scf

    module = module.clone()
    for loop in module.walk():
        if isinstance(loop, scf.ForOp):
            attr = mark(loop)
            loop.attributes.pop(UNROLL_ATTR, None)
            if attr is not None:
                loop.attributes[UNROLL_ATTR] = attr
    UnrollPass().apply(make_context(), module)
    assert not any(UNROLL_ATTR in o.attributes for o in module.walk())
    return module


def _every_loop(loop):
    from tapeflow.transforms.analysis.constants import trip_count
    from xdsl.dialects.builtin import IntegerAttr, StringAttr, i64

    n = trip_count(loop)
    return StringAttr("full") if n is not None and n <= 4 else IntegerAttr(3, i64)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_unrolled_bundled_kernel_gradients_are_bit_identical(name):
    k = BUNDLED[name]
    rolled = k.load("small")
    unrolled = _unroll(rolled, _every_loop)
    assert str(unrolled) != str(rolled)
    args = k.grad_arguments("small", seed=5)
    want = _bits(_compiled(rolled, "enzyme"), k.grad_entry, args)
    for variant in VARIANTS:
        assert _bits(_compiled(unrolled, variant), k.grad_entry, args) == want, variant


@cache
def _salam(name: str, optimize: bool):
    from tapeflow.frontends.c import compile_c

    k = SALAM[name]
    return compile_c(k.path.read_text(), str(k.path), k.defines("small"), optimize=optimize)


def _salam_args(name: str):
    from tapeflow.eval.bundled import with_shadows

    k = SALAM[name]
    return with_shadows(k.args, k.inputs("small", seed=4))


PRAGMAS = ["logsum", "mass_spring", "matd", "mttkrp", "sddmm"]
"""The salam kernels whose C carries unroll pragmas (checked below on their translations,
not at collection: translating every kernel there cost each pytest process seconds)."""


def test_salam_kernels_carry_their_pragmas():
    assert sorted(n for n in SALAM if UNROLL_ATTR in str(_salam(n, False))) == PRAGMAS


@pytest.mark.slow
@pytest.mark.parametrize("name", PRAGMAS)
def test_salam_pragmas_unroll_bit_identically(name):
    raw = _salam(name, False)
    rolled = _unroll(raw, lambda loop: None)  # the attributes dropped
    unrolled = _unroll(raw, lambda loop: loop.attributes.get(UNROLL_ATTR))
    assert str(unrolled) != str(rolled)
    entry, args = SALAM[name].grad_entry, _salam_args(name)
    want = _bits(_compiled(rolled, "enzyme"), entry, args)
    for variant in VARIANTS:
        assert _bits(_compiled(unrolled, variant), entry, args) == want, variant


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SALAM))
def test_salam_cleanup_keeps_gradient_bits(name):
    raw = _unroll(_salam(name, False), lambda loop: loop.attributes.get(UNROLL_ATTR))
    entry, args = SALAM[name].grad_entry, _salam_args(name)
    want = _bits(_compiled(raw, "enzyme"), entry, args)
    for variant in VARIANTS:
        assert _bits(_compiled(_salam(name, True), variant), entry, args) == want, variant


def _tape_bytes(tmp_path, program: str, name: str) -> int:
    import json

    from helpers.cli import run_main
    from tapeflow.tools import sim

    path = tmp_path / f"{name}.mlir"
    path.write_text(program)
    rng = np.random.default_rng(0)
    inputs = tmp_path / "inputs.npz"
    np.savez(inputs, arg0=rng.uniform(-1, 1, 64), arg1=np.zeros(64), arg2=np.zeros(64),
             arg3=np.zeros(64))  # fmt: skip
    done = run_main(sim.main, [str(path), "--entry", "reaction_diffusion_grad", "--args", "64",
                               "4", "1.0", "--inputs", str(inputs), "--json"])  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["tape_bytes"]


@pytest.mark.parametrize("variant", ["enzyme", "tapeflow"])
def test_c_path_tape_equals_cse_canonicalize_by_hand(tmp_path, variant):
    """Issue 30's reaction-diffusion kernel: the C path keeps the tape that `tapeflow-cc
    -O0 k.c | tapeflow-opt -p 'cse,canonicalize,...'` keeps, less than the uncleaned."""
    from tapeflow.frontends.c import compile_c
    from tapeflow.registry import make_context
    from xdsl.transforms.canonicalize import CanonicalizePass
    from xdsl.transforms.common_subexpression_elimination import (
        CommonSubexpressionElimination,
    )

    path = INPUTS / "enzyme_layout" / "reaction_diffusion.c"
    c_path = _compiled(compile_c(path.read_text(), str(path)), variant)
    raw = compile_c(path.read_text(), str(path), optimize=False)
    uncleaned = _compiled(raw, variant)
    CommonSubexpressionElimination().apply(make_context(), raw)
    CanonicalizePass().apply(make_context(), raw)
    by_hand = _compiled(raw, variant)
    got = [_tape_bytes(tmp_path, str(m), n) for m, n in
           ((c_path, "c"), (by_hand, "hand"), (uncleaned, "raw"))]  # fmt: skip
    assert got[0] == got[1] < got[2]


def test_c_path_moves_a_stencil_gradient_in_its_last_bits_only():
    from tapeflow.frontends.c import compile_c

    path = INPUTS / "enzyme_layout" / "reaction_diffusion.c"
    rng = np.random.default_rng(1)
    args = [rng.uniform(-1, 1, 64), np.zeros(64), np.zeros(64), np.zeros(64), 64, 4, 1.0]
    entry = "reaction_diffusion_grad"
    clean, raw = (
        _arrays(_compiled(compile_c(path.read_text(), str(path), optimize=o), "enzyme"),
                entry, args)[1]
        for o in (True, False)
    )  # fmt: skip
    assert np.any(clean != raw)  # not bit-identical: the sums are associated differently
    assert np.max(np.abs(clean - raw)) <= 1e-14 * np.max(np.abs(raw))
