"""The machine description: loading, validating and overriding `defaults.toml`.

A machine is a nested TOML table (sections `core`, `ops.<class>`, `l1`, `l2`,
`prefetch`, `spm`, `dram`, `dma`). `load_machine()` starts from the packaged
`defaults.toml`, merges a user file (`--machine M.toml`, same layout, only the keys to
change), then `--set section.key=value` overrides, and validates the result: an unknown
key, a wrong type or a value out of range is a `ConfigError` that names the key.
"""

from __future__ import annotations

import copy
import difflib
import math
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from tapeflow.diagnostics import ToolError


class ConfigError(ToolError):
    """A machine description that cannot be used; the message names the key."""


# key -> (type, lower bound or None, strictly positive?)
_NUM = (int, float)
_SCHEMA: dict[str, dict[str, tuple[Any, ...]]] = {
    "meta": {"name": (str,), "technology": (str,)},
    "core": {
        "clock_ghz": (_NUM, "pos"),
        "issue_width": (int, "pos"),
        "fp_ports": (int, "pos"),
        "load_ports": (int, "pos"),
        "store_ports": (int, "pos"),
        "mlp": (_NUM, "pos"),
        "div_ports": (int, "pos"),
        "overlap": (str,),
        "window_ops": (int, "pos"),
        "lockstep": (bool,),
        "lockstep_mlp": (_NUM, "pos"),
        "instruction_overhead_pj": (_NUM, "nonneg"),
        "register_file_pj": (_NUM, "nonneg"),
    },
    "l1": {
        "size": (int, "pow2or0"),
        "assoc": (int, "pos"),
        "line": (int, "pow2"),
        "latency": (_NUM, "nonneg"),
        "access_energy_pj": (_NUM, "nonneg"),
        "energy_ref_size": (int, "pos"),
    },
    "l2": {
        "size": (int, "pow2"),
        "assoc": (int, "pos"),
        "line": (int, "pow2"),
        "latency": (_NUM, "nonneg"),
        "bandwidth": (_NUM, "pos"),
        "access_energy_pj": (_NUM, "nonneg"),
        "energy_ref_size": (int, "pos"),
    },
    "prefetch": {
        "enabled": (bool,),
        "table_size": (int, "pos"),
        "degree": (int, "pos"),
        "threshold": (int, "pos"),
        "page": (int, "pow2"),
    },
    "spm": {
        "size": (int, "pos"),
        "e0_pj": (_NUM, "nonneg"),
        "c0": (_NUM, "pos"),
        "exponent": (_NUM, "nonneg"),
        "tag_factor": (_NUM, "nonneg"),
        "lat0": (_NUM, "nonneg"),
        "lat_c0": (_NUM, "pos"),
        "lat_exponent": (_NUM, "nonneg"),
        "access_energy_pj": (_NUM, "nonneg"),
        "latency": (_NUM, "nonneg"),
    },
    "dram": {
        "bandwidth": (_NUM, "pos"),
        "latency": (_NUM, "nonneg"),
        "energy_pj_per_byte": (_NUM, "nonneg"),
    },
    "leakage": {"sram_mw_per_kib": (_NUM, "nonneg")},
    "datapath": {"enabled": (bool,), "ports": (int, "pos"), "in_flight": (int, "pos")},
    "dma": {
        "request": (int, "pos"),
        "in_flight": (int, "pos"),
        "setup": (_NUM, "nonneg"),
        "spm_port": (_NUM, "pos"),
        "engine_energy_pj": (_NUM, "nonneg"),
        "path": (str,),
    },
}
_OPTIONAL = {("spm", "access_energy_pj"), ("spm", "latency")}
_OP_KEYS: dict[str, tuple[Any, ...]] = {
    "cycles": (_NUM, "nonneg"),
    "port": (str,),
    "energy_pj": (_NUM, "nonneg"),
    "latency": (int, "nonneg"),
    "source": (str,),
}
"""`latency`: datapath steps of one op of the class under the datapath rule (optional, 0;
hwmodel/timing/datapath.py)."""
OP_CLASSES = (
    "int", "int_mul", "int_div", "fp_add", "fp_mul", "fp_fma", "fp_div",
    "fp_special", "cvt", "branch", "mem", "dma", "free",
)  # fmt: skip
PORTS = ("int", "fp", "mem", "div")
OVERLAPS = ("sum", "max")
DMA_PATHS = ("dram", "l2")
"""`dma.path`: "dram" = DRAM straight to the scratchpad; "l2" = through the L2 link and the
L2 (gem5-SALAM's cluster DMA sits on the cluster's coherent crossbar, in front of the
cluster cache), so transfers share the L2 link's bandwidth with the core's traffic."""
"""`core.overlap`: how a phase's memory terms combine (hwmodel/timing/phases.py's docstring)."""
DEFAULT_MACHINE = "default-45nm"
"""The name of `defaults.toml` as a preset (`--machine default-45nm`: no overrides)."""


