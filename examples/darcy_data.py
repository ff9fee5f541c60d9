"""2-D Darcy flow data as in Li et al. 2021 (Fourier Neural Operator), made by hloforge.

    -div(a(x) grad u(x)) = 1  on the unit square,  u = 0 on its boundary,

with a = psi(z), z drawn from the Gaussian random field N(0, (-Laplacian + 9 I)^-2) (Laplacian with
zero Neumann conditions, mean-zero field) and psi(z) = 12 where z >= 0, 3 elsewhere.

- The field is a cosine series, sampled spectrally in hloforge: normal coefficients from
  hloforge.random, summed on the grid by an inverse real FFT along each axis (a DCT-I), in float32
  (a TPU has no complex128).
- The equation is discretized by 5-point finite volumes on ``grid`` x ``grid`` nodes (boundary
  included, spacing 1/(grid-1)), the face conductivities being harmonic means of a at the two nodes.
  As the paper's data, the samples are solved on a fine grid (421 x 421 for the full preset) and
  subsampled to the resolutions trained and tested on: every 5th node gives 85 x 85, every 3rd 141,
  every 2nd 211.
- The solve is mixed precision: iterative refinement whose residual ``b - A u`` and solution u are float64,
  on the host's CPU (small hf.jit programs), each correction solved by a batched conjugate gradient method
  in float32, one compiled program (hf.jit, a ``hloforge.lax.while_loop``) per batch of samples on the
  default device (the TPU where there is one; that program holds no float64: XLA:TPU emulates it, and
  compiled the whole refinement in one program for 139 s). Float32 alone cannot reach
  the target of 1e-6: merely rounding the float64 solution to float32 leaves a relative residual of
  1.0e-3 at 421 x 421 (4.6e-5 at 85 x 85), the operator being that ill-conditioned. ``precision="float64"``
  solves in float64 (the preconditioner below in float32). The files hold float32 a and u.
- CG is preconditioned by the inverse of the unit-coefficient operator (the 5-point Laplacian), applied by
  sine transforms (real FFTs): as a lies in [3, 12], the preconditioned operator's condition number is at
  most 4 at every resolution: 8 samples on 421 x 421 take 24 CG steps (in all three refinements), where
  Jacobi's preconditioner took 2,970 (3,329 for the 1,100 samples).

Run: python examples/darcy_data.py [--n 1100 --grid 421 --resolutions 85,141,211,421 --seed 0] [--out DIR]

writes ``runs/darcy/darcy_r<resolution>_g<grid>_n<n>_s<seed>.npz`` (in the current directory) for each
resolution by default: the files train_fno_darcy.py reads for the same samples, so that its run skips
the solve (its full preset needs --n 1100, 1000 training and 100 test samples; --quick --n 350 --grid 57
--resolutions 29).
"""
from __future__ import annotations

import argparse
import functools
import os
import sys
import time

import numpy as np

import hloforge as hf
from hloforge import numpy as hnp

TAU, ALPHA = 3.0, 2.0          # covariance (-Laplacian + TAU^2 I)^-ALPHA
HIGH, LOW = 12.0, 3.0          # psi(z)
MAX_RESIDUAL = 1e-6            # the largest relative residual dataset() accepts
INNER_TOL = 1e-3               # each float32 CG solve of a correction: its residual reduction
MAX_REFINEMENTS = 30           # float64 refinement steps at most
DATA_TOL = 1e-8                # the relative residual dataset() solves to (MAX_RESIDUAL with a margin)


def _cosine_series(coeffs, axis: int, nodes: int):
    """sum_k c_k cos(pi k x_i) at x_i = i / (nodes - 1) along ``axis`` of a Tensor (its size: nodes),
    as an inverse real FFT of length 2 (nodes - 1) of the even extension."""
    m = 2 * (nodes - 1)
    weight = np.full(nodes, m / 2.0, np.float32)
    weight[0] = weight[-1] = m
    shape = [1] * coeffs.ndim
    shape[axis] = nodes
    values = hnp.fft.irfft(coeffs * weight.reshape(shape), n=m, axis=axis)
    index = [slice(None)] * coeffs.ndim
    index[axis] = slice(0, nodes)
    return values[tuple(index)]


