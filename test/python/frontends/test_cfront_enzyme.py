"""C written as Enzyme's users write it (issue 23): Enzyme's activities, attributes and
the common C around them, each construct's gradient against central differences."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

from tapeflow.transforms.autodiff import AutodiffPass

from helpers.cfront import (
    check_fd,
    compile_and_differentiate,
    copy_args,
    enzyme_gradient,
    loss_fn,
    u,
)
from helpers.paths import ROOT
from tapeflow.frontends.c import compile_c
from tapeflow.registry import make_context


ACTIVITIES = """
#include <enzyme/enzyme.h>
#include <math.h>
double f(double *x, double *w, int n, double s) {
  double r = 0.0;
  for (int i = 0; i < n; i++)
    r += sin(x[i]) * w[i] * s * s;
  return r;
}
void drive(double *x, double *dx, double *w, double *dw, double s) {
  __enzyme_autodiff((void *)f, x, dx, w, dw, 4, s);
  __enzyme_autodiff((void *)f, x, dx, enzyme_const, w, 4, enzyme_const, s);
  __enzyme_autodiff((void *)f, enzyme_const, x, enzyme_dupnoneed, w, dw, 4, s);
}
"""


def test_activities_one_gradient_per_signature():
    """Default (all active), x only (w and s enzyme_const), w and s (x const): each
    gradient is the finite difference, has no entry for its constants, and agrees
    bit for bit with the all-active gradient where both have one."""
    module = compile_and_differentiate(ACTIVITIES)
    args = [u(4), u(4, seed=1), 4, 0.7]
    full_a, full_s = check_fd(module, "f", args)
    assert set(full_a) == {0, 1}
    assert set(full_s) == {3}
    only_x_a, only_x_s = check_fd(module, "f_dccc", args)
    assert set(only_x_a) == {0}
    assert not only_x_s
    assert np.array_equal(only_x_a[0], full_a[0])
    ws_a, ws_s = check_fd(module, "f_cdca", args)
    assert set(ws_a) == {1}
    assert set(ws_s) == {3}
    assert np.array_equal(ws_a[1], full_a[1])
    assert ws_s[3] == full_s[3]


def test_enzyme_header_is_package_data():
    """`<enzyme/enzyme.h>` is found from the installed package, not only a checkout: the
    pyproject's package-data pattern must match it."""
    import tomllib
    from pathlib import Path

    from tapeflow.frontends.c import INCLUDE_DIR

    root = ROOT
    data = tomllib.loads((root / "pyproject.toml").read_text())
    patterns = data["tool"]["setuptools"]["package-data"]["tapeflow.frontends.c"]
    package = Path(INCLUDE_DIR).parent
    shipped = {p for pat in patterns for p in package.glob(pat)}
    assert Path(INCLUDE_DIR, "enzyme", "enzyme.h") in shipped


ATTRIBUTES = """
#include <enzyme/enzyme.h>
#include <math.h>
#include <stdio.h>
__attribute__((enzyme_inactive)) double scale(double x) { return 2.0 * x; }
__attribute__((enzyme_inactive)) void show(const double *x) { printf("%f\\n", x[0]); }
double __attribute__((enzyme_function_like("log1p"))) my_log1p(double x) { return log(1.0 + x); }
double f(double *x, int n) {
  double r = 0.0;
  for (int i = 0; i < n; i++)
    r += scale(x[i]) * x[i] + my_log1p(x[i] * x[i]);
  show(x);
  printf("r = %f\\n", r);
  return r;
}
void grad(double *x, double *dx, int n) { __enzyme_autodiff((void *)f, x, dx, n); }
"""


