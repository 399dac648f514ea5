"""PDE residuals against hand-derived derivatives, boundary conditions, the Burgers reference,
and short training runs that must reduce the error."""

from __future__ import annotations

import numpy as np
import pytest

import mskernel
from mskernel import Tensor, nn, ops, science


class OneLayer(nn.Cell):
    """``u(x) = v . tanh(W x + b)`` with fixed weights: derivatives by hand."""

    def __init__(self, w, b, v):
        super().__init__()
        self.w, self.b, self.v = (mskernel.Parameter(np.asarray(a, np.float32)) for a in (w, b, v))

    def construct(self, x):
        return ops.matmul(ops.tanh(ops.matmul(x, self.w) + self.b), self.v)


def _hand(w, b, v, x):
    """value, gradient and Hessian of v . tanh(x W + b) at each point (float64)."""
    h = np.tanh(x @ w + b)                      # [N, H]
    s = 1 - h ** 2                              # tanh'
    grad = (s * v[:, 0]) @ w.T                  # [N, d]
    curv = -2 * h * s * v[:, 0]                 # tanh'' * v
    hess = np.einsum("nk,ik,jk->nij", curv, w, w)
    return h @ v, grad, hess


@pytest.fixture
def layer():
    rng = np.random.default_rng(0)
    w, b, v = rng.normal(size=(3, 5)), rng.normal(size=5), rng.normal(size=(5, 1))
    return (w, b, v), OneLayer(w, b, v), rng.uniform(-1, 1, (7, 3))


def test_fields_match_hand_derived_derivatives(layer):
    (w, b, v), net, x = layer
    value, grad, hess = _hand(w, b, v, x)
    f = science.Fields(net, Tensor(x.astype(np.float32)))
    np.testing.assert_allclose(f[0].numpy(), value, rtol=1e-5, atol=1e-5)
    for i in range(3):
        np.testing.assert_allclose(f.d(0, i).numpy()[:, 0], grad[:, i], rtol=1e-4, atol=1e-5)
        for j in range(3):
            np.testing.assert_allclose(f.dd(0, i, j).numpy()[:, 0], hess[:, i, j],
                                       rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(f.laplacian(0).numpy()[:, 0], np.trace(hess, axis1=1, axis2=2),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(f.laplacian(0, dims=[0, 2]).numpy()[:, 0],
                               hess[:, 0, 0] + hess[:, 2, 2], rtol=1e-4, atol=1e-5)


def test_residuals_compile_under_jit_with_the_same_values(layer):
    (w, b, v), net, x = layer
    _, _, hess = _hand(w, b, v, x)

    @mskernel.jit
    def mixed(points):
        f = science.Fields(net, points)
        return f.dd(0, 0, 1) + f.laplacian(0)

    out = mixed(Tensor(x.astype(np.float32))).numpy()[:, 0]
    np.testing.assert_allclose(out, hess[:, 0, 1] + np.trace(hess, axis1=1, axis2=2),
                               rtol=1e-4, atol=1e-5)


def test_boundary_conditions_residuals(layer):
    (w, b, v), net, x = layer
    value, grad, _ = _hand(w, b, v, x)
    t = Tensor(x.astype(np.float32))
    normal = np.tile([0.0, 0.6, 0.8], (len(x), 1))
    dirichlet = science.Dirichlet(None, value=lambda p: p[:, 0])
    r = dirichlet.residual(net, t, *map(Tensor, map(np.float32, dirichlet.data(x))))
    np.testing.assert_allclose(r.numpy()[:, 0], value[:, 0] - x[:, 0], rtol=1e-4, atol=1e-5)
    robin = science.Robin(None, 0, lambda p: normal, lambda p: p[:, 1], a=2.0, b=0.5)
    r = robin.residual(net, t, *(Tensor(np.float32(a)) for a in robin.data(x)))
    expected = 2 * value[:, 0] + 0.5 * grad @ normal[0] - x[:, 1]
    np.testing.assert_allclose(r.numpy()[:, 0], expected, rtol=1e-4, atol=1e-5)
    periodic = science.Periodic(None, 0, dim=1, low=-1.0, high=1.0, derivative=True)
    r = periodic.residual(net, t, *(Tensor(np.float32(a)) for a in periodic.data(x)))
    lo, hi = x.copy(), x.copy()
    lo[:, 1], hi[:, 1] = -1, 1
    (vl, gl, _), (vh, gh, _) = _hand(w, b, v, lo), _hand(w, b, v, hi)
    np.testing.assert_allclose(r.numpy(), np.c_[vl - vh, gl[:, 1] - gh[:, 1]], rtol=1e-4,
                               atol=1e-5)


def test_burgers_reference_solves_the_equation():
    x = np.linspace(-1, 1, 9)
    np.testing.assert_allclose(science.burgers_reference(x, 0 * x), -np.sin(np.pi * x))
    np.testing.assert_allclose(science.burgers_reference(np.array([-1.0, 1.0]), 0.5), 0,
                               atol=1e-12)
    # the PDE by central differences, away from the shock at x = 0
    xs, ts, h = np.array([-0.6, -0.3, 0.4, 0.7]), np.array([0.2, 0.5, 0.8, 0.3]), 1e-4
    u = science.burgers_reference
    ut = (u(xs, ts + h) - u(xs, ts - h)) / (2 * h)
    ux = (u(xs + h, ts) - u(xs - h, ts)) / (2 * h)
    uxx = (u(xs + h, ts) - 2 * u(xs, ts) + u(xs - h, ts)) / h ** 2
    np.testing.assert_allclose(ut + u(xs, ts) * ux, 0.01 / np.pi * uxx, atol=1e-4)
    # the quadrature has converged near the shock
    near = np.array([0.005, 0.02, -0.01])
    np.testing.assert_allclose(u(near, 1.0, nodes=150), u(near, 1.0, nodes=250), atol=1e-8)


def test_short_poisson_run_reduces_the_error():
    mskernel.random.set_seed(0)
    pinn = science.PINN(science.mlp([2, 16, 16, 1]), science.poisson(), 256, 64, method="lhs")
    grid = science.square_grid(21)
    before = pinn.error(grid)
    pinn.train_adam(150, 5e-3, resample_every=50, log_every=50)
    pinn.train_lbfgs(60, log_every=30)
    assert pinn.error(grid) < 0.3 * before
    assert pinn.history.rows[-1][1] < 0.1 * pinn.history.rows[0][1]


def test_adaptive_weights_move_toward_the_gradient_ratio():
    mskernel.random.set_seed(1)
    pinn = science.PINN(science.mlp([2, 8, 1]), science.burgers(), 128, 32, weights="adaptive",
                        adapt_every=10)
    pinn.train_adam(21, 1e-3, log_every=10)
    assert pinn.weights[0] == 1 and not np.allclose(pinn.weights[1:], 1)
    assert pinn.num_terms == 3 and len(pinn.history.rows) == 3  # steps 0, 10, 20


def test_weights_must_match_the_terms():
    with pytest.raises(ValueError, match="3 loss terms"):
        science.PINN(science.mlp([2, 4, 1]), science.burgers(), 16, 8, weights=[1.0, 2.0])
