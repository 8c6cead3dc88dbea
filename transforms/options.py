"""The options of TapeFlow's passes, each default written once.

`TapeFlowOptions` is what the `tapeflow` pipeline pass takes (its fields are the pass's
options, `tapeflow{spm-bytes=N ...}` on the command line); `tapeflow-layers` and
`tapeflow-stream` take their defaults from here too. The scratchpad budget defaults to
the machine's `spm.size` (`scratchpad_bytes`): the `tapeflow` pass reads it from the
`MachineCosts` of its `machine=`; `DEFAULT_SPM_BYTES` is the default machine's, for the
passes that take no machine.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.utils.exceptions import PassFailedException

from tapeflow.diagnostics import ToolError

DEFAULT_DEPTH = 2
"""Tile buffers per region, and how many tiles ahead the DMA prefetches (2: double
buffering)."""

DEFAULT_SPM_BYTES = 32768
"""The default machine's `spm.size` (hwmodel/defaults.toml; a test keeps them equal): the
scratchpad budget of `tapeflow-layers` when not given."""

DEFAULT_POLICY = "min-tape"
"""The autodiff pass's tape policy."""

MODES = ("auto", "always")
"""`tapeflow{mode=...}`: `auto` streams a region loop only where the cost model says it
pays; `always` every region loop (the pipeline before the cost model, for ablation)."""


@dataclass(frozen=True)
class TapeFlowOptions:
    """The options of the `tapeflow` pipeline (module docstring of transforms/pipeline.py)."""

    spm_bytes: int | None = None
    """The scratchpad budget in bytes; unset: the `spm.size` of `machine`."""
    tile_bytes: int = 0
    """A cap on one tile's bytes (0: none)."""
    depth: int = DEFAULT_DEPTH
    policy: str = DEFAULT_POLICY
    functions: tuple[str, ...] = ()
    checkpoint: str = ""
    """`schedule-snapshots` (e.g. `binomial-8`, or `"binomial:8"` quoted): run
    `tapeflow-checkpoint` after autodiff."""
    cleanup: bool = False
    """Run `tapeflow-cleanup` (canonicalize, cse, licm) at the end, as `tapeflow-bench` does."""
    machine: str = ""
    """The machine the cost model decides for: a preset name or a machine TOML file (empty:
    the tools' default machine; `native`: no DMA engine)."""
    set: tuple[str, ...] = ()
    """Machine key overrides the cost model applies to `machine` (`"l2.size=262144"`,
    quoted: as `tapeflow-sim --set`), so that it decides for the machine simulated."""
    mode: str = "auto"
    """One of `MODES`."""


def check_options(name: str, **options: tuple[int, int]) -> None:
    """Each `key=(value, minimum)`: a value below its minimum fails pass `name`."""
    for key, (value, minimum) in options.items():
        if value < minimum:
            raise PassFailedException(
                f"{name}: option {key.replace('_', '-')} must be >= {minimum}, got {value}"
            )


def scratchpad_bytes(spm_bytes: int | None, spm_size: int, machine: str) -> int:
    """The scratchpad budget: `spm_bytes`, else the machine's `spm.size`; a budget larger
    than the scratchpad `machine` has is an error."""
    if spm_bytes is None:
        return spm_size
    if spm_bytes > spm_size:
        raise ToolError(f"spm-bytes {spm_bytes} exceeds the spm.size {spm_size} of machine "
                        f"{machine}")  # fmt: skip
    return spm_bytes
