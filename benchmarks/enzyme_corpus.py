"""How many C files of a directory `tapeflow-cc` accepts, and why it refuses the others.

    python benchmarks/enzyme_corpus.py DIR [-I INCLUDE_DIR ...] [--list] [--check] [--variants]

Runs the `tapeflow-cc` CLI (a subprocess, as a user would) on every `*.c` under DIR and
prints a Markdown table: accepted, refused with one located `unsupported C:` line,
refused with a Clang error (one located line too), and anything else (a traceback, several
lines, another exit code: a bug). Then a histogram of the first refusals, their text
without the location and with quoted names replaced by `'…'` so that the same refusal
of different names counts once. `--list` adds each file's outcome.

Made for Enzyme's own C integration tests (enzyme/test/Integration/ReverseMode/*.c); the
files are not in this repository. They include `"../test_utils.h"`: keep Enzyme's layout
(Integration/test_utils.h beside ReverseMode/) and pass `-I Integration` for the files that
include it by its bare name.

`--check` then checks each accepted file's gradient twice:
- with `tapeflow-check`, against central finite differences, every function the file
  differentiates: one returning one float element by element and, when it has arrays
  (which it may also write), by the adjoint dot-product test; any other by the adjoint
  test. Verdicts: correct (by which check), wrong (the first disagreeing element, or the
  dot products), unchecked (tapeflow-check cannot run it: one located line saying why)
  and broken. The arguments are those of the file's own `__enzyme_autodiff` call where
  they can be read (`call_sites`: array lengths, integers, floats; array contents are
  drawn from [0.5, 1.5)), else generic: dynamic arrays of CHECK_SIZE elements, integer
  scalars CHECK_COUNT (smaller, so that a count argument stays in bounds), float scalars
  0.75; a function with f32 values is checked with step 1e-3 and tolerance
  F32_TOLERANCE;
- by running the file's own `main` natively with TapeFlow's gradients
  (`enzyme_main.py`, needs a C compiler `cc`): its APPROX_EQ checks passed or failed,
  or it ran without any, or it could not be run (why).

`--variants` checks that each accepted file's gradient is bit-identical across TapeFlow's
variants (TapeFlow's passes must not change a bit of it): every function the file
differentiates, at the arguments `--check` gives it, is compiled as `tapeflow-bench`
compiles it (`tapeflow.eval.jobs`: the Enzyme layout, `regions`, `tapeflow` and
`ideal-tape` on the default machine, and `tapeflow` with `mode=always`, which streams
every region loop: at these sizes the cost model often keeps Enzyme's layout), run in the
interpreter with every shadow seeded (random values: an array the function writes is an
output too) and 1.0 for a float result, and every array argument and result after the
run is compared bit for bit with the Enzyme layout's as the bench compares them
(`tapeflow.eval.run.compare_gradients`).
Verdicts: identical (with how many distinct programs ran: variants of a function that
caches nothing compile to the same IR, run once), differs (the variant and the first
element, or the error of a variant where the Enzyme layout runs) and not run (why).
Measured on Enzyme's 100 files (73 accepted): 70 identical (27 of them one program for
every variant: nothing cached), 0 differ, 3 not run (`blas_gemm.c`, `blas_gemm2.c` and
`remat.c`: arrays longer than the call shows, which `--check` leaves unchecked too).
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

_LOCATED = re.compile(r"^error: (?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*)$")
_QUOTED = re.compile(r"'[^']*'|`[^`]*`|\"[^\"]*\"")
_CHAIN = re.compile(r"\((\w+ -> )+\w+\)")
_ELEMENT = re.compile(r"^(?P<what>\S+): AD (?P<ad>\S+)  FD (?P<fd>\S+)  error (?P<err>\S+)$")
CHECK_SIZE = 8
CHECK_COUNT = 4
TOLERANCE = 1e-5
"""tapeflow-check's default tolerance."""
F32_TOLERANCE = 1e-3
"""For a function with f32 values: central differences in single precision with
tapeflow-check's 1e-6 step measure rounding, not the derivative; step 1e-3 instead."""


