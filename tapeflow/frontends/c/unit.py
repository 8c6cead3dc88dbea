"""The translation-unit driver: `CFrontend` parses one C file, picks the functions to
translate (the targets of Enzyme calls or `functions=`, and their callees), builds each,
and adds the module's globals; `compile_c` is its entry point.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    IntAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, SSAValue

from tapeflow.diagnostics import ToolError

from .allocators import AllocationLike
from .arguments import TOOL_CLANG_ARGS
from .backjumps import rewrite_backward_gotos
from .builder import FunctionBuilder
from .checkpoint import marker_operands
from .clang import (
    ADDR_OF,
    binary_op,
    children,
    cindex,
    decl_key,
    error,
    evaluate,
    strip,
    strip_casts,
    unary_op,
    unsupported,
    walk,
)
from .context import CONTEXT_ATTR, ContextCalls, context_arguments
from .custom import CustomDerivatives
from .enzyme import (
    AUTODIFF_ATTR,
    ENZYME_DECLS,
    ENZYME_ENTRY,
    INCLUDE_DIR,
    LETTER,
    EnzymeCalls,
    default_activity,
    is_entry,
)
from .fnptrs import address_taken, referenced_functions
from .forward import ForwardCalls, is_forward
from .function import Function, void_element_type
from .headers import BUILTIN_DIR, BUILTIN_HEADERS, PRELUDE
from .split import SPLIT_ATTR, SplitCalls, check_allocated_tapes, is_split
from .trees import stored_buffers
from .types import (
    INDEX,
    array_shape,
    as_struct,
    count_scalars,
    element_type,
    is_buffer_type,
    is_float,
    is_int,
    is_opaque,
    memref_type,
    record_scalar,
    refuse_union,
    scalar_type,
    struct_layout,
    type_kind,
    value_types,
)


@dataclass
class CFrontend(
    EnzymeCalls, ForwardCalls, SplitCalls, ContextCalls, CustomDerivatives, AllocationLike
):
    """Translates one C file; `compile()` returns the module."""

    text: str
    name: str
    clang_args: Sequence[str] = ()
    functions: Sequence[str] = ()
    # function returning a pointer -> what it points into: ("param", k) or ("alloc",)
    pointer_results: dict[str, tuple] = field(default_factory=dict)
    # remarks (dropped output calls, asserts), printed once the file compiles: a refused
    # file gives its one `error:` line only
    remarks: list[str] = field(default_factory=list)

    def compile(self) -> ModuleOp:
        tu = self._parse()
        defs = self.defs = {}
        for c in tu.cursor.get_children():
            if c.kind.name == "FUNCTION_DECL" and c.is_definition():
                defs[c.spelling] = c
        for name in sorted(self.inactive & set(defs)):
            floats = {
                decl_key(p) for p in defs[name].get_arguments()
                if is_buffer_type(p.type) and is_float(array_shape(p.type, p)[1])
            }
            if stored_buffers(defs[name]) & floats:
                unsupported(
                    defs[name],
                    f"the enzyme_inactive function '{name}' writes float arrays (only a result "
                    "is made inactive)"
                )
        # function -> its activity signatures (one per parameter: dup/const/out), in order
        targets: dict[str, list[tuple[str, ...]]] = {}
        for name in self.functions:
            if name not in defs:
                raise ToolError(f"{self.name}: --function {name}: no function '{name}' is defined")
            targets[name] = [default_activity(defs[name])]
        calls: dict[tuple[str, tuple[str, ...]], object] = {}
        forward: dict[str, dict[tuple[str, ...], object]] = {}  # __enzyme_fwddiff's
        split: dict[tuple[str, tuple[str, ...]], list] = {}  # split mode's: (call, size)s
        contexts: dict[tuple[str, tuple[str, ...]], bool] = {}  # with enzyme_context
        for call, fn in self._enzyme_calls(defs):
            if is_forward(call.spelling):
                activity = self._forward_activity(call, fn)
                forward.setdefault(fn.spelling, {}).setdefault(activity, call)
                continue
            args, size = self._split_arguments(call, fn) if is_split(call.spelling) else (
                list(call.get_arguments()), None)
            args, context = context_arguments(call, args, ENZYME_ENTRY)
            activity = self._activity(call, fn, args)
            if is_split(call.spelling):
                split.setdefault((fn.spelling, activity), []).append((call, size))
            if contexts.setdefault((fn.spelling, activity), context) != context:
                unsupported(call, f"calls of '{fn.spelling}' with and without enzyme_context "
                            "(one activity, one gradient)")
            sigs = targets.setdefault(fn.spelling, [])
            if activity not in sigs:
                sigs.append(activity)
                calls[(fn.spelling, activity)] = call
        self.function_ids = {n: k for k, n in enumerate(address_taken(tu.cursor, defs))}
        own = [n for n, c in defs.items() if c.location.file and c.location.file.name == self.name
               and not self.registered_memory(n)]
        order = self._reachable([*targets, *forward] or own, defs)
        module = ModuleOp([])
        self.signatures = {n: self._signature(defs[n]) for n in order}
        self.variants: dict[tuple, str] = {}  # (function, view groups, offsets_at) -> name
        self.pending: list[tuple[tuple, str]] = []
        self.allocated: list[tuple[object, int, str]] = []  # enzyme_allocated sizes
        for n in order:
            fn = FunctionBuilder(self, self.signatures[n]).build()
            module.body.block.add_op(fn)
            self.mark_custom(n, fn)
            for activity in targets.get(n, []):
                if activity == default_activity(defs[n]):
                    fn.attributes[AUTODIFF_ATTR] = UnitAttr()
                    self._mark_split(fn, split.get((n, activity), []))
                    self._mark_context(fn, contexts.get((n, activity)))
                    continue
                name = f"{n}_{''.join(LETTER[a] for a in activity)}"
                if name in defs:
                    error(
                        calls[(n, activity)],
                        f"{ENZYME_ENTRY}: the specialization '{name}' of '{n}' for this "
                        "activity is already a function of the file"
                    )
                spec = self._specialization(name, fn, activity, calls[(n, activity)])
                self._mark_split(spec, split.get((n, activity), []))
                self._mark_context(spec, contexts.get((n, activity)))
                module.body.block.add_op(spec)
            if n in forward:
                self._mark_forward(module, fn, forward[n])
        while self.pending:  # variants of callees that get pointers into arrays
            (n, views, offsets_at), name = self.pending.pop(0)
            fn = FunctionBuilder(
                self, self.signatures[n], views=views, name=name, offsets_at=offsets_at
            ).build()
            module.body.block.add_op(fn)
            self.mark_custom(name, fn)
        for g in reversed(list(getattr(self, "global_ops", {}).values())):
            module.body.block.insert_op_before(g, module.body.block.first_op)
        return module

    def _mark_split(self, fn, calls: list) -> None:
        """`fn` is split-mode's target too: `tapeflow.split`, and its calls' tape sizes."""
        if calls:
            fn.attributes[SPLIT_ATTR] = UnitAttr()
        self.allocated += [(c, size, fn.sym_name.data) for c, size in calls if size is not None]

    def _mark_context(self, fn, context: bool | None) -> None:
        if context:
            fn.attributes[CONTEXT_ATTR] = UnitAttr()

    def global_buffer(self, c, d) -> SSAValue:
        """A fresh `memref.get_global` of `d` (not inserted), creating the module's
        `memref.global` for it on first use: its C initializer (constants) or zeros."""
        if not hasattr(self, "global_ops"):
            self.global_ops: dict[str, memref.GlobalOp] = {}
        name = d.spelling
        if name not in self.global_ops:
            defn = d.get_definition() or d
            if defn.storage_class.name == "EXTERN" and not any(
                k.kind.is_expression() for k in children(defn)
            ):
                unsupported(c, f"the extern global '{name}' (it has no definition in this file)")
            if type_kind(defn.type.get_canonical()) == "RECORD":
                unsupported(c, f"the global struct or union '{name}'")
            if is_buffer_type(defn.type):
                if type_kind(defn.type) != "CONSTANTARRAY":
                    unsupported(c, f"the global '{name}' is a pointer (only arrays and scalars)")
                mtype = memref_type(defn.type, defn)
                shape, elem = array_shape(defn.type, defn)
            else:
                elem = defn.type
                mtype = MemRefType(element_type(elem, defn), [1])
                shape = [1]
            if type_kind(elem.get_canonical()) not in ("DOUBLE", "FLOAT") and not is_int(elem):
                unsupported(c, f"the global '{name}' of type '{defn.type.spelling}' (only double, float and integer scalars and arrays)")
            init = [k for k in children(defn) if k.kind.is_expression()]
            if is_buffer_type(defn.type):  # the other expressions are the array's sizes
                init = [k for k in init[-1:] if strip(k).kind.name == "INIT_LIST_EXPR"]
            total = 1
            for n in shape:
                total *= n
            values: list[int | float] = [0] * total
            if init and is_buffer_type(defn.type):
                flat = FunctionBuilder.flatten_init(None, strip(init[-1]), shape)  # type: ignore[arg-type]
                items = sorted(flat.items())
            else:
                items = [(0, init[-1])] if init else []
            for pos, item in items:
                v = evaluate(item)
                if v is None:
                    unsupported(item, f"the initializer of the global '{name}' is not a constant")
                values[pos] = v
            kind = float if is_float(elem) else int
            tensor = TensorType(mtype.element_type, mtype.get_shape())  # upstream wants a tensor
            dense = DenseIntOrFPElementsAttr.from_list(tensor, [kind(v) for v in values])  # type: ignore[arg-type]
            op = memref.GlobalOp.get(StringAttr(name), mtype, dense)
            op.location = self._loc(defn)
            self.global_ops[name] = op
        ref = memref.GetGlobalOp(name, self.global_ops[name].type).results[0]
        ref.name_hint = name
        return ref

    def _parse(self):
        ci = cindex()
        args = ["-x", "c", "-std=gnu11", "-isystem", BUILTIN_DIR, *self.clang_args,
                "-isystem", INCLUDE_DIR]
        builtins = [(f"{BUILTIN_DIR}/{n}", text) for n, text in BUILTIN_HEADERS.items()]
        prelude = ""
        for attempt in range(2):
            unsaved = [(self.name, self.text), *builtins]
            if prelude:
                unsaved.append((PRELUDE, prelude))
            tu = ci.Index.create().parse(self.name, args=args, unsaved_files=unsaved)
            missing = [
                n
                for n in ENZYME_DECLS
                if any(
                    d.severity >= 3 and "undeclared" in d.spelling and f"'{n}'" in d.spelling
                    for d in tu.diagnostics
                )
            ]
            if attempt == 0 and missing:
                # Only the declarations the file lacks: a user's own (possibly different)
                # declaration of the others must not conflict with ours.
                prelude = "\n".join(ENZYME_DECLS[n] for n in missing) + "\n"
                args = [*args, "-include", PRELUDE]
                continue
            break
        self._parsed_with = (args, unsaved[1:])
        errors = [d for d in tu.diagnostics if d.severity >= 3]
        if not errors and (rewritten := rewrite_backward_gotos(tu, self.text, self.name)):
            self.text, notes = rewritten
            self.remarks += notes
            return self._parse()  # the rewrite has no backward goto left
        if not errors:
            self._enzyme_attributes(tu)
            self._enzyme_registrations(tu)
        if errors:
            # The first error only: one located line (later ones often follow from it, and
            # Clang's "too many errors emitted" has no location).
            loc = errors[0].location
            where = f"{loc.file.name}:{loc.line}:{loc.column}" if loc.file else self.name
            raise ToolError(f"{where}: {errors[0].spelling}")
        return tu

    def constant(self, expr: str, c) -> int:
        """The integer constant expression `expr` (C text) as Clang evaluates it at the end
        of the file, with its macros: a loop hint's count that names a macro."""
        args, others = self._parsed_with
        probe = f"{self.text}\nenum {{ __tapeflow_constant = ({expr}) }};\n"
        unsaved = [(self.name, probe), *others]
        tu = cindex().Index.create().parse(self.name, args=args, unsaved_files=unsaved)
        if not any(x.severity >= 3 for x in tu.diagnostics):
            for d in tu.cursor.get_children():
                for k in d.get_children() if d.kind.name == "ENUM_DECL" else ():
                    if k.spelling == "__tapeflow_constant":
                        return k.enum_value
        error(c, f"'{expr}' is not an integer constant")

    def _loc(self, c) -> FileLineColLoc:
        loc = c.location
        name = loc.file.name if loc.file else self.name
        return FileLineColLoc(StringAttr(name), IntAttr(loc.line), IntAttr(loc.column))

    def view_variant(self, name: str, at: tuple[int, ...], c) -> str:
        """The function `name_at<i>[_<j>]`: `name` whose pointer parameters `at` are views
        into the caller's arrays, their element offsets as extra trailing `index`
        arguments (so the AD, inlining it, sees the caller's arrays). A custom derivative
        of `name` is the variant's too (`custom_variant`)."""
        key = (name, tuple((n,) for n in at), None)
        if key not in self.variants:
            variant = self.variant(key, f"{name}_at{'_'.join(map(str, at))}")
            self.custom_variant(name, at, variant, c)
        return self.variants[key]

    def variant(self, key: tuple, variant: str) -> str:
        """`variant`, built later (`compile`), of the function `key[0]` with the view
        parameters `key[1]` (each group sharing one offset) and the offsets after its
        first `key[2]` parameters (None: last)."""
        if key not in self.variants:
            if variant in self.defs:
                error(
                    self.defs[variant],
                    f"'{variant}' is the name of the variant of '{key[0]}' for pointers "
                    "into arrays",
                )
            self.variants[key] = variant
            self.pending.append((key, variant))
        return self.variants[key]

    def dropped(self, name: str) -> bool:
        """Whether calls to `name` are not translated as calls: a function
        `enzyme_function_like` a <math.h> one (its op instead), or an `enzyme_inactive`
        one without result (it cannot change the differentiated result)."""
        if name in self.function_like:
            return True
        return name in self.inactive and type_kind(self.defs[name].result_type) == "VOID"

    def _reachable(self, roots: list[str], defs) -> list[str]:
        """`roots` and every function they call, in source order (recursive ones too: the
        AD keeps their calls, `tapeflow-autodiff`'s kept calls)."""
        seen: set[str] = set()

        def visit(name: str, stack: list[str]) -> None:
            if name in seen or name in stack:
                return
            runtime = marker_operands(defs[name])  # Enzyme's runtime's: never called
            for c in walk(defs[name], lambda k: (k.extent.start.offset, k.hash) in runtime):
                for f in referenced_functions(c, self.function_ids):  # through pointers
                    visit(f, [*stack, name])
                if c.kind.name == "CALL_EXPR":
                    callee = c.referenced
                    if (
                        callee is not None
                        and callee.spelling in defs
                        and not is_entry(callee.spelling)
                        and not self.dropped(callee.spelling)
                        and not self.registered_memory(callee.spelling)
                    ):
                        visit(callee.spelling, [*stack, name])
            for f in self.custom_roots(name):  # a custom derivative's augment and gradient
                visit(f, [*stack, name])
            seen.add(name)

        for r in roots:
            visit(r, [])
        return [n for n in defs if n in seen]

    def _signature(self, c) -> Function:
        params = list(c.get_arguments())
        if c.spelling in getattr(self, "tape_params", ()):
            params = params[:-1]  # a custom gradient's NULL tape (custom.py)
        groups = [self._param_types(c, p) for p in params]
        types = [t for g in groups for t in g]
        rt = c.result_type
        refuse_union(rt, c)
        if c.spelling in getattr(self, "null_tapes", ()):
            results = []  # a custom augment's NULL tape (custom.py)
        elif type_kind(rt) == "POINTER":
            results = [self.pointer_result(c)]
        else:
            results = [] if type_kind(rt) == "VOID" else value_types(rt, c)
        return Function(c, c.spelling, params, types, results, groups)

    def _param_types(self, c, p) -> list[Attribute]:
        """A parameter's IR arguments: one, except for structs (README "C kernels"): a
        pointer to a struct with integer fields is its float memref and its integer
        memref, a struct by value one scalar per field."""
        t = p.type
        if is_opaque(t):  # a checkpointing scheme's host object: never read
            return []
        refuse_union(t, p)
        if type_kind(t) == "POINTER" and type_kind(t.get_pointee()) == "VOID":
            elem = void_element_type(c, p)  # `void *p` the function converts to `double *`
            return [MemRefType(element_type(elem, p), [DYNAMIC_INDEX])]
        if is_buffer_type(t):
            shape, elem = array_shape(t, p)
            if as_struct(elem) is not None and record_scalar(elem) is None:
                if len(shape) != 1:
                    unsupported(p, f"arrays of '{elem.spelling}' with more than one dimension")
                scalar, ints, pointers = struct_layout(elem, p)
                types = [] if scalar is None else [(scalar, count_scalars(elem, "f"))]
                types += [(i64, count_scalars(elem, "i"))] if ints else []
                return [
                    MemRefType(et, [shape[0] if shape[0] == DYNAMIC_INDEX else shape[0] * n])
                    for et, n in types
                ] + [MemRefType(et, [DYNAMIC_INDEX]) for et in pointers]
            return [memref_type(t, p)]
        if as_struct(t) is not None:
            return value_types(t, p)
        return [scalar_type(t, p)]

    def pointer_result(self, fn) -> Attribute:
        """The IR result of a function returning a pointer, by what it points into (read
        from the C): into its parameter `k`, the element offset (an `index`; the caller
        keeps its own array, so the AD sees the aliasing exactly); a buffer it allocates,
        that memref (a new array, aliasing nothing)."""
        name = fn.spelling
        if name in self.functions or name in self._targets():
            unsupported(fn, f"differentiating '{name}', which returns a pointer")
        body = next(k for k in fn.get_children() if k.kind.name == "COMPOUND_STMT")
        returns = [r for r in walk(body) if r.kind.name == "RETURN_STMT"]
        stmts = children(body)
        if len(returns) != 1 or not stmts or stmts[-1] != returns[0] or not children(returns[0]):
            unsupported(fn, f"'{name}' returns a pointer other than by one 'return' at its end")
        origin = self.points_into(children(returns[0])[0], fn, set())
        self.pointer_results[name] = origin
        if origin[0] == "param":
            return INDEX
        shape, elem = array_shape(fn.result_type, fn)
        return MemRefType(element_type(elem, fn), [DYNAMIC_INDEX])

    def _targets(self) -> set[str]:
        return {fn.spelling for _, fn in self._enzyme_calls(self.defs)}

    def points_into(self, e, fn, seen: set) -> tuple:
        """What the pointer expression `e` of function `fn` points into: ("param", k),
        ("alloc",) (a malloc of `fn`'s own), or an error."""
        c = strip_casts(e)
        k = c.kind.name
        if k == "BINARY_OPERATOR" and binary_op(c) in ("+", "-"):
            a, b = children(c)
            return self.points_into(a if type_kind(strip(a).type) == "POINTER" else b, fn, seen)
        if k == "UNARY_OPERATOR" and unary_op(c) == ADDR_OF:
            inner = strip(children(c)[0])
            while inner.kind.name == "ARRAY_SUBSCRIPT_EXPR":
                inner = strip(children(inner)[0])
            return self.points_into(inner, fn, seen)
        if self.allocates(c):
            return ("alloc",)
        if k == "CALL_EXPR" and c.spelling in self.defs and type_kind(c.type) == "POINTER":
            callee = self.defs[c.spelling]
            if c.spelling not in self.pointer_results:
                self._signature(callee)
            origin = self.pointer_results[c.spelling]
            if origin[0] == "param":
                return self.points_into(list(c.get_arguments())[origin[1]], fn, seen)
            return origin
        if k == "DECL_REF_EXPR" and c.referenced is not None:
            d = c.referenced
            params = [decl_key(p) for p in fn.get_arguments()]
            if decl_key(d) in params:
                return ("param", params.index(decl_key(d)))
            init = [x for x in children(d) if x.kind.is_expression()]
            if d.kind.name == "VAR_DECL" and type_kind(d.type) == "POINTER" and init and decl_key(d) not in seen:
                return self.points_into(init[-1], fn, seen | {decl_key(d)})
            if d.kind.name == "VAR_DECL" and type_kind(d.type) != "POINTER":
                unsupported(e, f"returning a pointer to the local array '{d.spelling}'")
        unsupported(e, "a returned pointer that is not into a parameter or a malloc of the function")


def compile_c(
    text: str,
    name: str,
    clang_args: Sequence[str] = (),
    functions: Sequence[str] = (),
    optimize: bool = True,
) -> ModuleOp:
    """The module for C source `text` (file `name`), cleaned up as the C path does before
    AD (`optimize.optimize`; `optimize=False`: the translation as is); errors are
    `ToolError`s. Its remarks go to stderr once it compiles."""
    unit = CFrontend(text, name, [*TOOL_CLANG_ARGS, *clang_args], functions)
    module = unit.compile()
    module.verify()
    if optimize:
        from .optimize import optimize as clean_up

        clean_up(module)
        module.verify()
    check_allocated_tapes(module, unit.allocated)
    sys.stderr.write("".join(unit.remarks))
    return module
