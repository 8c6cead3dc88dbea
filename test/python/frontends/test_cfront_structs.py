"""Structs as Enzyme's users write them (issue 23): by pointer with integer fields (a
float memref and an integer memref) or pointer fields (a memref each), by value (one
scalar per field), returned, passed as `&s`; each gradient against central differences,
and against a NumPy formula where there is one. The README section "C kernels" says how
a struct maps to IR arguments."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

from helpers.cfront import check_fd, compile_and_differentiate, u

from tapeflow import runner
from tapeflow.diagnostics import ToolError
from tapeflow.frontends.c import compile_c

MIXED = """
#include <enzyme/enzyme.h>
typedef struct { int n; double v[4]; double w; } S;
typedef struct { double x; long k; double y; } P;
static double dot(const S *s) {
  double r = 0.0;
  for (int i = 0; i < s->n; i++) r += s->v[i] * s->w;
  return r;
}
double f(S *s) {
  s->n = s->n - 1;      /* an integer field written, then read by the callee */
  return dot(s) * s->v[3];
}
double g(P *ps, int m) {
  double r = 0.0;
  for (int i = 0; i < m; i++) r += ps[i].x * ps[i].k + ps[i].y * ps[i].y * ps[i].x;
  return r;
}
void d(S *s, S *ds, P *p, P *dp) {
  __enzyme_autodiff((void *)f, s, ds);
  __enzyme_autodiff((void *)g, enzyme_dup, p, dp, 3);
}
"""


def test_struct_pointer_with_integer_fields():
    """`S *s` is (floats v[0..3], w; ints n): the shadow (Enzyme's `ds`, a struct of the
    same type whose integer fields are unused) is the float memref's shadow. n = 4 is
    written to 3 in f, so f = w v[3] (v[0] + v[1] + v[2]): df/dv[k] = w v[3] (k < 3),
    df/dv[3] = w (v[0] + v[1] + v[2]), df/dw = v[3] (v[0] + v[1] + v[2])."""
    module = compile_and_differentiate(MIXED)
    floats, ints = u(5), np.array([4], dtype=np.int64)
    arrays, _ = check_fd(module, "f", [floats, ints])
    v, w = floats[:4], floats[4]
    expect = np.array([w * v[3]] * 3 + [w * v[:3].sum(), v[3] * v[:3].sum()])
    assert np.allclose(arrays[0], expect, rtol=1e-12, atol=0)
    assert list(ints) == [4]  # the primal's memory is not changed by the gradient call


def test_array_of_structs_with_integer_fields():
    """`ps[i].x`, `ps[i].k`: struct i's floats at 2i, 2i+1 and its integer at i."""
    module = compile_and_differentiate(MIXED)
    floats, ints = u(6, seed=3), np.array([2, -1, 5], dtype=np.int64)
    arrays, _ = check_fd(module, "g", [floats, ints, 3])
    x, y = floats[0::2], floats[1::2]
    expect = np.empty(6)
    expect[0::2] = ints + y * y
    expect[1::2] = 2 * y * x
    assert np.allclose(arrays[0], expect, rtol=1e-12, atol=0)


NESTED = """
typedef struct { int a; double b[2]; } Item;
typedef struct { double s; Item items[3]; int n; } Box;
double f(Box *p) {
  double r = p->s;
  for (int i = 0; i < p->n; i++) r += p->items[i].b[1] * p->items[i].a * p->items[2 - i].b[0];
  return r;
}
double g(Box b) { return b.items[1].b[0] * b.items[2].a + b.s * b.items[0].b[1]; }
"""


def test_nested_arrays_of_structs_with_integer_fields():
    """`p->items[i].b[1]` with items of `{int a; double b[2]}`: floats s, b00, b01,
    b10...; integers a0, a1, a2, n (NumPy formula); by value, the fields in that order."""
    module = compile_and_differentiate(NESTED, functions=["f", "g"])
    floats, ints = u(7, seed=8), np.array([2, 3, 5, 3], dtype=np.int64)
    arrays, _ = check_fd(module, "f", [floats, ints])
    b, a = floats[1:].reshape(3, 2), ints[:3]
    expect = np.zeros((3, 2))
    for i in range(3):
        expect[i, 1] += a[i] * b[2 - i, 0]
        expect[2 - i, 0] += b[i, 1] * a[i]
    assert np.allclose(arrays[0], [1.0, *expect.ravel()], rtol=1e-12, atol=0)
    args = [0.5, 1, 0.1, 0.2, 2, 0.3, 0.4, 3, 0.6, 0.7, 9]
    _, scalars = check_fd(module, "g", args)
    assert (scalars[0], scalars[3], scalars[5]) == (0.2, 0.5, 3.0)


