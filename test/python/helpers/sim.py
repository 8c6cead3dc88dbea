"""Helpers shared by the simulator tests (test_compiled_sim, test_jit, test_hwmodel_machine)
and the fuzzer: compare two runs or reports exactly, build a bundled kernel at a
pipeline stage. (Their random programs come from the fuzzer's generator,
`fuzz.program.generate(seed, SIM_FEATURES)`.)
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import InterpretationError

from tapeflow import runner
from tapeflow.hwmodel.compiled.module import CompiledModule
from tapeflow.simulate import simulate, simulate_fast
from tapeflow.registry import get_all_passes, make_context

# ---------------------------------------------------------------------------------------
# Exact comparison


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """The same bytes, but where both elements are NaN: there NaN-ness only. An op with
    two NaN operands may give either (IEEE leaves it open, `tapeflow.semantics`), and one
    executor is not even consistent: CPython's float + and * give the second operand's NaN,
    the specialised bytecode a hot loop switches to (and numba) the first."""
    if a.tobytes() == b.tobytes():
        return True
    if a.dtype.kind not in "fc":
        return False
    both = np.isnan(a) & np.isnan(b)
    a, b = a.copy(), b.copy()
    a[both] = b[both] = 0
    return a.tobytes() == b.tobytes()


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Every place where two reports (nested dicts/lists/arrays/numbers) differ (a NaN
    equals any NaN: `same_bits`)."""
    out: list[str] = []
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                out.append(f"{path}.{key}: missing on one side")
            else:
                out += differences(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype or not same_bits(a, b):
            out.append(f"{path}: arrays differ")
    elif isinstance(a, list | tuple) and isinstance(b, list | tuple):
        if len(a) != len(b):
            out.append(f"{path}: lengths {len(a)} != {len(b)}")
        else:
            for i, (x, y) in enumerate(zip(a, b)):
                out += differences(x, y, f"{path}[{i}]")
    elif type(a) is not type(b) and not (
        isinstance(a, int | float) and isinstance(b, int | float) and type(a) is not bool
    ):
        out.append(f"{path}: types {type(a).__name__} != {type(b).__name__}")
    elif isinstance(a, float) and np.isnan(a):
        if not (isinstance(b, float) and np.isnan(b)):
            out.append(f"{path}: {a!r} != {b!r}")
    elif a != b or (isinstance(a, float) and repr(a) != repr(b)):
        out.append(f"{path}: {a!r} != {b!r}")
    return out


def both(module, entry: str, args, machine=None, fast_batch: int = 1 << 16, ref=None,
         program: CompiledModule | None = None):  # fmt: skip
    """Runs the op-by-op (unless its result `ref` on the same machine is given) and the
    compiled simulation (of `program`, `module` compiled, when given) on copies of `args`."""
    if ref is None:
        ref = simulate(module, entry, copy.deepcopy(args), machine)
    fast = simulate_fast(program or module, entry, copy.deepcopy(args), machine,
                         batch=fast_batch)  # fmt: skip
    return ref, fast


def assert_identical(module, entry: str, args, machine=None, fast_batch: int = 1 << 16,
                     ref=None, program: CompiledModule | None = None):  # fmt: skip
    """The compiled run equals the op-by-op one exactly. `ref`: the op-by-op result of an
    earlier call on the same module, arguments and machine (it is deterministic, and the
    interpreter costs most of a comparison), e.g. to compare another `fast_batch`.
    `program`: `module` compiled once (`CompiledModule`) for a test's several runs."""
    ref, fast = both(module, entry, args, machine, fast_batch, ref, program)
    diffs = differences(ref.report, fast.report)
    diffs += differences(ref.run.results, fast.run.results, "results")
    diffs += differences(ref.run.arguments, fast.run.arguments, "arguments")
    assert not diffs, "\n".join(diffs[:20])
    return ref, fast


def outcome(run: Any) -> tuple[str, Any]:
    try:
        return "ok", run()
    except InterpretationError as error:
        return "error", str(error)


def outcomes_identical(module, entry: str, args, machine=None, batch: int = 1 << 16,
                       program: CompiledModule | None = None, context: str = "") -> None:
    """The op-by-op and fast runs (of `program` when given, else of `module`) both fail
    with the same message, or agree on values, memref contents and the whole report."""
    ref = outcome(lambda: simulate(module, entry, copy.deepcopy(args), machine))
    fast = outcome(lambda: simulate_fast(program or module, entry, copy.deepcopy(args),
                                          machine, batch=batch))  # fmt: skip
    assert ref[0] == fast[0], f"{context}: {ref[1]} / {fast[1]}"
    if ref[0] == "error":
        assert ref[1] == fast[1], context
        return
    diffs = differences(ref[1].report, fast[1].report)
    diffs += differences(ref[1].run.results, fast[1].run.results, "results")
    diffs += differences(ref[1].run.arguments, fast[1].run.arguments, "arguments")
    assert not diffs, f"{context}:\n" + "\n".join(diffs[:20])


# ---------------------------------------------------------------------------------------
# The benchmark kernels at their small size, through each stage of the pipeline.

STAGES = {
    "primal": None,
    "autodiff": "tapeflow-autodiff",
    "lower-tape": "tapeflow-autodiff,tapeflow-lower-tape",
    "ideal-tape": "tapeflow-autodiff,tapeflow-lower-tape{ideal_tape=true}",
    "regions": "tapeflow-autodiff,tapeflow-regions",
    "stream-d1": "tapeflow-autodiff,tapeflow-regions,tapeflow-layers{spm-bytes=64 depth=1},"
    "tapeflow-stream{depth=1}",
    "stream-d2": "tapeflow-autodiff,tapeflow-regions,tapeflow-layers{spm-bytes=2048},"
    "tapeflow-stream",
    "tapeflow": "tapeflow{mode=always}",
}


def kernel_names() -> list[str]:
    from tapeflow.eval.bundled import KERNELS

    return list(KERNELS)


def stage_module(name: str, stage: str):
    from tapeflow.eval.bundled import KERNELS

    kernel = KERNELS[name]
    module = runner.load_module(kernel.source("small"), f"{name}.mlir")
    spec = STAGES[stage]
    if spec is None:
        return module, kernel.entry, kernel.inputs("small")
    passes = get_all_passes()
    PassPipeline.parse_spec(passes, spec).apply(make_context(), module)
    module.verify()
    fn = runner.find_function(module, kernel.grad_entry)
    scalars = [t for t in fn.function_type.inputs.data if not isinstance(t, MemRefType)]
    args = runner.make_arguments(fn, seed=0, scalars=[1.0] * len(scalars))
    return module, kernel.grad_entry, args
