"""The dialects and passes TapeFlow knows, registered lazily as xDSL does.

Every tool (tapeflow-opt, tapeflow-run, tapeflow-sim, the benchmark driver) builds its
context from here, so a dialect or pass is added in exactly one place.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from xdsl.context import Context
from xdsl.ir import Dialect
from xdsl.passes import ModulePass


def _lazy(module: str, name: str) -> Callable[[], Any]:
    """A factory that imports `module` only when the dialect or pass is first used."""
    return lambda: getattr(importlib.import_module(module), name)


# TapeFlow's own dialects: name -> (module, Dialect object).
TAPEFLOW_DIALECTS = {
    "tape": ("tapeflow.dialects.tape", "Tape"),
    "region": ("tapeflow.dialects.region", "Region"),
    "stream": ("tapeflow.dialects.stream", "Stream"),
    "enzyme": ("tapeflow.dialects.enzyme", "Enzyme"),
}

# The upstream dialects a kernel or a lowered program may use.
UPSTREAM_DIALECTS = ("builtin", "func", "scf", "affine", "arith", "math", "memref", "cf", "test")


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """The upstream dialects a kernel may use, plus TapeFlow's own."""
    from xdsl.dialects import get_all_dialects as xdsl_dialects

    upstream = xdsl_dialects()
    dialects = {name: upstream[name] for name in UPSTREAM_DIALECTS}
    dialects.update({name: _lazy(*where) for name, where in TAPEFLOW_DIALECTS.items()})
    return dialects


# xDSL passes that are useful on TapeFlow's IR.
UPSTREAM_PASSES = ("canonicalize", "cse", "dce", "lower-affine")

# TapeFlow's own passes: name -> (module, ModulePass class).
TAPEFLOW_PASSES = {
    "tapeflow-autodiff": ("tapeflow.transforms.autodiff", "AutodiffPass"),
    "tapeflow-fwdad": ("tapeflow.transforms.fwdad", "ForwardModePass"),
    "tapeflow-lower-tape": ("tapeflow.transforms.lower_tape", "LowerTapePass"),
    "tapeflow-checkpoint": ("tapeflow.transforms.checkpoint", "CheckpointPass"),
    "tapeflow-regions": ("tapeflow.transforms.regions", "RegionsPass"),
    "tapeflow-lower-regions": ("tapeflow.transforms.lower_regions", "LowerRegionsPass"),
    "tapeflow-layers": ("tapeflow.transforms.layers", "LayersPass"),
    "tapeflow-stream": ("tapeflow.transforms.stream", "StreamPass"),
    "tapeflow": ("tapeflow.machines", "TapeFlowPass"),  # loads its machine= by name
    "tapeflow-cleanup": ("tapeflow.transforms.pipeline", "CleanupPass"),
    "tapeflow-unroll": ("tapeflow.transforms.unroll", "UnrollPass"),
    "tapeflow-promote-scalars": ("tapeflow.transforms.promote", "PromoteScalarsPass"),
    "tapeflow-lower-to-std": ("tapeflow.transforms.lower_to_std", "LowerToStdPass"),
    "enzyme-autodiff": ("tapeflow.baselines.enzyme_mlir", "EnzymeAutodiffPass"),
    "enzyme-import-tape": ("tapeflow.baselines.enzyme_tape", "ImportEnzymeTapePass"),
    "tapeflow-enzyme-ideal-tape": ("tapeflow.transforms.enzyme_ideal_tape", "EnzymeIdealTapePass"),
}


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass name -> factory of the pass class (imported only when the pass is used)."""
    from xdsl.transforms import get_all_passes as xdsl_passes

    upstream = xdsl_passes()
    passes: dict[str, Callable[[], type[ModulePass]]] = {
        name: upstream[name] for name in UPSTREAM_PASSES
    }
    passes.update({name: _lazy(*where) for name, where in TAPEFLOW_PASSES.items()})
    return passes


def make_context(allow_unregistered: bool = False) -> Context:
    """A context with every dialect TapeFlow knows registered (lazily)."""
    ctx = Context(allow_unregistered=allow_unregistered)
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx
