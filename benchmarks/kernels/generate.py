"""Generates the benchmark kernels (`small/<name>.mlir`, `default/<name>.mlir`).

Run `python benchmarks/kernels/generate.py` from the repository root after changing a
template or a size; the generated files are committed. One template function per kernel
takes the sizes (a dict, see `tapeflow/eval/bundled.py:KERNELS`) and returns the
MLIR text of a module holding one `func.func` marked `tapeflow.autodiff` that returns a
scalar f64 loss. Kernels use only func, scf.for (affine.for/load/store in jacobi2d, as
PolyBench writes it), arith, math and memref, with static shapes, so every trip count is
a compile-time constant except where a bound depends on an outer induction variable
(pairwise: `j` runs from `i+1`).
"""

from __future__ import annotations

import sys
from pathlib import Path


def _consts(ints: dict[str, int] = {}, floats: dict[str, float] = {}, i64s: dict[str, int] = {}) -> str:  # noqa: B006
    lines = []
    for name, v in ints.items():
        lines.append(f"  %{name} = arith.constant {v} : index")
    for name, v in i64s.items():
        lines.append(f"  %{name} = arith.constant {v} : i64")
    for name, v in floats.items():
        lines.append(f"  %{name} = arith.constant {float(v)!r} : f64")
    return "\n".join(lines)


def gemm(s: dict[str, int]) -> str:
    """loss = 0.5 * sum_ij (sum_k A[i,k] B[k,j])^2; C = AB is never stored."""
    M, N, K = s["M"], s["N"], s["K"]
    tA, tB = f"memref<{M}x{K}xf64>", f"memref<{K}x{N}xf64>"
    return f"""\
func.func @gemm(%A: {tA}, %B: {tB}) -> f64 attributes {{tapeflow.autodiff}} {{
{_consts(dict(c0=0, c1=1, cM=M, cN=N, cK=K), dict(zero=0.0, half=0.5))}
  %loss = scf.for %i = %c0 to %cM step %c1 iter_args(%li = %zero) -> (f64) {{
    %lj = scf.for %j = %c0 to %cN step %c1 iter_args(%l = %li) -> (f64) {{
      %acc = scf.for %k = %c0 to %cK step %c1 iter_args(%s = %zero) -> (f64) {{
        %a = memref.load %A[%i, %k] : {tA}
        %b = memref.load %B[%k, %j] : {tB}
        %p = arith.mulf %a, %b : f64
        %s1 = arith.addf %s, %p : f64
        scf.yield %s1 : f64
      }}
      %sq = arith.mulf %acc, %acc : f64
      %h = arith.mulf %half, %sq : f64
      %l1 = arith.addf %l, %h : f64
      scf.yield %l1 : f64
    }}
    scf.yield %lj : f64
  }}
  func.return %loss : f64
}}
"""


