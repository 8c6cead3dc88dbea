"""The checks run on each random program, and the failures they report.

For a program P (its f64 rendering, or f32 with its f64 twin):

- `autodiff`: `tapeflow-autodiff` accepts P (every generated program is in the
  supported subset, so a diagnostic here is a failure too).
- `gradient`: f64: the AD directional derivative along random directions agrees with a
  central difference of the loss  L = seed*f(...) + sum_A <w_A, A_final>  (directions
  where a forward and a backward difference disagree cross a kink or a branch switch and
  are not compared). f32: the f32 gradients agree with the f64 twin's, to a tolerance
  scaled by how far the two primal results already differ.
- `pipeline`: every prefix of the pipeline (lower-tape; regions; lower-regions; layers
  with a scratchpad of a few records; stream with depth 1-4 and small tiles) and the
  whole `tapeflow{...}` on P give `@f_grad` results and memory bit-identical to the
  autodiff IR's. A scratchpad or tile too small for one record is a clean rejection
  (skipped, counted).
- `sim`: the simulator's compiled fast path (`simulate_fast`) against its interpreter
  path (`simulate`): values, memory and the whole report identical, on the Enzyme-layout
  and on the TapeFlow program; the values must also be the autodiff IR's.

A check that raises is a failure too: `traceback` for a Python error, `error` for a
clean diagnostic on a valid program, `hang` past the time limit.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import re
import signal
import struct
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import DiagnosticException, InterpretationError

from fuzz.program import DEFAULT_FEATURES, K, N, Program
from tapeflow.diagnostics import parse_module
from tapeflow.registry import get_all_passes, make_context
from tapeflow.runner import RunResult, run_function

FAMILIES = ("autodiff", "gradient", "pipeline", "sim")
KINDS = ("wrong-gradient", "bit-difference", "sim-mismatch", "error", "traceback", "hang")


class Hang(BaseException):
    """Raised by the alarm: a BaseException, so `except Exception` in the code under test
    does not swallow it."""


@dataclass
class Failure(Exception):
    family: str
    kind: str
    where: str  # the pipeline or stage
    message: str

    def signature(self) -> tuple[str, str, str, str]:
        """What must stay the same while the program is minimized."""
        head = self.message.strip().splitlines()[0] if self.message.strip() else ""
        head = re.sub(r"\S+:\d+:\d+:?", "LOC", head)
        head = re.sub(r"%[\w#]+", "%v", head)
        head = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", head)[:100]
        stage = re.sub(r"\{.*?\}|\s*\(.*\)", "", self.where)
        if self.kind in ("wrong-gradient", "bit-difference", "sim-mismatch"):
            head = ""
        return self.family, self.kind, stage, head

    def __str__(self) -> str:
        return f"{self.kind} in {self.family} ({self.where}): {self.message}"


@dataclass
class Stats:
    programs: int = 0
    checks: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    covered: Counter[str] = field(default_factory=Counter)
    """Programs that reached a construct of interest (streamed tiles, growable tapes...)."""

    def add(self, other: Stats) -> None:
        self.programs += other.programs
        self.checks += other.checks
        self.failures.update(other.failures)
        self.skipped.update(other.skipped)
        self.covered.update(other.covered)

    def summary(self) -> str:
        counts = ", ".join(f"{self.failures[k]} {k}" for k in KINDS)
        skipped = ", ".join(f"{v} {k}" for k, v in sorted(self.skipped.items())) or "none"
        covered = ", ".join(f"{v} {k}" for k, v in sorted(self.covered.items())) or "none"
        return (
            f"{self.programs} programs, {self.checks} checks: {counts}; "
            f"programs with: {covered}; not compared: {skipped}"
        )


WALL_FACTOR = 100
"""A program also hangs after this many times its CPU limit of wall time (blocked; a
program niced on a loaded machine may get a tenth of a core, or less)."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raises `Hang` after `seconds` of the process's CPU time (a loaded machine slows a
    program, it does not make it hang: in wall time, programs of a few CPU seconds were
    reported as hangs and minimized as such), or after `WALL_FACTOR` times that of wall
    time (a program that waits on something)."""
    limits = {signal.SIGPROF: (signal.ITIMER_PROF, seconds, " of CPU time"),
              signal.SIGALRM: (signal.ITIMER_REAL, WALL_FACTOR * seconds, "")}  # fmt: skip

    def alarm(signum: int, frame: Any) -> None:
        _, limit, what = limits[signal.Signals(signum)]
        raise Hang(f"no result after {limit:g} s{what}")

    old = {sig: signal.signal(sig, alarm) for sig in limits}
    for timer, limit, _ in limits.values():
        signal.setitimer(timer, limit)
    try:
        yield
    finally:
        for sig, (timer, _, _) in limits.items():
            signal.setitimer(timer, 0)
            signal.signal(sig, old[sig])


# ---------------------------------------------------------------------------------------
# Running


def parse(text: str) -> ModuleOp:
    return parse_module(make_context(), text, "<test>")


@functools.cache
def _all_passes() -> dict[str, Any]:
    return get_all_passes()


def apply(module: ModuleOp, pipeline: str) -> ModuleOp:
    """`module` after `pipeline` (changed in place), verified."""
    if pipeline:
        PassPipeline.parse_spec(_all_passes(), pipeline).apply(make_context(), module)
    module.verify()
    return module


def primal_args(program: Program, float_type: str) -> list[Any]:
    rng = np.random.default_rng(program.seed)
    dtype = np.float64 if float_type == "f64" else np.float32
    x = rng.uniform(-1, 1, N).astype(dtype)
    y = rng.uniform(-1, 1, N).astype(dtype)
    s = float(dtype(rng.uniform(-1, 1)))
    n = int(rng.integers(0, N + 1))
    cnt = rng.integers(0, N + 1, K).astype(np.int64)
    return [x, y, s, n, cnt]


def grad_args(primal: list[Any], weights: list[np.ndarray], seed: float) -> list[Any]:
    """@f_grad's arguments: each float memref followed by its shadow (holding the weights
    of the loss), then the result's seed."""
    x, y, s, n, cnt = primal
    return [x.copy(), weights[0].copy(), y.copy(), weights[1].copy(), s, n, cnt.copy(), seed]


