"""Python's cyclic collector while TapeFlow builds IR (tapeflow-opt and the bench's tasks)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Python's cyclic collector, run every 100,000 allocations instead of 700: the IR
    is millions of long-lived objects, and traversing them took 14% of autodiff's time
    on a 5,000-line module. Cycles are still collected."""
    thresholds = gc.get_threshold()
    gc.set_threshold(100_000, 50, 100)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
