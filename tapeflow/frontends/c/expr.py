"""Expressions: dispatch by cursor kind (`EXPRESSIONS`), assignment, loads and
stores of array elements, conversions between C's arithmetic types, operators.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from xdsl.builder import Builder
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from .calls import Calls
from .clang import (
    ADDR_OF,
    DEREF,
    LNOT,
    MINUS,
    NOT,
    PLUS,
    POST_DEC,
    POST_INC,
    PRE_DEC,
    PRE_INC,
    binary_op,
    children,
    decl_key,
    evaluate,
    is_null_pointer,
    strip,
    strip_casts,
    unary_op,
    unsupported,
)
from .function import Buffer, Final, FunctionState, Stale, Unset, constant_int, in_struct
from .punning import punned
from .trees import assigns, has_effects
from .types import (
    INDEX,
    array_shape,
    as_struct,
    is_buffer_type,
    is_float,
    is_function_pointer,
    is_int,
    is_unsigned,
    scalar_type,
    type_kind,
)


class Expressions(FunctionState):
    """Expressions as SSA values; `rvalue` dispatches on the cursor kind."""

    def assign(self, target, value: SSAValue, c) -> SSAValue:
        """Stores `value` into the lvalue `target`; returns the value stored (C's)."""
        t = strip(target)
        if (u := self.union_field(t)) is not None:
            return self.union_store(*u, value, c)
        if (field := self.struct_field(t)) is not None:
            v = self.vals[field] = self.convert(value, t.type, c)
            return v
        if t.kind.name == "DECL_REF_EXPR":
            d = t.referenced
            if decl_key(d) in self.cells:
                return self.store_cell(self.cells[decl_key(d)], value, c)
            if decl_key(d) in self.bufs or type_kind(d.type) == "POINTER":
                unsupported(c, f"assigning the pointer '{d.spelling}' (only in its declaration)")
            if decl_key(d) not in self.vals:
                unsupported(c, f"assigning the global '{d.spelling}'")
            v = self.convert(value, d.type, c)
            self.vals[decl_key(d)] = v
            return v
        buf, idx = self.access(t)
        v = self.convert(value, buf.elem, c)
        mem = self.to_memory(v, buf.ref.type, c)
        self.emit(memref.StoreOp.get(mem, buf.ref, idx), c)
        return v

    def store_cell(self, cell: Buffer, value: SSAValue, c) -> SSAValue:
        """`g = value` for a scalar global `g` (a one-element memref)."""
        v = self.convert(value, cell.elem, c)
        mem = self.to_memory(v, cell.ref.type, c)
        self.emit(memref.StoreOp.get(mem, cell.ref, [self.const(0, INDEX, c)]), c)
        return v

    def read_lvalue(self, target) -> tuple[SSAValue, object]:
        t = strip(target)
        if (u := self.union_field(t)) is not None:
            return self.union_load(*u, t), t.type
        if (field := self.struct_field(t)) is not None:
            return self.current(field, None, t), t.type
        if t.kind.name == "DECL_REF_EXPR":
            return self.variable(t), t.type
        buf, idx = self.access(t)
        return self.load(buf, idx, t), buf.elem

    def rvalue(self, e, discard: bool = False) -> SSAValue:
        """The value of expression `e`, translated by the method its cursor kind names in
        `EXPRESSIONS` (`discard`: only its effect is used)."""
        if is_function_pointer(e.type):
            return self.function_value(e)
        translate = EXPRESSIONS.get(e.kind.name)
        if translate is None:
            unsupported(e, f"the expression '{self.text(e)}' ({e.kind.name.lower()})")
        return translate(self, e, discard)

    def paren(self, e, discard: bool) -> SSAValue:
        return self.rvalue(children(e)[0], discard)

    def cast(self, e, discard: bool) -> SSAValue:
        """An explicit or implicit conversion; of a float constant expression, one constant."""
        exprs = [x for x in children(e) if x.kind.is_expression()]
        if len(exprs) != 1:
            unsupported(e, f"the expression '{self.text(e)}'")
        inner = exprs[0]
        if is_buffer_type(e.type):
            unsupported(e, "a pointer used as a value (index it instead)")
        folded = evaluate(inner) if is_float(e.type) and not has_effects(inner) else None
        if folded is not None:  # `x * M` with `#define M 4`: one f64 constant, as written
            return self.const(folded, scalar_type(e.type, e), e)
        return self.convert(self.rvalue(inner, discard), e.type, e)

    def literal(self, e, discard: bool) -> SSAValue:
        """A literal or `sizeof`: Clang's value of it."""
        v = evaluate(e)
        if v is None:
            unsupported(e, f"the expression '{self.text(e)}'")
        return self.const(v, scalar_type(e.type, e), e)

    def decl_ref(self, e, discard: bool) -> SSAValue:
        return self.variable(e)

    def element(self, e, discard: bool) -> SSAValue:
        """`a[i]`, `p->x`, `s.x`: a struct field's scalar or a load."""
        if (u := self.union_field(e)) is not None:
            return self.union_load(*u, e)
        if (field := self.struct_field(e)) is not None:
            return self.current(field, None, e)
        buf, idx = self.access(e)
        return self.load(buf, idx, e)

    def folded_int(self, e) -> SSAValue | None:
        """An integer constant expression (`2 * H`, `N - 1`) as one constant, else None."""
        if is_int(e.type) and assigns(e) is None:
            folded = evaluate(e)
            if isinstance(folded, int) and not has_effects(e):
                return self.const(folded, INDEX, e)
        return None

    def binary_operator(self, e, discard: bool) -> SSAValue:
        if (folded := self.folded_int(e)) is not None:
            return folded
        return self.binary(e, binary_op(e), children(e))

    def unary_operator(self, e, discard: bool) -> SSAValue:
        if (folded := self.folded_int(e)) is not None:
            return folded
        return self.unary(e, unary_op(e), children(e)[0])

    def compound_assignment(self, e, discard: bool) -> SSAValue:
        """`x op= y` (on a pointer view, `p += n` moves it)."""
        kids = children(e)
        if self.is_view(kids[0]):
            if binary_op(e) not in ("+=", "-="):
                unsupported(e, f"'{binary_op(e)}' on a pointer")
            amount = self.index(self.rvalue(kids[1]), kids[1])
            return self.move_pointer(kids[0], e, amount=amount, minus=binary_op(e) == "-=")
        op = binary_op(e)[:-1]
        old, old_type = self.read_lvalue(kids[0])
        rhs = self.rvalue(kids[1])
        work = e.type if is_float(old_type) or not is_float(kids[1].type) else kids[1].type
        new = self.arith(op, self.convert(old, work, e), self.convert(rhs, work, e), work, e)
        return self.assign(kids[0], new, e)

    def conditional_operator(self, e, discard: bool) -> SSAValue:
        return self.conditional(e, children(e))

    def init_list(self, e, discard: bool) -> NoReturn:
        unsupported(e, "an initializer list here")

    def text(self, c) -> str:
        return " ".join(t.spelling for t in c.get_tokens())[:60]

    def variable(self, e) -> SSAValue:
        d = e.referenced
        if d is not None and d.kind.name == "ENUM_CONSTANT_DECL":
            return self.const(d.enum_value, INDEX, e)
        if d is not None and decl_key(d) in self.cells:
            return self.load(self.cells[decl_key(d)], [self.const(0, INDEX, e)], e)
        if d is None or decl_key(d) not in self.vals:
            if d is not None and decl_key(d) in self.bufs:
                unsupported(e, f"the array '{d.spelling}' used as a value (index it)")
            if d is not None and d.kind.name == "FUNCTION_DECL":
                unsupported(e, "function pointers")
            unsupported(e, f"the variable '{e.spelling}' here")
        if decl_key(d) in self.views:
            unsupported(e, f"the pointer '{d.spelling}' used as a value (index it)")
        return self.current(decl_key(d), d, e)

    def index_op(self, cls, a: SSAValue, b: SSAValue, c) -> SSAValue:
        """`a + b` or `a * b` on index values, folded when both are constants (struct
        field offsets)."""
        x, y = (constant_int(v) for v in (a, b))
        if x is not None and y is not None:
            return self.const(x + y if cls is arith.AddiOp else x * y, INDEX, c)
        return self.emit(cls(a, b), c).results[0]

    def access(self, e) -> tuple[Buffer, list[SSAValue]]:
        """The buffer and `index` subscripts of `a[i][j]` or `*p`."""
        if in_struct(e):
            buf, at, t = self.member(e)
            part, idx = self.field_access(buf, at, t, e)
            return part, [idx]
        indices = []
        c = strip(e)
        while c.kind.name == "ARRAY_SUBSCRIPT_EXPR":
            base, sub = children(c)
            if is_buffer_type(strip(sub).type):
                base, sub = sub, base  # i[a] is a[i]
            indices.insert(0, sub)
            c = strip(base)
        if not indices and c.kind.name == "UNARY_OPERATOR" and unary_op(c) == DEREF:
            buf, off = self.pointer(children(c)[0])
            idx = [off if off is not None else self.const(0, INDEX, c)]
        else:
            buf, off = self.pointer(c)
            idx = [self.index(self.rvalue(i), i) for i in indices]
            if len(idx) > 1 and buf.ref.type.get_num_dims() == 1:
                idx = [self.flat_index(c, off, idx, e)]
                off = None
            if off is not None and idx:
                self.one_dimensional(buf, c)
                idx[0] = self.emit(arith.AddiOp(off, idx[0]), c).results[0]
        if buf.row is not None:
            idx = [buf.row, *idx]
        rank = buf.ref.type.get_num_dims()
        if len(idx) != rank:
            unsupported(e, f"{len(idx)} subscript(s) on a {rank}-dimensional array (a row as a pointer)")
        return buf, idx

    def flat_index(self, base, off: SSAValue | None, idx: list[SSAValue], c) -> SSAValue:
        """`a[i][j]` on a flat view (`double a[][M]` given `x + k*M`): `off + i*M + j`, so
        the access is one of the caller's array, which the AD sees as is."""
        shape = array_shape(base.type, base)[0]
        if len(idx) != len(shape) or DYNAMIC_INDEX in shape[1:]:
            unsupported(c, f"{len(idx)} subscript(s) on a view of '{base.type.spelling}'")
        flat = off
        for n, i in enumerate(idx):
            stride = 1
            for extent in shape[n + 1 :]:
                stride *= extent
            term = self.index_op(arith.MuliOp, i, self.const(stride, INDEX, c), c) if stride != 1 else i
            flat = term if flat is None else self.emit(arith.AddiOp(flat, term), c).results[0]
        assert flat is not None
        return flat

    def load(self, buf: Buffer, idx: list[SSAValue], c) -> SSAValue:
        v = self.emit(memref.LoadOp.get(buf.ref, idx), c).results[0]
        if isinstance(v.type, IntegerType):
            narrow = v.type.width.data < 64
            if narrow and buf.elem is not None and is_int(buf.elem) and is_unsigned(buf.elem):
                v = self.emit(arith.ExtUIOp(v, i64), c).results[0]  # index_cast extends signed
            v = self.emit(arith.IndexCastOp(v, INDEX), c).results[0]
        return v

    def to_memory(self, v: SSAValue, mtype: MemRefType, c) -> SSAValue:
        if isinstance(mtype.element_type, IntegerType):
            return self.emit(arith.IndexCastOp(v, mtype.element_type), c).results[0]
        return v

    def index(self, v: SSAValue, c) -> SSAValue:
        if isinstance(v.type, IndexType):
            return v
        if v.type == i1:
            return self.convert(v, None, c, target=INDEX)
        unsupported(c, "a non-integer subscript or bound")

    def convert(self, v: SSAValue, ctype, c, target: Attribute | None = None) -> SSAValue:
        """`v` as a value of C type `ctype` (or IR type `target`)."""
        to = target if target is not None else scalar_type(ctype, c)
        src = v.type
        if src == to:
            return v
        if src == i1:
            ext = self.emit(arith.ExtUIOp(v, i64), c).results[0]
            return self.convert(ext, ctype, c, target=to) if to != i64 else ext
        if isinstance(src, (Float64Type, Float32Type)):
            if isinstance(to, (Float64Type, Float32Type)):
                op = arith.ExtFOp if to == f64 else arith.TruncFOp
                return self.emit(op(v, to), c).results[0]
            n = self.emit(arith.FPToSIOp(v, i64), c).results[0]
            return self.emit(arith.IndexCastOp(n, INDEX), c).results[0]
        if isinstance(src, IndexType):
            if isinstance(to, (Float64Type, Float32Type)):
                n = self.emit(arith.IndexCastOp(v, i64), c).results[0]
                return self.emit(arith.SIToFPOp(n, to), c).results[0]
        if isinstance(src, IntegerType) and isinstance(to, IndexType):
            return self.emit(arith.IndexCastOp(v, INDEX), c).results[0]
        if isinstance(src, IntegerType) and isinstance(to, (Float64Type, Float32Type)):
            return self.emit(arith.SIToFPOp(v, to), c).results[0]  # a comparison's 0 or 1
        unsupported(c, f"converting {src} to {to}")

    def null_test(self, e, op: str, a, b) -> SSAValue | None:
        """`p == NULL` / `p != NULL` (either order) of a bound pointer: false / true."""
        for p, q in ((a, b), (b, a)):
            if self.bound_pointer(p) and is_null_pointer(q):
                return self.const(int(op == "!="), i1, e)
        return None

    def pointer_compare(self, e, op: str, a, b) -> SSAValue:
        """`p < end`, `p != end`: pointers into one array compare as their offsets."""
        (pa, oa), (pb, ob) = self.pointer(a), self.pointer(b)
        if pa.ref != pb.ref:
            unsupported(e, f"comparing pointers into different arrays ('{self.text(e)}')")
        zero = self.const(0, INDEX, e)
        x, y = (oa if oa is not None else zero), (ob if ob is not None else zero)
        return self.emit(arith.CmpiOp(x, y, self._CMPI[op]), e).results[0]

    def cond(self, e) -> SSAValue:
        """`e` as an i1 (C's 'non-zero'); a bound pointer (`if (p)`, `!p`) is true."""
        if self.bound_pointer(e):
            return self.const(1, i1, e)
        v = self.rvalue(e)
        if v.type == i1:
            return v
        if isinstance(v.type, IndexType):
            zero = self.const(0, INDEX, e)
            return self.emit(arith.CmpiOp(v, zero, "ne"), e).results[0]
        zero = self.const(0.0, v.type, e)
        return self.emit(arith.CmpfOp(v, zero, "une"), e).results[0]

    _CMPI = {"<": "slt", "<=": "sle", ">": "sgt", ">=": "sge", "==": "eq", "!=": "ne"}

    _CMPU = {"<": "ult", "<=": "ule", ">": "ugt", ">=": "uge", "==": "eq", "!=": "ne"}

    _CMPF = {"<": "olt", "<=": "ole", ">": "ogt", ">=": "oge", "==": "oeq", "!=": "une"}

    def binary(self, e, op: str, kids) -> SSAValue:
        a, b = kids
        if op == "=":
            if self.unit.allocates(strip_casts(b)):
                self.assign_allocation(a, strip_casts(b), e)
                return None  # type: ignore[return-value]
            if self.is_view(a):
                return self.move_pointer(a, e, rhs=b)
            if as_struct(a.type) is not None:
                return self.struct_assign(a, b, e)
            if type_kind(a.type) == "POINTER" and strip(a).kind.name in (
                "ARRAY_SUBSCRIPT_EXPR", "UNARY_OPERATOR"
            ):
                unsupported(e, "storing a pointer into a pointer to pointers ('pp[k] = ...': "
                            "its rows are fixed, a 2-D array)")
            if type_kind(a.type) == "POINTER" and (place := self.struct_place(a)) is not None:
                self.bind_field(place, b, e)
                return None  # type: ignore[return-value]
            if type_kind(a.type) == "POINTER" and strip(a).kind.name == "MEMBER_REF_EXPR":
                unsupported(
                    e, f"assigning the pointer field '{strip(a).spelling}' (the caller sets it)"
                )
            return self.assign(a, self.rvalue(b), e)
        if op == ",":
            self.effect(a)
            return self.rvalue(b)
        if op in ("&&", "||"):
            return self.logical(e, op, a, b)
        if op in ("==", "!=") and (v := self.null_test(e, op, a, b)) is not None:
            return v
        if op in self._CMPI and not (is_null_pointer(a) or is_null_pointer(b)) and all(
            is_buffer_type(strip(k).type) for k in kids
        ):
            return self.pointer_compare(e, op, a, b)
        if op in self._CMPI:
            x, y = self.rvalue(a), self.rvalue(b)
            if x.type == i1 and y.type != i1:
                x = self.convert(x, None, e, target=y.type)
            if y.type == i1 and x.type != i1:
                y = self.convert(y, None, e, target=x.type)
            if isinstance(x.type, (Float64Type, Float32Type)):
                return self.emit(arith.CmpfOp(x, y, self._CMPF[op]), e).results[0]
            table = self._CMPU if is_unsigned(strip(a).type) else self._CMPI
            return self.emit(arith.CmpiOp(x, y, table[op]), e).results[0]
        x = self.convert(self.rvalue(a), e.type, e)
        y = self.convert(self.rvalue(b), e.type, e)
        return self.arith(op, x, y, e.type, e)

    def arith(self, op: str, x: SSAValue, y: SSAValue, ctype, e) -> SSAValue:
        if is_float(ctype):
            ops = {"+": arith.AddfOp, "-": arith.SubfOp, "*": arith.MulfOp, "/": arith.DivfOp}
        elif is_unsigned(ctype):
            ops = {"+": arith.AddiOp, "-": arith.SubiOp, "*": arith.MuliOp, "/": arith.DivUIOp,
                   "%": arith.RemUIOp, "&": arith.AndIOp, "|": arith.OrIOp, "^": arith.XOrIOp,
                   "<<": arith.ShLIOp, ">>": arith.ShRUIOp}  # fmt: skip
        else:
            ops = {"+": arith.AddiOp, "-": arith.SubiOp, "*": arith.MuliOp, "/": arith.DivSIOp,
                   "%": arith.RemSIOp, "&": arith.AndIOp, "|": arith.OrIOp, "^": arith.XOrIOp,
                   "<<": arith.ShLIOp, ">>": arith.ShRSIOp}  # fmt: skip
        if op not in ops:
            unsupported(e, f"the operator '{op}' on '{ctype.spelling}'")
        return self.emit(ops[op](x, y), e).results[0]

    def logical(self, e, op: str, a, b) -> SSAValue:
        x = self.cond(a)
        if not has_effects(b):
            y = self.cond(b)
            cls = arith.AndIOp if op == "&&" else arith.OrIOp
            return self.emit(cls(x, y), e).results[0]
        # Short-circuit: `b` only runs when it decides (it may read out of bounds otherwise).
        then = self.branch(lambda: [self.cond(b)], e)
        other = self.branch(lambda: [self.const(op == "||", i1, e)], e)
        regions = (then, other) if op == "&&" else (other, then)
        return self.emit(scf.IfOp(x, [i1], *regions), e).results[0]

    def branch(self, body: Callable[[], list[SSAValue]], c) -> Region:
        block = Block()
        outer = self.builder
        self.builder = Builder(InsertPoint.at_end(block))
        values = body()
        self.emit(scf.YieldOp(*values), c)
        self.builder = outer
        return Region(block)

    def unary(self, e, op: int, x) -> SSAValue:
        if op in (PRE_INC, PRE_DEC, POST_INC, POST_DEC) and self.is_view(x):
            return self.move_pointer(x, e, step=1 if op in (PRE_INC, POST_INC) else -1)
        if op in (PRE_INC, PRE_DEC, POST_INC, POST_DEC):
            old, ctype = self.read_lvalue(x)
            one = self.convert(self.const(1, INDEX, e), ctype, e)
            new = self.arith("+" if op in (PRE_INC, POST_INC) else "-", old, one, ctype, e)
            self.assign(x, new, e)
            return new if op in (PRE_INC, PRE_DEC) else old
        if op == DEREF:
            if (pun := punned(self, e, x)) is not None:  # `*(int32_t *)&y` (punning.py)
                return pun
            buf, idx = self.access(e)
            return self.load(buf, idx, e)
        if op == PLUS:
            return self.convert(self.rvalue(x), e.type, e)
        if op == MINUS:
            v = self.convert(self.rvalue(x), e.type, e)
            if is_float(e.type):
                return self.emit(arith.NegfOp(v), e).results[0]
            return self.emit(arith.SubiOp(self.const(0, INDEX, e), v), e).results[0]
        if op == LNOT:
            v = self.cond(x)
            return self.emit(arith.XOrIOp(v, self.const(1, i1, e)), e).results[0]
        if op == NOT:
            v = self.convert(self.rvalue(x), e.type, e)
            return self.emit(arith.XOrIOp(v, self.const(-1, INDEX, e)), e).results[0]
        if op == ADDR_OF:
            self.address_refusal(e)
        unsupported(e, f"the operator in '{self.text(e)}'")

    def conditional(self, e, kids) -> SSAValue:
        c, a, b = kids
        flag = self.cond(c)
        if not has_effects(a) and not has_effects(b):
            x = self.convert(self.rvalue(a), e.type, e)
            y = self.convert(self.rvalue(b), e.type, e)
            return self.emit(arith.SelectOp(flag, x, y), e).results[0]
        t = scalar_type(e.type, e)
        then = self.branch(lambda: [self.convert(self.rvalue(a), e.type, e)], e)
        other = self.branch(lambda: [self.convert(self.rvalue(b), e.type, e)], e)
        return self.emit(scf.IfOp(flag, [t], then, other), e).results[0]

    def current(self, key, decl, c) -> SSAValue:
        v = self.vals[key]
        if isinstance(v, Unset):
            t = INDEX if key in self.views else scalar_type(decl.type, decl)
            v = self.vals[key] = self.const(0, t, c)
        if isinstance(v, Stale):
            unsupported(c, v.why)
        if isinstance(v, Final):
            return v.value()
        return v  # type: ignore[return-value]


# Cursor kind -> the method that translates an expression of that kind (`rvalue`).
EXPRESSIONS: dict[str, Callable[..., SSAValue]] = {
    "PAREN_EXPR": Expressions.paren,
    "UNEXPOSED_EXPR": Expressions.cast,
    "CSTYLE_CAST_EXPR": Expressions.cast,
    "INTEGER_LITERAL": Expressions.literal,
    "FLOATING_LITERAL": Expressions.literal,
    "CHARACTER_LITERAL": Expressions.literal,
    "UNARY_EXPR": Expressions.literal,
    "CXX_UNARY_EXPR": Expressions.literal,
    "DECL_REF_EXPR": Expressions.decl_ref,
    "ARRAY_SUBSCRIPT_EXPR": Expressions.element,
    "MEMBER_REF_EXPR": Expressions.element,
    "BINARY_OPERATOR": Expressions.binary_operator,
    "UNARY_OPERATOR": Expressions.unary_operator,
    "COMPOUND_ASSIGNMENT_OPERATOR": Expressions.compound_assignment,
    "CONDITIONAL_OPERATOR": Expressions.conditional_operator,
    "CALL_EXPR": Calls.call,
    "INIT_LIST_EXPR": Expressions.init_list,
}
