"""A program fuzzer for TapeFlow: random structured programs, checked end to end.

`program.py` draws programs, `checks.py` runs the checks on one program (gradients
against finite differences, every pipeline prefix bit for bit against the autodiff IR,
the simulator's fast path against its interpreter path), `minimize.py` shrinks a failing
program, `__main__.py` is the command line (`python -m fuzz --fuzz N`, or `scripts/fuzz`).
`test_fuzz.py` runs a fixed budget in CI.
"""