def mlp(s: dict[str, int]) -> str:
    """Two-layer tanh MLP over a batch: Hs = tanh(X W1 + b1), loss = 0.5 |Hs W2 + b2 - Y|^2."""
    B, D, H, O = s["B"], s["D"], s["H"], s["O"]
    tX, tW1, tb1 = f"memref<{B}x{D}xf64>", f"memref<{D}x{H}xf64>", f"memref<{H}xf64>"
    tW2, tb2, tY = f"memref<{H}x{O}xf64>", f"memref<{O}xf64>", f"memref<{B}x{O}xf64>"
    tHs = f"memref<{B}x{H}xf64>"
    return f"""\
func.func @mlp(%X: {tX}, %W1: {tW1}, %b1: {tb1}, %W2: {tW2}, %b2: {tb2}, %Y: {tY}, %Hs: {tHs}) -> f64 attributes {{tapeflow.autodiff}} {{
{_consts(dict(c0=0, c1=1, cB=B, cD=D, cH=H, cO=O), dict(zero=0.0, half=0.5))}
  %loss = scf.for %b = %c0 to %cB step %c1 iter_args(%lb = %zero) -> (f64) {{
    scf.for %h = %c0 to %cH step %c1 {{
      %bias = memref.load %b1[%h] : {tb1}
      %z = scf.for %d = %c0 to %cD step %c1 iter_args(%s = %bias) -> (f64) {{
        %x = memref.load %X[%b, %d] : {tX}
        %w = memref.load %W1[%d, %h] : {tW1}
        %p = arith.mulf %x, %w : f64
        %s1 = arith.addf %s, %p : f64
        scf.yield %s1 : f64
      }}
      %a = math.tanh %z : f64
      memref.store %a, %Hs[%b, %h] : {tHs}
      scf.yield
    }}
    %lo = scf.for %o = %c0 to %cO step %c1 iter_args(%l = %lb) -> (f64) {{
      %bias2 = memref.load %b2[%o] : {tb2}
      %y = scf.for %h2 = %c0 to %cH step %c1 iter_args(%s = %bias2) -> (f64) {{
        %hv = memref.load %Hs[%b, %h2] : {tHs}
        %w = memref.load %W2[%h2, %o] : {tW2}
        %p = arith.mulf %hv, %w : f64
        %s1 = arith.addf %s, %p : f64
        scf.yield %s1 : f64
      }}
      %t = memref.load %Y[%b, %o] : {tY}
      %e = arith.subf %y, %t : f64
      %e2 = arith.mulf %e, %e : f64
      %he2 = arith.mulf %half, %e2 : f64
      %l1 = arith.addf %l, %he2 : f64
      scf.yield %l1 : f64
    }}
    scf.yield %lo : f64
  }}
  func.return %loss : f64
}}
"""


def conv2d(s: dict[str, int]) -> str:
    """3x3 valid convolution, Cin -> Cout channels, plus bias, then leaky ReLU (slope 0.01);
    loss = sum of squared activations (the activations are never stored)."""
    CI, CO, H, W = s["CI"], s["CO"], s["H"], s["W"]
    tX, tK, tb = f"memref<{CI}x{H}x{W}xf64>", f"memref<{CO}x{CI}x3x3xf64>", f"memref<{CO}xf64>"
    return f"""\
func.func @conv2d(%X: {tX}, %K: {tK}, %bias: {tb}) -> f64 attributes {{tapeflow.autodiff}} {{
{_consts(dict(c0=0, c1=1, c3=3, cCI=CI, cCO=CO, cHo=H - 2, cWo=W - 2), dict(zero=0.0, slope=0.01))}
  %loss = scf.for %co = %c0 to %cCO step %c1 iter_args(%l0 = %zero) -> (f64) {{
    %bv = memref.load %bias[%co] : {tb}
    %l1 = scf.for %i = %c0 to %cHo step %c1 iter_args(%la = %l0) -> (f64) {{
      %l2 = scf.for %j = %c0 to %cWo step %c1 iter_args(%lb = %la) -> (f64) {{
        %acc = scf.for %ci = %c0 to %cCI step %c1 iter_args(%s0 = %bv) -> (f64) {{
          %s1 = scf.for %ki = %c0 to %c3 step %c1 iter_args(%sa = %s0) -> (f64) {{
            %s2 = scf.for %kj = %c0 to %c3 step %c1 iter_args(%sb = %sa) -> (f64) {{
              %ii = arith.addi %i, %ki : index
              %jj = arith.addi %j, %kj : index
              %x = memref.load %X[%ci, %ii, %jj] : {tX}
              %w = memref.load %K[%co, %ci, %ki, %kj] : {tK}
              %p = arith.mulf %x, %w : f64
              %sn = arith.addf %sb, %p : f64
              scf.yield %sn : f64
            }}
            scf.yield %s2 : f64
          }}
          scf.yield %s1 : f64
        }}
        %pos = arith.cmpf ogt, %acc, %zero : f64
        %neg = arith.mulf %slope, %acc : f64
        %act = arith.select %pos, %acc, %neg : f64
        %sq = arith.mulf %act, %act : f64
        %ln = arith.addf %lb, %sq : f64
        scf.yield %ln : f64
      }}
      scf.yield %l2 : f64
    }}
    scf.yield %l1 : f64
  }}
  func.return %loss : f64
}}
"""