def test_attributes_inactive_and_function_like(capfd):
    """The gradient the program's contract asks for (NumPy, by hand): `scale(x)` is a
    constant factor 2x (d/dx of 2x * x would be 4x), log1p's derivative; printf is
    dropped with a remark."""
    module = compile_and_differentiate(ATTRIBUTES)
    assert "printf in translated code is dropped" in capfd.readouterr().err
    x = u(5)
    arrays, _ = enzyme_gradient(module, "f", [x, 5])
    assert np.allclose(arrays[0], 2 * x + 2 * x / (1 + x * x), rtol=1e-14, atol=0)
    assert loss_fn(module, "f", [x, 5]) == pytest.approx(float(np.sum(2 * x * x + np.log1p(x * x))))


def test_builtin_math_and_infinity():
    """`__builtin_pow/cos/exp` and a maximum that starts at -INFINITY (softmax's)."""
    src = """
    #include <math.h>
    double f(double *x, int n) {
      double m = -INFINITY, s = 0.0;
      for (int i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
      for (int i = 0; i < n; i++) s += __builtin_exp(x[i] - m) * __builtin_cos(x[i]);
      return __builtin_pow(s, 1.5);
    }
    """
    module = compile_and_differentiate(src, functions=["f"])
    check_fd(module, "f", [u(5) * 0.5, 5])


def test_malloc_sizeof_in_any_order():
    src = """
    #include <stdlib.h>
    double f(const double *x, int n) {
      double *a = malloc(sizeof(double) * 2 * n);
      double *c = calloc(sizeof(double), n);
      for (int i = 0; i < n; i++) { a[2 * i] = x[i]; a[2 * i + 1] = x[i] * x[i] + c[i]; }
      double s = 0.0;
      for (int i = 0; i < 2 * n; i++) s += a[i] * a[i];
      free(a); free(c);
      return s;
    }
    """
    check_fd(compile_and_differentiate(src, functions=["f"]), "f", [u(3), 3])


EARLY_RETURN = """
double f(double x) {
  if (x > 0.0)
    return x * x;
  return -x;
}
double g(double *a, int n, double t) {
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) {
      if (a[i * n + j] > t)
        return a[i * n + j] * t;
    }
    a[i] = a[i] * 2.0;
  }
  return t * a[0];
}
void h(double *a, int n) {
  int i = 0;
  while (1) {
    if (i >= n || a[i] < 0.0) return;
    a[i] = a[i] * a[i];
    i++;
  }
}
double loss(double *a, int n) {
  h(a, n);
  double s = 0.0;
  for (int i = 0; i < n; i++) s += a[i] * (i + 1);
  return s;
}
"""


@pytest.mark.parametrize(("name", "args", "want"), [
    ("f", [2.0], 4.0), ("f", [-3.0], 3.0),
    ("g", [np.array([0.1, 0.2, 0.3, 0.9]), 2, 0.5], 0.45),  # a[1][1] > t, after a[0] *= 2
    ("g", [np.array([0.1, 0.2, 0.3, 0.4]), 2, 0.5], 0.5 * 0.1 * 2),  # no return: t * 2a[0]
    ("loss", [np.array([0.5, 0.7, -0.2, 0.9]), 4], 0.25 + 2 * 0.49 - 0.6 + 3.6),
])
def test_early_return(name, args, want):
    """`return` inside if, loops and nested loops: the value by hand, the gradient by
    finite differences."""
    module = compile_and_differentiate(EARLY_RETURN, functions=[name])
    assert loss_fn(module, name, args) == pytest.approx(want, rel=1e-12)
    check_fd(module, name, args)


def test_early_return_leaves_every_loop():
    """A return in the inner loop of a loop nest whose outer body is that loop alone:
    later rows also hold larger values, which must not overwrite the returned one."""
    src = """
    double first_above(double *a, int n, double t) {
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
          if (a[i * n + j] > t)
            return a[i * n + j] * t;
      return t;
    }
    """
    module = compile_and_differentiate(src, functions=["first_above"])
    a = np.array([0.1, 0.2, 0.7, 0.3, 0.8, 0.9, 0.95, 0.99, 1.5])
    assert loss_fn(module, "first_above", [a, 3, 0.5]) == 0.7 * 0.5
    check_fd(module, "first_above", [a, 3, 0.5])


