"""`python -m fuzz` (or `scripts/fuzz`): run the program fuzzer.

    scripts/fuzz --fuzz 2000                 # seeds 0..1999, CI's features
    scripts/fuzz --fuzz 2000 --features all  # with the features known bugs break
    scripts/fuzz --seed 1234                 # one program: check it, print it on failure

Each failure is minimized (one per distinct symptom), written to `--out` with the
symptom in a comment, and its path printed. Exit status 1 when anything failed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from fuzz.checks import WALL_FACTOR, Failure, Hang, Stats, check_program, time_limit
from fuzz.minimize import minimize
from fuzz.program import DEFAULT_FEATURES, FEATURES, KNOWN_BUGS, Program, generate


def run(
    seeds: Iterable[int],
    features: frozenset[str] = DEFAULT_FEATURES,
    *,
    seconds: float = 60.0,
    stats: Stats | None = None,
    on_failure: Callable[[Program, Failure], None] | None = None,
) -> tuple[Stats, list[tuple[Program, Failure]]]:
    """Checks the program of each seed; returns the counts and the failures."""
    stats = stats or Stats()
    failures: list[tuple[Program, Failure]] = []
    try:
        for seed in seeds:
            program = generate(seed, features)
            try:
                with time_limit(seconds):
                    check_program(program, features, stats=stats)
            except Hang as e:  # outside every check's guard
                failure = Failure("?", "hang", "", str(e))
            except Failure as f:
                failure = f
            else:
                continue
            stats.failures[failure.kind] += 1
            failures.append((program, failure))
            if on_failure:
                on_failure(program, failure)
    except KeyboardInterrupt:  # Ctrl-C on a long run: report what was checked
        print("fuzz: interrupted", file=sys.stderr)
    return stats, failures


def write_failure(
    program: Program, failure: Failure, features: frozenset[str], out: Path, seconds: float
) -> Path:
    """Minimizes `program` and writes it, with its symptom, to `out`; returns the path."""
    small = minimize(program, failure, features, seconds)
    try:
        with time_limit(seconds):
            check_program(small, features, families=(failure.family,))
        symptom = failure  # pragma: no cover - minimize keeps the failure
    except Failure as f:
        symptom = f
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"seed{program.seed}-{failure.family}-{failure.kind}.mlir"
    names = ",".join(sorted(features))
    comment = "\n".join(f"// {line}" for line in str(symptom).splitlines())
    path.write_text(
        f"// program fuzzer: seed {program.seed}, minimized from {program.size()} to "
        f"{small.size()} statements ({small.float_type})\n"
        f"// reproduce the original: scripts/fuzz --seed {program.seed} --features {names}\n"
        f"{comment}\n{small.render()}"
    )
    return path


def parse_features(spec: str, enable: list[str]) -> frozenset[str]:
    if spec == "default":
        chosen = set(DEFAULT_FEATURES)
    elif spec == "all":
        chosen = set(FEATURES)
    else:
        chosen = {f for f in spec.split(",") if f}
    chosen |= set(enable)
    unknown = chosen - set(FEATURES)
    if unknown:
        raise SystemExit(f"error: unknown feature(s) {', '.join(sorted(unknown))}")
    return frozenset(chosen)


def main(argv: list[str] | None = None) -> int:
    features_help = "\n".join(
        f"  {name:13} {text}" + (f" [off by default: {KNOWN_BUGS[name]}]" if name in KNOWN_BUGS
                                 else "")  # fmt: skip
        for name, text in FEATURES.items()
    )
    parser = argparse.ArgumentParser(
        prog="scripts/fuzz",
        description="Random-program fuzzer: AD vs finite differences, every pipeline prefix "
        "bit for bit, the simulator's fast path vs its interpreter path.",
        epilog="features:\n" + features_help,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--fuzz", type=int, default=1, metavar="N", help="programs to check")
    parser.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--features", default="default",
                        help="default, all, or a comma-separated list")  # fmt: skip
    parser.add_argument("--enable", action="append", default=[], metavar="FEATURE",
                        help="add a feature (e.g. one whose bug was fixed)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=Path("fuzz-failures"),
                        help="where minimized failing programs go (default ./fuzz-failures)")
    parser.add_argument("--time-limit", type=float, default=60.0, metavar="S",
                        help="CPU seconds per program before it counts as a hang (or "
                        f"{WALL_FACTOR} times that of wall time)")  # fmt: skip
    parser.add_argument("--no-minimize", action="store_true", help="report, do not minimize")
    parser.add_argument("--print", action="store_true", help="print each program checked")
    parser.add_argument("--jit", action="store_true",
                        help="compile every loop nest the fast path can into a numba kernel "
                        "from its first entry (hwmodel/jit.py), so the sim check covers "
                        "the kernels (slower: a compile per nest)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.jit:
        from tapeflow.hwmodel.compiled.module import Trace

        Trace.jit_after = Trace.jit_min_ops = 0
    features = parse_features(args.features, args.enable)
    seen: set[tuple[str, ...]] = set()
    start = time.monotonic()

    def report(program: Program, failure: Failure) -> None:
        first = str(failure).splitlines()[0][:300]
        print(f"seed {program.seed}: {first}", flush=True)
        if args.no_minimize or failure.signature() in seen:
            return
        seen.add(failure.signature())
        path = write_failure(program, failure, features, args.out, args.time_limit)
        print(f"  minimized: {path}", flush=True)

    def seeds() -> Iterable[int]:
        for seed in range(args.seed, args.seed + args.fuzz):
            if args.print:
                print(f"// seed {seed}\n{generate(seed, features).render()}", flush=True)
            yield seed

    stats, failures = run(seeds(), features, seconds=args.time_limit, on_failure=report)
    distinct = len({f.signature() for _, f in failures})
    print(f"fuzz: {stats.summary()}; {distinct} distinct failure(s); "
          f"{time.monotonic() - start:.0f} s")  # fmt: skip
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
