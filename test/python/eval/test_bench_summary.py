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
