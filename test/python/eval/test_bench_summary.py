"""tapeflow-bench's summary: beside the geomeans, the worst TapeFlow speedup of any kernel
that ran (controls included), so that a slowdown a geomean hides is printed (no harm)."""

from __future__ import annotations

from tapeflow.eval.markdown import summary_markdown
from tapeflow.eval.summary import KernelRow, geomeans


def _row(kernel: str, speedup: float | None, control: bool = False,
         errors: tuple[str, ...] = ()) -> KernelRow:  # fmt: skip
    return KernelRow(kernel, control, True, [], {}, {"tapeflow": speedup}, {}, {}, 0, 0,
                           1.0, 0.0, {}, errors=list(errors))  # fmt: skip


def test_worst_speedup_counts_controls_and_skips_errors() -> None:
    rows = [_row("a", 1.2), _row("ctl", 0.97, control=True), _row("bad", 0.5, errors=("x",)),
            _row("b", 1.01)]  # fmt: skip
    gm = geomeans(rows)
    assert gm["kernels"] == ["a", "b"]  # the geomeans leave controls out
    assert (gm["worst_speedup_tapeflow"], gm["worst_kernel"]) == (0.97, "ctl")
    text = summary_markdown([("m", gm)])
    assert text.splitlines()[2].endswith("| worst TapeFlow speedup |")
    assert text.splitlines()[-1].endswith("| 0.970x (ctl) |")


def test_no_kernel_ran() -> None:
    gm = geomeans([_row("bad", 0.5, errors=("x",))])
    assert gm["worst_speedup_tapeflow"] is None
    assert summary_markdown([("m", gm)]).splitlines()[-1].endswith("| - |")


def test_captured_share_by_hand() -> None:
    """(Enzyme - TapeFlow) / (Enzyme - ideal tape) cycles; None (printed "-") when the
    free tape saves nothing."""
    from tapeflow.eval.markdown import designs_table
    from tapeflow.eval.summary import captured_share

    assert captured_share(1000.0, 700.0, 400.0) == 0.5  # 300 of the 600 the ideal saves
    assert captured_share(1000.0, 300.0, 400.0) == 700.0 / 600.0  # beyond the ideal
    assert captured_share(1000.0, 1100.0, 400.0) == -100.0 / 600.0  # slower than Enzyme
    assert captured_share(1000.0, 900.0, 1000.0) is None  # nothing to capture
    assert captured_share(1000.0, 900.0, 1001.0) is None
    row = _row("k", 1.0)
    row.variants = {v: {"cycles": c, "dram_accesses": d} for v, c, d in (
        ("enzyme", 1000.0, 50), ("tapeflow", 700.0, 30), ("ideal-tape", 400.0, 20))}
    row.captured = captured_share(1000.0, 700.0, 400.0)
    assert designs_table([row])[-2] == "| k | 1,000 | 700 | 400 | 50% | 50 | 30 | 20 |"
    row.captured = None
    assert "| 400 | - | 50 |" in designs_table([row])[-2]


def test_dram_accesses_as_gem5_salam_counts_them() -> None:
    """L2 misses (no write-backs) + ceil(free tape reads / 8) + 64-byte DMA requests."""
    from tapeflow.eval.summary import dram_accesses

    report = {"levels": {"L2": {"misses": 100, "writebacks": 40}}, "dma": {"bytes": 0},
              "ops": {"ideal_tape": {"loads": 17, "stores": 17}}}
    assert dram_accesses(report, 64) == 100 + 3
    report = {"levels": {"L2": {"misses": 100, "writebacks": 40}}, "dma": {"bytes": 130},
              "ops": {}}
    assert dram_accesses(report, 64) == 100 + 3
