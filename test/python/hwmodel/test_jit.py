"""numba loop kernels of the fast path (`tapeflow.hwmodel.jit`) against the op-by-op path.

With kernels forced on (`Trace.jit_after = 0`, `Trace.jit_min_ops = 0`: every loop nest
in the kernel subset runs compiled from its first entry), the whole report, results and
memref contents must be identical to the op-by-op model's, with phase windows ending
inside kernels; failing checks inside kernels give the interpreter's error. The runtime
helpers are compared with the Python originals bit for bit on special values.
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

pytest.importorskip("numba", reason="the JIT path needs numba (extra 'fast')")

from tapeflow import runner  # noqa: E402
from tapeflow.hwmodel.compiled import module as C  # noqa: E402
from tapeflow.hwmodel import jit, jit_runtime  # noqa: E402
from tapeflow.semantics import HELPERS  # noqa: E402
from tapeflow.hwmodel.config import load_machine  # noqa: E402

from fuzz.program import SIM_FEATURES, generate, sim_arguments  # noqa: E402
from helpers.sim import kernel_names, outcomes_identical, stage_module  # noqa: E402


@pytest.fixture(autouse=True)
def kernels_always(monkeypatch: pytest.MonkeyPatch):
    """Every kernel compiled at its first entry, or loaded from numba's cache (the user's,
    as `hwmodel.jit` keeps it: a kernel is named by its source and the runtime's, so any
    change to either compiles it anew, and numba recompiles for another numba)."""
    monkeypatch.setattr(C.Trace, "jit_after", 0)
    monkeypatch.setattr(C.Trace, "jit_min_ops", 0)
    monkeypatch.setenv("TAPEFLOW_JIT", "1")


def compare(module, entry: str, args, machine=None, batch: int = 1 << 16) -> C.CompiledModule:
    """Op-by-op and kernel runs agree; returns the compiled program (its kernels)."""
    program = C.CompiledModule(module)
    outcomes_identical(module, entry, args, machine, batch, program)
    return program


NESTED = {"gemm", "mlp", "lstm", "conv2d", "mass_spring", "jacobi2d"}
"""Kernels whose hot loop nests are in the kernel subset at both stages."""


@pytest.mark.slow
@pytest.mark.parametrize("stage", ["lower-tape", "tapeflow"])
@pytest.mark.parametrize("name", kernel_names())
def test_kernel_stage_identical_with_loop_kernels(name: str, stage: str):
    module, entry, args = stage_module(name, stage)
    program = compare(module, entry, args)
    ran = [k for k in program.kernels if k.runs]
    assert not [k.failed for k in program.kernels if k.failed]  # numba typed every kernel
    if name in NESTED:
        assert ran, [why for _, why in program.not_kernels]
    # Phase windows ending inside kernels (bulk loops and loop ends), across batches.
    win = load_machine(overrides=["core.window_ops=61"])
    compare(module, entry, args, win, batch=97)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(18))
def test_random_programs_with_loop_kernels(seed: int):
    """The simulator tests' programs (about 7 loops each: 18 of them compile more loop
    kernels than the 36 smaller programs of the generator they replaced)."""
    program = generate(seed, SIM_FEATURES)
    compare(runner.load_module(program.render(), "r.mlir"), "f", sim_arguments(program), batch=7)


OUT_OF_BOUNDS = """
func.func @f(%a: memref<50xf64>, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %a[%i] : memref<50xf64>
    %t = arith.addf %acc, %v : f64
    scf.yield %t : f64
  }
  func.return %s : f64
}
"""


@pytest.mark.slow
def test_failing_check_inside_a_kernel_is_the_interpreters_error():
    """The bound is only known at run time: the check runs inside the kernel, fails at
    iteration 50 and reports what the op-by-op run reports."""
    module = runner.load_module(OUT_OF_BOUNDS, "oob.mlir")
    program = compare(module, "f", [np.arange(50.0), 60])
    assert program.kernels and program.kernels[0].errors
    ok = compare(module, "f", [np.arange(50.0), 50])  # in bounds: the kernel's result
    assert ok.kernels[0].runs == 1


def test_jit_off_compiles_no_kernel(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TAPEFLOW_JIT", "0")
    program = C.CompiledModule(runner.load_module(OUT_OF_BOUNDS, "oob.mlir"))
    assert program.kernels == []


def test_a_statement_is_taken_by_its_kind_not_its_text():
    """A kernel is built from the emitter's statement kinds: the same text without a kind
    (a statement the emitter did not mark as taken) refuses the nest."""
    loop = (0, jit.St("for i in range(0, 3, 1):", "py", (), ("i",)))
    step = jit.St("c = c + x", "py", ("c", "x"), ("c",))
    kernel = jit.nest_kernel([loop, (1, step)], ["c"], {}, [], 1, {})
    assert "        c = c + x" in kernel.source.splitlines() and kernel.params == ["x"]
    with pytest.raises(jit.NotAKernel):
        jit.nest_kernel([loop, (1, jit.St(step.text))], ["c"], {}, [], 1, {})


SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-310, -1e-310, 3.4e38, 3.5e38, 1e308, -1e308, 1e300,
           -1e300, 700.0, 710.0, -750.0, math.inf, -math.inf, math.nan, -math.nan, 2.0**-149,
           1 / 3]  # fmt: skip


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


@pytest.mark.parametrize("name", ["_divf", "_maxnum", "_minnum", "_maximumf", "_minimumf"])
def test_binary_float_helpers_bit_identical(name: str):
    original = HELPERS[name]
    ported = getattr(jit_runtime, name)
    for x in SPECIAL:
        for y in SPECIAL:
            assert bits(ported(x, y)) == bits(original(x, y)), (name, x, y)


def test_f32_and_wrap_helpers_identical():
    helpers = HELPERS
    for x in SPECIAL:
        assert bits(jit_runtime._f32(x)) == bits(helpers["_f32"](x)), x
    for v in (0, 1, -1, 127, 128, -129, 2**31, 2**31 - 1, -(2**31) - 1, 2**40 + 5):
        for w in (1, 8, 16, 32, 64):
            assert jit_runtime._wrap(v, w) == helpers["_wrap"](v, w), (v, w)
        for wi, wo in ((32, 64), (64, 32), (8, 64), (64, 8), (32, 32), (64, 64), (1, 64)):
            x = helpers["_wrap"](v, wi)
            assert jit_runtime._index_cast(x, wi, wo) == helpers["_index_cast"](x, wi, wo)


@pytest.mark.parametrize("name", sorted(jit.MATH))
def test_libm_calls_bit_identical(name: str):
    """numba's math.* against the generated code's `_m_*` (CPython's libm, NumPy where
    CPython raises)."""
    import numba

    call = jit.MATH[name]
    fn = numba.njit(eval(f"lambda x: {call}(x)", {"math": math, call: getattr(jit_runtime, call, None)}))
    original = HELPERS[name]
    for x in [*SPECIAL, 0.1, 2.5, -3.7, 20.0, -20.0, 1e-8]:
        assert bits(fn(x)) == bits(original(x)), (name, x)


FPTOSI = """
func.func @f(%a: memref<8xf64>, %out: memref<8xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %a[%i] : memref<8xf64>
    %k = arith.fptosi %v : f64 to i32
    memref.store %k, %out[%i] : memref<8xi32>
  }
  func.return
}
"""


@pytest.mark.parametrize("bad", [None, 2147483648.0, -2147483649.0, math.nan, math.inf])
def test_fptosi_in_a_kernel(bad):
    """Truncation toward zero in range (-2^31 - 1, 2^31) inside the kernel; NaN, inf and
    values out of range stop it with the interpreter's error and its value."""
    a = np.array([0.5, -0.5, 2.9, -2.9, 2147483647.9, -2147483648.9, 7.0, 1e-300])
    if bad is not None:
        a[5] = bad
    program = compare(runner.load_module(FPTOSI, "f.mlir"), "f", [a, np.zeros(8, np.int32)])
    assert program.kernels[0].runs == 1