def _field_std(resolution: int) -> np.ndarray:
    """Standard deviation of each cosine coefficient of z: the covariance's eigenvalues
    (pi^2 (k^2 + l^2) + tau^2)^-alpha, square-rooted, times the cosines' normalizations (1 or sqrt 2)."""
    k = np.arange(resolution)
    eig = np.pi ** 2 * (k[:, None] ** 2 + k[None, :] ** 2) + TAU ** 2
    norm = np.where(k == 0, 1.0, np.sqrt(2.0))
    std = eig ** (-ALPHA / 2) * norm[:, None] * norm[None, :]
    std[0, 0] = 0.0  # (mean zero, as Li et al.'s sampler)
    return std


def gaussian_field(n_samples: int, resolution: int, seed: int = 0) -> np.ndarray:
    """Samples of z ~ N(0, (-Laplacian + 9 I)^-2) on the nodes, float32 (n_samples, resolution, resolution),
    drawn on the CPU."""
    std = _field_std(resolution).astype(np.float32)

    # (on the host's CPU wherever the solve runs: the same fields on every machine; on a TPU v5e,
    # sampling the full preset's 1,100 fields of 421 x 421 had not finished after 3 minutes)
    @hf.jit(device="cpu")
    def sample(key):
        xi = hf.random.normal(key, (n_samples, resolution, resolution), np.float32)
        return _cosine_series(_cosine_series(xi * std, 1, resolution), 2, resolution)

    return np.asarray(sample(hf.random.key(seed)))


def coefficients(n_samples: int, resolution: int, seed: int = 0) -> np.ndarray:
    """a = psi(z): 12 where the field is >= 0, 3 elsewhere, float64 (n_samples, resolution, resolution)."""
    return np.where(gaussian_field(n_samples, resolution, seed) >= 0, HIGH, LOW)


# ------------------------------------------------------------------ the discretization


def _faces(a):
    """Face conductivities (harmonic means) next to the interior nodes: ax (n, R-1, R-2) between rows
    i and i+1, ay (n, R-2, R-1) between columns j and j+1. Works on numpy arrays and Tensors alike."""
    ax = 2 * a[:, 1:, 1:-1] * a[:, :-1, 1:-1] / (a[:, 1:, 1:-1] + a[:, :-1, 1:-1])
    ay = 2 * a[:, 1:-1, 1:] * a[:, 1:-1, :-1] / (a[:, 1:-1, 1:] + a[:, 1:-1, :-1])
    return ax, ay


def _apply(u, ax, ay):
    """h^2 times the operator -div(a grad u) on the interior nodes (u = 0 on the boundary)."""
    padded = hnp.pad(u, [(0, 0), (1, 1), (1, 1)])
    flux_x = ax * (padded[:, 1:, 1:-1] - padded[:, :-1, 1:-1])
    flux_y = ay * (padded[:, 1:-1, 1:] - padded[:, 1:-1, :-1])
    return flux_x[:, :-1] - flux_x[:, 1:] + flux_y[:, :, :-1] - flux_y[:, :, 1:]


def _system(a):
    """The discrete system of a traced ``a`` (n, R, R): its face conductivities and right-hand side h^2 * 1."""
    ax, ay = _faces(a)
    return ax, ay, hnp.full((a.shape[0], a.shape[1] - 2, a.shape[2] - 2), 1.0 / (a.shape[1] - 1) ** 2, a.dtype)


def _diagonal(ax, ay):
    return ax[:, 1:] + ax[:, :-1] + ay[:, :, 1:] + ay[:, :, :-1]


