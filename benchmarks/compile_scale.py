"""How compile time grows with the size of the input, against `mlir-opt-22`.

Generates modules of about 1k, 5k, 20k and 50k lines in three families:

- `one-function`: one `@f` of N loops, each reading the buffer the loop before wrote
  and writing the other (so every load has writers before and after it), with a
  reduction and a nested loop every fourth loop;
- `copies`: N renamed copies of a small kernel (many small functions);
- `c`: a C file of N loops (through `tapeflow-opt`'s C frontend).

For each module it times, in CPU seconds of the child process (user + system time from
`resource.getrusage(RUSAGE_CHILDREN)`, min of `--repeat` runs), `tapeflow-opt` with no
pass (parse, verify, print), `--tapeflow-autodiff` and the whole `--tapeflow`, and
`mlir-opt-22` on the same primal text in the same run (MLIR families only). It prints
a table and the growth exponent of each stage between consecutive sizes,
log(t2/t1) / log(n2/n1) with n the line count (1.0 is linear, 2.0 quadratic).

    python benchmarks/compile_scale.py                      # 1k,5k,20k,50k lines
    python benchmarks/compile_scale.py --lines 1000,5000 --families one-function
    python benchmarks/compile_scale.py --write DIR          # only write the modules
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SIZES = (1000, 5000, 20000, 50000)
FAMILIES = ("one-function", "copies", "c")
N = 16
"""Elements of each buffer (the trip count of every loop)."""


def one_function(lines: int) -> str:
    """`@f` of loops alternating between two buffers, about `lines` lines."""
    head = [
        f"func.func @f(%x: memref<{N}xf64>, %w: memref<{N}xf64>, %a: memref<{N}xf64>,"
        f" %b: memref<{N}xf64>) -> f64 attributes {{tapeflow.autodiff}} {{",
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        f"  %cn = arith.constant {N} : index",
        "  %zero = arith.constant 0.0 : f64",
        "  %half = arith.constant 0.5 : f64",
    ]
    body: list[str] = []
    t = f"memref<{N}xf64>"
    k, acc = 0, "%zero"
    while len(head) + len(body) + 2 < lines:
        src, dst = ("%a", "%b") if k % 2 else ("%b", "%a")
        src = "%x" if k == 0 else src
        if k % 4 == 3:  # a nested reduction: a loop result, cached
            body += [
                f"  %s{k} = scf.for %i{k} = %c0 to %cn step %c1 iter_args(%r{k} = {acc}) -> (f64) {{",
                f"    %d{k} = scf.for %j{k} = %c0 to %cn step %c1 iter_args(%q{k} = %zero) -> (f64) {{",
                f"      %u{k} = memref.load {src}[%j{k}] : {t}",
                f"      %v{k} = memref.load %w[%i{k}] : {t}",
                f"      %p{k} = arith.mulf %u{k}, %v{k} : f64",
                f"      %e{k} = arith.addf %q{k}, %p{k} : f64",
                f"      scf.yield %e{k} : f64",
                "    }",
                f"    %h{k} = math.tanh %d{k} : f64",
                f"    memref.store %h{k}, {dst}[%i{k}] : {t}",
                f"    %n{k} = arith.addf %r{k}, %h{k} : f64",
                f"    scf.yield %n{k} : f64",
                "  }",
            ]
        else:
            body += [
                f"  %s{k} = scf.for %i{k} = %c0 to %cn step %c1 iter_args(%r{k} = {acc}) -> (f64) {{",
                f"    %u{k} = memref.load {src}[%i{k}] : {t}",
                f"    %v{k} = memref.load %w[%i{k}] : {t}",
                f"    %p{k} = arith.mulf %u{k}, %v{k} : f64",
                f"    %h{k} = math.tanh %p{k} : f64",
                f"    memref.store %h{k}, {dst}[%i{k}] : {t}",
                f"    %m{k} = arith.mulf %h{k}, %h{k} : f64",
                f"    %n{k} = arith.addf %r{k}, %m{k} : f64",
                f"    scf.yield %n{k} : f64",
                "  }",
            ]
        acc = f"%s{k}"
        k += 1
    tail = [f"  %loss = arith.mulf %half, {acc} : f64", "  func.return %loss : f64", "}"]
    return "\n".join(head + body + tail) + "\n"


KERNEL = Path(__file__).parent / "kernels" / "small" / "gemm.mlir"


def copies(lines: int) -> str:
    """Renamed copies of the small gemm kernel (25 lines), about `lines` lines."""
    kernel = KERNEL.read_text()
    count = max(1, round(lines / kernel.count("\n")))
    return "".join(kernel.replace("@gemm(", f"@g{k}(") for k in range(count))


def c_loops(lines: int) -> str:
    """A C function of loops alternating between two arrays, about `lines` lines."""
    head = [
        "#include <math.h>",
        f"double f(double x[{N}], double w[{N}], double a[{N}], double b[{N}]) {{",
        "  double s = 0.0;",
    ]
    body: list[str] = []
    k = 0
    while len(head) + len(body) + 2 < lines:
        src, dst = ("a", "b") if k % 2 else ("b", "a")
        src = "x" if k == 0 else src
        body += [
            f"  for (int i = 0; i < {N}; i++) {{",
            f"    double h = tanh({src}[i] * w[i]);",
            f"    {dst}[i] = h;",
            "    s += h * h;",
            "  }",
        ]
        k += 1
    return "\n".join(head + body + ["  return 0.5 * s;", "}"]) + "\n"


GENERATORS = {"one-function": one_function, "copies": copies, "c": c_loops}


def cpu_seconds(argv: list[str]) -> float:
    """User + system CPU seconds of running `argv` (its output discarded)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"error: {' '.join(argv)} failed: {done.stderr.strip()}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def stages(path: Path, mlir_opt: str | None) -> dict[str, list[str]]:
    """Command of each timed stage for `path`."""
    opt = [sys.executable, "-m", "tapeflow.tools.opt", str(path)]
    out: dict[str, list[str]] = {}
    if mlir_opt and path.suffix == ".mlir":
        out["mlir-opt"] = [mlir_opt, str(path)]
    out["parse"] = opt
    out["autodiff"] = [*opt, "--tapeflow-autodiff"]
    out["tapeflow"] = [*opt, "--tapeflow"]
    return out