def classify(path: Path, includes: list[str], output: str = "/dev/null") -> tuple[str, str]:
    """(outcome, message) of `tapeflow-cc path -o output`: outcome is accepted,
    unsupported, error (another located error) or broken."""
    cmd = [sys.executable, "-m", "tapeflow.tools.cc", str(path), "-o", output]
    for inc in includes:
        cmd += ["-I", inc]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip() and not ln.startswith("remark:")]
    if p.returncode == 0:
        return "accepted", ""
    m = _LOCATED.match(lines[0]) if lines else None
    if p.returncode != 1 or len(lines) != 1 or m is None or "Traceback" in p.stderr:
        return "broken", (lines[-1] if lines else f"exit {p.returncode}")[:160]
    msg = m.group("msg")
    if msg.startswith("unsupported C: "):
        return "unsupported", msg[len("unsupported C: "):]
    return "error", msg


MARKERS = ("enzyme_dup", "enzyme_dupnoneed", "enzyme_const", "enzyme_out")


def call_sites(path: Path, includes: list[str]) -> dict[str, list[Any]]:
    """What the file's own `__enzyme_autodiff` calls pass: differentiated function ->
    one entry per parameter, from the first call of it whose values are all known: an
    int (an integer argument, or the value behind `&n`), a float, `("array", n)` for a
    pointer to n elements (an array, `&x` of a scalar, a pointer set by `malloc`; else
    its shadow's), or None when not known (a generic value then)."""
    from tapeflow.frontends.c.clang import cindex, strip_casts, walk
    from tapeflow.frontends.c.enzyme import INCLUDE_DIR, is_entry

    args = ["-x", "c", "-std=gnu11", *(f"-I{i}" for i in includes), "-isystem", INCLUDE_DIR]
    tu = cindex().Index.create().parse(str(path), args=args)
    sites: dict[str, list[Any]] = {}
    for call in walk(tu.cursor):
        if call.kind.name != "CALL_EXPR" or not is_entry(call.spelling):
            continue
        given = [strip_casts(a) for a in call.get_arguments()]
        target = given[0].referenced if given and given[0].kind.name == "DECL_REF_EXPR" else None
        if target is None or target.kind.name != "FUNCTION_DECL":
            continue
        values, i = [], 1
        for param in target.get_arguments():
            note = None
            if i < len(given) and given[i].kind.name == "DECL_REF_EXPR" and \
                    given[i].spelling in MARKERS:  # fmt: skip
                note, i = given[i].spelling, i + 1
            if i >= len(given):
                break
            pointer = param.type.kind.name in ("POINTER", "CONSTANTARRAY", "INCOMPLETEARRAY")
            dup = pointer and note != "enzyme_const" and i + 1 < len(given)
            value = _pointee(given[i], call) if pointer else _number(given[i], call)
            if value is None and dup:  # the shadow has the primal's length
                value = _pointee(given[i + 1], call)
            values.append(value)
            i += 2 if dup else 1
        known = sites.get(target.spelling)
        if known is None or None in known and None not in values:
            sites[target.spelling] = values
    return sites


def _number(e: Any, at: Any) -> int | float | None:
    """The value of `e` at the cursor `at`: a constant expression, or arithmetic on
    locals that are initialised to one and not assigned before `at`."""
    from tapeflow.frontends.c.clang import binary_op, children, evaluate, strip_casts

    e = strip_casts(e)
    if (v := evaluate(e)) is not None:
        return v
    if e.kind.name == "DECL_REF_EXPR" and e.referenced is not None:
        var = e.referenced
        inits = [k for k in children(var) if k.kind.is_expression()]
        if var.kind.name == "VAR_DECL" and inits and not _assigned(var, at):
            return _number(inits[-1], at)
        return None
    if e.kind.name == "BINARY_OPERATOR" and binary_op(e) in ("+", "-", "*", "/"):
        a, b = (_number(k, at) for k in children(e))
        if a is None or b is None or binary_op(e) == "/" and b == 0:
            return None
        op = binary_op(e)
        return a + b if op == "+" else a - b if op == "-" else a * b if op == "*" else (
            a // b if isinstance(a, int) and isinstance(b, int) else a / b)
    return None


def _assigned(var: Any, at: Any) -> bool:
    """Whether the function around the cursor `at` writes `var` (or takes its address)
    before it."""
    from tapeflow.frontends.c.clang import children, walk

    start = at.extent.start
    around = [f for f in at.translation_unit.cursor.get_children()
              if f.kind.name == "FUNCTION_DECL" and f.extent.start.file is not None
              and f.extent.start.file.name == start.file.name
              and f.extent.start.offset <= start.offset <= f.extent.end.offset]  # fmt: skip
    for c in walk(around[0]) if around else ():
        if c.extent.start.offset >= start.offset:
            continue
        kids = children(c)
        writes = c.kind.name in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR") and \
            any(t.spelling.endswith("=") and t.spelling not in ("==", "<=", ">=", "!=")
                for t in c.get_tokens()) or c.kind.name == "UNARY_OPERATOR"  # fmt: skip
        if writes and kids and any(k.kind.name == "DECL_REF_EXPR" and k.referenced == var
                                   for k in walk(kids[0])):  # fmt: skip
            if c.kind.name != "UNARY_OPERATOR" or _is_update(c):
                return True
    return False