def _norms(v):
    return hnp.sqrt(hnp.sum(v * v, axis=(1, 2)))


def _batch(s):
    """Per-sample scalars (n,) broadcast against (n, rows, cols) fields."""
    return s[:, None, None]


def _dst(x, axis: int):
    """The type-I discrete sine transform along ``axis`` (y_k = sum_j x_j sin(pi j k / (m + 1)), j, k = 1..m),
    by a real FFT of the odd extension [0, x, 0, -reversed x] (length 2 (m + 1))."""
    x = hnp.moveaxis(x, axis, -1)
    m = x.shape[-1]
    zero = hnp.zeros_like(x[..., :1])
    spectrum = hnp.fft.rfft(hnp.concatenate([zero, x, zero, -hnp.flip(x, -1)], axis=-1), axis=-1)
    return hnp.moveaxis(spectrum[..., 1:m + 1].imag * -0.5, -1, axis)


@functools.lru_cache(maxsize=8)
def _laplacian_inverse(m: int) -> np.ndarray:
    """1 / the eigenvalues of the unit-coefficient operator (the 5-point Laplacian, h^2 times, zero on the
    boundary) on m x m interior nodes, for each pair of sine modes, times the two DSTs' normalization."""
    s = 4 * np.sin(np.pi * np.arange(1, m + 1) / (2 * (m + 1))) ** 2
    return ((2 / (m + 1)) ** 2 / (s[:, None] + s[None, :])).astype(np.float32)


def _precondition(r):
    """The unit-coefficient operator's inverse applied to r (two DSTs per axis, in float32 whatever r's dtype:
    a TPU has no complex128). Face conductivities lie in [LOW, HIGH], so the preconditioned operator's
    condition number is at most HIGH / LOW = 4 at every resolution: CG needs a few steps per digit,
    where Jacobi's CG needed more the finer the grid (about 1,000 per three digits at 421 x 421)."""
    inverse = _laplacian_inverse(r.shape[-1])
    r32 = r.astype(np.float32)
    return _dst(_dst(_dst(_dst(r32, -1), -2) * inverse, -1), -2).astype(r.dtype)


def _pcg(ax, ay, b, tol, max_iter):
    """CG for each sample preconditioned by _precondition, stopped when every sample's recursive
    residual is below ``tol`` relative to b (a converged sample stops changing) or after ``max_iter``
    steps. beta is Polak-Ribiere's (flexible CG): the float32 preconditioner is symmetric only to its
    rounding, which a float64 solve to 1e-10 would otherwise feel."""
    b_norm = _norms(b)
    u = hnp.zeros_like(b)
    r = b
    z = _precondition(r)
    rz = hnp.sum(r * z, axis=(1, 2))

    def active(r):
        return _norms(r) > tol * b_norm

    def cond(state):
        k, _, r, _, _, _ = state
        return (k < max_iter) & hnp.any(active(r))

    def body(state):
        k, u, r, p, z, rz = state
        moving = active(r)
        q = _apply(p, ax, ay)
        alpha = hnp.where(moving, rz / hnp.where(moving, hnp.sum(p * q, axis=(1, 2)), 1.0), 0.0)
        u = u + _batch(alpha) * p
        r = r - _batch(alpha) * q
        z_new = _precondition(r)
        rz_new = hnp.sum(r * z_new, axis=(1, 2))
        beta = hnp.where(moving, (rz_new - hnp.sum(r * z, axis=(1, 2))) / hnp.where(moving, rz, 1.0), 0.0)
        p = hnp.where(_batch(moving), z_new + _batch(beta) * p, p)
        return k + 1, u, r, p, hnp.where(_batch(moving), z_new, z), hnp.where(moving, rz_new, rz)

    k, u, _, _, _, _ = hf.lax.while_loop(cond, body, (np.int32(0), u, r, z, z, rz))
    return k, u


