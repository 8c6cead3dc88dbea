"""The bundled suite: eleven benchmark kernels, one entry each with sizes, arguments, inputs.

Each kernel is a `func.func @<name>` in `small/<name>.mlir` and `default/<name>.mlir` of
the kernel directory (`kernel_dir()`: benchmarks/kernels of the source tree; generated
by its `generate.py` from the sizes below), marked `tapeflow.autodiff`, returning a scalar
f64 loss. `small` sizes keep interpreter runs and finite differences fast (tests);
`default` sizes are for evaluation, chosen so that the values Enzyme has to cache exceed
4 MiB where the kernel caches anything at all (`python benchmarks/tape_stats.py`; since
min-tape takes Enzyme's minimum cut, softmax_ce and mass_spring keep less: README.md).

Arguments (`ArgSpec.kind`):
- `input`: a float array the loss depends on (differentiable: gets a shadow in `@<f>_grad`);
- `scratch`: a float array the kernel overwrites before reading (the loss does not depend
  on its initial content, so its gradient is zero; it still gets a shadow);
- `index`: an i32 array of indices (constant for AD), generated in range;
- `const`: a float array marked `enzyme_const` (no shadow; a salam kernel's).

`make_inputs(name, size, seed)` returns NumPy arrays in argument order; `reference(name,
arrays)` is the NumPy primal loss; `reference_grad(name, arrays)` a hand-derived gradient
(dict arg name -> array) for the kernels that have one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tapeflow import runner
from tapeflow.diagnostics import ToolError
from tapeflow.frontends.c import compile_c

SOURCE_TREE = Path(__file__).resolve().parents[2]
"""The checkout the package runs from when installed editable (`pip install -e .`); an
installed wheel's is site-packages, which holds no benchmarks/."""


def kernel_dir() -> Path:
    """Where the kernel files are (data only: the package imports nothing from them), the
    one rule: `$TAPEFLOW_KERNELS` when set, else benchmarks/kernels of `SOURCE_TREE`.
    Raises `ToolError` saying where it looked when that is not a folder (an installed
    wheel has no kernel files: set TAPEFLOW_KERNELS to a checkout's benchmarks/kernels)."""
    env = os.environ.get("TAPEFLOW_KERNELS")
    path = Path(env) if env else SOURCE_TREE / "benchmarks" / "kernels"
    if not path.is_dir():
        where = (f"$TAPEFLOW_KERNELS ({path})" if env else
                 f"{path} (the source tree's; $TAPEFLOW_KERNELS is not set)")  # fmt: skip
        raise ToolError(f"no kernel folder: looked in {where}; set TAPEFLOW_KERNELS to the "
                        "benchmarks/kernels folder of a TapeFlow checkout")  # fmt: skip
    return path


@dataclass(frozen=True)
class ArgSpec:
    name: str
    kind: str  # "input" | "scratch" | "index" | "const"
    shape: Callable[[dict[str, int]], tuple[int, ...]]

    @property
    def is_float(self) -> bool:
        return self.kind in ("input", "scratch")

    @property
    def dtype(self) -> type:
        return np.int32 if self.kind == "index" else np.float64