VIEWS = """
typedef struct { double x, v; int id; } P;
static double ke(const P *p) { return 0.5 * p->v * p->v * p->x * p->id; }
double f(P *ps, int n) {
  double e = 0;
  for (int i = 0; i < n; i++) e += ke(&ps[i]) * ke(ps + (n - 1 - i));
  const P *q = ps + 1;
  q++;
  return e + q->x * q[-1].id;
}
"""


def test_pointers_into_arrays_of_structs_with_integer_fields():
    """`ke(&ps[i])`, `ps + k`, `q++`, `q[-1]`: the offset counts structs, each memref
    is indexed at it times the struct's count of its kind (2 floats, 1 integer)."""
    module = compile_and_differentiate(VIEWS, functions=["f"])
    floats, ids = u(6, seed=7), np.array([2, 3, 5], dtype=np.int64)
    arrays, _ = check_fd(module, "f", [floats, ids, 3])
    x, v = floats[0::2], floats[1::2]
    ke = 0.5 * v * v * x * ids
    dke_dx, dke_dv = 0.5 * v * v * ids, v * x * ids
    partner = ke[::-1]  # struct i pairs with n - 1 - i, twice (as i and as n - 1 - i)
    expect = np.empty(6)
    expect[0::2] = 2 * dke_dx * partner
    expect[1::2] = 2 * dke_dv * partner
    expect[4] += ids[1]  # q->x * q[-1].id with q = ps + 2
    assert np.allclose(arrays[0], expect, rtol=1e-12, atol=0)


LOCAL_ARRAYS = """
typedef struct { double x, v; int id; } P;
typedef struct { double a, b; } Q;
static double ke(const P *p) { return 0.5 * p->v * p->v * p->x * p->id; }
static double tot(const P *ps, int n) {
  double e = 0;
  for (int i = 0; i < n; i++) e += ke(&ps[i]);
  return e;
}
double f(double s, double t) {
  P ps[2] = {{s, t, 2}, {t * s, 1.0, 3}};
  Q qs[3];
  for (int i = 0; i < 3; i++) { qs[i].a = s * i; qs[i].b = t; }
  ps[1].v += qs[2].a * qs[1].b;
  P w = ps[0];
  return tot(ps, 2) + w.x * qs[0].b + ke(&ps[1]);
}
"""


def test_local_arrays_of_structs():
    """`P ps[2] = {...}`, `Q qs[3]`: stack memrefs in the struct pointer layout, passed
    whole (`tot(ps, 2)`) and as views (`ke(&ps[1])`): f = ke(ps[0]) + 2 ke(ps[1]) + s t
    with ps[1].v = 1 + 2 s t; its value and derivative against that formula's."""
    module = compile_and_differentiate(LOCAL_ARRAYS, functions=["f"])
    s, t = 0.7, -0.4
    _, scalars = check_fd(module, "f", [s, t])

    def f(s, t):
        v1 = 1.0 + 2 * s * t
        return 0.5 * t * t * s * 2 + 2 * (0.5 * v1 * v1 * t * s * 3) + s * t

    h = 1e-7
    assert scalars[0] == pytest.approx((f(s + h, t) - f(s - h, t)) / (2 * h), rel=1e-6)
    primal = runner.run_function(module, "f", [s, t]).results[0]
    assert primal == pytest.approx(f(s, t), rel=1e-14)


MEMORY = """
struct V { double x; int n; double y; };
double h(struct V *p, struct V *q) {
  struct V w = p[1];   /* a struct value loaded from memory, field by field */
  w.x *= w.n;
  *q = w;              /* and stored */
  q[1] = *p;
  return w.x * w.y + q[0].x * q[1].y + q[1].n;
}
"""


def test_struct_values_loaded_and_stored():
    """`w = p[1]`, `*q = w`, `q[1] = *p`: q's floats are overwritten (gradient 0), the
    loss reaches p through them: d/dp[1].x = n1 y1 + n1 y0, d/dp[0].y = n1 x1."""
    module = compile_and_differentiate(MEMORY, functions=["h"])
    pf, pi = u(4, seed=5), np.array([2, 3], dtype=np.int64)
    arrays, _ = check_fd(module, "h", [pf, pi, u(4, seed=6), np.zeros(2, np.int64)])
    (x0, y0, x1, y1), n1 = pf, pi[1]
    assert np.allclose(arrays[0], [0.0, n1 * x1, n1 * (y1 + y0), n1 * x1], rtol=1e-12, atol=0)
    assert not arrays[2].any()


