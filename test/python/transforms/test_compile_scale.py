"""Compile time (issue #32): what the linear-time changes must keep, and the generators
of benchmarks/compile_scale.py."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.passes import ModulePass

from benchmarks.compile_scale import GENERATORS, exponent
from tapeflow import registry
from tapeflow.diagnostics import LocatingParser, parse_module
from tapeflow.registry import make_context
from tapeflow.tools.opt import main as opt_main
from tapeflow.transforms.autodiff import AutodiffPass

INVALID = "func.func @f(%x: f64) -> f64 {\n  func.return\n}\n"
"""Parses, but does not verify: the return gives no value."""


@pytest.mark.parametrize("family", ["one-function", "copies", "c"])
def test_generated_modules_have_the_size_asked(family):
    for lines in (300, 1000, 5000):  # within one loop or kernel (at most 25 lines)
        n = GENERATORS[family](lines).count("\n")
        assert abs(n - lines) <= 25, (lines, n)


@pytest.mark.parametrize("family", ["one-function", "copies"])
def test_generated_modules_differentiate(family):
    module = parse_module(make_context(), GENERATORS[family](300), "g.mlir")
    AutodiffPass().apply(make_context(), module)
    module.verify()
    names = [f.sym_name.data for f in module.ops if isinstance(f, func.FuncOp)]
    assert all(f"{n}_grad" in names for n in names if not n.endswith("_grad"))


def test_growth_exponent():
    assert exponent(1000, 2.0, 10000, 20.0) == pytest.approx(1.0)
    assert exponent(1000, 1.0, 2000, 4.0) == pytest.approx(2.0)


def test_op_locations_are_where_each_op_is_written():
    text = GENERATORS["one-function"](200)
    lines = text.splitlines()
    module = LocatingParser(make_context(), text, "g.mlir", 10).parse_module()
    ops = [op for op in module.walk() if not isinstance(op, ModuleOp)]
    assert len(ops) > 100
    for op in ops:
        loc = op.location
        assert isinstance(loc, FileLineColLoc) and loc.filename.data == "g.mlir"
        written = lines[loc.line.data - 11][loc.column.data - 1 :]
        assert written.startswith(("%", op.name, "memref.store", "scf.yield", "}")), written


@dataclass(frozen=True)
class BreakReturns(ModulePass):
    """Leaves every function's return without its values: invalid IR."""

    name = "break-returns"

    def apply(self, ctx, op: ModuleOp) -> None:
        for ret in op.walk():
            if isinstance(ret, func.ReturnOp):
                ret.operands = ()


def _run_opt(monkeypatch, capsys, argv: list[str]) -> tuple[int, str]:
    passes = {**registry.get_all_passes(), "break-returns": lambda: BreakReturns}
    monkeypatch.setattr(registry, "get_all_passes", lambda: passes)
    try:
        code = opt_main(argv)
    except SystemExit as e:
        code = e.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize("each", [[], ["--verify-each"]])
def test_invalid_input_is_reported(tmp_path, monkeypatch, capsys, each):
    path = tmp_path / "bad.mlir"
    path.write_text(INVALID)
    code, err = _run_opt(monkeypatch, capsys, [str(path), "--tapeflow-regions", *each])
    assert code == 1
    assert err.startswith(f"error: {path}:2:3: 'func.return'"), err
    assert err.count("\n") == 1


@pytest.mark.parametrize("each", [[], ["--verify-each"]])
def test_a_pass_that_breaks_the_ir_is_reported(tmp_path, monkeypatch, capsys, each):
    path = tmp_path / "good.mlir"
    path.write_text("func.func @f(%x: f64) -> f64 {\n  func.return %x : f64\n}\n")
    out = tmp_path / "out.mlir"
    argv = [str(path), "-p", "break-returns,tapeflow-regions", "-o", str(out), *each]
    code, err = _run_opt(monkeypatch, capsys, argv)
    assert code == 1
    assert err.startswith(f"error: {path}:2:3: 'func.return'"), err
    assert not out.exists()
