"""NaNs are the same bits in every executor on every x86-64: a NaN made from non-NaN
operands is the table's one `NAN`, whatever NumPy or libm (the reference's fallbacks,
numba's math) give on the CPU the suite runs on; a NaN operand propagates alike.

Every float entry of `tapeflow.semantics.SCALARS` runs over special and out-of-domain
operands (+-0, +-inf, NaNs, negatives, huge, tiny) in the interpreter, the fast path's
generated code (f64 and f32) and its numba loop kernels (f64: the only memrefs they
take); the results must be the same bits, and again with NumPy made to answer +nan as
it does on another CPU. Natively (upstream MLIR) made NaNs are `NAN` too.
"""

from __future__ import annotations

import itertools
import math
import struct
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import arith, math as xmath

from tapeflow import native, runner
from tapeflow.hwmodel.compiled import module as C
from tapeflow.hwmodel import jit
from tapeflow.semantics import NAN, SCALARS
from tapeflow.simulate import simulate_fast


def bits(x: float) -> str:
    return struct.pack(">d", x).hex()


def from_bits(h: str) -> float:
    return struct.unpack(">d", bytes.fromhex(h))[0]


POSITIVE_NAN = from_bits("7ff8000000000000")
PAYLOAD_NAN = from_bits("7ff80000deadbeef")

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -3.7, 1e308, -1e308, 1e-310, 710.0, -750.0,
           math.inf, -math.inf, NAN, POSITIVE_NAN, PAYLOAD_NAN]  # fmt: skip


def test_nan_is_x86s_default_nan():
    assert bits(NAN) == "fff8000000000000"


def test_hardware_arithmetic_gives_nan():
    """CPython's +, -, *, / (the interpreter's and the generated code's addf, subf, mulf,
    divf) use SSE, whose invalid result is x86-64's default NaN on every x86-64: `NAN`."""
    inf = math.inf
    for r in (inf - inf, inf + -inf, 0.0 * inf, inf / inf, inf * 0.0 + 1.0):
        assert bits(r) == bits(NAN)


def test_positive_nan_from_numpy_is_canonical(monkeypatch):
    """NumPy's log(-1.0) is +nan on some x86-64 CPUs (an AMD EPYC) and -nan on others."""
    monkeypatch.setattr(np, "log", lambda x: np.float64(POSITIVE_NAN))
    assert bits(SCALARS["math.log"].fn(-1.0)) == bits(NAN)


# ---------------------------------------------------------------------------------------
# The sweep


def arity(name: str) -> int:
    dialect = arith.Arith if name.startswith("arith.") else xmath.Math
    op = next(c for c in dialect.operations if c.name == name)
    return len(op.get_irdl_definition().operands)


SWEPT = sorted(n for n, e in SCALARS.items() if e.kind in ("float", "exact"))
"""The float ops of the table (their operands and result have the one float type)."""

TYPED = ["math.fpowi", "arith.extf", "arith.truncf", "arith.bitcast"]
"""The `typed` entries that take or give a float (`_typed_rows`)."""


def _typed_rows(ty: str) -> list[str]:
    """fpowi (exponents `%k`), a round trip through the other float type (extf and
    truncf) and through the integer of the same width (bitcast), each back in `ty`."""
    other, int_ty = ("f32", "i64") if ty == "f64" else ("f64", "i32")
    there, back = ("truncf", "extf") if ty == "f64" else ("extf", "truncf")
    return [
        f"%t0 = math.fpowi %x, %k : {ty}, i32",
        f"%t1_a = arith.{there} %x : {ty} to {other}\n"
        f"    %t1 = arith.{back} %t1_a : {other} to {ty}",
        f"%t2_a = arith.bitcast %x : {ty} to {int_ty}\n"
        f"    %t2 = arith.bitcast %t2_a : {int_ty} to {ty}",
    ]  # fmt: skip


CMPF = ["oeq", "one", "olt", "uno", "ord", "ueq", "une", "uge"]
"""arith.cmpf (no table function: the interpreter's and the emitter's own) on NaNs."""