def _is_update(c: Any) -> bool:
    """`++`/`--`/`&` (a write, or an address that may be written through)."""
    return any(t.spelling in ("++", "--", "&") for t in list(c.get_tokens())[:2])


def _pointee(e: Any, call: Any) -> Any:
    """`("array", n)` for a pointer argument to n elements, the int behind `&n`, or None."""
    from tapeflow.frontends.c.clang import children, strip_casts

    e = strip_casts(e)
    if e.kind.name == "UNARY_OPERATOR" and next(e.get_tokens()).spelling == "&":
        inner = strip_casts(children(e)[0])
        if inner.kind.name == "DECL_REF_EXPR" and inner.type.kind.name in ("INT", "LONG",
                                                                        "LONGLONG"):
            return _number(inner, call)
        e = inner
        if e.kind.name == "DECL_REF_EXPR" and "ARRAY" not in e.type.kind.name:
            return ("array", 1)
    if e.kind.name != "DECL_REF_EXPR" or e.referenced is None:
        return None
    count = _elements(e.referenced, call)
    return None if count is None else ("array", count)


def _elements(var: Any, call: Any) -> int | None:
    """How many scalars the array or malloc'd pointer `var` holds."""
    from tapeflow.frontends.c.clang import children, strip_casts, walk

    t, count = var.type, 1
    while t.kind.name in ("CONSTANTARRAY", "VARIABLEARRAY"):
        if t.kind.name == "CONSTANTARRAY":
            count *= t.get_array_size()
        t = t.element_type
    if t.kind.name == "POINTER":
        calls = [c for c in walk(var) if c.kind.name == "CALL_EXPR" and c.spelling == "malloc"]
        bytes_ = _number(list(calls[0].get_arguments())[0], call) if calls else None
        size = t.get_pointee().get_size()
        return bytes_ // size if isinstance(bytes_, int) and size > 0 else None
    if var.type.kind.name == "VARIABLEARRAY":
        dims = [k for k in children(var) if k.kind.is_expression()]
        for d in dims[: str(var.type.spelling).count("[")]:
            n = _number(strip_casts(d), var)  # its value where the array is declared
            if not isinstance(n, int):
                return None
            count *= n
    return count


def check_arguments(func_op: Any, workdir: Path,
                    site: list[Any] | None = None) -> list[str]:  # fmt: skip
    """tapeflow-check's `--args`/`--inputs` for `func_op`: what the file's call `site`
    passes (`call_sites`: array lengths, integers, floats), else the generic values of
    the module docstring (static arrays keep tapeflow-check's own fill rule)."""
    from xdsl.dialects.builtin import MemRefType

    entry = func_op.sym_name.data
    rng = np.random.default_rng(0)
    scalars, inputs = [], []
    types = func_op.function_type.inputs.data
    site = site if site is not None and len(site) == len(types) else [None] * len(types)
    for p, (t, given) in enumerate(zip(types, site)):
        if isinstance(t, MemRefType) and any(d < 0 for d in t.get_shape()):
            dtype = {"f64": np.float64, "f32": np.float32}.get(str(t.element_type), np.int64)
            n = given[1] if isinstance(given, tuple) and t.get_num_dims() == 1 else CHECK_SIZE
            shape = [n if d < 0 else d for d in t.get_shape()]
            if isinstance(given, int) and t.get_num_dims() == 1:  # `&n` of an integer
                data = np.full(1, given, dtype)
            else:
                data = rng.uniform(0.5, 1.5, shape).astype(dtype)
            path = workdir / f"{entry}_{p}.npy"
            np.save(path, data)
            inputs += ["--inputs", f"{p}={path}"]
        elif not isinstance(t, MemRefType):
            if str(t).startswith(("f", "bf")):
                scalars.append(repr(float(given)) if isinstance(given, float) else "0.75")
            else:
                scalars.append(str(given) if isinstance(given, int) else str(CHECK_COUNT))
    return [*(["--args", *scalars] if scalars else []), *inputs]