def exponent(n1: int, t1: float, n2: int, t2: float) -> float:
    return math.log(t2 / t1) / math.log(n2 / n1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", default=",".join(map(str, SIZES)),
                        help="comma-separated module sizes in lines (default %(default)s)")
    parser.add_argument("--families", default=",".join(FAMILIES),
                        help="comma-separated families (default %(default)s)")
    parser.add_argument("--stages", default="mlir-opt,parse,autodiff,tapeflow",
                        help="comma-separated stages to time (default %(default)s)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per point; the min is kept")
    parser.add_argument("--write", metavar="DIR", help="only write the modules into DIR")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.lines.split(",")]
    families = args.families.split(",")
    for family in families:
        if family not in GENERATORS:
            parser.error(f"unknown family '{family}' (expected one of {', '.join(FAMILIES)})")
    wanted = args.stages.split(",")
    mlir_opt = shutil.which("mlir-opt-22")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.write or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for family in families:
            rows: list[tuple[int, dict[str, float]]] = []
            print(f"\n{family} (CPU s, min of {args.repeat})")
            for size in sizes:
                text = GENERATORS[family](size)
                suffix = ".c" if family == "c" else ".mlir"
                path = folder / f"{family}-{size}{suffix}"
                path.write_text(text)
                if args.write:
                    continue
                n = text.count("\n")
                times: dict[str, float] = {}
                for stage, cmd in stages(path, mlir_opt).items():
                    if stage in wanted:
                        times[stage] = min(cpu_seconds(cmd) for _ in range(args.repeat))
                rows.append((n, times))
                cells = "  ".join(f"{s} {t:8.3f}" for s, t in times.items())
                print(f"  {n:6d} lines  {cells}", flush=True)
            for (n1, t1), (n2, t2) in zip(rows, rows[1:]):
                growth = "  ".join(
                    f"{s} {exponent(n1, t1[s], n2, t2[s]):.2f}" for s in t1 if s in t2
                )
                print(f"  exponent {n1}->{n2}: {growth}")
    print(f"\nload average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
