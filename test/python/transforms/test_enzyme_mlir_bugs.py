"""Enzyme-MLIR 0.0.16's own bugs, each reduced to a few ops and checked without TapeFlow's
parser, interpreter or AD: Enzyme's raw output text, its one-push-one-pop caches forwarded
(the one rewrite done here, checked to be of that form), is lowered by upstream
`mlir-opt-22` with its runtime checks and run by `mlir-runner-22`, beside central finite
differences of the primal run the same way.

Each test asserts that the bug is STILL there: when a newer Enzyme fixes one, its test
fails. `enzyme-autodiff` avoids all three by what LLVM does before Enzyme
(`tapeflow.baselines.pre_enzyme`); a kernel a bug still breaks is named in
`enzyme_mlir.KNOWN_BUGS`, whose note goes once the bug is fixed."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess

import pytest

from tapeflow import native
from tapeflow.baselines import enzyme_mlir

pytestmark = [
    pytest.mark.enzyme,
    pytest.mark.skipif(not enzyme_mlir.available(),
                       reason="needs the optional extra `enzyme` "
                       "(pip install --no-deps enzyme-ad==0.0.16)"),  # fmt: skip
    pytest.mark.skipif(not native.tools_available(), reason=native.INSTALL_HINT),
]

STEP = 1e-6
"""Central finite differences' step."""

OVERWRITTEN = """
func.func @f(%m: memref<2xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f64
  memref.store %zero, %m[%c0] : memref<2xf64>
  %x = memref.load %m[%c0] : memref<2xf64>
  return %x : f64
}
"""
"""f(m) = 0 for every m (m[0] is overwritten before it is read): every gradient is 0."""

STRIDED = """
func.func @f(%m: memref<3xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f64
  %s = scf.for %i = %c0 to %c3 step %c2 iter_args(%acc = %zero) -> (f64) {
    %x = memref.load %m[%i] : memref<3xf64>
    %y = arith.mulf %x, %x : f64
    %a = arith.addf %acc, %y : f64
    scf.yield %a : f64
  }
  return %s : f64
}
"""
"""f(m) = m[0]^2 + m[2]^2: a loop of two iterations (0, 2) whose step does not divide
its range."""


PAIRS = """
func.func @f(%m: memref<4xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f64
  %s = scf.for %i = %c0 to %c4 step %c2 iter_args(%acc = %zero) -> (f64) {
    %x = memref.load %m[%i] : memref<4xf64>
    %j = arith.addi %i, %c1 : index
    %y = memref.load %m[%j] : memref<4xf64>
    %p = arith.mulf %x, %y : f64
    %a = arith.addf %acc, %p : f64
    scf.yield %a : f64
  }
  return %s : f64
}
"""
"""f(m) = m[0] m[1] + m[2] m[3]: a loop of step 2 that divides its range (a loop unrolled
by 2, as `#pragma clang loop unroll_count` makes)."""

def enzyme_gradient_text(primal: str, n: int) -> str:
    """Enzyme-MLIR's raw output for `@f` (its memref argument dup, its result active), with
    a `@main` that runs `@f_grad` and `@f`'s finite differences at m = 1, 2, ..., n and
    prints each gradient entry and each difference as its IEEE bits."""
    wrap = ("enzyme-wrap{infn=f outfn=f_grad argTys=enzyme_dup retTys=enzyme_active "
            f"mode=ReverseModeCombined}},{enzyme_mlir.CLEANUP}")  # fmt: skip
    text = forward_single_caches(enzyme_mlir.run_pipeline(primal, wrap))
    assert "enzyme." not in text, text
    end = text.rindex("}")
    return text[:end] + _main(n) + text[end:]


def forward_single_caches(text: str) -> str:
    """Each Enzyme cache gone, the pop's uses taking the pushed value: a stack that gets one
    value returns it. Checked to be one push and one pop per cache; the reproducers' are in
    straight-line code, the push first."""
    inits = re.findall(r'^\s*(%\w+) = "enzyme\.init"\(\)', text, re.M)
    for cache in inits:
        pushes = re.findall(rf'^\s*"enzyme\.push"\({cache}, (%\w+)\)', text, re.M)
        pops = re.findall(rf'^\s*(%\w+) = "enzyme\.pop"\({cache}\)', text, re.M)
        assert len(pushes) == len(pops) == 1, f"cache {cache} is not one push and one pop"
        text = re.sub(rf'^\s*{cache} = "enzyme\.init".*\n', "", text, flags=re.M)
        text = re.sub(rf'^.*"enzyme\.(push|pop)"\({cache}\b.*\n', "", text, flags=re.M)
        text = re.sub(rf"{re.escape(pops[0])}\b", pushes[0], text)
    return text


