"""The kernels `tapeflow-bench` and `tapeflow-sweep` run: suites, and a user's kernel files.

Every kernel gives the bench the same few things: its `name`, the gradient's entry
`grad_entry`, `load(size)` (the primal module, marked `tapeflow.autodiff`),
`grad_arguments(size, seed)` (`@<f>_grad`'s arguments: each primal argument followed
by a zero shadow when it is a float memref, then the seed 1.0), `argument_names()`
(their names, for the gradient check) and `primal_bytes(size)`.

- Suite `bundled` (`SUITES`): the eleven kernels of `tapeflow.bundled_kernels`, MLIR
  files in `kernel_dir()` (benchmarks/kernels of the source tree, or `$TAPEFLOW_KERNELS`)
  with hand-written inputs and NumPy references.
- Suite `salam`: gem5-SALAM's AD benchmarks written in C (`kernel_dir()/salam/`, its
  `manifest.toml`: per kernel the C file, the entry function, `-D` sizes per size name
  and the name of gem5-SALAM's result CSV). Inputs follow the seeded fill rule below.
- A kernel file (`FileKernel`, `tapeflow-bench --kernels k.c,k.mlir`): its one function
  marked for differentiation (`tapeflow.autodiff`, which the C frontend puts on the
  function handed to `__enzyme_autodiff`). Inputs: tapeflow-run's documented fill rule
  (`tapeflow.runner.make_arguments`: float memref p is
  `default_rng([seed, p]).uniform(-1, 1)`, integer memrefs zeros), or arrays given by
  name or position (`--inputs`, as tapeflow-run's); scalar arguments must be given.

The package imports nothing from benchmarks/: kernel files are data it reads.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tapeflow import bundled_kernels
from tapeflow.bundled_kernels import kernel_dir
from tapeflow.diagnostics import ToolError

AUTODIFF_ATTR = "tapeflow.autodiff"
SUITES = ("bundled", "salam")
"""`tapeflow-bench --suite` values; `bundled` is the default."""
SALAM_MANIFEST = "manifest.toml"
SALAM_RESULTS = "gem5_salam_results.csv"


def bundled() -> dict[str, Any]:
    """The bundled suite: name -> `bundled_kernels.Kernel`."""
    return bundled_kernels.KERNELS


def grad_arguments(primal_values: list[Any], arg_types: list[Any]) -> list[Any]:
    """`@<f>_grad`'s arguments from `@<f>`'s: a zero shadow after each float memref,
    then the seed 1.0 (README, "The AD calling convention")."""
    from xdsl.dialects.builtin import MemRefType

    from tapeflow.runner import _is_float

    args: list[Any] = []
    for value, t in zip(primal_values, arg_types, strict=True):
        args.append(value)
        if isinstance(t, MemRefType) and _is_float(t.get_element_type()):
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
    sizes: Mapping[str, Mapping[str, int]] = field(default_factory=dict, hash=False)
    """`-D` macros of a C file per size name (a suite's manifest); none: as written."""
    csv: str = ""
    """gem5-SALAM's result CSV this kernel corresponds to (suite `salam`)."""
    description: str = ""

    @property
    def name(self) -> str:
        return self.function

    @property
    def grad_entry(self) -> str:
        return f"{self.function}_grad"

    def defines(self, size: str) -> list[str]:
        return [f"-D{k}={v}" for k, v in self.sizes.get(size, {}).items()]

    def source(self) -> str:
        try:
            return Path(self.file).read_text()
        except OSError as e:
            raise ToolError(f"{self.file}: cannot read: {e.strerror}") from None

    def load(self, size: str = "default") -> Any:
        return _load_file(self.file, self.source(), tuple(self.defines(size)))

    def _primal(self, size: str) -> Any:
        from tapeflow.runner import find_function

        return find_function(self.load(size), self.function)

    def grad_arguments(self, size: str = "default", seed: int = 0) -> list[Any]:
        from tapeflow.runner import make_arguments

        f = self._primal(size)
        inputs = _read_inputs(self.inputs, f)
        values = make_arguments(f, seed, inputs)
        return grad_arguments(values, list(f.function_type.inputs.data))

    def argument_names(self, size: str = "default") -> list[str]:
        from xdsl.dialects.builtin import MemRefType

        from tapeflow.runner import _arg_names, _is_float

        f = self._primal(size)
        out: list[str] = []
        types = list(f.function_type.inputs.data)
        for p, (n, t) in enumerate(zip(_arg_names(f), types, strict=True)):
            out.append(n or f"arg{p}")
            if isinstance(t, MemRefType) and _is_float(t.get_element_type()):
                out.append("d" + out[-1])
        out.append("seed")
        return out

    def primal_bytes(self, size: str = "default", seed: int = 0) -> int:
        f = self._primal(size)
        from tapeflow.runner import make_arguments

        values = make_arguments(f, seed, _read_inputs(self.inputs, f))
        return sum(int(v.nbytes) for v in values if isinstance(v, np.ndarray))


def _load_file(path: str, text: str, defines: tuple[str, ...]) -> Any:
    """The module of a C or MLIR kernel file (a C file with its `-D` macros)."""
    from tapeflow import runner

    if path.endswith(".c"):
        from tapeflow.frontends.c import compile_c

        return compile_c(text, path, list(defines))
    return runner.load_module(text, path)


def _read_inputs(specs: tuple[str, ...], f: Any) -> dict[int | str, Any]:
    from xdsl.dialects.builtin import MemRefType

    from tapeflow.tools.run import _read_inputs as read

    if not specs:
        return {}
    memrefs = [p for p, t in enumerate(f.function_type.inputs.data) if isinstance(t, MemRefType)]
    return read(list(specs), memrefs)


def file_kernel(path: str, inputs: tuple[str, ...] = (), function: str = "",
                sizes: Mapping[str, Mapping[str, int]] | None = None, csv: str = "",
                size: str = "default") -> FileKernel:  # fmt: skip
    """A `FileKernel` for `path`, checked now: the file exists, compiles, and has one
    marked function (or `function`, when given, is marked); raises `ToolError`."""
    p = Path(path)
    if not p.is_file():
        raise ToolError(f"no such file: {path}")
    if not path.endswith((".c", ".mlir")):
        raise ToolError(f"{path}: a kernel file is a .c or .mlir file")
    kernel = FileKernel(path, function or "?", tuple(inputs), dict(sizes or {}), csv)
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
    kernel = FileKernel(path, function or marked[0], tuple(inputs), dict(sizes or {}), csv)
    kernel.grad_arguments(size)  # bad --inputs or scalars fail here, before anything runs
    return kernel


def salam_dir(directory: str | None = None) -> Path:
    """Suite salam's folder: `directory`, `$TAPEFLOW_SALAM`, else `kernel_dir()/salam`."""
    return Path(directory or os.environ.get("TAPEFLOW_SALAM") or kernel_dir() / "salam")


def salam_suite(directory: str | None = None) -> dict[str, FileKernel]:
    """Suite `salam` from `directory/manifest.toml` (default `kernel_dir()/salam`):
    name -> FileKernel. The manifest has one table per kernel:

        [gemm]
        file = "gemm.c"            # next to the manifest
        entry = "gemm"             # the function handed to __enzyme_autodiff
        csv = "gemm"               # gem5-SALAM's result CSV (salam_results)
        sizes.small = {N = 4}      # -D macros per size name
        sizes.default = {N = 64}
    """
    root = salam_dir(directory)
    manifest = root / SALAM_MANIFEST
    if not manifest.is_file():
        raise ToolError(f"suite salam: no such file: {manifest}")
    try:
        table = tomllib.loads(manifest.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ToolError(f"{manifest}: invalid TOML: {e}") from None
    out: dict[str, FileKernel] = {}
    for name, entry in table.items():
        if not isinstance(entry, dict) or "file" not in entry:
            continue  # not a kernel table (e.g. a note)
        k = FileKernel(str(root / entry["file"]), entry.get("entry", name), (),
                       {s: dict(v) for s, v in entry.get("sizes", {}).items()},
                       entry.get("csv", name), entry.get("description", ""))  # fmt: skip
        out[k.name] = k
    return out


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