def softmax_ce(s: dict[str, int]) -> str:
    """Softmax cross-entropy over a batch, max-shifted: per row b,
    loss_b = log(sum_j exp(Z[b,j] - m_b)) + m_b - Z[b, label_b], m_b = max_j Z[b,j]."""
    B, C = s["B"], s["C"]
    tZ, tL = f"memref<{B}x{C}xf64>", f"memref<{B}xi32>"
    return f"""\
func.func @softmax_ce(%Z: {tZ}, %labels: {tL}) -> f64 attributes {{tapeflow.autodiff}} {{
{_consts(dict(c0=0, c1=1, cB=B, cC=C), dict(zero=0.0))}
  %loss = scf.for %b = %c0 to %cB step %c1 iter_args(%l = %zero) -> (f64) {{
    %z0 = memref.load %Z[%b, %c0] : {tZ}
    %m = scf.for %j = %c1 to %cC step %c1 iter_args(%mx = %z0) -> (f64) {{
      %z = memref.load %Z[%b, %j] : {tZ}
      %gt = arith.cmpf ogt, %z, %mx : f64
      %mn = arith.select %gt, %z, %mx : f64
      scf.yield %mn : f64
    }}
    %se = scf.for %j = %c0 to %cC step %c1 iter_args(%sa = %zero) -> (f64) {{
      %z = memref.load %Z[%b, %j] : {tZ}
      %sh = arith.subf %z, %m : f64
      %e = math.exp %sh : f64
      %sn = arith.addf %sa, %e : f64
      scf.yield %sn : f64
    }}
    %lse = math.log %se : f64
    %lab32 = memref.load %labels[%b] : {tL}
    %lab = arith.index_cast %lab32 : i32 to index
    %zl = memref.load %Z[%b, %lab] : {tZ}
    %lm = arith.addf %lse, %m : f64
    %lb = arith.subf %lm, %zl : f64
    %ln = arith.addf %l, %lb : f64
    scf.yield %ln : f64
  }}
  func.return %loss : f64
}}
"""


def jacobi2d(s: dict[str, int]) -> str:
    """PolyBench jacobi-2d, written with affine loops and accesses as PolyBench is: T steps,
    B = 5-point mean of A, then A = 5-point mean of B, on the interior; loss = 0.5 * sum A^2
    at the end. Linear in the inputs until the loss."""
    N, T = s["N"], s["T"]
    tA = f"memref<{N}x{N}xf64>"

    def sweep(src: str, dst: str, tag: str) -> str:
        return f"""\
    affine.for %i{tag} = 1 to {N - 1} {{
      affine.for %j{tag} = 1 to {N - 1} {{
        %v0{tag} = affine.load %{src}[%i{tag}, %j{tag}] : {tA}
        %v1{tag} = affine.load %{src}[%i{tag}, %j{tag} - 1] : {tA}
        %v2{tag} = affine.load %{src}[%i{tag}, %j{tag} + 1] : {tA}
        %v3{tag} = affine.load %{src}[%i{tag} + 1, %j{tag}] : {tA}
        %v4{tag} = affine.load %{src}[%i{tag} - 1, %j{tag}] : {tA}
        %a1{tag} = arith.addf %v0{tag}, %v1{tag} : f64
        %a2{tag} = arith.addf %a1{tag}, %v2{tag} : f64
        %a3{tag} = arith.addf %a2{tag}, %v3{tag} : f64
        %a4{tag} = arith.addf %a3{tag}, %v4{tag} : f64
        %r{tag} = arith.mulf %fifth, %a4{tag} : f64
        affine.store %r{tag}, %{dst}[%i{tag}, %j{tag}] : {tA}
      }}
    }}"""

    return f"""\
func.func @jacobi2d(%A: {tA}, %B: {tA}) -> f64 attributes {{tapeflow.autodiff}} {{
{_consts(dict(c0=0, c1=1, cN=N), dict(zero=0.0, half=0.5, fifth=0.2))}
  affine.for %t = 0 to {T} {{
{sweep("A", "B", "f")}
{sweep("B", "A", "b")}
  }}
  %loss = scf.for %i = %c0 to %cN step %c1 iter_args(%la = %zero) -> (f64) {{
    %lj = scf.for %j = %c0 to %cN step %c1 iter_args(%l = %la) -> (f64) {{
      %a = memref.load %A[%i, %j] : {tA}
      %sq = arith.mulf %a, %a : f64
      %h = arith.mulf %half, %sq : f64
      %ln = arith.addf %l, %h : f64
      scf.yield %ln : f64
    }}
    scf.yield %lj : f64
  }}
  func.return %loss : f64
}}
"""


