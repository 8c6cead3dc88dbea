"""The share of a kernel's tape bytes that `tapeflow{mode=always}` puts in records.

    python benchmarks/record_share.py [--suite shapes|bundled] [--size small|default]
                                      [--kernels trisolve,dp] [-v]

Per kernel: the bytes each cache of the autodiff IR pushes in one run of the gradient
(seed-0 inputs; pushes counted on the simulator's fast path, `tape_stats`; Enzyme's element
sizes, no record padding), split by what `tapeflow-regions` does with the cache under
mode=always (the pipeline's cse and licm first, as `tapeflow` runs them): a field of a
region's records, or kept in Enzyme's layout (`-v` prints the pass's reason per cache).
The share is record bytes / all bytes.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@dataclass
class Share:
    record_bytes: int = 0
    kept_bytes: int = 0
    kept: list[tuple[str, int, str]] = field(default_factory=list)
    """Per cache left in Enzyme's layout: element type, bytes, the pass's reason."""

    @property
    def share(self) -> float:
        total = self.record_bytes + self.kept_bytes
        return self.record_bytes / total if total else 1.0


def record_share(kernel, size: str = "small") -> Share:
    """Where `kernel`'s (a `bundled.Kernel`) tape bytes go under mode=always."""
    from benchmarks.tape_stats import _count_pushes
    from tapeflow.dialects import tape
    from tapeflow.dialects.region import element_size
    from tapeflow.registry import make_context
    from tapeflow.transforms.autodiff import AutodiffPass
    from tapeflow.transforms.pipeline import hoist_invariants
    from tapeflow.transforms.regions import find_regions
    from xdsl.dialects import func

    module = kernel.load(size)
    ctx = make_context()
    AutodiffPass().apply(ctx, module)
    hoist_invariants(ctx, module)
    pushes = _count_pushes(module, kernel.grad_entry, kernel.grad_arguments(size, 0))
    out = Share()
    for fn in [op for op in module.walk() if isinstance(op, func.FuncOp)]:
        regions, skipped = find_regions(fn)
        in_records = {id(u.init) for g in regions for u in g.caches}
        for init in [op for op in fn.walk() if isinstance(op, tape.InitOp)]:
            element = init.cache.type.element_type
            nbytes = pushes.get(id(init), 0) * element_size(element)
            if id(init) in in_records:
                out.record_bytes += nbytes
            else:
                out.kept_bytes += nbytes
                out.kept.append((str(element), nbytes, skipped.get(init, "")))
    return out


def main(argv: list[str] | None = None) -> int:
    from tapeflow.eval import bundled, shapes

    suites = {"shapes": shapes.KERNELS, "bundled": bundled.KERNELS}
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--suite", choices=tuple(suites), default="shapes")
    p.add_argument("--size", choices=("small", "default"), default="small")
    p.add_argument("--kernels", default="", help="comma-separated (default: the suite's)")
    p.add_argument("-v", "--verbose", action="store_true", help="one line per kept cache")
    args = p.parse_args(argv)
    kernels = suites[args.suite]
    names = [n for n in args.kernels.split(",") if n] or list(kernels)
    unknown = [n for n in names if n not in kernels]
    if unknown:
        p.error(f"unknown kernel(s) {', '.join(unknown)} (known: {', '.join(kernels)})")
    print(f"# suite {args.suite}, size {args.size}: tape bytes in records under mode=always")
    print(f"{'kernel':12} {'record bytes':>13} {'kept bytes':>11} {'in records':>10}")
    for name in names:
        s = record_share(kernels[name], args.size)
        print(f"{name:12} {s.record_bytes:13d} {s.kept_bytes:11d} {100 * s.share:9.1f}%")
        if args.verbose:
            for element, nbytes, reason in s.kept:
                print(f"    kept: {element} {nbytes} B: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