@dataclass(frozen=True)
class Kernel:
    name: str
    sizes: dict[str, dict[str, int]]
    args: tuple[ArgSpec, ...]
    make: Callable[[dict[str, int], np.random.Generator], list[np.ndarray]]
    reference: Callable[..., float]
    reference_grad: Callable[..., dict[str, np.ndarray]] | None = None
    description: str = ""
    notes: str = field(default="")

    @property
    def entry(self) -> str:
        return self.name

    @property
    def grad_entry(self) -> str:
        return f"{self.name}_grad"

    def path(self, size: str = "small") -> Path:
        return kernel_dir() / size / f"{self.name}.mlir"

    def source(self, size: str = "small") -> str:
        return self.path(size).read_text()

    def load(self, size: str = "default", c_source: str = "") -> Any:
        """The primal module: the MLIR file of `size`, or the C twin `c_source` compiled
        with the size's `-D` macros."""
        if c_source:
            defines = [f"-D{k}={v}" for k, v in self.sizes[size].items()]
            return compile_c(Path(c_source).read_text(), c_source, defines,
                             functions=[self.name])  # fmt: skip
        return runner.load_module(self.source(size), str(self.path(size)))

    def grad_arguments(self, size: str = "default", seed: int = 0) -> list[Any]:
        return with_shadows(self.args, self.inputs(size, seed))

    def argument_names(self, size: str = "default") -> list[str]:
        return shadow_names(self.args)

    def primal_bytes(self, size: str = "default", seed: int = 0) -> int:
        return primal_bytes(self.name, size)

    def inputs(self, size: str = "small", seed: int = 0) -> list[np.ndarray]:
        arrays = self.make(self.sizes[size], np.random.default_rng(seed))
        for spec, a in zip(self.args, arrays, strict=True):
            assert a.shape == spec.shape(self.sizes[size]), (self.name, spec.name, a.shape)
            assert a.dtype == spec.dtype, (self.name, spec.name, a.dtype)
        return arrays


def with_shadows(specs: tuple[ArgSpec, ...], arrays: list[np.ndarray]) -> list[Any]:
    """`@<f>_grad`'s arguments from `@<f>`'s arrays: each followed by a zero shadow when
    it is a float array, then the seed 1.0 of the scalar loss."""
    args: list[Any] = []
    for spec, a in zip(specs, arrays, strict=True):
        args += [a, np.zeros_like(a)] if spec.is_float else [a]
    return [*args, 1.0]


def shadow_names(specs: tuple[ArgSpec, ...]) -> list[str]:
    """Names of `@<f>_grad`'s arguments: `A`, `dA` (shadow), ..., `seed`."""
    out: list[str] = []
    for spec in specs:
        out += [spec.name, "d" + spec.name] if spec.is_float else [spec.name]
    return [*out, "seed"]


def _u(rng: np.random.Generator, shape, lo=-1.0, hi=1.0) -> np.ndarray:
    return rng.uniform(lo, hi, size=shape).astype(np.float64)


# ---------------------------------------------------------------------------------------
# gemm


def _gemm_make(s, rng):
    return [_u(rng, (s["M"], s["K"])), _u(rng, (s["K"], s["N"]))]


def _gemm_ref(A, B):
    C = A @ B
    return float(0.5 * np.sum(C * C))


def _gemm_grad(A, B):
    G = A @ B
    return {"A": G @ B.T, "B": A.T @ G}


# ---------------------------------------------------------------------------------------
# mlp


def _mlp_make(s, rng):
    B, D, H, O = s["B"], s["D"], s["H"], s["O"]
    return [
        _u(rng, (B, D)),
        _u(rng, (D, H)) / np.sqrt(D),
        _u(rng, (H,), -0.1, 0.1),
        _u(rng, (H, O)) / np.sqrt(H),
        _u(rng, (O,), -0.1, 0.1),
        _u(rng, (B, O)),
        np.zeros((B, H)),
    ]


def _mlp_ref(X, W1, b1, W2, b2, Y, Hs):
    h = np.tanh(X @ W1 + b1)
    e = h @ W2 + b2 - Y
    return float(0.5 * np.sum(e * e))


def _mlp_grad(X, W1, b1, W2, b2, Y, Hs):
    h = np.tanh(X @ W1 + b1)
    e = h @ W2 + b2 - Y
    dh = e @ W2.T
    dz = dh * (1 - h * h)
    return {
        "X": dz @ W1.T, "W1": X.T @ dz, "b1": dz.sum(0), "W2": h.T @ e, "b2": e.sum(0),
        "Y": -e, "Hs": np.zeros_like(Hs),
    }


# ---------------------------------------------------------------------------------------
# conv2d


