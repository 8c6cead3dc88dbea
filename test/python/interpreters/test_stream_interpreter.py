"""Interpreter semantics of the `stream` dialect: tiles move exactly, misuse is an error."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.interpreter import Interpreter, OpCounter
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.interpreters.utils.ptr import TypedPtr
from xdsl.utils.exceptions import InterpretationError

from tapeflow.diagnostics import parse_module
from tapeflow.interpreters import make_interpreter
from tapeflow.interpreters.region import DRAM, SPM
from tapeflow.interpreters.stream import COMMIT, PREFETCH, DmaToken, TileFifo
from tapeflow.registry import make_context

B = "!region.tape<!region.record<f64, i64>, #stream.spm>"
F = "!stream.fifo<!region.record<f64, i64>, 2>"
RECORD_BYTES = 16
TILE_BYTES = 2 * RECORD_BYTES


def run(src: str, name: str, *args, listeners=()):
    module = parse_module(make_context(), src, "stream.mlir")
    module.verify()
    return make_interpreter(module, listeners=listeners).call_op(name, args)


BASIC = f"""
func.func @basic(%a: f64, %b: f64, %c: f64, %d: f64)
    -> (f64, i64, f64, i64, f64, f64, {F}, !stream.token, !stream.token, {B}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k0 = arith.constant 10 : i64
  %k1 = arith.constant 11 : i64
  %k2 = arith.constant 12 : i64
  %k3 = arith.constant 13 : i64
  %buf = region.alloc count = 2 : {B}
  %f = stream.fifo_alloc tiles = 2 : {F}
  // Forward: tile 0 = (a, b), tile 1 = (c, d), through one buffer.
  stream.acquire_write %buf : {B}
  region.write %buf[%c0], %a, %k0 : {B}
  region.write %buf[%c1], %b, %k1 : {B}
  %w0 = stream.commit %buf -> %f[%c0] : {F}
  stream.acquire_write %buf, %w0 : {B}
  region.write %buf[%c0], %c, %k2 : {B}
  region.write %buf[%c1], %d, %k3 : {B}
  %w1 = stream.commit %buf -> %f[%c1] : {F}
  stream.wait %w1
  // Reverse: tile 1, then tile 0, records in reverse.
  %r1 = stream.prefetch %f[%c1] -> %buf : {F}
  stream.acquire_read %buf, %r1 : {B}
  %y1, %j1 = region.read %buf[%c1] : {B}
  %y0, %j0 = region.read %buf[%c0] : {B}
  stream.release %buf : {B}
  %r0 = stream.prefetch %f[%c0] -> %buf : {F}
  stream.acquire_read %buf : {B}
  %z1, %i1 = region.read %buf[%c1] : {B}
  %z0, %i0 = region.read %buf[%c0] : {B}
  stream.release %buf : {B}
  stream.fifo_dealloc %f : {F}
  func.return %y1, %j1, %y0, %j0, %z1, %z0, %f, %w1, %r0, %buf
      : f64, i64, f64, i64, f64, f64, {F}, !stream.token, !stream.token, {B}
}}
"""


def test_tiles_come_back_unchanged_in_any_order():
    y1, j1, y0, j0, z1, z0, *_ = run(BASIC, "basic", 1.0, 2.0, 3.0, 4.0)
    assert (y1, j1, y0, j0) == (4.0, 13, 3.0, 12)
    assert (z1, z0) == (2.0, 1.0)


def test_runtime_objects_describe_the_dmas():
    *_, fifo, w1, r0, buf = run(BASIC, "basic", 1.0, 2.0, 3.0, 4.0)
    assert isinstance(fifo, TileFifo)
    assert (fifo.num_tiles, fifo.tile_records, fifo.tile_bytes) == (2, 2, TILE_BYTES)
    assert fifo.tiles == [((1.0, 10), (2.0, 11)), ((3.0, 12), (4.0, 13))]
    assert fifo.freed
    assert fifo.in_flight == []
    assert fifo.byte_offset(1) == TILE_BYTES

    assert isinstance(w1, DmaToken)
    assert isinstance(r0, DmaToken)
    assert (w1.kind, w1.tile, w1.done, w1.bytes) == (COMMIT, 1, True, TILE_BYTES)
    assert (w1.source, w1.destination, w1.dram_offset) == (SPM, DRAM, TILE_BYTES)
    assert w1.fifo is fifo
    assert w1.buffer is buf
    assert w1.op.name == "stream.commit"
    assert (r0.kind, r0.tile, r0.done, r0.bytes) == (PREFETCH, 0, True, TILE_BYTES)
    assert (r0.source, r0.destination, r0.dram_offset) == (DRAM, SPM, 0)
    assert r0.data == ((1.0, 10), (2.0, 11))
    assert w1.id != r0.id

    assert buf.memory_space == SPM
    assert buf.dma is None
    assert buf.acquired is None


def test_op_counts():
    counter = OpCounter()
    run(BASIC, "basic", 1.0, 2.0, 3.0, 4.0, listeners=(counter,))
    assert counter.ops["stream.commit"] == 2
    assert counter.ops["stream.prefetch"] == 2
    assert counter.ops["stream.acquire_write"] == 2
    assert counter.ops["stream.acquire_read"] == 2


def test_a_listener_sees_tokens_and_waits():
    events: list[tuple[str, str, int]] = []

    class Spy(Interpreter.Listener):
        def will_interpret_op(self, op, args):
            if op.name in ("stream.acquire_read", "stream.acquire_write"):
                token = args[1] if len(args) > 1 else args[0].dma
                if token is not None:
                    events.append(("wait", token.kind, token.tile))
            if op.name == "stream.wait":
                events.append(("wait", args[0].kind, args[0].tile))

        def did_interpret_op(self, op, results):
            if op.name in ("stream.commit", "stream.prefetch"):
                (token,) = results
                events.append(("issue", token.kind, token.tile))

    run(BASIC, "basic", 1.0, 2.0, 3.0, 4.0, listeners=(Spy(),))
    assert events == [
        ("issue", COMMIT, 0),
        ("wait", COMMIT, 0),
        ("issue", COMMIT, 1),
        ("wait", COMMIT, 1),
        ("issue", PREFETCH, 1),
        ("wait", PREFETCH, 1),
        ("issue", PREFETCH, 0),
        ("wait", PREFETCH, 0),
    ]


def program(body: str) -> str:
    return f"""
