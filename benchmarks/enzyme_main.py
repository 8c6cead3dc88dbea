"""Runs an Enzyme test file's own `main` with TapeFlow's gradients, so that its APPROX_EQ
checks decide (`enzyme_corpus.py --check --main`).

    python benchmarks/enzyme_main.py FILE.c FILE.mlir [-I DIR ...]

The file is compiled natively by the system C compiler (`cc`, its `main` renamed) into a
shared library whose `__enzyme_autodiff` is a shim: it reads the call's arguments (by
the file's prototype, or for a variadic one by the types the call passes) and hands them
to Python, which runs `@F_grad` of `FILE.mlir` (what `tapeflow-cc` made of the file) in
TapeFlow's interpreter on the C memory itself (NumPy views of the arrays, sized from the
call site: `enzyme_corpus.call_sites`) and returns the first active scalar's gradient.
`main` then runs natively: APPROX_EQ prints `Assertion Failed` and aborts when a value
is off (the process ends with SIGABRT); else the last line on stdout is `passed: N
APPROX_EQ in the file` or `not run: why`.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from enzyme_corpus import MARKERS, call_sites  # noqa: E402

SHIM = """
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
typedef union { void *p; long long i; double d; } tf_arg;
double (*tf_callback)(void *, tf_arg *);
void *tf_fns[64];
const char *tf_kinds[64];
int tf_n;
__attribute__((weak)) int enzyme_dup, enzyme_dupnoneed, enzyme_const, enzyme_out;
static int tf_find(void *f) {
  for (int k = 0; k < tf_n; k++)
    if (tf_fns[k] == f) return k;
  fprintf(stderr, "error: __enzyme_autodiff of a function without a known call\\n");
  exit(3);
}
"""

VARIADIC = """
RET __enzyme_autodiff(void *f, ...) {
  tf_arg a[64];
  const char *kinds = tf_kinds[tf_find(f)];
  va_list ap;
  va_start(ap, f);
  for (int n = 0; kinds[n]; n++) {
    if (kinds[n] == 'p') a[n].p = va_arg(ap, void *);
    else if (kinds[n] == 'i') a[n].i = va_arg(ap, int);
    else if (kinds[n] == 'l') a[n].i = va_arg(ap, long long);
    else a[n].d = va_arg(ap, double);
  }
  va_end(ap);
  RETURN tf_callback(f, a);
}
"""


DTYPES = {"f64": np.float64, "f32": np.float32, "i64": np.int64, "i32": np.int32,
          "i16": np.int16, "i8": np.int8, "index": np.int64}
"""The element types of the memrefs tapeflow-cc makes of C arrays."""


def _kind(t: Any) -> str:
    """The shim's letter for an argument of C type `t` (after default promotions)."""
    name = t.get_canonical().kind.name
    if name in ("POINTER", "CONSTANTARRAY", "INCOMPLETEARRAY", "VARIABLEARRAY"):
        return "p"
    if name in ("FLOAT", "DOUBLE"):
        return "d"
    if name in ("LONG", "ULONG", "LONGLONG", "ULONGLONG"):
        return "l"
    if name in ("INT", "UINT", "SHORT", "USHORT", "CHAR_S", "CHAR_U", "SCHAR", "UCHAR", "BOOL"):
        return "i"
    raise ValueError(f"an argument of type {t.spelling}")


