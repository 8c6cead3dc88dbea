"""The one place where the runner meets the hardware model: a run with the model listening.

`simulate` runs `entry(*args)` through `tapeflow.runner` (so values and errors are exactly
`tapeflow-run`'s) with a `HardwareModel` listening op by op; `simulate_fast` drives the
same model from a compiled run (`hwmodel.fastsim.ModelTrace`), `simulate_fast_many` one
compiled run for several machines, and `simulate_auto` the fast path unless it meets one
of its limits. All of them return a `SimResult` with the same report. The hardware model
itself (`tapeflow.hwmodel`) never imports the runner: the arguments, results and errors
of a run are this module's business.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.utils.exceptions import InterpretationError

from tapeflow import runner
from tapeflow.diagnostics import ToolError, op_error
from tapeflow.hwmodel.compiled.limits import FastPathLimit, UnsupportedOpError
from tapeflow.hwmodel.compiled.module import CompiledModule, Trace
from tapeflow.hwmodel.config import Machine
from tapeflow.hwmodel.fastsim import ModelTrace, compiled
from tapeflow.hwmodel.listener import HardwareModel
from tapeflow.hwmodel.report import build_report
from tapeflow.interpreters import runtime_error


@dataclass
class SimResult:
    run: runner.RunResult
    """The run of the call (results, arguments after the run)."""
    model: HardwareModel
    report: dict[str, Any]


def simulate(
    module: ModuleOp,
    entry: str,
    args: Sequence[Any] = (),
    machine: Machine | None = None,
    *,
    backend: str = "auto",
    batch: int = 1 << 16,
    prefetch: bool | None = None,
) -> SimResult:
    """Runs `entry(*args)` with the model listening (through `tapeflow.runner`, so values
    and errors are exactly `tapeflow-run`'s); returns the run, the model and its report."""
    model = HardwareModel(machine, backend=backend, batch=batch, prefetch=prefetch)
    run = runner.run_function(module, entry, args, listeners=[model])
    report = build_report(model, runner.format_json(run)["results"])
    return SimResult(run, model, report)


def _results_json(run: runner.RunResult) -> Any:
    """`runner.format_json(run)["results"]` without formatting every argument array."""
    return runner.format_json(replace(run, memref_positions=[]))["results"]


def run_compiled(
    program: CompiledModule, name: str, args: Sequence[Any], trace: Trace | None = None
) -> tuple[runner.RunResult, Trace]:
    """As `tapeflow.runner.run_function` (NumPy arrays in and out, same `RunResult`), on
    the compiled path. Returns the `RunResult` and the trace."""
    func_op = runner.find_function(program.module, name)
    arg_types = list(func_op.function_type.inputs.data)
    result_types = list(func_op.function_type.outputs.data)
    if len(args) != len(arg_types):
        raise ToolError(f"@{name} takes {len(arg_types)} argument(s), got {len(args)}")
    bw = 64
    values = runner.call_arguments(args, arg_types, bw)
    try:
        raw_results, trace = program.run(func_op.sym_name.data, tuple(values), trace)
    except RecursionError:
        raise InterpretationError(f"@{name}: recursion too deep") from None
    except (FastPathLimit, ToolError):
        raise
    except InterpretationError as error:  # one located line, as the op-by-op run reports it
        raise runtime_error(error, [func_op]) from error
    except Exception as error:  # a Python error in the generated code: a limit of this path
        message = f"fast path: {type(error).__name__}: {error}"
        raise FastPathLimit(op_error(func_op, message)) from error
    run = runner.run_result(name, args, values, raw_results, arg_types, result_types, bw)
    return run, trace


def simulate_fast(
    module: ModuleOp | CompiledModule,
    entry: str,
    args: Sequence[Any] = (),
    machine: Machine | None = None,
    *,
    backend: str = "auto",
    batch: int = 1 << 16,
    prefetch: bool | None = None,
) -> SimResult:
    """As `simulate` (same arguments, same `SimResult` and report), from a compiled run.
    Raises `UnsupportedOpError` (naming the op) for IR the compiler does not handle;
    `simulate_auto` falls back instead."""
    program = module if isinstance(module, CompiledModule) else compiled(module)
    model = HardwareModel(machine, backend=backend, batch=batch, prefetch=prefetch)
    trace = ModelTrace(program, model, batch)
    run, _ = run_compiled(program, entry, args, trace)
    trace.sync()
    report = build_report(model, _results_json(run))
    return SimResult(run, model, report)


def simulate_fast_many(
    module: ModuleOp | CompiledModule,
    entry: str,
    args: Sequence[Any],
    machines: Sequence[Machine | None],
    *,
    backend: str = "auto",
    batch: int = 1 << 16,
    prefetch: bool | None = None,
) -> list[SimResult]:
    """`simulate_fast` on several machines from ONE run of the program (e.g. the baseline's
    cache-capacity sweep): each result equals `simulate(module, entry, args, machine)`.
    The machines must accept the same program (a scratchpad overflow on one fails all)."""
    program = module if isinstance(module, CompiledModule) else compiled(module)
    models = [HardwareModel(m, backend=backend, batch=batch, prefetch=prefetch) for m in machines]
    trace = ModelTrace(program, models, batch)
    run, _ = run_compiled(program, entry, args, trace)
    trace.sync()
    results = _results_json(run)
    return [SimResult(run, model, build_report(model, results)) for model in models]


def simulate_auto(
    module: ModuleOp,
    entry: str,
    args: Sequence[Any] = (),
    machine: Machine | None = None,
    **kwargs: Any,
) -> SimResult:
    """`simulate_fast`, or the op-by-op `simulate` when the fast path cannot run the
    program: an op it does not compile, Python's limits on the generated code, or a limit
    of its trace encoding met during the run (the op-by-op run then starts from copies
    of the `ShapedArray` arguments taken before, which the fast run writes in place;
    NumPy arrays are only written at the end of a run). `SimResult.report["path"]` says
    which path ran."""
    try:
        program = compiled(module)
    except UnsupportedOpError:
        sim = simulate(module, entry, args, machine, **kwargs)
    else:
        fresh = [copy.deepcopy(a) if isinstance(a, ShapedArray) else a for a in args]
        try:
            sim = simulate_fast(program, entry, args, machine, **kwargs)
            sim.report["path"] = "fast"
            return sim
        except FastPathLimit:
            sim = simulate(module, entry, fresh, machine, **kwargs)
    sim.report["path"] = "interp"
    return sim