ADDRESS = """
#include <enzyme/enzyme.h>
typedef struct { double x, v; int steps; } State;
static void step(State *s, double dt) { s->v -= dt * s->x; s->x += dt * s->v; s->steps++; }
double f(double x0, double dt) {
  State s = {x0, 0.0, 0};
  for (int i = 0; i < 3; i++) step(&s, dt);
  for (int i = 0; i < s.steps; i++) s.x *= 1.01;
  return s.x * s.v;
}
void d(double x0, double dt) { __enzyme_autodiff((void *)f, x0, dt); }
"""


def test_address_of_a_struct_by_value():
    """`step(&s, dt)` on a local struct: its fields go through stack memrefs in the
    callee's layout and come back after the call (the loop carries them); the integer
    field written by the callee bounds the next loop (3 steps: x * 1.01^3)."""
    module = compile_and_differentiate(ADDRESS)
    _, scalars = check_fd(module, "f", [0.8, 0.1])
    x, v = 0.8, 0.0
    for _ in range(3):
        v -= 0.1 * x
        x += 0.1 * v
    assert runner.run_function(module, "f", [0.8, 0.1]).results[0] == pytest.approx(
        x * 1.01**3 * v, rel=1e-14
    )
    assert set(scalars) == {0, 1}


POINTER_FIELDS = """
#include <enzyme/enzyme.h>
typedef struct { long long R_start; float *data; } WINDOW_FRAME;
typedef struct { int n; double *x; double scale; double *w; } Vec;
static double sum(const double *a, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i];
  return s;
}
double f(Vec *v) {
  double r = 0.0;
  for (int i = 0; i < v->n; i++) r += v->x[i] * v->w[i] * v->scale;
  v->w[0] = r;
  double *x = v->x;
  return r * sum(x, v->n) + *v->w;
}
float tile(WINDOW_FRAME *frame) {
  float s = 0;
  for (long long i = frame->R_start; i < 8; i++) s += frame->data[i];
  return s;
}
void d(Vec *v, Vec *dv, WINDOW_FRAME *fr, WINDOW_FRAME *dfr) {
  __enzyme_autodiff((void *)f, v, dv);
  __enzyme_autodiff((void *)tile, fr, dfr);
}
"""


def test_struct_pointer_with_pointer_fields():
    """`Vec *v` is (floats: scale; ints: n; v->x; v->w), each pointer field a memref
    whose shadow follows it, as Enzyme's `dv->x`, `dv->w` point to the shadows of the
    arrays (mixedstruct1-simple.c's `d_frame->data = d_data`)."""
    module = compile_and_differentiate(POINTER_FIELDS)
    check_fd(module, "f", [u(1), np.array([3], dtype=np.int64), u(3, seed=1), u(3, seed=2)])


def test_float_pointer_field_gradient():
    """mixedstruct1-simple.c's frame, without its recursion: d/d data[i] of the f32 sum
    from R_start is exactly 1 for i >= R_start, 0 before (Enzyme's test expects 1s)."""
    module = compile_and_differentiate(POINTER_FIELDS)
    data = np.arange(8, dtype=np.float32)
    args = [np.array([3]), data, np.zeros(8, np.float32), 1.0]
    r = runner.run_function(module, "tile_grad", args)
    assert list(r.arguments[2]) == [0.0] * 3 + [1.0] * 5


BY_VALUE = """
#include <enzyme/enzyme.h>
#include <math.h>
struct V { double x, y; };
typedef struct { struct V p; double m; int k; double a[2]; } B;
struct V add(struct V a, struct V b) { struct V r = {a.x + b.x, a.y + b.y}; return r; }
struct V scale(struct V a, double s) { return (struct V){a.x * s, a.y * s}; }
double norm2(struct V v) { return v.x * v.x + v.y * v.y; }
double f(struct V u, double s, B b) {
  struct V w = add(u, scale(u, s));
  struct V z;
  z = w;
  for (int i = 0; i < b.k; i++) {
    z.x = z.x * b.m + b.a[1];
    z.y += sin(z.x) * b.p.y;
  }
  if (z.x > 0) z = scale(z, 2.0);
  B c = {{1.0, 2.0}, 3.0, 2, {4.0, 5.0}};
  B e = {1.0, 2.0, 3.0};  /* brace elision: e.p = {1, 2}, e.m = 3, the rest zero */
  return norm2(z) + c.a[1] * e.p.y + e.a[1] + b.a[0] * e.m;
}
struct V polar(double r, double t) { struct V p = {r * cos(t), r * sin(t)}; return p; }
void d(struct V u, double s, B b, B db) {
  __enzyme_autodiff((void *)f, u, s, b);
  __enzyme_autodiff((void *)f, enzyme_const, u, s, enzyme_const, b);
}
"""


