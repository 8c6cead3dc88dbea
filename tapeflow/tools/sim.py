"""`tapeflow-sim`: run one function on the hardware model and report cycles, traffic, energy.

    tapeflow-sim kernel.mlir --entry f --args 0.5
    tapeflow-sim grad.mlir --entry f_grad --set l2.size=262144 --set prefetch.enabled=false
    tapeflow-sim tf.mlir --entry f_grad --machine small-spm.toml --json

Arguments are built exactly as `tapeflow-run` builds them (`tools.common.function_arguments`:
the same fill rule, `--args`, `--seed`, `--inputs`, `--zero`, and a gradient's primals
filled as its primal's and its shadows zero unless `--plain-fill`). The machine is
`tapeflow/hwmodel/defaults.toml`, then `--machine M.toml` (same layout, only the keys to
change), then each `--set section.key=value` in order.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TextIO

from tapeflow import runner
from tapeflow.diagnostics import read_source, report_errors
from tapeflow.frontends import c as c_frontend
from tapeflow.hwmodel.config import load_machine
from tapeflow.hwmodel.report import format_table, to_json
from tapeflow.simulate import simulate, simulate_auto, simulate_fast
from tapeflow.tools.common import ArgumentParser, function_arguments, parse_run_arguments

_EPILOG = """\
machine keys (see hwmodel/defaults.toml, every number with its source):
  core.{clock_ghz,issue_width,fp_ports,load_ports,store_ports,mlp,...}
  ops.<class>.{cycles,port,energy_pj}     classes: int int_mul int_div fp_add fp_mul
                                          fp_fma fp_div fp_special cvt branch mem free
  l1.{size,assoc,line,latency,access_energy_pj}  l2.{...,bandwidth}
  prefetch.{enabled,table_size,degree,threshold,page}
  spm.{size,...} (energy/latency scale with size)  dram.{bandwidth,latency,energy_pj_per_byte}
  dma.{request,in_flight,setup,spm_port,engine_energy_pj}

output: a table (default) or, with --json, the report as JSON: cycles and their terms,
per-level accesses/hits/misses/bytes, DRAM bytes, DMA bytes and stalls, energy per
component with on-chip and off-chip totals, SRAM in use, tape bytes, the results.

errors print `error: ...` on stderr and exit with status 1.
"""


def _parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="tapeflow-sim",
        description="Runs one function of an MLIR module on TapeFlow's hardware model.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", help="input MLIR file, or - for standard input")
    parser.add_argument("--entry", "-e", metavar="NAME", help="the function to run")
    parser.add_argument(
        "--machine",
        metavar="NAME|M.toml",
        help="machine overrides (TOML file), or a packaged preset by name: default-45nm (the "
        "defaults), accel-salam (a gem5-SALAM-like accelerator cluster), dram-lpddr4, "
        "dram-gddr5, dram-hbm2, dram-ddr3",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one machine key, e.g. l2.size=262144 (repeatable)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="hide the progress line (shown on a terminal after 3 s)")  # fmt: skip
    parser.add_argument("--args", nargs="*", default=[], metavar="VALUE",
                        help="the scalar arguments, in order (as tapeflow-run; they run up to "
                        "the next --option, so -1e-3 is a value)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="seed of the fill rule (0)")
    parser.add_argument("--inputs", action="append", default=[], metavar="FILE",
                        help="memref data, as tapeflow-run --inputs")  # fmt: skip
    parser.add_argument("--zero", action="append", default=[], metavar="P[,P...]",
                        help="fill these memref arguments with zeros")  # fmt: skip
    parser.add_argument("--plain-fill", action="store_true",
                        help="for @F_grad, the plain fill rule (as tapeflow-run)")  # fmt: skip
    parser.add_argument("--backend", choices=["auto", "numba", "python"], default="auto",
                        help="cache simulator backend (auto: numba when installed)")  # fmt: skip
    parser.add_argument(
        "--path",
        choices=["auto", "fast", "interp"],
        default="auto",
        help="interp: the op-by-op interpreter with the model as a listener (the "
        "reference); fast: the compiled path (hwmodel.compiled), same report; auto "
        "(default): fast when it supports every op of the module, else interp",
    )
    c_frontend.add_c_arguments(parser)
    return parser


def run_simulation(module, entry, values, machine, path: str = "auto", backend: str = "auto"):
    """The `SimResult` of `entry(*values)` on `path`; the report says which path ran
    (auto: `simulate_auto`, the fast path unless it meets one of its limits)."""
    if path == "interp":
        sim = simulate(module, entry, values, machine, backend=backend)
        sim.report["path"] = "interp"
        return sim
    if path == "auto":
        return simulate_auto(module, entry, values, machine, backend=backend)
    sim = simulate_fast(module, entry, values, machine, backend=backend)
    sim.report["path"] = "fast"
    return sim


@contextmanager
def progress(label: str, stream: TextIO | None, after: float = 3.0) -> Iterator[None]:
    """While the body runs longer than `after` seconds, a tqdm line on `stream` with the
    time elapsed (the simulation has no cheap measure of how far it is). `stream=None`,
    or tqdm not installed, shows nothing."""
    try:
        from tqdm import tqdm
    except ImportError:
        stream = None
    if stream is None:
        yield
        return
    stop = threading.Event()

    def tick() -> None:
        if stop.wait(after):
            return
        bar = tqdm(desc=label, file=stream, bar_format="{desc}: {elapsed}", leave=False)
        bar.start_t -= after  # count from the start of the run, not of the bar
        while not stop.wait(0.5):
            bar.refresh()
        bar.close()

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_run_arguments(_parser(), argv)
    with report_errors():
        machine = load_machine(args.machine, args.set)
        text, name = read_source(args.file)
        module = runner.load_module(text, name)
        func_op = runner.find_function(module, args.entry)
        values = function_arguments(module, func_op, args)
        entry = func_op.sym_name.data
        shown = None if args.quiet or not sys.stderr.isatty() else sys.stderr
        with progress(f"tapeflow-sim: simulating @{entry}", shown):
            sim = run_simulation(module, entry, values, machine, args.path, args.backend)
        output = to_json(sim.report) if args.json else format_table(sim.report)
        sys.stdout.write(output + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