def lstm(s: dict[str, int]) -> str:
    """LSTM over T steps for a batch of B sequences (input I, hidden H). Gates for unit j are
    rows k*H+j of W (4H x I), U (4H x H) and bias (4H), k = input, forget, output, cell.
    Hs and Cs hold the T+1 hidden and cell states (Hs[0], Cs[0] are the initial state);
    loss = 0.5 * sum over every step of |h_t|^2."""
    T, B, I, H = s["T"], s["B"], s["I"], s["H"]
    tX, tW, tU = f"memref<{T}x{B}x{I}xf64>", f"memref<{4 * H}x{I}xf64>", f"memref<{4 * H}x{H}xf64>"
    tb, tS = f"memref<{4 * H}xf64>", f"memref<{T + 1}x{B}x{H}xf64>"

    def sigmoid(z: str, out: str) -> str:
        return f"""\
        %{out}_n = arith.negf %{z} : f64
        %{out}_e = math.exp %{out}_n : f64
        %{out}_d = arith.addf %one, %{out}_e : f64
        %{out} = arith.divf %one, %{out}_d : f64"""

    return f"""\
func.func @lstm(%X: {tX}, %W: {tW}, %U: {tU}, %bias: {tb}, %Hs: {tS}, %Cs: {tS}) -> f64 attributes {{tapeflow.autodiff}} {{
{_consts(dict(c0=0, c1=1, cT=T, cB=B, cI=I, cH=H, cH2=2 * H, cH3=3 * H), dict(zero=0.0, half=0.5, one=1.0))}
  %loss = scf.for %t = %c0 to %cT step %c1 iter_args(%lt = %zero) -> (f64) {{
    %t1 = arith.addi %t, %c1 : index
    %lbo = scf.for %b = %c0 to %cB step %c1 iter_args(%lb = %lt) -> (f64) {{
      %lj = scf.for %j = %c0 to %cH step %c1 iter_args(%l = %lb) -> (f64) {{
        %r1 = arith.addi %j, %cH : index
        %r2 = arith.addi %j, %cH2 : index
        %r3 = arith.addi %j, %cH3 : index
        %b0 = memref.load %bias[%j] : {tb}
        %b1 = memref.load %bias[%r1] : {tb}
        %b2 = memref.load %bias[%r2] : {tb}
        %b3 = memref.load %bias[%r3] : {tb}
        %x0, %x1, %x2, %x3 = scf.for %i = %c0 to %cI step %c1 iter_args(%s0 = %b0, %s1 = %b1, %s2 = %b2, %s3 = %b3) -> (f64, f64, f64, f64) {{
          %x = memref.load %X[%t, %b, %i] : {tX}
          %w0 = memref.load %W[%j, %i] : {tW}
          %w1 = memref.load %W[%r1, %i] : {tW}
          %w2 = memref.load %W[%r2, %i] : {tW}
          %w3 = memref.load %W[%r3, %i] : {tW}
          %p0 = arith.mulf %w0, %x : f64
          %p1 = arith.mulf %w1, %x : f64
          %p2 = arith.mulf %w2, %x : f64
          %p3 = arith.mulf %w3, %x : f64
          %n0 = arith.addf %s0, %p0 : f64
          %n1 = arith.addf %s1, %p1 : f64
          %n2 = arith.addf %s2, %p2 : f64
          %n3 = arith.addf %s3, %p3 : f64
          scf.yield %n0, %n1, %n2, %n3 : f64, f64, f64, f64
        }}
        %z0, %z1, %z2, %z3 = scf.for %m = %c0 to %cH step %c1 iter_args(%s0 = %x0, %s1 = %x1, %s2 = %x2, %s3 = %x3) -> (f64, f64, f64, f64) {{
          %hp = memref.load %Hs[%t, %b, %m] : {tS}
          %u0 = memref.load %U[%j, %m] : {tU}
          %u1 = memref.load %U[%r1, %m] : {tU}
          %u2 = memref.load %U[%r2, %m] : {tU}
          %u3 = memref.load %U[%r3, %m] : {tU}
          %p0 = arith.mulf %u0, %hp : f64
          %p1 = arith.mulf %u1, %hp : f64
          %p2 = arith.mulf %u2, %hp : f64
          %p3 = arith.mulf %u3, %hp : f64
          %n0 = arith.addf %s0, %p0 : f64
          %n1 = arith.addf %s1, %p1 : f64
          %n2 = arith.addf %s2, %p2 : f64
          %n3 = arith.addf %s3, %p3 : f64
          scf.yield %n0, %n1, %n2, %n3 : f64, f64, f64, f64
        }}
{sigmoid("z0", "ig")}
{sigmoid("z1", "fg")}
{sigmoid("z2", "og")}
        %g = math.tanh %z3 : f64
        %cp = memref.load %Cs[%t, %b, %j] : {tS}
        %fc = arith.mulf %fg, %cp : f64
        %igg = arith.mulf %ig, %g : f64
        %c = arith.addf %fc, %igg : f64
        memref.store %c, %Cs[%t1, %b, %j] : {tS}
        %tc = math.tanh %c : f64
        %h = arith.mulf %og, %tc : f64
        memref.store %h, %Hs[%t1, %b, %j] : {tS}
        %hh = arith.mulf %h, %h : f64
        %hh2 = arith.mulf %half, %hh : f64
        %ln = arith.addf %l, %hh2 : f64
        scf.yield %ln : f64
      }}
      scf.yield %lj : f64
    }}
    scf.yield %lbo : f64
  }}
  func.return %loss : f64
}}
"""