def site_of(entry: str, arity: int, sites: dict[str, list[Any]]) -> list[Any] | None:
    """The call site of the marked function `entry`: the differentiated function itself
    or its specialization `<name>_<activity letters>`, when it takes one IR argument per
    C parameter (a struct parameter is several)."""
    name, _, letters = entry.rpartition("_")
    site = sites.get(entry) or (sites.get(name) if set(letters) <= set("dca") else None)
    return site if site is not None and len(site) == arity else None


CHECKS = {"element": "finite differences, element by element",
          "adjoint": "adjoint dot-product test (finite differences)"}


def check(mlir: Path, workdir: Path,
          sites: dict[str, list[Any]] | None = None) -> tuple[str, str, str]:  # fmt: skip
    """(verdict, message, how) of tapeflow-check on every function `mlir` differentiates,
    with the arguments of the file's call `sites` where known: correct, wrong (the first
    disagreeing element, or the dot products), unchecked or broken; `how` names the
    checks (`CHECKS`) and where the arguments came from."""
    from tapeflow import runner
    from tapeflow.eval.kernels import marked_functions

    try:
        module = runner.load_module(mlir.read_text(), str(mlir))
    except Exception as e:  # noqa: BLE001 - a module tapeflow-cc wrote must load
        return "broken", f"{type(e).__name__}: {e}"[:160], ""
    entries = marked_functions(module)
    if not entries:
        return "unchecked", "no function is differentiated", ""
    kinds, origins = set(), set()
    for entry in entries:
        func_op = runner.find_function(module, entry)
        site = site_of(entry, len(func_op.function_type.inputs.data), sites or {})
        origins.add("call site" if site is not None and None not in site else
                    "call site, partly" if site is not None else "generic")  # fmt: skip
        single = "f32" in str(func_op.function_type)
        cmd = [sys.executable, "-m", "tapeflow.tools.check", str(mlir), "--entry", entry,
               *check_arguments(func_op, workdir, site),
               *(["--step", "1e-3", "--tolerance", str(F32_TOLERANCE)] if single else [])]
        # A function returning one float may also write its arrays (Enzyme's tests often
        # seed those): the adjoint test covers them, the element test only the result.
        returns_float = [str(t) for t in func_op.function_type.outputs.data] in (["f64"],
                                                                                ["f32"])
        for extra in ([], ["--adjoint"]) if returns_float and runner.shadowed(func_op) else ([],):
            p = subprocess.run([*cmd, *extra], capture_output=True, text=True, check=False)
            errors = [ln for ln in p.stderr.splitlines() if ln.strip()
                      and not ln.startswith("remark:")]  # fmt: skip
            lines = p.stdout.splitlines()
            if lines and lines[-1].startswith(("ok: ", "FAILED: ")):
                kinds.add("adjoint" if "the adjoint test" in lines[-1] else "element")
            how = f"{' + '.join(sorted(kinds)) or 'no check ran'}; arguments: " \
                f"{', '.join(sorted(origins))}"
            if p.returncode == 0:
                continue
            if p.returncode == 1 and lines and lines[-1].startswith("FAILED"):
                first = next((ln for ln in lines if (m := _ELEMENT.match(ln))
                              and not float(m.group("err")) <= (F32_TOLERANCE if single
                                                                else TOLERANCE)), lines[-1])
                return "wrong", f"@{entry} {first}", how
            if p.returncode == 1 and len(errors) == 1 and "Traceback" not in p.stderr:
                return "unchecked", f"@{entry}: {errors[0]}{generic(site)}", how
            last = (errors[-1] if errors else f"exit {p.returncode}")[:160]
            return "broken", f"@{entry}: {last}", how
    return "correct", "", how


