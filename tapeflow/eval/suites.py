"""Suite salam: gem5-SALAM's AD benchmarks, their published results and our C kernels.

The suite's files are data in `salam_dir()` (`$TAPEFLOW_SALAM`, else the kernel folder's
salam/: benchmarks/kernels/salam of the source tree): one C file per benchmark and
`gem5_salam_results.csv`, the result CSVs of sfu-arch/gem5-SALAM (branch new_tapeman,
`8ILP_cache_results/`) as one table; its header comment cites the files and commits, the
folder's README.md documents every column and has the per-kernel table.
`load_results()` reads it, `salam_speedup()` gives their orig/ad total-cycle ratio at
one cluster-cache size, `salam_ratios()` all of them.

`KERNELS` is the suite's manifest, defined here so that the package reads the folder as
data and executes nothing from it: per kernel the entry function, their source and
commit, real and small sizes (-D macros), arguments, inputs, NumPy loss and the
benchmark's name in the CSV.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tapeflow.eval.bundled import ArgSpec, kernel_dir

RESULTS = "gem5_salam_results.csv"

_TEXT_COLUMNS = ("benchmark", "variant", "accounting", "label", "source_path", "source_commit")
_FLOAT_COLUMNS = ("fw_bw_mb", "rev_bw_mb", "total_bw_mb", "bin_zero_bw_mb")


def salam_dir(directory: str | None = None) -> Path:
    """Suite salam's folder: `directory`, `$TAPEFLOW_SALAM`, else `kernel_dir()/salam`."""
    return Path(directory or os.environ.get("TAPEFLOW_SALAM") or kernel_dir() / "salam")


def load_results(path: Path | None = None) -> list[dict[str, int | float | str]]:
    """Every row of the results table (`salam_dir()`'s `RESULTS` by default), counts as
    int, bandwidths (MB) as float."""
    with open(path or salam_dir() / RESULTS, newline="") as f:
        reader = csv.DictReader(line for line in f if not line.startswith("#"))
        rows = []
        for row in reader:
            rows.append({
                k: v if k in _TEXT_COLUMNS else float(v) if k in _FLOAT_COLUMNS else int(v)
                for k, v in row.items()
            })
    return rows


def salam_cycles(benchmark: str, variant: str, cache_bytes: int,
                 accounting: str = "total", rows: list[dict] | None = None) -> dict[str, int]:
    """Their forward, reverse and total cycles of one run (KeyError if they have none)."""
    for r in rows if rows is not None else load_results():
        if (r["benchmark"], r["variant"], r["accounting"], r["cache_bytes"]) == (
                benchmark, variant, accounting, cache_bytes):
            return {k: r[k] for k in ("fw_cycles", "rev_cycles", "total_cycles")}
    raise KeyError((benchmark, variant, accounting, cache_bytes))


def salam_speedup(benchmark: str, cache_bytes: int, rows: list[dict] | None = None) -> float:
    """gem5-SALAM's own speedup: orig (Enzyme) over ad (TapeFlow) total cycles."""
    rows = rows if rows is not None else load_results()
    orig = salam_cycles(benchmark, "orig", cache_bytes, rows=rows)["total_cycles"]
    ad = salam_cycles(benchmark, "ad", cache_bytes, rows=rows)["total_cycles"]
    return orig / ad


def salam_cache_sizes(benchmark: str, rows: list[dict] | None = None) -> list[int]:
    """The cluster-cache sizes (bytes) at which both variants of `benchmark` were run."""
    rows = rows if rows is not None else load_results()
    have = {v: {r["cache_bytes"] for r in rows if r["benchmark"] == benchmark and r["variant"] == v}
            for v in ("orig", "ad")}
    return sorted(have["orig"] & have["ad"])


def salam_ratios(directory: str | None = None) -> dict[str, dict[int, float]]:
    """gem5-SALAM's own speedups, from `salam_dir(directory)`'s results table: benchmark
    -> {cluster-cache bytes: orig/ad total cycles}; empty when the file is not there."""
    path = salam_dir(directory) / RESULTS
    if not path.is_file():
        return {}
    cycles = {(r["benchmark"], r["variant"], r["cache_bytes"]): r["total_cycles"]
              for r in load_results(path) if r["accounting"] == "total"}  # fmt: skip
    out: dict[str, dict[int, float]] = {}
    for (name, variant, cache), orig in cycles.items():
        ad = cycles.get((name, "ad", cache))
        if variant == "orig" and ad:
            out.setdefault(str(name), {})[int(cache)] = int(orig) / int(ad)
    return out


