"""Unit tests of tapeflow.diagnostics and the tools' helpers (issue #11); the CLI
behaviour is in test/tapeflow-opt/diagnostics.mlir, test/tapeflow-run/inputs-errors.mlir
and the corpus (test_corpus.py)."""

from __future__ import annotations

import io
import time

import pytest

from tapeflow.diagnostics import (
    ToolError,
    check_string_literals,
    decode_source,
    parse_module,
    verify_module,
)
from tapeflow.registry import make_context, get_all_passes
from tapeflow.tools.opt import check_pipeline
from tapeflow.tools.sim import progress


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        ('"' + "a" * 5000 + "\n", "k.mlir:1:1", "unterminated string"),
        ('x\n  y = "ab\\q"\n', "k.mlir:2:10", "invalid escape in string"),
        ('a = "ok"\nb = "no\n', "k.mlir:2:5", "unterminated string"),
    ],
)
def test_string_prescan_reports_first_bad_literal(text, where, what):
    with pytest.raises(ToolError, match=f"^{where}: {what}$"):
        check_string_literals(text, "k.mlir")


def test_string_prescan_accepts_what_the_lexer_accepts():
    # escapes \" \\ \n \t and two hex digits; `"` inside a // comment starts nothing
    check_string_literals('a = "x\\"y\\\\z\\n\\t\\0A" // a "comment\n"" "s"\n', "k.mlir")


def test_utf8_error_is_located_at_the_byte():
    with pytest.raises(ToolError, match=r"^k.mlir:2:3: invalid UTF-8 \(byte 0xc3\)$"):
        decode_source(b"ab\ncd\xc3(", "k.mlir")


def test_verifier_errors_are_located_one_line_messages():
    module = parse_module(
        make_context(),
        "func.func @f(%m: memref<4x4xf64>) -> f64 {\n  %c = arith.constant 0 : index\n"
        "  %v = memref.load %m[%c] : memref<4x4xf64>\n  func.return %v : f64\n}\n",
        "k.mlir",
    )
    with pytest.raises(Exception) as info:
        verify_module(module)
    assert str(info.value) == "k.mlir:3:3: 'memref.load' expected an index for each dimension"


def test_double_free_is_reported_at_the_second_free():
    module = parse_module(
        make_context(),
        "func.func @f() {\n  %c = tape.init : !tape.cache<f64>\n"
        "  tape.free %c : !tape.cache<f64>\n  tape.free %c : !tape.cache<f64>\n"
        "  func.return\n}\n",
        "k.mlir",
    )
    with pytest.raises(Exception, match=r"^k.mlir:4:3: 'tape.free' frees a cache that"):
        verify_module(module)


def test_pipeline_options_are_located_and_spelled_as_typed():
    passes = get_all_passes()
    specs = check_pipeline("cse,tapeflow-layers{spm-bytes=4096 depth=2}", passes)
    assert [(s.name, s.location) for s in specs] == [
        ("cse", "pass-pipeline:1:1"),
        ("tapeflow-layers", "pass-pipeline:1:5"),
    ]
    built = specs[1].build(passes)
    assert (built.spm_bytes, built.depth) == (4096, 2)
    with pytest.raises(ToolError, match=r"^pass-pipeline:1:25: option 'depth' of"):
        check_pipeline("tapeflow-layers{depth=1 depth=2}", passes)
    with pytest.raises(ToolError, match=r"expects int, got 'false'"):
        check_pipeline("tapeflow-layers{depth=false}", passes)[0].build(passes)


def test_progress_appears_only_on_long_runs():
    pytest.importorskip("tqdm", reason="the progress line needs tqdm (extra 'bench')")
    stream = io.StringIO()
    with progress("simulating @f", stream, after=0.05):
        time.sleep(0.8)
    assert "simulating @f" in stream.getvalue()
    quick = io.StringIO()
    with progress("simulating @f", quick, after=5):
        pass
    assert quick.getvalue() == ""
    with progress("simulating @f", None, after=0):  # --quiet or not a terminal
        time.sleep(0.1)
