"""Generates suite shapes' MLIR kernels (`small/<name>.mlir`, `default/<name>.mlir` here).

Run `python benchmarks/kernels/shapes/generate.py` from the repository root after changing
a template or a size (sizes: `tapeflow/eval/shapes.py:KERNELS`); the generated files are
committed. The suite covers the loop shapes of dense solvers and dynamic programs (issue
34): a triangular nest (forward substitution), a down-counting loop (back substitution,
written as an up-counting `scf.for` over `k` with `i = n - 1 - k`, the normalised form),
a true while loop (Newton's iteration, as many steps as each element needs) and a
dynamic program whose values are cached inside `scf.if` branches. Each is one
`func.func` marked `tapeflow.autodiff` returning a scalar f64 loss; the C twins are the
`<name>.c` files here.
"""

from __future__ import annotations

import sys
from pathlib import Path


def _substitution(name: str, A: str, r: str, N: int, backward: bool) -> str:
    """Solves A x = r by substitution, loss = 0.5 |x|^2: forward (A lower triangular,
    `j < i`) or backward (A upper triangular, rows from the last: `i = N-1-k`, `j > i`)."""
    tA, tv = f"memref<{N}x{N}xf64>", f"memref<{N}xf64>"
    if backward:
        row = f"""\
  %cN1 = arith.constant {N - 1} : index
  %zero = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  %loss = scf.for %k = %c0 to %cN step %c1 iter_args(%l = %zero) -> (f64) {{
    %i = arith.subi %cN1, %k : index
    %{r}i = memref.load %{r}[%i] : {tv}
    %i1 = arith.addi %i, %c1 : index
    %s = scf.for %j = %i1 to %cN step %c1 iter_args(%acc = %{r}i) -> (f64) {{"""
    else:
        row = f"""\
  %zero = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  %loss = scf.for %i = %c0 to %cN step %c1 iter_args(%l = %zero) -> (f64) {{
    %{r}i = memref.load %{r}[%i] : {tv}
    %s = scf.for %j = %c0 to %i step %c1 iter_args(%acc = %{r}i) -> (f64) {{"""
    a = A.lower()
    return f"""\
func.func @{name}(%{A}: {tA}, %{r}: {tv}, %x: {tv}) -> f64 attributes {{tapeflow.autodiff}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cN = arith.constant {N} : index
{row}
      %{a}ij = memref.load %{A}[%i, %j] : {tA}
      %xj = memref.load %x[%j] : {tv}
      %p = arith.mulf %{a}ij, %xj : f64
      %a = arith.subf %acc, %p : f64
      scf.yield %a : f64
    }}
    %d = memref.load %{A}[%i, %i] : {tA}
    %xi = arith.divf %s, %d : f64
    memref.store %xi, %x[%i] : {tv}
    %sq = arith.mulf %xi, %xi : f64
    %h = arith.mulf %half, %sq : f64
    %l1 = arith.addf %l, %h : f64
    scf.yield %l1 : f64
  }}
  func.return %loss : f64
}}
"""


def trisolve(s: dict[str, int]) -> str:
    """Forward substitution L x = b (L lower triangular), loss = 0.5 |x|^2."""
    return _substitution("trisolve", "L", "b", s["N"], backward=False)


def backsub(s: dict[str, int]) -> str:
    """Back substitution U x = y (U upper triangular), rows from the last: i = N-1-k;
    loss = 0.5 |x|^2."""
    return _substitution("backsub", "U", "y", s["N"], backward=True)