def observe(module: ModuleOp, entry: str, args: list[Any]) -> list[bytes | int]:
    """The bits of every result and of every memref after the call."""
    run = run_function(module, entry, copy.deepcopy(args))
    return _bits(run.results, run.arguments)


def _bits(results: list[Any], arguments: list[Any]) -> list[bytes | int]:
    out: list[bytes | int] = []
    for v in [*results, *arguments]:
        if isinstance(v, np.ndarray):
            out.append(v.tobytes())
        elif isinstance(v, float):
            out.append(struct.pack("<d", v))
        else:
            out.append(v)
    return out


def loss(module: ModuleOp, args: list[Any], weights: list[np.ndarray], seed: float) -> float:
    run = run_function(module, "f", copy.deepcopy(args))
    x, y = run.arguments[0], run.arguments[1]
    return float(
        seed * run.results[0]
        + np.sum(weights[0] * x.astype(np.float64))
        + np.sum(weights[1] * y.astype(np.float64))
    )


# ---------------------------------------------------------------------------------------
# The checks


@dataclass
class Context:
    """What the checks of one program share."""

    program: Program
    stats: Stats
    policy: str
    text: str = ""
    ad_text: str = ""
    args: list[Any] = field(default_factory=list[Any])
    expected: list[bytes | int] = field(default_factory=list[bytes | int])
    gradient: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """The autodiff IR's gradient (its run of `expected`)."""
    plans: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    modules: dict[str, ModuleOp] = field(default_factory=dict[str, ModuleOp])
    inputs: dict[str, ModuleOp] = field(default_factory=dict[str, ModuleOp])
    """The parsed primal and autodiff IR (`pipelines`' sources)."""
    uses: Counter[str] = field(default_factory=Counter[str])
    """Pipelines left to run on each input."""

    def take(self, source: str) -> ModuleOp:
        """The parsed `source` for a pipeline to change: a clone while other pipelines are
        left to run on it, the module itself for the last (cloning is a tenth of the
        checks' time)."""
        self.uses[source] -= 1
        return self.inputs[source].clone() if self.uses[source] else self.inputs.pop(source)


