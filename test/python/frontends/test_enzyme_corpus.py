"""`benchmarks/enzyme_corpus.py --check` on small files written in the style of Enzyme's
integration tests (`#include "../test_utils.h"`, APPROX_EQ in `main`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks import enzyme_corpus

UTILS = """#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#define APPROX_EQ(L, R, T) { if (fabs((L) - (R)) > (T)) abort(); }
"""

HEADER = """#include "../test_utils.h"
void __enzyme_autodiff(void *, ...);
"""

CUBES = HEADER + """
double cubes(double *x, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += x[i] * x[i] * x[i];
  return s;
}
int main(void) {
  double x[3] = {1.0, 2.0, 3.0}, dx[3] = {0.0, 0.0, 0.0};
  __enzyme_autodiff((void *)cubes, x, dx, 3);
  for (int i = 0; i < 3; i++)
    APPROX_EQ(dx[i], 3 * x[i] * x[i], 1e-10);
  return 0;
}
"""

# Truncation to an integer has derivative zero for AD, but finite differences see the
# steps of size 1e-7: the check must call the two different.
STAIRS = HEADER + """
double stairs(double *x) { return (double)(long)(x[0] * 1e9); }
int main(void) {
  double x[1] = {1.5}, dx[1] = {0.0};
  __enzyme_autodiff((void *)stairs, x, dx);
  printf("%f\\n", dx[0]);
  return 0;
}
"""

SCALE = HEADER + """
void scale(double *x, double *out) { *out = 2.0 * x[0]; }
int main(void) {
  double x[1] = {1.0}, dx[1] = {0.0}, out = 0.0, dout = 1.0;
  __enzyme_autodiff((void *)scale, x, dx, &out, &dout);
  APPROX_EQ(dx[0], 2.0, 1e-10);
  return 0;
}
"""

# Reads x[9]: the generic 8 elements are too few, main's call passes 10.
BOUNDS = HEADER + """
void last(double *x, double *y, int n) { y[0] = x[n - 1] * x[9]; }
int main(void) {
  int n = 10;
  double *x = malloc(sizeof(double) * n), *dx = malloc(sizeof(double) * n), y[1], dy[1];
  __enzyme_autodiff((void *)last, x, dx, y, dy, n);
  return 0;
}
"""

# What call_sites reads: malloc'd pointers, `&n`, a VLA, enum constants, markers.
SITES = HEADER + """
int enzyme_const;
enum { M = 4 };
void many(double *a, double *b, int *n, double *c, long m, double s) {}
int main(void) {
  int n = 3, k = 5;
  double *a = (double *)malloc(sizeof(double) * n * 2), *da = 0;
  double b[M][2], db[M][2], c[k], dc[k];
  k = 6;
  __enzyme_autodiff((void *)many, a, da, enzyme_const, b, enzyme_const, &n, c, dc, (long)M, 0.5);
  return 0;
}
"""


def _folder(tmp_path: Path, files: dict[str, str]) -> Path:
    """Enzyme's layout: test_utils.h beside ReverseMode/, which holds `files`."""
    (tmp_path / "test_utils.h").write_text(UTILS)
    folder = tmp_path / "ReverseMode"
    folder.mkdir()
    for name, text in files.items():
        (folder / f"{name}.c").write_text(text)
    return folder


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return _folder(tmp_path, {"cubes": CUBES, "stairs": STAIRS, "scale": SCALE,
                              "bounds": BOUNDS})  # fmt: skip