@dataclass(frozen=True)
class OpClass:
    name: str
    cycles: float
    port: str
    energy_pj: float


@dataclass(frozen=True)
class CacheLevel:
    name: str
    size: int
    assoc: int
    line: int
    latency: float
    access_energy_pj: float
    bandwidth: float = 0.0

    @property
    def sets(self) -> int:
        return self.size // (self.assoc * self.line)


@dataclass(frozen=True)
class Machine:
    """A validated machine description. `raw` is the merged TOML table (printed in reports)."""

    raw: dict[str, Any]

    def get(self, section: str, key: str) -> Any:
        return self.raw[section][key]

    @property
    def ops(self) -> dict[str, OpClass]:
        return {
            name: OpClass(name, float(t["cycles"]), t["port"], float(t["energy_pj"]))
            for name, t in self.raw["ops"].items()
        }

    def cache_access_energy_pj(self, level: str) -> float:
        """Per 64-bit access of `level` ("l1"/"l2") at its size: `access_energy_pj` is the
        energy at `energy_ref_size` bytes, scaled by the scratchpad's capacity law
        `(size / energy_ref_size) ^ spm.exponent` (HWMODEL-REFERENCES sec. 1.2), so a
        smaller cache of a sweep costs less per access, as a smaller scratchpad does."""
        t = self.raw[level]
        return t["access_energy_pj"] * (t["size"] / t["energy_ref_size"]) ** self.raw["spm"][
            "exponent"]  # fmt: skip

    @property
    def has_l1(self) -> bool:
        """`l1.size = 0`: no L1 (gem5-SALAM's accelerators reach the cluster cache directly)."""
        return int(self.raw["l1"]["size"]) > 0

    @property
    def l1(self) -> CacheLevel:
        t = self.raw["l1"]
        return CacheLevel("L1", t["size"], t["assoc"], t["line"], t["latency"],
                          self.cache_access_energy_pj("l1"))  # fmt: skip

    @property
    def l2(self) -> CacheLevel:
        t = self.raw["l2"]
        return CacheLevel("L2", t["size"], t["assoc"], t["line"], t["latency"],
                          self.cache_access_energy_pj("l2"), t["bandwidth"])  # fmt: skip

    @property
    def spm_size(self) -> int:
        return int(self.raw["spm"]["size"])

    @property
    def spm_access_energy_pj(self) -> float:
        """Per 64-bit access: `tag_factor * e0 * (C/c0)^exponent` unless given explicitly."""
        t = self.raw["spm"]
        if "access_energy_pj" in t:
            return float(t["access_energy_pj"])
        return t["tag_factor"] * t["e0_pj"] * (t["size"] / t["c0"]) ** t["exponent"]

    @property
    def spm_latency(self) -> float:
        """`max(1, round(lat0 * (C/lat_c0)^lat_exponent))` cycles unless given explicitly."""
        t = self.raw["spm"]
        if "latency" in t:
            return float(t["latency"])
        return float(max(1, round(t["lat0"] * (t["size"] / t["lat_c0"]) ** t["lat_exponent"])))

    def _dma_limits(self) -> list[tuple[float, str]]:
        limits = [(float(self.raw["dram"]["bandwidth"]), "dram.bandwidth"),
                  (float(self.raw["dma"]["spm_port"]), "dma.spm_port")]  # fmt: skip
        if self.raw["dma"]["path"] == "l2":
            limits.append((float(self.raw["l2"]["bandwidth"]), "l2.bandwidth"))
        return limits

    @property
    def dma_bandwidth(self) -> float:
        """Bytes/cycle of one DMA transfer: min(DRAM bandwidth, scratchpad port, and the L2
        link's bandwidth when `dma.path = "l2"`)."""
        return min(bw for bw, _ in self._dma_limits())

    @property
    def dma_bound(self) -> str:
        """The key whose bandwidth binds a DMA transfer (the first of equal ones)."""
        return min(self._dma_limits(), key=lambda x: x[0])[1]


