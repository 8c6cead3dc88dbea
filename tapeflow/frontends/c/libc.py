"""What the C library's functions are to the frontend: `<math.h>` calls as `math` ops,
the builtin constants (`INFINITY`, `NAN`), memory calls and allocators, and the calls that
are dropped with a remark (output, `assert`).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, math
from xdsl.ir import Operation, SSAValue

from .clang import walk


# Output calls in translated code are dropped (with a remark): they do not change results.
_OUTPUT_CALLS = ("printf", "fprintf", "puts", "putchar", "fflush")
MEM_CALLS = ("memcpy", "memmove", "memset")
ALLOCATORS = ("malloc", "calloc", "realloc", "aligned_alloc")


def is_output_call(c) -> bool:
    return c.kind.name == "CALL_EXPR" and c.spelling in _OUTPUT_CALLS


# What `assert(e)` expands to calls on failure (glibc, macOS, BSD, MSVC, Bionic).
_ASSERT_CALLS = ("__assert_fail", "__assert_rtn", "__assert", "_assert", "__assert2")


def is_assert(c) -> bool:
    """`assert(...)`: an expression statement that calls libc's assertion failure (the
    macro's expansion; libclang gives no tokens of it)."""
    return c.kind.is_expression() and any(
        k.kind.name == "CALL_EXPR" and k.spelling in _ASSERT_CALLS for k in walk(c)
    )


def _max(a: SSAValue, b: SSAValue) -> Operation:
    return arith.MaxnumfOp(a, b)


def _min(a: SSAValue, b: SSAValue) -> Operation:
    return arith.MinnumfOp(a, b)


# `INFINITY`, `HUGE_VAL` and `NAN` expand to these builtins.
BUILTIN_CONSTANTS = {
    "inf": float("inf"), "inff": float("inf"), "huge_val": float("inf"),
    "huge_valf": float("inf"), "nan": float("nan"), "nanf": float("nan"),
}  # fmt: skip


ARITY = {"pow": 2, "atan2": 2, "copysign": 2, "fma": 3, "fmax": 2, "fmin": 2}
MATH: dict[str, Callable[..., Operation]] = {
    "sin": math.SinOp, "cos": math.CosOp, "tan": math.TanOp, "asin": math.AsinOp,
    "acos": math.AcosOp, "atan": math.AtanOp, "sinh": math.SinhOp, "cosh": math.CoshOp,
    "tanh": math.TanhOp, "asinh": math.AsinhOp, "acosh": math.AcoshOp, "atanh": math.AtanhOp,
    "exp": math.ExpOp, "exp2": math.Exp2Op, "expm1": math.ExpM1Op, "log": math.LogOp,
    "log2": math.Log2Op, "log10": math.Log10Op, "log1p": math.Log1pOp, "sqrt": math.SqrtOp,
    "cbrt": math.CbrtOp, "erf": math.ErfOp, "fabs": math.AbsFOp, "floor": math.FloorOp,
    "ceil": math.CeilOp, "trunc": math.TruncOp, "round": math.RoundOp,
    "pow": math.PowFOp, "atan2": math.Atan2Op, "copysign": math.CopySignOp,
    "fma": math.FmaOp, "fmax": _max, "fmin": _min,
}  # fmt: skip