def shim_and_calls(path: Path, includes: list[str]) -> tuple[str, dict[str, str]]:
    """The shim's C text for the file's declaration of `__enzyme_autodiff`, and the
    argument letters of each differentiated function's calls (after the function)."""
    from tapeflow.frontends.c.clang import cindex, strip_casts, walk
    from tapeflow.frontends.c.enzyme import INCLUDE_DIR

    args = ["-x", "c", "-std=gnu11", *(f"-I{i}" for i in includes), "-isystem", INCLUDE_DIR]
    tu = cindex().Index.create().parse(str(path), args=args)
    calls: dict[str, str] = {}
    decl = None
    for call in walk(tu.cursor):
        if call.kind.name != "CALL_EXPR" or call.spelling != "__enzyme_autodiff":
            continue
        decl = call.referenced
        given = list(call.get_arguments())
        target = strip_casts(given[0]).referenced if given else None
        if target is None or target.kind.name != "FUNCTION_DECL":
            raise ValueError("__enzyme_autodiff of something other than a named function")
        kinds = "".join(_kind(a.type) for a in given[1:])
        if calls.setdefault(target.spelling, kinds) != kinds:
            raise ValueError(f"calls of '{target.spelling}' with different argument types")
    if decl is None:
        raise ValueError("no call of __enzyme_autodiff")
    result = decl.result_type.get_canonical().kind.name
    ret = {"DOUBLE": "double", "FLOAT": "float", "VOID": "void"}.get(result)
    if ret is None:
        raise ValueError(f"__enzyme_autodiff returns {decl.result_type.spelling}")
    back = "" if ret == "void" else f"return ({ret})"
    fixed = list(decl.type.argument_types())
    if decl.type.is_function_variadic() and len(fixed) > 1:
        raise ValueError("a variadic __enzyme_autodiff with parameters after the function")
    if decl.type.is_function_variadic() or not fixed:
        return SHIM + VARIADIC.replace("RETURN", back).replace("RET", ret), calls
    # A prototype with parameters: the shim has the same ones (the call converts to them).
    c_types = {"p": "void *", "d": "double", "l": "long long", "i": "int"}
    decls = [("float" if t.get_canonical().kind.name == "FLOAT" else c_types[_kind(t)])
             + f" a{n}" for n, t in enumerate(fixed)]  # fmt: skip
    body = "".join(f"  a[{n - 1}].{'i' if k in 'il' else k} = a{n};\n"
                   for n, k in enumerate(_kind(t) for t in fixed) if n)  # fmt: skip
    text = f"{ret} __enzyme_autodiff({', '.join(decls)}) {{\n  tf_arg a[64];\n{body}" \
        f"  {back} tf_callback(a0, a);\n}}\n"
    calls = {name: "".join(_kind(t) for t in fixed[1:]) for name in calls}
    return SHIM + text, calls