def test_one_capacity_check_per_run_of_accesses():
    """The load and the store of a loop body run one after the other (the check between
    them leaves the kernel if it fails): one capacity check of `_acc` covers both."""
    a = np.array([0.5, -0.5, 2.9, -2.9, 1.0, 2.0, 7.0, 1e-300])
    program = compare(runner.load_module(FPTOSI, "f.mlir"), "f", [a, np.zeros(8, np.int32)])
    source = program.kernels[0].source
    assert program.kernels[0].runs == 1
    assert source.count("len(_acc)") == 1 and "if _p + 2 > len(_acc):" in source


@pytest.mark.parametrize("shape", [(4,), (4, 3)])
def test_grow_keeps_the_first_rows(shape):
    """`_grow` doubles the rows, or gives as many as asked for, and keeps the first `p`."""
    a = np.arange(math.prod(shape), dtype=np.int64).reshape(shape)
    b = jit_runtime._grow(a, 3, 11)
    assert b.shape == (11, *shape[1:]) and (b[:3] == a[:3]).all()
    assert jit_runtime._grow(a, 2, 5).shape == (8, *shape[1:])


def test_charge_drops_window_additions_of_none():
    """A segment of no charged ops leaves the phase window as it is: no statement."""
    kernel = jit.LoopKernel("    _wn[0] += @@C0@@\n    _wn[0] += n3 * @@C1@@\n"
                            "    _wn[0] += n4 * @@C0@@\n    x = @@C1@@\n", [], [])  # fmt: skip
    kernel.charge([0, 5])
    assert kernel.source == "    _wn[0] += n3 * 5\n    x = 5\n"