NOT_SWEPT = {
    "arith.fptosi": "a NaN or infinite operand is the op's error (test_jit, test_extra_ops)",
    "arith.fptoui": "a NaN or infinite operand is the op's error (test_extra_ops)",
    "arith.remf": "not registered in xDSL: no program has it",
}


def test_every_entry_with_a_float_is_swept():
    """A new table entry that takes or gives a float is swept or says why not."""
    integer = {n for n, e in SCALARS.items() if e.kind in ("int", "multi")} | {
        "arith.addi", "arith.subi", "arith.muli", "arith.andi", "arith.ori", "arith.xori",
        "arith.shli", "arith.shrsi", "arith.cmpi", "arith.select", "arith.index_cast",
        "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci",
        "arith.sitofp", "arith.uitofp"}  # fmt: skip
    assert not integer & (set(SWEPT) | set(TYPED) | set(NOT_SWEPT))
    assert set(SCALARS) == integer | set(SWEPT) | set(TYPED) | {"arith.cmpf"} | set(NOT_SWEPT)


# Operands: every pair of SPECIAL, a third one cycling through them (fma), and fma's
# invalid cases.
PAIRS = list(itertools.product(SPECIAL, SPECIAL))
X = [x for x, _ in PAIRS] + [0.0, math.inf, 1.0]
Y = [y for _, y in PAIRS] + [math.inf, 0.0, math.inf]
Z = [SPECIAL[(7 * i) % len(SPECIAL)] for i in range(len(PAIRS))] + [1.0, NAN, -math.inf]
N = len(X)
EXPONENTS = [-3, -2, -1, 0, 1, 2, 3, 1 << 30, -(1 << 31)]


def _has_kernel_form(name: str) -> bool:
    return SCALARS[name].inline is not None


def _function(name: str, ops: list[tuple[str, str]], ty: str) -> str:
    """@name(x, y, z, k, out): for each element, every op of `ops` (result name, op
    text) stored in its row of `out` (`%x`, `%y`, `%z`: operands of type `ty`, `%k` i32)."""
    rows = len(ops)
    lines = [f"func.func @{name}(%X: memref<{N}x{ty}>, %Y: memref<{N}x{ty}>, "
             f"%Z: memref<{N}x{ty}>, %K: memref<{N}xi32>, %out: memref<{rows}x{N}x{ty}>) {{",
             "  %c0 = arith.constant 0 : index", "  %c1 = arith.constant 1 : index",
             f"  %n = arith.constant {N} : index",
             "  scf.for %i = %c0 to %n step %c1 {"]  # fmt: skip
    lines += [f"    %{v} = memref.load %{v.upper()}[%i] : memref<{N}x{ty}>" for v in "xyz"]
    lines.append(f"    %k = memref.load %K[%i] : memref<{N}xi32>")
    for row, (r, text) in enumerate(ops):
        lines.append(f"    {text}")
        lines.append(f"    %row{row} = arith.constant {row} : index")
        lines.append(f"    memref.store %{r}, %out[%row{row}, %i] : memref<{rows}x{N}x{ty}>")
    return "\n".join([*lines, "  }", "  func.return", "}"])


def _float_op(name: str, ty: str, r: str) -> str:
    operands = ", ".join(f"%{v}" for v in "xyz"[: arity(name)])
    return f"%{r} = {name} {operands} : {ty}"


def sweep_module(ty: str) -> tuple[str, list[str], list[str]]:
    """`@kernel` (the ops a numba kernel takes) and `@other` (the rest) over `ty`, and the
    op of each row of each."""
    kernel = [n for n in SWEPT if _has_kernel_form(n)]
    other = [n for n in SWEPT if not _has_kernel_form(n)]
    other_ops = [(f"r{i}", _float_op(n, ty, f"r{i}")) for i, n in enumerate(other)]
    other_ops += [(f"t{i}", text) for i, text in enumerate(_typed_rows(ty))]
    other_ops += [(f"p{i}", f"%p{i}_b = arith.cmpf {p}, %x, %y : {ty}\n    %p{i} = "
                   f"arith.select %p{i}_b, %x, %y : {ty}") for i, p in enumerate(CMPF)]
    kernel_ops = [(f"r{i}", _float_op(n, ty, f"r{i}")) for i, n in enumerate(kernel)]
    text = _function("kernel", kernel_ops, ty) + "\n" + _function("other", other_ops, ty)
    rows = [*other, "math.fpowi", "arith.extf/truncf", "arith.bitcast"]
    return text, kernel, [*rows, *(f"arith.cmpf {p}" for p in CMPF)]