def ba(s: dict[str, int]) -> str:
    """Bundle-adjustment reprojection residuals (ADBench BA, simplified camera): camera c is
    (theta, tx, ty, tz, f, k1), a rotation by theta about z, a translation, a pinhole
    projection with focal f and radial distortion 1 + k1 r^2. Observation o sees point
    pt_idx[o] from camera cam_idx[o] at obs[o]; loss = sum of squared residuals."""
    NC, NP, NO = s["NC"], s["NP"], s["NO"]
    tC, tP, tO, tI = f"memref<{NC}x6xf64>", f"memref<{NP}x3xf64>", f"memref<{NO}x2xf64>", f"memref<{NO}xi32>"
    return f"""\
func.func @ba(%cams: {tC}, %pts: {tP}, %obs: {tO}, %cam_idx: {tI}, %pt_idx: {tI}) -> f64 attributes {{tapeflow.autodiff}} {{
{_consts(dict(c0=0, c1=1, c2=2, c3=3, c4=4, c5=5, cNO=NO), dict(zero=0.0, one=1.0))}
  %loss = scf.for %o = %c0 to %cNO step %c1 iter_args(%l = %zero) -> (f64) {{
    %ci32 = memref.load %cam_idx[%o] : {tI}
    %pi32 = memref.load %pt_idx[%o] : {tI}
    %c = arith.index_cast %ci32 : i32 to index
    %p = arith.index_cast %pi32 : i32 to index
    %th = memref.load %cams[%c, %c0] : {tC}
    %tx = memref.load %cams[%c, %c1] : {tC}
    %ty = memref.load %cams[%c, %c2] : {tC}
    %tz = memref.load %cams[%c, %c3] : {tC}
    %f = memref.load %cams[%c, %c4] : {tC}
    %k1 = memref.load %cams[%c, %c5] : {tC}
    %X = memref.load %pts[%p, %c0] : {tP}
    %Y = memref.load %pts[%p, %c1] : {tP}
    %Z = memref.load %pts[%p, %c2] : {tP}
    %cs = math.cos %th : f64
    %sn = math.sin %th : f64
    %cx = arith.mulf %cs, %X : f64
    %sy = arith.mulf %sn, %Y : f64
    %sx = arith.mulf %sn, %X : f64
    %cy = arith.mulf %cs, %Y : f64
    %xr0 = arith.subf %cx, %sy : f64
    %xr = arith.addf %xr0, %tx : f64
    %yr0 = arith.addf %sx, %cy : f64
    %yr = arith.addf %yr0, %ty : f64
    %zr = arith.addf %Z, %tz : f64
    %u = arith.divf %xr, %zr : f64
    %v = arith.divf %yr, %zr : f64
    %uu = arith.mulf %u, %u : f64
    %vv = arith.mulf %v, %v : f64
    %r2 = arith.addf %uu, %vv : f64
    %kr = arith.mulf %k1, %r2 : f64
    %d = arith.addf %one, %kr : f64
    %fd = arith.mulf %f, %d : f64
    %pu = arith.mulf %fd, %u : f64
    %pv = arith.mulf %fd, %v : f64
    %mu = memref.load %obs[%o, %c0] : {tO}
    %mv = memref.load %obs[%o, %c1] : {tO}
    %ru = arith.subf %pu, %mu : f64
    %rv = arith.subf %pv, %mv : f64
    %ru2 = arith.mulf %ru, %ru : f64
    %rv2 = arith.mulf %rv, %rv : f64
    %r = arith.addf %ru2, %rv2 : f64
    %ln = arith.addf %l, %r : f64
    scf.yield %ln : f64
  }}
  func.return %loss : f64
}}
"""