def test_check_verdicts(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert enzyme_corpus.main([str(corpus), "--check"]) == 0
    out = capsys.readouterr().out
    assert "| accepted | 4 |" in out
    assert ("| correct: adjoint dot-product test (finite differences) and finite "
            "differences, element by element | 1 |") in out
    assert "| correct: adjoint dot-product test (finite differences) | 2 |" in out
    assert "| wrong | 1 |" in out and "| unchecked | 0 |" in out and "| broken | 0 |" in out
    assert "| call site | 4 |" in out
    assert "stairs.c: wrong: @stairs x[0]: AD 0.0  FD " in out
    assert "cubes.c: correct (adjoint + element; arguments: call site)" in out
    assert "scale.c: correct (adjoint; arguments: call site)" in out
    assert "bounds.c: correct (adjoint; arguments: call site); main: ran" in out
    assert "| APPROX_EQ passed | 2 |" in out and "| APPROX_EQ failed | 0 |" in out
    assert "cubes.c: correct (adjoint + element; arguments: call site); main: passed: 1 " \
        "APPROX_EQ in the file" in out
    assert "correct by at least one check and wrong by none: 3 of 4" in out


def test_main_fails_on_a_wrong_expectation(tmp_path: Path) -> None:
    """The file's own main decides: an APPROX_EQ expecting the wrong value aborts."""
    (tmp_path / "test_utils.h").write_text(UTILS)
    folder = tmp_path / "ReverseMode"
    folder.mkdir()
    for name, text in (("right", CUBES), ("wrong", CUBES.replace("3 * x[i]", "2 * x[i]"))):
        (folder / f"{name}.c").write_text(text)
        mlir, _ = _compiled(folder / f"{name}.c", tmp_path)
        outcome, msg = enzyme_corpus.run_main(folder / f"{name}.c", mlir, [])
        assert (outcome, msg) == (("passed", "1 APPROX_EQ in the file") if name == "right"
                                  else ("failed", "abort()"))


def test_call_sites(tmp_path: Path) -> None:
    (tmp_path / "test_utils.h").write_text(UTILS)
    (tmp_path / "ReverseMode").mkdir()
    path = tmp_path / "ReverseMode" / "sites.c"
    path.write_text(SITES)
    sites = enzyme_corpus.call_sites(path, [])
    # c[k]: the VLA took k = 5 at its declaration (k = 6 comes after it)
    assert sites == {"many": [("array", 6), ("array", 8), 3, ("array", 5), 4, 0.5]}
    # a's length from its shadow's when its own is not known
    path.write_text(SITES.replace("*da = 0", "*da = malloc(7 * sizeof(double))")
                    .replace("(double *)malloc(sizeof(double) * n * 2)", "0"))  # fmt: skip
    assert enzyme_corpus.call_sites(path, [])["many"][0] == ("array", 7)
    path.write_text(SITES.replace("k = 6;", "n++;"))  # n is no longer known
    assert enzyme_corpus.call_sites(path, [])["many"][:3] == [None, ("array", 8), None]


def test_generic_arguments_out_of_bounds(tmp_path: Path) -> None:
    (tmp_path / "test_utils.h").write_text(UTILS)
    folder = tmp_path / "ReverseMode"
    folder.mkdir()
    changed = BOUNDS.replace("  __enzyme_autodiff((", "  n++;\n  __enzyme_autodiff((")
    (folder / "bounds.c").write_text(changed)
    verdict, msg, how = enzyme_corpus.check(*_compiled(folder / "bounds.c", tmp_path),
                                            enzyme_corpus.call_sites(folder / "bounds.c", []))
    assert verdict == "unchecked" and "out of bounds" in msg and "call site, partly" in how
    assert msg.endswith("(generic arguments: some of the call's are not known)")


def test_check_is_opt_in(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert enzyme_corpus.main([str(corpus)]) == 0
    out = capsys.readouterr().out
    assert "| accepted | 4 |" in out and "finite differences" not in out and "main" not in out


def _compiled(path: Path, work: Path) -> tuple[Path, Path]:
    mlir = work / f"{path.stem}.mlir"
    assert enzyme_corpus.classify(path, [], str(mlir))[0] == "accepted"
    return mlir, work


# A loop nest whose inner loop caches sin's argument: a region per outer iteration, which
# TapeFlow's passes pack into records (and `mode=always` streams).
NEST = HEADER + """
double nest(double *x, int n, int m) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    double t = 0.0;
    for (int j = 0; j < m; j++)
      t += sin(x[i * m + j] * t) * x[i * m + j];
    s += t * t;
  }
  return s;
}
int main(void) {
  double x[12], dx[12];
  for (int i = 0; i < 12; i++) { x[i] = 0.1 * i; dx[i] = 0.0; }
  __enzyme_autodiff((void *)nest, x, dx, 3, 4);
  return 0;
}
"""

# Writes its result into an array (a seeded shadow is its output) and has a float scalar
# whose gradient is returned.
SMOOTH = HEADER + """
void smooth(double *u, double *v, double a, int n) {
  for (int k = 0; k < 3; k++)
    for (int i = 1; i < n - 1; i++)
      v[i] = u[i] + a * (u[i - 1] * u[i + 1] - v[i] * v[i]);
}
int main(void) {
  double u[6] = {1, 2, 3, 4, 5, 6}, du[6] = {0}, v[6] = {0}, dv[6] = {1, 1, 1, 1, 1, 1};
  __enzyme_autodiff((void *)smooth, u, du, v, dv, 0.5, 6);
  return 0;
}
"""


@pytest.fixture
def variant_corpus(tmp_path: Path) -> Path:
    return _folder(tmp_path, {"nest": NEST, "smooth": SMOOTH,
                              "unknown": BOUNDS.replace("int n = 10;", "int n = rand();")})


def test_variants_identical(variant_corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert enzyme_corpus.main([str(variant_corpus), "--variants", "--list"]) == 0
    out = capsys.readouterr().out
    assert "| identical | 2 |" in out and "| differs | 0 |" in out and "| not run | 1 |" in out
    # the variants compile the nest to programs of their own (records, streams): the
    # check compares something
    for name in ("nest", "smooth"):
        line = next(ln for ln in out.splitlines() if ln.startswith(f"{name}.c: "))
        programs = re.fullmatch(rf"{name}.c: accepted; variants: identical: (\d+) distinct "
                                r"programs for 1 function\(s\)", line)  # fmt: skip
        assert programs is not None and int(programs.group(1)) >= 3, line
    assert "| of which every variant compiled to one program (nothing cached) | 0 |" in out
    # n unknown: 8 generic elements, and @last reads x[9]
    assert "unknown.c: accepted; variants: not run: @last: enzyme: InterpretationError: " in out
    assert "out of bounds for memref of shape [8] (generic arguments: some of the call's are " \
        "not known)" in out


def test_variants_broken_variant_differs(variant_corpus: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """A variant whose pipeline turns one addition of the gradient into a subtraction."""
    from dataclasses import dataclass

    from xdsl.dialects import arith, func
    from xdsl.passes import ModulePass
    from xdsl.rewriter import Rewriter

    from tapeflow import machines

    @dataclass(frozen=True)
    class Subtract(ModulePass):
        name = "test-subtract"

        def apply(self, ctx, op) -> None:  # type: ignore[no-untyped-def]
            grad = next(f for f in op.walk() if isinstance(f, func.FuncOp)
                        and f.sym_name.data.endswith("_grad"))  # fmt: skip
            add = next(o for o in grad.walk() if isinstance(o, arith.AddfOp))
            Rewriter.replace_op(add, arith.SubfOp(*add.operands))

    real = machines.pipeline
    monkeypatch.setattr(machines, "pipeline", lambda variant, *a, **k: [
        *real(variant, *a, **k), *([Subtract()] if variant == "regions" else [])])
    mlir, _ = _compiled(variant_corpus / "smooth.c", tmp_path)
    verdict, msg, _ = enzyme_corpus.variants(mlir, tmp_path, enzyme_corpus.call_sites(
        variant_corpus / "smooth.c", []))
    assert verdict == "differs"
    assert re.match(r"@smooth: regions: \S+ differs from the Enzyme layout's in \d+ of \d+ "
                    r"elements \(max \|diff\| \S+; first \S+: \S+, Enzyme \S+\)$", msg), msg
