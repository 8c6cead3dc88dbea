"""Enzyme's calling convention: the `__enzyme_autodiff` calls of a file, the activity of
each argument (`enzyme_dup`, `enzyme_const`, `enzyme_out`, Enzyme's defaults), the
specialization a non-default activity gets, and Enzyme's function attributes
(`enzyme_inactive`, `enzyme_function_like`, ...).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    Float32Type,
    Float64Type,
    MemRefType,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Region

from tapeflow.diagnostics import ToolError

from .checkpoint import LOOP_ATTRIBUTES, LOOP_ENTRIES, loop_attribute_remark
from .allocators import ALLOCATION_LIKE
from .clang import ADDR_OF, children, error, strip_casts, unary_op, unsupported, walk, where
from .context import CONTEXT_CALLS
from .custom import REGISTER_GRADIENT
from .forward import FWD_ENTRY, is_forward, read_marker
from .libc import ARITY, MATH
from .split import AUGMENT_ENTRY, REVERSE_ENTRY, is_split, split_entry
from .types import (
    array_shape,
    as_struct,
    count_scalars,
    is_buffer_type,
    is_float,
    is_opaque,
    record_scalar,
    refuse_union,
    struct_layout,
    type_kind,
)


AUTODIFF_ATTR = "tapeflow.autodiff"
ENZYME_ENTRY = "__enzyme_autodiff"


# Declarations Enzyme's header provides; added only for the names the file leaves
# undeclared, so a file written for Enzyme compiles once its header include is removed.
ENZYME_DECLS = {
    "enzyme_dup": "extern int enzyme_dup;",
    "enzyme_dupnoneed": "extern int enzyme_dupnoneed;",
    "enzyme_const": "extern int enzyme_const;",
    "enzyme_out": "extern int enzyme_out;",
    ENZYME_ENTRY: f"extern double {ENZYME_ENTRY}(void *, ...);",
    FWD_ENTRY: f"extern double {FWD_ENTRY}(void *, ...);",
    "enzyme_allocated": "extern int enzyme_allocated;",
    "enzyme_tape": "extern int enzyme_tape;",
    "enzyme_context": "extern int enzyme_context;",
    AUGMENT_ENTRY: f"extern void *{AUGMENT_ENTRY}(void *, ...);",
    REVERSE_ENTRY: f"extern void {REVERSE_ENTRY}(void *, ...);",
}
_ENTRIES = (f"{ENZYME_ENTRY}, {FWD_ENTRY}, {AUGMENT_ENTRY}, {REVERSE_ENTRY} and the "
            "checkpointed and fixed-point loops")


def is_entry(name: str) -> bool:
    """Enzyme differentiates the calls of every function whose name contains
    __enzyme_autodiff (`__enzyme_autodiff_d`, one prototype per signature)."""
    return ENZYME_ENTRY in name


ANNOTATIONS = ("enzyme_dup", "enzyme_dupnoneed", "enzyme_const", "enzyme_out")
# Enzyme's function attributes that are honoured: `_noblock` is `enzyme_inactive` here (it
# only tells Enzyme's activity analysis not to stop at the call); `enzyme_nofree` and
# `enzyme_no_escaping_allocation` promise what TapeFlow's AD assumes anyway;
# `enzyme_notypeanalysis` (on a function or a global) skips Enzyme's type analysis, which
# TapeFlow has not: its types are the C declarations'.
_ENZYME_ATTRIBUTES = ("enzyme_inactive", "enzyme_inactive_noblock", "enzyme_nofree",
                      "enzyme_no_escaping_allocation", "enzyme_function_like",
                      "enzyme_notypeanalysis")


# `<enzyme/enzyme.h>`, shipped with the package (package data) and on the include path
# after the user's own `-I` directories.
INCLUDE_DIR = str(Path(__file__).resolve().parent / "include")
CONST_ARG_ATTR = "tapeflow.const"


# One letter per parameter in the name of a specialization (README "C kernels").
LETTER = {"dup": "d", "const": "c", "out": "a"}


def _outside_signature(fn, offset: int) -> bool:
    """Whether `offset` (of an attribute in function `fn`'s extent) is on the function:
    not inside its parameter list (a parameter's attribute) nor its body (a local's)."""
    depth, start = 0, None
    for t in fn.get_tokens():
        o = t.extent.start.offset
        if start is None and t.spelling == "(" and o > fn.location.offset:
            start = o
        if start is None:
            continue
        depth += {"(": 1, ")": -1}.get(t.spelling, 0)
        if depth == 0:
            if start < offset < o:
                return False  # in the parameter list
            break
    body = [k for k in fn.get_children() if k.kind.name == "COMPOUND_STMT"]
    return not any(b.extent.start.offset <= offset <= b.extent.end.offset for b in body)


def _struct_activity(t) -> str:
    """A struct by value is active when it has float fields (each field's gradient is
    a result, README "C kernels"), else constant."""
    return "out" if count_scalars(t, "f") else "const"


def _float_type(t: Attribute) -> bool:
    if isinstance(t, MemRefType):
        t = t.element_type
    return isinstance(t, (Float64Type, Float32Type))


def default_activity(fn) -> tuple[str, ...]:
    """TapeFlow's convention (the `_grad` of the primal itself): float arrays dup, float
    scalars active, the rest constant."""
    out = []
    for p in fn.get_arguments():
        if is_opaque(p.type):
            out.append("const")
        elif is_buffer_type(p.type):
            elem = array_shape(p.type, p)[1]
            out.append("dup" if is_float(elem) or type_kind(elem) == "RECORD" else "const")
        elif as_struct(p.type) is not None:
            out.append(_struct_activity(p.type))
        else:
            out.append("out" if is_float(p.type) else "const")
    return tuple(out)


class EnzymeCalls:
    """The `CFrontend` part that reads Enzyme's calls and attributes."""

    def _specialization(self, name: str, primal: func.FuncOp, activity, call) -> func.FuncOp:
        """`name(args) = primal(args)`, marked for AD, its `enzyme_const` float arguments
        `tapeflow.const`: its gradient `name_grad` has Enzyme's signature for `activity`."""
        types = primal.function_type
        block = Block(arg_types=types.inputs)
        loc = self._loc(call)
        for a, b in zip(block.args, primal.body.block.args):
            a.name_hint, a.location = b.name_hint, b.location
        op = func.CallOp(primal.sym_name.data, list(block.args), list(types.outputs))
        ret = func.ReturnOp(*op.results)
        op.location = ret.location = loc
        block.add_ops([op, ret])
        fn = func.FuncOp(name, (types.inputs, types.outputs), Region(block))
        fn.location = loc
        fn.attributes[AUTODIFF_ATTR] = UnitAttr()
        fn.arg_attrs = ArrayAttr(
            [
                DictionaryAttr(
                    {CONST_ARG_ATTR: UnitAttr()} if a == "const" and _float_type(t) else {}
                )
                for a, t in zip(self._argument_activity(primal, activity), types.inputs)
            ]
        )
        return fn

    def _argument_activity(self, primal: func.FuncOp, activity) -> list[str]:
        """One activity per IR argument: a struct parameter's applies to each of its
        arguments (its memrefs, or its fields by value)."""
        groups = self.signatures[primal.sym_name.data].groups
        return [a for a, g in zip(activity, groups, strict=True) for _ in g]

    def _enzyme_attributes(self, tu) -> None:
        """Enzyme's function attributes. Clang (without Enzyme's plugin) drops them with
        a warning at the attribute; each is given to the function declared around or
        right after it. `enzyme_inactive` (the result carries no derivative),
        `enzyme_nofree` (nothing to do here) and `enzyme_function_like("name")` (the
        function is the <math.h> function `name`) are honoured; any other `enzyme_*`
        attribute is an error, not ignored."""
        self.inactive: set[str] = set()
        self.function_like: dict[str, str] = {}
        found = []
        for d in tu.diagnostics:
            m = re.fullmatch(r"unknown attribute '(enzyme_\w+)' ignored", d.spelling)
            if d.severity == 2 and m and d.location.file:
                found.append((d.location, m.group(1)))
        if not found:
            return
        # every file-scope declaration (a struct's or typedef's attribute is theirs, not
        # the next function's)
        decls = [c for c in tu.cursor.get_children() if c.location.file]
        texts: dict[str, str] = {}
        for loc, attr in found:
            where = f"{loc.file.name}:{loc.line}:{loc.column}"
            file = loc.file.name
            owner = before = None
            for c in decls:
                if c.extent.start.file is None or c.extent.start.file.name != file:
                    continue
                if c.extent.start.offset <= loc.offset <= c.extent.end.offset or (
                    c.extent.start.offset > loc.offset
                ):
                    owner = c
                    break
                before = c
            if file not in texts:
                texts[file] = self.text if file == self.name else Path(file).read_text()
            if before is not None and (owner is None or owner.extent.start.offset > loc.offset):
                # After a declaration's extent (`typedef double real __attribute__((...));`,
                # whose extent ends before it): its own unless a `;` or `}` ends it first.
                gap = texts[file][before.extent.end.offset : loc.offset]
                if ";" not in gap and "}" not in gap:
                    owner = before
            if attr == "enzyme_notypeanalysis" and owner is not None and (
                owner.kind.name == "VAR_DECL"
            ):
                continue
            if attr in LOOP_ATTRIBUTES:
                self.remarks.append(loop_attribute_remark(where, attr))
                continue
            if attr not in _ENZYME_ATTRIBUTES:
                raise ToolError(f"{where}: unsupported C: the Enzyme attribute '{attr}'")
            if owner is None or owner.kind.name != "FUNCTION_DECL" or not _outside_signature(
                owner, loc.offset
            ):
                raise ToolError(
                    f"{where}: unsupported C: the Enzyme attribute '{attr}' on something other "
                    "than a function"
                )
            name = owner.spelling
            if attr in ("enzyme_inactive", "enzyme_inactive_noblock"):
                self.inactive.add(name)
            elif attr == "enzyme_function_like":
                pattern = r'enzyme_function_like\s*\(\s*"([^"]*)"\s*\)'
                m = re.match(pattern, texts[file][loc.offset :])
                self._function_like(where, owner, m.group(1) if m else None)

    def _enzyme_registrations(self, tu) -> None:
        """Enzyme's file-scope registrations: `void *__enzyme_function_like[2] = {(void *)f,
        "log1p"}` is `enzyme_function_like("log1p")` on `f`; custom gradients
        (`__enzyme_register_gradient_*`, custom.py) and allocators
        (`__enzyme_allocation_like*`, allocators.py) are read by their modules; any other
        `__enzyme_*` variable is an error, not ignored (its function would be
        differentiated as written)."""
        self.allocation_like, self.freeing_like = {}, {}
        for c in tu.cursor.get_children():
            if c.kind.name != "VAR_DECL" or not c.spelling.startswith("__enzyme_"):
                continue
            if c.spelling.startswith(REGISTER_GRADIENT):
                self.register_gradient(c)  # custom.py
                continue
            if c.spelling.startswith(ALLOCATION_LIKE):
                self.register_allocation_like(c)  # allocators.py
                continue
            if c.spelling != "__enzyme_function_like":
                unsupported(c, f"the Enzyme registration '{c.spelling}' (custom derivatives)")
            inits = [k for k in children(c) if k.kind.name == "INIT_LIST_EXPR"]
            items = [strip_casts(k) for k in children(inits[0])] if inits else []
            fn = items[0].referenced if items and items[0].kind.name == "DECL_REF_EXPR" else None
            like = items[1].spelling.strip('"') if len(items) == 2 and (
                items[1].kind.name == "STRING_LITERAL") else None
            if fn is None or fn.kind.name != "FUNCTION_DECL" or like is None:
                unsupported(c, "__enzyme_function_like other than {(void *)f, \"name\"}")
            self._function_like(where(c), fn, like)

    def _function_like(self, where: str, owner, like: str | None) -> None:
        """`owner` computes the <math.h> function `like`: calls of it are that op."""
        name = owner.spelling
        if like not in MATH:
            raise ToolError(
                f"{where}: unsupported C: enzyme_function_like({like or '?'}): only "
                f"<math.h> functions ({', '.join(sorted(MATH))})"
            )
        if len(list(owner.get_arguments())) != ARITY.get(like, 1):
            raise ToolError(
                f"{where}: enzyme_function_like(\"{like}\"): '{name}' does not take "
                f"{ARITY.get(like, 1)} argument(s) as {like} does"
            )
        self.function_like[name] = like

    def _enzyme_calls(self, defs) -> Iterator[tuple[object, object]]:
        for fn in defs.values():
            for c in walk(fn):
                name = c.spelling
                entry = is_entry(name) or is_forward(name) or is_split(name)
                loop = name in LOOP_ENTRIES  # checkpoint.py's
                if c.kind.name == "CALL_EXPR" and name in CONTEXT_CALLS:
                    self._context_call(c)
                    continue
                if c.kind.name == "CALL_EXPR" and name.startswith("__enzyme_") and not (
                    entry or loop
                ):
                    unsupported(c, f"the Enzyme function '{name}' (of Enzyme's "
                                 f"functions TapeFlow has {_ENTRIES})")
                if c.kind.name == "CALL_EXPR" and entry:
                    which = (FWD_ENTRY if is_forward(name) else split_entry(name)
                             if is_split(name) else ENZYME_ENTRY)
                    args = [a for a in c.get_arguments()]
                    if not args:
                        error(c, f"{which} needs the function to differentiate")
                    target = strip_casts(args[0])
                    if target.kind.name == "UNARY_OPERATOR" and unary_op(target) == ADDR_OF:
                        target = strip_casts(children(target)[0])  # `(void *)&f`
                    ref = target.referenced if target.kind.name == "DECL_REF_EXPR" else None
                    if ref is None or ref.kind.name != "FUNCTION_DECL":
                        unsupported(args[0], f"{which} of something other than a named function")
                    if ref.spelling not in defs:
                        error(args[0], f"{which}: function '{ref.spelling}' has no definition in this file")
                    yield c, defs[ref.spelling]

    def _activity(self, call, fn, args=None) -> tuple[str, ...]:
        """The activity of each parameter of `fn` in an Enzyme call (or of its `args`), by
        Enzyme's rules: an annotation applies to the next argument; unannotated, a pointer
        is enzyme_dup (its shadow follows it), a float scalar active, an integer constant."""
        args = list(call.get_arguments() if args is None else args)[1:]
        params = list(fn.get_arguments())
        out: list[str] = []
        i = 0
        name = fn.spelling
        while i < len(args):
            note, i = read_marker(args, i, ENZYME_ENTRY, ANNOTATIONS)
            if len(out) >= len(params):
                error(args[i], f"{ENZYME_ENTRY}: more arguments than '{name}' has parameters")
            param = params[len(out)]
            pname = f"argument '{param.spelling}' of '{name}'"
            refuse_union(param.type, args[i])
            if is_opaque(param.type):
                out.append(self._opaque_activity(note, args[i], pname, ENZYME_ENTRY))
                i += 1
            elif is_buffer_type(param.type):
                elem = array_shape(param.type, param)[1]
                if as_struct(elem) is not None and record_scalar(elem) is None:
                    struct_layout(elem, param)
                if note == "enzyme_out":
                    error(
                        args[i],
                        f"{ENZYME_ENTRY}: {pname} is a pointer: it is enzyme_dup or "
                        "enzyme_const, not enzyme_out"
                    )
                if note == "enzyme_const":
                    out.append("const")
                    i += 1
                    continue
                i += 2  # the primal and its shadow
                if i > len(args):
                    error(
                        call,
                        f"{ENZYME_ENTRY}: {pname} is {note or 'a pointer, so enzyme_dup'} but "
                        "has no shadow"
                    )
                # an integer array's shadow is ignored: it has no derivative
                out.append("dup" if is_float(elem) or type_kind(elem) == "RECORD" else "const")
            elif as_struct(param.type) is not None:
                out.append(self._struct_value_activity(param, note, args[i], pname))
                i += 1
            elif is_float(param.type):
                if note in ("enzyme_dup", "enzyme_dupnoneed"):
                    error(
                        args[i],
                        f"{ENZYME_ENTRY}: {pname} is a float scalar: it is active (enzyme_out "
                        f"or unannotated) or enzyme_const, not {note}"
                    )
                out.append("const" if note == "enzyme_const" else "out")
                i += 1
            else:
                if note not in (None, "enzyme_const"):
                    error(
                        args[i],
                        f"{ENZYME_ENTRY}: {pname} is an integer (constant for TapeFlow), so it "
                        f"must be enzyme_const or unannotated, not {note}",
                    )
                out.append("const")
                i += 1
        if len(out) != len(params):
            error(
                call,
                f"{ENZYME_ENTRY}: '{name}' has {len(params)} parameters, the call gives "
                f"{len(out)}"
            )
        return tuple(out)

    def _opaque_activity(self, note, arg, pname: str, entry: str) -> str:
        """A checkpointing scheme's object (types.OPAQUE): enzyme_const, as for
        Enzyme, which never differentiates it."""
        if note != "enzyme_const":
            error(arg, f"{entry}: {pname} is a checkpointing scheme's object: it is "
                  "enzyme_const")
        return "const"

    def _struct_value_activity(self, param, note, arg, pname: str) -> str:
        """A struct by value in an Enzyme call: active (its float fields' gradients are
        results) unless `enzyme_const`; it has no shadow, so not `enzyme_dup`."""
        if note in ("enzyme_dup", "enzyme_dupnoneed"):
            error(
                arg,
                f"{ENZYME_ENTRY}: {pname} is a struct by value: it is active (enzyme_out or "
                f"unannotated) or enzyme_const, not {note}"
            )
        return "const" if note == "enzyme_const" else _struct_activity(param.type)