def _conv_make(s, rng):
    CI, CO, H, W = s["CI"], s["CO"], s["H"], s["W"]
    return [_u(rng, (CI, H, W)), _u(rng, (CO, CI, 3, 3), -0.5, 0.5), _u(rng, (CO,), -0.1, 0.1)]


def _conv_pre(X, K, bias):
    CI, H, W = X.shape
    CO = K.shape[0]
    acc = np.zeros((CO, H - 2, W - 2)) + bias[:, None, None]
    for ci in range(CI):
        for ki in range(3):
            for kj in range(3):
                acc += K[:, ci, ki, kj][:, None, None] * X[ci, ki:ki + H - 2, kj:kj + W - 2][None]
    return acc


def _conv_ref(X, K, bias):
    acc = _conv_pre(X, K, bias)
    act = np.where(acc > 0, acc, 0.01 * acc)
    return float(np.sum(act * act))


# ---------------------------------------------------------------------------------------
# softmax cross-entropy


def _smce_make(s, rng):
    B, C = s["B"], s["C"]
    return [2.0 * _u(rng, (B, C)), rng.integers(0, C, size=B).astype(np.int32)]


def _smce_ref(Z, labels):
    m = Z.max(axis=1)
    lse = np.log(np.exp(Z - m[:, None]).sum(axis=1)) + m
    return float(np.sum(lse - Z[np.arange(Z.shape[0]), labels]))


def _smce_grad(Z, labels):
    m = Z.max(axis=1, keepdims=True)
    p = np.exp(Z - m)
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(Z.shape[0]), labels] -= 1.0
    return {"Z": p}


# ---------------------------------------------------------------------------------------
# jacobi2d


def _jac_make(s, rng):
    N = s["N"]
    return [_u(rng, (N, N), 0.0, 1.0), _u(rng, (N, N), 0.0, 1.0)]


def _jac_ref(A, B, T):
    A, B = A.copy(), B.copy()

    def mean5(S):
        return 0.2 * (S[1:-1, 1:-1] + S[1:-1, :-2] + S[1:-1, 2:] + S[2:, 1:-1] + S[:-2, 1:-1])

    for _ in range(T):
        B[1:-1, 1:-1] = mean5(A)
        A[1:-1, 1:-1] = mean5(B)
    return float(0.5 * np.sum(A * A))


# ---------------------------------------------------------------------------------------
# lstm


def _lstm_make(s, rng):
    T, B, I, H = s["T"], s["B"], s["I"], s["H"]
    Hs = np.zeros((T + 1, B, H))
    Cs = np.zeros((T + 1, B, H))
    Hs[0] = _u(rng, (B, H), -0.5, 0.5)
    Cs[0] = _u(rng, (B, H), -0.5, 0.5)
    return [
        _u(rng, (T, B, I)),
        _u(rng, (4 * H, I), -0.5, 0.5),
        _u(rng, (4 * H, H), -0.5, 0.5),
        _u(rng, (4 * H,), -0.1, 0.1),
        Hs,
        Cs,
    ]


def _lstm_ref(X, W, U, bias, Hs, Cs):
    T = X.shape[0]
    H = U.shape[1]
    h, c = Hs[0].copy(), Cs[0].copy()
    loss = 0.0

    def sig(z):
        return 1.0 / (1.0 + np.exp(-z))

    for t in range(T):
        z = X[t] @ W.T + h @ U.T + bias  # (B, 4H)
        ig, fg, og, g = sig(z[:, :H]), sig(z[:, H:2 * H]), sig(z[:, 2 * H:3 * H]), np.tanh(z[:, 3 * H:])
        c = fg * c + ig * g
        h = og * np.tanh(c)
        loss += float(np.sum(0.5 * h * h))
    return loss


# ---------------------------------------------------------------------------------------
# bundle adjustment


