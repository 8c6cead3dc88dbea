"""Small IR kernels that tests and benchmarks share (one text, so the two cannot drift)."""

from __future__ import annotations


def stream_kernel(n: int, squares: bool = False) -> str:
    """`@sum`: a sum over `n` f64 of `%a`, each loaded once, in order. With `squares`
    (benchmarks/sim_speed.py's stream) it takes a second memref `%b`, stores each square
    into it and sums the squares: a load and a store per element."""
    out_arg = f", %b: memref<{n}xf64>" if squares else ""
    body = [f"    %v = memref.load %a[%i] : memref<{n}xf64>"]
    if squares:
        body += ["    %w = arith.mulf %v, %v : f64",
                 f"    memref.store %w, %b[%i] : memref<{n}xf64>"]  # fmt: skip
    body.append(f"    %s = arith.addf %acc, {'%w' if squares else '%v'} : f64")
    return "\n".join([
        "",
        f"func.func @sum(%a: memref<{n}xf64>{out_arg}) -> f64 {{",
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        f"  %n = arith.constant {n} : index",
        "  %z = arith.constant 0.0 : f64",
        "  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {",
        *body,
        "    scf.yield %s : f64",
        "  }",
        "  func.return %r : f64",
        "}",
        "",
    ])  # fmt: skip