VARIANT_RUNS = {"regions": {}, "tapeflow": {}, "ideal-tape": {},
                "tapeflow mode=always": {"variant": "tapeflow", "mode": "always"}}
"""The runs `--variants` compares with the Enzyme layout's: the bench's variants on its
default machine (`tapeflow.eval.jobs.Job`), and TapeFlow's pipeline streaming every region
loop (its `mode=always`: for small loops the cost model often keeps Enzyme's layout)."""


class Identity(NamedTuple):
    """`variants`' verdict, its one-line message, and whether every variant of every
    function compiled to one program (nothing cached: the variants are the same IR)."""

    verdict: str
    message: str
    one_program: bool = False


def variants(mlir: Path, workdir: Path,
             sites: dict[str, list[Any]] | None = None) -> Identity:  # fmt: skip
    """The `Identity` of the bit-identity of the gradient across TapeFlow's variants, for
    every function `mlir` differentiates at the arguments `check` gives it: identical,
    differs (the first variant and element that differ, or the error of a variant where
    the Enzyme layout runs) or not run (why, one line). Each gradient is compiled as the
    bench compiles it (`build_module`) and run in the interpreter (once per distinct IR:
    the variants of a function that caches nothing are one program), its shadows seeded
    with random values (the adjoint test's convention: every shadow is an output too) and
    each float result's seed 1.0, and compared with the Enzyme layout's as the bench
    compares (`compare_gradients`: every array argument after the run, every result)."""
    from tapeflow import runner
    from tapeflow.eval.jobs import Job, build_module, ir_key
    from tapeflow.eval.kernels import FileKernel, marked_functions
    from tapeflow.eval.run import compare_gradients
    from tapeflow.tools import run
    from tapeflow.tools.common import function_arguments, parse_run_arguments

    try:
        module = runner.load_module(mlir.read_text(), str(mlir))
    except Exception as e:  # noqa: BLE001 - a module tapeflow-cc wrote must load
        return Identity("not run", f"{type(e).__name__}: {e}".splitlines()[0][:160])
    entries = marked_functions(module)
    if not entries:
        return Identity("not run", "no function is differentiated")
    programs = 0
    for entry in entries:
        func_op = runner.find_function(module, entry)
        site = site_of(entry, len(func_op.function_type.inputs.data), sites or {})
        cli = [str(mlir), "--entry", entry, *check_arguments(func_op, workdir, site)]
        shared: dict[Any, Any] = {}
        grads: dict[str, dict[str, Any]] = {}
        ran: dict[Any, dict[str, Any]] = {}  # a program's IR -> its gradient
        for label, job in (("enzyme", {}), *VARIANT_RUNS.items()):
            try:
                compiled = build_module(Job(entry, file_kernel=FileKernel(str(mlir), entry),
                                            **{"variant": label, **job}), shared=shared)
                if (key := ir_key(compiled)) not in ran:  # the same IR, the same gradient
                    values = function_arguments(module, func_op,
                                                parse_run_arguments(run.parser(), cli))
                    ran[key] = _gradient(compiled, func_op, values)
            except Exception as e:  # noqa: BLE001 - a failure is the verdict, one line
                why = f"@{entry}: {label}: {type(e).__name__}: {e}".splitlines()[0][:200]
                return Identity("not run", why + generic(site)) if label == "enzyme" else \
                    Identity("differs", why)  # fmt: skip
            grads[label] = ran[key]
        same, notes = compare_gradients(grads)
        if not same:
            return Identity("differs", f"@{entry}: {notes[0]}")
        programs += len(ran)
    return Identity("identical", f"{programs} distinct programs for {len(entries)} function(s)",
                    programs == len(entries))


def _gradient(compiled: Any, func_op: Any, values: list[Any]) -> dict[str, Any]:
    """`compare_gradients`' entry of one run of `@F_grad` from `@F`'s `values`: every
    array argument after it, by name, and every result."""
    from tapeflow import runner

    grad = f"{func_op.sym_name.data}_grad"
    result = runner.run_function(compiled, grad, gradient_arguments(func_op, values))
    names = runner.arg_names(runner.find_function(compiled, grad))
    arrays = {n if n and names.count(n) == 1 else f"arg{p}": np.asarray(result.arguments[p])
              for p, n in enumerate(names) if p in result.memref_positions}  # fmt: skip
    return {"grads": {**arrays, **{f"result{i}": np.asarray(r)
                                   for i, r in enumerate(result.results)}}}


