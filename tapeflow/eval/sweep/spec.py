"""A sweep spec (TOML, see `SPEC_DOC`): its axes and the grid of points they span
(`load_spec`); a bad spec is one located `error:` line (`SpecError`)."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tapeflow.diagnostics import ToolError
from tapeflow.eval import jobs
from tapeflow.eval.kernels import file_kernel, is_kernel_file
from tapeflow.hwmodel.config import DEFAULT_MACHINE, load_machine
from tapeflow.transforms import checkpoint
from tapeflow.transforms.options import DEFAULT_DEPTH, check_options, scratchpad_bytes

LAYER_OPTIONS = ("spm-bytes", "tile-bytes", "depth")
"""The TapeFlow pipeline's layer options (`tapeflow{spm-bytes tile-bytes depth}`): columns
of every point."""
CHECKPOINT_OPTIONS = ("snapshots", "schedule")
"""Its `checkpoint=SCHEDULE-SNAPSHOTS` option, as two axes: columns only of a spec that
sweeps `snapshots`, which adds the variant `checkpoint` (TapeFlow's pipeline with it)."""
PASS_OPTIONS = LAYER_OPTIONS + CHECKPOINT_OPTIONS
"""What a spec's `[pass]` table may sweep."""
SPEC_KEYS = ("kernels", "sizes", "machines", "seed", "variants", "backend", "pass", "set",
             "plot", "inputs", "args")  # fmt: skip

SPEC_DOC = """\
spec (TOML; every axis takes one value or a list, the grid is their product):
  kernels  = ["gemm", "lstm"]        benchmark kernels (required), or kernel files
                                     relative to the spec, as tapeflow-bench --kernels
                                     takes them: "rd.c", "k.mlir" (one size: as written)
  inputs   = ["rd.npz"]              a kernel file's arrays and scalars by name, as
                                     tapeflow-bench --inputs (relative to the spec)
  args     = ["16", "100"]           a kernel file's other scalars, as tapeflow-bench --args
  sizes    = ["small"]               kernel sizes: small, default (default: default)
  machines = ["default-45nm", "accel-salam", "my.toml"]
                                     machine presets (tapeflow-bench --machine NAME) or
                                     TOML files relative to the spec (default:
                                     default-45nm, hwmodel/defaults.toml)
  seed     = 0                       seed of the kernels' inputs
  variants = ["enzyme", "tapeflow"]  rows per point (default: all four, and checkpoint
                                     when snapshots is swept)
  backend  = "auto"                  cache simulator backend
  [pass]                             TapeFlow pipeline options
  spm-bytes = [8192, 32768]          (default: the machine's spm.size)
  tile-bytes = 0
  depth = [2, 3]
  snapshots = [4, 8, 16]             adds the variant checkpoint: TapeFlow with
  schedule = "binomial"              tapeflow{checkpoint=SCHEDULE-SNAPSHOTS} (binomial or
                                     periodic; default binomial)
  [set]                              machine keys, as tapeflow-bench --set
  "l2.size" = [262144, 1048576]
  [plot]
  heatmap = ["l2.size", "spm-bytes"] the two axes of the heatmaps"""


def digest(*parts: str | bytes) -> str:
    """sha256 over `parts` (each ended by a NUL): the point ids and the sweep's cache keys."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() if isinstance(part, str) else part)
        h.update(b"\0")
    return h.hexdigest()


@dataclass
class Point:
    """One grid point: its axis values (`columns`) and what they resolve to."""

    columns: dict[str, Any]
    kernel: Any
    """The kernel's name (the bundled suite), or its `kernels.FileKernel`."""
    size: str
    seed: int
    machine: dict[str, Any]
    """The merged, validated machine table (`Machine.raw`)."""
    spm_bytes: int
    tile_bytes: int
    depth: int
    snapshots: int = 0
    """Checkpoint snapshots of the `checkpoint` variant (0: the spec sweeps none)."""
    schedule: str = ""
    machine_file: str = ""
    """The machine as named (a preset, or a TOML file's path), and its `[set]` overrides:
    TapeFlow's cost model decides for them."""
    overrides: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return digest(json.dumps(self.columns, sort_keys=True))[:20]


@dataclass
class Spec:
    path: str
    points: list[Point]
    variants: tuple[str, ...]
    backend: str
    axes: list[str]
    """Every column that names an axis, in spec order."""
    heatmap: list[str] = field(default_factory=list)


class SpecError(ToolError):
    """A spec that cannot be run; the message starts with `spec.toml[:line:col]: `."""


def _locate(text: str, table: str, key: str | None) -> str:
    """`:line:col` of `key` in `[table]` ('' = top level) of a TOML text, or ''."""
    current = ""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        header = re.fullmatch(r"\[\s*([^\[\]]+?)\s*\]", stripped)
        if header:
            current = header.group(1).replace('"', "")
            if key is None and current == table:
                return f":{number}:1"
            continue
        m = re.match(r'\s*"?([^"=\s]+)"?\s*=', line)
        if m is None or key is None:
            continue
        name = m.group(1)
        if current != table and current.startswith(table + ".") and table:
            name, current_table = current[len(table) + 1 :] + "." + name, table
        else:
            current_table = current
        if current_table == table and name == key:
            return f":{number}:{len(line) - len(line.lstrip()) + 1}"
    return ""


def flatten_table(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            out.update(flatten_table(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _values(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value]


def load_spec(path: str | Path) -> Spec:
    """Parses and checks a sweep spec; every machine of the grid is loaded and validated
    here, so a bad value fails before anything runs."""
    where = str(path)
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise SpecError(f"{where}: cannot read the spec: {e.strerror}") from None
    try:
        spec = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        loc = f":{m.group(1)}:{m.group(2)}" if m else ""
        raise SpecError(f"{where}{loc}: invalid TOML: {str(e).split(' (at')[0]}") from None

    base = Path(path).resolve().parent

    def fail(message: str, table: str = "", key: str | None = None) -> SpecError:
        return SpecError(f"{where}{_locate(text, table, key)}: {message}")

    for key in spec:
        if key not in SPEC_KEYS:
            raise fail(f"unknown key '{key}' (known: {', '.join(SPEC_KEYS)})", "", key)
    for key in ("pass", "set", "plot"):
        if not isinstance(spec.get(key, {}), dict):
            raise fail(f"'{key}' must be a table ([{key}])", "", key)

    def strings(key: str, default: list[str], known: Sequence[str] | None) -> list[str]:
        values = _values(spec.get(key, default))
        if not values or not all(isinstance(v, str) for v in values):
            raise fail(f"'{key}' must be a string or a non-empty list of strings", "", key)
        bad = [v for v in values if known is not None and v not in known]
        if bad:
            raise fail(f"unknown {key[:-1] if key.endswith('s') else key} "
                       f"{', '.join(repr(v) for v in bad)} (known: {', '.join(known or ())})",
                       "", key)  # fmt: skip
        return list(dict.fromkeys(values))

    if "kernels" not in spec:
        raise fail("missing key 'kernels' (a list of benchmark kernels)")
    kernels = _kernel_refs(strings("kernels", [], None), spec, base, fail)
    sizes = strings("sizes", ["default"], ["small", "default"])
    machines = strings("machines", [DEFAULT_MACHINE], None)
    checkpointing = "snapshots" in spec.get("pass", {})
    every_variant = [*jobs.VARIANTS, "checkpoint"]
    variants = strings("variants", every_variant if checkpointing else list(jobs.VARIANTS),
                       every_variant)  # fmt: skip
    if "checkpoint" in variants and not checkpointing:
        raise fail("variant 'checkpoint' needs a snapshots axis ([pass] snapshots = ...)",
                   "", "variants")  # fmt: skip
    backend = spec.get("backend", "auto")
    if backend not in ("auto", "numba", "python"):
        raise fail("'backend' must be one of auto, numba, python", "", "backend")
    seeds = _values(spec.get("seed", 0))
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                            for s in seeds):  # fmt: skip
        raise fail("'seed' must be a whole number >= 0 or a list of them", "", "seed")

    passes = spec.get("pass", {})
    for key, value in passes.items():
        if key not in PASS_OPTIONS:
            raise fail(f"unknown pass option '{key}' (known: {', '.join(PASS_OPTIONS)})",
                       "pass", key)  # fmt: skip
        values = _values(value)
        if key == "schedule":
            if not values or not all(v in checkpoint.SCHEDULES for v in values):
                known = ", ".join(checkpoint.SCHEDULES)
                raise fail(f"pass option 'schedule' must be one of {known} or a list of them",
                           "pass", key)  # fmt: skip
            if not checkpointing:
                raise fail("pass option 'schedule' needs a snapshots axis", "pass", key)
            continue
        if not values or not all(isinstance(v, int) and not isinstance(v, bool)
                                 for v in values):  # fmt: skip
            raise fail(f"pass option '{key}' must be an integer or a list of integers",
                       "pass", key)  # fmt: skip
        for v in values:
            try:
                if key == "snapshots":
                    checkpoint.check_options("tapeflow", "binomial", v)
                else:
                    check_options("tapeflow", **{key.replace("-", "_"):
                                                 (v, 0 if key == "tile-bytes" else 1)})  # fmt: skip
            except Exception as e:
                raise fail(str(e), "pass", key) from None
    sets = flatten_table(spec.get("set", {}))
    for key, value in sets.items():
        if not _values(value):
            raise fail(f"machine key '{key}' has an empty list of values", "set", key)

    set_keys = list(sets)
    pass_keys = list(passes)
    if checkpointing and "schedule" not in passes:
        passes, pass_keys = {**passes, "schedule": "binomial"}, [*pass_keys, "schedule"]
    machine_cache: dict[tuple[Any, ...], dict[str, Any]] = {}
    points: list[Point] = []
    grid = itertools.product(
        kernels, sizes, machines, seeds,
        itertools.product(*(_values(sets[k]) for k in set_keys)),
        itertools.product(*(_values(passes[k]) for k in pass_keys)),
    )  # fmt: skip
    for kernel, size, machine, seed, set_values, pass_values in grid:
        mkey = (machine, json.dumps(set_values))
        overrides = tuple(f"{k}={json.dumps(v)}" for k, v in zip(set_keys, set_values,
                                                                  strict=True))  # fmt: skip
        if mkey not in machine_cache:
            try:
                machine_cache[mkey] = load_machine(_machine_file(machine, base), overrides).raw
            except ToolError as e:
                bad = next((k for k in set_keys if f"'{k}'" in str(e)), None)
                table, key = ("set", bad) if bad else ("", "machines")
                raise fail(f"machine {machine!r}"
                           + "".join(f", {k}={v!r}" for k, v in zip(set_keys, set_values,
                                                                  strict=True))  # fmt: skip
                           + f": {e}", table, key) from None
        raw = machine_cache[mkey]
        options = dict(zip(pass_keys, pass_values, strict=True))
        try:
            spm = scratchpad_bytes(options.get("spm-bytes"), raw["spm"]["size"], repr(machine))
        except ToolError as e:
            raise fail(str(e), "pass", "spm-bytes") from None
        tile = options.get("tile-bytes", 0)
        depth = options.get("depth", DEFAULT_DEPTH)
        columns = {"kernel": kernel_label(kernel), "size": size, "machine": machine, "seed": seed,
                   **dict(zip(set_keys, set_values, strict=True)),
                   "spm-bytes": spm, "tile-bytes": tile, "depth": depth}  # fmt: skip
        ckpt = {k: options[k] for k in CHECKPOINT_OPTIONS if checkpointing}
        points.append(Point({**columns, **ckpt}, kernel, size, seed, raw, spm, tile, depth,
                            ckpt.get("snapshots", 0), ckpt.get("schedule", ""),
                            _machine_file(machine, base), overrides))  # fmt: skip

    axes = ["kernel", "size", "machine", "seed", *set_keys, *LAYER_OPTIONS,
            *(CHECKPOINT_OPTIONS if checkpointing else ())]  # fmt: skip
    heatmap = _values(spec.get("plot", {}).get("heatmap", []))
    for key in spec.get("plot", {}):
        if key != "heatmap":
            raise fail(f"unknown plot key '{key}' (known: heatmap)", "plot", key)
    if heatmap and (len(heatmap) != 2 or any(a not in axes for a in heatmap)):
        raise fail(f"plot.heatmap must name two axes of the grid (axes: {', '.join(axes)})",
                   "plot", "heatmap")  # fmt: skip
    return Spec(where, points, tuple(variants), backend, axes, heatmap)


def _kernel_refs(names: list[str], spec: dict[str, Any], base: Path, fail: Any) -> list[Any]:
    """The spec's kernels: bundled names, or kernel files (relative to the spec) checked
    as tapeflow-bench checks them, with the spec's `inputs` and `args`."""
    known = list(jobs.kernels())
    files = [n for n in names if is_kernel_file(n)]
    bad = [n for n in names if n not in known and n not in files]
    if bad:
        raise fail(f"unknown kernel {', '.join(map(repr, bad))} (known: {', '.join(known)}; "
                   "or a .c/.mlir file)", "", "kernels")  # fmt: skip
    extra = {}
    for key in ("inputs", "args"):
        values = _values(spec.get(key, []))
        if not all(isinstance(v, str | int | float) and not isinstance(v, bool) for v in values):
            raise fail(f"'{key}' must be a string or a list of strings", "", key)
        if values and not files:
            raise fail(f"'{key}' is for kernel files", "", key)
        extra[key] = tuple(str(v) for v in values)
    inputs = tuple(_relative_input(i, base) for i in extra["inputs"])
    refs: list[Any] = []
    for n in names:
        if n not in files:
            refs.append(n)
            continue
        try:
            refs.append(file_kernel(str(base / n), inputs, scalars=extra["args"]))
        except ToolError as e:
            raise fail(str(e), "", "kernels") from None
    return refs


def _relative_input(spec: str, base: Path) -> str:
    """An `--inputs` spec (`data.npz`, `P=a.npy`) with its file relative to `base`."""
    key, sep, path = spec.rpartition("=")
    return f"{key}{sep}{base / path}"


def kernel_label(kernel: Any) -> str:
    """A point's `kernel` column: the bundled name, or the file kernel's function."""
    return kernel if isinstance(kernel, str) else kernel.name


def _machine_file(name: str, base: Path) -> str:
    """A machine TOML file relative to the spec, or a preset name as given."""
    if name.endswith(".toml") or "/" in name:
        return str(base / name)
    return name
