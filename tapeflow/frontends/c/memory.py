"""Memory: local arrays (`memref.alloca`), `malloc`/`calloc`/`realloc` (`memref.alloc`),
row tables (`T **` of equal rows as one 2-D memref), and `memcpy`/`memmove`/`memset` as
loops.
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType
from xdsl.ir import Block, SSAValue
from xdsl.rewriter import InsertPoint

from .clang import (
    ADDR_OF,
    DEREF,
    binary_op,
    children,
    decl_key,
    evaluate,
    strip,
    strip_casts,
    unary_op,
    unsupported,
    walk,
)
from .function import Buffer, FunctionState
from .trees import assigned_target, factors_of
from .types import INDEX, array_shape, element_type, memref_type, record_scalar, type_kind


class Memory(FunctionState):
    """Stack arrays, heap allocations, row tables and the memory calls."""

    def local_array(self, d, init) -> Buffer:
        mtype = memref_type(d.type, d)
        shape, elem = array_shape(d.type, d)
        dynamic: list[SSAValue] = []
        if DYNAMIC_INDEX in shape:
            if len(shape) != 1:
                unsupported(d, "multi-dimensional variable-length arrays")
            size = [k for k in children(d) if k.kind.is_expression()]
            dynamic = [self.index(self.rvalue(size[0]), size[0])]
        ref = self.emit(
            memref.AllocaOp.get(mtype.element_type, shape=shape, dynamic_sizes=dynamic), d
        ).results[0]
        ref.name_hint = d.spelling
        if init is not None:
            flat = self.flatten_init(strip(init), shape)
            strides = [1] * len(shape)
            for n in range(len(shape) - 2, -1, -1):
                strides[n] = strides[n + 1] * shape[n + 1]
            total = 1
            for e in shape:
                total *= e
            for pos in range(total):
                item = flat.get(pos)
                if item is None:
                    value = self.const(0, mtype.element_type, init)
                else:
                    value = self.to_memory(self.convert(self.rvalue(item), elem, item), mtype, item)
                idx = [self.const((pos // strides[n]) % shape[n], INDEX, init) for n in range(len(shape))]
                self.emit(memref.StoreOp.get(value, ref, idx), item if item is not None else init)
        return Buffer(ref, elem)

    def flatten_init(self, init, shape: list[int]) -> dict[int, object]:
        """Row-major position -> initializer expression (missing ones are zero)."""
        out: dict[int, object] = {}

        def go(c, dims: list[int], base: int) -> None:
            c = strip(c)
            if c.kind.name != "INIT_LIST_EXPR":
                if dims:
                    unsupported(c, "a brace-elided or non-list array initializer")
                out[base] = c
                return
            inner = 1
            for e in dims[1:]:
                inner *= e
            for n, k in enumerate(c.get_children()):
                go(k, dims[1:], base + n * inner)

        if DYNAMIC_INDEX in shape:
            unsupported(init, "an initializer for a variable-length array")
        go(init, shape, 0)
        return out

    def allocation(self, d, call) -> Buffer:
        shape, elem = array_shape(d.type, d)
        if len(shape) != 1:
            unsupported(call, "allocating a multi-dimensional array")
        if type_kind(elem) == "VOID":
            elem = self.void_element(d)
        if (scalar := record_scalar(elem)) is not None:  # structs of floats: their floats
            return self.struct_allocation(d, call, elem.get_canonical(), scalar)
        mtype = MemRefType(element_type(elem, d), [DYNAMIC_INDEX])
        esize = elem.get_size()
        args = list(call.get_arguments())
        if call.spelling == "calloc":
            if len(args) == 2 and evaluate(args[1]) != esize and evaluate(args[0]) == esize:
                args.reverse()  # calloc(sizeof(T), n)
            if len(args) != 2 or evaluate(args[1]) != esize:
                unsupported(call, f"calloc(count, sizeof({elem.spelling})) is the supported form")
            count = self.index(self.rvalue(args[0]), args[0])
        elif call.spelling == "aligned_alloc":  # (alignment, size): alignment is the memory's
            count = self.element_count(args[1], esize)
        else:
            count = self.element_count(args[0], esize)
        ref = self.emit(
            memref.AllocOp.get(mtype.element_type, shape=[DYNAMIC_INDEX], dynamic_sizes=[count]),
            call,
        ).results[0]
        ref.name_hint = d.spelling
        if call.spelling == "calloc":
            zero = self.const(0, mtype.element_type, call)
            self.fill(ref, count, zero, call)
        return Buffer(ref, elem)

    def struct_allocation(self, d, call, record, scalar) -> Buffer:
        """`struct P *p = malloc(n * sizeof(struct P))` of a struct of floats: its floats,
        as a struct pointer parameter is (C's own layout)."""
        if call.spelling != "malloc":
            unsupported(call, f"{call.spelling} of '{record.spelling}' (malloc only)")
        count = self.element_count(list(call.get_arguments())[0], record.get_size())
        per = self.const(record.get_size() // scalar.get_size(), INDEX, call)
        size = self.index_op(arith.MuliOp, count, per, call)
        op = memref.AllocOp.get(element_type(scalar, d), shape=[DYNAMIC_INDEX], dynamic_sizes=[size])
        ref = self.emit(op, call).results[0]
        ref.name_hint = d.spelling
        return Buffer(ref, scalar, record)

    def row_table(self, d, call) -> Buffer:
        """`double **m = malloc(n * sizeof(double *))` whose rows the function allocates
        (`m[i] = malloc(k * sizeof(double))`, every one the same length `k`, which must
        not change after `m` is declared): one dense `memref<?x?xT>` allocated here, as
        `double **` parameters are, so `m[i][j]` is a 2-D access; the row allocations and
        `free(m[i])` are no-ops and `free(m)` frees it."""
        shape, elem = array_shape(d.type, d)
        if len(shape) != 2 or call.spelling not in ("malloc", "calloc"):
            unsupported(call, f"{call.spelling} of a '{d.type.spelling}' (only malloc of a 'T **' table of rows)")
        rows_call = None
        for c in walk(self.sig.cursor):
            if c.kind.name != "BINARY_OPERATOR" or binary_op(c) != "=":
                continue
            lhs, rhs = (strip(k) for k in children(c))
            row = lhs.kind.name == "ARRAY_SUBSCRIPT_EXPR" or (  # m[i] = or *m = (row 0)
                lhs.kind.name == "UNARY_OPERATOR" and unary_op(lhs) == DEREF
            )
            base = strip_casts(children(lhs)[0]) if row else None
            if base is None or base.kind.name != "DECL_REF_EXPR" or decl_key(base.referenced) != decl_key(d):
                continue
            r = strip_casts(rhs)
            if r.kind.name != "CALL_EXPR" or r.spelling not in ("malloc", "calloc"):
                unsupported(c, f"a row of '{d.spelling}' that is not malloc'ed (a local 'T **' is a dense 2-D array)")
            if rows_call is None:
                rows_call = r
            elif (r.spelling, self.text(r)) != (rows_call.spelling, self.text(rows_call)):
                unsupported(
                    r,
                    f"rows of '{d.spelling}' of different lengths (a local 'T **' is a dense 2-D "
                    "array: every row one length)"
                )
        if rows_call is None:
            unsupported(call, f"the rows of '{d.spelling}' are not allocated here (m[i] = malloc(...))")
        written = {decl_key(t.referenced) for t in map(assigned_target, walk(self.sig.cursor)) if t is not None}
        for r in walk(rows_call):
            v = r.referenced if r.kind.name == "DECL_REF_EXPR" else None
            if v is None or v.kind.name not in ("VAR_DECL", "PARM_DECL"):
                continue
            if decl_key(v) in written or (
                v.kind.name == "VAR_DECL" and v.location.offset > d.location.offset
            ):
                unsupported(
                    rows_call,
                    f"a row length of '{d.spelling}' that depends on '{v.spelling}' (a local "
                    "'T **' is a dense 2-D array: every row one length, known where it is declared)"
                )
        esize = elem.get_size()
        args = list(call.get_arguments())
        count = self.element_count(args[0], 8) if call.spelling == "malloc" else self.index(self.rvalue(args[0]), args[0])
        row_args = list(rows_call.get_arguments())
        if rows_call.spelling == "malloc":
            length = self.element_count(row_args[0], esize)
        elif len(row_args) == 2 and evaluate(row_args[1]) == esize:
            length = self.index(self.rvalue(row_args[0]), row_args[0])
        else:
            unsupported(rows_call, f"calloc(count, sizeof({elem.spelling})) is the supported form")
        mtype = MemRefType(element_type(elem, d), [DYNAMIC_INDEX, DYNAMIC_INDEX])
        ref = self.emit(
            memref.AllocOp.get(mtype.element_type, shape=mtype.shape, dynamic_sizes=[count, length]),
            call,
        ).results[0]
        ref.name_hint = d.spelling
        if rows_call.spelling == "calloc":
            zero = self.const(0, mtype.element_type, rows_call)
            lb, step = self.const(0, INDEX, call), self.const(1, INDEX, call)
            body = Block(arg_types=[INDEX])
            outer = self.builder
            self.builder = Builder(InsertPoint.at_end(body))
            self.fill(ref, length, zero, rows_call, row=body.args[0])
            self.emit(scf.YieldOp(), call)
            self.builder = outer
            self.emit(scf.ForOp(lb, count, step, [], body), call)
        self.row_tables.add(decl_key(d))
        return Buffer(ref, elem)

    def is_row(self, e) -> bool:
        """Whether `e` is a row `m[i]` (or `*m`) of a local table of rows (`row_table`)."""
        c = strip_casts(e)
        if c.kind.name != "ARRAY_SUBSCRIPT_EXPR" and not (
            c.kind.name == "UNARY_OPERATOR" and unary_op(c) == DEREF
        ):
            return False
        base = strip_casts(children(c)[0])
        return (
            base.kind.name == "DECL_REF_EXPR"
            and base.referenced is not None
            and decl_key(base.referenced) in self.row_tables
        )

    def at_top_level(self) -> bool:
        return self.builder.insertion_point.block is self.entry

    def realloc(self, d, call) -> Buffer:
        """`realloc(p, size)`, copy semantics: a new allocation, the old elements copied
        (as many as both hold), the old one freed. At the function's top level (a buffer
        bound in a loop or branch would not outlive it), of a buffer the function mallocs."""
        args = list(call.get_arguments())
        old = self.buffer(args[0])
        if not self.at_top_level():
            unsupported(call, "realloc inside a loop or branch (only at the function's top level)")
        if not isinstance(old.ref.owner, memref.AllocOp):
            unsupported(args[0], "realloc of a buffer that this function does not allocate")
        self.same_elements(d, old, call)
        count = self.element_count(args[1], old.elem.get_size())
        mtype = old.ref.type
        ref = self.emit(
            memref.AllocOp.get(mtype.element_type, shape=[DYNAMIC_INDEX], dynamic_sizes=[count]),
            call,
        ).results[0]
        ref.name_hint = d.spelling
        zero = self.const(0, INDEX, call)
        size = self.emit(memref.DimOp(old.ref, zero), call).results[0]
        kept = self.emit(arith.MinSIOp(size, count), call).results[0]
        self.copy(ref, old.ref, kept, call)
        self.emit(memref.DeallocOp.get(old.ref), call)
        return Buffer(ref, old.elem)

    def copy(self, dst: SSAValue, src: SSAValue, count: SSAValue, c) -> None:
        lb, step = self.const(0, INDEX, c), self.const(1, INDEX, c)
        body = Block(arg_types=[INDEX])
        outer = self.builder
        self.builder = Builder(InsertPoint.at_end(body))
        value = self.emit(memref.LoadOp.get(src, [body.args[0]]), c).results[0]
        self.emit(memref.StoreOp.get(value, dst, [body.args[0]]), c)
        self.emit(scf.YieldOp(), c)
        self.builder = outer
        self.emit(scf.ForOp(lb, count, step, [], body), c)

    def assign_allocation(self, target, call, c) -> None:
        """`p = malloc(...)` into a pointer declared without one, `p = realloc(p, ...)`:
        `p` names the new buffer from here on (at the function's top level)."""
        t = strip(target)
        if self.is_row(t):
            return  # allocated with the table (`row_table`)
        if (place := self.struct_place(t)) is not None and type_kind(t.type) == "POINTER":
            block = self.home(place[0])  # the block declaring the struct
            if self.builder.insertion_point.block is not block or place[:2] in self.bufs or (
                call.spelling == "realloc"
            ):
                unsupported(c, f"{call.spelling} into the pointer field '{self.text(t)}' (one "
                            "malloc, at the top level of the block declaring the struct)")
            self.bufs[place[:2]] = self.allocation(t, call)
            return
        if t.kind.name != "DECL_REF_EXPR" or type_kind(t.type) != "POINTER":
            unsupported(c, f"storing the result of {call.spelling} (only into a pointer variable)")
        d = t.referenced
        key = decl_key(d)
        if not self.at_top_level():
            unsupported(c, f"assigning {call.spelling} to '{d.spelling}' inside a loop or branch (declare it there)")
        if call.spelling == "realloc":
            self.bufs[key] = self.realloc(d, call)
        elif key in self.bufs:
            unsupported(c, f"a second allocation into the pointer '{d.spelling}' (free it and use another)")
        else:
            self.bufs[key] = self.allocation(d, call)
        if key in self.views:
            self.vals[key] = self.const(0, INDEX, c)

    def posix_memalign(self, e) -> SSAValue:
        """`posix_memalign(&p, alignment, size)`: `p` is a new buffer (the alignment is the
        memory's concern); the call returns 0 (success)."""
        args = list(e.get_arguments())
        target = strip_casts(args[0]) if len(args) == 3 else None
        if target is None or target.kind.name != "UNARY_OPERATOR" or unary_op(target) != ADDR_OF:
            unsupported(e, "posix_memalign(&pointer, alignment, size) is the supported form")
        ref = strip(children(target)[0])
        if ref.kind.name != "DECL_REF_EXPR" or decl_key(ref.referenced) in self.bufs:
            unsupported(args[0], "posix_memalign into a pointer that already points to a buffer")
        if not self.at_top_level():
            unsupported(e, "posix_memalign inside a loop or branch (only at the function's top level)")
        d = ref.referenced
        shape, elem = array_shape(d.type, d)
        if type_kind(elem) == "VOID":
            elem = self.void_element(d)
        count = self.element_count(args[2], elem.get_size())
        mtype = MemRefType(element_type(elem, d), [DYNAMIC_INDEX])
        buf = self.emit(
            memref.AllocOp.get(mtype.element_type, shape=[DYNAMIC_INDEX], dynamic_sizes=[count]), e
        ).results[0]
        buf.name_hint = d.spelling
        self.bufs[decl_key(d)] = Buffer(buf, elem)
        if decl_key(d) in self.views:
            self.vals[decl_key(d)] = self.const(0, INDEX, e)
        return self.const(0, INDEX, e)

    def element_count(self, size, esize: int) -> SSAValue:
        """`n * sizeof(T)` (either order) or a constant multiple of sizeof(T)."""
        c = strip(size)
        whole = evaluate(c)
        if isinstance(whole, int):
            if whole % esize:
                unsupported(size, f"malloc of {whole} bytes: not a multiple of the element size {esize}")
            return self.const(whole // esize, INDEX, size)
        if c.kind.name == "BINARY_OPERATOR" and binary_op(c) == "*":
            a, b = children(c)
            for x, y in ((a, b), (b, a)):
                if evaluate(strip(y)) == esize and strip(y).kind.name in ("UNARY_EXPR", "CXX_UNARY_EXPR"):
                    return self.index(self.rvalue(x), x)
            # a longer product, `sizeof` anywhere in it: `sizeof(double) * 2 * n`
            factors = factors_of(c)
            for n, f in enumerate(factors):
                if evaluate(f) == esize and f.kind.name in ("UNARY_EXPR", "CXX_UNARY_EXPR"):
                    rest = [self.index(self.rvalue(g), g) for g in factors[:n] + factors[n + 1 :]]
                    count = rest[0]
                    for v in rest[1:]:
                        count = self.emit(arith.MuliOp(count, v), size).results[0]
                    return count
        unsupported(
            size,
            f"malloc size: write it as a product with sizeof(element), element size {esize}"
        )

    def mem_call(self, c) -> None:
        """`memcpy(dst, src, n * sizeof(T))`, `memmove` and `memset(dst, 0, n * sizeof(T))`:
        an element loop of loads and stores, which the AD differentiates like any other;
        views give their offsets. A memmove within one array (`memmove(x + 1, x, ...)`,
        which may overlap) copies through a temporary buffer, as C's "as if" copy."""
        name = c.spelling.removeprefix("__builtin_")
        args = list(c.get_arguments())
        if len(args) != 3:
            unsupported(c, f"{name} with {len(args)} arguments")
        dst, dst_off = self.pointer(args[0])
        if dst.mixed():
            unsupported(c, f"{name} of structs with integer fields")
        self.one_dimensional(dst, c)
        esize = dst.elem.get_size()
        count = self.element_count(args[2], esize)
        if name == "memset":
            if evaluate(args[1]) != 0:
                unsupported(args[1], "memset to a value other than 0")
            value = self.const(0, dst.ref.type.element_type, c)
            if dst_off is None:
                self.fill(dst.ref, count, value, c)
                return
            self.copy_loop(None, None, dst.ref, dst_off, count, c, value)
            return
        src, src_off = self.pointer(args[1])
        self.one_dimensional(src, c)
        if src.ref.type.element_type != dst.ref.type.element_type:
            unsupported(c, f"{name} between arrays of different element types")
        if name == "memmove" and src.ref == dst.ref:
            elem = dst.ref.type.element_type
            tmp = self.emit(
                memref.AllocOp.get(elem, shape=[DYNAMIC_INDEX], dynamic_sizes=[count]), c
            ).results[0]
            self.copy_loop(src.ref, src_off, tmp, None, count, c)
            self.copy_loop(tmp, None, dst.ref, dst_off, count, c)
            self.emit(memref.DeallocOp.get(tmp), c)
            return
        self.copy_loop(src.ref, src_off, dst.ref, dst_off, count, c)

    def copy_loop(self, src, src_off, dst, dst_off, count, c, value=None) -> None:
        """`for i < count: dst[dst_off + i] = src[src_off + i]` (or `= value`)."""
        lb, step = self.const(0, INDEX, c), self.const(1, INDEX, c)
        body = Block(arg_types=[INDEX])
        outer = self.builder
        self.builder = Builder(InsertPoint.at_end(body))
        i = body.args[0]

        def at(off):
            return i if off is None else self.emit(arith.AddiOp(off, i), c).results[0]

        if src is not None:
            value = self.emit(memref.LoadOp.get(src, [at(src_off)]), c).results[0]
        self.emit(memref.StoreOp.get(value, dst, [at(dst_off)]), c)
        self.emit(scf.YieldOp(), c)
        self.builder = outer
        self.emit(scf.ForOp(lb, count, step, [], body), c)

    def fill(self, ref: SSAValue, count: SSAValue, value: SSAValue, c, row=None) -> None:
        lb, step = self.const(0, INDEX, c), self.const(1, INDEX, c)
        body = Block(arg_types=[INDEX])
        outer = self.builder
        self.builder = Builder(InsertPoint.at_end(body))
        at = [body.args[0]] if row is None else [row, body.args[0]]
        self.emit(memref.StoreOp.get(value, ref, at), c)
        self.emit(scf.YieldOp(), c)
        self.builder = outer
        self.emit(scf.ForOp(lb, count, step, [], body), c)