def _ba_make(s, rng):
    NC, NP, NO = s["NC"], s["NP"], s["NO"]
    cams = np.stack(
        [
            _u(rng, NC, -0.3, 0.3),
            _u(rng, NC, -0.5, 0.5),
            _u(rng, NC, -0.5, 0.5),
            _u(rng, NC, 0.0, 1.0),
            _u(rng, NC, 0.8, 1.2),
            _u(rng, NC, -0.1, 0.1),
        ],
        axis=1,
    )
    pts = np.stack([_u(rng, NP), _u(rng, NP), _u(rng, NP, 3.0, 5.0)], axis=1)
    obs = _u(rng, (NO, 2), -0.3, 0.3)
    cam_idx = rng.integers(0, NC, size=NO).astype(np.int32)
    pt_idx = rng.integers(0, NP, size=NO).astype(np.int32)
    return [cams, pts, obs, cam_idx, pt_idx]


def _ba_ref(cams, pts, obs, cam_idx, pt_idx):
    c = cams[cam_idx]
    p = pts[pt_idx]
    cs, sn = np.cos(c[:, 0]), np.sin(c[:, 0])
    xr = cs * p[:, 0] - sn * p[:, 1] + c[:, 1]
    yr = sn * p[:, 0] + cs * p[:, 1] + c[:, 2]
    zr = p[:, 2] + c[:, 3]
    u, v = xr / zr, yr / zr
    d = 1.0 + c[:, 5] * (u * u + v * v)
    ru = c[:, 4] * d * u - obs[:, 0]
    rv = c[:, 4] * d * v - obs[:, 1]
    return float(np.sum(ru * ru + rv * rv))


# ---------------------------------------------------------------------------------------
# mass-spring chain


def _ms_make(s, rng):
    N = s["N"]
    return [_u(rng, N + 2, -0.5, 0.5), _u(rng, N + 2, -0.5, 0.5), np.zeros(N + 2)]


def _ms_ref(x, v, F, T):
    x, v = x.copy(), v.copy()
    k, cub, dt = 1.0, 0.5, 0.1
    for _ in range(T):
        dl = x[1:-1] - x[:-2]
        dr = x[2:] - x[1:-1]
        f = k * (dr - dl) + cub * (dr * dr * dr - dl * dl * dl)
        v[1:-1] = v[1:-1] + dt * f
        x[1:-1] = x[1:-1] + dt * v[1:-1]
    return float(np.sum(x * x + v * v))


# ---------------------------------------------------------------------------------------
# pairwise energy


def _pw_make(s, rng):
    return [_u(rng, (s["N"], 3))]


def _pw_ref(P):
    d = P[:, None, :] - P[None, :, :]
    d2 = np.sum(d * d, axis=2) + 0.01
    iu = np.triu_indices(P.shape[0], 1)
    return float(np.sum(1.0 / np.sqrt(d2[iu])))


def _pw_grad(P):
    d = P[:, None, :] - P[None, :, :]
    d2 = np.sum(d * d, axis=2) + 0.01
    w = d2 ** -1.5
    np.fill_diagonal(w, 0.0)
    return {"P": -np.sum(w[:, :, None] * d, axis=1)}


# ---------------------------------------------------------------------------------------
# piecewise-linear lookup


def _pwl_make(s, rng):
    return [_u(rng, s["N"], -0.2, 1.2), _u(rng, s["M"] + 1, 0.05, 0.95)]


def _pwl_ref(x, table, T):
    x = x.copy()
    M = table.shape[0] - 1
    for _ in range(T):
        s = np.clip(x * float(M), 0.0, float(M))
        k = np.clip(np.trunc(s).astype(np.int64), 0, M - 1)
        fr = s - k.astype(np.float64)
        x = table[k] + (table[k + 1] - table[k]) * fr
    return float(np.sum(x * x))


# ---------------------------------------------------------------------------------------
# ragged RNN (sequence lengths in memory: the growable tape)