# ---------------------------------------------------------------------------------------
# The kernels: one C file per benchmark (`<name>.c`), sizes as -D macros whose defaults
# are gem5-SALAM's sizes ("real"); "small" sizes keep interpreter tests fast.

REPO = "sfu-arch/gem5-SALAM"


@dataclass(frozen=True)
class SalamKernel:
    """One benchmark of gem5-SALAM's AD suite as a C kernel.

    `entry` is the function the file hands to `__enzyme_autodiff` (its gradient is
    `<entry>_grad`); `sizes["real"]` are theirs (the macros' defaults in the file),
    `sizes["small"]` the CI sizes; `args` are the entry's parameters in order; `make(s,
    rng)` builds inputs, `reference(s, *arrays)` is the NumPy loss; `theirs` is the
    source file they differentiate (at `commit`); `csv` is the benchmark's name in
    gem5_salam_results.csv (None: not in their CSVs)."""

    name: str
    entry: str
    theirs: str
    commit: str
    sizes: dict[str, dict[str, int]]
    args: tuple[ArgSpec, ...]
    make: Callable[[dict[str, int], np.random.Generator], list[np.ndarray]]
    reference: Callable[..., float]
    csv: str | None = None
    notes: str = field(default="")
    # the letters of the file's Enzyme call when some array is enzyme_const (kind
    # "const"): its gradient is the C frontend's specialization `<entry>_<letters>_grad`
    activity: str = ""

    @property
    def grad_entry(self) -> str:
        return f"{self.entry}_{self.activity}_grad" if self.activity else f"{self.entry}_grad"

    @property
    def path(self) -> Path:
        return salam_dir() / f"{self.name}.c"

    def defines(self, size: str = "small") -> list[str]:
        """The `-D` flags of one size (`real` needs none: the file's defaults)."""
        return [f"-D{k}={v}" for k, v in self.sizes[size].items()]

    def inputs(self, size: str = "small", seed: int = 0) -> list[np.ndarray]:
        s = self.sizes[size]
        arrays = self.make(s, np.random.default_rng(seed))
        for spec, a in zip(self.args, arrays, strict=True):
            assert a.shape == spec.shape(s), (self.name, spec.name, a.shape)
            assert a.dtype == spec.dtype, (self.name, spec.name, a.dtype)
        return arrays

    def loss(self, arrays: list[np.ndarray], size: str = "small") -> float:
        """The NumPy loss on copies of `arrays`."""
        return float(self.reference(self.sizes[size], *[a.copy() for a in arrays]))

    def footprint_bytes(self, size: str = "real") -> int:
        """Bytes of the entry's array arguments (the primal's data, shadows not counted)."""
        s = self.sizes[size]
        return sum(int(np.prod(a.shape(s))) * np.dtype(a.dtype).itemsize for a in self.args)


def _u(rng: np.random.Generator, shape, scale: float = 1.0) -> np.ndarray:
    return rng.uniform(-scale, scale, size=shape).astype(np.float64)


def _arg(name: str, shape: Callable[[dict[str, int]], tuple[int, ...]], kind: str = "input"):
    return ArgSpec(name, kind, shape)


KERNELS: dict[str, SalamKernel] = {}


def _add(k: SalamKernel) -> None:
    KERNELS[k.name] = k


# logsum ---------------------------------------------------------------------------------
def _logsum_ref(s, x):
    A = x[0]
    sema = 1.0
    for v in x:  # the same order of products as the C loop
        sema *= np.exp(v - A)
    return np.log(sema) + A


_add(SalamKernel(
    name="logsum", entry="logsumexp", theirs="benchmarks/AD/logsum/hw/logsum.c",
    commit="d68b91f1b321a9abef11c526cdb8f68ba64d4628",
    sizes={"real": {"N": 10000}, "small": {"N": 8}},
    args=(_arg("x", lambda s: (s["N"],)),),
    make=lambda s, rng: [_u(rng, (s["N"],), 1e-3)],
    reference=_logsum_ref, csv="logsum",
))


# sddmm ----------------------------------------------------------------------------------
def _sddmm_ref(s, T):
    d = s["DIM"]
    A, B, C, D = (T[r, : d * d].reshape(d, d) for r in range(4))
    return float(np.sum(A + B * (C @ D)))