NUMPY_LIBM = ["log", "log2", "log10", "log1p", "sqrt", "sin", "cos", "tan", "arcsin",
              "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
              "arctanh", "exp", "exp2", "expm1", "cbrt", "power", "floor", "ceil", "trunc",
              "rint"]  # fmt: skip
"""The NumPy functions the table may call (its fallbacks and roundings)."""


def positive_nan(fn):
    """`fn` as NumPy's SIMD path is on another CPU: every NaN it returns is +nan."""

    def run(*args, **kwargs):
        r = fn(*args, **kwargs)
        return np.float64(POSITIVE_NAN) if np.ndim(r) == 0 and r != r else r

    return run


def sweep(ty: str) -> tuple[Any, Callable[[str], list[np.ndarray]]]:
    """The sweep's module over `ty`, and the arguments of its function `name` (fresh)."""
    text, kernel_rows, other_rows = sweep_module(ty)
    dtype = np.float64 if ty == "f64" else np.float32
    with np.errstate(all="ignore"):
        operands = [np.array(v, np.float64).astype(dtype) for v in (X, Y, Z)]
    k = np.array([EXPONENTS[i % len(EXPONENTS)] for i in range(N)], np.int32)

    def args(name: str) -> list[np.ndarray]:
        rows = len(kernel_rows if name == "kernel" else other_rows)
        return [*(a.copy() for a in operands), k.copy(), np.zeros((rows, N), dtype)]

    return runner.load_module(text, "sweep.mlir"), args


def run_everywhere(ty: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, bytes]]:
    """executor -> function -> the bytes of its `out` (every row of every element)."""
    module, args = sweep(ty)
    out: dict[str, dict[str, bytes]] = {"interpreter": {}, "generated": {}}
    for name in ("kernel", "other"):
        a = args(name)
        runner.run_function(module, name, a)
        out["interpreter"][name] = a[-1].tobytes()
        monkeypatch.setenv("TAPEFLOW_JIT", "0")
        out["generated"][name] = simulate_fast(module, name, args(name)).run.arguments[-1].tobytes()
        monkeypatch.setenv("TAPEFLOW_JIT", "1")
        if ty != "f64" or not jit.enabled():
            continue  # kernels take memrefs of f64 (test_jit compares their f32 rounding)
        program = C.CompiledModule(module)
        run = simulate_fast(program, name, args(name)).run
        out.setdefault("numba", {})[name] = run.arguments[-1].tobytes()
        if name == "kernel":  # every op with an inline form, in one loop kernel
            assert [kern.runs for kern in program.kernels] == [1], program.not_kernels
    return out


@pytest.fixture
def kernels_at_once(monkeypatch: pytest.MonkeyPatch):
    """Every loop kernel compiled at its first entry, or loaded from numba's cache (a
    kernel is named by its source and the runtime's, `hwmodel.jit`)."""
    monkeypatch.setattr(C.Trace, "jit_after", 0)
    monkeypatch.setattr(C.Trace, "jit_min_ops", 0)


def _operands(ty: str, rows: list[str]) -> list[np.ndarray]:
    """Per row, the operands its op reads (as `ty`, in f64), one column per element."""
    dtype = np.float64 if ty == "f64" else np.float32
    with np.errstate(all="ignore"):
        xyz = np.array([X, Y, Z], np.float64).astype(dtype).astype(np.float64)
    n = [arity(op) if op in SCALARS and op != "math.fpowi" else 1 for op in rows]
    return [xyz[: 2 if op.startswith("arith.cmpf") else k] for op, k in zip(rows, n)]


def _values(ty: str, out: bytes, rows: list[str]) -> np.ndarray:
    dtype = np.float64 if ty == "f64" else np.float32
    return np.frombuffer(out, dtype).reshape(len(rows), N).astype(np.float64)


