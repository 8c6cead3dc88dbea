"""The kernels `tapeflow-bench` and `tapeflow-sweep` run: suites, and a user's kernel files.

Every kernel gives the bench the same few things: its `name`, the gradient's entry
`grad_entry`, `load(size)` (the primal module, marked `tapeflow.autodiff`),
`grad_arguments(size, seed)` (`@<f>_grad`'s arguments: each primal argument followed
by a zero shadow when it has one, `convention.shadowed`, then the seed 1.0), `argument_names()`
(their names, for the gradient check) and `primal_bytes(size)`.

- Suite `bundled` (`SUITES`): the eleven kernels of `tapeflow.eval.bundled`, MLIR files
  in `bundled.kernel_dir()` (`$TAPEFLOW_KERNELS`, else benchmarks/kernels of the source
  tree) with hand-written inputs and NumPy references.
- Suite `salam`: gem5-SALAM's AD benchmarks written in C, defined in
  `tapeflow.eval.suites` (`KERNELS`: per kernel the entry function, `-D` sizes (`real`:
  theirs, run by default unless the kernel names smaller `bench` sizes for the full
  bench's time; `small`: --quick), inputs and the name of gem5-SALAM's result CSV),
  their C files in `suites.salam_dir()` (`$TAPEFLOW_SALAM`, else the kernel folder's
  salam/) (`SuiteKernel`).
- Suite `shapes`: one kernel per loop shape of dense solvers and dynamic programs
  (`tapeflow.eval.shapes`: a triangular solve, a down-counting back substitution, a
  while-loop Newton iteration, a branchy dynamic program), MLIR files and C twins in the
  kernel folder's shapes/, labelled `shapes/<name>`; run by name only (`--suite shapes`,
  not `all`), so that the published runs (`scripts/bench`: `--suite all`) keep their
  kernels.
- A kernel file (`FileKernel`, `tapeflow-bench --kernels k.c,k.mlir`): its one function
  marked for differentiation (`tapeflow.autodiff`, which the C frontend puts on the
  function handed to `__enzyme_autodiff`). Inputs: tapeflow-run's documented fill rule
  (`tapeflow.runner.make_arguments`: float memref p is
  `default_rng([seed, p]).uniform(-1, 1)`, integer memrefs zeros), or arrays given by
  name or position (`--inputs`, as tapeflow-run's); scalar arguments must be given, in
  `--args` (in order) or in the `--inputs` .npz by name (`n=16`).

The package imports nothing from benchmarks/: kernel files are data it reads, found by
the one rule of `bundled.kernel_dir`.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import func

from tapeflow import convention, runner
from tapeflow.diagnostics import ToolError
from tapeflow.eval import suites
from tapeflow.eval.bundled import KERNELS as BUNDLED
from tapeflow.eval.bundled import shadow_names, with_shadows
from tapeflow.eval.shapes import KERNELS as SHAPES
from tapeflow.frontends.c import compile_c

AUTODIFF_ATTR = "tapeflow.autodiff"
SUITES = ("bundled", "salam", "shapes")
"""`tapeflow-bench --suite` values; `bundled` is the default."""


def bundled() -> dict[str, Any]:
    """The bundled suite: name -> `bundled.Kernel`."""
    return BUNDLED


def grad_arguments(primal_values: list[Any], shadowed: Container[int]) -> list[Any]:
    """`@<f>_grad`'s arguments from `@<f>`'s: a zero shadow after each argument in
    `shadowed` (`convention.shadowed`), then the seed 1.0 (README, "The AD calling convention")."""
    args: list[Any] = []
    for p, value in enumerate(primal_values):
        args.append(value)
        if p in shadowed:
            args.append(np.zeros_like(value))
    args.append(1.0)
    return args


def marked_functions(module: Any) -> list[str]:
    """Names of the functions with a body marked `tapeflow.autodiff`."""
    return [op.sym_name.data for op in module.walk()
            if isinstance(op, func.FuncOp) and AUTODIFF_ATTR in op.attributes
            and op.body.blocks]  # fmt: skip


@dataclass(frozen=True)
class FileKernel:
    """A kernel from a C or MLIR file (picklable: travels with a bench job)."""

    file: str
    function: str
    """The marked function (`tapeflow.autodiff`)."""
    inputs: tuple[str, ...] = ()
    """`--inputs` specs (tapeflow-run's forms: data.npz, P=a.npy, NAME=a.npy)."""
    clang_args: tuple[str, ...] = ()
    """`-D`/`-I` for a C file (`tapeflow-bench -D N=8 -I DIR --kernels k.c`)."""
    scalars: tuple[str, ...] = ()
    """The scalar arguments not in `inputs`, in order (`tapeflow-bench --args`)."""

    @property
    def name(self) -> str:
        return self.function

    @property
    def grad_entry(self) -> str:
        return f"{self.function}_grad"

    def source(self, size: str = "default") -> str:
        """The file's text (a kernel file has one size: `size` is ignored)."""
        try:
            return Path(self.file).read_text()
        except OSError as e:
            raise ToolError(f"{self.file}: cannot read: {e.strerror}") from None

    def load(self, size: str = "default") -> Any:
        """The module as written (a kernel file has one size: `size` is ignored)."""
        return _load_file(self.file, self.source(), self.clang_args)

    def _primal(self, size: str) -> Any:
        return runner.find_function(self.load(size), self.function)

    def _arguments(self, size: str, seed: int) -> tuple[Any, list[Any]]:
        f = self._primal(size)
        inputs = runner.read_inputs(self.inputs, f)
        return f, runner.make_arguments(f, seed, inputs, scalars=self.scalars)

    def grad_arguments(self, size: str = "default", seed: int = 0) -> list[Any]:
        f, values = self._arguments(size, seed)
        return grad_arguments(values, convention.shadowed(f))

    def argument_names(self, size: str = "default") -> list[str]:
        f = self._primal(size)
        out: list[str] = []
        with_shadow = convention.shadowed(f)
        for p, n in enumerate(runner.arg_names(f)):
            out.append(n or f"arg{p}")
            if p in with_shadow:
                out.append("d" + out[-1])
        out.append("seed")
        return out

    def primal_bytes(self, size: str = "default", seed: int = 0) -> int:
        _, values = self._arguments(size, seed)
        return sum(int(v.nbytes) for v in values if isinstance(v, np.ndarray))


def _load_file(path: str, text: str, clang_args: tuple[str, ...] = ()) -> Any:
    """The module of a C (compiled with `clang_args`) or MLIR kernel file."""
    if path.endswith(".c"):
        return compile_c(text, path, list(clang_args))
    return runner.load_module(text, path)


def file_kernel(path: str, inputs: tuple[str, ...] = (), function: str = "",
                size: str = "default", clang_args: tuple[str, ...] = (),
                scalars: tuple[str, ...] = ()) -> FileKernel:  # fmt: skip
    """A `FileKernel` for `path` (a C file compiled with `clang_args`, `-D`/`-I`), checked
    now: the file exists, compiles, has one marked function (or `function`, when
    given, is marked), and its arguments can be made; raises `ToolError`."""
    p = Path(path)
    if not p.is_file():
        raise ToolError(f"no such file: {path}")
    if not path.endswith((".c", ".mlir")):
        raise ToolError(f"{path}: a kernel file is a .c or .mlir file")
    kernel = FileKernel(path, function or "?", tuple(inputs), tuple(clang_args), tuple(scalars))
    module = kernel.load(size)
    marked = marked_functions(module)
    if function:
        if function not in marked:
            raise ToolError(f"{path}: function {function!r} is not marked for "
                            f"differentiation (marked: {', '.join(marked) or 'none'})")
    elif len(marked) != 1:
        what = ("no function is" if not marked else
                f"{len(marked)} functions are ({', '.join(marked)})")  # fmt: skip
        raise ToolError(f"{path}: {what} marked for differentiation; mark exactly one "
                        f"(the `{AUTODIFF_ATTR}` attribute, or an __enzyme_autodiff call)")
    kernel = FileKernel(path, function or marked[0], tuple(inputs), tuple(clang_args),
                        tuple(scalars))  # fmt: skip
    try:  # bad --inputs or scalars fail here, before anything runs
        kernel.grad_arguments(size)
    except ToolError as e:
        if "scalar argument" not in str(e):
            raise
        raise ToolError(f"{path}: {e}; give them with --args, in order, or by name in "
                        "the --inputs .npz") from None
    return kernel


SUITE_SIZES = {"default": ("bench", "real"), "small": ("small",)}
"""Suite salam's size names for the bench's, first found first: `real` sizes are the
paper's; a kernel too slow for the full bench's 10 minutes at them names smaller `bench`
sizes (the README of the suite says which and why)."""


@dataclass(frozen=True)
class SuiteKernel:
    """A kernel of suite salam (`suites.KERNELS`) whose C file is in `directory`, by name
    (picklable): its C file (`defines(size)`, `entry`), inputs (`inputs(size, seed)`,
    argument kinds `args`), `csv` (gem5-SALAM's name) and `footprint_bytes(size)`."""

    directory: str
    key: str

    @property
    def kernel(self) -> Any:
        return suites.KERNELS[self.key]

    @property
    def name(self) -> str:
        return self.key

    @property
    def grad_entry(self) -> str:
        return self.kernel.grad_entry

    @property
    def csv(self) -> str:
        return self.kernel.csv or ""

    def size(self, size: str) -> str:
        """The suite's size name for the bench's `size`."""
        names = SUITE_SIZES[size]
        return next((n for n in names if n in self.kernel.sizes), names[-1])

    def load(self, size: str = "default") -> Any:
        k = self.kernel
        path = Path(self.directory) / f"{k.name}.c"
        try:
            text = path.read_text()
        except OSError as e:
            raise ToolError(f"{path}: cannot read suite salam's kernel {k.name}: "
                            f"{e.strerror}") from None  # fmt: skip
        return compile_c(text, str(path), k.defines(self.size(size)), functions=[k.entry])

    def grad_arguments(self, size: str = "default", seed: int = 0) -> list[Any]:
        return with_shadows(self.kernel.args, self.kernel.inputs(self.size(size), seed))

    def argument_names(self, size: str = "default") -> list[str]:
        return shadow_names(self.kernel.args)

    def primal_bytes(self, size: str = "default", seed: int = 0) -> int:
        return int(self.kernel.footprint_bytes(self.size(size)))


def salam_suite(directory: str | None = None) -> dict[str, SuiteKernel]:
    """Suite salam: name -> kernel, every kernel of `suites.KERNELS` with its C file in
    `suites.salam_dir(directory)`; raises `ToolError` saying where it looked when that is
    not a folder."""
    root = suites.salam_dir(directory)
    if not root.is_dir():
        raise ToolError(f"suite salam: no folder {root} ($TAPEFLOW_SALAM, else the "
                        "kernel folder's salam/: see tapeflow.eval.bundled.kernel_dir)")
    return {n: SuiteKernel(str(root), n) for n in suites.KERNELS}


def salam_available() -> bool:
    """Whether suite salam's C files are there (`suites.salam_dir()` is a folder)."""
    try:
        return suites.salam_dir().is_dir()
    except ToolError:
        return False


def is_kernel_file(entry: str) -> bool:
    """Whether a `--kernels` entry names a kernel file (not a suite kernel)."""
    return entry.endswith((".c", ".mlir")) or "/" in entry


def kernel_table(text: str | None, suites_text: str, inputs: Sequence[str], size: str,
                 clang_args: Sequence[str] = (),
                 scalars: Sequence[str] = ()) -> dict[str, tuple[str, Any, str]]:  # fmt: skip
    """`--suite` and `--kernels`: label -> (suite, kernel, C twin file), in run order.
    Suite kernels are named by their name (suite salam's as `salam/<name>`); kernel files
    are suite `files` (a C one compiled with `clang_args`, `-D`/`-I`; `inputs` and
    `scalars` are their arguments'). Raises `ToolError`
    on an unknown suite or kernel, a missing file."""
    chosen = [s.strip() for s in suites_text.split(",") if s.strip()]
    if "all" in chosen:  # every suite that has kernels, but shapes: by name only
        chosen = [s for s in SUITES if s != "shapes" and (s != "salam" or salam_available())]
    bad = [s for s in chosen if s not in SUITES]
    if bad or not chosen:
        raise ToolError(f"--suite: unknown suite(s) {', '.join(map(repr, bad)) or 'none given'};"
                        f" known: {', '.join(SUITES)}")  # fmt: skip
    known: dict[str, tuple[str, Any, str]] = {}
    for suite in chosen:
        if suite == "bundled":
            known.update({n: ("bundled", k, "") for n, k in bundled().items()})
        elif suite == "shapes":
            known.update({f"shapes/{n}": ("shapes", k, "") for n, k in SHAPES.items()})
        else:
            known.update({f"salam/{n}": ("salam", k, "")
                          for n, k in salam_suite().items()})
    if text is None:
        return known
    entries = [e.strip() for e in text.split(",") if e.strip()]
    out: dict[str, tuple[str, Any, str]] = {}
    unknown = []
    for e in entries:
        stem = Path(e).stem
        if is_kernel_file(e) and not Path(e).is_file():
            raise ToolError(f"no such file: {e}")
        if e.endswith(".c") and stem in bundled():
            out[stem] = ("bundled", bundled()[stem], e)  # the C twin
        elif is_kernel_file(e):
            k = file_kernel(e, tuple(inputs), size=size, clang_args=tuple(clang_args),
                            scalars=tuple(scalars))  # fmt: skip
            label = k.name if k.name not in out and k.name not in known else e
            out[label] = ("files", k, "")
        elif e in known:
            out[e] = known[e]
        elif f"salam/{e}" in known or f"shapes/{e}" in known:
            label = f"salam/{e}" if f"salam/{e}" in known else f"shapes/{e}"
            out[label] = known[label]
        else:
            unknown.append(e)
    if unknown or not out:
        what = ", ".join(repr(n) for n in unknown) if unknown else "none given"
        raise ToolError(f"unknown kernel(s) {what}; valid kernels: {', '.join(known)} "
                        "(or a .c/.mlir file)")  # fmt: skip
    return out