VIEWS = """
double rows(double *a, int n, int m) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    double *row = a + i * m;
    const double *prev = &a[(i + n - 1) % n * m];
    for (int j = 0; j < m; j++)
      s += row[j] * prev[j] * a[j];
  }
  return s;
}
double smooth(double *a, int n) {
  double *p = a + 1;
  for (int i = 1; i < n - 1; i++) {
    p[0] = 0.5 * p[0] + 0.25 * (p[-1] + p[1]) * p[1];
    p += 1;
  }
  double s = 0.0, *q;
  q = a;
  for (int i = 0; i < n; i++) { s += *q * *q; q++; }
  return s;
}
"""


@pytest.mark.parametrize(("name", "args"), [("rows", [u(12), 3, 4]), ("smooth", [u(6), 6])])
def test_pointer_views(name, args):
    """Views aliasing the array they point into (reads and in-place writes through them)."""
    check_fd(compile_and_differentiate(VIEWS, functions=[name]), name, args)


def test_rnn_through_pointer_offsets_has_its_mlir_twins_tape():
    """Issue 23 item 4: the RNN whose state buffer is indexed through `h + t*H` (C) and
    its hand-written MLIR twin (`h[t*H + j]`): bit-identical gradients and equal tape
    bytes on the hardware model; the C gradient is the finite difference."""
    from pathlib import Path

    from tapeflow.simulate import simulate

    from tapeflow.diagnostics import parse_module

    here = Path(__file__).resolve().parent / "cfront_rnn"
    c = compile_c((here / "rnn.c").read_text(), str(here / "rnn.c"))
    twin = parse_module(make_context(), (here / "rnn.mlir").read_text(), "rnn.mlir")
    rng = np.random.default_rng(0)
    W, U, x, h = rng.uniform(-1, 1, 9), rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 4), np.zeros(15)
    h[:3] = rng.uniform(-1, 1, 3)
    sims = []
    for module in (c, twin):
        AutodiffPass().apply(make_context(), module)
        args = [W, np.zeros(9), U, np.zeros(3), x, np.zeros(4), h, np.zeros(15), 1.0]
        sims.append(simulate(module, "rnn_grad", copy_args(args)))
    for p in (1, 3, 5, 7):
        c_grad, twin_grad = (np.asarray(s.run.arguments[p]) for s in sims)
        assert np.array_equal(c_grad, twin_grad)
    assert sims[0].report["tape_bytes"] == sims[1].report["tape_bytes"] > 0
    check_fd(c, "rnn", [W, U, x, h])


def test_memcpy_and_memset():
    src = """
    #include <string.h>
    double f(const double *x, double *y, int n) {
      double work[8];
      memcpy(work, x, n * sizeof(double));
      memcpy(work + n, y, sizeof(double) * n);
      memset(y, 0, n * sizeof(double));
      double s = 0.0;
      for (int i = 0; i < n; i++) { y[i] += work[i] * work[i + n]; s += y[i] * work[i]; }
      return s;
    }
    """
    check_fd(compile_and_differentiate(src, functions=["f"]), "f", [u(4), u(4, seed=2), 4])



def test_memmove_within_one_array():
    """An overlapping memmove (a shift right, then left) is C's copy "as if" through a
    temporary: the primal as NumPy's, the gradient as central differences. (It was one
    forward loop, which smeared x[0] over the array.)"""
    src = """
    #include <string.h>
    double f(double *x, int n) {
      memmove(x + 1, x, (n - 1) * sizeof(double));
      x[0] = 0.5 * x[1];
      double *t = x + 2;
      memmove(x, t, (n - 2) * sizeof(double));
      double s = 0.0;
      for (int i = 0; i < n; i++) s += x[i] * x[i] * (i + 1);
      return s;
    }
    """
    x, n = u(6), 6
    y = np.concatenate([[0.5 * x[0]], x[:-1]])
    y = np.concatenate([y[2:], y[-2:]])
    module = compile_and_differentiate(src, functions=["f"])
    want = float((y * y * np.arange(1, n + 1)).sum())
    assert loss_fn(module, "f", [x, n]) == pytest.approx(want, rel=1e-12)
    check_fd(module, "f", [x, n])