def _guard(family: str, where: str):
    """Turns an exception in a check into a `Failure`."""

    @contextlib.contextmanager
    def guarded() -> Iterator[None]:
        try:
            yield
        except Failure:
            raise
        except Hang as e:
            raise Failure(family, "hang", where, str(e)) from None
        except (DiagnosticException, InterpretationError) as e:
            raise Failure(family, "error", where, f"{type(e).__name__}: {e}") from e
        except Exception as e:
            raise Failure(family, "traceback", where, f"{type(e).__name__}: {e}") from e

    return guarded()


def check_program(
    program: Program, features: frozenset[str] = DEFAULT_FEATURES, *,
    families: tuple[str, ...] = FAMILIES, stats: Stats | None = None,
) -> Stats:  # fmt: skip
    """Runs the checks of `families` on `program`; raises `Failure` on the first failure.
    The `features` that gate checks (`sim-growable`, `stream-lower-bound`) say which of
    them run."""
    stats = stats or Stats()
    stats.programs += 1
    rng = np.random.default_rng([program.seed, 7])
    policy = "cache-all" if rng.random() < 0.25 else "min-tape"
    c = Context(program, stats, policy)
    c.text = program.render()
    stats.covered[program.float_type] += 1
    with _guard("autodiff", f"tapeflow-autodiff{{policy={policy}}}"):
        c.inputs["primal"] = parse(c.text)
        ad = apply(c.inputs["primal"].clone(), f"tapeflow-autodiff{{policy={policy}}}")
        c.ad_text = str(ad)
    stats.checks += 1
    primal = primal_args(program, program.float_type)
    dtype = primal[0].dtype
    weights = [rng.uniform(-1, 1, N).astype(dtype), rng.uniform(-1, 1, N).astype(dtype)]
    seed = float(dtype.type(rng.uniform(0.5, 1.5)))
    c.args = grad_args(primal, weights, seed)
    with _guard("gradient", "autodiff IR"):
        run = run_function(ad, "f_grad", copy.deepcopy(c.args))
        c.expected = _bits(run.results, run.arguments)
        c.gradient = _gradient(run)
    if "gradient" in families:
        if program.float_type == "f64":
            check_finite_differences(c, ad, primal, weights, seed)
        else:
            check_f32_twin(c, ad, primal, weights, seed)
    if "pipeline" in families or "sim" in families:
        check_pipelines(c, "pipeline" in families, "stream-lower-bound" in features)
    if "sim" in families:
        check_sim(c, growable="sim-growable" in features)
    return stats


def _gradient(run: RunResult) -> np.ndarray:
    """The gradient of an @f_grad run as one vector (dx, dy, ds)."""
    dx, dy = run.arguments[1], run.arguments[3]
    ds = run.results[0]
    return np.concatenate([dx, dy, [ds]]).astype(np.float64)


def check_finite_differences(c: Context, ad: ModuleOp, primal, weights, seed) -> None:
    with _guard("gradient", "finite differences"):
        g = c.gradient
        if not np.all(np.isfinite(g)) or not np.isfinite(loss(ad, primal, weights, seed)):
            c.stats.skipped["non-finite"] += 1
            return
        rng = np.random.default_rng([c.program.seed, 1])
        for _ in range(2):
            v = rng.normal(size=2 * N + 1)
            exact = float(g @ v)
            errors = []
            for h in (1e-6, 1e-5, 1e-7):
                plus, zero, minus = (
                    loss(ad, _moved(primal, v, t * h), weights, seed) for t in (1, 0, -1)
                )
                forward, backward = (plus - zero) / h, (zero - minus) / h
                central = (plus - minus) / (2 * h)
                if abs(forward - backward) > 1e-3 * max(1.0, abs(central)):
                    errors.append(None)  # a kink or a branch switch within h
                    continue
                scale = max(abs(exact), abs(central), 1e-3 * float(np.linalg.norm(g)), 1e-12)
                errors.append(abs(exact - central) / scale)
                if errors[-1] <= 1e-6:
                    break
            c.stats.checks += 1
            measured = [e for e in errors if e is not None]
            if not measured:
                c.stats.skipped["non-smooth direction"] += 1
            elif min(measured) > 1e-5:
                raise Failure("gradient", "wrong-gradient", "f64 vs finite differences",
                              f"directional derivative {exact!r}, finite differences "
                              f"relative errors {errors}")  # fmt: skip


