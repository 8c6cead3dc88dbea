"""What `tapeflow-cleanup` (canonicalize, cse, licm) removes, per kernel and variant.

    python benchmarks/cleanup_stats.py [--size small|default] [--kernels gemm,conv2d]
                                       [--variants enzyme,tapeflow]

Each kernel's gradient is compiled with and without the cleanup and run on the hardware
model (default machine, compiled fast path, as `tapeflow-bench` does). Printed: executed
instructions, integer divisions, issue slots (sum over op classes of count x the class's
`cycles` in the machine TOML) and cycles, before and after, and the change in slots.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.kernels import KERNELS  # noqa: E402
from tapeflow.bench import Job, machine_from_raw, run_job  # noqa: E402
from tapeflow.hwmodel.config import load_machine  # noqa: E402


def issue_slots(by_class: dict[str, int], machine) -> float:
    ops = machine.ops
    return sum(count * ops[name].cycles for name, count in by_class.items() if name in ops)


def measure(kernel: str, variant: str, size: str, cleanup: bool, machine) -> dict[str, float]:
    result = run_job(Job(kernel, variant, size, machine=machine.raw, cleanup=cleanup))
    if result["error"]:
        raise SystemExit(f"error: {kernel} {variant} cleanup={cleanup}: {result['error']}")
    ops = result["report"]["ops"]
    return {
        "instructions": ops["instructions"],
        "int_div": ops["by_class"].get("int_div", 0),
        "slots": issue_slots(ops["by_class"], machine),
        "cycles": result["report"]["cycles"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="default", choices=("small", "default"))
    parser.add_argument("--kernels", default=",".join(sorted(KERNELS)))
    parser.add_argument("--variants", default="enzyme,tapeflow")
    args = parser.parse_args(argv)
    machine = machine_from_raw(load_machine().raw)
    print(f"# size = {args.size}, default machine (hwmodel/defaults.toml)")
    columns = ("instructions", "int_div", "slots", "cycles")
    print(f"{'kernel':12} {'variant':9}"
          + "".join(f" {name + ' before':>16} {'after':>12}" for name in columns)
          + f" {'slots':>7}")  # fmt: skip
    for kernel in args.kernels.split(","):
        for variant in args.variants.split(","):
            b = measure(kernel, variant, args.size, False, machine)
            a = measure(kernel, variant, args.size, True, machine)
            change = (a["slots"] - b["slots"]) / b["slots"] * 100 if b["slots"] else 0.0
            print(f"{kernel:12} {variant:9}"
                  + "".join(f" {b[name]:>16,.0f} {a[name]:>12,.0f}" for name in columns)
                  + f" {change:>+6.1f}%", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
