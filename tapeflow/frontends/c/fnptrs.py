"""Function pointers to functions of the file: a pointer's value is an `index`, the number
of the function among the file's functions whose address is taken (`address_taken`);
a call through a pointer is a chain of `scf.if` over the functions of its type, each
arm a direct call, so the AD pass sees only direct calls. A pointer may be a parameter,
a local or global variable, or an entry of a table initialised with function names and
never written (indexed by a constant or an integer).
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.ir import SSAValue

from .clang import (
    ADDR_OF,
    DEREF,
    binary_op,
    children,
    decl_key,
    evaluate,
    strip,
    unary_op,
    unsupported,
    walk,
)
from .checkpoint import marker_operands
from .enzyme import is_entry
from .function import FunctionState, Unset
from .trees import stored_buffers
from .types import INDEX, is_function_pointer, type_kind


def function_type(t):
    """The function type a function pointer (or function) type points to."""
    t = t.get_canonical()
    return t.get_pointee().get_canonical() if type_kind(t) == "POINTER" else t


def initializer(d):
    """The initializer list (or expression) of the variable `d`, or None."""
    exprs = [k for k in children(d) if k.kind.is_expression()]
    return strip(exprs[-1]) if exprs else None


def address_taken(tu, defs) -> list[str]:
    """The file's functions whose address is taken (named other than as the callee of a
    call, and outside Enzyme's calls and registrations), in source order."""
    callees, names = set(), set()
    scopes = [*defs.values(), *(c for c in tu.get_children() if c.kind.name == "VAR_DECL")]
    for scope in scopes:
        if scope.spelling.startswith("__enzyme_"):
            continue
        runtime = marker_operands(scope, strict=False)  # a fixed point's control: not called
        for c in walk(scope, lambda k: (k.extent.start.offset, k.hash) in runtime):
            if c.kind.name == "CALL_EXPR":
                kids = children(c)
                if is_entry(c.spelling):
                    callees.update(k.hash for k in walk(c))
                elif kids:
                    callees.add(strip(kids[0]).hash)
            elif c.kind.name == "DECL_REF_EXPR" and c.hash not in callees:
                d = c.referenced
                if d is not None and d.kind.name == "FUNCTION_DECL" and d.spelling in defs:
                    names.add(d.spelling)
    return [n for n in defs if n in names]


def referenced_functions(c, ids) -> list[str]:
    """The address-taken functions the cursor `c` names: a function, or a global table
    (or pointer) of them (for the functions a translated function may call)."""
    if c.kind.name != "DECL_REF_EXPR" or c.referenced is None:
        return []
    d = c.referenced
    if d.kind.name == "FUNCTION_DECL":
        return [d.spelling] if d.spelling in ids else []
    if d.kind.name == "VAR_DECL" and (init := initializer(d)) is not None:
        return [k.referenced.spelling for k in walk(init)
                if k.kind.name == "DECL_REF_EXPR" and k.referenced is not None
                and k.referenced.spelling in ids]
    return []


