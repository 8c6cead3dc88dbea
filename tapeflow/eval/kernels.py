"""The kernels `tapeflow-bench` and `tapeflow-sweep` run: suites, and a user's kernel files.

Every kernel gives the bench the same few things: its `name`, the gradient's entry
`grad_entry`, `load(size)` (the primal module, marked `tapeflow.autodiff`),
`grad_arguments(size, seed)` (`@<f>_grad`'s arguments: each primal argument followed
by a zero shadow when it has one, `runner.shadowed`, then the seed 1.0), `argument_names()`
(their names, for the gradient check) and `primal_bytes(size)`.

- Suite `bundled` (`SUITES`): the eleven kernels of `tapeflow.bundled_kernels`, MLIR
  files in `kernel_dir()` (benchmarks/kernels of the source tree, or `$TAPEFLOW_KERNELS`)
  with hand-written inputs and NumPy references.
- Suite `salam`: gem5-SALAM's AD benchmarks written in C (`kernel_dir()/salam/`, or
  `$TAPEFLOW_SALAM`): its registry module `KERNELS` gives per kernel the C file, the
  entry function, `-D` sizes (`real`: theirs, run by default unless the kernel names
  smaller `bench` sizes for the full bench's time; `small`: --quick), inputs and the
  name of gem5-SALAM's result CSV (`SuiteKernel`).
- A kernel file (`FileKernel`, `tapeflow-bench --kernels k.c,k.mlir`): its one function
  marked for differentiation (`tapeflow.autodiff`, which the C frontend puts on the
  function handed to `__enzyme_autodiff`). Inputs: tapeflow-run's documented fill rule
  (`tapeflow.runner.make_arguments`: float memref p is
  `default_rng([seed, p]).uniform(-1, 1)`, integer memrefs zeros), or arrays given by
  name or position (`--inputs`, as tapeflow-run's); scalar arguments must be given.

The package imports nothing from benchmarks/: kernel files are data it reads.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from collections.abc import Container
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tapeflow import bundled_kernels
from tapeflow.bundled_kernels import kernel_dir, shadow_names, with_shadows
from tapeflow.diagnostics import ToolError

AUTODIFF_ATTR = "tapeflow.autodiff"
SUITES = ("bundled", "salam")
"""`tapeflow-bench --suite` values; `bundled` is the default."""
SALAM_RESULTS = "gem5_salam_results.csv"


def bundled() -> dict[str, Any]:
    """The bundled suite: name -> `bundled_kernels.Kernel`."""
    return bundled_kernels.KERNELS


def grad_arguments(primal_values: list[Any], shadowed: Container[int]) -> list[Any]:
    """`@<f>_grad`'s arguments from `@<f>`'s: a zero shadow after each argument in
    `shadowed` (`runner.shadowed`), then the seed 1.0 (README, "The AD calling convention")."""
    args: list[Any] = []
    for p, value in enumerate(primal_values):
        args.append(value)
        if p in shadowed:
            args.append(np.zeros_like(value))
    args.append(1.0)
    return args


def marked_functions(module: Any) -> list[str]:
    """Names of the functions with a body marked `tapeflow.autodiff`."""
    from xdsl.dialects import func

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

    @property
    def name(self) -> str:
        return self.function

    @property
    def grad_entry(self) -> str:
        return f"{self.function}_grad"

    def source(self) -> str:
        try:
            return Path(self.file).read_text()
        except OSError as e:
            raise ToolError(f"{self.file}: cannot read: {e.strerror}") from None

    def load(self, size: str = "default") -> Any:
        """The module as written (a kernel file has one size: `size` is ignored)."""
        return _load_file(self.file, self.source(), self.clang_args)

    def _primal(self, size: str) -> Any:
        from tapeflow.runner import find_function

        return find_function(self.load(size), self.function)

    def grad_arguments(self, size: str = "default", seed: int = 0) -> list[Any]:
        from tapeflow.runner import make_arguments, shadowed

        f = self._primal(size)
        inputs = _read_inputs(self.inputs, f)
        values = make_arguments(f, seed, inputs)
        return grad_arguments(values, shadowed(f))

    def argument_names(self, size: str = "default") -> list[str]:
        from tapeflow.runner import _arg_names, shadowed

        f = self._primal(size)
        out: list[str] = []
        with_shadow = shadowed(f)
        for p, n in enumerate(_arg_names(f)):
            out.append(n or f"arg{p}")
            if p in with_shadow:
                out.append("d" + out[-1])
        out.append("seed")
        return out

    def primal_bytes(self, size: str = "default", seed: int = 0) -> int:
        f = self._primal(size)
        from tapeflow.runner import make_arguments

        values = make_arguments(f, seed, _read_inputs(self.inputs, f))
        return sum(int(v.nbytes) for v in values if isinstance(v, np.ndarray))


def _load_file(path: str, text: str, clang_args: tuple[str, ...] = ()) -> Any:
    """The module of a C (compiled with `clang_args`) or MLIR kernel file."""
    from tapeflow import runner

    if path.endswith(".c"):
        from tapeflow.frontends.c import compile_c

        return compile_c(text, path, list(clang_args))
    return runner.load_module(text, path)


def _read_inputs(specs: tuple[str, ...], f: Any) -> dict[int | str, Any]:
    from xdsl.dialects.builtin import MemRefType

    from tapeflow.tools.run import _read_inputs as read

    if not specs:
        return {}
    memrefs = [p for p, t in enumerate(f.function_type.inputs.data) if isinstance(t, MemRefType)]
    return read(list(specs), memrefs)


def file_kernel(path: str, inputs: tuple[str, ...] = (), function: str = "",
                size: str = "default", clang_args: tuple[str, ...] = ()) -> FileKernel:  # fmt: skip
    """A `FileKernel` for `path` (a C file compiled with `clang_args`, `-D`/`-I`), checked
    now: the file exists, compiles, and has one marked function (or `function`, when
    given, is marked); raises `ToolError`."""
    p = Path(path)
    if not p.is_file():
        raise ToolError(f"no such file: {path}")
    if not path.endswith((".c", ".mlir")):
        raise ToolError(f"{path}: a kernel file is a .c or .mlir file")
    kernel = FileKernel(path, function or "?", tuple(inputs), tuple(clang_args))
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
    kernel = FileKernel(path, function or marked[0], tuple(inputs), tuple(clang_args))
    kernel.grad_arguments(size)  # bad --inputs or scalars fail here, before anything runs
    return kernel


def salam_dir(directory: str | None = None) -> Path:
    """Suite salam's folder: `directory`, `$TAPEFLOW_SALAM`, else `kernel_dir()/salam`."""
    return Path(directory or os.environ.get("TAPEFLOW_SALAM") or kernel_dir() / "salam")