def _default_table() -> dict[str, Any]:
    text = resources.files("tapeflow.hwmodel").joinpath("defaults.toml").read_text()
    return tomllib.loads(text)


def _merge(base: dict[str, Any], extra: Mapping[str, Any], where: str, prefix: str = "") -> None:
    """Merges `extra` into `base`; unknown keys are left for `validate` to name."""
    for key, value in extra.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            current = base.setdefault(key, {})
            if not isinstance(current, dict):
                raise ConfigError(f"{where}: '{path}' is a value, not a table")
            _merge(current, value, where, path + ".")
        else:
            if isinstance(base.get(key), dict):
                raise ConfigError(f"{where}: '{path}' is a table, not a value")
            base[key] = value


def _parse_value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text  # a bare word: a string


def parse_set(assignment: str) -> tuple[list[str], Any]:
    """`l2.size=262144` -> (["l2", "size"], 262144)."""
    key, sep, value = assignment.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"--set expects section.key=value, got '{assignment}'")
    parts = key.split(".")
    if len(parts) < 2 or any(not p for p in parts):
        raise ConfigError(f"--set expects section.key=value, got '{assignment}'")
    return parts, _parse_value(value.strip())


def _check(path: str, value: Any, spec: tuple[Any, ...]) -> None:
    typ = spec[0]
    if typ is bool:
        ok = isinstance(value, bool)
    elif typ is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif typ == _NUM:
        ok = isinstance(value, _NUM) and not isinstance(value, bool)
    else:
        ok = isinstance(value, typ)
    if not ok:
        names = {str: "a string", bool: "true or false", int: "an integer"}
        expected = names.get(typ, "a number")
        raise ConfigError(f"machine key '{path}' must be {expected}, got {value!r}")
    if len(spec) > 1:
        rule = spec[1]
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"machine key '{path}' must be finite, got {value!r}")
        if rule == "pow2or0" and value < 0:
            raise ConfigError(f"machine key '{path}' must be >= 0, got {value!r}")
        if rule in ("pos", "pow2") and value <= 0:
            raise ConfigError(f"machine key '{path}' must be > 0, got {value!r}")
        if rule == "nonneg" and value < 0:
            raise ConfigError(f"machine key '{path}' must be >= 0, got {value!r}")
        if rule in ("pow2", "pow2or0") and value & (value - 1):
            raise ConfigError(f"machine key '{path}' must be a power of two, got {value!r}")


def _did_you_mean(typed: str, known: Iterable[str], prefix: str = "") -> str:
    """` (did you mean 'l2.size'?)` for the closest known name, or ''."""
    close = difflib.get_close_matches(typed, list(known), n=1)
    return f" (did you mean '{prefix}{close[0]}'?)" if close else ""


