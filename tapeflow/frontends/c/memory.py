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
from .types import (
    INDEX,
    array_shape,
    element_type,
    is_int,
    memref_type,
    record_scalar,
    type_kind,
)


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
        elif call.spelling in self.unit.allocation_like:  # allocators.py
            count = self.element_count(args[self.unit.allocation_like[call.spelling]], esize)
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
        return self.resized(d, old, self.element_count(args[1], old.elem.get_size()), call)

    def resized(self, d, old: Buffer, count: SSAValue, call) -> Buffer:
        """A new buffer of `count` elements holding `old`'s first ones; `old` freed."""
        ref = self.emit(
            memref.AllocOp.get(old.ref.type.element_type, shape=[DYNAMIC_INDEX], dynamic_sizes=[count]),
            call,
        ).results[0]
        ref.name_hint = d.spelling
        zero = self.const(0, INDEX, call)
        size = self.emit(memref.DimOp(old.ref, zero), call).results[0]
        kept = self.emit(arith.MinSIOp(size, count), call).results[0]
        self.copy(ref, old.ref, kept, call)
        self.emit(memref.DeallocOp.get(old.ref), call)
        return Buffer(ref, old.elem)

    def grow_in_loop(self, s, body, var, lb, ub, step, counter) -> None:
        """`p = realloc(p, size)` in the body of the counted loop `s` (a buffer grown
        as the loop runs, `p` NULL or malloc'ed before it): one buffer of the largest
        size the loop asks for, allocated before it (a loop of the sizes, which depend
        on the counter and on what the loop does not write), the old one's elements
        copied; the reallocs in the loop are then no-ops, as the buffer already holds
        what each would keep. The rows of an array of pointers the loop allocates
        (`pointer_array`) are one buffer the same way."""
        nested = ("FOR_STMT", "WHILE_STMT", "DO_STMT")
        calls, rows = [], []
        for c in walk(body, lambda k: k.kind.name in nested and k != body):
            if c.kind.name == "BINARY_OPERATOR" and binary_op(c) == "=":
                call = strip_casts(children(c)[1])
                if call.kind.name == "CALL_EXPR" and call.spelling == "realloc":
                    calls.append((strip(children(c)[0]), call, c))
            if (row := self.row_allocation(c)) is not None:
                rows.append(row)
        if not (calls or rows) or not self.at_top_level():
            return
        written = {decl_key(t.referenced) for t in map(assigned_target, walk(body)) if t is not None}
        loop = (var, lb, ub, step, counter)
        for d, size, c in rows:
            self.counter_size(size, s, written, var, d)
            _, elem = array_shape(d.type.get_canonical().element_type, d)
            zero = self.const(0, INDEX, c)
            length = self.largest_count(size, elem.get_size(), zero, loop, c)
            count = self.const(d.type.get_canonical().element_count, INDEX, d)
            ref = self.emit(memref.AllocaOp.get(  # the rows live as long as the array
                element_type(elem, d), shape=[DYNAMIC_INDEX, DYNAMIC_INDEX],
                dynamic_sizes=[count, length]
            ), c).results[0]
            ref.name_hint = d.spelling
            self.bufs[decl_key(d)] = Buffer(ref, elem)
            self.row_tables.add(decl_key(d))
            del self.pointer_arrays[decl_key(d)]
            self.grown |= {r.hash for e, _, r in rows if decl_key(e) == decl_key(d)}
        for target, call, c in calls:
            args = list(call.get_arguments())
            old = strip_casts(args[0])
            if target.kind.name != "DECL_REF_EXPR" or old.kind.name != "DECL_REF_EXPR" or (
                old.referenced != target.referenced
            ):
                unsupported(c, "realloc in a loop other than 'p = realloc(p, size)'")
            d = target.referenced
            self.counter_size(args[1], s, written, var, d)
            key = decl_key(d)
            buf = self.bufs.get(key)
            if buf is not None and not isinstance(buf.ref.owner, memref.AllocOp):
                unsupported(args[0], "realloc of a buffer that this function does not allocate")
            if buf is None:
                _, elem = array_shape(d.type, d)
                if type_kind(elem) == "VOID":
                    elem = self.void_element(d)
            else:
                elem = buf.elem
            # at least what `p` holds: a loop that does not run keeps it whole
            held = self.const(0, INDEX, c) if buf is None else self.emit(
                memref.DimOp(buf.ref, self.const(0, INDEX, c)), c).results[0]
            capacity = self.largest_count(args[1], elem.get_size(), held, loop, c)
            if buf is None:
                ref = self.emit(memref.AllocOp.get(
                    element_type(elem, d), shape=[DYNAMIC_INDEX], dynamic_sizes=[capacity]
                ), call).results[0]
                ref.name_hint = d.spelling
                self.bufs[key] = Buffer(ref, elem)
            else:
                self.bufs[key] = self.resized(d, buf, capacity, call)
            self.grown.add(call.hash)
            if key in self.views and self.assigned_only_here(d, calls):
                self.views.discard(key)  # `T *p = NULL;` whose only assignments are these
                self.vals.pop(key, None)
            elif key in self.views:
                self.vals[key] = self.const(0, INDEX, c)

    def counter_size(self, size, s, written: set, var, d) -> None:
        """An allocation size in the loop `s` is a function of its counter `var` and of
        what the loop neither writes (`written`) nor declares: it can be computed before
        the loop."""
        inside = range(s.extent.start.offset, s.extent.end.offset)
        for k in walk(size):
            v = k.referenced if k.kind.name == "DECL_REF_EXPR" else None
            if k.kind.name in ("CALL_EXPR", "ARRAY_SUBSCRIPT_EXPR", "UNARY_OPERATOR") or (
                v is not None and decl_key(v) != decl_key(var)
                and (decl_key(v) in written or v.location.offset in inside)
            ):
                unsupported(size, f"the size of an allocation of '{d.spelling}' in a loop "
                            "depends on what the loop computes (only its counter)")

    @staticmethod
    def is_pointer_array(t, exprs) -> bool:
        """Whether a local of type `t` (initializer among `exprs`) is `T *x[N];`, T a
        float or an integer (`pointer_array`)."""
        t = t.get_canonical()
        if type_kind(t) != "CONSTANTARRAY" or type_kind(t.element_type) != "POINTER":
            return False
        pointee = t.element_type.get_pointee().get_canonical()
        return (type_kind(pointee) in ("DOUBLE", "FLOAT") or is_int(pointee)) and not any(
            strip(k).kind.name == "INIT_LIST_EXPR" for k in exprs)

    def pointer_array(self, d) -> None:
        """`T *x[N];` (a local array of pointers) whose rows the function allocates in a
        counted for loop at its top level (`x[i] = malloc(size)`, `posix_memalign((void
        **)&x[i], a, size)`): one `N x ?` stack buffer (a row cannot leave the function:
        returning or storing it elsewhere is refused), its row length the largest the
        loop asks for, allocated before the loop (`grow_in_loop`); `x[i]` is then a row
        of it, as of a table of rows (`row_table`), and `free(x[i])` a no-op."""
        if not self.at_top_level():
            unsupported(d, f"the array of pointers '{d.spelling}' declared inside a loop or branch")
        self.pointer_arrays[decl_key(d)] = d

    def row_allocation(self, c):
        """(array, size, call) when `c` allocates a row of a declared array of pointers
        (`pointer_array`), else None."""
        if c.kind.name == "BINARY_OPERATOR" and binary_op(c) == "=":
            target, call = strip(children(c)[0]), strip_casts(children(c)[1])
            if not self.unit.allocates(call) or call.spelling in ("calloc", "realloc"):
                return None
            args = list(call.get_arguments())
            size = args[{"aligned_alloc": 1}.get(call.spelling, self.unit.allocation_like.get(call.spelling, 0))]
        elif c.kind.name == "CALL_EXPR" and c.spelling == "posix_memalign" and len(
            args := list(c.get_arguments())
        ) == 3:
            target, call, size = strip_casts(args[0]), c, args[2]
            if target.kind.name != "UNARY_OPERATOR" or unary_op(target) != ADDR_OF:
                return None
            target = strip(children(target)[0])
        else:
            return None
        base = strip_casts(children(target)[0]) if target.kind.name == "ARRAY_SUBSCRIPT_EXPR" else None
        if base is None or base.kind.name != "DECL_REF_EXPR" or base.referenced is None:
            return None
        d = self.pointer_arrays.get(decl_key(base.referenced))
        return None if d is None else (d, size, call)

    def allocated_row(self, row, call) -> None:
        """A row allocation of an array of pointers is one its buffer was sized for: a
        later one (rows freed and allocated again) could ask for more."""
        base = strip_casts(children(row)[0])
        if base.referenced.kind.name == "VAR_DECL" and type_kind(base.type) == "CONSTANTARRAY" and (
            call.hash not in self.grown
        ):
            unsupported(call, f"a second allocation of the rows of '{base.spelling}' (they are "
                        "allocated once, in one counted for loop)")

    def assigned_only_here(self, d, calls) -> bool:
        """Whether the function assigns the pointer `d` by the reallocs `calls` only."""
        mine = sum(1 for t, _, _ in calls if decl_key(t.referenced) == decl_key(d))
        targets = map(assigned_target, walk(self.sig.cursor))
        return mine == sum(1 for t in targets if t is not None and decl_key(t.referenced) == decl_key(d))

    def largest_count(self, size, esize: int, least: SSAValue, loop, c) -> SSAValue:
        """The largest of `least` and the element counts `size` gives over the counter
        values of `loop` (its counter, bounds, step and counter of the induction)."""
        var, lb, ub, step, counter = loop
        body = Block(arg_types=[INDEX, INDEX])
        outer, saved = self.builder, dict(self.vals)
        self.builder = Builder(InsertPoint.at_end(body))
        self.vals[decl_key(var)] = counter(body.args[0])
        count = self.element_count(size, esize)
        most = self.emit(arith.MaxSIOp(body.args[1], count), c).results[0]
        self.emit(scf.YieldOp(most), c)
        self.builder, self.vals = outer, saved
        return self.emit(scf.ForOp(lb, ub, step, [least], body), c).results[0]

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
            self.allocated_row(t, call)
            return  # allocated with the table (`row_table`, `pointer_array`)
        if self.row_allocation(c) is not None:
            unsupported(c, "allocating the rows of an array of pointers other than in a "
                        "counted for loop at the function's top level")
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
        if call.hash in self.grown:  # sized before its loop (grow_in_loop)
            if key in self.views:
                self.vals[key] = self.const(0, INDEX, c)  # `p` is the buffer's start again
            return
        if not self.at_top_level() and call.spelling == "realloc":
            unsupported(c, f"realloc of '{d.spelling}' inside a loop or branch (only at the "
                        "function's top level, or in a counted for loop there, sized by its counter)")
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
        if self.is_row(ref):
            self.allocated_row(ref, e)
            return self.const(0, INDEX, e)  # allocated with its array (pointer_array)
        if self.row_allocation(e) is not None:
            unsupported(e, "allocating the rows of an array of pointers other than in a "
                        "counted for loop at the function's top level")
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
            for n, f in enumerate(factors):  # `8 * (i + 1)` bytes of floats: 2 * (i + 1)
                whole = evaluate(f)
                if isinstance(whole, int) and whole % esize == 0:
                    count = self.const(whole // esize, INDEX, f)
                    for g in factors[:n] + factors[n + 1 :]:
                        count = self.emit(arith.MuliOp(count, self.index(self.rvalue(g), g)), size).results[0]
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