def newton(s: dict[str, int]) -> str:
    """Per element, Newton's iteration for the root of x^3 + x - c[i] from x = c[i] until
    |f(x)| <= 1e-12 (at most 50 steps), r[i] = the root; loss = sum r[i]^2."""
    N = s["N"]
    tv = f"memref<{N}xf64>"
    return f"""\
func.func @newton(%c: {tv}, %r: {tv}) -> f64 attributes {{tapeflow.autodiff}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cN = arith.constant {N} : index
  %max = arith.constant 50 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %three = arith.constant 3.0 : f64
  %tol = arith.constant 1.0e-12 : f64
  %loss = scf.for %i = %c0 to %cN step %c1 iter_args(%l = %zero) -> (f64) {{
    %ci = memref.load %c[%i] : {tv}
    %root:2 = scf.while (%x = %ci, %it = %c0) : (f64, index) -> (f64, index) {{
      %x2 = arith.mulf %x, %x : f64
      %x3 = arith.mulf %x2, %x : f64
      %g = arith.addf %x3, %x : f64
      %f = arith.subf %g, %ci : f64
      %af = math.absf %f : f64
      %far = arith.cmpf ogt, %af, %tol : f64
      %more = arith.cmpi slt, %it, %max : index
      %go = arith.andi %far, %more : i1
      scf.condition(%go) %x, %it : f64, index
    }} do {{
    ^bb0(%x: f64, %it: index):
      %x2 = arith.mulf %x, %x : f64
      %x3 = arith.mulf %x2, %x : f64
      %g = arith.addf %x3, %x : f64
      %f = arith.subf %g, %ci : f64
      %t = arith.mulf %three, %x2 : f64
      %df = arith.addf %t, %one : f64
      %step = arith.divf %f, %df : f64
      %xn = arith.subf %x, %step : f64
      %itn = arith.addi %it, %c1 : index
      scf.yield %xn, %itn : f64, index
    }}
    memref.store %root#0, %r[%i] : {tv}
    %sq = arith.mulf %root#0, %root#0 : f64
    %l1 = arith.addf %l, %sq : f64
    scf.yield %l1 : f64
  }}
  func.return %loss : f64
}}
"""


def dp(s: dict[str, int]) -> str:
    """A branchy dynamic program over an (N+1) x (M+1) table D (row 0 and column 0 given):
    D[i][j] = w * D[i-1][j-1] + exp(-(a[i] - b[j])^2) when a[i] > b[j] (a match), else
    the smaller of sin(D[i-1][j]) and sin(D[i][j-1]) times 0.9; loss = D[N][M]."""
    N, M = s["N"], s["M"]
    tD, ta, tb = f"memref<{N + 1}x{M + 1}xf64>", f"memref<{N}xf64>", f"memref<{M}xf64>"
    return f"""\
func.func @dp(%a: {ta}, %b: {tb}, %D: {tD}) -> f64 attributes {{tapeflow.autodiff}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cN = arith.constant {N} : index
  %cM = arith.constant {M} : index
  %cN1 = arith.constant {N + 1} : index
  %cM1 = arith.constant {M + 1} : index
  %w = arith.constant 0.75 : f64
  %decay = arith.constant 0.9 : f64
  scf.for %i = %c1 to %cN1 step %c1 {{
    %im = arith.subi %i, %c1 : index
    %ai = memref.load %a[%im] : {ta}
    scf.for %j = %c1 to %cM1 step %c1 {{
      %jm = arith.subi %j, %c1 : index
      %bj = memref.load %b[%jm] : {tb}
      %match = arith.cmpf ogt, %ai, %bj : f64
      %v = scf.if %match -> (f64) {{
        %diag = memref.load %D[%im, %jm] : {tD}
        %e = arith.subf %ai, %bj : f64
        %e2 = arith.mulf %e, %e : f64
        %ne2 = arith.negf %e2 : f64
        %g = math.exp %ne2 : f64
        %wd = arith.mulf %w, %diag : f64
        %m = arith.addf %wd, %g : f64
        scf.yield %m : f64
      }} else {{
        %up = memref.load %D[%im, %j] : {tD}
        %left = memref.load %D[%i, %jm] : {tD}
        %su = math.sin %up : f64
        %sl = math.sin %left : f64
        %lt = arith.cmpf olt, %su, %sl : f64
        %mn = arith.select %lt, %su, %sl : f64
        %m = arith.mulf %decay, %mn : f64
        scf.yield %m : f64
      }}
      memref.store %v, %D[%i, %j] : {tD}
    }}
  }}
  %loss = memref.load %D[%cN, %cM] : {tD}
  func.return %loss : f64
}}
"""


TEMPLATES = {"trisolve": trisolve, "backsub": backsub, "newton": newton, "dp": dp}


def main() -> None:
    root = Path(__file__).resolve().parent
    sys.path.insert(0, str(root.parents[2]))
    from tapeflow.eval.shapes import KERNELS

    for kernel in KERNELS.values():
        for size_name in ("small", "default"):
            out = root / size_name / f"{kernel.name}.mlir"
            out.parent.mkdir(exist_ok=True)
            out.write_text(TEMPLATES[kernel.name](kernel.sizes[size_name]))
            print(f"wrote {size_name}/{kernel.name}.mlir")


if __name__ == "__main__":
    main()