def gradient_arguments(func_op: Any, values: list[Any]) -> list[Any]:
    """`@F_grad`'s arguments from `@F`'s `values`: each shadow after its array, drawn
    from [-1, 1) (seed 0), then the seed 1.0 of each float result."""
    from tapeflow.convention import is_float_type, shadowed

    rng = np.random.default_rng(0)
    arrays = shadowed(func_op)
    out: list[Any] = []
    for p, value in enumerate(values):
        out.append(value)
        if p in arrays:
            out.append(rng.uniform(-1.0, 1.0, np.shape(value)).astype(value.dtype))
    return out + [1.0 for t in func_op.function_type.outputs.data if is_float_type(t)]


def generic(site: list[Any] | None) -> str:
    """Why some of a function's arguments are generic (`check_arguments`), or ""."""
    if site is None:
        return " (generic arguments: no call of it in the file to read them from)"
    return " (generic arguments: some of the call's are not known)" if None in site else ""


def normalise(msg: str) -> str:
    return _CHAIN.sub("(…)", _QUOTED.sub("'…'", msg))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("directory", type=Path)
    p.add_argument("-I", dest="includes", action="append", default=[],
                   help="include directory passed to tapeflow-cc (repeatable)")
    p.add_argument("--list", action="store_true", help="print each file's outcome")
    p.add_argument("--check", action="store_true",
                   help="check each accepted file's gradient against finite differences")
    p.add_argument("--variants", action="store_true",
                   help="check that each accepted file's gradient is bit-identical across "
                   "TapeFlow's variants")
    args = p.parse_args(argv)
    files = sorted(args.directory.glob("*.c"))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        results = {f.name: classify(f, args.includes, str(work / f"{f.stem}.mlir"))
                   for f in files}  # fmt: skip
        accepted = [name for name, (outcome, _) in results.items() if outcome == "accepted"]
        sites = {name: call_sites(args.directory / name, args.includes)
                 for name in accepted if args.check or args.variants}  # fmt: skip
        verdicts = {name: check(work / f"{Path(name).stem}.mlir", work, sites[name])
                    for name in accepted if args.check}  # fmt: skip
        mains = {name: run_main(args.directory / name, work / f"{Path(name).stem}.mlir",
                                args.includes) for name in verdicts}  # fmt: skip
        identity = {name: variants(work / f"{Path(name).stem}.mlir", work, sites[name])
                    for name in accepted if args.variants}  # fmt: skip
    counts = collections.Counter(outcome for outcome, _ in results.values())
    n = len(files)
    print(f"| outcome | files (of {n}) |")
    print("|---|---:|")
    for outcome, what in (("accepted", "accepted"),
                          ("unsupported", "refused: one located `unsupported C:` line"),
                          ("error", "refused: one located error line of another kind"),
                          ("broken", "anything else (traceback, several lines)")):
        print(f"| {what} | {counts[outcome]} |")
    hist = collections.Counter(
        (outcome, normalise(msg)) for outcome, msg in results.values() if outcome != "accepted"
    )
    print()
    print("| first refusal | files |")
    print("|---|---:|")
    for (outcome, msg), k in sorted(hist.items(), key=lambda kv: (-kv[1], kv[0])):
        label = msg if outcome == "unsupported" else f"({outcome}) {msg}"
        print(f"| {label.replace('|', '/')} | {k} |")
    if args.list:
        print()
        for name, (outcome, msg) in results.items():
            line = f"{name}: {outcome}{': ' + msg if msg else ''}"
            if name in identity:
                same, why, _ = identity[name]
                line += f"; variants: {same}{': ' + why if why else ''}"
            print(line)
    if args.check:
        print_verdicts(verdicts, mains)
    if args.variants:
        print_identity(identity)
    return 0


def print_identity(identity: dict[str, Identity]) -> None:
    """The `--variants` table."""
    counts = collections.Counter(i.verdict for i in identity.values())
    print()
    print("| gradient across TapeFlow's variants, bit for bit against the Enzyme layout's "
          f"| files (of {len(identity)} accepted) |")
    print("|---|---:|")
    one = sum(1 for i in identity.values() if i.verdict == "identical" and i.one_program)
    print(f"| identical | {counts['identical']} |")
    print(f"| of which every variant compiled to one program (nothing cached) | {one} |")
    for verdict in ("differs", "not run"):
        print(f"| {verdict} | {counts[verdict]} |")


