"""Issue 20: the pipeline applies TapeFlow where it pays, and keeps the program's meaning.

- Trip counts known at run time get tiles sized at run time: DMA bytes are twice the
  tape bytes exactly.
- A C stencil whose inner bound `n - 1` the frontend computes inside the time loop gets
  region tapes (the pipeline hoists loop-invariant index arithmetic before forming them),
  and its gradients stay bit-identical to the autodiff IR's.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from xdsl.passes import PassPipeline

from tapeflow import runner
from tapeflow.frontends.c import compile_c
from tapeflow.registry import get_all_passes, make_context
from helpers.paths import INPUTS

pytest.importorskip("clang.cindex", reason="the tests compile a C stencil: libclang (extra 'c')")

STREAM_ALL = "tapeflow{mode=always}"


def _compile(file: str, pipeline: str):
    path = INPUTS / file
    module = compile_c(path.read_text(), str(path))
    PassPipeline.parse_spec(get_all_passes(), pipeline).apply(make_context(), module)
    module.verify()
    return module


def _gradient_bits(module, scalars: tuple[int, ...]) -> list[bytes]:
    u = np.random.default_rng(3).uniform(-1, 1, size=9)
    du = np.zeros(9)
    r = runner.run_function(module, "stencil_grad", [u, du, *scalars, 1.0])
    return [a.tobytes() for a in (u, du)] + [struct.pack("<d", v) for v in r.results]


def _count(module, prefix: str) -> int:
    return sum(op.name.startswith(prefix) for op in module.walk())


def test_c_stencil_with_a_bound_computed_in_the_loop_gets_regions():
    reference = _compile("stencil_dynamic.c", "tapeflow-autodiff")
    # mode=always: streamed; the default (auto, default-45nm): Enzyme's layout, arrays
    # sized at the nest's entry (the bound hoisted) and indexed by the loop counters.
    for pipeline, streamed in ((STREAM_ALL, True), ("tapeflow", False)):
        module = _compile("stencil_dynamic.c", pipeline)
        assert (_count(module, "region.") > 0) == streamed
        assert (_count(module, "stream.") > 0) == streamed
        assert _count(module, "tape.") == 0
        meta = [op for op in module.walk() if "tapeflow.tape_meta" in op.attributes]
        assert not meta  # no stack pointer either way
        for scalars in ((9, 5), (3, 2), (2, 4)):
            assert _gradient_bits(module, scalars) == _gradient_bits(reference, scalars)


def _simulate(module, scalars: tuple[int, ...], machine: str = "default-45nm"):
    from tapeflow.hwmodel.config import load_machine
    from tapeflow.simulate import simulate_auto

    n = scalars[0] if scalars else 9
    u = np.random.default_rng(3).uniform(-1, 1, size=n)
    args = [u, np.zeros(n), *scalars, 1.0]
    return simulate_auto(module, "stencil_grad", args, load_machine(machine)).report


def test_run_time_sized_tiles_move_only_the_tape():
    """Trip counts known at run time: layers are sized from the trip count at run time and
    a partial tile's DMAs move only its filled part, so every record crosses the DMA
    engine exactly twice (committed, prefetched): `steps * (n - 2)` records of two f64."""
    module = _compile("stencil_dynamic.c", STREAM_ALL)
    for n, steps in ((9, 5), (12, 3), (3, 1)):
        report = _simulate(module, (n, steps))
        assert report["dma"]["bytes"] == 2 * steps * (n - 2) * 16, (n, steps)