func.func @main(%x: f64) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %k = arith.constant 7 : i64
  %buf = region.alloc count = 2 : {B}
  %other = region.alloc count = 2 : {B}
  %f = stream.fifo_alloc tiles = 2 : {F}
{body}
  func.return
}}
"""


def fill(buf: str = "%buf") -> str:
    return f"  region.write {buf}[%c0], %x, %k : {B}\n  region.write {buf}[%c1], %x, %k : {B}\n"


COMMIT_TILE_0 = f"""
  stream.acquire_write %buf : {B}
{fill()}
  %w = stream.commit %buf -> %f[%c0] : {F}
"""

COMMITTED_TILE_0 = COMMIT_TILE_0 + "  stream.wait %w\n"


ERRORS = {
    "write_during_commit": (
        COMMIT_TILE_0 + f"  region.write %buf[%c0], %x, %k : {B}",
        r"'region.write' scratchpad buffer #\d+ accessed while a commit DMA on it is in flight",
    ),
    "read_during_prefetch": (
        COMMITTED_TILE_0
        + f"""
  %r = stream.prefetch %f[%c0] -> %buf : {F}
  %a, %b = region.read %buf[%c0] : {B}""",
        r"'region.read' scratchpad buffer #\d+ accessed while a prefetch DMA on it is in flight",
    ),
    "prefetch_never_committed": (
        COMMITTED_TILE_0 + f"  %r = stream.prefetch %f[%c1] -> %other : {F}",
        r"'stream.prefetch' tile 1 was never committed",
    ),
    "prefetch_while_committing": (
        COMMIT_TILE_0 + f"  %r = stream.prefetch %f[%c0] -> %other : {F}",
        r"'stream.prefetch' tile 0 is still being committed \(commit token #\d+ \(tile 0\)\)",
    ),
    "wait_twice": (
        COMMITTED_TILE_0 + "  stream.wait %w",
        r"'stream.wait' commit token #\d+ \(tile 0\) waited for twice",
    ),
    "wait_after_acquire": (
        COMMIT_TILE_0 + f"  stream.acquire_write %buf : {B}\n  stream.wait %w",
        r"'stream.wait' commit token #\d+ \(tile 0\) waited for twice",
    ),
    "acquire_after_wait": (
        COMMITTED_TILE_0 + f"  stream.acquire_write %buf, %w : {B}",
        r"'stream.acquire_write' commit token #\d+ \(tile 0\) waited for twice",
    ),
    "commit_out_of_range": (
        f"  stream.acquire_write %buf : {B}\n{fill()}  %w = stream.commit %buf -> %f[%c2] : {F}",
        r"'stream.commit' tile index 2 out of range for a FIFO of 2 tiles",
    ),
    "prefetch_out_of_range": (
        f"  %r = stream.prefetch %f[%c5] -> %buf : {F}",
        r"'stream.prefetch' tile index 5 out of range for a FIFO of 2 tiles",
    ),
    "commit_without_acquire": (
        fill() + f"  %w = stream.commit %buf -> %f[%c0] : {F}",
        r"'stream.commit' scratchpad buffer #\d+ must be acquired with stream.acquire_write",
    ),
    "commit_twice": (
        COMMIT_TILE_0 + f"  %w2 = stream.commit %buf -> %f[%c1] : {F}",
        r"'stream.commit' scratchpad buffer #\d+ still has a commit DMA in flight",
    ),
    "two_commits_to_one_tile": (
        COMMIT_TILE_0
        + f"  stream.acquire_write %other : {B}\n"
        + fill("%other")
        + f"  %w2 = stream.commit %other -> %f[%c0] : {F}",
        r"'stream.commit' tile 0 already has commit token #\d+ \(tile 0\) in flight",
    ),
    "release_without_acquire": (
        f"  stream.release %buf : {B}",
        r"'stream.release' scratchpad buffer #\d+ released without being acquired",
    ),
    "acquire_read_without_prefetch": (
        f"  stream.acquire_read %buf : {B}",
        r"'stream.acquire_read' no prefetch in flight into scratchpad buffer #\d+",
    ),
    "acquire_read_on_commit": (
        COMMIT_TILE_0 + f"  stream.acquire_read %buf, %w : {B}",
        r"'stream.acquire_read' expected a prefetch on scratchpad buffer #\d+, got commit token",
    ),
    "acquire_write_on_prefetch": (
        COMMITTED_TILE_0
        + f"  %r = stream.prefetch %f[%c0] -> %buf : {F}\n  stream.acquire_write %buf : {B}",
        r"'stream.acquire_write' expected a commit on scratchpad buffer #\d+, got prefetch",
    ),
    "token_of_another_buffer": (
        COMMIT_TILE_0 + f"  stream.acquire_write %other, %w : {B}",
        r"'stream.acquire_write' commit token #\d+ \(tile 0\) is a DMA on scratchpad buffer "
        r"#\d+, not on scratchpad buffer #\d+",
    ),
    "acquire_twice": (
        f"  stream.acquire_write %buf : {B}\n  stream.acquire_write %buf : {B}",
        r"'stream.acquire_write' scratchpad buffer #\d+ is already acquired for writing",
    ),
    "prefetch_into_unreleased": (
        COMMITTED_TILE_0
        + f"""
  %r = stream.prefetch %f[%c0] -> %buf : {F}
  stream.acquire_read %buf, %r : {B}
  %r2 = stream.prefetch %f[%c0] -> %buf : {F}""",
        r"'stream.prefetch' scratchpad buffer #\d+ is still acquired for reading "
        r"\(release it first\)",
    ),
    "prefetch_into_buffer_being_written": (
        COMMITTED_TILE_0
        + f"""
  stream.acquire_write %other : {B}
  %r = stream.prefetch %f[%c0] -> %other : {F}""",
        r"'stream.prefetch' scratchpad buffer #\d+ is still acquired for writing",
    ),
    "buffer_size_differs_from_tile": (
        f"""
  %d = region.alloc(%c5) : {B}
  stream.acquire_write %d : {B}
  %w = stream.commit %d -> %f[%c0] : {F}""",
        r"'stream.commit' scratchpad buffer #\d+ holds 5 records but a tile has 2",
    ),
    "fifo_dealloc_in_flight": (
        COMMIT_TILE_0 + f"  stream.fifo_dealloc %f : {F}",
        r"'stream.fifo_dealloc' FIFO #\d+ deallocated with DMAs in flight: commit token",
    ),
    "fifo_used_after_dealloc": (
        f"  stream.fifo_dealloc %f : {F}\n  %r = stream.prefetch %f[%c0] -> %buf : {F}",
        r"'stream.prefetch' FIFO #\d+ used after stream.fifo_dealloc",
    ),
    "buffer_dealloc_in_flight": (
        COMMIT_TILE_0 + f"  region.dealloc %buf : {B}",
        r"'region.dealloc' scratchpad buffer #\d+ deallocated while a commit DMA on it",
    ),
    "partial_tile_record_unwritten": (
        f"""
  stream.acquire_write %buf : {B}
  region.write %buf[%c0], %x, %k : {B}
  %w = stream.commit %buf -> %f[%c1] : {F}
  stream.wait %w
  %r = stream.prefetch %f[%c1] -> %other : {F}
  stream.acquire_read %other, %r : {B}
  %a0, %b0 = region.read %other[%c0] : {B}
  %a1, %b1 = region.read %other[%c1] : {B}""",
        r"'region.read' record 1 of scratchpad buffer #\d+ read before it was written",
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_misuse_is_an_error_naming_the_op(case):
    body, message = ERRORS[case]
    with pytest.raises(InterpretationError, match=message) as info:
        run(program(body), "main", 1.0)
    assert str(info.value).startswith("stream.mlir:")


def test_valid_protocols_run():
    """The same snippets, without their last (wrong) step, are fine."""
    drain_then_prefetch = (
        COMMIT_TILE_0
        + f"""
  stream.acquire_write %buf, %w : {B}
  stream.release %buf : {B}
  %r = stream.prefetch %f[%c0] -> %buf : {F}
  stream.acquire_read %buf, %r : {B}
  %a, %b = region.read %buf[%c1] : {B}
  stream.release %buf : {B}
  stream.fifo_dealloc %f : {F}
  region.dealloc %buf : {B}"""
    )
    for body in (COMMIT_TILE_0, COMMITTED_TILE_0, drain_then_prefetch):
        assert run(program(body), "main", 1.0) == ()


# Commits tile order[j] in iteration j (its records are data[order[j]*K + r]) through two
# alternating buffers, drains, then prefetches tiles rorder[0], rorder[1], ... one ahead
# of the reader, also through two buffers, copying them to out[j*K + r].
PIPELINE = f"""
func.func @run(%ntiles: index, %order: memref<?xindex>, %a: memref<?xf64>, %b: memref<?xi64>,
               %nreads: index, %rorder: memref<?xindex>,
               %out_a: memref<?xf64>, %out_b: memref<?xi64>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ck = arith.constant 2 : index
  %b0 = region.alloc count = 2 : {B}
  %b1 = region.alloc count = 2 : {B}
  %f = stream.fifo_alloc(%ntiles) : {F}
  scf.for %j = %c0 to %ntiles step %c1 {{
    %t = memref.load %order[%j] : memref<?xindex>
    %par = arith.remsi %j, %c2 : index
    %even = arith.cmpi eq, %par, %c0 : index
    %buf = scf.if %even -> ({B}) {{
      scf.yield %b0 : {B}
    }} else {{
      scf.yield %b1 : {B}
    }}
    stream.acquire_write %buf : {B}
    %base = arith.muli %t, %ck : index
    scf.for %r = %c0 to %ck step %c1 {{
      %src = arith.addi %base, %r : index
      %x = memref.load %a[%src] : memref<?xf64>
      %y = memref.load %b[%src] : memref<?xi64>
      region.write %buf[%r], %x, %y : {B}
    }}
    %w = stream.commit %buf -> %f[%t] : {F}
  }}
  stream.acquire_write %b0 : {B}
  stream.release %b0 : {B}
  stream.acquire_write %b1 : {B}
  stream.release %b1 : {B}
  %any = arith.cmpi sgt, %nreads, %c0 : index
  scf.if %any {{
    %t0 = memref.load %rorder[%c0] : memref<?xindex>
    %p0 = stream.prefetch %f[%t0] -> %b0 : {F}
  }}
  scf.for %j = %c0 to %nreads step %c1 {{
    %par = arith.remsi %j, %c2 : index
    %even = arith.cmpi eq, %par, %c0 : index
    %cur, %next = scf.if %even -> ({B}, {B}) {{
      scf.yield %b0, %b1 : {B}, {B}
    }} else {{
      scf.yield %b1, %b0 : {B}, {B}
    }}
    %j1 = arith.addi %j, %c1 : index
    %more = arith.cmpi slt, %j1, %nreads : index
    scf.if %more {{
      %tn = memref.load %rorder[%j1] : memref<?xindex>
      %pn = stream.prefetch %f[%tn] -> %next : {F}
    }}
    stream.acquire_read %cur : {B}
    %base = arith.muli %j, %ck : index
    scf.for %r = %c0 to %ck step %c1 {{
      %x, %y = region.read %cur[%r] : {B}
      %dst = arith.addi %base, %r : index
      memref.store %x, %out_a[%dst] : memref<?xf64>
      memref.store %y, %out_b[%dst] : memref<?xi64>
    }}
    stream.release %cur : {B}
  }}
  stream.fifo_dealloc %f : {F}
  region.dealloc %b0 : {B}
  region.dealloc %b1 : {B}
  func.return
}}
"""

_PIPELINE = None


def _pipeline_module():
    global _PIPELINE
    if _PIPELINE is None:
        _PIPELINE = parse_module(make_context(), PIPELINE, "pipeline.mlir")
        _PIPELINE.verify()
    return _PIPELINE


K = 2


@st.composite
def commits_and_prefetches(draw):
    ntiles = draw(st.integers(min_value=0, max_value=8))
    order = draw(st.permutations(range(ntiles)))
    a = draw(st.lists(st.floats(allow_nan=False), min_size=ntiles * K, max_size=ntiles * K))
    b = draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=ntiles * K, max_size=ntiles * K))
    rorder = draw(st.lists(st.sampled_from(range(ntiles)), max_size=12)) if ntiles else []
    return ntiles, order, a, b, rorder


@settings(max_examples=50, deadline=None)
@given(commits_and_prefetches())
def test_any_commit_prefetch_sequence_returns_the_committed_tiles(case):
    ntiles, order, a, b, rorder = case
    nreads = len(rorder)
    out_a = ShapedArray(TypedPtr.new_float64([0.0] * nreads * K), [nreads * K])
    out_b = ShapedArray(TypedPtr.new_int64([0] * nreads * K), [nreads * K])
    counter = OpCounter()
    make_interpreter(_pipeline_module(), listeners=(counter,)).call_op(
        "run",
        (
            ntiles,
            ShapedArray(TypedPtr.new_index(list(order), 64), [ntiles]),
            ShapedArray(TypedPtr.new_float64(a), [ntiles * K]),
            ShapedArray(TypedPtr.new_int64(b), [ntiles * K]),
            nreads,
            ShapedArray(TypedPtr.new_index(rorder, 64), [nreads]),
            out_a,
            out_b,
        ),
    )
    assert out_a.data == [a[t * K + r] for t in rorder for r in range(K)]
    assert out_b.data == [b[t * K + r] for t in rorder for r in range(K)]
    assert counter.ops.get("stream.commit", 0) == ntiles
    assert counter.ops.get("stream.prefetch", 0) == nreads
