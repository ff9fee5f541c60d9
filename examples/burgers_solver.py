"""A pseudo-spectral viscous Burgers solver: u_t + u u_x = nu u_xx on [0, 2*pi), periodic.

Each time step goes to Fourier space with rfft, takes the nonlinear term (u^2/2)_x explicitly
(dealiased with the 2/3 rule) and the viscous term implicitly, and comes back with irfft; the
steps run in one hloforge.lax.fori_loop, so the whole solve is one stablehlo.while. The result
is checked against the same scheme in float64 numpy.
Run: python examples/burgers_solver.py
"""
import os
import sys

import numpy as np

import hloforge as hf
from hloforge import numpy as hnp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import models  # noqa: E402  (the solver is shared with benchmarks/run.py)

BATCH, GRID, STEPS, NU, DT = 8, 256, 500, 0.02, 1e-3


def reference(u0, steps, nu, dt):
    ik, factor = models.burgers_operators(u0.shape[-1], nu, dt)
    u = u0.astype(np.float64)
    for _ in range(steps):
        u_hat = (np.fft.rfft(u) - 0.5 * dt * ik * np.fft.rfft(u * u)) * factor
        u = np.fft.irfft(u_hat, n=u.shape[-1])
    return u


def main() -> int:
    x = np.linspace(0, 2 * np.pi, GRID, endpoint=False)
    rng = np.random.default_rng(0)
    phase = rng.uniform(0, 2 * np.pi, (BATCH, 1))
    u0 = (np.sin(x + phase) + 0.5 * np.sin(2 * x - phase)).astype(np.float32)

    solve = hf.jit(lambda u: models.burgers(hnp, u, STEPS, NU, DT))
    got = np.asarray(solve(u0))
    want = reference(u0, STEPS, NU, DT)
    counts = solve.lower(u0).op_counts()
    error = np.max(np.abs(got - want)) / np.max(np.abs(want))
    energy = (np.mean(u0.astype(np.float64) ** 2), np.mean(want ** 2))
    print(f"Burgers: {BATCH} solutions, grid {GRID}, {STEPS} steps of {DT} (t = {STEPS * DT}), nu = {NU}")
    print(f"  one stablehlo.while: {counts.get('stablehlo.while', 0)}, fft ops inside: {counts.get('stablehlo.fft', 0)}")
    print(f"  energy {energy[0]:.4f} -> {energy[1]:.4f}; max relative error vs float64 numpy: {error:.2e}")
    ok = error < 1e-4 and counts.get("stablehlo.while") == 1
    print("check: " + ("ok" if ok else "MISMATCH"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
