"""Tape statistics of the benchmark kernels in Enzyme's layout (`tapeflow-lower-tape`).

    python benchmarks/tape_stats.py [--size small|default] [--kernels gemm,mlp] [--run] [-v]
                                    [--json]

Per kernel: the number of caches (`tape.init` after `tapeflow-autodiff`), the tape bytes,
the bytes of the primal's data (every array argument: inputs, scratch, index arrays) and
the working-set inflation = tape bytes / primal bytes.

Tape bytes are the bytes of the buffers `tapeflow-lower-tape` allocates (one array per
cache): the product of the trip counts times the element size for an indexed cache, the
push count for a static stack (exact when its iteration space can be enumerated at
compile time, else the worst case). Element sizes: f64 8, index 8, i64 8, i32 4, i1 1
(one byte per element, as LLVM lays out memref<i1>). When a cache's size is only known at
run time (runtime-sized or growable stacks), or with `--run`, the gradient is run on the
simulator's fast path (`hwmodel.compiled`, the interpreter's semantics) and the pushes
counted from its per-op execution counts.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tapeflow.eval.bundled import KERNELS, make_inputs, primal_bytes  # noqa: E402
from benchmarks.kernels.harness import parse  # noqa: E402
from tapeflow.dialects.region import element_size  # noqa: E402


@dataclass
class CacheStat:
    element: str
    layout: str
    elements: int | None  # None: known at run time only
    bytes: int | None


@dataclass
class KernelStat:
    name: str
    size: str
    caches: list[CacheStat] = field(default_factory=list)
    primal_bytes: int = 0
    counted: bool = False

    @property
    def tape_bytes(self) -> int:
        return sum(c.bytes or 0 for c in self.caches)

    @property
    def inflation(self) -> float:
        return self.tape_bytes / self.primal_bytes if self.primal_bytes else 0.0


def _autodiff_module(name: str, size: str):
    from tapeflow.registry import make_context
    from tapeflow.transforms.autodiff import AutodiffPass

    module = parse(KERNELS[name].source(size))
    AutodiffPass().apply(make_context(), module)
    return module


def _count_pushes(module, entry: str, args: list) -> Counter[int]:
    """Pushes per cache (id of its `tape.init`) in a run of `entry` on the fast path."""
    from tapeflow.hwmodel.compiled.module import CompiledModule
    from tapeflow.simulate import run_compiled

    program = CompiledModule(module)
    _, trace = run_compiled(program, entry, args)
    pushes: Counter[int] = Counter()
    for n, ops in zip(trace.block_counts, program.segments, strict=True):
        for op in ops:
            if op.name == "tape.push":
                pushes[id(op.cache.owner)] += n  # type: ignore[attr-defined]
    return pushes


def kernel_stats(name: str, size: str = "default", count: bool = False) -> KernelStat:
    """Tape statistics of kernel `name` at `size` (see the module docstring)."""
    from tapeflow.dialects import tape
    from tapeflow.transforms.lower_tape import (
        _GrowableStack,
        _Indexed,
        _RuntimeStack,
        _StaticStack,
        choose_layout,
    )

    module = _autodiff_module(name, size)
    inits = [op for op in module.walk() if isinstance(op, tape.InitOp)]
    stat = KernelStat(name, size, primal_bytes=primal_bytes(name, size))
    static: dict[int, int | None] = {}
    for init in inits:
        layout = choose_layout(init)
        if isinstance(layout, _Indexed):
            n = 1
            for c in layout.trip_counts:
                n *= c
            static[id(init)] = n
        elif isinstance(layout, _StaticStack):
            static[id(init)] = layout.capacity
        else:
            assert isinstance(layout, _RuntimeStack | _GrowableStack)
            static[id(init)] = None
    if count or any(v is None for v in static.values()):
        kernel = KERNELS[name]
        args: list = []
        for spec, a in zip(kernel.args, make_inputs(name, size, 0), strict=True):
            args.append(a)
            if spec.is_float:
                args.append(a * 0.0)
        args.append(1.0)
        counts = _count_pushes(module, kernel.grad_entry, args)
        stat.counted = True
        pushed = {k: counts.get(k, 0) for k in static}
    else:
        pushed = static
    for init in inits:
        element = init.cache.type.element_type
        layout = type(choose_layout(init)).__name__.strip("_")
        n = pushed[id(init)]
        if static[id(init)] is not None and not count:
            n = static[id(init)]
        stat.caches.append(
            CacheStat(str(element), layout, n, None if n is None else n * element_size(element))
        )
    return stat


def _fmt_bytes(n: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n} B"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=("small", "default"), default="default")
    parser.add_argument("--kernels", default=",".join(KERNELS))
    parser.add_argument("--run", action="store_true",
                        help="count pushes by running the gradient in the interpreter")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per cache")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = parser.parse_args(argv)
    names = [n for n in args.kernels.split(",") if n]
    for n in names:
        if n not in KERNELS:
            parser.error(f"unknown kernel {n!r} (known: {', '.join(KERNELS)})")
    if args.json:
        stats = [kernel_stats(name, args.size, args.run) for name in names]
        print(json.dumps({
            "size": args.size,
            "kernels": {
                s.name: {
                    "caches": len(s.caches),
                    "tape_bytes": s.tape_bytes,
                    "primal_bytes": s.primal_bytes,
                    "inflation": s.inflation,
                    "counted": s.counted,
                    "per_cache": [vars(c) for c in s.caches],
                }
                for s in stats
            },
        }, indent=2))
        return 0
    header = f"{'kernel':12} {'caches':>6} {'tape bytes':>12} {'tape':>11} {'primal bytes':>13} {'inflation':>9}"
    print(f"# size = {args.size}")
    print(header)
    for name in names:
        s = kernel_stats(name, args.size, args.run)
        print(f"{name:12} {len(s.caches):6d} {s.tape_bytes:12d} {_fmt_bytes(s.tape_bytes):>11} "
              f"{s.primal_bytes:13d} {s.inflation:9.3f}" + ("  (counted)" if s.counted else ""))
        if args.verbose:
            for c in s.caches:
                print(f"    {c.element:6} {c.layout:14} {c.elements!s:>10} elements  {c.bytes} B")
    return 0


if __name__ == "__main__":
    sys.exit(main())
