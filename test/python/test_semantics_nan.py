"""A NaN from an out-of-domain libm call is the table's one `NAN`, whatever NumPy (the
reference's fallback where CPython's `math` raises) gives on the CPU the suite runs on."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from tapeflow import semantics

OUT_OF_DOMAIN = [-1.0, -2.5, 2.0, -math.inf, math.inf]


def bits(x: float) -> str:
    return struct.pack(">d", x).hex()


def test_nan_is_x86s_default_nan():
    assert bits(semantics.NAN) == "fff8000000000000"


LIBM = [n for n, e in semantics.SCALARS.items() if n.startswith("math.") and e.kind == "float"]


@pytest.mark.parametrize("name", LIBM)
def test_every_nan_is_canonical(name):
    fn = semantics.SCALARS[name].fn
    rest = {"math.powf": (0.5,), "math.atan2": (0.5,), "math.copysign": (0.5,),
            "math.fma": (math.inf, -math.inf)}.get(name, ())
    for x in OUT_OF_DOMAIN:
        r = fn(x, *rest)
        if r != r:
            assert bits(r) == bits(semantics.NAN), (name, x)


def test_positive_nan_from_numpy_is_canonical(monkeypatch):
    """NumPy's log(-1.0) is +nan on some x86-64 CPUs (an AMD EPYC) and -nan on others."""
    positive = struct.unpack(">d", bytes.fromhex("7ff8000000000000"))[0]
    monkeypatch.setattr(np, "log", lambda x: np.float64(positive))
    log = semantics._libm1("log")
    assert bits(log(-1.0)) == bits(semantics.NAN)