_add(SalamKernel(
    name="sddmm", entry="compute", theirs="benchmarks/AD/sddmm/hw/sddmm.c",
    commit="a5e40f4be5c3ea5d9765c08ea0615f84a48c6063",
    sizes={"real": {"DIM": 16}, "small": {"DIM": 3}},
    args=(_arg("T", lambda s: (4, s["DIM"] ** 3)),),
    make=lambda s, rng: [_u(rng, (4, s["DIM"] ** 3))],
    reference=_sddmm_ref, csv="sddmm",
))


# mttkrp ---------------------------------------------------------------------------------
def _mttkrp_ref(s, T):
    n = s["N"]
    A = T[: n * n].reshape(n, n)
    B = T[n * n : n * n + n**3].reshape(n, n, n)
    D = T[n * n + n**3 : 2 * n * n + n**3].reshape(n, n)
    C = T[2 * n * n + n**3 :].reshape(n, n)
    return float(np.sum(A + np.einsum("ikl,lj,kj->ij", B, D, C)))


_add(SalamKernel(
    name="mttkrp", entry="compute", theirs="benchmarks/AD/mttkrp/hw/mttkrp.c",
    commit="eaad970119bc9650370e9c46ec3efcc92a8185e8",
    sizes={"real": {"N": 8}, "small": {"N": 3}},
    args=(_arg("T", lambda s: (3 * s["N"] ** 2 + s["N"] ** 3,)),),
    make=lambda s, rng: [_u(rng, (3 * s["N"] ** 2 + s["N"] ** 3,))],
    reference=_mttkrp_ref, csv="mttkrp",
))


# nn -------------------------------------------------------------------------------------
def _nn_ref(s, pixels, b, W):
    act = b + W @ (pixels / 255.0)
    e = np.exp(act - act.max())
    return float(-np.log((e / e.sum())[1]))


_add(SalamKernel(
    name="nn", entry="hypothesis", theirs="benchmarks/AD/nn/hw/nn.c",
    commit="d68b91f1b321a9abef11c526cdb8f68ba64d4628",
    sizes={"real": {"LABELS": 10, "PIXELS": 784}, "small": {"LABELS": 3, "PIXELS": 5}},
    args=(_arg("pixels", lambda s: (s["PIXELS"],), "const"), _arg("b", lambda s: (s["LABELS"],)),
          _arg("W", lambda s: (s["LABELS"], s["PIXELS"]))),
    # pixels are bytes scaled by 1/255 in the kernel: inputs in [0, 255)
    make=lambda s, rng: [rng.uniform(0.0, 255.0, s["PIXELS"]), _u(rng, (s["LABELS"],)),
                         _u(rng, (s["LABELS"], s["PIXELS"]))],
    reference=_nn_ref, csv="nn", activity="cdd",
))


# matd -----------------------------------------------------------------------------------
def _matd_ref(s, mat, vec):
    m, n = s["M"], s["N"]
    out = np.array([sum(mat[i * m + j] * vec[j] for j in range(n)) for i in range(m)])
    total = float(s["SUM0"])
    for o in out:
        total *= o + o
    return total


_add(SalamKernel(
    name="matd", entry="matvec_real", theirs="benchmarks/AD/matd/hw/matd.c",
    commit="fab1e5a2712443076485ff9049e18afa25d435c3",
    sizes={"real": {"N": 400, "M": 400, "SUM0": 0}, "small": {"N": 3, "M": 3, "SUM0": 1}},
    args=(_arg("mat", lambda s: (s["M"] * s["M"],), "const"), _arg("vec", lambda s: (s["N"],))),
    make=lambda s, rng: [_u(rng, (s["M"] * s["M"],)), _u(rng, (s["N"],))],
    reference=_matd_ref, csv="matd", activity="cd",
))


# somier ---------------------------------------------------------------------------------
def _somier_ref(s, S):
    n = s["N"]
    X = S[: 3 * n**3].reshape(3, n, n, n)
    F = S[3 * n**3 :].reshape(3, n, n, n).copy()
    c = (slice(1, n - 1),) * 3
    for di, dj in ((-1, 0), (1, 0), (0, -1)):  # the three blocks, in order
        nb = (slice(1 + di, n - 1 + di), slice(1 + dj, n - 1 + dj), slice(1, n - 1))
        d = X[(slice(None), *nb)] - X[(slice(None), *c)]
        dl = (d * d).sum(0)
        f = 0.25 * 10.0 * (dl - 1) * d / dl
        F[(slice(None), *nb)] += f  # neighbours of distinct centres are distinct per block
    return float(F.sum())


