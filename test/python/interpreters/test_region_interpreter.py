"""Interpreter semantics of the `region` dialect: a record tape is a `RecordBuffer`."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.interpreter import OpCounter
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.interpreters.utils.ptr import TypedPtr
from xdsl.utils.exceptions import InterpretationError

from tapeflow.diagnostics import parse_module
from tapeflow.interpreters import make_interpreter
from tapeflow.interpreters.region import DRAM, SPM, RecordBuffer
from tapeflow.registry import make_context

R = "!region.tape<!region.record<f64, i1, index>>"
S = "!region.tape<!region.record<f32, i32>, #stream.spm>"


def run(src: str, name: str, *args, listeners=()):
    module = parse_module(make_context(), src, "region.mlir")
    module.verify()
    return make_interpreter(module, listeners=listeners).call_op(name, args)


PROGRAMS = f"""
func.func @roundtrip(%a: f64, %b: i1, %c: index, %d: f64) -> (f64, i1, index, f64, i1, index) {{
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %t = region.alloc count = 3 : {R}
  region.write %t[%c2], %a, %b, %c : {R}
  region.write %t[%c0], %d, %b, %c2 : {R}
  %x, %y, %z = region.read %t[%c2] : {R}
  %u, %v, %w = region.read %t[%c0] : {R}
  region.dealloc %t : {R}
  func.return %x, %y, %z, %u, %v, %w : f64, i1, index, f64, i1, index
}}

func.func @overwrite(%a: f64, %b: f64) -> (f64, i1, index) {{
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %false = arith.constant false
  %true = arith.constant true
  %t = region.alloc count = 1 : {R}
  region.write %t[%c0], %a, %false, %c0 : {R}
  region.write %t[%c0], %b, %true, %c5 : {R}
  %x, %y, %z = region.read %t[%c0] : {R}
  func.return %x, %y, %z : f64, i1, index
}}

func.func @dynamic(%n: index) -> {R} {{
  %t = region.alloc(%n) : {R}
  func.return %t : {R}
}}

func.func @spm(%a: f32, %b: i32) -> {S} {{
  %c1 = arith.constant 1 : index
  %t = region.alloc count = 4 : {S}
  region.write %t[%c1], %a, %b : {S}
  func.return %t : {S}
}}

func.func @write_at(%n: index, %i: index) {{
  %x = arith.constant 1.0 : f64
  %false = arith.constant false
  %t = region.alloc(%n) : {R}
  region.write %t[%i], %x, %false, %i : {R}
  func.return
}}

func.func @read_at(%n: index, %w: index, %r: index) -> f64 {{
  %x = arith.constant 1.0 : f64
  %false = arith.constant false
  %t = region.alloc(%n) : {R}
  region.write %t[%w], %x, %false, %w : {R}
  %a, %b, %c = region.read %t[%r] : {R}
  func.return %a : f64
}}

func.func @double_dealloc() {{
  %t = region.alloc count = 2 : {R}
  region.dealloc %t : {R}
  region.dealloc %t : {R}
  func.return
}}