def _moved(primal: list[Any], v: np.ndarray, t: float) -> list[Any]:
    x, y, s, n, cnt = primal
    return [x + t * v[:N], y + t * v[N : 2 * N], s + t * float(v[-1]), n, cnt]


def check_f32_twin(c: Context, ad32: ModuleOp, primal32, weights32, seed32) -> None:
    with _guard("gradient", "f32 vs f64 twin"):
        twin = apply(parse(c.program.render("f64")), f"tapeflow-autodiff{{policy={c.policy}}}")
        primal64 = [a.astype(np.float64) if a.dtype.kind == "f" else a
                    for a in (np.asarray(p) for p in primal32)]  # fmt: skip
        primal64[2], primal64[3] = float(primal32[2]), int(primal32[3])
        weights64 = [w.astype(np.float64) for w in weights32]
        args64 = grad_args(primal64, weights64, float(seed32))
        g32 = c.gradient
        g64 = _gradient(run_function(twin, "f_grad", copy.deepcopy(args64)))
        l32 = loss(ad32, primal32, weights32, seed32)
        l64 = loss(twin, primal64, weights64, seed32)
        if not (np.all(np.isfinite(g32)) and np.all(np.isfinite(g64)) and np.isfinite(l64)):
            c.stats.skipped["non-finite"] += 1
            return
        primal_error = abs(l32 - l64) / max(1.0, abs(l64))
        if primal_error > 1e-4:  # ill-conditioned (or a branch flipped by rounding)
            c.stats.skipped["f32 ill-conditioned"] += 1
            return
        scale = max(float(np.max(np.abs(g64))), 1.0)
        error = float(np.max(np.abs(g32 - g64))) / scale
        c.stats.checks += 1
        if error > max(1e-3, 100 * primal_error):
            raise Failure("gradient", "wrong-gradient", "f32 vs f64 twin",
                          f"max |g32 - g64| / scale = {error:.3g} (primal differs by "
                          f"{primal_error:.3g})\n g32 = {g32}\n g64 = {g64}")  # fmt: skip


def _record_sizes(module: ModuleOp) -> tuple[int, int]:
    """Sum and largest record size of the region tapes (the layers' budget unit)."""
    from tapeflow.dialects import region

    sizes = [
        op.tape.type.record.size
        for op in module.walk()
        if isinstance(op, region.AllocOp) and not op.tape.type.in_spm
    ]
    return sum(sizes), max(sizes, default=0)


REGIONS = "tapeflow-regions"


def pipelines(c: Context) -> list[tuple[str, str]]:
    """(input, pipeline) pairs: every prefix after the autodiff IR, and the whole pipeline
    on the primal, with small scratchpads and tiles drawn for this program."""
    c.inputs["ad"] = parse(c.ad_text)
    regions = c.modules[REGIONS] = apply(c.inputs["ad"].clone(), REGIONS)  # a plan's too
    total, widest = _record_sizes(regions)
    total, widest = max(total, 1), max(widest, 1)
    r = np.random.default_rng([c.program.seed, 2])
    out = [("ad", "tapeflow-lower-tape"), ("ad", "tapeflow-regions"),
           ("ad", "tapeflow-regions,tapeflow-lower-regions")]  # fmt: skip
    d = int(r.integers(1, 5))
    spm = d * total * int(r.integers(1, 4))
    out.append(("ad", f"tapeflow-regions,tapeflow-layers{{spm-bytes={spm} depth={d}}}"))
    d = int(r.integers(1, 5))
    spm = d * total * int(r.integers(1, 4)) + int(r.integers(0, 8))
    tile = int(r.choice([0, widest, 2 * widest, total]))
    out.append(("ad", f"tapeflow-regions,tapeflow-layers{{spm-bytes={spm} depth={d} "
                      f"tile-bytes={tile}}},tapeflow-stream{{depth={d} tile-bytes={tile}}}"))
    d = int(r.integers(1, 5))
    spm = d * total * int(r.integers(1, 4))
    tile = int(r.choice([0, widest, total]))
    out.append(("primal", f"tapeflow{{spm-bytes={spm} depth={d} tile-bytes={tile} "
                          f"policy={c.policy} mode=always}}"))  # fmt: skip
    c.uses.update(source for source, pipeline in out if pipeline != REGIONS)
    return out


