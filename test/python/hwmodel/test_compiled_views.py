"""The fast path on what Enzyme-MLIR's gradients hold: strided views (`memref.subview`) and
its tape (`enzyme.init/push/pop`, a cache of memrefs, `enzyme.load/store` with their
sizes). Both paths must give the same values and the same whole report, and a view's
accesses must reach its buffer's addresses (the op-by-op model indexed a view as if it
began at its buffer's first element)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.utils.exceptions import InterpretationError

from tapeflow import runner
from tapeflow.hwmodel.compiled.module import CompiledModule
from tapeflow.simulate import simulate, simulate_fast

from helpers.sim import assert_identical

VIEWS = """
func.func @f(%A: memref<6x8xf64>, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f64
  %sq = memref.subview %A[1, 2] [2, 3] [1, 1]
      : memref<6x8xf64> to memref<2x3xf64, strided<[8, 1], offset: 10>>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %row = memref.subview %A[%i, 0] [1, 4] [1, 2]
        : memref<6x8xf64> to memref<4xf64, strided<[2], offset: ?>>
    %col = memref.subview %sq[0, 1] [2, 1] [1, 1]
        : memref<2x3xf64, strided<[8, 1], offset: 10>> to memref<2xf64, strided<[8], offset: 11>>
    %x = memref.load %row[%c2] : memref<4xf64, strided<[2], offset: ?>>
    %y = memref.load %col[%c1] : memref<2xf64, strided<[8], offset: 11>>
    %p = arith.mulf %x, %y : f64
    memref.store %p, %sq[%c1, %c2] : memref<2x3xf64, strided<[8, 1], offset: 10>>
    %a = arith.addf %acc, %p : f64
    scf.yield %a : f64
  }
  func.return %s : f64
}
"""

CACHES = """
func.func @f(%A: memref<4xf64>, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %c = "enzyme.init"() : () -> !enzyme.Cache<f64>
  %m = "enzyme.init"() : () -> !enzyme.Cache<memref<?xf64>>
  %buf = memref.alloc(%n) {tapeflow.tape} : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %k = arith.remui %i, %c1 : index
    %x = memref.load %A[%k] : memref<4xf64>
    "enzyme.push"(%c, %x) : (!enzyme.Cache<f64>, f64) -> ()
    enzyme.store %x, %buf[%i] ([%n]) : memref<?xf64>
    %copy = memref.alloc(%n) : memref<?xf64>
    memref.store %x, %copy[%i] : memref<?xf64>
    "enzyme.push"(%m, %copy) : (!enzyme.Cache<memref<?xf64>>, memref<?xf64>) -> ()
  }
  %s = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %i = arith.subi %n, %j : index
    %last = arith.subi %i, %c1 : index
    %x = "enzyme.pop"(%c) : (!enzyme.Cache<f64>) -> f64
    %y = enzyme.load %buf[%last] ([%n]) : memref<?xf64>
    %copy = "enzyme.pop"(%m) : (!enzyme.Cache<memref<?xf64>>) -> memref<?xf64>
    %w = memref.load %copy[%last] : memref<?xf64>
    memref.dealloc %copy : memref<?xf64>
    %p = arith.mulf %x, %y : f64
    %q = arith.addf %p, %w : f64
    %a = arith.addf %acc, %q : f64
    scf.yield %a : f64
  }
  memref.dealloc %buf : memref<?xf64>
  func.return %s : f64
}
"""


def _args(n: int) -> list:
    return [np.arange(48, dtype=np.float64).reshape(6, 8) / 7.0, n]


@pytest.mark.parametrize("n", [0, 1, 5])
def test_strided_views_identical(n: int):
    module = runner.load_module(VIEWS, "v.mlir")
    CompiledModule(module)  # the fast path takes every op (no fallback)
    ref, _ = assert_identical(module, "f", _args(n))
    A, want = _args(n)[0], 0.0
    for i in range(n):  # row[2] = A[i, 4], col[1] = sq[1, 1] = A[2, 3], sq[1, 2] = A[2, 4]
        p = A[i, 4] * A[2, 3]
        A[2, 4] = p
        want += p
    assert ref.run.results[0] == want
    assert np.array_equal(ref.run.arguments[0], A)


def test_caches_and_cache_buffers_identical():
    module = runner.load_module(CACHES, "c.mlir")
    CompiledModule(module)  # the fast path takes every op (no fallback)
    args = [np.array([0.5, 1.5, 2.5, 3.5]), 3]
    ref, _ = assert_identical(module, "f", args)
    assert ref.run.results[0] == 3 * (0.5 * 0.5 + 0.5)
    # The marked buffer (3 x 8 B) and the f64 cache's 3 entries are Enzyme's tape.
    assert ref.report["tape_bytes"] > 0


def test_cache_access_with_wrong_sizes_is_the_interpreters_error():
    text = CACHES.replace("enzyme.store %x, %buf[%i] ([%n])", "enzyme.store %x, %buf[%i] ([%k])")
    errors = []
    for run in (simulate, simulate_fast):
        with pytest.raises(InterpretationError) as e:
            run(runner.load_module(text, "c.mlir"), "f", [np.array([0.5, 1.5, 2.5, 3.5]), 3])
        errors.append(str(e.value))
    assert errors[0] == errors[1] and "dynamic sizes" in errors[0]


DIRECT = """
func.func @f(%A: memref<64x8xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f64
  %s = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %z) -> (f64) {
    %x = memref.load %A[%i, %c0] : memref<64x8xf64>
    %a = arith.addf %acc, %x : f64
    scf.yield %a : f64
  }
  %t = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %s) -> (f64) {
    SECOND
    %a = arith.addf %acc, %x : f64
    scf.yield %a : f64
  }
  func.return %t : f64
}
"""


def test_a_view_reaches_its_buffers_addresses():
    """Rows 0-7 directly, then rows 8-15 directly or through a view that starts at row 8:
    the same lines miss (the view's accesses are not those of rows 0-7 again)."""
    direct = DIRECT.replace(
        "SECOND", "%r = arith.addi %i, %c8 : index\n%x = memref.load %A[%r, %c0] : memref<64x8xf64>"
    )
    view = DIRECT.replace(
        "SECOND",
        "%v = memref.subview %A[8, 0] [8, 8] [1, 1] : memref<64x8xf64> to "
        "memref<8x8xf64, strided<[8, 1], offset: 64>>\n"
        "%x = memref.load %v[%i, %c0] : memref<8x8xf64, strided<[8, 1], offset: 64>>",
    )
    A = np.arange(512, dtype=np.float64).reshape(64, 8)
    reports = []
    for text in (direct, view):
        for run in (simulate, simulate_fast):
            r = run(runner.load_module(text, "d.mlir"), "f", [A.copy()])
            assert r.run.results[0] == A[:16, 0].sum()
            reports.append(r.report)
    lines = [r["dram"]["lines_read"] for r in reports]
    assert lines[0] >= 16 and len(set(lines)) == 1, lines


def test_a_view_out_of_bounds_is_the_interpreters_error():
    """A view past its buffer (row 6 of 6): the fast path's check runs the interpreter's
    `memref.subview`, which reports it."""
    module = runner.load_module(VIEWS, "v.mlir")
    errors = []
    for sim in (simulate, simulate_fast):
        with pytest.raises(InterpretationError) as info:
            sim(module, "f", _args(7))
        errors.append(str(info.value))
    assert errors[0] == errors[1] and "out of bounds" in errors[0]


DYNAMIC_VIEWS = """
func.func @f(%A: memref<6x8xf64>, %n: index, %m: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = memref.subview %A[1, %c1] [%n, %m] [1, 1]
      : memref<6x8xf64> to memref<?x?xf64, strided<[8, 1], offset: ?>>
  %w = memref.subview %v[%c1, 0] [1, %m] [1, 1]
      : memref<?x?xf64, strided<[8, 1], offset: ?>> to memref<?xf64, strided<[1], offset: ?>>
  %i = arith.subi %n, %c1 : index
  %j = arith.subi %m, %c1 : index
  %x = memref.load %v[%i, %j] : memref<?x?xf64, strided<[8, 1], offset: ?>>
  %y = memref.load %w[%j] : memref<?xf64, strided<[1], offset: ?>>
  %p = arith.mulf %x, %y : f64
  memref.store %p, %v[%c0, %c0] : memref<?x?xf64, strided<[8, 1], offset: ?>>
  func.return %p : f64
}
"""


@pytest.mark.parametrize("n, m", [(2, 3), (5, 7), (6, 3), (2, 8), (0, 1)])
def test_views_of_run_time_sizes_identical(n: int, m: int):
    """Sizes known at run time (a rank reduction that depends on one runs the
    interpreter's view); past the buffer, or a row of an empty view: the interpreter's
    error on both paths."""
    module = runner.load_module(DYNAMIC_VIEWS, "d.mlir")
    CompiledModule(module)
    args = [np.arange(48, dtype=np.float64).reshape(6, 8) / 7.0, n, m]
    if 1 + n <= 6 and 1 + m <= 8 and n >= 2:
        assert_identical(module, "f", args)
        return
    errors = []
    for sim in (simulate, simulate_fast):
        with pytest.raises(InterpretationError) as info:
            sim(module, "f", [args[0].copy(), n, m])
        errors.append(str(info.value))
    assert errors[0] == errors[1]
