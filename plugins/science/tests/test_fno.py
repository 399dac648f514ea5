"""The pseudo-spectral Burgers solver against the Cole–Hopf solution, the random initial
conditions, and the Fourier neural operator: shapes, resolution independence, training."""

from __future__ import annotations

import numpy as np

import mskernel
from mskernel import Tensor
from mskernel_science import fno, problems


def test_solver_matches_the_cole_hopf_solution():
    nu, n = 0.05 / np.pi, 256
    x = np.linspace(-1, 1, n, endpoint=False)
    u = fno.solve_burgers(-np.sin(np.pi * x), nu, 0.5, length=2.0)
    np.testing.assert_allclose(u[0], problems.burgers_reference(x, 0.5, nu), atol=1e-5)


def test_random_initial_conditions_are_smooth_periodic_fields():
    u0 = fno.random_initial_conditions(200, 128, seed=1)
    assert u0.shape == (200, 128)
    assert 0.5 < u0.std() < 3
    spectrum = np.mean(np.abs(np.fft.rfft(u0)) ** 2, axis=0)
    assert spectrum[1] > 100 * spectrum[20]  # decays as k^-4


def test_fno_is_resolution_independent_and_learns():
    mskernel.random.set_seed(0)
    net = fno.FNO1d(modes=6, width=12, layers=2)
    u0, u1 = fno.burgers_dataset(40, 64, seed=2)
    coarse = fno.predict(net, u0[:, ::2])
    fine = fno.predict(net, u0)
    assert coarse.shape == (40, 32) and fine.shape == (40, 64)
    history = fno.train(net, u0, u1, epochs=8, batch_size=10, learning_rate=1e-2)
    assert history[-1] < 0.75 * history[0]
    assert fno.relative_l2_per_sample(fno.predict(net, u0), u1) < history[0]