def _rr_make(s, rng):
    B, L = s["B"], s["L"]
    lens = rng.integers(L // 2, L + 1, size=B).astype(np.int32)
    return [_u(rng, (B, L)), _u(rng, B), np.array([0.9, 0.5]) + _u(rng, 2, -0.1, 0.1), lens]


def _rr_ref(X, h0, w, lens):
    h = h0.copy()
    for t in range(X.shape[1]):  # all sequences at once; finished ones keep their h
        h = np.where(t < lens, np.tanh(w[0] * h + w[1] * X[:, t]), h)
    return float(np.sum(h * h))


# ---------------------------------------------------------------------------------------


def _shape(*keys: str | int | Callable[[dict[str, int]], int]):
    def f(s: dict[str, int]) -> tuple[int, ...]:
        out = []
        for k in keys:
            out.append(k if isinstance(k, int) else (k(s) if callable(k) else s[k]))
        return tuple(out)

    return f


KERNELS: dict[str, Kernel] = {}


def _add(kernel: Kernel) -> None:
    KERNELS[kernel.name] = kernel


_add(Kernel(
    "gemm",
    {"small": dict(M=3, N=4, K=5), "default": dict(M=1024, N=576, K=4)},
    (ArgSpec("A", "input", _shape("M", "K")), ArgSpec("B", "input", _shape("K", "N"))),
    _gemm_make, _gemm_ref, _gemm_grad,
    "loss = 0.5 |AB|^2, C never stored",
))
_add(Kernel(
    "mlp",
    {"small": dict(B=3, D=4, H=5, O=2), "default": dict(B=1024, D=8, H=576, O=4)},
    (
        ArgSpec("X", "input", _shape("B", "D")), ArgSpec("W1", "input", _shape("D", "H")),
        ArgSpec("b1", "input", _shape("H")), ArgSpec("W2", "input", _shape("H", "O")),
        ArgSpec("b2", "input", _shape("O")), ArgSpec("Y", "input", _shape("B", "O")),
        ArgSpec("Hs", "scratch", _shape("B", "H")),
    ),
    _mlp_make, _mlp_ref, _mlp_grad,
    "two-layer tanh MLP over a batch, squared error",
))
_add(Kernel(
    "conv2d",
    {"small": dict(CI=2, CO=2, H=4, W=4), "default": dict(CI=1, CO=8, H=266, W=266)},
    (
        ArgSpec("X", "input", _shape("CI", "H", "W")),
        ArgSpec("K", "input", _shape("CO", "CI", 3, 3)),
        ArgSpec("bias", "input", _shape("CO")),
    ),
    _conv_make, _conv_ref, None,
    "3x3 convolution + bias + leaky ReLU, sum of squares",
))
_add(Kernel(
    "softmax_ce",
    {"small": dict(B=4, C=5), "default": dict(B=512, C=1024)},
    (ArgSpec("Z", "input", _shape("B", "C")), ArgSpec("labels", "index", _shape("B"))),
    _smce_make, _smce_ref, _smce_grad,
    "max-shifted softmax cross-entropy over a batch",
))
_add(Kernel(
    "jacobi2d",
    {"small": dict(N=5, T=2), "default": dict(N=256, T=8)},
    (ArgSpec("A", "input", _shape("N", "N")), ArgSpec("B", "input", _shape("N", "N"))),
    _jac_make, None, None,  # type: ignore[arg-type]  (set below: needs T)
    "jacobi-2d, T steps, two buffers, 0.5 |A|^2",
))
_add(Kernel(
    "lstm",
    {"small": dict(T=3, B=1, I=2, H=3), "default": dict(T=144, B=128, I=4, H=8)},
    (
        ArgSpec("X", "input", _shape("T", "B", "I")),
        ArgSpec("W", "input", _shape(lambda s: 4 * s["H"], "I")),
        ArgSpec("U", "input", _shape(lambda s: 4 * s["H"], "H")),
        ArgSpec("bias", "input", _shape(lambda s: 4 * s["H"])),
        ArgSpec("Hs", "input", _shape(lambda s: s["T"] + 1, "B", "H")),
        ArgSpec("Cs", "input", _shape(lambda s: s["T"] + 1, "B", "H")),
    ),
    _lstm_make, _lstm_ref, None,
    "LSTM over T steps, batch B; Hs[0], Cs[0] initial state, rest overwritten",
))
_add(Kernel(
    "ba",
    {"small": dict(NC=2, NP=4, NO=6), "default": dict(NC=16, NP=4096, NO=65536)},
    (
        ArgSpec("cams", "input", _shape("NC", 6)), ArgSpec("pts", "input", _shape("NP", 3)),
        ArgSpec("obs", "input", _shape("NO", 2)), ArgSpec("cam_idx", "index", _shape("NO")),
        ArgSpec("pt_idx", "index", _shape("NO")),
    ),
    _ba_make, _ba_ref, None,
    "bundle-adjustment reprojection residuals (rotation about z, radial distortion)",
))
_add(Kernel(
    "mass_spring",
    {"small": dict(N=6, T=4), "default": dict(N=1024, T=192)},
    (
        ArgSpec("x", "input", _shape(lambda s: s["N"] + 2)),
        ArgSpec("v", "input", _shape(lambda s: s["N"] + 2)),
        ArgSpec("F", "scratch", _shape(lambda s: s["N"] + 2)),
    ),
    _ms_make, None, None,  # type: ignore[arg-type]
    "nonlinear mass-spring chain, symplectic Euler in place over T steps",
))
_add(Kernel(
    "pairwise",
    {"small": dict(N=6), "default": dict(N=512)},
    (ArgSpec("P", "input", _shape("N", 3)),),
    _pw_make, _pw_ref, _pw_grad,
    "sum over pairs of 1/sqrt(d^2 + eps), triangular loop",
))
_add(Kernel(
    "pwl",
    {"small": dict(N=5, M=4, T=3), "default": dict(N=4096, M=64, T=144)},
    (ArgSpec("x", "input", _shape("N")), ArgSpec("table", "input", _shape(lambda s: s["M"] + 1))),
    _pwl_make, None, None,  # type: ignore[arg-type]
    "piecewise-linear table lookup (fptosi, clamp) iterated T times in place",
))


_add(Kernel(
    "ragged_rnn",
    {"small": dict(B=3, L=4), "default": dict(B=2048, L=384)},
    (
        ArgSpec("X", "input", _shape("B", "L")), ArgSpec("h0", "input", _shape("B")),
        ArgSpec("w", "input", _shape(2)), ArgSpec("lens", "index", _shape("B")),
    ),
    _rr_make, _rr_ref, None,
    "scalar tanh RNN over B sequences of lengths lens[b] <= L read from memory",
))


def make_inputs(name: str, size: str = "small", seed: int = 0) -> list[np.ndarray]:
    return KERNELS[name].inputs(size, seed)


def reference(name: str, arrays: list[np.ndarray], size: str = "small") -> float:
    """The NumPy primal loss of kernel `name` at `size` on `arrays` (not modified)."""
    s = KERNELS[name].sizes[size]
    arrays = [a.copy() for a in arrays]
    if name == "jacobi2d":
        return _jac_ref(*arrays, T=s["T"])
    if name == "mass_spring":
        return _ms_ref(*arrays, T=s["T"])
    if name == "pwl":
        return _pwl_ref(*arrays, T=s["T"])
    return KERNELS[name].reference(*arrays)


def reference_grad(name: str, arrays: list[np.ndarray]) -> dict[str, np.ndarray] | None:
    """A hand-derived gradient (arg name -> array), for gemm, mlp, softmax_ce, pairwise."""
    fn = KERNELS[name].reference_grad
    return None if fn is None else fn(*[a.copy() for a in arrays])


def primal_bytes(name: str, size: str = "default") -> int:
    """Bytes of the primal's data: every array argument (inputs, scratch, indices)."""
    k = KERNELS[name]
    s = k.sizes[size]
    total = 0
    for spec in k.args:
        total += int(np.prod(spec.shape(s))) * np.dtype(spec.dtype).itemsize
    return total
