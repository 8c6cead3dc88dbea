"""Pointers: a pointer into an array is a view (the memref and an element offset, carried
like a scalar); pointer arithmetic moves the offset; a returned pointer is an offset or a
memref; `void *` takes the element type it is converted to.
"""

from __future__ import annotations

import ast

from xdsl.dialects import arith, memref
from xdsl.ir import SSAValue

from .clang import (
    ADDR_OF,
    DEREF,
    binary_op,
    children,
    decl_key,
    is_null_pointer,
    strip,
    strip_casts,
    unary_op,
    unsupported,
    walk,
)
from .function import Buffer, FunctionState, in_struct, mixed_view, void_element_type
from .trees import assigned_target
from .types import (
    INDEX,
    array_shape,
    element_type,
    is_buffer_type,
    is_function_pointer,
    is_int,
    is_struct_pointer,
    type_kind,
)


ARRAYS = ("CONSTANTARRAY", "VARIABLEARRAY", "INCOMPLETEARRAY")


class Pointers(FunctionState):
    """Pointer variables: views into arrays, pointer arithmetic, returned pointers."""

    def pointer_value(self, d, e) -> Buffer:
        """A pointer variable's value: an allocation, another array, or a view into one
        (`a + i*n`, `&a[k]`, or a pointer the function moves): the same memref with an
        element offset, so the AD sees every access of the array it aliases."""
        inner = strip_casts(e)
        if (
            self.unit.allocates(inner)
            and type_kind(d.type.get_canonical().get_pointee()) == "POINTER"
        ):
            return self.row_table(d, inner)
        if inner.kind.name == "CALL_EXPR" and inner.spelling == "realloc":
            return self.realloc(d, inner)
        if self.unit.allocates(inner):
            return self.allocation(d, inner)
        if is_buffer_type(inner.type) or type_kind(inner.type) == "POINTER":
            buf, off = self.pointer(e)
            self.same_elements(d, buf, e)
            if off is None and not self.reassigned(d):
                return buf
            self.views.add(decl_key(d))
            self.vals[decl_key(d)] = off if off is not None else self.const(0, INDEX, e)
            return buf
        unsupported(e, "this pointer initializer (use malloc/calloc, or an array)")

    def reassigned(self, d) -> bool:
        return any(
            t is not None and decl_key(t.referenced) == decl_key(d)
            for t in map(assigned_target, walk(self.sig.cursor))
        )

    def pointer(self, e) -> tuple[Buffer, SSAValue | None]:
        """The array a pointer expression points into and its element offset (None: its
        start): `p`, `a + k`, `k + a`, `a - k`, `&a[k]`, of one-dimensional arrays."""
        c = strip_casts(e)
        k = c.kind.name
        if k == "MEMBER_REF_EXPR" and type_kind(c.type) == "POINTER":
            return self.pointer_field(c), None
        if k == "DECL_REF_EXPR":
            d = c.referenced
            if d is not None and decl_key(d) in self.views and decl_key(d) in self.bufs:
                return self.bufs[decl_key(d)], self.current(decl_key(d), d, c)
        if k == "CALL_EXPR" and c.spelling in self.unit.pointer_results:
            return self.pointer_call(c)
        if (row := self.row_view(c)) is not None:
            return row, None
        if k == "BINARY_OPERATOR" and binary_op(c) in ("+", "-"):
            a, b = children(c)
            if binary_op(c) == "+" and is_int(strip(a).type):
                a, b = b, a
            if is_buffer_type(strip(a).type) and is_int(strip(b).type):
                buf, off = self.pointer(a)
                self.one_dimensional(buf, c)
                step = self.scaled(buf, self.index(self.rvalue(b), b), c)
                if binary_op(c) == "-":
                    step = self.emit(arith.SubiOp(self.const(0, INDEX, c), step), c).results[0]
                if off is None:
                    return buf, step
                return buf, self.emit(arith.AddiOp(off, step), c).results[0]
        if k == "UNARY_OPERATOR" and unary_op(c) == ADDR_OF:
            inner = strip(children(c)[0])
            d = inner.referenced if inner.kind.name == "DECL_REF_EXPR" else None
            if d is not None and decl_key(d) in self.cells:  # `&g` of a scalar global
                return self.cells[decl_key(d)], None
            if d is not None and decl_key(d) in self.bufs and type_kind(d.type) in ARRAYS:
                return self.bufs[decl_key(d)], None  # `&a` of an array: where `a` starts
            if inner.kind.name == "ARRAY_SUBSCRIPT_EXPR" and not in_struct(inner):
                base = strip(children(inner)[0])
                pointee = base.type.get_pointee() if type_kind(base.type) == "POINTER" else None
                if pointee is not None and type_kind(pointee) == "RECORD":
                    if is_struct_pointer(base.type):  # &ps[i]: struct i, counted in structs
                        return self.struct_offset(inner, c)
                    buf, at, _ = self.member(inner)  # &ps[i]: the i-th struct
                    return buf, at["f"]
                buf, idx = self.access(inner)
                self.one_dimensional(buf, c)
                return buf, idx[0]
        return self.buffer(e), None

    def row_view(self, c) -> Buffer | None:
        """`*pp` or `pp[k]` of a pointer to pointers (a 2-D memref, README "C kernels"):
        row 0 or `k` as a one-dimensional array, its accesses those of the 2-D memref (so
        the AD sees the caller's array), else None."""
        if type_kind(c.type) != "POINTER" or is_function_pointer(c.type):
            return None
        if c.kind.name == "UNARY_OPERATOR" and unary_op(c) == DEREF:
            base, row = children(c)[0], None
        elif c.kind.name == "ARRAY_SUBSCRIPT_EXPR":
            base, row = children(c)
        else:
            return None
        if type_kind(strip_casts(base).type) != "POINTER" and not self.is_row(c) or in_struct(base):
            return None  # (a row of a local array of pointers, `memory.pointer_array`)
        buf, off = self.pointer(base)
        if buf.ref.type.get_num_dims() != 2 or off is not None or buf.row is not None:
            return None
        at = self.const(0, INDEX, c) if row is None else self.index(self.rvalue(row), row)
        return Buffer(buf.ref, c.type.get_canonical().get_pointee().get_canonical(), row=at)

    def stored_address(self, d) -> bool:
        """Whether a pointer variable holds `&d` (`T *p = &d;`, `p = &d`): more than a call
        argument, which `Calls.address_argument` copies in and out."""
        if not hasattr(self, "stored_addresses"):
            self.stored_addresses = set()
            for c in walk(self.sig.cursor):
                if c.kind.name == "VAR_DECL" and type_kind(c.type) == "POINTER":
                    value = [k for k in children(c) if k.kind.is_expression()][-1:]
                elif c.kind.name == "BINARY_OPERATOR" and binary_op(c) == "=":
                    value = children(c)[1:]
                else:
                    continue
                inner = strip_casts(value[0]) if value else None
                if inner is None or inner.kind.name != "UNARY_OPERATOR" or unary_op(inner) != ADDR_OF:
                    continue
                ref = strip(children(inner)[0])
                if ref.kind.name == "DECL_REF_EXPR" and ref.referenced is not None:
                    self.stored_addresses.add(decl_key(ref.referenced))
        return decl_key(d) in self.stored_addresses

    def address_cell(self, d, value) -> None:
        """The scalar local `d` whose address a pointer holds lives in a one-element stack
        array (a cell, as a scalar global does): its name and the pointer read and write
        that one place."""
        ref = self.entry_alloca((decl_key(d), "home"), element_type(d.type, d), 1, d)
        ref.name_hint = d.spelling
        self.cells[decl_key(d)] = Buffer(ref, d.type)
        if isinstance(value, SSAValue):
            self.store_cell(self.cells[decl_key(d)], value, d)

    def entry_alloca(self, key, elem, size: int, c) -> SSAValue:
        """A stack array of `size` elements allocated once in the entry block, as the
        cells of `&x` call arguments (in a loop, the stack would grow each iteration)."""
        if key not in self.address_cells:
            op = memref.AllocaOp.get(elem, shape=[size])
            op.location = self.unit._loc(c)
            self.address_cells[key] = op
        return self.address_cells[key].results[0]

    def pointer_call(self, c) -> tuple[Buffer, SSAValue | None]:
        """A call of a function of the file returning a pointer (`row(a, i, n)`): into
        its argument `k`, that argument's array at the returned offset; else the memref it
        allocated."""
        origin = self.unit.pointer_results[c.spelling]
        v = self.call(c, False)
        if origin[0] == "param":
            return self.call_bufs[origin[1]], v
        elem = array_shape(c.type, c)[1]
        return Buffer(v, elem), None

    def returned_pointer(self, e) -> SSAValue:
        """The result of a function returning a pointer (see `CFrontend.pointer_result`),
        checked against what the C said it points into."""
        origin = self.unit.pointer_results[self.sig.name]
        buf, off = self.pointer(e)
        if origin[0] == "param":
            param = self.sig.params[origin[1]]
            if self.bufs.get(decl_key(param)) is not buf:
                unsupported(e, f"a returned pointer that is not into the parameter '{param.spelling}'")
            return off if off is not None else self.const(0, INDEX, e)
        if off is not None or not isinstance(buf.ref.owner, memref.AllocOp):
            unsupported(e, "returning a pointer into the middle of an allocation")
        want = self.sig.result_types[0]
        if buf.ref.type != want:
            return self.emit(memref.CastOp.get(buf.ref, want), e).results[0]
        return buf.ref

    def scaled(self, buf: Buffer, count: SSAValue, c) -> SSAValue:
        """`count` elements of `buf` as a float offset (a struct is several floats)."""
        if buf.record is None:
            return count
        if buf.mixed():  # several memrefs: the offset counts structs (kinds)
            if buf.fields:
                unsupported(c, mixed_view(buf))
            return count
        size = self.const(buf.record.get_size() // buf.elem.get_size(), INDEX, c)
        return self.index_op(arith.MuliOp, count, size, c)

    def one_dimensional(self, buf: Buffer, c) -> None:
        if buf.row is not None:
            unsupported(c, "pointer arithmetic on a row of a pointer to pointers (index it)")
        if buf.ref.type.get_num_dims() != 1:
            unsupported(c, "pointer arithmetic on a multi-dimensional array (index it)")

    def move_pointer(
        self, target, c, rhs=None, step: int = 0, amount=None, minus=False
    ) -> SSAValue:
        """`p = q + k`, `p += k`, `p++` on a view `p` (it stays in one array)."""
        d = strip(target).referenced
        key = decl_key(d)
        if rhs is not None:
            buf, off = self.pointer(rhs)
        else:
            if key not in self.bufs:
                unsupported(c, f"moving the pointer '{d.spelling}' before it points into an array")
            buf = self.bufs[key]
            off = self.current(key, d, c)
            if amount is None:
                amount = self.const(step, INDEX, c)
            amount = self.scaled(buf, amount, c)
            op = arith.SubiOp if minus else arith.AddiOp
            off = self.emit(op(off, amount), c).results[0]
        if key in self.bufs and self.bufs[key].ref is not buf.ref:
            unsupported(c, f"the pointer '{d.spelling}' moves to another array")
        self.bufs[key] = buf
        self.vals[key] = off if off is not None else self.const(0, INDEX, c)
        return self.vals[key]  # type: ignore[return-value]

    def is_view(self, target) -> bool:
        t = strip(target)
        return (
            t.kind.name == "DECL_REF_EXPR"
            and t.referenced is not None
            and decl_key(t.referenced) in self.views
        )

    def void_element(self, d):
        return void_element_type(self.sig.cursor, d)

    def same_elements(self, d, buf: Buffer, c) -> None:
        """A typed pointer to `buf` (through `void *` or a cast) reads its elements as they
        are: another element type would reinterpret their bits."""
        elem = array_shape(d.type, d)[1]
        if buf.record is not None or type_kind(elem) in ("VOID", "RECORD"):
            return
        if element_type(elem, d) != buf.ref.type.element_type:
            unsupported(
                c,
                f"'{d.spelling}' reads a buffer of '{buf.elem.spelling}' as '{elem.spelling}' "
                "(a cast that reinterprets memory)"
            )

    def buffer(self, e) -> Buffer:
        c = strip_casts(e)
        if c.kind.name == "DECL_REF_EXPR":
            d = c.referenced
            if d is not None and decl_key(d) in self.bufs:
                return self.bufs[decl_key(d)]
        if c.kind.name == "BINARY_OPERATOR":
            unsupported(e, "pointer arithmetic (index the array instead)")
        if c.kind.name == "UNARY_OPERATOR" and unary_op(c) == ADDR_OF:
            self.address_refusal(c)
        if c.kind.name == "STRING_LITERAL":
            return self.string_literal(c)
        if c.kind.name == "MEMBER_REF_EXPR" and (field := self.field_buffer(c)) is not None:
            return field  # `free(s.p)` of a local struct's field
        if is_null_pointer(e):
            unsupported(e, "a null pointer as an array (arrays are assumed non-null)")
        unsupported(e, f"'{self.text(e)}' as an array")

    def string_literal(self, c) -> Buffer:
        """`"N"` as a `char *` (f2c's flag arguments): a stack array of its bytes and the
        terminating zero."""
        try:
            text = ast.literal_eval(c.spelling).encode("ascii")
        except (ValueError, SyntaxError, UnicodeEncodeError):
            unsupported(c, f"the string literal {c.spelling} (only plain ASCII ones)")
        elem = c.type.get_canonical().get_array_element_type()
        key = (("<string>", c.extent.start.offset), "string")
        ref = self.entry_alloca(key, element_type(elem, c), len(text) + 1, c)
        for n, byte in enumerate([*text, 0]):
            value = self.const(byte, ref.type.element_type, c)
            self.emit(memref.StoreOp.get(value, ref, [self.const(n, INDEX, c)]), c)
        return Buffer(ref, elem)

    def bound_pointer(self, e) -> bool:
        """`e` names a pointer bound to an array (a parameter, an allocation, a view):
        never null here, allocations being assumed to succeed (as `memref.alloc`)."""
        t = strip_casts(e)
        return (
            t.kind.name == "DECL_REF_EXPR"
            and type_kind(t.type) == "POINTER"
            and decl_key(t.referenced) in self.bufs
        )