def _refined(a, tol, max_iter):
    """Mixed-precision iterative refinement: u and the residual b - A u in float64 on the host's CPU, each
    correction A d = r solved on the default device by _pcg in float32 (r scaled to unit norm per sample, to
    INNER_TOL), until every sample's true relative residual is below ``tol`` or after MAX_REFINEMENTS
    corrections. The device program holds no float64: a TPU emulates it, and compiling the refinement
    loop with it took 139 of the 143 s of a first 220-sample run on a TPU v5e (its float32 CG compiles in
    10 s). The float64 arrays stay on the CPU between steps; only the float32 r and d travel.
    Returns (u, residuals, float32 CG steps in all)."""
    ax, ay, b, b_norm, ax32, ay32, u = _setup(a)
    device = _correction_device()
    ax32, ay32 = hf.device_put((ax32, ay32), device)  # (once: they do not change)
    correction = _correction(max_iter)
    b_norm = np.asarray(b_norm)
    r, scale, steps = b, b_norm, 0
    for _ in range(MAX_REFINEMENTS):
        if not np.any(scale > tol * b_norm):
            break
        scale = np.where(scale > 0, scale, 1.0)
        # (r comes from the host's CPU committed there, as a jit with a device commits its results: put on
        # the corrections' device, or the call would mix two devices' arrays, which hf.jit refuses as jax.jit)
        inner, d = correction(ax32, ay32, hf.device_put(_scaled(r, scale), device))
        u, r, scale = _update(u, d, scale, ax, ay, b)
        scale = np.asarray(scale)
        steps += int(inner)
    return np.pad(np.asarray(u), [(0, 0), (1, 1), (1, 1)]), scale / b_norm, steps


def _correction_device():
    """The device the float32 corrections run on: hloforge's default (a TPU or GPU when there is one)."""
    return hf.devices(hf.config.device, local=True)[0]


@functools.lru_cache(maxsize=8)
def _correction(max_iter: int):
    """The compiled float32 correction solve (hf.jit compiles it once per grid and batch size)."""
    return hf.jit(lambda ax, ay, r: _pcg(ax, ay, r, INNER_TOL, max_iter))


# (the refinement's float64 arithmetic: on the host's CPU wherever the corrections run, one fused program each)
@hf.jit(device="cpu")
def _setup(a):
    """The face conductivities (float64 and float32), b, its norms and u = 0."""
    ax, ay, b = _system(a)
    return ax, ay, b, _norms(b), ax.astype(np.float32), ay.astype(np.float32), hnp.zeros_like(b)


@hf.jit(device="cpu")
def _scaled(r, scale):
    return (r / _batch(scale)).astype(np.float32)


@hf.jit(device="cpu")
def _update(u, d, scale, ax, ay, b):
    """u + scale d, the residual b - A u and its norms, in float64."""
    u = u + _batch(scale) * d.astype(u.dtype)
    r = b - _apply(u, ax, ay)
    return u, r, _norms(r)


def _check_coefficients(a) -> np.ndarray:
    a = np.asarray(a)
    if a.ndim != 3 or a.shape[1] != a.shape[2] or a.shape[1] < 3:
        raise ValueError(f"darcy_data.solve: a must be (n, R, R) with R >= 3, got shape {a.shape}")
    if not np.all(np.isfinite(a)) or not np.all(a > 0):
        raise ValueError(f"darcy_data.solve: a must be finite and positive, got min {a.min()}, max {a.max()}")
    return a.astype(np.float64)


PRECISIONS = ("mixed", "float64")


@functools.lru_cache(maxsize=8)
def _solver(tol: float, max_iter: int):
    """The compiled batched float64 solve (hf.jit compiles it once per grid and batch size)."""
    @hf.jit
    def run(a):
        ax, ay, b = _system(a)
        k, u = _pcg(ax, ay, b, tol, max_iter)
        residual = _norms(b - _apply(u, ax, ay)) / _norms(b)
        return hnp.pad(u, [(0, 0), (1, 1), (1, 1)]), residual, k
    return run