MAIN_TIMEOUT = 300
"""Seconds for one file's `main` (its gradients run in the interpreter)."""


def run_main(path: Path, mlir: Path, includes: list[str]) -> tuple[str, str]:
    """(outcome, message) of the file's own `main` with TapeFlow's gradients
    (`enzyme_main.py`): passed (its APPROX_EQ checks hold; message: how many in its
    text), failed (one aborted: its message), ran (no APPROX_EQ in the file) or not run
    (why: the shim, the C compiler, a length not known, the time limit)."""
    cmd = [sys.executable, str(Path(__file__).with_name("enzyme_main.py")), str(path),
           str(mlir), *(f"-I{i}" for i in includes)]  # fmt: skip
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, check=False,
                           timeout=MAIN_TIMEOUT)  # fmt: skip
    except subprocess.TimeoutExpired:
        return "not run", f"more than {MAIN_TIMEOUT} s"
    last = next((ln for ln in reversed(p.stdout.splitlines())
                 if ln.startswith(("passed: ", "not run: "))), "")  # fmt: skip
    failed = [ln for ln in p.stderr.splitlines() if "Assertion Failed" in ln]
    if p.returncode != 0 and (failed or p.returncode == -6):
        return "failed", (failed[0] if failed else "abort()")[:200]
    if p.returncode == 0 and last.startswith("passed: 0 "):
        return "ran", "no APPROX_EQ in the file"
    if p.returncode == 0 and last.startswith("passed: "):
        return "passed", last[len("passed: "):]
    if last.startswith("not run: "):
        return "not run", last[len("not run: "):]
    errors = [ln for ln in p.stderr.splitlines() if ln.strip()]
    return "not run", f"exit {p.returncode}: {(errors[-1] if errors else '')[:160]}"


def print_verdicts(verdicts: dict[str, tuple[str, str, str]],
                   mains: dict[str, tuple[str, str]]) -> None:  # fmt: skip
    """The `--check` tables (finite differences: correct by which check; where the
    arguments came from; the files' own `main`), then every file's verdicts."""
    counts = collections.Counter(
        (verdict, how.split(";")[0] if verdict == "correct" else "")
        for verdict, _, how in verdicts.values())  # fmt: skip
    print()
    print(f"| gradient against finite differences | files (of {len(verdicts)} accepted) |")
    print("|---|---:|")
    for kinds in sorted({k for v, k in counts if v == "correct"}):
        label = " and ".join(CHECKS[k] for k in kinds.split(" + "))
        print(f"| correct: {label} | {counts['correct', kinds]} |")
    for verdict in ("wrong", "unchecked", "broken"):
        print(f"| {verdict} | {counts[verdict, '']} |")
    origins = collections.Counter(how.partition("arguments: ")[2]
                                  for _, _, how in verdicts.values())  # fmt: skip
    print()
    print("| arguments of the finite differences | files |")
    print("|---|---:|")
    for origin, k in sorted(origins.items()):
        print(f"| {origin or 'none (not run)'} | {k} |")
    ran = collections.Counter(outcome for outcome, _ in mains.values())
    print()
    print("| the file's own main, with TapeFlow's gradients | files |")
    print("|---|---:|")
    for outcome, what in (("passed", "APPROX_EQ passed"), ("failed", "APPROX_EQ failed"),
                          ("ran", "ran (no APPROX_EQ in the file)"), ("not run", "not run")):
        print(f"| {what} | {ran[outcome]} |")
    good = [n for n, (v, _, _) in verdicts.items() if v != "wrong" and mains[n][0] != "failed"
            and (v == "correct" or mains[n][0] == "passed")]  # fmt: skip
    print()
    print(f"correct by at least one check and wrong by none: {len(good)} of {len(verdicts)}")
    print()
    for name, (verdict, msg, how) in verdicts.items():
        outcome, why = mains[name]
        print(f"{name}: {verdict}{': ' + msg if msg else ''} ({how}); main: {outcome}"
              f"{': ' + why if why else ''}")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