def _somier_make(s, rng):
    n = s["N"]
    grid = np.stack(np.meshgrid(*[np.arange(n, dtype=np.float64)] * 3, indexing="ij"))
    X = (grid + _u(rng, grid.shape, 0.1)).reshape(-1)  # a jittered lattice: |d| near 1
    return [np.concatenate([X, _u(rng, (3 * n**3,))])]


_add(SalamKernel(
    name="somier", entry="compute_forces", theirs="benchmarks/AD/somier/hw/somier.c",
    commit="bf2008c716ec7eef5ce1ce1459ca4a0b528b4578",
    sizes={"real": {"N": 10}, "small": {"N": 4}},
    args=(_arg("S", lambda s: (6 * s["N"] ** 3,)),),
    make=_somier_make, reference=_somier_ref, csv="somier",
))


# pathfinder -----------------------------------------------------------------------------
def _pathfinder_ref(s, P0, wall, P1):
    rows, cols = s["ROWS"], s["COLS"]
    bufs = [P0.reshape(rows, cols).copy(), P1.reshape(rows, cols).copy()]
    W = wall.reshape(rows, cols)
    for t in range(rows - 1):
        src, dst = (bufs[1], bufs[0]) if t % 2 == 0 else (bufs[0], bufs[1])
        for n in range(1, cols):
            m = min(src[t, n], src[t, n - 1])
            if n < cols - 2:
                m = min(m, src[t, n + 1])
            dst[t + 1, n] = W[t + 1, n] * m
    last = bufs[0] if rows % 2 == 0 else bufs[1]
    return float(last[rows - 1, 1:].sum())


_add(SalamKernel(
    name="pathfinder", entry="run", theirs="benchmarks/AD/pathfinder/hw/pathfinder.c",
    commit="9a22c0c3918c97b0c3e207a971329c22a892ac78",
    sizes={"real": {"ROWS": 100, "COLS": 100}, "small": {"ROWS": 4, "COLS": 5}},
    args=tuple(_arg(a, lambda s: (s["ROWS"] * s["COLS"],)) for a in ("P0", "wall", "P1")),
    make=lambda s, rng: [_u(rng, (s["ROWS"] * s["COLS"],)) for _ in range(3)],
    reference=_pathfinder_ref, csv="pathfinder",
))


# gravity --------------------------------------------------------------------------------
def _gravity_ref(s, x):
    h = s["N"] // 2
    X = x.reshape(h, h)
    u = 1.0
    for i in range(h):
        for j in range(i + 1, h):
            u *= -1.0 / (X[i, j] - X[j, i] + 0.001)
    return u


def _gravity_make(s, rng):
    h = s["N"] // 2
    x = _u(rng, (h, h), 0.05) + np.triu(np.ones((h, h)), 1)
    return [x.reshape(-1)]