func.func @use_after_dealloc() {{
  %c0 = arith.constant 0 : index
  %t = region.alloc count = 2 : {R}
  region.dealloc %t : {R}
  %a, %b, %c = region.read %t[%c0] : {R}
  func.return
}}
"""


def test_records_read_back_whole_and_in_place():
    assert run(PROGRAMS, "roundtrip", 1.5, 1, 42, -2.0) == (1.5, 1, 42, -2.0, 1, 2)


def test_a_write_replaces_the_whole_record():
    x, y, z = run(PROGRAMS, "overwrite", 1.0, 2.0)
    assert (x, z) == (2.0, 5)
    assert y != 0  # `true` (the interpreter's i1 is signed: -1)


def test_dynamic_alloc_gives_a_dram_record_buffer():
    (tape,) = run(PROGRAMS, "dynamic", 5)
    assert isinstance(tape, RecordBuffer)
    assert tape.count == 5
    assert tape.memory_space == DRAM
    assert tape.records == [None] * 5
    assert tape.record_bytes == 24  # f64, i1 (padded to 8), index
    assert tape.field_offsets == (0, 8, 16)
    assert tape.size_bytes == 5 * 24
    assert tape.byte_offset(3) == 72


def test_spm_tape_and_record_layout():
    (tape,) = run(PROGRAMS, "spm", 0.5, 7)
    assert tape.memory_space == SPM
    assert tape.records == [None, (0.5, 7), None, None]
    assert tape.record_bytes == 8
    assert tape.byte_offset(1) == 8


def test_buffers_have_distinct_stable_ids():
    (a,) = run(PROGRAMS, "dynamic", 1)
    (b,) = run(PROGRAMS, "dynamic", 1)
    assert a.id != b.id
    assert a.id == a.id


def test_zero_records_is_allowed_at_run_time():
    (tape,) = run(PROGRAMS, "dynamic", 0)
    assert tape.count == 0


def test_negative_count_is_an_error():
    with pytest.raises(InterpretationError, match=r"'region.alloc' record count must be >= 0"):
        run(PROGRAMS, "dynamic", -1)


@pytest.mark.parametrize(("n", "i"), [(4, 4), (4, 100), (4, -1), (0, 0)])
def test_write_out_of_bounds(n, i):
    with pytest.raises(
        InterpretationError, match=rf"'region.write' index {i} out of bounds for tape #\d+ of {n}"
    ):
        run(PROGRAMS, "write_at", n, i)


def test_read_out_of_bounds():
    with pytest.raises(InterpretationError, match=r"'region.read' index 3 out of bounds"):
        run(PROGRAMS, "read_at", 3, 0, 3)


def test_read_of_unwritten_record_names_the_op_and_location():
    with pytest.raises(InterpretationError) as info:
        run(PROGRAMS, "read_at", 3, 0, 1)
    message = str(info.value)
    assert "'region.read' record 1 of tape #" in message
    assert "read before it was written" in message
    assert message.startswith("region.mlir:")


def test_read_of_written_record():
    assert run(PROGRAMS, "read_at", 3, 2, 2) == (1.0,)


def test_double_dealloc():
    with pytest.raises(InterpretationError, match=r"'region.dealloc' tape #\d+ deallocated twice"):
        run(PROGRAMS, "double_dealloc")


def test_use_after_dealloc():
    with pytest.raises(InterpretationError, match=r"'region.read' tape #\d+ used after dealloc"):
        run(PROGRAMS, "use_after_dealloc")


# Writes record (a[j], b[j], j) at order[j] for every j, then reads record i into
# out_a[i], out_b[i], out_c[i] for every i.
PERMUTED = """
func.func @run(%n: index, %order: memref<?xindex>, %a: memref<?xf64>, %b: memref<?xi64>,
               %out_a: memref<?xf64>, %out_b: memref<?xi64>, %out_c: memref<?xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = region.alloc(%n) : !region.tape<!region.record<f64, i64, index>>
  scf.for %j = %c0 to %n step %c1 {
    %slot = memref.load %order[%j] : memref<?xindex>
    %x = memref.load %a[%j] : memref<?xf64>
    %y = memref.load %b[%j] : memref<?xi64>
    region.write %t[%slot], %x, %y, %j : !region.tape<!region.record<f64, i64, index>>
  }
  scf.for %i = %c0 to %n step %c1 {
    %x, %y, %z = region.read %t[%i] : !region.tape<!region.record<f64, i64, index>>
    memref.store %x, %out_a[%i] : memref<?xf64>
    memref.store %y, %out_b[%i] : memref<?xi64>
    memref.store %z, %out_c[%i] : memref<?xindex>
  }
  region.dealloc %t : !region.tape<!region.record<f64, i64, index>>
  func.return
}
"""

_PERMUTED = None


def _permuted_module():
    global _PERMUTED
    if _PERMUTED is None:
        _PERMUTED = parse_module(make_context(), PERMUTED, "permuted.mlir")
        _PERMUTED.verify()
    return _PERMUTED


@st.composite
def records_and_order(draw):
    n = draw(st.integers(min_value=0, max_value=30))
    a = draw(st.lists(st.floats(allow_nan=False), min_size=n, max_size=n))
    b = draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=n, max_size=n))
    order = draw(st.permutations(range(n)))
    return n, a, b, order


@settings(max_examples=60, deadline=None)
@given(records_and_order())
def test_any_record_written_is_read_back_unchanged(case):
    n, a, b, order = case

    def array(ptr):
        return ShapedArray(ptr, [n])

    out_a = array(TypedPtr.new_float64([0.0] * n))
    out_b = array(TypedPtr.new_int64([0] * n))
    out_c = array(TypedPtr.new_index([0] * n, 64))
    counter = OpCounter()
    interpreter = make_interpreter(_permuted_module(), listeners=(counter,))
    interpreter.call_op(
        "run",
        (
            n,
            array(TypedPtr.new_index(list(order), 64)),
            array(TypedPtr.new_float64(a)),
            array(TypedPtr.new_int64(b)),
            out_a,
            out_b,
            out_c,
        ),
    )
    # Record order[j] holds what iteration j wrote.
    inverse = {slot: j for j, slot in enumerate(order)}
    assert out_a.data == [a[inverse[i]] for i in range(n)]
    assert out_b.data == [b[inverse[i]] for i in range(n)]
    assert out_c.data == [inverse[i] for i in range(n)]
    assert counter.ops.get("region.write", 0) == n
    assert counter.ops.get("region.read", 0) == n
