"""Calls: `<math.h>` functions as `math` ops, calls of the file's functions (`&x`
out-parameters, pointers into arrays, structs by value).
"""

from __future__ import annotations

from typing import NoReturn

from xdsl.dialects import arith, cf, func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, Float32Type, Float64Type, MemRefType, f64, i1, i32, i64
from xdsl.ir import Attribute, SSAValue

from .checkpoint import LOOP_ENTRIES, MarkedLoops
from .clang import ADDR_OF, children, decl_key, evaluate, strip, strip_casts, unary_op, unsupported
from .fnptrs import FunctionPointers, is_indirect
from .function import Buffer
from .headers import CBLAS_ROUTINES
from .libc import BUILTIN_CONSTANTS, MATH
from .libm import COMPOSED, LibmCalls
from .types import (
    INDEX,
    as_struct,
    count_scalars,
    element_type,
    flat_memref,
    is_struct_pointer,
    leaf_kind,
    scalar_leaves,
    scalar_type,
)


class Calls(LibmCalls, FunctionPointers, MarkedLoops):
    """Calls of `<math.h>` functions and of the file's own functions."""

    def call(self, e, discard: bool, name: str | None = None, args=None) -> SSAValue:
        """A call; `name`: the function a call through a pointer calls (fnptrs.py), or
        that a loop entry's step is (checkpoint.py), with `args` (cursors, or values)."""
        if name is None and is_indirect(e):
            return self.indirect_call(e, discard)
        name = name or e.spelling
        if name in LOOP_ENTRIES:
            return self.marked_loop(e, name)
        args = list(e.get_arguments()) if args is None else args
        if name == "posix_memalign":
            return self.posix_memalign(e)
        if name in ("exit", "_Exit", "abort"):
            return self.exit_call(e, name, args)
        if name in self.unit.function_like:
            name = self.unit.function_like[name]
        elif self.unit.dropped(name):
            if not discard:
                unsupported(e, f"the value of the void function '{name}'")
            return None  # type: ignore[return-value]
        if name in self.unit.signatures:
            sig = self.unit.signatures[name]
            values = []
            at: list[int] = []
            offsets: list[SSAValue] = []
            cells: dict = {}  # `&x` of scalars, copied back: key -> (cell, x, read only)
            bufs: dict[int, Buffer] = {}  # for `pointer_call`
            for n, (p, a, group) in enumerate(zip(sig.params, args, sig.groups, strict=True)):
                if isinstance(a, SSAValue):  # a loop entry's step number
                    values.append(self.convert(a, p.type, e))
                    continue
                if not group:  # a checkpointing scheme's object (types.OPAQUE)
                    continue
                if (
                    as_struct(p.type) is not None or len(group) != 1 or is_struct_pointer(p.type)
                    or self.struct_address(a) is not None
                ):
                    refs, off = self.struct_arguments(p, a, group)
                    values.extend(refs)
                    if off is not None:  # `ke(&ps[i])`: the variant taking i as well
                        at.append(n)
                        offsets.append(off)
                    continue
                t = group[0]
                if isinstance(t, MemRefType) and self.scalar_address(a) is not None:
                    values.append(self.address_argument(a, t, cells, p))
                    continue
                if isinstance(t, MemRefType):
                    buf, off = self.pointer(a)
                    if buf.row is not None:
                        unsupported(a, "a row of a pointer to pointers ('*pp', 'pp[k]') as an "
                                    "argument (pass the pointer to pointers)")
                    bufs[n] = buf
                    if t.get_num_dims() > 1 and buf.ref.type.get_num_dims() == 1:
                        t = flat_memref(t)  # `g(x + i*M)` for `double a[][M]`: a flat view
                        off = off if off is not None else self.const(0, INDEX, a)
                    if off is not None:  # `g(a + k)`: the variant of g taking k as well
                        if t.get_num_dims() != 1:
                            unsupported(a, "a pointer into a multi-dimensional array passed as an array parameter")
                        at.append(n)
                        offsets.append(off)
                    ref = buf.ref
                    if ref.type != t:
                        ref = self.emit(memref.CastOp.get(ref, t), a).results[0]
                    values.append(ref)
                else:
                    values.append(self.convert(self.rvalue(a), p.type, a))
            self.call_bufs = bufs
            if at:
                name = self.unit.view_variant(name, tuple(at), e)
            op = self.emit(func.CallOp(name, [*values, *offsets], sig.result_types), e)
            for ref, d, _ in cells.values():
                zero = self.const(0, INDEX, e)
                self.vals[decl_key(d)] = self.convert(self.load(Buffer(ref, d.type), [zero], e), d.type, e)
            self.reload_spilled(e)
            if as_struct(sig.cursor.result_type) is not None:  # a struct: its fields
                fields = list(op.results)
                if e.spelling in self.unit.inactive:
                    fields = [self.stop_derivative(v, e) for v in fields]
                return fields  # type: ignore[return-value]
            if not op.results:
                if not discard:
                    unsupported(e, f"the value of the void function '{name}'")
                return None  # type: ignore[return-value]
            if e.spelling in self.unit.inactive:
                return self.stop_derivative(op.results[0], e)
            return op.results[0]
        if name.startswith("__builtin_"):  # Clang's spellings of <math.h> (and INFINITY)
            name = name[len("__builtin_"):]
            if name in BUILTIN_CONSTANTS:
                return self.const(BUILTIN_CONSTANTS[name], scalar_type(e.type, e), e)
        if name in COMPOSED or (name.endswith("f") and name[:-1] in COMPOSED):
            return self.composed_call(name if name in COMPOSED else name[:-1], e, args)
        maker = MATH.get(name) or MATH.get(name[:-1] if name.endswith("f") else "")
        if maker is None:
            if name.startswith("enzyme_ckpt_"):
                unsupported(e, f"'{name}' of <enzyme/checkpoint_schedule.h> (TapeFlow runs no "
                            "checkpointing schedule: a driver may call it, translated code not)")
            if name.startswith("cblas_"):
                routines = ", ".join(CBLAS_ROUTINES)
                unsupported(e, f"'{name}' (TapeFlow's <cblas.h> defines {routines})")
            if name in ("malloc", "calloc"):
                unsupported(e, f"{name} outside a pointer declaration")
            unsupported(e, f"call to '{name}' (not defined in this file, nor a <math.h> function "
                         "that tapeflow-cc translates)")
        ctype = e.type
        values = [self.convert(self.rvalue(a), ctype, a) for a in args]
        op = maker(*values)
        return self.emit(op, e).results[0]

    def exit_call(self, e, name: str, args) -> None:
        """`exit(code)`: a `cf.assert` that always fails, located at the call: the run
        stops there with one located runtime error (a gradient through a program that
        ends has no meaning), in every executor, as a failed `assert` would."""
        code = evaluate(args[0]) if args else None
        called = f"{name}({code if code is not None else self.text(args[0]) if args else ''})"
        loc = self.unit._loc(e)
        where = f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
        never = self.const(0, i1, e)
        self.emit(cf.AssertOp(never, f"{where}: {called} called: the run ends (no gradient)"), e)
        return None

    def scalar_address(self, a):
        """The scalar local (or parameter) `x` of an argument `&x`, or None."""
        c = strip_casts(a)
        if c.kind.name != "UNARY_OPERATOR" or unary_op(c) != ADDR_OF:
            return None
        inner = strip(children(c)[0])
        d = inner.referenced if inner.kind.name == "DECL_REF_EXPR" else None
        if d is None or decl_key(d) not in self.vals or decl_key(d) in self.views:
            return None
        return d

    def address_refusal(self, e) -> NoReturn:
        d = self.scalar_address(e)
        if d is not None:
            unsupported(
                e, f"'&{d.spelling}' other than as an argument of a call to a function of the file"
            )
        unsupported(e, "taking an address ('&')")

    def address_argument(self, a, t: MemRefType, cells: dict, p) -> SSAValue:
        """`&x` passed to a function taking a pointer: a one-element `memref.alloca` of
        the parameter's type (in the entry block: in a loop, the stack would grow each
        iteration) holding `x`, read back into `x` after the call (the callee reads and
        writes `x` through it, as an out-parameter). The scalar stays an SSA value
        elsewhere, so `&x` is only a call argument. Passed twice to one call, both
        parameters must be pointers to const (read only, so their aliasing is harmless)."""
        d = self.scalar_address(a)
        if t.element_type != element_type(d.type, a):
            unsupported(a, f"'&{d.spelling}' passed as a pointer to another type")
        read_only = p.type.get_canonical().get_pointee().is_const_qualified()
        if decl_key(d) in cells:
            if not (read_only and cells[decl_key(d)][2]):
                unsupported(a, f"'&{d.spelling}' passed twice to one call (they would alias)")
            return cells[decl_key(d)][0]
        if (decl_key(d), t) not in self.address_cells:  # one per variable, in the entry block
            one = self.const(1, INDEX, a)
            dynamic = [one] if t.get_shape()[0] == DYNAMIC_INDEX else []
            op = memref.AllocaOp.get(t.element_type, shape=list(t.get_shape()), dynamic_sizes=dynamic)
            op.location = self.unit._loc(a)
            op.results[0].name_hint = f"{d.spelling}_cell"
            self.address_cells[(decl_key(d), t)] = op
        ref = self.address_cells[(decl_key(d), t)].results[0]
        value = self.to_memory(self.convert(self.current(decl_key(d), d, a), d.type, a), t, a)
        self.emit(memref.StoreOp.get(value, ref, [self.const(0, INDEX, a)]), a)
        cells[decl_key(d)] = (ref, d, read_only)
        return ref

    def stop_derivative(self, v: SSAValue, c) -> SSAValue:
        """`v`, through a bitcast to an integer and back: the same bits, but the AD's
        activity analysis does not follow integers, so no derivative flows through it
        (the result of an `enzyme_inactive` function)."""
        if not isinstance(v.type, (Float64Type, Float32Type)):
            return v
        bits = self.emit(arith.BitcastOp(v, i64 if v.type == f64 else i32), c).results[0]
        return self.emit(arith.BitcastOp(bits, v.type), c).results[0]

    def struct_arguments(
        self, p, a, group: list[Attribute]
    ) -> tuple[list[SSAValue], SSAValue | None]:
        """A call's IR arguments for the struct parameter `p` (the fields of a struct by
        value, the memrefs of a pointer to a struct with integer fields) and, for a
        pointer into an array of them (`&ps[i]`), its offset in structs."""
        if as_struct(p.type) is not None:
            values = self.struct_value(a)
            leaves = scalar_leaves(p.type)
            return [self.convert(v, lt, a) for v, (_, lt) in zip(values, leaves, strict=True)], None
        off = None
        if (place := self.struct_address(a)) is not None:
            refs = self.spill(place, group, a)
        else:
            buf, off = self.pointer(a)
            if not buf.mixed() and (off is not None or len(group) != 1):
                unsupported(a, f"'{self.text(a)}' as a '{p.type.spelling}' argument")
            refs = buf.parts()
        out = []
        for ref, t in zip(refs, group, strict=True):
            if ref.type != t:
                ref = self.emit(memref.CastOp.get(ref, t), a).results[0]
            out.append(ref)
        return out, off

    def struct_address(self, a):
        """(key, path, type) of the struct by value `s` (or `s.inner`) in `&s`, or None."""
        c = strip_casts(a)
        if self.is_box(c):  # `g(p)` of a pointer to one malloc'ed struct: as `g(&s)`
            return decl_key(c.referenced), (), self.structs[decl_key(c.referenced)]
        if c.kind.name != "UNARY_OPERATOR" or unary_op(c) != ADDR_OF:
            return None
        place = self.struct_place(children(c)[0])
        return place if place is not None and as_struct(place[2]) is not None else None

    def spill(self, place, group: list[Attribute], a) -> list[SSAValue]:
        """`g(&s)` for a struct by value `s`: its fields stored into stack memrefs in the
        layout of a struct pointer (one per kind), read back into `s` after the call."""
        key, prefix, record = place
        if any(k[0] == key for k, _, _ in self.spilled):
            unsupported(a, f"'{self.text(a)}' passed twice to one call")
        kinds = [kind for kind in "fi" if count_scalars(record, kind)]
        refs = {}
        for kind, t in zip(kinds, group[: len(kinds)], strict=True):
            # the callee's own type (`memref<?xf64>`: a dynamic size), so no memref.cast;
            # one per struct and kind in the entry block, as `&x`'s cells (address_argument)
            cell = ((key, prefix, kind), t)
            if cell not in self.address_cells:
                n = self.const(count_scalars(record, kind), INDEX, a)
                dynamic = [n] if t.get_shape()[0] == DYNAMIC_INDEX else []
                op = memref.AllocaOp.get(t.element_type, shape=t.get_shape(), dynamic_sizes=dynamic)
                op.location = self.unit._loc(a)
                self.address_cells[cell] = op  # type: ignore[index]
            refs[kind] = self.address_cells[cell].results[0]  # type: ignore[index]
        seen = dict.fromkeys(kinds, 0)
        pointers = []
        for path, lt in scalar_leaves(record):
            kind = leaf_kind(lt)
            if kind == "p":  # a local struct's pointer field: its buffer (struct_with_pointers)
                field = (key, (*prefix, *path))
                if field not in self.bufs:
                    unsupported(a, f"'{self.text(a)}' before its pointer field '{path[-1]}' "
                                "is bound ('s.p = malloc(...)')")
                pointers.append(self.bufs[field].ref)  # type: ignore[index]
                continue
            idx = self.const(seen[kind], INDEX, a)
            seen[kind] += 1
            field = (key, (*prefix, *path))
            v = self.to_memory(self.current(field, None, a), refs[kind].type, a)
            self.emit(memref.StoreOp.get(v, refs[kind], [idx]), a)
            self.spilled.append((field, refs[kind], idx))
        return [refs[kind] for kind in kinds] + pointers

    def reload_spilled(self, c) -> None:
        """After a call: the fields of the structs passed as `&s`, from their memrefs."""
        for field, ref, idx in self.spilled:
            self.vals[field] = self.load(Buffer(ref, None), [idx], c)
        self.spilled = []