class Gradients:
    """The shim's callback: `@F_grad` on the C memory of one `__enzyme_autodiff` call."""

    def __init__(self, mlir: Path, path: Path, includes: list[str], calls: dict[str, str],
                 lib: Any) -> None:  # fmt: skip
        from xdsl.passes import PassPipeline

        from tapeflow import runner
        from tapeflow.registry import get_all_passes, make_context
        from tapeflow.tools.check import GRADIENT

        self.module = runner.load_module(mlir.read_text(), str(mlir))
        PassPipeline.parse_spec(get_all_passes(), GRADIENT).apply(make_context(), self.module)
        self.sites, self.calls = call_sites(path, includes), calls
        self.notes = _notes(path, includes)
        self.records = _records(path, includes)
        self.names = {ctypes.c_void_p.in_dll(lib, f"tf_addr_{n}").value: n for n in calls}

    def __call__(self, f: int, argv: Any) -> float:
        try:
            return self._run(self.names[f], argv)
        except Exception as e:  # noqa: BLE001 - one line, then the process ends
            print(f"not run: {self.names.get(f, f)}: {type(e).__name__}: {e}"[:300], flush=True)
            os._exit(4)

    def _run(self, name: str, argv: Any) -> float:
        from xdsl.dialects.builtin import MemRefType

        from tapeflow import runner
        from tapeflow.convention import is_float_type, shadowed
        from tapeflow.eval.kernels import marked_functions

        kinds, site = self.calls[name], self.sites[name]
        marked = marked_functions(self.module)
        # C parameters in order: (pointer value, shadow pointer or None) or a scalar
        params: list[Any] = []
        letters = ""
        n = 0
        while n < len(kinds) and len(params) < len(site):
            note = self.notes.get(name, {}).get(n)
            if note is not None:
                n += 1
            if kinds[n] == "p":
                if note == "enzyme_const":
                    params.append((argv[n].p, None))
                    letters += "c"
                    n += 1
                else:
                    params.append((argv[n].p, argv[n + 1].p))
                    letters += "d"
                    n += 2
            else:
                params.append(argv[n].d if kinds[n] == "d" else argv[n].i)
                letters += "c" if note == "enzyme_const" or kinds[n] != "d" else "a"
                n += 1
        entry = next((m for m in marked if m in (f"{name}_{letters}", name)), None)
        if entry is None:
            raise ValueError(f"no differentiated function for {name} ({letters})")
        primal = runner.find_function(self.module, entry)
        types = list(primal.function_type.inputs.data)
        with_shadow = shadowed(primal)
        records = self.records.get(name, {})
        args: list[Any] = []
        after: list[Any] = []  # copies of struct fields back into the C memory
        p = 0  # the IR argument
        for c_index, (given, size) in enumerate(zip(params, site)):
            if p >= len(types):
                raise ValueError(f"@{entry} takes {len(types)} arguments, the call more")
            if c_index in records:  # its memrefs of floats, integers and pointer fields
                for view, shadow in _struct_memory(records[c_index], given, types[p:], after):
                    args.append(view)
                    if p in with_shadow:
                        args.append(shadow)
                    p += 1
                continue
            t = types[p]
            p += 1
            if not isinstance(t, MemRefType):
                args.append(given)
                continue
            shape = [d if d >= 0 else -1 for d in t.get_shape()]
            if any(d < 0 for d in shape):
                count = size[1] if isinstance(size, tuple) else 1 if isinstance(size, int) else None
                if count is None or len(shape) != 1:
                    raise ValueError(f"argument {p - 1} of {name}: its length is not known")
                shape = [count]
            dtype = DTYPES[str(t.get_element_type())]
            views = [np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(
                np.ctypeslib.as_ctypes_type(dtype))), shape=tuple(shape))
                for ptr in given if ptr is not None]  # fmt: skip
            args.append(views[0])
            if p - 1 in with_shadow:
                args.append(views[1])
        if p != len(types):
            raise ValueError(f"@{entry} takes {len(types)} arguments, the call {p}")
        seeds = [1.0 for t in primal.function_type.outputs.data if is_float_type(t)]
        run = runner.run_function(self.module, f"{entry}_grad", [*args, *seeds])
        for write_back in after:
            write_back()
        return float(run.results[0]) if run.results else 0.0


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("file", type=Path)
    p.add_argument("mlir", type=Path)
    p.add_argument("-I", dest="includes", action="append", default=[])
    args = p.parse_args(argv)
    try:
        shim, calls = shim_and_calls(args.file, args.includes)
    except ValueError as e:
        print(f"not run: {e}")
        return 0
    checks = len(re.findall(r"\bAPPROX_EQ\s*\(", args.file.read_text()))
    if shutil.which("cc") is None:
        print("not run: no C compiler (cc)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "shim.c").write_text(shim)
        # The file itself, then the address of each function it differentiates (which
        # may be static): tf_addr_<name>, what the shim's callback is told.
        unit = Path(tmp) / "unit.c"
        unit.write_text(f'#include "{args.file.resolve()}"\n' + "".join(
            f"void *tf_addr_{n} = (void *){n};\n" for n in calls))
        lib_path = Path(tmp) / "lib.so"
        cmd = ["cc", "-shared", "-fPIC", "-O0", "-w", "-Dmain=tf_main", str(unit),
               str(Path(tmp) / "shim.c"), *(f"-I{i}" for i in args.includes), "-lm", "-o",
               str(lib_path)]  # fmt: skip
        cc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if cc.returncode != 0:
            first = next((ln for ln in cc.stderr.splitlines() if "error" in ln), "cc failed")
            print(f"not run: cc: {first}"[:300])
            return 0
        lib = ctypes.CDLL(str(lib_path))
        if not hasattr(lib, "tf_main"):
            print("not run: the file has no main")
            return 0
        gradients = Gradients(args.mlir, args.file, args.includes, calls, lib)
        callback_type = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p)
        arg_type = type("tf_arg", (ctypes.Union,), {"_fields_": [
            ("p", ctypes.c_void_p), ("i", ctypes.c_longlong), ("d", ctypes.c_double)]})
        callback = callback_type(lambda f, a: gradients(f, ctypes.cast(
            a, ctypes.POINTER(arg_type))))
        ctypes.c_void_p.in_dll(lib, "tf_callback").value = ctypes.cast(
            callback, ctypes.c_void_p).value
        names = list(calls)
        fns = (ctypes.c_void_p * 64).in_dll(lib, "tf_fns")
        kinds = (ctypes.c_char_p * 64).in_dll(lib, "tf_kinds")
        keep = [calls[n].encode() for n in names]
        for k, n in enumerate(names):
            fns[k] = ctypes.c_void_p.in_dll(lib, f"tf_addr_{n}").value
            kinds[k] = keep[k]
        ctypes.c_int.in_dll(lib, "tf_n").value = len(names)
        sys.stdout.flush()
        argv_c = (ctypes.c_char_p * 2)(b"main", None)
        lib.tf_main(1, argv_c)  # its status is not read: Enzyme's mains often omit it
    print(f"passed: {checks} APPROX_EQ in the file")
    return 0


