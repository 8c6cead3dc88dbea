"""The dialects and passes TapeFlow knows, registered lazily as xDSL does.

Every tool (tapeflow-opt, tapeflow-run, tapeflow-sim, the benchmark driver) builds its
context from here, so a dialect or pass is added in exactly one place.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.context import Context
from xdsl.ir import Dialect
from xdsl.passes import ModulePass


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """The upstream dialects a kernel may use, plus TapeFlow's own."""

    def tape() -> Dialect:
        from tapeflow.dialects.tape import Tape

        return Tape

    def region() -> Dialect:
        from tapeflow.dialects.region import Region

        return Region

    def stream() -> Dialect:
        from tapeflow.dialects.stream import Stream

        return Stream

    from xdsl.dialects import get_all_dialects as xdsl_dialects

    upstream = xdsl_dialects()
    names = ["builtin", "func", "scf", "affine", "arith", "math", "memref", "cf", "test"]
    dialects = {name: upstream[name] for name in names}
    dialects.update({"tape": tape, "region": region, "stream": stream})
    return dialects


# xDSL passes that are useful on TapeFlow's IR.
UPSTREAM_PASSES = ("canonicalize", "cse", "dce", "lower-affine", "loop-invariant-code-motion")


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass name -> factory of the pass class (imported only when the pass is used)."""
    from xdsl.transforms import get_all_passes as xdsl_passes

    upstream = xdsl_passes()
    passes: dict[str, Callable[[], type[ModulePass]]] = {
        name: upstream[name] for name in UPSTREAM_PASSES if name in upstream
    }
    passes.update(TAPEFLOW_PASSES)
    return passes


def _autodiff() -> type[ModulePass]:
    from tapeflow.transforms.autodiff import AutodiffPass

    return AutodiffPass


def _lower_tape() -> type[ModulePass]:
    from tapeflow.transforms.lower_tape import LowerTapePass

    return LowerTapePass


def _regions() -> type[ModulePass]:
    from tapeflow.transforms.regions import RegionsPass

    return RegionsPass


def _lower_regions() -> type[ModulePass]:
    from tapeflow.transforms.lower_regions import LowerRegionsPass

    return LowerRegionsPass


def _layers() -> type[ModulePass]:
    from tapeflow.transforms.layers import LayersPass

    return LayersPass


def _stream() -> type[ModulePass]:
    from tapeflow.transforms.stream import StreamPass

    return StreamPass


def _pipeline() -> type[ModulePass]:
    from tapeflow.transforms.pipeline import TapeFlowPipelinePass

    return TapeFlowPipelinePass


def _lower_to_std() -> type[ModulePass]:
    from tapeflow.transforms.lower_to_std import LowerToStdPass

    return LowerToStdPass


# TapeFlow's own passes. A pass is listed here once its module exists.
TAPEFLOW_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "tapeflow-autodiff": _autodiff,
    "tapeflow-regions": _regions,
    "tapeflow-lower-regions": _lower_regions,
    "tapeflow-layers": _layers,
    "tapeflow-stream": _stream,
    "tapeflow": _pipeline,
    "tapeflow-lower-to-std": _lower_to_std,
    "tapeflow-lower-tape": _lower_tape,
}


def make_context(allow_unregistered: bool = False) -> Context:
    """A context with every dialect TapeFlow knows registered (lazily)."""
    ctx = Context(allow_unregistered=allow_unregistered)
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx
