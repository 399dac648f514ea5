"""Kovasznay flow and the Maxwell TE cavity: their residuals on fields whose derivatives are
known by hand (zero on the exact solutions), their exact solutions against the boundary and
initial data, and short runs that reduce the loss."""

from __future__ import annotations

import numpy as np
import pytest

import mskernel
from mskernel import Tensor, nn, ops, science

RE = 20.0


class KovasznayField(nn.Cell):
    """Kovasznay's flow with decay rate ``lam`` (exact for ``Re = 20`` only at its own rate)."""

    def __init__(self, lam: float):
        super().__init__()
        self.lam = lam

    def construct(self, p):
        grow, y = ops.exp(self.lam * p[:, 0:1]), 2 * np.pi * p[:, 1:2]
        return ops.concat([1 - grow * ops.cos(y), self.lam / (2 * np.pi) * grow * ops.sin(y),
                           0.5 - 0.5 * grow * grow], axis=1)


def _kovasznay_hand(lam, p):
    """The three residuals of the Re = 20 equations on KovasznayField(lam), by hand."""
    e, c, s, k = np.exp(lam * p[:, 0]), np.cos(2 * np.pi * p[:, 1]), np.sin(2 * np.pi * p[:, 1]), 2 * np.pi
    u, ux, uy, lap_u = 1 - e * c, -lam * e * c, k * e * s, (k ** 2 - lam ** 2) * e * c
    v, vx, vy, lap_v = lam / k * e * s, lam ** 2 / k * e * s, lam * e * c, (lam ** 3 / k - lam * k) * e * s
    px = -lam * e ** 2
    return np.stack([u * ux + v * uy + px - lap_u / RE, u * vx + v * vy - lap_v / RE, ux + vy], axis=1)


class CavityField(nn.Cell):
    """The (1, 1) TE standing wave at angular frequency ``omega``."""

    def __init__(self, omega: float):
        super().__init__()
        self.omega = omega

    def construct(self, p):
        k, w = np.pi, self.omega
        cx, sx, cy, sy = (f(k * p[:, i:i + 1]) for i in (0, 1) for f in (ops.cos, ops.sin))
        ct, st = ops.cos(w * p[:, 2:3]), ops.sin(w * p[:, 2:3])
        return ops.concat([-k / w * cx * sy * st, k / w * sx * cy * st, cx * cy * ct], axis=1)


def _cavity_hand(omega, p):
    """The four residuals of the TE equations on CavityField(omega): only Faraday's law for Hz
    is violated, by ``(2 pi^2 / w - w) cos(pi x) cos(pi y) sin(w t)``."""
    x, y, t = (np.pi * p[:, 0], np.pi * p[:, 1], p[:, 2])
    zero = np.zeros(len(p))
    hz_t = (2 * np.pi ** 2 / omega - omega) * np.cos(x) * np.cos(y) * np.sin(omega * t)
    return np.stack([zero, zero, hz_t, zero], axis=1)


def _residuals(problem, net, points):
    out = problem.pde(science.Fields(net, Tensor(points)))
    return np.concatenate([r.numpy() for r in out], axis=1)


def _lam(re):
    return re / 2 - np.sqrt(re ** 2 / 4 + 4 * np.pi ** 2)


@pytest.mark.parametrize("re_of_field", [RE, 40.0])
def test_kovasznay_residuals_match_hand_derivatives(re_of_field):
    points = science.Rectangle((-0.5, -0.5), (1.0, 1.5)).interior_points(64, "lhs", 0)
    got = _residuals(science.kovasznay(RE), KovasznayField(_lam(re_of_field)), points)
    np.testing.assert_allclose(got, _kovasznay_hand(_lam(re_of_field), points), rtol=1e-9,
                               atol=1e-10)
    assert (np.abs(got).max() < 1e-10) == (re_of_field == RE)


@pytest.mark.parametrize("scale", [1.0, 1.3])
def test_maxwell_residuals_match_hand_derivatives(scale):
    omega = scale * np.sqrt(2) * np.pi
    points = np.random.default_rng(0).uniform(0, 1, (64, 3))
    got = _residuals(science.maxwell_te(), CavityField(omega), points)
    np.testing.assert_allclose(got, _cavity_hand(omega, points), rtol=1e-9, atol=1e-10)
    assert (np.abs(got).max() < 1e-10) == (scale == 1.0)


@pytest.mark.parametrize("problem, net", [(science.kovasznay(), KovasznayField(_lam(RE))),
                                          (science.maxwell_te(), CavityField(np.sqrt(2) * np.pi))])
def test_exact_solutions_meet_their_conditions(problem, net):
    rng = np.random.default_rng(1)
    for cond in problem.conditions:
        x = cond.on(50, "uniform", rng)
        r = cond.residual(net, Tensor(x), *map(Tensor, cond.data(x)))
        assert np.abs(r.numpy()).max() < 1e-12
    x = problem.domain(50, "uniform", rng)
    np.testing.assert_allclose(net(Tensor(x)).numpy(), problem.reference(x), rtol=1e-12,
                               atol=1e-12)


def test_perfect_conductor_takes_the_tangential_field():
    normal = np.array([[1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
    cond = science.PerfectConductor(None, 0, lambda x: normal)

    def field(x):
        return Tensor(np.array([[2.0, 3.0, 9.0], [5.0, 7.0, 9.0]]))

    r = cond.residual(field, Tensor(np.zeros((2, 3))), *map(Tensor, cond.data(normal)))
    np.testing.assert_allclose(r.numpy()[:, 0], [3.0, 5.0])  # n_x Ey - n_y Ex


@pytest.mark.parametrize("problem, sizes, grid, loss_drop, error_drop", [
    (science.kovasznay(), [2, 16, 16, 3], science.kovasznay_grid(41), 0.3, 0.7),
    (science.maxwell_te(), [3, 16, 16, 3], science.maxwell_te_grid(n=11, nt=5), 0.05, 0.5)])
def test_short_runs_reduce_loss_and_error(problem, sizes, grid, loss_drop, error_drop):
    mskernel.random.set_seed(0)
    pinn = science.PINN(science.mlp(sizes), problem, 256, 64, method="lhs")
    before = pinn.error(grid)
    pinn.train_adam(300, 5e-3, log_every=100)
    pinn.train_lbfgs(200, log_every=100)
    assert pinn.history.rows[-1][1] < loss_drop * pinn.history.rows[0][1]
    assert pinn.error(grid) < error_drop * before