def mass_spring(s: dict[str, int]) -> str:
    """A chain of N masses between two fixed ends (x[0], x[N+1]), nonlinear springs
    f(d) = k d + c d^3, symplectic Euler over T steps in place (F is scratch):
    F[i] = f(x[i+1]-x[i]) - f(x[i]-x[i-1]); v[i] += dt F[i]; x[i] += dt v[i].
    loss = sum_i x[i]^2 + v[i]^2 at the end."""
    N, T = s["N"], s["T"]
    tV = f"memref<{N + 2}xf64>"
    return f"""\
func.func @mass_spring(%x: {tV}, %v: {tV}, %F: {tV}) -> f64 attributes {{tapeflow.autodiff}} {{
{_consts(dict(c0=0, c1=1, cN1=N + 1, cN2=N + 2, cT=T), dict(zero=0.0, k=1.0, cub=0.5, dt=0.1))}
  scf.for %t = %c0 to %cT step %c1 {{
    scf.for %i = %c1 to %cN1 step %c1 {{
      %im = arith.subi %i, %c1 : index
      %ip = arith.addi %i, %c1 : index
      %xm = memref.load %x[%im] : {tV}
      %x0 = memref.load %x[%i] : {tV}
      %xp = memref.load %x[%ip] : {tV}
      %dl = arith.subf %x0, %xm : f64
      %dr = arith.subf %xp, %x0 : f64
      %dl2 = arith.mulf %dl, %dl : f64
      %dl3 = arith.mulf %dl2, %dl : f64
      %dr2 = arith.mulf %dr, %dr : f64
      %dr3 = arith.mulf %dr2, %dr : f64
      %lin = arith.subf %dr, %dl : f64
      %cubd = arith.subf %dr3, %dl3 : f64
      %fl = arith.mulf %k, %lin : f64
      %fc = arith.mulf %cub, %cubd : f64
      %f = arith.addf %fl, %fc : f64
      memref.store %f, %F[%i] : {tV}
      scf.yield
    }}
    scf.for %i = %c1 to %cN1 step %c1 {{
      %f = memref.load %F[%i] : {tV}
      %vi = memref.load %v[%i] : {tV}
      %dv = arith.mulf %dt, %f : f64
      %vn = arith.addf %vi, %dv : f64
      memref.store %vn, %v[%i] : {tV}
      %xi = memref.load %x[%i] : {tV}
      %dx = arith.mulf %dt, %vn : f64
      %xn = arith.addf %xi, %dx : f64
      memref.store %xn, %x[%i] : {tV}
      scf.yield
    }}
    scf.yield
  }}
  %loss = scf.for %i = %c0 to %cN2 step %c1 iter_args(%l = %zero) -> (f64) {{
    %xi = memref.load %x[%i] : {tV}
    %vi = memref.load %v[%i] : {tV}
    %xx = arith.mulf %xi, %xi : f64
    %vv = arith.mulf %vi, %vi : f64
    %e = arith.addf %xx, %vv : f64
    %ln = arith.addf %l, %e : f64
    scf.yield %ln : f64
  }}
  func.return %loss : f64
}}
"""