def solve(a, tol: float = 1e-10, max_iter: int | None = None, precision: str = "mixed"):
    """u on the nodes for each coefficient field of ``a`` (n, R, R), solved by hloforge programs:
    ``precision`` "mixed" (float32 CG corrections on the default device, float64 refinement on the host's
    CPU) or "float64" (one program on the default device).

    Returns (u, residuals, iterations): u float64 (n, R, R) with zeros on the boundary, each sample's
    true relative residual ||b - A u|| / ||b|| of the discrete system, and the CG steps taken (over all
    refinements)."""
    if precision not in PRECISIONS:
        raise ValueError(f"darcy_data.solve: precision must be one of {PRECISIONS}, got {precision!r}")
    a = _check_coefficients(a)
    resolution = a.shape[1]
    max_iter = 20 * resolution if max_iter is None else max_iter
    if precision == "mixed":
        return _refined(a, float(tol), int(max_iter))
    u, residual, k = _solver(float(tol), int(max_iter))(a)
    return np.asarray(u), np.asarray(residual), int(k)


def stride(grid: int, resolution: int) -> int:
    """The subsampling step from ``grid`` nodes to ``resolution`` (every node of the coarse grid is one
    of the fine grid's: (grid - 1) must be a multiple of (resolution - 1))."""
    if resolution < 3 or resolution > grid or (grid - 1) % (resolution - 1):
        raise ValueError(f"darcy_data: a {grid}-node grid does not subsample to {resolution} nodes "
                         f"((grid - 1) must be a multiple of (resolution - 1))")
    return (grid - 1) // (resolution - 1)


def subsample(x, grid: int, resolution: int):
    """Every stride(grid, resolution)-th node of the last two axes of ``x``."""
    step = stride(grid, resolution)
    return x[..., ::step, ::step]


def dense_matrix(a) -> np.ndarray:
    """The discrete system's matrix for one field a (R, R), dense ((R-2)^2 square), in numpy: the
    reference the CG solver is checked against."""
    a = np.asarray(a, np.float64)[None]
    ax, ay = (f[0] for f in _faces(a))
    m = a.shape[1] - 2
    index = np.arange(m * m).reshape(m, m)
    matrix = np.zeros((m * m, m * m))
    matrix[index, index] = _diagonal(ax[None], ay[None])[0]
    # neighbours: -face conductivity between them (boundary neighbours are the zeros of u)
    rows, cols = index[:-1, :], index[1:, :]
    matrix[rows, cols] = matrix[cols, rows] = -ax[1:-1, :]
    rows, cols = index[:, :-1], index[:, 1:]
    matrix[rows, cols] = matrix[cols, rows] = -ay[:, 1:-1]
    return matrix


def dense_solve(a) -> np.ndarray:
    """u for one field a (R, R) by numpy.linalg.solve, boundary included."""
    resolution = np.asarray(a).shape[0]
    h2 = 1.0 / (resolution - 1) ** 2
    m = resolution - 2
    u = np.linalg.solve(dense_matrix(a), np.full(m * m, h2)).reshape(m, m)
    return np.pad(u, 1)


CHUNK_POINTS = 45_000_000  # grid points solved per program run (about 250 samples of 421 x 421)
RESOLUTIONS = (85, 141, 211, 421)  # the paper's: 421 subsampled by 5, 3, 2 and 1


