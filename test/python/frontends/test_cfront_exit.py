"""`exit(code)` (issue 35 item 6): the gradient of a run that reaches it stops with one
located runtime error in each variant and natively; a run that does not is unchanged
(finite differences)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers.cfront import check_fd, compile_and_differentiate
from xdsl.utils.exceptions import InterpretationError

from tapeflow import native, runner

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

SRC = """
#include <stdlib.h>
double f(double *x, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    if (x[i] < 0.0)
      exit(3);
    s += x[i] * x[i] * s + x[i];
  }
  return s;
}
"""
MESSAGE = "test.c:7:7: exit(3) called: the run ends (no gradient)"
GOOD = np.array([0.5, 1.5, 0.25, 2.0])
BAD = np.array([0.5, 1.5, -0.25, 2.0])


def test_gradient_where_exit_is_not_reached():
    check_fd(compile_and_differentiate(SRC, functions=["f"]), "f", [GOOD.copy(), 4])


@pytest.mark.parametrize("variant", ["enzyme", "regions", "tapeflow"])
def test_exit_is_a_located_runtime_error(variant):
    from tapeflow.eval.jobs import tapeflow_options
    from tapeflow.frontends.c import compile_c
    from tapeflow.machines import pipeline
    from tapeflow.registry import make_context

    module = compile_c(SRC, "test.c", functions=["f"])
    for p in pipeline(variant, tapeflow_options(2048, 0, 2, mode="always")):
        p.apply(make_context(), module)
    ok = runner.run_function(module, "f_grad", [GOOD.copy(), np.zeros(4), 4, 1.0])
    assert np.all(ok.arguments[1] != 0.0)
    with pytest.raises(InterpretationError) as info:
        runner.run_function(module, "f_grad", [BAD.copy(), np.zeros(4), 4, 1.0])
    assert str(info.value) == MESSAGE


@pytest.mark.skipif(not native.tools_available(), reason="upstream MLIR 22 is not installed")
def test_exit_natively():
    module = compile_and_differentiate(SRC, functions=["f"])
    with pytest.raises(InterpretationError, match=re.escape(MESSAGE)):
        native.run_function_native(module, "f_grad", [BAD.copy(), np.zeros(4), 4, 1.0])