def check_pipelines(c: Context, run_all: bool = True, lower_bound: bool = True) -> None:
    """Runs every pipeline (or, with `run_all=False`, only those the sim check uses).
    Without `lower_bound`, streaming is skipped on programs with a loop starting above 0
    (issue 11 #1)."""
    with _guard("pipeline", "tapeflow-regions"):
        plans = c.plans = pipelines(c)
    starts_above_0 = re.search(r"= %c[1-9] to", c.text) is not None
    for source, pipeline in plans:
        if not run_all and pipeline not in (plans[0][1], plans[-1][1]):
            continue
        streams = "tapeflow-stream" in pipeline or pipeline.startswith("tapeflow{")
        if streams and starts_above_0 and not lower_bound:
            c.stats.skipped["stream with a loop starting above 0 (issue 11 #1)"] += 1
            continue
        try:
            with _guard("pipeline", pipeline):
                module = c.modules.get(pipeline) or apply(c.take(source), pipeline)
        except Failure as f:
            if f.kind == "error" and "too small" in f.message:
                c.stats.skipped["scratchpad too small"] += 1
                continue
            raise
        c.modules[pipeline] = module
        if pipeline == plans[0][1] and _growable(module):
            c.stats.covered["growable tapes"] += 1
        if pipeline == plans[1][1] and _holds(module, "region.alloc"):
            c.stats.covered["region tapes"] += 1
        if "tapeflow-stream" in pipeline and _holds(module, "stream.commit"):
            c.stats.covered["streamed tiles"] += 1
        if not run_all:
            continue
        with _guard("pipeline", pipeline):
            got = observe(module, "f_grad", c.args)
        c.stats.checks += 1
        if got != c.expected:
            raise Failure("pipeline", "bit-difference", pipeline,
                          "@f_grad's results or memory differ from the autodiff IR's")  # fmt: skip


def _growable(module: ModuleOp) -> bool:
    """A growable tape: a memref of memrefs (the slot holding its current buffer)."""
    return any(isinstance(t, MemRefType) and isinstance(t.element_type, MemRefType)
               for op in module.walk() for t in op.result_types)  # fmt: skip


def _holds(module: ModuleOp, name: str) -> bool:
    return any(op.name == name for op in module.walk())


def check_sim(c: Context, growable: bool) -> None:
    """`simulate_fast` against `simulate` on the Enzyme-layout and the TapeFlow program
    (unless it has a growable tape and `growable` is off: issue 11 #2)."""
    from helpers.sim import differences

    from tapeflow.hwmodel.config import load_machine
    from tapeflow.simulate import simulate, simulate_fast

    rng = np.random.default_rng([c.program.seed, 3])
    plans = c.plans
    stages = [plans[0][1], plans[-1][1]] if plans else []
    for pipeline in stages:
        module = c.modules.get(pipeline)
        if module is None:
            continue
        if not growable and _growable(module):
            c.stats.skipped["growable tape in sim (issue 11 #2)"] += 1
            continue
        machine = None
        window = int(rng.choice([0, 0, 1, 3]))
        if window:
            machine = load_machine(overrides=[f"core.window_ops={window}"])
        batch = int(rng.choice([5, 1 << 16]))
        where = f"{pipeline} (window_ops={window or 'default'}, batch={batch})"
        with _guard("sim", f"interpreter path: {where}"):
            ref = simulate(module, "f_grad", copy.deepcopy(c.args), machine)
        with _guard("sim", f"fast path: {where}"):
            fast = simulate_fast(module, "f_grad", copy.deepcopy(c.args), machine, batch=batch)
        c.stats.checks += 1
        diffs = differences(ref.report, fast.report)
        diffs += differences(ref.run.results, fast.run.results, "results")
        diffs += differences(ref.run.arguments, fast.run.arguments, "arguments")
        if diffs:
            raise Failure("sim", "sim-mismatch", where, "\n".join(diffs[:10]))
        if _bits(ref.run.results, ref.run.arguments) != c.expected:
            raise Failure("sim", "bit-difference", where,
                          "the simulated values differ from the autodiff IR's")  # fmt: skip