def dataset(n_samples: int, grid: int = 421, resolutions=(85,), seed: int = 0, precision: str = "mixed") -> dict:
    """{resolution: (a, u)}, float32 (n, R, R): coefficients and solutions solved on ``grid`` x ``grid``
    nodes and subsampled to each resolution, solved in equal chunks of at most CHUNK_POINTS grid points
    (one compile). Prints the largest relative residual; raises RuntimeError if it is above 1e-6."""
    for resolution in resolutions:
        stride(grid, resolution)
    started = time.perf_counter()
    a = coefficients(n_samples, grid, seed)
    sampled = time.perf_counter()
    runs = -(-n_samples * grid * grid // CHUNK_POINTS)
    chunk = -(-n_samples // runs)
    padded = np.concatenate([a, np.repeat(a[-1:], runs * chunk - n_samples, axis=0)])  # (equal chunks)
    pieces, worst, steps = [], 0.0, 0
    for start in range(0, n_samples, chunk):
        u, residual, k = solve(padded[start:start + chunk], DATA_TOL, precision=precision)
        pieces.append(u.astype(np.float32))
        worst, steps = max(worst, float(residual[:n_samples - start].max())), max(steps, k)
    print(f"relative residual: {worst:.3e} ({n_samples} samples solved on {grid}x{grid} in {precision} precision, "
          f"{steps} CG steps at most; subsampled to {', '.join(map(str, resolutions))}; coefficients sampled in "
          f"{sampled - started:.1f} s, solved in {time.perf_counter() - sampled:.1f} s)")
    if not worst <= MAX_RESIDUAL:
        raise RuntimeError(f"darcy_data: CG reached a relative residual of {worst:.3e} only (> {MAX_RESIDUAL})")
    u = np.concatenate(pieces)[:n_samples]
    return {r: (subsample(a, grid, r).astype(np.float32), np.ascontiguousarray(subsample(u, grid, r)))
            for r in resolutions}


RUN_DIR = os.path.join("runs", "darcy")  # train_fno_darcy.py's default --out


def file_name(n_samples: int, resolution: int, grid: int, seed: int) -> str:
    """The data file's name: its parameters and seed, which train_fno_darcy.py looks for."""
    return f"darcy_r{resolution}_g{grid}_n{n_samples}_s{seed}.npz"


def save(path: str, a, u) -> None:
    """Write (a, u) to ``path`` (.npz) atomically, creating its folder."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    np.savez(path + ".tmp.npz", a=a, u=u)
    os.replace(path + ".tmp.npz", path)


def _resolutions(text: str) -> tuple:
    """Comma-separated ints ("" for none)."""
    try:
        return tuple(int(r) for r in text.split(",")) if text.strip() else ()
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Solve 2-D Darcy flow for random coefficient fields.")
    parser.add_argument("--n", type=int, default=1100,
                        help="number of samples (default 1100: train_fno_darcy.py's 1000 + 100)")
    parser.add_argument("--grid", type=int, default=421,
                        help="nodes per side of the grid solved on, boundary included (default: the paper's 421)")
    parser.add_argument("--resolutions", type=_resolutions, default=RESOLUTIONS,
                        help="comma-separated resolutions the solutions are subsampled to (default 85,141,211,421)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--precision", choices=PRECISIONS, default="mixed",
                        help="mixed: float32 CG corrections, float64 refinement (default); float64 throughout")
    parser.add_argument("--out", default=RUN_DIR,
                        help=f"the folder of the .npz files, one per resolution (default: {RUN_DIR}, "
                             f"train_fno_darcy.py's; names: {file_name('<n>', '<resolution>', '<grid>', '<seed>')})")
    args = parser.parse_args(argv)
    if args.n < 1 or args.grid < 3:
        parser.error(f"--n must be >= 1 and --grid >= 3, got {args.n} and {args.grid}")
    try:
        for resolution in args.resolutions:
            stride(args.grid, resolution)
    except ValueError as e:
        parser.error(str(e))
    start = time.perf_counter()
    data = dataset(args.n, args.grid, args.resolutions, args.seed, args.precision)
    print(f"solved in {time.perf_counter() - start:.1f} s")
    for resolution, (a, u) in data.items():
        path = os.path.join(args.out, file_name(args.n, resolution, args.grid, args.seed))
        save(path, a, u)
        print(f"wrote {path}: a and u of shape {a.shape}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
