"""`benchmarks/enzyme_corpus.py --check` on small files written in the style of Enzyme's
integration tests (`#include "../test_utils.h"`, APPROX_EQ in `main`)."""

from __future__ import annotations

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


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    (tmp_path / "test_utils.h").write_text(UTILS)
    folder = tmp_path / "ReverseMode"
    folder.mkdir()
    for name, text in (("cubes", CUBES), ("stairs", STAIRS), ("scale", SCALE)):
        (folder / f"{name}.c").write_text(text)
    return folder


def test_check_verdicts(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert enzyme_corpus.main([str(corpus), "--check"]) == 0
    out = capsys.readouterr().out
    assert "| accepted | 3 |" in out
    assert "| correct | 2 |" in out and "| wrong | 1 |" in out
    assert "| unchecked | 0 |" in out and "| broken | 0 |" in out
    assert "stairs.c: wrong: @stairs x[0]: AD 0.0  FD " in out
    tail = out.split("| broken |")[1]
    assert "cubes.c" not in tail and "scale.c" not in tail  # scale: the adjoint test


def test_check_is_opt_in(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert enzyme_corpus.main([str(corpus)]) == 0
    assert "gradient (finite differences)" not in capsys.readouterr().out
