"""The C frontend (`tapeflow.frontends.c`): gradients of C programs against finite
differences, and the bundled C kernels against their MLIR twins, bit for bit."""

from __future__ import annotations


import numpy as np
import pytest

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

from xdsl.dialects.builtin import Float32Type, Float64Type, MemRefType

from tapeflow import runner
from tapeflow.frontends.c import compile_c
from tapeflow.registry import make_context
from tapeflow.transforms.autodiff import AutodiffPass
from helpers.paths import ROOT

C_KERNELS = ROOT / "benchmarks" / "kernels" / "c"


def _is_float(t) -> bool:
    return isinstance(t, (Float64Type, Float32Type))


def differentiate(src: str, name: str):
    module = compile_c(src, "test.c", functions=[name])
    AutodiffPass().apply(make_context(), module)
    return module


def _copy(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def gradient(module, name: str, args, shadows=None):
    """(d loss / d each float array, d loss / d each float scalar) from `@name_grad`."""
    types = runner.find_function(module, name).function_type.inputs.data
    call, shadow_pos = [], []
    for p, (a, t) in enumerate(zip(args, types)):
        call.append(a.copy() if isinstance(a, np.ndarray) else a)
        if isinstance(t, MemRefType) and _is_float(t.element_type):
            shadow_pos.append((p, len(call)))
            seed = (shadows or {}).get(p)
            call.append(np.zeros_like(a) if seed is None else seed.copy())
    result_types = runner.find_function(module, name).function_type.outputs.data
    if result_types and _is_float(result_types[0]):
        call.append(1.0)
    r = runner.run_function(module, f"{name}_grad", call)
    return {p: r.arguments[q] for p, q in shadow_pos}, list(r.results)


def loss_of(module, name: str, args, output=None) -> float:
    r = runner.run_function(module, name, _copy(args))
    if output is None:
        return float(r.results[0])
    p, index = output
    return float(r.arguments[p][index])


def check_fd(src: str, name: str, args, output=None, eps=1e-6, rtol=1e-6, atol=1e-8):
    """Every float input's gradient against central differences of the primal."""
    module = differentiate(src, name)
    types = runner.find_function(module, name).function_type.inputs.data
    shadows = None
    if output is not None:  # the loss is an element of a float array: seed its shadow
        p, index = output
        seed = np.zeros_like(args[p])
        seed[index] = 1.0
        shadows = {p: seed}
    arrays, scalars = gradient(module, name, args, shadows)
    checked = 0
    scalar_index = 0
    for p, (a, t) in enumerate(zip(args, types)):
        if isinstance(t, MemRefType) and _is_float(t.element_type):
            for idx in np.ndindex(a.shape):
                plus, minus = _copy(args), _copy(args)
                plus[p][idx] += eps
                minus[p][idx] -= eps
                fd = (loss_of(module, name, plus, output) - loss_of(module, name, minus, output)) / (2 * eps)
                assert arrays[p][idx] == pytest.approx(fd, rel=rtol, abs=atol), (p, idx)
                checked += 1
        elif _is_float(t):
            plus, minus = _copy(args), _copy(args)
            plus[p] += eps
            minus[p] -= eps
            fd = (loss_of(module, name, plus, output) - loss_of(module, name, minus, output)) / (2 * eps)
            assert scalars[scalar_index] == pytest.approx(fd, rel=rtol, abs=atol), p
            scalar_index += 1
            checked += 1
    assert checked > 0
    return arrays, scalars


RNG = np.random.default_rng(7)


def u(*shape):
    return RNG.uniform(-1.0, 1.0, size=shape)


def test_in_place_update_through_pointers():
    # x is overwritten in place each step (the AD must cache the overwritten values).
    src = """
    #include <math.h>
    double f(double *x, const double *w, int n, int steps) {
      for (int t = 0; t < steps; t++)
        for (int i = 0; i < n; i++)
          x[i] = sin(x[i]) * w[i] + 0.5 * x[i];
      double s = 0;
      for (int i = 0; i < n; i++) s += x[i] * x[i];
      return s;
    }"""
    check_fd(src, "f", [u(5), u(5), 5, 3])


def test_output_through_a_pointer():
    # A void function returns its loss through `*out`: the seed is the shadow of out.
    src = """
    #include <math.h>
    void f(const double *x, double *out, int n) {
      double s = 0.0;
      for (int i = 0; i < n; i++) s += exp(x[i]) * x[i];
      *out = s;
    }"""
    check_fd(src, "f", [u(4), np.zeros(1), 4], output=(1, (0,)))


def test_csr_indirect_indexing_with_bounds_loaded_from_memory():
    # y = A x with A in CSR: `x[col[k]]` is indirect, the inner bounds are rowptr loads.
    src = """
    double spmv(const int *rowptr, const int *col, const double *val, const double *x,
                double *y, int n) {
      for (int i = 0; i < n; i++) {
        double acc = 0.0;
        for (int k = rowptr[i]; k < rowptr[i + 1]; k++)
          acc += val[k] * x[col[k]];
        y[i] = acc;
      }
      double loss = 0.0;
      for (int i = 0; i < n; i++) loss += y[i] * y[i] * y[i];
      return loss;
    }"""
    rowptr = np.array([0, 2, 3, 6, 7], dtype=np.int32)
    col = np.array([0, 3, 1, 0, 2, 3, 2], dtype=np.int32)
    arrays, _ = check_fd(src, "spmv", [rowptr, col, u(7), u(4), np.zeros(4), 4])
    assert np.any(arrays[3] != 0) and np.any(arrays[2] != 0)


def test_time_loop_with_accumulator_and_active_scalar():
    # A time loop carrying an accumulator (iter_args) and a float scalar argument (dt),
    # whose gradient is a result of @f_grad.
    src = """
    #include <math.h>
    double f(double u[6], double dt, int steps) {
      double energy = 0.0;
      for (int t = 0; t < steps; t++) {
        double e = 0.0;
        for (int i = 1; i < 5; i++) {
          u[i] = u[i] + dt * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
          e += u[i] * u[i];
        }
        energy = 0.9 * energy + tanh(e);
      }
      return energy;
    }"""
    _, scalars = check_fd(src, "f", [u(6), 0.1, 4])
    assert len(scalars) == 1


def test_while_do_if_ternary_and_short_circuit():
    # Non-canonical loops (scf.while), branches with results, ?: and && that guards a load.
    src = """
    #include <math.h>
    double f(double *x, int n) {
      double s = 0.0;
      int i = 0;
      while (i < n && x[i] < 10.0) {
        if (x[i] > 0.0) s += x[i] * x[i];
        else s -= 0.5 * x[i];
        i += 2;
      }
      int k = 0;
      do {
        s = s * 1.1 + (x[k] > s ? x[k] : s);
        k++;
      } while (k < 3);
      for (int j = n - 1; j >= 0; j--) s += cos(x[j]) / (double)(j + 1);
      return s;
    }"""
    check_fd(src, "f", [u(7), 7])


def test_break_and_continue():
    # Jumps become flags: `continue` guards the rest of the iteration, `break` also ends
    # the loop (an scf.while whose test is `running && cond`); an early exit on data.
    src = """
    #include <math.h>
    double f(double *x, int n) {
      double s = 0.0;
      for (int i = 0; i < n; i++) {
        if (x[i] < -0.5) continue;
        s += x[i] * x[i];
        if (s > 1.5) { s = s * 0.5; break; }
        s += sin(x[i]);
      }
      int j = 0;
      do {
        j++;
        if (x[j - 1] > 0.8) continue;
        s = s * (1.0 + x[j - 1]);
      } while (j < n);
      return s;
    }"""
    x = np.array([0.3, -0.7, 0.9, 0.4, 1.2, -0.2, 0.5])
    check_fd(src, "f", [x, 7])
    # The data decides: with small values the loop runs to the end, no break.
    check_fd(src, "f", [x * 0.1, 7])


def test_locals_tables_malloc_and_calls():
    # A local array, a static const table, malloc/free, a call between functions,
    # #define constants, float (f32) arithmetic and <math.h> functions.
    src = """
    #include <math.h>
    #include <stdlib.h>
    #define N 4
    static const double coeff[N] = {0.5, -1.0, 2.0, 0.25};
    static double poly(double x, double c) { return c * x * x + fabs(x) + pow(x, 3.0); }
    double f(double x[N], double scale) {
      double t[N];
      double *w = (double *)malloc(N * sizeof(double));
      for (int i = 0; i < N; i++) {
        t[i] = poly(x[i], coeff[i]);
        w[i] = fmax(t[i], 0.1 * t[i]) + atan2(x[i], 2.0) + log1p(x[i] * x[i]);
      }
      double acc = 0.0;
      for (int i = 0; i < N; i++) acc += w[i] * scale;
      double r = sqrt(1.0 + acc * acc) + erf(x[0]) + expm1(x[1]);
      free(w);
      return r;
    }"""
    check_fd(src, "f", [u(4), 0.7])


def test_float_scalars_and_conversions():
    # f32 arithmetic and f32 <-> f64 casts (finite differences in f32 need a large step).
    src = """
    #include <math.h>
    float f(float *x, double s, int n) {
      float acc = 0.0f;
      for (int i = 0; i < n; i++) acc += (float)(x[i] * s) * sinf(x[i]);
      return acc * acc + (float)s;
    }"""
    check_fd(src, "f", [u(4).astype(np.float32), 0.7, 4], eps=1e-3, rtol=1e-2, atol=1e-3)


def test_two_dimensional_offsets_and_array_parameters():
    # `a[i*n + j]` on a pointer and `b[i][j]` on a `double b[3][4]` parameter.
    src = """
    double f(const double *a, double b[3][4], int n) {
      double s = 0.0;
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < n; j++) {
          b[i][j] *= a[i * n + j];
          s += b[i][j] - a[i * n + j] / 3.0;
        }
      return s * s;
    }"""
    check_fd(src, "f", [u(12), u(3, 4), 4])


@pytest.mark.parametrize("name", sorted(p.stem for p in C_KERNELS.glob("*.c")))
def test_c_kernel_matches_mlir_twin(name: str):
    """The C kernel's signature, loss and gradient equal its MLIR twin's, bit for bit."""
    from tapeflow.eval import bundled as kernels

    kernel = kernels.KERNELS[name]
    path = C_KERNELS / f"{name}.c"
    c_module = compile_c(path.read_text(), str(path), functions=[name])
    mlir_module = runner.load_module(kernel.source("small"), str(kernel.path("small")))
    assert runner.find_function(c_module, name).function_type == (
        runner.find_function(mlir_module, name).function_type
    )
    arrays = kernel.inputs("small", seed=3)
    results = []
    for module in (c_module, mlir_module):
        primal = runner.run_function(module, name, _copy(arrays))
        AutodiffPass().apply(make_context(), module)
        grads, _ = gradient(module, name, arrays)
        results.append((primal.results[0], grads))
    (loss_c, grad_c), (loss_m, grad_m) = results
    assert loss_c == loss_m
    assert grad_c.keys() == grad_m.keys() and grad_c
    for p in grad_c:
        assert np.array_equal(grad_c[p], grad_m[p]), (name, p)
        assert np.any(grad_c[p] != 0) or kernel.args[p].kind == "scratch"


def test_c_kernels_cover_every_bundled_kernel():
    from tapeflow.eval import bundled as kernels

    assert {p.stem for p in C_KERNELS.glob("*.c")} == set(kernels.KERNELS)


@pytest.mark.parametrize("name", ["gemm", "lstm", "mass_spring"])
def test_c_kernel_default_size_signature(name: str):
    """`-D` with the default sizes gives the default MLIR twin's signature."""
    from tapeflow.eval import bundled as kernels

    kernel = kernels.KERNELS[name]
    defines = [f"-D{k}={v}" for k, v in kernel.sizes["default"].items()]
    path = C_KERNELS / f"{name}.c"
    c_module = compile_c(path.read_text(), str(path), defines, functions=[name])
    mlir_module = runner.load_module(kernel.source("default"), str(kernel.path("default")))
    assert runner.find_function(c_module, name).function_type == (
        runner.find_function(mlir_module, name).function_type
    )