SUITE_SIZES = {"default": ("bench", "real"), "small": ("small",)}
"""A suite registry's size names for the bench's, first found first: `real` sizes are
the paper's; a kernel too slow for the full bench's 10 minutes at them names smaller
`bench` sizes (the README of the suite says which and why)."""


@functools.cache
def suite_registry(directory: str) -> Any:
    """The registry module of a suite folder (its `__init__.py`, with `KERNELS`), loaded
    from the file: a suite is data the package reads, not a package it imports. The
    module may import from tapeflow (e.g. `tapeflow.bundled_kernels.ArgSpec`)."""
    path = Path(directory) / "__init__.py"
    spec = importlib.util.spec_from_file_location(f"tapeflow_suite_{Path(directory).name}",
                                                  path)  # fmt: skip
    if spec is None or spec.loader is None:
        raise ToolError(f"{path}: cannot load a suite registry from it")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
    except ImportError as e:
        del sys.modules[spec.name]
        raise ToolError(f"{path}: cannot load the suite's registry: {e} (a suite registry "
                        "imports from tapeflow, e.g. tapeflow.bundled_kernels.ArgSpec, "
                        "not from benchmarks)") from None
    if not isinstance(getattr(module, "KERNELS", None), dict):
        raise ToolError(f"{path}: a suite registry defines KERNELS (name -> kernel)")
    return module


@dataclass(frozen=True)
class SuiteKernel:
    """A kernel of a suite registry (`suite_registry`), by folder and name (picklable):
    its C file (`path`, `defines(size)`, `entry`), inputs (`inputs(size, seed)`, argument
    kinds `args`), `csv` (gem5-SALAM's name) and `footprint_bytes(size)`."""

    directory: str
    key: str

    @property
    def kernel(self) -> Any:
        return suite_registry(self.directory).KERNELS[self.key]

    @property
    def name(self) -> str:
        return self.key

    @property
    def grad_entry(self) -> str:
        return f"{self.kernel.entry}_grad"

    @property
    def csv(self) -> str:
        return self.kernel.csv or ""

    def size(self, size: str) -> str:
        """The registry's size name for the bench's `size`."""
        names = SUITE_SIZES[size]
        return next((n for n in names if n in self.kernel.sizes), names[-1])

    def load(self, size: str = "default") -> Any:
        from tapeflow.frontends.c import compile_c

        k = self.kernel
        path = str(k.path)
        return compile_c(Path(path).read_text(), path, k.defines(self.size(size)),
                         functions=[k.entry])  # fmt: skip

    def grad_arguments(self, size: str = "default", seed: int = 0) -> list[Any]:
        return with_shadows(self.kernel.args, self.kernel.inputs(self.size(size), seed))

    def argument_names(self, size: str = "default") -> list[str]:
        return shadow_names(self.kernel.args)

    def primal_bytes(self, size: str = "default", seed: int = 0) -> int:
        return int(self.kernel.footprint_bytes(self.size(size)))


def salam_suite(directory: str | None = None) -> dict[str, SuiteKernel]:
    """Suite salam: name -> kernel, from the folder's registry module (`__init__.py` with
    `KERNELS`: see `SuiteKernel` for what each entry gives)."""
    root = salam_dir(directory)
    if not salam_available(str(root)):
        raise ToolError(f"suite salam: no kernels yet: {root / '__init__.py'} defines no "
                        "KERNELS")  # fmt: skip
    return {n: SuiteKernel(str(root), n) for n in suite_registry(str(root)).KERNELS}


def salam_available(directory: str | None = None) -> bool:
    """Whether suite salam has kernels yet (its registry module names KERNELS)."""
    init = salam_dir(directory) / "__init__.py"
    return init.is_file() and "KERNELS" in init.read_text()


def salam_ratios(directory: str | None = None) -> dict[str, dict[int, float]]:
    """gem5-SALAM's own speedups from its result CSVs (`gem5_salam_results.csv` of suite
    salam, a data file whose header cites its sources): benchmark -> {cluster-cache bytes:
    orig/ad total cycles}; empty when the file is not there."""
    import csv

    path = salam_dir(directory) / SALAM_RESULTS
    if not path.is_file():
        return {}
    cycles: dict[tuple[str, str, int], int] = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            if row["accounting"] == "total":
                key = (row["benchmark"], row["variant"], int(row["cache_bytes"]))
                cycles[key] = int(row["total_cycles"])
    out: dict[str, dict[int, float]] = {}
    for (name, variant, cache), orig in cycles.items():
        ad = cycles.get((name, "ad", cache))
        if variant == "orig" and ad:
            out.setdefault(name, {})[cache] = orig / ad
    return out
