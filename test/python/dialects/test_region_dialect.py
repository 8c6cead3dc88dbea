"""The `region` dialect's types and builders: record layout, tape types, op construction."""

from __future__ import annotations

import pytest
from tapeflow.dialects import region, stream
from tapeflow.dialects.region import RecordType, TapeType
from xdsl.dialects import test as test_dialect
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float80Type,
    IndexType,
    IntegerType,
    MemRefType,
    NoneAttr,
    f32,
    f64,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.utils.exceptions import VerifyException

index = IndexType()


@pytest.mark.parametrize(
    ("fields", "offsets", "size", "alignment"),
    [
        ([f64], (0,), 8, 8),
        ([i1], (0,), 1, 1),
        ([f64, f64, i1], (0, 8, 16), 24, 8),
        ([i1, f64], (0, 8), 16, 8),
        ([f32, i1], (0, 4), 8, 4),
        ([i1, i32, i1], (0, 4, 8), 12, 4),
        ([i1, i8, i1], (0, 1, 2), 3, 1),
        ([index, f32], (0, 8), 16, 8),
        ([f32, index], (0, 8), 16, 8),
        ([i1, Float16Type(), f32], (0, 2, 4), 8, 4),
        ([BFloat16Type(), i1], (0, 2), 4, 2),
        ([IntegerType(24), i1], (0, 4), 8, 4),
        ([i1, Float80Type()], (0, 16), 32, 16),
        ([i64, i1, i1, f32], (0, 8, 9, 12), 16, 8),
    ],
)
def test_record_layout_is_the_c_struct_rule(fields, offsets, size, alignment):
    record = RecordType(fields)
    assert record.offsets == offsets
    assert record.size == size
    assert record.alignment == alignment
    assert record.field_types == tuple(fields)


def test_layout_is_not_printed():
    assert str(RecordType([i1, f64])) == "!region.record<i1, f64>"


def test_record_needs_a_field():
    with pytest.raises(VerifyException, match="at least one field"):
        RecordType([])


@pytest.mark.parametrize("bad", [MemRefType(f64, [4]), TapeType(RecordType([f64]))])
def test_record_fields_are_scalars(bad):
    with pytest.raises(VerifyException, match="integer, index or float"):
        RecordType([f64, bad])


def test_tape_memory_space():
    record = RecordType([f64, i1])
    dram = TapeType(record)
    spm = TapeType(record, stream.SpmAttr())
    assert dram.memory_space == NoneAttr()
    assert not dram.in_spm
    assert spm.in_spm
    assert str(dram) == "!region.tape<!region.record<f64, i1>>"
    assert str(spm) == "!region.tape<!region.record<f64, i1>, #stream.spm>"
    assert dram != spm
    with pytest.raises(VerifyException, match="memory space"):
        TapeType(record, i32)


def test_builders_derive_types():
    record = RecordType([f64, i1])
    values = test_dialect.TestOp(result_types=[index, index, f64, i1]).results
    alloc_static = region.AllocOp(TapeType(record), 16)
    alloc_dynamic = region.AllocOp(TapeType(record), values[0])
    assert alloc_static.static_count == 16
    assert alloc_dynamic.static_count is None
    alloc_static.verify()
    alloc_dynamic.verify()
    write = region.WriteOp(alloc_static.tape, values[1], values[2:])
    write.verify()
    read = region.ReadOp(alloc_static.tape, values[1])
    read.verify()
    assert [r.type for r in read.values] == [f64, i1]
    region.DeallocOp(alloc_static.tape).verify()


def test_write_verifier_checks_field_types():
    record = RecordType([f64, i1])
    values = test_dialect.TestOp(result_types=[index, i1, f64]).results
    alloc = region.AllocOp(TapeType(record), 4)
    with pytest.raises(VerifyException, match=r"value types \(i1, f64\) do not match"):
        region.WriteOp(alloc.tape, values[0], values[1:]).verify()


def test_fifo_type():
    record = RecordType([f64, i1])
    fifo = stream.FifoType(record, 8)
    assert fifo.k == 8
    assert fifo.tile_bytes == 8 * 16
    assert fifo.buffer_type == TapeType(record, stream.SpmAttr())
    assert str(fifo) == "!stream.fifo<!region.record<f64, i1>, 8>"
    with pytest.raises(VerifyException, match="tile size must be >= 1"):
        stream.FifoType(record, 0)


def test_stream_builders():
    record = RecordType([f64])
    fifo_type = stream.FifoType(record, 4)
    (n, t) = test_dialect.TestOp(result_types=[index, index]).results
    fifo = stream.FifoAllocOp(fifo_type, n)
    buf = region.AllocOp(fifo_type.buffer_type, 4)
    commit = stream.CommitOp(fifo.fifo, t, buf.tape)
    prefetch = stream.PrefetchOp(fifo.fifo, t, buf.tape)
    for op in (
        fifo,
        stream.FifoAllocOp(fifo_type, 3),
        stream.AcquireWriteOp(buf.tape),
        commit,
        stream.AcquireWriteOp(buf.tape, commit.token),
        prefetch,
        stream.AcquireReadOp(buf.tape, prefetch.token),
        stream.ReleaseOp(buf.tape),
        stream.WaitOp(commit.token),
        stream.FifoDeallocOp(fifo.fifo),
    ):
        op.verify()
    wrong_size = region.AllocOp(fifo_type.buffer_type, 5)
    with pytest.raises(VerifyException, match="buffer holds 5 records but a tile"):
        stream.CommitOp(fifo.fifo, t, wrong_size.tape).verify()


@pytest.mark.parametrize(
    ("element", "size"),
    [(i1, 1), (i8, 1), (IntegerType(12), 2), (IntegerType(24), 4), (i32, 4),
     (IntegerType(48), 8), (i64, 8), (index, 8), (Float16Type(), 2), (BFloat16Type(), 2),
     (f32, 4), (f64, 8)],
)  # fmt: skip
def test_field_size_is_the_bytes_memory_stores(element, size):
    """The one byte-size rule (record fields, memref and tape elements, the hardware
    model's addresses, the min-cut's weights): what the interpreter stores a value in
    (xDSL's `compile_time_size`, an `index` as i64) and LLVM's alloc size (i24 is 4
    bytes, not 3)."""
    from xdsl.interpreters.builtin import xtype_for_el_type

    assert region.field_size(element) == size
    assert region.element_size(element) == size
    if not isinstance(element, BFloat16Type):  # no interpreter storage for bf16
        assert xtype_for_el_type(element, 64).compile_time_size == size


def test_a_memref_element_is_a_pointer():
    assert region.element_size(MemRefType(f64, [4])) == region.INDEX_BYTES == 8
    with pytest.raises(VerifyException):
        region.field_size(MemRefType(f64, [4]))
