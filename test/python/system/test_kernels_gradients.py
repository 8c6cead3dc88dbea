"""Gradients of every benchmark kernel (small size) are right, before and after
`tapeflow-lower-tape`.

For each kernel `@f`, `tapeflow-autodiff` builds `@f_grad` (each float memref argument
followed by its shadow, the loss seed last). We run it in the interpreter with zero
shadows and seed 1.0, straight from the AD pass and again after `tapeflow-lower-tape`, and
check:

- the two runs give bit-identical gradients (the lowering preserves meaning exactly);
- every entry of every float argument's gradient agrees with central finite differences of
  the primal run *in the interpreter*: fd_i = (f(x + h e_i) - f(x - h e_i)) / (2h), with
  h = 1e-6 * max(1, |x_i|). Error measure: |g_i - fd_i| / max(1, |fd_i|), i.e. relative
  where the derivative is large and absolute (on the scale of the losses, which are O(1))
  where it is small, so entries with a zero derivative (scratch buffers, unused table
  knots) need not match a noisy zero relatively. Tolerance 1e-6. With h = 1e-6 the
  truncation error (h^2 f'''/6) and the rounding error (~ 1e-16 |f| / h) are both well
  below 1e-7 for these kernels. The piecewise kernels (leaky ReLU, pwl table lookup) are
  smooth within 2h of every input at the fixed seed (checked by the test passing with
  several h; a kink within 2h would show as an O(1) error);
- for gemm, mlp, softmax cross-entropy and the pairwise energy, the gradient also equals
  a hand-derived NumPy gradient (rtol 1e-10).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp


from tapeflow.eval.bundled import KERNELS, make_inputs, reference_grad
from benchmarks.kernels.harness import interpreter, parse, run, to_memref
from tapeflow.registry import make_context

FD_REL = 1e-6
FD_STEP = 1e-6
NAMES = sorted(KERNELS)


@functools.cache
def _ad_text(name: str) -> str:
    from tapeflow.transforms.autodiff import AutodiffPass

    module = parse(KERNELS[name].source("small"))
    AutodiffPass().apply(make_context(), module)
    module.verify()
    return str(module)


def _ad_module(name: str) -> ModuleOp:
    return parse(_ad_text(name))


def _lowered_module(name: str) -> ModuleOp:
    from tapeflow.transforms.lower_tape import LowerTapePass

    module = _ad_module(name)
    LowerTapePass().apply(make_context(), module)
    module.verify()
    return module


def _grad_args(name: str, arrays: list[np.ndarray]) -> tuple[list, list[int]]:
    """Arguments of @f_grad and, per float argument, the position of its shadow."""
    args: list = []
    shadow_at: list[int] = []
    for spec, a in zip(KERNELS[name].args, arrays, strict=True):
        args.append(a.copy())
        if spec.is_float:
            shadow_at.append(len(args))
            args.append(np.zeros_like(a))
    args.append(1.0)  # seed of the f64 loss
    return args, shadow_at


def _run_grad(name: str, module: ModuleOp, arrays: list[np.ndarray]) -> dict[str, np.ndarray]:
    kernel = KERNELS[name]
    args, shadow_at = _grad_args(name, arrays)
    _, values = run(module, kernel.grad_entry, args)
    floats = [s for s in kernel.args if s.is_float]
    return {
        spec.name: np.array(values[pos].data, dtype=np.float64).reshape(arrays_shape)
        for spec, pos, arrays_shape in zip(
            floats, shadow_at, [a.shape for s, a in zip(kernel.args, arrays) if s.is_float],
            strict=True,
        )
    }


@functools.cache
def _gradients(name: str) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    arrays = make_inputs(name, "small", 0)
    return _run_grad(name, _ad_module(name), arrays), _run_grad(name, _lowered_module(name), arrays)


def _finite_differences(name: str, arrays: list[np.ndarray]) -> dict[str, np.ndarray]:
    kernel = KERNELS[name]
    interp = interpreter(parse(kernel.source("small")))

    def primal(xs: list[np.ndarray]) -> float:
        (loss,) = interp.call_op(kernel.entry, tuple(to_memref(a) for a in xs))
        return loss

    fd: dict[str, np.ndarray] = {}
    for pos, spec in enumerate(kernel.args):
        if not spec.is_float:
            continue
        g = np.zeros(arrays[pos].shape)
        for idx in np.ndindex(*arrays[pos].shape):
            x = arrays[pos][idx]
            h = FD_STEP * max(1.0, abs(x))
            plus = [a.copy() for a in arrays]
            minus = [a.copy() for a in arrays]
            plus[pos][idx] = x + h
            minus[pos][idx] = x - h
            g[idx] = (primal(plus) - primal(minus)) / ((x + h) - (x - h))
        fd[spec.name] = g
    return fd


def _fd_error(g: np.ndarray, fd: np.ndarray) -> float:
    return float(np.max(np.abs(g - fd) / np.maximum(1.0, np.abs(fd)), initial=0.0))


@pytest.mark.parametrize("name", NAMES)
def test_grad_function_shape(name: str):
    """@f_grad exists, takes (arg, shadow)* for floats, indices as is, and the seed last."""
    module = _ad_module(name)
    kernel = KERNELS[name]
    funcs = {op.sym_name.data: op for op in module.ops if op.name == "func.func"}
    assert kernel.grad_entry in funcs
    inputs = funcs[kernel.grad_entry].function_type.inputs.data
    expected = sum(2 if s.is_float else 1 for s in kernel.args) + 1
    assert len(inputs) == expected
    assert str(inputs[-1]) == "f64"


@pytest.mark.parametrize("name", NAMES)
def test_lowered_gradient_is_bit_identical(name: str):
    ad, lowered = _gradients(name)
    module = _lowered_module(name)
    assert not [op for op in module.walk() if op.dialect_name() == "tape"]
    assert ad.keys() == lowered.keys()
    for arg in ad:
        assert ad[arg].tobytes() == lowered[arg].tobytes(), (name, arg)


@pytest.mark.parametrize("name", NAMES)
def test_gradient_matches_finite_differences(name: str):
    arrays = make_inputs(name, "small", 0)
    ad, lowered = _gradients(name)
    fd = _finite_differences(name, arrays)
    kernel = KERNELS[name]
    for spec in kernel.args:
        if not spec.is_float:
            continue
        for which, grads in (("autodiff", ad), ("lowered", lowered)):
            err = _fd_error(grads[spec.name], fd[spec.name])
            assert err <= FD_REL, f"{name}: d/d{spec.name} ({which}) off by {err:.3g}"
        if spec.kind == "input":
            # Not a tautology: the loss depends on every input array.
            assert np.any(fd[spec.name] != 0.0), (name, spec.name)
        else:
            assert np.all(ad[spec.name] == 0.0), (name, spec.name)


@pytest.mark.parametrize("name", ["gemm", "mlp", "softmax_ce", "pairwise"])
def test_gradient_matches_hand_derived(name: str):
    arrays = make_inputs(name, "small", 0)
    expected = reference_grad(name, arrays)
    assert expected is not None
    ad, _ = _gradients(name)
    for arg, g in expected.items():
        np.testing.assert_allclose(ad[arg], g, rtol=1e-10, atol=1e-12, err_msg=f"{name}.{arg}")


def test_fd_check_can_fail():
    """A wrong gradient (one entry perturbed by 1e-5) is caught by the FD criterion."""
    ad, _ = _gradients("pairwise")
    fd = _finite_differences("pairwise", make_inputs("pairwise", "small", 0))
    assert _fd_error(ad["P"], fd["P"]) <= FD_REL
    wrong = ad["P"].copy()
    wrong[2, 1] += 1e-5 * max(1.0, abs(wrong[2, 1]))
    assert _fd_error(wrong, fd["P"]) > FD_REL


class _TapeAddresses:
    """Linear element addresses of the stores and loads into each tape buffer."""

    def __init__(self, buffers: set[int]):
        self.buffers = buffers
        self.stores: dict[int, list[int]] = {b: [] for b in buffers}
        self.loads: dict[int, list[int]] = {b: [] for b in buffers}

    @staticmethod
    def _linear(shape, indices) -> int:
        offset = 0
        for dim, i in zip(shape, indices, strict=True):
            offset = offset * dim + i
        return offset

    def will_interpret_op(self, op, args) -> None:
        if op.name == "memref.store" and id(op.operands[1].owner) in self.buffers:
            self.stores[id(op.operands[1].owner)].append(self._linear(args[1].shape, args[2:]))
        elif op.name == "memref.load" and id(op.operands[0].owner) in self.buffers:
            self.loads[id(op.operands[0].owner)].append(self._linear(args[0].shape, args[1:]))

    def did_interpret_op(self, op, results) -> None:
        pass


@pytest.mark.parametrize("name", NAMES)
def test_lowered_tape_address_stream_is_enzymes(name: str):
    """Each cache's buffer is written once per element in increasing address order by the
    forward sweep and read back in decreasing order by the reverse sweep."""
    from tapeflow.dialects import tape

    ad = _ad_module(name)
    n_caches = len([op for op in ad.walk() if isinstance(op, tape.InitOp)])
    module = _lowered_module(name)
    if any("tapeflow.tape_meta" in op.attributes for op in module.walk()):
        pytest.skip("growable tape (a trip count in memory): its buffer is reallocated, "
                    "test_lower_tape checks its growth")  # fmt: skip
    # The tape buffers: the allocs the pass marks `tapeflow.tape`.
    buffers = {id(op) for op in module.walk()
               if op.name == "memref.alloc" and "tapeflow.tape" in op.attributes}
    assert len(buffers) == n_caches
    trace = _TapeAddresses(buffers)
    args, _ = _grad_args(name, make_inputs(name, "small", 0))
    run(module, KERNELS[name].grad_entry, args, listeners=(trace,))
    for b in buffers:
        stores, loads = trace.stores[b], trace.loads[b]
        assert stores, "a cache never written"
        assert stores == list(range(len(stores))), "forward sweep: not 0, 1, 2, ..."
        assert loads == stores[::-1], "reverse sweep: not the same addresses, decreasing"


@pytest.mark.parametrize("name", NAMES)
def test_cache_all_policy_lowers_bit_identically(name: str):
    """The ablation policy caches much more (loads, index values, triangular nests): the
    lowered tape still gives exactly the gradient of the tape ops."""
    from tapeflow.transforms.autodiff import AutodiffPass
    from tapeflow.transforms.lower_tape import LowerTapePass

    module = parse(KERNELS[name].source("small"))
    AutodiffPass(policy="cache-all").apply(make_context(), module)
    text = str(module)
    lowered = parse(text)
    LowerTapePass().apply(make_context(), lowered)
    lowered.verify()
    arrays = make_inputs(name, "small", 0)
    before = _run_grad(name, parse(text), arrays)
    after = _run_grad(name, lowered, arrays)
    ad, _ = _gradients(name)
    for arg in before:
        assert before[arg].tobytes() == after[arg].tobytes(), (name, arg)
        np.testing.assert_allclose(before[arg], ad[arg], rtol=1e-12, atol=1e-14)