_add(SalamKernel(
    name="gravity", entry="ComputeU", theirs="benchmarks/AD/gravity/hw/gravity.c",
    commit="a5e40f4be5c3ea5d9765c08ea0615f84a48c6063",
    sizes={"real": {"N": 512}, "small": {"N": 8}},
    args=(_arg("x", lambda s: ((s["N"] // 2) ** 2,)),),
    make=_gravity_make, reference=_gravity_ref, csv="gravity",
))


# mass_spring ----------------------------------------------------------------------------
def _ms_sizes(s):
    h, ns, nw = s["N"], s["N_SPRINGS"], s["N_SIN_WAVES"]
    no = 2 * ns
    return h, ns, nw, no


def _ms_ref(s, x, v, bias1, hidden, act, w1, w2, bias2, lengths, actuation, v_inc):
    h, ns, nw, no = _ms_sizes(s)
    for i in range(h):
        acc = 0.0
        for j in range(nw):
            acc += w1[j] * np.sin(1 // (j + 1))
        for j in range(no):
            base = i * nw + j * 4 + nw
            acc += w1[base] * x[j] * 0.05
            acc += w1[base + 1] * x[j + 1] * 0.05
            acc += w1[base + 2] * v[j * no] * 0.05
            acc += w1[base + 3] * v[j * no + 1] * 0.05
        acc += w1[i * nw + no * 4 + nw] + w1[i * nw + no * 4 + nw + 1]
        hidden[i] = np.tanh(acc + bias1[i])
    act[:] = np.tanh(w2.reshape(ns, h) @ hidden + bias2)
    for i in range(ns):
        a, b = i, 2 * i
        dist = x[b] - x[a]
        length = np.sqrt(2 * x[a] * x[b]) + 0.0001
        target = lengths[i] * (1 + act[i] * actuation[i])
        impulse = (length - target) / length * dist
        v_inc[a] -= impulse
        v_inc[b] += impulse
    return float(np.sum(v_inc * v_inc))


def _ms_shapes():
    def sz(f):
        return lambda s: (f(*_ms_sizes(s)),)

    return (
        _arg("x", sz(lambda h, ns, nw, no: no + 1)),
        _arg("v", sz(lambda h, ns, nw, no: (no - 1) * no + 2)),
        _arg("bias1", sz(lambda h, ns, nw, no: h)),
        _arg("hidden", sz(lambda h, ns, nw, no: h), "scratch"),
        _arg("act", sz(lambda h, ns, nw, no: ns), "scratch"),
        _arg("weights1", sz(lambda h, ns, nw, no: h * (nw + no * 4 + 2))),
        _arg("weights2", sz(lambda h, ns, nw, no: ns * h)),
        _arg("bias2", sz(lambda h, ns, nw, no: ns)),
        _arg("spring_lengths", sz(lambda h, ns, nw, no: ns)),
        _arg("spring_actuation", sz(lambda h, ns, nw, no: ns)),
        _arg("v_inc", sz(lambda h, ns, nw, no: no)),
    )


_MS_ARGS = _ms_shapes()


def _ms_make(s, rng):
    arrays = [_u(rng, a.shape(s)) for a in _MS_ARGS]
    arrays[0] = rng.uniform(0.5, 1.5, _MS_ARGS[0].shape(s))  # positions: sqrt(2 x_a x_b)
    return arrays


_add(SalamKernel(
    name="mass_spring", entry="mass_spring", theirs="benchmarks/AD/mass_spring/hw/mass_spring.c",
    commit="116da467750395dccb384f853d240021eaf05c1f",
    sizes={"real": {"N": 32, "N_SPRINGS": 16, "N_SIN_WAVES": 16},
           "small": {"N": 3, "N_SPRINGS": 2, "N_SIN_WAVES": 2}},
    args=_MS_ARGS, make=_ms_make, reference=_ms_ref, csv="mass_spring",
))


# alexnet --------------------------------------------------------------------------------
def _alexnet_offsets(s):
    """The offsets of M's parts (alexnet.c's O_* macros)."""
    img, f1, pw1, pool, w, f2, fs, din, dout = (
        s[k] for k in ("IMG", "F1", "PW1", "POOL", "W", "F2", "FS", "DENSE_IN", "DENSE_OUT"))

    def pool_in(w_, p_):
        return (w_ * p_ - 1) * w_ + w_ * p_

    sizes = [
        ("IMG", img * img), ("W1", img * f1), ("W2", w * f2), ("W3", w * fs), ("W4", w * fs),
        ("W5", w * fs), ("W6", dout), ("C1", max(img * f1, pool_in(pw1, pool))),
        ("L1", max(pw1 * pw1, w * w)), ("C2", max(w * f2, pool_in(w, pool))), ("L2", w * w),
        ("C3", max(w * fs, pool_in(w, pool))), ("L3", w * w),
        ("C4", max(w * fs, pool_in(w, pool))), ("L4", w * w),
        ("C5", max(w * fs, pool_in(w, pool))), ("L5", max(w * w, din)), ("L6", dout),
    ]
    off, at = {}, 0
    for name, n in sizes:
        off[name] = at
        at += n
    off["SIZE"] = at
    return off


def _alexnet_ref(s, M):
    o = _alexnet_offsets(s)
    M = M.copy()

    def conv(m1, w1, m2, w2, st, out):
        prod = M[m1 : m1 + w1 * w1].reshape(w1, w1) @ M[m2 : m2 + w1 * w2].reshape(w1, w2)
        for i in range(0, w1, st):
            for j in range(0, w2, st):
                M[out + i * w2 + j] = prod[i, j]

    def pool(m, w_, p_, out):
        i, j, k, l_ = np.meshgrid(*(np.arange(n) for n in (w_, w_, p_, p_)), indexing="ij")
        vals = M[m + (i * p_ + k) * w_ + j * p_ + l_]
        M[out : out + w_ * w_] = vals.sum(axis=(2, 3)).reshape(-1)

    conv(o["IMG"], s["IMG"], o["W1"], s["F1"], s["S1"], o["C1"])
    pool(o["C1"], s["PW1"], s["POOL"], o["L1"])
    for n in range(2, 6):
        conv(o[f"L{n - 1}"], s["W"], o[f"W{n}"], s["F2"] if n == 2 else s["FS"], s["S"],
             o[f"C{n}"])
        pool(o[f"C{n}"], s["W"], s["POOL"], o[f"L{n}"])
    total = M[o["L5"] : o["L5"] + s["DENSE_IN"]].sum()
    return float(np.sum(total * M[o["W6"] : o["W6"] + s["DENSE_OUT"]]))


_add(SalamKernel(
    name="alexnet", entry="hypothesis", theirs="benchmarks/AD/alexnet/hw/alexnet.c",
    commit="d68b91f1b321a9abef11c526cdb8f68ba64d4628",
    sizes={"real": {"IMG": 224, "F1": 11, "S1": 4, "PW1": 46, "POOL": 3, "W": 50, "F2": 5,
                    "FS": 3, "S": 2, "DENSE_IN": 14153, "DENSE_OUT": 4096},
           "small": {"IMG": 6, "F1": 3, "S1": 2, "PW1": 3, "POOL": 2, "W": 3, "F2": 3,
                     "FS": 2, "S": 2, "DENSE_IN": 4, "DENSE_OUT": 2}},
    args=(_arg("M", lambda s: (_alexnet_offsets(s)["SIZE"],)),),
    # small values: five layers of unnormalised sums grow quickly
    make=lambda s, rng: [_u(rng, (_alexnet_offsets(s)["SIZE"],), 0.5)],
    reference=_alexnet_ref, csv="alexnet",
    notes="real size: the dense layer alone is 4,096 x 14,153 = 58 M iterations",
))


# jacobi (not in their CSVs) -------------------------------------------------------------
def _jacobi_ref(s, A, B):
    A, B = A.copy(), B.copy()
    c = (slice(1, -1), slice(1, -1))
    B[c] = 0.2 * (A[c] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
    A[c] = 0.2 * (B[c] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])
    return float(A.sum())


_add(SalamKernel(
    name="jacobi", entry="kernel_jacobi_2d", theirs="benchmarks/AD/jacobi/hw/jacobi.c",
    commit="149076911616aa43c7c2e462b9343e113f2e5061",
    sizes={"real": {"N": 50}, "small": {"N": 5}},
    args=(_arg("A", lambda s: (s["N"], s["N"])), _arg("B", lambda s: (s["N"], s["N"]))),
    make=lambda s, rng: [_u(rng, (s["N"], s["N"])), _u(rng, (s["N"], s["N"]))],
    reference=_jacobi_ref,
))


# spmv (not in the 8ILP CSVs) ------------------------------------------------------------
def _spmv_ref(s, T, pos):
    y = T[0].copy()
    for i in range(s["N"]):
        for ja in range(pos[i], pos[i + 1]):
            y[i] += (T[1][ja] * T[2][i]) * T[3][i]
    return float(y.sum())


_add(SalamKernel(
    name="spmv", entry="compute", theirs="benchmarks/AD/spmv/hw/spmv.c",
    commit="a5e40f4be5c3ea5d9765c08ea0615f84a48c6063",
    sizes={"real": {"N": 500, "C": 500}, "small": {"N": 6, "C": 4}},
    args=(_arg("T", lambda s: (4, s["N"])), _arg("pos", lambda s: (s["N"] + 1,), "index")),
    # pos as their top() leaves it: the row of each even (i + j) entry, C/2 per row
    make=lambda s, rng: [_u(rng, (4, s["N"])),
                         (np.arange(s["N"] + 1) // (s["C"] // 2)).astype(np.int32)],
    reference=_spmv_ref,
))


# lenet (not in their CSVs) --------------------------------------------------------------
def _lenet_offsets(s):
    """lenet.c's O_* macros and M_SIZE."""
    fw, fc1, cw1, pw, fc2, cw2, ow2, fc3, d4, d5 = (
        s[k] for k in ("FW", "FC1", "CW1", "PW", "FC2", "CW2", "OW2", "FC3", "D4", "D5"))
    net = fc1 * fw * fw + fc2 * fw * fw + fc3 * fw * fw + d4 + d5
    o = {"IMG": 0, "W1": net}
    o["W2"] = o["W1"] + fc1 * fw * fw
    o["W3"] = o["W2"] + fc2 * fw * fw
    o["W4"] = o["W3"] + fc3 * fw * fw
    o["W5"] = o["W4"] + d4
    o["CONV"] = 2 * net
    o["L1"] = o["CONV"] + fc1 * cw1 * cw1
    o["C2"] = o["L1"] + fc1 * cw1 * cw1
    o["L2"] = o["C2"] + fc2 * cw2 * cw2
    o["L3"] = o["L2"] + fc2 * ow2 * ow2
    o["L4"] = o["L3"] + fc3
    o["L5"] = o["L4"] + d4
    pool1_end = o["CONV"] + (fc1 - 1) * cw1 * cw1 + (cw1 * pw - 1) * cw1 + cw1 * pw
    o["SIZE"] = max(o["L5"] + d5, pool1_end)
    return o


def _lenet_ref(s, M):
    """The C loops in the same order on a list (their slices overlap: order matters)."""
    o, M = _lenet_offsets(s), [float(v) for v in M]

    def conv(m1, w1, m2, w2, out):
        for i in range(w1):
            for j in range(w2):
                M[out + i * w2 + j] = 0.0
                for k in range(w1):
                    M[out + i * w2 + j] += M[m1 + i * w1 + k] * M[m2 + k * w2 + j]

    def pool(m, w, p, out):
        for i in range(w):
            for j in range(w):
                M[out + i * w + j] = 0.0
                for k in range(p):
                    for l_ in range(p):
                        M[out + i * w + j] += M[m + (i * p + k) * w + j * p + l_]

    def dense(m1, n, wt, count, out):
        for i in range(count):
            tmp = 0.0
            for j in range(n):
                tmp += M[m1 + j] * M[wt + i]
            M[out + i] = tmp

    fw, cw1, ow1 = s["FW"], s["CW1"], s["OW1"]
    for f in range(s["FC1"]):
        conv(o["IMG"], s["IMG"], o["W1"] + f * fw * fw, fw, o["CONV"] + f * cw1 * cw1)
        pool(o["CONV"] + f * cw1 * cw1, cw1, s["PW"], o["L1"] + f * ow1 * ow1)
    conv(o["L1"], ow1, o["W2"], fw, o["C2"])
    pool(o["C2"], s["CW2"], s["PW"], o["L2"])
    conv(o["L2"], s["OW2"], o["W3"], fw, o["L3"])
    dense(o["L3"], s["FC3"], o["W4"], s["D4"], o["L4"])
    dense(o["L4"], s["D4"], o["W5"], s["D5"], o["L5"])
    return float(sum(M[o["L5"] : o["L5"] + s["D5"]]))


_add(SalamKernel(
    name="lenet", entry="hypothesis", theirs="benchmarks/AD/lenet/hw/alexnet.c",
    commit="e7fae7759f8ba4aea3cac2104bc0b6fdc55c9890",
    sizes={"real": {"IMG": 1, "FW": 5, "FC1": 6, "CW1": 28, "PW": 2, "OW1": 14, "FC2": 16,
                    "CW2": 10, "OW2": 5, "FC3": 120, "D4": 84, "D5": 10},
           "small": {"IMG": 2, "FW": 2, "FC1": 2, "CW1": 3, "PW": 2, "OW1": 2, "FC2": 2,
                     "CW2": 2, "OW2": 2, "FC3": 3, "D4": 2, "D5": 2}},
    args=(_arg("M", lambda s: (_lenet_offsets(s)["SIZE"],)),),
    make=lambda s, rng: [_u(rng, (_lenet_offsets(s)["SIZE"],), 0.5)],
    reference=_lenet_ref,
))


# bilateral (not in their CSVs) ----------------------------------------------------------
def _bilateral_offsets(s):
    h, w, ic = s["H"], s["W"], s["INPUT_CHANS"]
    grid = s["GD"] * s["GH"] * s["GW"] * ic
    return {"OUT": 0, "GRID": h * w, "GUIDE": h * w + grid, "INPUT": 2 * h * w + grid,
            "SIZE": 2 * h * w + grid + h * w * ic}


def _bilateral_ref(s, T):
    o = _bilateral_offsets(s)
    h, w, gd, gh, gw, ic = (s[k] for k in ("H", "W", "GD", "GH", "GW", "INPUT_CHANS"))
    f32 = np.float32
    total = 0.0
    for idx in range(w * h):
        x, y = idx % w, (idx // w) % h
        # (x + 0.5f) * gw / (1.0f * w) is float arithmetic in C
        gx = float(f32(f32(f32(x) + f32(0.5)) * f32(gw)) / f32(w))
        gy = float(f32(f32(f32(y) + f32(0.5)) * f32(gh)) / f32(h))
        gz = T[o["GUIDE"] + x + w * y] * gd
        fx, fy, fz = (int(np.floor(g - 0.5)) for g in (gx, gy, gz))
        value = 0.0
        for in_c in range(ic):
            coeff = 0.0
            for xx in (fx, fx + 1):
                x_ = int(max(min(xx, gw - 1), 0))
                wx = max(1.0 - abs(xx + 0.5 - gx), 0.0)
                for yy in (fy, fy + 1):
                    y_ = int(max(min(yy, gh - 1), 0))
                    wy = max(1.0 - abs(yy + 0.5 - gy), 0.0)
                    for zz in (fz, fz + 1):
                        z_ = int(max(min(zz, gd - 1), 0))
                        g = x_ + gw * y_ + gw * gh * z_ + gd * gw * gh * in_c
                        coeff += T[o["GRID"] + g] * wx * wy
            value += coeff * T[o["INPUT"] + x + w * (y + h * in_c)]
        total += value
    return total


def _bilateral_make(s, rng):
    T = _u(rng, (_bilateral_offsets(s)["SIZE"],))
    o = _bilateral_offsets(s)
    T[o["GUIDE"] : o["INPUT"]] = rng.uniform(0.0, 1.0, o["INPUT"] - o["GUIDE"])  # in [0, 1)
    return [T]


_add(SalamKernel(
    name="bilateral", entry="bilateral_slice", theirs="benchmarks/AD/bilateral/hw/bilateral.c",
    commit="75c50537a773f5f7f9400fe45c3842edbbdae4ab",
    sizes={"real": {"H": 30, "W": 30, "GD": 10, "GH": 10, "GW": 10, "INPUT_CHANS": 10},
           "small": {"H": 3, "W": 3, "GD": 2, "GH": 2, "GW": 2, "INPUT_CHANS": 2}},
    args=(_arg("T", lambda s: (_bilateral_offsets(s)["SIZE"],)),),
    make=_bilateral_make, reference=_bilateral_ref,
))


# fft (not in their CSVs) ----------------------------------------------------------------
def _fft_sin(x):
    i, cur, acc, fact, pw = 1, x, 1.0, 1.0, x
    while abs(acc) > 0.00000001 and i < 100:
        fact *= (2 * i) * (2 * i + 1)
        pw *= -1 * x * x
        acc = pw / fact
        cur += acc
        i += 1
    return cur


def _fft_ref(s, data):
    n = s["LEN"]
    d = [float(v) for v in data]

    def scramble():
        j = 1
        for i in range(1, 2 * n, 2):
            if j > i:
                d[j - 1], d[i - 1] = d[i - 1], d[j - 1]
                d[j], d[i] = d[i], d[j]
            m = n
            while m >= 2 and j > m:
                j -= m
                m >>= 1
            j += m

    def apply(sign):
        for _ in range(2):
            wtemp = sign * _fft_sin(np.pi / n)
            wpi = -sign * _fft_sin(2 * np.pi / n)
            wpr = -2.0 * wtemp * wtemp
            wr, wi = 1.0, 0.0
            for i in range(0, n, 2):
                i_n = i + n
                tempr = d[i_n] * wr - d[i_n + 1] * wi
                tempi = d[i_n] * wi + d[i_n + 1] * wr
                d[i_n], d[i_n + 1] = d[i] - tempr, d[i + 1] - tempi
                d[i] += tempr
                d[i + 1] += tempi
                wtemp = wr
                wr += wr * wpr - wi * wpi
                wi += wi * wpr + wtemp * wpi

    scramble()
    apply(1)
    scramble()
    apply(-1)
    return float(sum(v * (1.0 / n) for v in d))


_add(SalamKernel(
    name="fft", entry="foobar", theirs="benchmarks/AD/fft/hw/fft.c",
    commit="5f64bd1b7cdb0341ad88a89a223ed6d9fb912ab5",
    sizes={"real": {"LEN": 32}, "small": {"LEN": 4}},
    args=(_arg("data", lambda s: (2 * s["LEN"],)),),
    make=lambda s, rng: [_u(rng, (2 * s["LEN"],))],
    reference=_fft_ref,
))