@pytest.mark.parametrize("xsign", [1.0, -1.0])
def test_struct_by_value(xsign):
    """Active structs by value (Enzyme's default for a struct of floats): each float
    field is an active scalar, its gradient one of `f_grad`'s results in field order
    (u.x, u.y, s, b.p.x, b.p.y, b.m, b.a[0], b.a[1]); locals, assignments, loops and
    branches that carry them, calls taking and returning them."""
    module = compile_and_differentiate(BY_VALUE)
    args = [xsign * 0.3, 0.2, 0.5, 0.1, 0.4, 0.9, 3, 0.7, -0.2]
    _, scalars = check_fd(module, "f", args)
    assert sorted(scalars) == [0, 1, 2, 3, 4, 5, 7, 8]  # b.k (an int) has no gradient
    assert scalars[7] == pytest.approx(3.0)  # b.a[0] * e.m, e.m = 3 from the elided braces


def test_struct_by_value_constant():
    """`enzyme_const` on a struct by value: `f_cac_grad` has the gradient of `s` only,
    equal to the all-active one."""
    module = compile_and_differentiate(BY_VALUE)
    args = [0.3, 0.2, 0.5, 0.1, 0.4, 0.9, 3, 0.7, -0.2]
    _, full = check_fd(module, "f", args)
    _, only_s = check_fd(module, "f_cac", args)
    assert list(only_s) == [2]
    assert only_s[2] == full[2]


def test_struct_returned_from_the_differentiated_function():
    """A struct result is one float result per field, each with its seed (its shadow):
    seeds (1, 0) give d(r cos t), (0, 1) d(r sin t)."""
    module = compile_and_differentiate(BY_VALUE, functions=["polar"])
    r, t = 1.5, 0.4
    primal = runner.run_function(module, "polar", [r, t]).results
    assert np.allclose(primal, [r * np.cos(t), r * np.sin(t)])
    gx = runner.run_function(module, "polar_grad", [r, t, 1.0, 0.0]).results
    gy = runner.run_function(module, "polar_grad", [r, t, 0.0, 1.0]).results
    assert np.allclose(gx, [np.cos(t), -r * np.sin(t)], rtol=1e-14)
    assert np.allclose(gy, [np.sin(t), r * np.cos(t)], rtol=1e-14)


@pytest.mark.parametrize(
    ("src", "message"),
    [
        ("union U { double d; long l; }; double f(union U *p) { return p->d; }",
         "test.c:1:50: unsupported C: union 'union U'"),
        ("struct P { double *data; int n; }; double f(struct P *ps) { return ps[1].data[0]; }",
         "test.c:1:74: unsupported C: the pointer field 'data' of a struct in an array"),
        ("struct P { double **rows; }; double f(struct P *p) { return p->rows[0][0]; }",
         "unsupported C: the field 'rows' of type 'double **' in 'struct P'"),
        ("struct P { double x; int *n; }; double f(struct P *ps) { return (ps + 1)->x; }",
         "test.c:1:66: unsupported C: a pointer into an array of 'struct P' (a struct with "
         "pointer fields)"),
        ("struct V { double v[2]; }; double f(struct V a, int i) { return a.v[i]; }",
         "unsupported C: a subscript that is not a constant"),
        ("struct V { double x, y; }; double f(double a) { struct V v = {.y = a}; return v.y; }",
         "unsupported C: designated initializers"),
        ("struct V { double x, *y; }; double f(double a) { struct V vs[2]; return a; }",
         "test.c:1:59: unsupported C: a local array of 'struct V' (a struct with pointer "
         "fields)"),
        ("struct V { double x, y; }; double g(struct V *v, struct V *w) { return v->x; }\n"
         "double f(double a) { struct V v = {a, a}; return g(&v, &v); }",
         "test.c:2:56: unsupported C: '& v' passed twice to one call"),
        # whole-struct copies (test_cfront_struct_copy.py)
        ("typedef struct { int n; double *d; } F;\n"
         "double f(F *o, F *i) { *o = *i; return 0.0; }",
         "test.c:2:24: unsupported C: copying a struct with pointer fields into '* o'"),
        ("#include <stdlib.h>\ntypedef struct { int n; double *d; } F;\n"
         "double f(F *p, int k) { F *b = malloc(sizeof(F));\n"
         "  if (k) { *b = *p; } return b->d[0]; }",
         "test.c:4:12: unsupported C: assigning the pointer field 'd' of '* b' (once, at the "
         "top level of the block declaring the struct)"),
        ("typedef struct { int n; double *d; } F;\n"
         "double f(F *ps) { F s = ps[1]; return s.d[0]; }",
         "test.c:2:25: unsupported C: copying 'ps [ 1 ]': a struct with pointer fields in "
         "an array"),
    ],
)
def test_refused_struct_forms(src, message):
    """What stays outside: one located `unsupported C:` error each."""
    with pytest.raises(ToolError, match=re.escape(message)):
        compile_c(src, "test.c")