def made_nans(ty: str, out: bytes, rows: list[str]) -> list[tuple[str, float, float, str]]:
    """(op, x, y, bits) of every NaN an op made from non-NaN operands that is not `NAN`."""
    values, wrong = _values(ty, out, rows), []
    for row, (op, operands) in enumerate(zip(rows, _operands(ty, rows))):
        for i in range(N):
            r = values[row, i]
            if r != r and not np.isnan(operands[:, i]).any() and bits(r) != bits(NAN):
                wrong.append((op, X[i], Y[i], bits(r)))
    return wrong


def differences(ty: str, a: dict[str, bytes], b: dict[str, bytes]) -> list[tuple[str, ...]]:
    """(op, x, y, a's bits, b's bits) of every element where two executors differ, but
    for which of two NaN operands a NaN result is (IEEE leaves it open, and CPython's
    float + and * give the second one, its specialised bytecode and numba the first)."""
    _, kernel_rows, other_rows = sweep_module(ty)
    out = []
    for name, rows in (("kernel", kernel_rows), ("other", other_rows)):
        va, vb = _values(ty, a[name], rows), _values(ty, b[name], rows)
        operands = _operands(ty, rows)
        for row, i in zip(*np.nonzero(va.view(np.uint64) != vb.view(np.uint64))):
            nans = np.isnan(operands[row][:, i]).sum()
            if not (nans >= 2 and np.isnan(va[row, i]) and np.isnan(vb[row, i])):
                out.append((rows[row], X[i], Y[i], bits(va[row, i]), bits(vb[row, i])))
    return out


@pytest.mark.parametrize("ty", ["f64", "f32"])
def test_every_float_op_gives_the_same_bits_everywhere(ty, kernels_at_once, monkeypatch):
    """The interpreter, the generated code and numba kernels agree bit for bit on every
    float op and special operand; a NaN made of non-NaN operands is `NAN`; and the same
    bits come out when NumPy answers +nan for every NaN (another CPU's SIMD path)."""
    here = run_everywhere(ty, monkeypatch)
    for executor in set(here) - {"interpreter"}:
        assert differences(ty, here["interpreter"], here[executor]) == [], executor
    _, kernel_rows, other_rows = sweep_module(ty)
    assert made_nans(ty, here["interpreter"]["kernel"], kernel_rows) == []
    assert made_nans(ty, here["interpreter"]["other"], other_rows) == []
    for name in NUMPY_LIBM:
        monkeypatch.setattr(np, name, positive_nan(getattr(np, name)))
    there = run_everywhere(ty, monkeypatch)
    for executor, out in there.items():
        assert differences(ty, here[executor], out) == [], executor


RTOL = {"f64": 1e-12, "f32": 2.0**-22}


@pytest.mark.skipif(not native.tools_available(), reason="upstream MLIR 22 is not installed")
@pytest.mark.parametrize("ty", ["f64", "f32"])
def test_native_nans(ty):
    """Natively (mlir-opt-22, LLVM, the platform's libm) every NaN made of non-NaN operands
    is `NAN` too (`native._canonical_nans` after libm's math ops); where operands are NaN
    the sweep compares NaN-ness only (LLVM does not keep a NaN's bits, and propagates
    where the table does not: maximumf, minimumf and atan2 give +nan), and other values
    to 1e-12 (f32: two units in the last place, libm's f32 functions against the table's
    f64 ones rounded)."""
    module, args = sweep(ty)
    _, kernel_rows, other_rows = sweep_module(ty)
    for name, rows in (("kernel", kernel_rows), ("other", other_rows)):
        a = args(name)
        runner.run_function(module, name, a)
        here = _values(ty, a[-1].tobytes(), rows)
        out = native.run_function_native(module, name, args(name)).arguments[-1].tobytes()
        assert made_nans(ty, out, rows) == []
        there = _values(ty, out, rows)
        assert (np.isnan(here) == np.isnan(there)).all()
        finite = ~np.isnan(here)
        assert (np.isinf(here[finite]) == np.isinf(there[finite])).all()
        a, b = here[finite], there[finite]
        assert ((a == b) | np.isclose(a, b, rtol=RTOL[ty], atol=0)).all()