def _main(n: int) -> str:
    """`@main`: m = 1..n, dm = 0; `@f_grad(m, dm, 1.0)`; dm's bits; then per i the bits of
    (f(m + h e_i) - f(m - h e_i)) / 2h, m fresh for every call (f may write it)."""
    t = f"memref<{n}xf64>"
    return f"""
  func.func private @printI64(i64)
  func.func private @printNewline()
  func.func @fill(%m: {t}) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cn = arith.constant {n} : index
    %one = arith.constant 1.0 : f64
    scf.for %i = %c0 to %cn step %c1 {{
      %k = arith.index_cast %i : index to i64
      %x = arith.sitofp %k : i64 to f64
      %v = arith.addf %x, %one : f64
      memref.store %v, %m[%i] : {t}
    }}
    return
  }}
  func.func @print(%x: f64) {{
    %b = arith.bitcast %x : f64 to i64
    func.call @printI64(%b) : (i64) -> ()
    func.call @printNewline() : () -> ()
    return
  }}
  func.func @shifted(%i: index, %h: f64) -> f64 {{
    %m = memref.alloc() : {t}
    func.call @fill(%m) : ({t}) -> ()
    %x = memref.load %m[%i] : {t}
    %y = arith.addf %x, %h : f64
    memref.store %y, %m[%i] : {t}
    %f = func.call @f(%m) : ({t}) -> f64
    memref.dealloc %m : {t}
    return %f : f64
  }}
  func.func @main() {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cn = arith.constant {n} : index
    %zero = arith.constant 0.0 : f64
    %one = arith.constant 1.0 : f64
    %h = arith.constant {STEP:e} : f64
    %mh = arith.constant {-STEP:e} : f64
    %two_h = arith.constant {2 * STEP:e} : f64
    %m = memref.alloc() : {t}
    %dm = memref.alloc() : {t}
    func.call @fill(%m) : ({t}) -> ()
    scf.for %i = %c0 to %cn step %c1 {{
      memref.store %zero, %dm[%i] : {t}
    }}
    func.call @f_grad(%m, %dm, %one) : ({t}, {t}, f64) -> ()
    scf.for %i = %c0 to %cn step %c1 {{
      %g = memref.load %dm[%i] : {t}
      func.call @print(%g) : (f64) -> ()
    }}
    scf.for %i = %c0 to %cn step %c1 {{
      %up = func.call @shifted(%i, %h) : (index, f64) -> f64
      %down = func.call @shifted(%i, %mh) : (index, f64) -> f64
      %d = arith.subf %up, %down : f64
      %fd = arith.divf %d, %two_h : f64
      func.call @print(%fd) : (f64) -> ()
    }}
    return
  }}
"""


def run_upstream(program: str) -> subprocess.CompletedProcess[str]:
    """`program` lowered by `mlir-opt-22` (with upstream's runtime checks) and run by
    `mlir-runner-22`: no TapeFlow code between Enzyme's text and the CPU. Unbuffered
    (`stdbuf -o0`), so a failed check's message, printed before the abort, is kept."""
    tools = native.find_tools()
    lowered = subprocess.run([tools.opt, *native.VERIFIED_PIPELINE], input=program,
                             capture_output=True, text=True, check=True)  # fmt: skip
    unbuffered = [stdbuf, "-o0"] if (stdbuf := shutil.which("stdbuf")) else []
    return subprocess.run(
        [*unbuffered, tools.runner, "-e", "main", "-entry-point-result=void",
         f"-shared-libs={','.join(tools.libraries)}"],
        input=lowered.stdout, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _floats(stdout: str) -> list[float]:
    return [struct.unpack("<d", struct.pack("<q", int(line)))[0] for line in stdout.split()]


def test_overwritten_element_keeps_its_adjoint():
    """Enzyme's reverse of `memref.store %zero, %m[0]` (a constant into an active memref)
    is missing: the shadow dm[0] is never zeroed, so the seed that reached it through the
    later load stays. f is 0 everywhere; Enzyme says df/dm[0] = 1. salam/lenet's 19
    wrong entries of dM are this: conv outputs zeroed before they are accumulated."""
    done = run_upstream(enzyme_gradient_text(OVERWRITTEN, 2))
    assert done.returncode == 0, done.stderr
    values = _floats(done.stdout)
    gradient, differences = values[:2], values[2:]
    assert differences == [0.0, 0.0]
    assert gradient == [1.0, 0.0]  # still wrong: 0.0 is right


def test_cache_of_a_non_dividing_step_is_too_small():
    """Enzyme sizes the cache of `scf.for %i = 0 to 3 step 2` (two iterations) as
    floor(3 / 2) = 1 value: the second iteration stores past it, which upstream's runtime
    check reports. salam/alexnet's `for (j = 0; j < F1; j += S1)` is this."""
    program = enzyme_gradient_text(STRIDED, 3)
    assert "memref.alloc() : memref<1xf64>" in program  # the cache: 1 value for 2
    done = run_upstream(program)
    assert done.returncode != 0
    assert "Runtime op verification failed" in done.stdout, done.stdout
    assert "memref.store" in done.stdout and "out-of-bounds" in done.stdout, done.stdout


def test_reverse_of_a_strided_loop_runs_the_wrong_iterations():
    """Enzyme's reverse loop of `scf.for %i = lb to ub step s` takes i' = lb + ub - 1 - i,
    right only when s divides ub - 1 - lb: here (0 to 4 step 2) it visits i' = 3, 1
    instead of 2, 0, and adds m[j]'s adjoint at dm[i' + 1] = dm[4], past the shadow, which
    upstream's runtime check reports. salam/logsum's loop, unrolled by 8 (0 to 10000 step
    8), is this: natively, without the checks, its adjoints land up to 7 elements past dx
    and corrupt the heap."""
    program = enzyme_gradient_text(PAIRS, 4)
    done = run_upstream(program)
    assert done.returncode != 0
    assert "Runtime op verification failed" in done.stdout, done.stdout
    assert "out-of-bounds" in done.stdout, done.stdout
    assert "memref.load %arg1[" in done.stdout  # the shadow dm, at the adjoint of m[j]:
    assert 'Location: loc("-":11:10)' in done.stdout  # `%y = memref.load %m[%j]`'s
