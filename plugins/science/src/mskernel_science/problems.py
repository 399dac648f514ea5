"""PDE problems with exact or independently computed references, ready for :class:`~.pinn.PINN`.

- :func:`burgers`: ``u_t + u u_x = nu u_xx`` on ``[-1, 1] x [0, 1]``, ``u(x, 0) = -sin(pi x)``,
  ``u(+-1, t) = 0``, ``nu = 0.01 / pi`` (Raissi, Perdikaris and Karniadakis 2019); reference
  :func:`burgers_reference` by the Cole–Hopf transform with Gauss–Hermite quadrature.
- :func:`poisson`: ``-laplace u = 2 pi^2 sin(pi x) sin(pi y)`` on ``[0, 1]^2`` with ``u = 0`` on
  the boundary; the solution is ``sin(pi x) sin(pi y)``.
"""

from __future__ import annotations

import numpy as np

from .geometry import Interval, Rectangle, SpaceTime
from .pinn import Dirichlet, Fields, Initial, Problem

BURGERS_NU = 0.01 / np.pi


def burgers_reference(x: np.ndarray, t: np.ndarray, nu: float = BURGERS_NU,
                      nodes: int = 200) -> np.ndarray:
    """The exact viscous Burgers solution for ``u(x, 0) = -sin(pi x)`` at points ``(x, t)``.

    Cole–Hopf: ``u = -int sin(pi(x-e)) f(x-e) k(e) de / int f(x-e) k(e) de`` with ``f(y) =
    exp(-cos(pi y) / (2 pi nu))`` and the heat kernel ``k(e) = exp(-e^2 / (4 nu t))``.
    With ``e = sqrt(4 nu t) z`` both integrals are Gauss–Hermite sums over ``nodes`` nodes,
    evaluated with the largest exponent factored out (``f`` spans ``e^(+-1/(2 pi nu))``)."""
    x, t = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(t, np.float64))
    z, w = np.polynomial.hermite.hermgauss(nodes)
    y = x[..., None] - np.sqrt(4 * nu * np.maximum(t, 0.0))[..., None] * z
    exponent = -np.cos(np.pi * y) / (2 * np.pi * nu) + np.log(w)
    weights = np.exp(exponent - exponent.max(axis=-1, keepdims=True))
    u = -np.sum(np.sin(np.pi * y) * weights, axis=-1) / np.sum(weights, axis=-1)
    return np.where(t > 0, u, -np.sin(np.pi * x))


def burgers(nu: float = BURGERS_NU) -> Problem:
    """The viscous Burgers problem; points are ``(x, t)``."""
    domain = SpaceTime(Interval(-1.0, 1.0), 0.0, 1.0)

    def pde(f: Fields):
        return f.d(0, 1) + f[0] * f.d(0, 0) - nu * f.dd(0, 0, 0)

    return Problem(
        pde, domain.interior_points,
        [Dirichlet(domain.boundary_points),
         Initial(domain.initial_points, value=lambda p: -np.sin(np.pi * p[:, 0]))],
        reference=lambda p: burgers_reference(p[:, 0], p[:, 1], nu))


def burgers_grid(nx: int = 256, nt: int = 100) -> np.ndarray:
    """The dense ``(x, t)`` evaluation grid of the Burgers benchmark, ``[nx * nt, 2]``."""
    x, t = np.meshgrid(np.linspace(-1, 1, nx), np.linspace(0, 1, nt), indexing="ij")
    return np.stack([x.ravel(), t.ravel()], axis=1)


def poisson() -> Problem:
    """The 2-D Poisson problem on the unit square; points are ``(x, y)``."""
    square = Rectangle((0.0, 0.0), (1.0, 1.0))

    def exact(p: np.ndarray) -> np.ndarray:
        return np.sin(np.pi * p[:, 0]) * np.sin(np.pi * p[:, 1])

    def pde(f: Fields):
        x = f.x
        source = 2 * np.pi ** 2 * _sin_pi(x[:, 0:1]) * _sin_pi(x[:, 1:2])
        return f.laplacian(0) + source

    return Problem(pde, square.interior_points, [Dirichlet(square.boundary_points)],
                   reference=exact)


def _sin_pi(t):
    from mskernel import ops

    return ops.sin(np.pi * t)


def square_grid(n: int = 101, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """An ``n x n`` grid of the square ``[low, high]^2``, ``[n * n, 2]``."""
    x, y = np.meshgrid(np.linspace(low, high, n), np.linspace(low, high, n), indexing="ij")
    return np.stack([x.ravel(), y.ravel()], axis=1)
