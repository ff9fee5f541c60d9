"""1D viscous Burgers data as in Li et al. 2020 (Fourier Neural Operator), made by hloforge.

    u_t + (u^2 / 2)_x = nu u_xx  on the periodic unit interval, nu = 0.1, t in [0, 1],

with initial conditions drawn from the Gaussian random field N(0, 625 (-Laplacian + 25 I)^-2).
The solver is pseudo-spectral: rfft/irfft, the diffusion integrated exactly (an integrating
factor), the nonlinear term by classical RK4 with 2/3 dealiasing, stepped by hloforge.lax.fori_loop
over the whole batch inside one compiled program. ``numpy_solve`` is the same scheme in numpy, the
reference the hloforge solver is checked against.

Run: python examples/burgers_data.py   (solves a few samples with both and compares)
"""
from __future__ import annotations

import sys

import numpy as np

import hloforge as hf
from hloforge import numpy as hnp

NU, T_END = 0.1, 1.0


def initial_conditions(n_samples: int, grid: int, seed: int = 0) -> np.ndarray:
    """Samples of N(0, 625 (-Laplacian + 25 I)^-2) on ``grid`` points, float32 (n_samples, grid)."""
    rng = np.random.default_rng(seed)
    k = np.fft.rfftfreq(grid, d=1.0 / grid)                          # 0, 1, ..., grid/2
    std = 25.0 * (4 * np.pi ** 2 * k ** 2 + 25.0) ** -1.0            # sqrt of the covariance's eigenvalues
    std[0] = 0.0                                                     # mean-zero field
    coeffs = (rng.standard_normal((n_samples, k.size)) + 1j * rng.standard_normal((n_samples, k.size)))
    coeffs *= std * grid / np.sqrt(2)
    coeffs[:, -1] = coeffs[:, -1].real if grid % 2 == 0 else coeffs[:, -1]
    return np.fft.irfft(coeffs, n=grid).astype(np.float32)


def _operators(grid: int, dt: float):
    k = np.fft.rfftfreq(grid, d=1.0 / grid)
    ik = 2j * np.pi * k
    dealias = (k < grid / 3).astype(np.float64)                        # the 2/3 rule
    half = np.exp(-NU * (2 * np.pi * k) ** 2 * dt / 2)                # e^{L dt/2}, L = -nu k^2
    return ik, dealias, half


def numpy_solve(u0: np.ndarray, steps: int) -> np.ndarray:
    """The reference: the same integrating-factor RK4 in numpy (float64), u at t = 1."""
    grid = u0.shape[-1]
    dt = T_END / steps
    ik, dealias, half = _operators(grid, dt)

    def nonlinear(v):
        u = np.fft.irfft(v, n=grid)
        return -0.5 * ik * dealias * np.fft.rfft(u * u)

    v = np.fft.rfft(u0.astype(np.float64))
    for _ in range(steps):
        v = _ifrk4_step(v, nonlinear, half, dt)
    return np.fft.irfft(v, n=grid)


def _ifrk4_step(v, nonlinear, half, dt):
    """One integrating-factor RK4 step; works on numpy arrays and hloforge Tensors alike."""
    k1 = nonlinear(v)
    k2 = nonlinear(half * (v + 0.5 * dt * k1))
    k3 = nonlinear(half * v + 0.5 * dt * k2)
    k4 = nonlinear(half * half * v + dt * half * k3)
    return half * half * (v + dt / 6 * k1) + dt / 6 * half * (2 * k2 + 2 * k3) + dt / 6 * k4


def solve(u0: np.ndarray, steps: int) -> np.ndarray:
    """u at t = 1 for each row of ``u0`` (batch, grid), float32, solved by one hloforge program."""
    grid = u0.shape[-1]
    dt = T_END / steps
    ik, dealias, half = (np.asarray(a, np.complex64) for a in _operators(grid, dt))
    ik_dealias = (-0.5 * ik * dealias).astype(np.complex64)
    half = half.astype(np.complex64)

    def nonlinear(v):
        u = hnp.fft.irfft(v, n=grid)
        return ik_dealias * hnp.fft.rfft(u * u)

    @hf.jit
    def run(u):
        v = hnp.fft.rfft(u)
        v = hf.lax.fori_loop(0, steps, lambda i, v: _ifrk4_step(v, nonlinear, half, np.float32(dt)), v)
        return hnp.fft.irfft(v, n=grid)

    return np.asarray(run(u0.astype(np.float32)))


def dataset(n_samples: int, grid: int = 1024, solve_grid: int | None = None, steps: int = 1000,
            seed: int = 0):
    """(a, u): initial conditions and solutions at t = 1 on ``grid`` points, float32 (n, grid).

    Solved on ``solve_grid`` points (default ``grid``) and subsampled, as Li et al. subsample
    their 8192-point solutions."""
    solve_grid = solve_grid or grid
    if solve_grid % grid:
        raise ValueError(f"dataset: solve_grid {solve_grid} must be a multiple of grid {grid}")
    a = initial_conditions(n_samples, solve_grid, seed)
    u = solve(a, steps)
    stride = solve_grid // grid
    return a[:, ::stride], u[:, ::stride]


def main() -> int:
    a = initial_conditions(4, 256, seed=1)
    ours, reference = solve(a, 500), numpy_solve(a, 500)
    error = np.linalg.norm(ours - reference) / np.linalg.norm(reference)
    print(f"hloforge vs numpy Burgers solver, 4 samples on 256 points, 500 steps: relative L2 {error:.2e}")
    if not error < 1e-4:
        print("FAILED")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