class FunctionPointers(FunctionState):
    """Function pointer values (`function_value`) and calls through them."""

    def function_value(self, e) -> SSAValue:
        """The `index` a function pointer expression evaluates to."""
        c = strip(e)
        ids = self.unit.function_ids
        if c.kind.name in ("UNARY_OPERATOR", "CSTYLE_CAST_EXPR") and (
            c.kind.name == "CSTYLE_CAST_EXPR" or unary_op(c) in (ADDR_OF, DEREF)
        ):
            return self.function_value([k for k in children(c) if k.kind.is_expression()][-1])
        if c.kind.name == "DECL_REF_EXPR" and c.referenced is not None:
            d = c.referenced
            if d.kind.name == "FUNCTION_DECL":
                if d.spelling not in ids:
                    unsupported(
                        c, f"a pointer to '{d.spelling}', which is not defined in this file"
                    )
                return self.const(ids[d.spelling], INDEX, c)
            value = self.vals.get(decl_key(d))
            if isinstance(value, SSAValue):
                return value
            if isinstance(value, Unset):
                unsupported(c, f"the function pointer '{d.spelling}' before it is assigned")
            init = initializer(d)
            if init is not None and d.semantic_parent.kind.name == "TRANSLATION_UNIT":
                return self.function_value(init)  # a global function pointer, never written
        if c.kind.name == "ARRAY_SUBSCRIPT_EXPR":
            return self.table_entry(c)
        if c.kind.name == "BINARY_OPERATOR" and binary_op(c) == "=":
            target, source = children(c)
            t = strip(target)
            if t.kind.name != "DECL_REF_EXPR" or t.referenced is None:
                unsupported(c, "writing a function pointer other than a variable (a table entry, "
                            "a field)")
            value = self.function_value(source)
            self.vals[decl_key(t.referenced)] = value
            return value
        unsupported(c, f"the function pointer '{self.text(c)}' (only functions of the file, "
                    "variables and constant tables of them)")

    def table_entry(self, c) -> SSAValue:
        """`table[k]` of a table of function pointers initialised with functions and never
        written: the entry, or for a variable `k` a chain of `arith.select`s."""
        base, at = children(c)
        ref = strip(base)
        d = ref.referenced if ref.kind.name == "DECL_REF_EXPR" else None
        init = initializer(d) if d is not None else None
        if init is None or init.kind.name != "INIT_LIST_EXPR":
            unsupported(c, "a table of function pointers without an initializer list")
        if decl_key(d) in stored_buffers(self.sig.cursor):
            unsupported(c, f"the table of function pointers '{d.spelling}' is written")
        entries = [self.function_value(k) for k in children(init)]
        if isinstance(k := evaluate(at), int):
            if not 0 <= k < len(entries):
                unsupported(at, f"index {k} outside the table '{d.spelling}'")
            return entries[k]
        index = self.index(self.rvalue(at), at)
        value = entries[-1]
        for n in range(len(entries) - 2, -1, -1):
            eq = self.emit(arith.CmpiOp(index, self.const(n, INDEX, c), "eq"), c).results[0]
            value = self.emit(arith.SelectOp(eq, entries[n], value), c).results[0]
        return value

    def indirect_call(self, e, discard: bool) -> SSAValue:
        """A call through a function pointer: `scf.if (p == id(f)) f(...) else ...` over
        the file's address-taken functions of its type, each arm a direct call."""
        callee = children(e)[0]
        want = function_type(strip(callee).type).spelling
        ids = self.unit.function_ids
        # the translated ones: a function whose address only untranslated code takes is
        # no value a pointer here can hold
        names = [n for n in ids if n in self.unit.signatures
                 and self.unit.defs[n].type.get_canonical().spelling == want]
        if not names:
            unsupported(e, f"a call through a pointer of type '{want}': no function of the "
                        "file of that type has its address taken")
        target = self.function_value(callee)
        if isinstance(known := evaluate_index(target), int):
            named = [n for n in names if ids[n] == known]
            if not named:
                unsupported(e, f"a call through a pointer of type '{want}' to a function of "
                            "another type")
            return self.call(e, discard, name=named[0])
        if len(names) == 1:
            return self.call(e, discard, name=names[0])
        carried = self.carried(e)
        for k, d in carried:
            self.current(k, d, e)
        before = dict(self.vals)
        result_types: list = []

        def arms(rest: list[str]) -> list[SSAValue]:
            if len(rest) == 1:
                value = self.call(e, True, name=rest[0])
                result_types[:] = [] if value is None else [value.type]
                scalars = [self.current(k, d, e) for k, d in carried]
                return ([] if value is None else [value]) + scalars
            number = self.const(ids[rest[0]], INDEX, e)
            eq = self.emit(arith.CmpiOp(target, number, "eq"), e).results[0]
            self.vals = dict(before)
            then = self.branch(lambda: arms(rest[:1]), e)
            self.vals = dict(before)
            other = self.branch(lambda: arms(rest[1:]), e)
            self.vals = before
            types = [*result_types, *(self.vals[k].type for k, _ in carried)]
            op = self.emit(scf.IfOp(eq, types, then, other), e)
            values = list(op.results)
            for (k, _), r in zip(carried, values[len(result_types):]):
                self.vals[k] = r
            return values

        values = arms(names)
        if not result_types:
            if not discard:
                unsupported(e, "the value of a void function called through a pointer")
            return None  # type: ignore[return-value]
        return values[0]


def evaluate_index(v: SSAValue) -> int | None:
    """The integer an `index` constant holds, else None."""
    op = v.owner
    if isinstance(op, arith.ConstantOp):
        return op.value.value.data  # type: ignore[union-attr]
    return None


def is_indirect(e) -> bool:
    """Whether the call `e` goes through a function pointer."""
    d = e.referenced
    return d is None or d.kind.name != "FUNCTION_DECL" or is_function_pointer(d.type)