def test_for_ever_with_break_and_return():
    """`for (;;)` and `for (i = 0;; i++)` leave by `break` or `return` (they were refused)."""
    src = """
    double f(double *x, int n) {
      double s = 0.0;
      int i = 0;
      for (;;) {
        if (i >= n) break;
        s += x[i] * x[i];
        i++;
      }
      for (int k = 0;; k++) {
        s += s * x[k];
        if (s > 2.0) return s * x[k];
        if (k == n - 1) return s;
      }
    }
    """
    module = compile_and_differentiate(src, functions=["f"])
    for x in (u(5), 2 * u(5, seed=3), 0.1 * u(5, seed=4)):
        check_fd(module, "f", [x, 5])

def test_pointer_to_pointer_rows():
    src = """
    double f(double **a, double *v, int n, int m) {
      double s = 0.0;
      for (int i = 0; i < n; i++) {
        double r = 0.0;
        for (int j = 0; j < m; j++) r += a[i][j] * v[j];
        s += r * r;
      }
      return s;
    }
    """
    check_fd(compile_and_differentiate(src, functions=["f"]), "f", [u(2, 3), u(3, seed=1), 2, 3])


STRUCTS = """
typedef struct { double x, y; double v[2]; } Particle;
struct System { Particle a; double k; };
double total(const Particle *ps, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += ps[i].x * ps[i].v[1] + ps[i].y * ps[i].y * ps[i].v[0];
  return s;
}
double spring(struct System *s) {
  s->a.x = s->a.y * s->k;
  return s->a.x * (*s).k + s->a.v[1];
}
"""


@pytest.mark.parametrize(("name", "args"), [("total", [u(8), 2]), ("spring", [u(5)])])
def test_struct_pointers(name, args):
    """Structs of doubles by pointer (an array of them, nested, written through): the
    memref is C's layout of their doubles, so the gradient is per field."""
    check_fd(compile_and_differentiate(STRUCTS, functions=[name]), name, args)


def test_constant_array_written_with_active_values_is_an_error():
    """enzyme_const on an array the function writes active values into: no shadow can
    hold their adjoint, so the AD refuses it instead of silently dropping that path."""
    from xdsl.utils.exceptions import PassFailedException

    src = """
    double f(double *x, double *tmp) { tmp[0] = x[0] * x[0]; return tmp[0]; }
    void g(double *x, double *dx, double *tmp) {
      __enzyme_autodiff((void *)f, x, dx, enzyme_const, tmp);
    }
    """
    module = compile_c(src, "test.c")
    with pytest.raises(PassFailedException, match="argument 1 is constant"):
        AutodiffPass().apply(make_context(), module)


def test_pointers_into_arrays_passed_to_functions():
    """`dot(A + i*n, x, n)`, `ke(ps + i)`, `ke(&ps[i])`: the callee's variant `dot_at0`
    takes the offset as well, so inlined into the caller the AD sees one array."""
    src = """
    typedef struct { double x, v; } P;
    double dot(const double *a, const double *b, int n) {
      double s = 0; for (int i = 0; i < n; i++) s += a[i] * b[i]; return s;
    }
    double ke(const P *p) { return 0.5 * p->v * p->v * p->x; }
    double f(double *A, double *x, int n, P *ps) {
      double l = 0;
      for (int i = 0; i < n; i++) {
        double y = dot(A + i * n, x, n);
        l += y * y + ke(ps + i) * ke(&ps[n - 1 - i]);
      }
      return l;
    }
    """
    module = compile_and_differentiate(src, functions=["f"])
    check_fd(module, "f", [u(9), u(3, seed=1), 3, u(6, seed=2)])
