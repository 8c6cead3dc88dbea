"""Structs: a pointer to a struct is a `Buffer` of memrefs (floats, integers, one per pointer
field); a struct by value is one scalar per field (SROA), passed and returned as several
values.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, i64
from xdsl.ir import Block, SSAValue

from .clang import (
    DEREF,
    POST_DEC,
    POST_INC,
    PRE_DEC,
    PRE_INC,
    binary_op,
    children,
    decl_key,
    evaluate,
    strip,
    strip_casts,
    unary_op,
    unsupported,
)
from .function import Buffer, FunctionState, constant_int, erase_unused_arith, mixed_view
from .types import (
    INDEX,
    aggregate,
    array_shape,
    as_struct,
    count_scalars,
    field_position,
    is_buffer_type,
    is_float,
    is_int,
    is_struct_pointer,
    leaf_kind,
    pointee,
    record_scalar,
    refuse_union,
    scalar_leaves,
    scalar_type,
    struct_layout,
    type_kind,
    value_types,
)


class Structs(FunctionState):
    """Struct pointers (several memrefs) and structs by value (a scalar per field)."""

    def member(self, e) -> tuple[Buffer, dict[str, SSAValue | None], object]:
        """(buffer, flat index of the place among the struct memory's floats `"f"` and
        integers `"i"` (the kinds the buffer has), C type) of a place inside a struct
        pointer's memory: `p->x`, `p[i].v[k]`, `(*p).x`, `p->inner.y`."""
        c = strip(e)
        k = c.kind.name
        if k == "MEMBER_REF_EXPR":
            base = strip(children(c)[0])
            if type_kind(base.type) == "POINTER":  # p->f
                buf, off = self.pointer(base)
                if buf.record is None:
                    unsupported(c, f"the member access '{self.text(c)}'")
                record, at = base.type.get_pointee().get_canonical(), self.kinds(buf, off, c)
            else:  # s.f, with s itself a place in the memory
                buf, at, record = self.member(base)
            for kind, start in at.items():
                idx = self.const(field_position(record, c.spelling, kind, c), INDEX, c)
                at[kind] = idx if start is None else self.index_op(arith.AddiOp, start, idx, c)
            return buf, at, c.type.get_canonical()
        if k == "ARRAY_SUBSCRIPT_EXPR":
            base, sub = children(c)
            if is_buffer_type(strip(sub).type):
                base, sub = sub, base
            base = strip(base)
            if base.kind.name == "MEMBER_REF_EXPR" or type_kind(pointee(base.type)) == "RECORD":
                if base.kind.name == "MEMBER_REF_EXPR":
                    buf, at, t = self.member(base)
                    elem = t.get_array_element_type().get_canonical()
                else:  # ps[i], with ps a struct pointer or a local array of structs
                    buf, off = self.pointer(base)
                    at, elem = self.kinds(buf, off, c), pointee(base.type)
                strides = {kind: self.const(count_scalars(elem, kind), INDEX, c) for kind in at}
                i = self.index(self.rvalue(sub), sub)
                for kind, stride in strides.items():
                    step = self.index_op(arith.MuliOp, i, stride, c)
                    if at[kind] is not None:
                        step = self.index_op(arith.AddiOp, at[kind], step, c)
                    at[kind] = step
                return buf, at, elem
        if k == "UNARY_OPERATOR" and unary_op(c) == DEREF:
            if self.is_box(children(c)[0]):
                unsupported(c, f"'{self.text(c)}' here (a malloc'ed struct is read and written "
                            "whole or by its fields, not as memory)")
            buf, off = self.pointer(children(c)[0])
            if buf.record is not None:
                record = strip(children(c)[0]).type.get_pointee().get_canonical()
                return buf, self.kinds(buf, off, c), record
        unsupported(c, f"'{self.text(c)}' as a place in a struct")

    def struct_offset(self, e, c) -> tuple[Buffer, SSAValue]:
        """`&ps[i]` into an array of structs with integer fields: the view's offset in
        structs (each memref's index is it times the struct's count of that kind)."""
        base, sub = children(strip(e))
        if is_buffer_type(strip(sub).type):
            base, sub = sub, base
        buf, off = self.pointer(base)
        if buf.fields:
            unsupported(c, mixed_view(buf))
        i = self.index(self.rvalue(sub), sub)
        return buf, i if off is None else self.index_op(arith.AddiOp, off, i, c)

    def erase_unused(self, v: SSAValue) -> None:
        """Erases the unused index computation `v` of a struct field's other kind."""
        erase_unused_arith(v, {x for x in self.vals.values() if isinstance(x, SSAValue)})

    def pointer_field(self, c) -> Buffer:
        """The array the pointer field `p->data` (`s->inner.data`, `ps[0].data`) points to:
        a memref argument of its own (its shadow, Enzyme's `dp->data`, follows it)."""
        if (local := self.field_buffer(c)) is not None:
            return local
        buf, at, _ = self.member(c)
        n = constant_int(at["p"]) if "p" in at and at["p"] is not None else None
        for v in at.values():
            if v is not None:
                self.erase_unused(v)
        if n is None or n >= len(buf.fields):
            unsupported(
                c, f"the pointer field '{c.spelling}' of a struct in an array (only of the struct "
                "a parameter points to)"
            )
        return buf.fields[n]

    def kinds(self, buf: Buffer, off: SSAValue | None, c) -> dict[str, SSAValue | None]:
        """The start of a struct place per memref kind the struct pointer has (`off`, a
        view's offset: in floats for a struct of floats, else in structs)."""
        if not buf.mixed():
            return {"f": off}
        kinds = "f" * buf.floats + "i" * (buf.ints is not None) + "p" * bool(buf.fields)
        if off is None:
            return dict.fromkeys(kinds)
        counts = {kind: self.const(count_scalars(buf.record, kind), INDEX, c) for kind in kinds}
        return {kind: self.index_op(arith.MuliOp, off, n, c) for kind, n in counts.items()}

    def field_access(
        self, buf: Buffer, at: dict[str, SSAValue | None], t, c
    ) -> tuple[Buffer, SSAValue]:
        """The memref (as a buffer of `t`) and index of the scalar field of type `t` at
        `at`; the other kind's index computation, unused, is erased."""
        kind = leaf_kind(t)
        if kind == "p":
            unsupported(
                c, f"the pointer field '{c.spelling}' as a value (index it: only its elements "
                "are read and written)"
            )
        if kind is None or kind not in at:
            unsupported(c, f"a whole '{t.spelling}' as a value (use its fields)")
        for other, v in at.items():
            if other != kind and v is not None:
                self.erase_unused(v)
        idx = at[kind] if at[kind] is not None else self.const(0, INDEX, c)
        if kind == "f":
            return buf, idx
        return Buffer(buf.ints, t), idx  # type: ignore[arg-type]

    def memory_fields(self, buf: Buffer, at, t, c) -> list[tuple[Buffer, SSAValue]]:
        """(memref as a buffer, index) of each field of the struct of type `t` at `at` in
        a struct pointer's memory, in `_leaves` order."""
        seen = dict.fromkeys(at, 0)
        out = []
        for _, lt in scalar_leaves(t):
            kind = leaf_kind(lt)
            if kind not in at:
                unsupported(c, f"a field of type '{lt.spelling}' in struct memory")
            n = self.const(seen[kind], INDEX, c)
            seen[kind] += 1
            start = at[kind]
            idx = n if start is None else self.index_op(arith.AddiOp, start, n, c)
            part = buf if kind == "f" else Buffer(buf.ints, lt)  # type: ignore[arg-type]
            out.append((part, idx))
        for kind, v in at.items():
            if not seen[kind] and v is not None:
                self.erase_unused(v)
        return out

    def struct_parameter(self, p, group: Sequence[SSAValue]) -> bool:
        """Binds a struct parameter's IR arguments (its fields by value, or the memrefs of
        a pointer to a struct with integer fields); False for any other parameter."""
        t = p.type
        if as_struct(t) is not None:
            key = decl_key(p)
            self.structs[key] = as_struct(t)
            for (path, _), arg in zip(scalar_leaves(t), group, strict=True):
                arg.name_hint = "_".join([p.spelling, *map(str, path)]) if p.spelling else None
                arg.location = self.unit._loc(p)
                self.vals[(key, path)] = arg  # type: ignore[index]
            return True
        if not is_struct_pointer(t):
            return False
        record = array_shape(t, p)[1].get_canonical()
        leaves = scalar_leaves(record)
        scalar = next((lt for _, lt in leaves if is_float(lt)), None)
        ints = any(is_int(lt) for _, lt in leaves)
        names = [""] * (scalar is not None) + ["_ints"] * ints
        pointers = [(path, lt) for path, lt in leaves if leaf_kind(lt) == "p"]
        names += ["_" + "_".join(map(str, path)) for path, _ in pointers]
        for arg, suffix in zip(group, names, strict=True):
            arg.name_hint = f"{p.spelling}{suffix}" if p.spelling else None
            arg.location = self.unit._loc(p)
        fields = tuple(
            Buffer(a, lt.get_pointee().get_canonical())
            for a, (_, lt) in zip(group[len(group) - len(pointers) :], pointers)
        )
        elem = scalar
        if elem is None and ints:
            elem = next(lt for _, lt in leaves if is_int(lt))
        self.bufs[decl_key(p)] = Buffer(
            group[0], elem, record, ints=group[int(scalar is not None)] if ints else None,
            fields=fields, floats=scalar is not None,
        )
        return True

    def struct_local(self, d, exprs: list) -> None:
        """`struct P p;`, `= {...}`, `= q`, `= make(...)`: one scalar per field."""
        t = as_struct(d.type)
        if any(leaf_kind(lt) == "p" for _, lt in scalar_leaves(t)):
            self.struct_with_pointers(d, t)
            if exprs:  # `T s = *p;`: a copy, its pointer fields bound here
                self.copy_into((decl_key(d), ()), d.spelling, exprs[-1], d)
            return
        value_types(t, d)
        key = decl_key(d)
        self.structs[key] = t
        if exprs:
            values = self.struct_value(exprs[-1])
        else:  # reading it before writing is undefined in C: zero
            values = [self.const(0, scalar_type(lt, d), d) for _, lt in scalar_leaves(t)]
        for (path, lt), v in zip(scalar_leaves(t), values, strict=True):
            self.vals[(key, path)] = self.convert(v, lt, d)  # type: ignore[index]

    def struct_with_pointers(self, d, t) -> None:
        """`struct P s;` with pointer fields (to floats or integers): its scalars are
        values as any struct's, each pointer field a buffer once `s.p = malloc(...)` binds
        it (`bufs[(key, path)]`); `&s` passes those buffers as a struct pointer's."""
        struct_layout(t, d)  # fields of floats, integers and pointers to them
        key = decl_key(d)
        self.structs[key] = t
        self.homes[key] = self.builder.insertion_point.block
        for path, lt in scalar_leaves(t):
            if leaf_kind(lt) != "p":
                self.vals[(key, path)] = self.const(0, scalar_type(lt, d), d)  # type: ignore[index]

    @staticmethod
    def boxed_record(d, init):
        """The struct `T` of `T *p = malloc(sizeof(T))` when `T` has integer or pointer
        fields (a struct of floats is its floats in memory: `struct_allocation`), else None."""
        call = strip_casts(init)
        record = as_struct(pointee(d.type))
        if record is None or record_scalar(record) is not None or call.kind.name != "CALL_EXPR":
            return None
        args = list(call.get_arguments())
        if call.spelling != "malloc" or len(args) != 1 or evaluate(args[0]) != record.get_size():
            return None
        return record

    def struct_box(self, d, record) -> None:
        """`T *p = malloc(sizeof(T))`, one struct with integer or pointer fields: a local
        struct (`struct_with_pointers`) that `p->f` names; `free(p)` frees nothing."""
        if self.reassigned(d):
            unsupported(d, f"assigning the pointer '{d.spelling}' to one malloc'ed struct")
        self.struct_with_pointers(d, record)
        self.boxes.add(decl_key(d))

    def bind_field(self, place, src, c) -> None:
        """`s.p = q` (`p->data = frame->data`): the pointer field is the buffer `q` is,
        bound once at the top level of the block declaring the struct."""
        key, path, _ = place
        self.bind_check((key, path), c, f"'{self.text(children(c)[0])}'")
        buf, off = self.pointer(src)
        if off is not None:
            unsupported(src, f"'{self.text(src)}' into a pointer field (only a whole array)")
        self.bufs[(key, path)] = buf  # type: ignore[index]

    def bind_check(self, field: tuple, c, what: str) -> None:
        """A pointer field of a local struct is bound once, at the top level of the block
        declaring the struct (then it names one buffer wherever the struct is used)."""
        if self.builder.insertion_point.block is not self.home(field[0]) or field in self.bufs:
            unsupported(c, f"assigning the pointer field {what} (once, at the top level of "
                        "the block declaring the struct)")

    def home(self, key) -> Block:
        """The block declaring the local (or malloc'ed) struct `key`."""
        return self.homes.get(key, self.entry)

    def field_buffer(self, c) -> Buffer | None:
        """The buffer the pointer field `s.p` of a local struct holds, else None."""
        place = self.struct_place(c)
        if place is None:
            return None
        key, path, _ = place
        if (key, path) not in self.bufs:
            unsupported(c, f"the pointer field '{self.text(c)}' before 's.p = malloc(...)' binds it")
        return self.bufs[(key, path)]  # type: ignore[index]

    def struct_array(self, d, exprs: list) -> Buffer:
        """A local array of structs `P vs[N]` (`= {...}` too): stack memrefs in the layout
        of a struct pointer, of dynamic type (`memref<?xf64>`, as a callee's parameter:
        no memref.cast)."""
        shape, elem = array_shape(d.type, d)
        record = as_struct(elem)
        if len(shape) != 1 or shape[0] == DYNAMIC_INDEX or record is None:
            unsupported(d, f"the local array '{d.spelling}' of structs (one constant dimension)")
        scalar, ints, pointers = struct_layout(record, d)
        if pointers:
            unsupported(d, f"a local array of '{elem.spelling}' (a struct with pointer fields)")
        refs = {}
        for kind, et in (("f", scalar), ("i", i64 if ints else None)):
            if et is not None:
                n = self.const(shape[0] * count_scalars(record, kind), INDEX, d)
                op = memref.AllocaOp.get(et, shape=[DYNAMIC_INDEX], dynamic_sizes=[n])
                refs[kind] = self.emit(op, d).results[0]
                refs[kind].name_hint = d.spelling + ("_ints" if kind == "i" else "")
        leaves = [lt for _, lt in scalar_leaves(record)]
        first = next(lt for lt in leaves if leaf_kind(lt) == ("f" if scalar else "i"))
        if record_scalar(record) is not None:  # floats only: as a struct pointer's
            buf = Buffer(refs["f"], first, record)
        else:
            ref = refs.get("f", refs.get("i"))
            buf = Buffer(ref, first, record, ints=refs.get("i"), floats="f" in refs)
        init = exprs[-1] if exprs and strip(exprs[-1]).kind.name == "INIT_LIST_EXPR" else None
        if init is not None:
            values = self.struct_init(d.type, strip(init))
            places = self.memory_fields(buf, self.kinds(buf, None, d), d.type, d)
            for (part, idx), v, (_, lt) in zip(places, values, scalar_leaves(d.type), strict=True):
                mem = self.to_memory(self.convert(v, lt, d), part.ref.type, d)
                self.emit(memref.StoreOp.get(mem, part.ref, [idx]), d)
        return buf

    def struct_place(self, e) -> tuple[tuple[str, int], tuple, object] | None:
        """(struct key, field path, C type) when `e` is a struct by value or a place in
        one (`s`, `s.x`, `s.v[1]`, `s.a.y`), else None (e.g. `p->x`, in memory)."""
        c = strip(e)
        steps: list = []
        while c.kind.name in ("MEMBER_REF_EXPR", "ARRAY_SUBSCRIPT_EXPR"):
            if c.kind.name == "MEMBER_REF_EXPR":
                base = strip(children(c)[0])
                if type_kind(base.type) == "POINTER" and not self.is_box(base):
                    return None
                steps.append(c.spelling)
            else:
                base, sub = children(c)
                if is_buffer_type(strip(sub).type):
                    base, sub = sub, base
                if type_kind(strip(base).type) == "POINTER":
                    return None  # `s.p[i]`: in the memory the field points to
                steps.append(sub)
                base = strip(base)
            c = base
        if c.kind.name == "UNARY_OPERATOR" and unary_op(c) == DEREF and self.is_box(children(c)[0]):
            c = strip_casts(children(c)[0])  # `*p` of one malloc'ed struct: the struct
        d = c.referenced if c.kind.name == "DECL_REF_EXPR" else None
        if d is None or decl_key(d) not in self.structs:
            return None
        path = []
        for step in reversed(steps):
            if not isinstance(step, str):
                n = evaluate(step)
                if not isinstance(n, int):
                    unsupported(
                        step, "a subscript that is not a constant, into an array in a struct by "
                        "value"
                    )
                step = n
            path.append(step)
        return decl_key(d), tuple(path), strip(e).type.get_canonical()

    def is_box(self, e) -> bool:
        """Whether `e` names a pointer to one malloc'ed struct (`struct_box`)."""
        c = strip_casts(e)
        return c.kind.name == "DECL_REF_EXPR" and decl_key(c.referenced) in self.boxes

    def struct_field(self, e) -> tuple | None:
        """The `vals` key of the scalar field `e` of a struct by value, or None."""
        place = self.struct_place(e)
        if place is None:
            return None
        key, path, t = place
        if leaf_kind(t) is None:
            unsupported(e, f"a whole '{t.spelling}' as a value here (use its fields)")
        if (key, path) not in self.vals:
            unsupported(e, f"'{self.text(e)}': an index outside the array in the struct")
        return (key, path)

    def struct_fields_assigned(self, c) -> list[tuple]:
        """The fields of a struct by value that `c` assigns (for loops and branches to
        carry): `s.x = `, `s.v[1] += `, `s.n++`, `s = q` (every field)."""
        if not self.structs:
            return []
        k = c.kind.name
        if k == "CALL_EXPR":  # g(&s) may write every field of s
            return [
                (key, (*prefix, *path))
                for key, prefix, t in filter(None, map(self.struct_address, c.get_arguments()))
                for path, _ in scalar_leaves(t)
                if (key, (*prefix, *path)) in self.vals
            ]
        steps = (PRE_INC, PRE_DEC, POST_INC, POST_DEC)
        if not (
            k == "COMPOUND_ASSIGNMENT_OPERATOR"
            or (k == "BINARY_OPERATOR" and binary_op(c) == "=")
            or (k == "UNARY_OPERATOR" and unary_op(c) in steps)
        ):
            return []
        place = self.struct_place(children(c)[0])
        if place is None:
            return []
        key, prefix, _ = place
        if key in self.unions:
            return [(key, ())]
        return [
            (key, path) for path, _ in scalar_leaves(self.structs[key])
            if path[: len(prefix)] == prefix and (key, path) in self.vals
        ]

    def struct_value(self, e) -> list[SSAValue]:
        """The field values (in `_leaves` order) of a struct-valued expression: a struct
        by value, a call returning one, `{...}`, `(struct P){...}`, or a struct in a
        struct pointer's memory (`*p`, `ps[i]`, `p->inner`: loads)."""
        c = strip(e)
        k = c.kind.name
        t = as_struct(c.type)
        if t is None:
            refuse_union(c.type, c)
            unsupported(e, f"'{self.text(e)}' as a struct")
        if k == "CALL_EXPR":
            values = self.call(c, False)
            if not isinstance(values, list):
                unsupported(e, f"'{self.text(e)}' as a struct")
            return values
        if k == "INIT_LIST_EXPR":
            return self.struct_init(t, c)
        if k == "COMPOUND_LITERAL_EXPR":
            init = next(x for x in children(c) if x.kind.name == "INIT_LIST_EXPR")
            return self.struct_init(t, init)
        if (place := self.struct_place(c)) is not None:
            key, prefix, _ = place
            return [self.current((key, (*prefix, *path)), None, c) for path, _ in scalar_leaves(t)]
        if k in ("MEMBER_REF_EXPR", "ARRAY_SUBSCRIPT_EXPR", "UNARY_OPERATOR"):
            buf, at, _ = self.member(c)
            return [self.load(part, [idx], c) for part, idx in self.memory_fields(buf, at, t, c)]
        unsupported(e, f"the struct expression '{self.text(e)}'")

    def struct_assign(self, target, src, e) -> None:
        """`s = q`, `*p = q`, `ps[i] = make(...)`, `*box = *p`: every scalar field, as the
        scalar assignments they are; a pointer field (of a local or malloc'ed struct) is
        bound to the buffer the source's field names, as `s.p = q` binds it."""
        t = strip(target)
        if (place := self.struct_place(t)) is not None:
            return self.copy_into(place[:2], self.text(t), src, e)
        leaves = scalar_leaves(t.type)
        values, buffers = self.struct_parts(src)
        if buffers:
            unsupported(e, f"copying a struct with pointer fields into '{self.text(t)}' (the "
                        "memory a struct pointer points to: its pointer fields are the caller's)")
        buf, at, rt = self.member(t)
        places = self.memory_fields(buf, at, rt, e)
        for (part, idx), v, (_, lt) in zip(places, values, leaves, strict=True):
            mem = self.to_memory(self.convert(v, lt, e), part.ref.type, e)
            self.emit(memref.StoreOp.get(mem, part.ref, [idx]), e)
        return None

    def copy_into(self, place: tuple, name: str, src, e) -> None:
        """Copies the struct `src` into the struct by value (or malloc'ed struct) at
        `place` (its key and field path): scalars are values, pointer fields bound."""
        key, prefix = place
        values, buffers = self.struct_parts(src)
        for path, buf in buffers.items():
            field = (key, (*prefix, *path))
            self.bind_check(field, e, f"'{'.'.join(map(str, path))}' of '{name}'")
            self.bufs[field] = buf  # type: ignore[index]
        scalars = [(path, lt) for path, lt in scalar_leaves(strip(src).type) if leaf_kind(lt) != "p"]
        for (path, lt), v in zip(scalars, values, strict=True):
            self.vals[(key, (*prefix, *path))] = self.convert(v, lt, e)  # type: ignore[index]

    def struct_parts(self, e) -> tuple[list[SSAValue], dict[tuple, Buffer]]:
        """The values of a struct's scalar fields (`_leaves` order) and the buffers of its
        pointer fields (by field path): of a local or malloc'ed struct, or of a struct in
        a struct pointer's memory (a parameter's pointer fields are its own memrefs)."""
        t = as_struct(strip(e).type)
        pointers = [path for path, lt in scalar_leaves(t) if leaf_kind(lt) == "p"] if t else []
        if not pointers:
            return self.struct_value(e), {}
        if (place := self.struct_place(e)) is not None:
            key, prefix, _ = place
            buffers = {}
            for path in pointers:
                if (field := (key, (*prefix, *path))) not in self.bufs:
                    unsupported(e, f"copying '{self.text(e)}' before its pointer field "
                                f"'{path[-1]}' is bound")
                buffers[path] = self.bufs[field]  # type: ignore[index]
            return [self.current((key, (*prefix, *path)), None, e)
                    for path, lt in scalar_leaves(t) if leaf_kind(lt) != "p"], buffers
        if strip(e).kind.name not in ("MEMBER_REF_EXPR", "ARRAY_SUBSCRIPT_EXPR", "UNARY_OPERATOR"):
            unsupported(e, f"'{self.text(e)}' as a struct with pointer fields (copy one from a "
                        "variable or through a pointer)")
        buf, at, _ = self.member(e)
        values, buffers = [], {}
        for (part, idx), (path, lt) in zip(self.memory_fields(buf, at, t, e), scalar_leaves(t),
                                           strict=True):
            if leaf_kind(lt) != "p":
                values.append(self.load(part, [idx], e))
                continue
            n = constant_int(idx)
            self.erase_unused(idx)
            if n is None or n >= len(buf.fields):
                unsupported(e, f"copying '{self.text(e)}': a struct with pointer fields in an "
                            "array (only the struct a parameter points to)")
            buffers[path] = buf.fields[n]
        return values, buffers

    def struct_init(self, t, init) -> list[SSAValue]:
        """The fields of an initializer list for struct `t`: nested or elided braces,
        missing fields zero (as C); designated initializers are refused."""
        out: list[SSAValue] = []

        def zeros(t) -> None:
            out.extend(self.const(0, scalar_type(lt, init), init) for _, lt in scalar_leaves(t))

        def braced(t, lst) -> None:
            items = children(lst)
            for x in items:
                if type_kind(x.type) == "VOID":
                    unsupported(x, "designated initializers ('.x = ', '[k] = ')")
            if aggregate(t) is None:
                if items:
                    out.append(self.convert(self.rvalue(items[0]), t, items[0]))
                else:
                    zeros(t)
                return
            n = fill(t, items, 0)
            if n < len(items):
                unsupported(items[n], "more initializers than fields")

        def fill(t, items: list, n: int) -> int:
            for sub in aggregate(t):
                if n >= len(items):
                    zeros(sub)
                    continue
                x = strip(items[n])
                if x.kind.name == "INIT_LIST_EXPR":
                    braced(sub, x)
                elif as_struct(sub) is not None and as_struct(x.type) is not None:
                    out.extend(self.struct_value(x))
                elif aggregate(sub) is not None:  # brace elision: `{1, 2, 3}` for `{1, {2, 3}}`
                    n = fill(sub, items, n)
                    continue
                else:
                    out.append(self.convert(self.rvalue(items[n]), sub, items[n]))
                n += 1
            return n

        braced(t, init)
        return out

    def returned(self, e, s) -> list[SSAValue]:
        """The results of `return e` (a struct: its fields)."""
        rt = self.sig.cursor.result_type
        if as_struct(rt) is None:
            return [self.convert(self.rvalue(e), rt, s)]
        values = self.struct_value(e)
        leaves = scalar_leaves(rt)
        return [self.convert(v, lt, s) for v, (_, lt) in zip(values, leaves, strict=True)]