def pairwise(s: dict[str, int]) -> str:
    """Pairwise-distance energy over N points in 3-D: loss = sum_{i<j} 1/sqrt(|p_i-p_j|^2 + eps).
    The inner loop's lower bound (i+1) depends on the outer induction variable."""
    N = s["N"]
    tP = f"memref<{N}x3xf64>"
    return f"""\
func.func @pairwise(%P: {tP}) -> f64 attributes {{tapeflow.autodiff}} {{
{_consts(dict(c0=0, c1=1, c2=2, cN=N), dict(zero=0.0, one=1.0, eps=0.01))}
  %loss = scf.for %i = %c0 to %cN step %c1 iter_args(%li = %zero) -> (f64) {{
    %xi = memref.load %P[%i, %c0] : {tP}
    %yi = memref.load %P[%i, %c1] : {tP}
    %zi = memref.load %P[%i, %c2] : {tP}
    %i1 = arith.addi %i, %c1 : index
    %lj = scf.for %j = %i1 to %cN step %c1 iter_args(%l = %li) -> (f64) {{
      %xj = memref.load %P[%j, %c0] : {tP}
      %yj = memref.load %P[%j, %c1] : {tP}
      %zj = memref.load %P[%j, %c2] : {tP}
      %dx = arith.subf %xi, %xj : f64
      %dy = arith.subf %yi, %yj : f64
      %dz = arith.subf %zi, %zj : f64
      %dx2 = arith.mulf %dx, %dx : f64
      %dy2 = arith.mulf %dy, %dy : f64
      %dz2 = arith.mulf %dz, %dz : f64
      %s1 = arith.addf %dx2, %dy2 : f64
      %s2 = arith.addf %s1, %dz2 : f64
      %d2 = arith.addf %s2, %eps : f64
      %r = math.sqrt %d2 : f64
      %e = arith.divf %one, %r : f64
      %ln = arith.addf %l, %e : f64
      scf.yield %ln : f64
    }}
    scf.yield %lj : f64
  }}
  func.return %loss : f64
}}
"""


def pwl(s: dict[str, int]) -> str:
    """Piecewise-linear table lookup iterated T times in place: with s = clamp(x*M, 0, M),
    k = clamp(fptosi(s), 0, M-1), x <- table[k] + (table[k+1]-table[k]) * (s - k).
    Clamping s keeps the lookup an interpolation (never an extrapolation), so x stays in
    the table's range however many steps run.
    The table has M+1 knots on [0, 1]; loss = sum x^2 at the end."""
    N, M, T = s["N"], s["M"], s["T"]
    tx, tt = f"memref<{N}xf64>", f"memref<{M + 1}xf64>"
    return f"""\
func.func @pwl(%x: {tx}, %table: {tt}) -> f64 attributes {{tapeflow.autodiff}} {{
{_consts(dict(c0=0, c1=1, cN=N, cT=T), dict(zero=0.0, fM=float(M)), dict(i0=0, iM1=M - 1))}
  scf.for %t = %c0 to %cT step %c1 {{
    scf.for %i = %c0 to %cN step %c1 {{
      %xi = memref.load %x[%i] : {tx}
      %s0 = arith.mulf %xi, %fM : f64
      %s1 = arith.maximumf %s0, %zero : f64
      %s = arith.minimumf %s1, %fM : f64
      %k0 = arith.fptosi %s : f64 to i64
      %lo = arith.cmpi slt, %k0, %i0 : i64
      %k1 = arith.select %lo, %i0, %k0 : i64
      %hi = arith.cmpi sgt, %k1, %iM1 : i64
      %k = arith.select %hi, %iM1, %k1 : i64
      %kf = arith.sitofp %k : i64 to f64
      %fr = arith.subf %s, %kf : f64
      %ki = arith.index_cast %k : i64 to index
      %kn = arith.addi %ki, %c1 : index
      %y0 = memref.load %table[%ki] : {tt}
      %y1 = memref.load %table[%kn] : {tt}
      %dy = arith.subf %y1, %y0 : f64
      %sl = arith.mulf %dy, %fr : f64
      %y = arith.addf %y0, %sl : f64
      memref.store %y, %x[%i] : {tx}
      scf.yield
    }}
    scf.yield
  }}
  %loss = scf.for %i = %c0 to %cN step %c1 iter_args(%l = %zero) -> (f64) {{
    %xi = memref.load %x[%i] : {tx}
    %xx = arith.mulf %xi, %xi : f64
    %ln = arith.addf %l, %xx : f64
    scf.yield %ln : f64
  }}
  func.return %loss : f64
}}
"""