def _records(path: Path, includes: list[str]) -> dict[str, dict[int, Any]]:
    """Each differentiated function's pointers to structs that are not of floats only:
    parameter index -> the struct (several memrefs in the IR: `_struct_memory`)."""
    from tapeflow.frontends.c.clang import cindex, strip_casts, walk
    from tapeflow.frontends.c.enzyme import INCLUDE_DIR
    from tapeflow.frontends.c.types import as_struct, is_struct_pointer, record_scalar

    args = ["-x", "c", "-std=gnu11", *(f"-I{i}" for i in includes), "-isystem", INCLUDE_DIR]
    tu = cindex().Index.create().parse(str(path), args=args)
    out: dict[str, dict[int, Any]] = {}
    for call in walk(tu.cursor):
        if call.kind.name == "CALL_EXPR" and call.spelling == "__enzyme_autodiff":
            target = strip_casts(next(iter(call.get_arguments()))).referenced
            out[target.spelling] = {
                n: as_struct(a.type.get_pointee()) for n, a in enumerate(target.get_arguments())
                if is_struct_pointer(a.type) and record_scalar(a.type.get_pointee()) is None
            }
    return out  # each clang type keeps its translation unit alive


def _struct_memory(record: Any, given: Any, types: list[Any], after: list[Any]) -> list[Any]:
    """(view, shadow view) per memref of a pointer to one struct `record` (tapeflow-cc's
    layout: its floats, its integers, then each pointer field's array): the scalar fields
    copied out of the C struct (and its shadow's) and back after the run (`after`), a
    pointer field a view of what it points to (as long as its malloc'ed block)."""
    from tapeflow.frontends.c.types import is_float, is_int, leaf_kind, scalar_leaves

    libc = ctypes.CDLL(None)
    libc.malloc_usable_size.restype = ctypes.c_size_t
    libc.malloc_usable_size.argtypes = [ctypes.c_void_p]
    leaves = []
    for path, t in scalar_leaves(record):
        if len(path) != 1:
            raise ValueError(f"the nested field {'.'.join(map(str, path))} of {record.spelling}")
        leaves.append((record.get_offset(path[0]) // 8, t))

    def cell(base: int, off: int, t: Any) -> Any:
        dtype = np.float64 if t.kind.name == "DOUBLE" else np.float32 if is_float(t) else {
            1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}[t.get_size()]
        ptr = ctypes.cast(base + off, ctypes.POINTER(np.ctypeslib.as_ctypes_type(dtype)))
        return np.ctypeslib.as_array(ptr, shape=(1,))

    def copied(bases: Any, kind: Any, t: Any) -> tuple[Any, Any]:
        mine = [(off, lt) for off, lt in leaves if kind(lt)]
        dtype = DTYPES[str(t.get_element_type())]
        views = []
        for base in bases:
            if base is None:
                views.append(None)
                continue
            view = np.array([cell(base, off, lt)[0] for off, lt in mine], dtype=dtype)
            after.append(lambda view=view, base=base: [
                cell(base, off, lt).__setitem__(0, v) for (off, lt), v in zip(mine, view)])
            views.append(view)
        return views[0], views[1]

    out, n = [], 0
    if any(is_float(lt) for _, lt in leaves):
        out.append(copied(given, is_float, types[n]))
        n += 1
    if any(is_int(lt) for _, lt in leaves):
        out.append(copied((given[0], None), is_int, types[n]))
        n += 1
    for off, lt in leaves:
        if leaf_kind(lt) != "p":
            continue
        dtype = DTYPES[str(types[n].get_element_type())]
        n += 1
        views = []
        for base in given:
            target = ctypes.c_void_p.from_address(base + off).value if base else None
            if not target:
                raise ValueError(f"a null pointer field of {record.spelling}")
            count = libc.malloc_usable_size(target) // np.dtype(dtype).itemsize
            ptr = ctypes.cast(target, ctypes.POINTER(np.ctypeslib.as_ctypes_type(dtype)))
            views.append(np.ctypeslib.as_array(ptr, shape=(count,)))
        out.append((views[0], views[1]))
    return out


def _notes(path: Path, includes: list[str]) -> dict[str, dict[int, str]]:
    """Each differentiated function's markers: argument index (after the function) of
    the argument a marker precedes -> the marker."""
    from tapeflow.frontends.c.clang import cindex, strip_casts, walk
    from tapeflow.frontends.c.enzyme import INCLUDE_DIR

    args = ["-x", "c", "-std=gnu11", *(f"-I{i}" for i in includes), "-isystem", INCLUDE_DIR]
    tu = cindex().Index.create().parse(str(path), args=args)
    notes: dict[str, dict[int, str]] = {}
    for call in walk(tu.cursor):
        if call.kind.name == "CALL_EXPR" and call.spelling == "__enzyme_autodiff":
            given = [strip_casts(a) for a in call.get_arguments()]
            target = given[0].referenced.spelling
            notes[target] = {n: g.spelling for n, g in enumerate(given[1:])
                             if g.kind.name == "DECL_REF_EXPR" and g.spelling in MARKERS}
    return notes


if __name__ == "__main__":
    sys.exit(main())
