"""benchmarks/tape_stats.py: the statically derived tape sizes of Enzyme's layout equal the
pushes counted in the interpreter, and the default sizes make the tape exceed 4 MiB (four
times a 1 MiB last-level cache) wherever the kernel caches anything (two kernels below it
since min-tape takes Enzyme's minimum cut: `BELOW_TARGET_SINCE_MIN_CUT`)."""

from __future__ import annotations


import pytest


from benchmarks import tape_stats
from tapeflow.eval.bundled import KERNELS

# Kernels where Enzyme caches nothing (linear stencil; functions of unchanged inputs).
NO_TAPE = {"jacobi2d", "ba", "pairwise"}

# The default sizes were chosen for a tape above 4 MiB. Since min-tape takes Enzyme's
# minimum cut (issue 10), two kernels keep less at the same sizes: mass_spring the two
# spring extensions instead of three positions per step (3 MiB), softmax_ce an i1
# comparison instead of the f64 running maximum (0.5 MiB). Growing them is a benchmark
# decision (run time); until then they are listed here, and the test fails if one of them
# reaches 4 MiB again (so the list stays true).
BELOW_TARGET_SINCE_MIN_CUT = {"mass_spring", "softmax_ce"}


# Kernels whose trip counts are read from memory: one cache is Enzyme's growable stack.
GROWABLE = {"ragged_rnn"}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_static_size_equals_counted_pushes(name: str):
    static = tape_stats.kernel_stats(name, "small", count=False)
    counted = tape_stats.kernel_stats(name, "small", count=True)
    # A growable stack's size is only known by running (then both are counted).
    assert counted.counted and static.counted == (name in GROWABLE)
    assert [c.bytes for c in static.caches] == [c.bytes for c in counted.caches]
    assert (static.tape_bytes == 0) == (name in NO_TAPE)
    # Every other cache of the benchmark kernels gets the indexed layout (no stack pointer).
    stacks = [c for c in static.caches if c.layout != "Indexed"]
    assert [c.layout for c in stacks] == (["GrowableStack"] if name in GROWABLE else [])


def test_growable_stack_size_is_the_number_of_steps():
    """ragged_rnn pushes one value per RNN step: sum(lens) elements of 8 bytes."""
    from tapeflow.eval.bundled import make_inputs

    lens = make_inputs("ragged_rnn", "small", 0)[3]
    stat = tape_stats.kernel_stats("ragged_rnn", "small")
    (stack,) = [c for c in stat.caches if c.layout == "GrowableStack"]
    assert stack.bytes == 8 * int(lens.sum())


@pytest.mark.parametrize("name", sorted(set(KERNELS) - NO_TAPE))
def test_default_tape_exceeds_four_mib(name: str):
    stat = tape_stats.kernel_stats(name, "default")
    if name in BELOW_TARGET_SINCE_MIN_CUT:
        assert 0 < stat.tape_bytes < 4 * 2**20, (name, stat.tape_bytes)
    else:
        assert stat.tape_bytes >= 4 * 2**20, (name, stat.tape_bytes)


def test_cli_prints_a_row_per_kernel(capsys):
    assert tape_stats.main(["--size", "small", "--kernels", "gemm,pwl"]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in out if line and not line.startswith(("#", "kernel"))]
    assert [r[0] for r in rows] == ["gemm", "pwl"]
    assert rows[0][1:3] == ["1", "96"]  # one cache of 3x4 f64 values


def test_cli_json(capsys):
    import json

    assert tape_stats.main(["--size", "small", "--kernels", "mass_spring", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    k = data["kernels"]["mass_spring"]
    assert k["caches"] == len(k["per_cache"]) == 2  # the two spring extensions, N6 T4
    assert k["tape_bytes"] == sum(c["bytes"] for c in k["per_cache"]) == 2 * 6 * 4 * 8
    assert k["inflation"] == k["tape_bytes"] / k["primal_bytes"]