def ragged_rnn(s: dict[str, int]) -> str:
    """A scalar RNN over B sequences of different lengths (lens[b] <= L steps), h <- tanh(
    wa*h + wb*X[b,t]) from h0[b]; loss = sum over sequences of the final h^2. The inner
    trip count is loaded from memory inside the outer loop, so no trip count is known
    before the loop: tapeflow-lower-tape keeps the tape in Enzyme's growable buffer
    (issue 11)."""
    B, L = s["B"], s["L"]
    tX, th, tw, tl = f"memref<{B}x{L}xf64>", f"memref<{B}xf64>", "memref<2xf64>", f"memref<{B}xi32>"
    return f"""\
func.func @ragged_rnn(%X: {tX}, %h0: {th}, %w: {tw}, %lens: {tl}) -> f64 attributes {{tapeflow.autodiff}} {{
{_consts(dict(c0=0, c1=1, cB=B), dict(zero=0.0))}
  %wa = memref.load %w[%c0] : {tw}
  %wb = memref.load %w[%c1] : {tw}
  %loss = scf.for %b = %c0 to %cB step %c1 iter_args(%l = %zero) -> (f64) {{
    %hb = memref.load %h0[%b] : {th}
    %lb = memref.load %lens[%b] : {tl}
    %n = arith.index_cast %lb : i32 to index
    %h = scf.for %t = %c0 to %n step %c1 iter_args(%hh = %hb) -> (f64) {{
      %xt = memref.load %X[%b, %t] : {tX}
      %a = arith.mulf %wa, %hh : f64
      %bx = arith.mulf %wb, %xt : f64
      %z = arith.addf %a, %bx : f64
      %hn = math.tanh %z : f64
      scf.yield %hn : f64
    }}
    %h2 = arith.mulf %h, %h : f64
    %ln = arith.addf %l, %h2 : f64
    scf.yield %ln : f64
  }}
  func.return %loss : f64
}}
"""


TEMPLATES = {
    "gemm": gemm,
    "mlp": mlp,
    "conv2d": conv2d,
    "softmax_ce": softmax_ce,
    "jacobi2d": jacobi2d,
    "lstm": lstm,
    "ba": ba,
    "mass_spring": mass_spring,
    "pairwise": pairwise,
    "pwl": pwl,
    "ragged_rnn": ragged_rnn,
}


def render(name: str, sizes: dict[str, int]) -> str:
    return TEMPLATES[name](sizes)


def main() -> None:
    root = Path(__file__).resolve().parent
    sys.path.insert(0, str(root.parent.parent))
    from tapeflow.eval.bundled import KERNELS

    for kernel in KERNELS.values():
        for size_name in ("small", "default"):
            text = render(kernel.name, kernel.sizes[size_name])
            (root / size_name / f"{kernel.name}.mlir").write_text(text)
            print(f"wrote {size_name}/{kernel.name}.mlir")


if __name__ == "__main__":
    main()