def validate(table: dict[str, Any]) -> Machine:
    for section, keys in _SCHEMA.items():
        if section not in table:
            raise ConfigError(f"machine is missing the table '[{section}]'")
        for key, spec in keys.items():
            if key not in table[section]:
                if (section, key) in _OPTIONAL:
                    continue
                raise ConfigError(f"machine is missing the key '{section}.{key}'")
            _check(f"{section}.{key}", table[section][key], spec)
        for key in table[section]:
            if key not in keys:
                raise ConfigError(f"unknown machine key '{section}.{key}'"
                                  + _did_you_mean(key, keys, f"{section}."))  # fmt: skip
    for section in table:
        if section not in _SCHEMA and section != "ops":
            raise ConfigError(f"unknown machine table '[{section}]'"
                              + _did_you_mean(section, [*_SCHEMA, "ops"]))  # fmt: skip
    ops = table.get("ops", {})
    for name in OP_CLASSES:
        if name not in ops:
            raise ConfigError(f"machine is missing the op class '[ops.{name}]'")
    for name, entry in ops.items():
        if name not in OP_CLASSES:
            raise ConfigError(f"unknown op class 'ops.{name}' (known: {', '.join(OP_CLASSES)})")
        for key, spec in _OP_KEYS.items():
            if key not in entry:
                if key in ("source", "latency"):
                    continue
                raise ConfigError(f"machine is missing the key 'ops.{name}.{key}'")
            _check(f"ops.{name}.{key}", entry[key], spec)
        for key in entry:
            if key not in _OP_KEYS:
                raise ConfigError(f"unknown machine key 'ops.{name}.{key}'"
                                  + _did_you_mean(key, _OP_KEYS, f"ops.{name}."))  # fmt: skip
        if entry["port"] not in PORTS:
            raise ConfigError(
                f"machine key 'ops.{name}.port' must be one of {', '.join(PORTS)}, "
                f"got {entry['port']!r}"
            )
    for level in ("l1", "l2"):
        t = table[level]
        if level == "l1" and t["size"] == 0:
            continue  # no L1
        if t["size"] < t["assoc"] * t["line"] or t["size"] % (t["assoc"] * t["line"]):
            raise ConfigError(
                f"machine key '{level}.size' ({t['size']}) must be a multiple of "
                f"{level}.assoc * {level}.line ({t['assoc'] * t['line']})"
            )
        sets = t["size"] // (t["assoc"] * t["line"])
        if sets & (sets - 1):
            raise ConfigError(
                f"machine key '{level}.size': {level}.size / ({level}.assoc * {level}.line) "
                f"= {sets} sets, which must be a power of two"
            )
    if table["l1"]["line"] != table["l2"]["line"]:
        raise ConfigError("machine keys 'l1.line' and 'l2.line' must be equal")
    if table["core"]["overlap"] not in OVERLAPS:
        raise ConfigError(
            f"machine key 'core.overlap' must be one of {', '.join(OVERLAPS)}, "
            f"got {table['core']['overlap']!r}"
        )
    if table["dma"]["path"] not in DMA_PATHS:
        raise ConfigError(
            f"machine key 'dma.path' must be one of {', '.join(DMA_PATHS)}, "
            f"got {table['dma']['path']!r}"
        )
    if table["prefetch"]["page"] < table["l1"]["line"]:
        raise ConfigError("machine key 'prefetch.page' must be >= l1.line")
    return Machine(table)


def load_machine(
    machine_file: str | Path | None = None, overrides: Iterable[str] = ()
) -> Machine:
    """The default machine, updated by `machine_file` and then by `key=value` overrides."""
    table = copy.deepcopy(_default_table())
    if machine_file is not None and str(machine_file) != DEFAULT_MACHINE:
        path = _machine_path(machine_file)
        try:
            extra = tomllib.loads(path.read_text())
        except OSError as e:
            raise ConfigError(f"cannot read machine file '{path}': {e.strerror}") from None
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path}: invalid TOML: {e}") from None
        _merge(table, extra, str(path))
    for assignment in overrides:
        parts, value = parse_set(assignment)
        _merge(table, _nest(parts, value), "--set")
    return validate(table)


def presets() -> list[str]:
    """Names of the packaged machine files usable as `--machine NAME` (e.g. dram-hbm2), and
    `default-45nm` (defaults.toml itself)."""
    root = resources.files("tapeflow.hwmodel")
    return sorted(
        [DEFAULT_MACHINE]
        + [p.name[: -len(".toml")]
        for p in root.iterdir()
        if p.name.endswith(".toml") and p.name != "defaults.toml"]
    )


def _machine_path(machine_file: str | Path) -> Path:
    """A path as given, or a packaged preset by name (`dram-hbm2` -> hwmodel/dram-hbm2.toml)."""
    path = Path(machine_file)
    if path.exists() or path.suffix == ".toml" or "/" in str(machine_file):
        return path
    preset = resources.files("tapeflow.hwmodel").joinpath(f"{machine_file}.toml")
    if preset.is_file():
        return Path(str(preset))
    raise ConfigError(
        f"no machine file '{machine_file}' (and no preset of that name; presets: "
        f"{', '.join(presets()) or 'none'})"
    )


def _nest(parts: list[str], value: Any) -> dict[str, Any]:
    out: Any = value
    for part in reversed(parts):
        out = {part: out}
    return out
