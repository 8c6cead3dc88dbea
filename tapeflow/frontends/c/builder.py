"""`FunctionBuilder`: one C function as a `func.func`, made of the builder's parts (see the
package docstring), and the `static const` and mutable globals the function reads.
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, i1
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from tapeflow.convention import value_name

from .calls import Calls
from .checkpoint import marker_operands
from .clang import children, decl_key, evaluate, unsupported, walk
from .enzyme import ANNOTATIONS
from .expr import Expressions
from .function import Buffer
from .gotos import Gotos
from .libc import is_output_call
from .loops import Loops
from .memory import Memory
from .pointers import Pointers
from .stmt import Statements
from .structs import Structs
from .unions import Unions
from .types import (
    INDEX,
    array_shape,
    as_struct,
    flat_memref,
    holds_functions,
    is_buffer_type,
    record_scalar,
    scalar_type,
    type_kind,
)


class FunctionBuilder(
    Statements, Gotos, Loops, Expressions, Calls, Pointers, Structs, Unions, Memory
):
    """Emits one function: `build` binds the parameters (and the globals the body reads),
    translates the body with the parts, and puts the constants at the top."""

    def build(self) -> func.FuncOp:
        sig = self.sig
        starts = [sum(map(len, sig.groups[:n])) for n in range(len(sig.params))]  # structs
        flat = {starts[n] for views in self.view_params for n in views}
        own = [flat_memref(t) if k in flat else t for k, t in enumerate(sig.arg_types)]
        cut, count = sum(map(len, sig.groups[: self.offsets_at])), len(self.view_params)
        arg_types = own[:cut] + [INDEX] * count + own[cut:]
        block = self.entry = Block(arg_types=arg_types)
        self.builder = Builder(InsertPoint.at_end(block))
        params, offsets = [*block.args[:cut], *block.args[cut + count :]], block.args[cut:]
        pos = 0
        for p, types in zip(sig.params, sig.groups):
            group, pos = params[pos : pos + len(types)], pos + len(types)
            if not group or self.struct_parameter(p, group):  # no group: types.OPAQUE
                continue
            arg = group[0]
            arg.name_hint = value_name(p.spelling) if p.spelling else None
            arg.location = self.unit._loc(p)
            if isinstance(arg.type, MemRefType):
                elem = array_shape(p.type, p)[1]
                if type_kind(elem) == "VOID":
                    elem = self.void_element(p)
                if type_kind(elem) == "RECORD":
                    self.bufs[decl_key(p)] = Buffer(arg, record_scalar(elem), elem.get_canonical())
                else:
                    self.bufs[decl_key(p)] = Buffer(arg, elem)
                    if arg.type.get_num_dims() == 1 and self.reassigned(p):
                        # `x = g(x)`, `x++`: a view of the caller's array, from offset 0
                        self.views.add(decl_key(p))
                        self.vals[decl_key(p)] = self.const(0, INDEX, p)
            else:
                self.vals[decl_key(p)] = arg
        for views, offset in zip(self.view_params, offsets):
            p = sig.params[views[0]]
            offset.name_hint = f"{p.spelling}_offset"
            offset.location = self.unit._loc(p)
            for n in views:
                self.views.add(decl_key(sig.params[n]))
                self.vals[decl_key(sig.params[n])] = offset
        body = next(k for k in sig.cursor.get_children() if k.kind.name == "COMPOUND_STMT")
        self.globals(body)
        stmts = self.before_labels(body, children(body))
        result: list[SSAValue] = []
        if any(r.kind.name == "RETURN_STMT" and (not stmts or r != stmts[-1]) for r in walk(body)):
            if as_struct(sig.cursor.result_type) is not None:
                unsupported(
                    sig.cursor, f"a 'return' before the end of '{sig.name}', which returns a struct"
                )
            # An early return: a flag and the value so far, carried like `break`'s flags;
            # after a statement that may return, the rest runs under `if (!returned)`.
            value = ("<retval>", 0) if sig.result_types else None
            self.ret = (("<returned>", 0), value)
            self.vals[self.ret[0]] = self.const(0, i1, body)
            if value is not None:
                self.vals[value] = self.const(0, sig.result_types[0], body)
            self.block_items(stmts)
            result = [self.vals[value]] if value is not None else []  # type: ignore[list-item]
            stmts = []
        for n, s in enumerate(stmts):
            if s.kind.name == "RETURN_STMT":
                if n != len(stmts) - 1:
                    unsupported(s, "statements after 'return'")
                kids = children(s)
                if kids and sig.name in self.unit.pointer_results:
                    result = [self.returned_pointer(kids[0])]
                elif kids and sig.result_types:  # (not a custom augment's NULL tape)
                    result = self.returned(kids[0], s)
                continue
            self.stmt(s)
        if sig.result_types and not result and self.ret is None:
            unsupported(sig.cursor, f"'{sig.name}' returns a value but does not end with 'return'")
        ret = stmts[-1] if stmts else body
        self.emit(func.ReturnOp(*result), ret)
        if self.address_cells:  # after the constants (their sizes), before everything else
            block.insert_ops_before(list(self.address_cells.values()), block.first_op)
        block.insert_ops_before(list(self.constants.values()), block.first_op)
        fn = func.FuncOp(self.name, (arg_types, sig.result_types), Region(block))
        fn.location = self.unit._loc(sig.cursor)
        return fn

    def globals(self, body) -> None:
        done: set = set()
        runtime = marker_operands(body)  # read by Enzyme's runtime only
        runtime |= self.unit.unread_arguments(body)  # an allocator's own state (allocators.py)
        skip = lambda c: is_output_call(c) or (c.extent.start.offset, c.hash) in runtime  # noqa: E731
        for c in walk(body, skip=skip):
            if c.kind.name != "DECL_REF_EXPR":
                continue
            d = c.referenced
            if d is None or d.kind.name != "VAR_DECL" or d.semantic_parent is None:
                continue
            if d.semantic_parent.kind.name != "TRANSLATION_UNIT" or decl_key(d) in done:
                continue
            done.add(decl_key(d))
            if d.spelling in ANNOTATIONS or holds_functions(d.type):
                continue  # a function pointer (table) is read where it is used (fnptrs.py)
            if not d.type.get_canonical().is_const_qualified() and not (
                is_buffer_type(d.type)
                and array_shape(d.type, d)[1].is_const_qualified()
            ):
                self.mutable_global(c, d)
                continue
            init = [k for k in children(d) if k.kind.is_expression()]
            if not init:
                unsupported(c, f"the global '{d.spelling}' has no initializer")
            if is_buffer_type(d.type):
                self.bufs[decl_key(d)] = self.local_array(d, init[-1])
            else:
                v = evaluate(init[-1])
                if v is None:
                    unsupported(init[-1], f"the initializer of '{d.spelling}' is not a constant")
                self.vals[decl_key(d)] = self.const(v, scalar_type(d.type, d), d)

    def mutable_global(self, c, d) -> None:
        """A mutable global (scalar or array of double/float/int): the module's
        `memref.global @name` (a scalar is one element), read and written through one
        `memref.get_global` at the start of each function that uses it, so every
        function and callee shares its memory and the AD sees it as one buffer."""
        ref = self.unit.global_buffer(c, d)
        self.emit(ref.owner, d)  # type: ignore[arg-type]
        if is_buffer_type(d.type):
            self.bufs[decl_key(d)] = Buffer(ref, array_shape(d.type, d)[1])
        else:
            self.cells[decl_key(d)] = Buffer(ref, d.type)
