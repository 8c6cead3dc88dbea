"""tapeflow-check's dot-product test (`tools.check_adjoint`) for functions that do not
return one float: passes on correct gradients, in place and with active scalars, and
fails when an adjoint rule is broken on purpose."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects import arith

from tapeflow.tools.check import main
from tapeflow.transforms.autodiff.rules import arith as arith_rules

# y[i] = s * sin(x[i] * y[i]); x[i] = x[i] * x[i]: in place, an active scalar, no result.
INPLACE = """
func.func @f(%x: memref<4x{t}>, %y: memref<4x{t}>, %s: {t}) attributes {{tapeflow.autodiff}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {{
    %a = memref.load %x[%i] : memref<4x{t}>
    %b = memref.load %y[%i] : memref<4x{t}>
    %m = arith.mulf %a, %b : {t}
    %sm = math.sin %m : {t}
    %r = arith.mulf %sm, %s : {t}
    memref.store %r, %y[%i] : memref<4x{t}>
    %aa = arith.mulf %a, %a : {t}
    memref.store %aa, %x[%i] : memref<4x{t}>
  }}
  func.return
}}
"""

# Returns one float and writes y: the elements test checks the result, --adjoint both.
BOTH = """
func.func @g(%x: memref<3xf64>, %y: memref<3xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.load %x[%c0] : memref<3xf64>
  %b = memref.load %x[%c1] : memref<3xf64>
  %e = math.exp %a : f64
  memref.store %e, %y[%c1] : memref<3xf64>
  %p = arith.mulf %a, %b : f64
  func.return %p : f64
}
"""

NOTHING_ACTIVE = """
func.func @h(%n: memref<2xi32>) attributes {tapeflow.autodiff} {
  func.return
}
"""


def _file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "k.mlir"
    path.write_text(text)
    return str(path)


F32 = ["--step", "1e-3", "--tolerance", "1e-3"]


@pytest.mark.parametrize("t, options", [("f64", []), ("f32", F32)])
def test_adjoint_in_place(tmp_path: Path, capsys: pytest.CaptureFixture[str], t: str,
                          options: list[str]) -> None:  # fmt: skip
    assert main([_file(tmp_path, INPLACE.format(t=t)), "--args", "0.8", *options]) == 0
    out = capsys.readouterr().out
    assert "u over x[4], y[4], s; v over x[4], y[4]; step" in out
    assert "<v,Ju>: AD " in out
    assert "ok: @f, the adjoint test, largest error" in out


def _drop_rhs(g, op: arith.MulfOp) -> None:
    """mulf's rule without its rhs term: a wrong gradient the test must catch."""
    if (d := g.adjoint(op.results[0])) is not None and g.is_active(op.lhs):
        g.accumulate(op.lhs, arith_rules.mul(g, d, g.primal(op.rhs)))


def test_adjoint_catches_a_broken_rule(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setitem(arith_rules.RULES, arith.MulfOp, _drop_rhs)
    assert main([_file(tmp_path, INPLACE.format(t="f64")), "--args", "0.8"]) == 1
    assert "FAILED: @f, the adjoint test" in capsys.readouterr().out


def test_one_float_and_adjoint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, BOTH)
    assert main([path]) == 0
    assert "ok: @g, 6 element(s) of 2 array(s)" in capsys.readouterr().out
    assert main([path, "--adjoint"]) == 0
    out = capsys.readouterr().out
    assert "v over x[3], y[3], result 0" in out and "ok: @g, the adjoint test" in out


def test_nothing_to_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main([_file(tmp_path, NOTHING_ACTIVE)])
    assert stop.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: @h has no active input") and "Traceback" not in err
