"""PDE problems with exact or independently computed references, ready for :class:`~.pinn.PINN`.

- :func:`burgers`: ``u_t + u u_x = nu u_xx`` on ``[-1, 1] x [0, 1]``, ``u(x, 0) = -sin(pi x)``,
  ``u(+-1, t) = 0``, ``nu = 0.01 / pi`` (Raissi, Perdikaris and Karniadakis 2019); reference
  :func:`burgers_reference` by the Cole–Hopf transform with Gauss–Hermite quadrature.
- :func:`poisson`: ``-laplace u = 2 pi^2 sin(pi x) sin(pi y)`` on ``[0, 1]^2`` with ``u = 0`` on
  the boundary; the solution is ``sin(pi x) sin(pi y)``.
- :func:`kovasznay`: the steady incompressible Navier–Stokes equations at ``Re = 20`` on
  ``[-0.5, 1] x [-0.5, 1.5]``, Dirichlet data for ``(u, v, p)`` from Kovasznay's exact flow
  (Kovasznay 1948), :func:`kovasznay_exact`.
- :func:`maxwell_te`: the 2-D transverse-electric Maxwell equations (``c = 1``) in the
  perfectly conducting cavity ``[0, 1]^2`` over ``[0, t1]``, started from the ``(1, 1)`` mode at
  rest in ``E``; the exact standing wave :func:`maxwell_te_exact`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from mskernel import ops

from .geometry import Interval, Rectangle, SpaceTime
from .pinn import Condition, Dirichlet, Fields, Initial, Problem

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
    return ops.sin(np.pi * t)


def box_grid(low: Sequence[float], high: Sequence[float], n: int | Sequence[int]) -> np.ndarray:
    """The dense grid of the box ``[low, high]`` with ``n`` points along each axis (an int or
    one per axis), ``[prod(n), dim]``, the last axis fastest."""
    counts = [n] * len(low) if isinstance(n, int) else list(n)
    axes = [np.linspace(a, b, k) for a, b, k in zip(low, high, counts)]
    return np.stack([c.ravel() for c in np.meshgrid(*axes, indexing="ij")], axis=1)


def square_grid(n: int = 101, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """An ``n x n`` grid of the square ``[low, high]^2``, ``[n * n, 2]``."""
    return box_grid((low, low), (high, high), n)


KOVASZNAY_RE = 20.0
KOVASZNAY_BOX = ((-0.5, -0.5), (1.0, 1.5))


def kovasznay_lambda(re: float = KOVASZNAY_RE) -> float:
    """Kovasznay's decay rate ``Re / 2 - sqrt(Re^2 / 4 + 4 pi^2)``."""
    return re / 2 - np.sqrt(re ** 2 / 4 + 4 * np.pi ** 2)


def kovasznay_exact(p: np.ndarray, re: float = KOVASZNAY_RE) -> np.ndarray:
    """``(u, v, p)`` of Kovasznay's flow at points ``(x, y)``, ``[n, 3]``:
    ``u = 1 - e^(l x) cos(2 pi y)``, ``v = l / (2 pi) e^(l x) sin(2 pi y)``,
    ``p = (1 - e^(2 l x)) / 2``."""
    lam, x, y = kovasznay_lambda(re), p[:, 0], p[:, 1]
    grow = np.exp(lam * x)
    return np.stack([1 - grow * np.cos(2 * np.pi * y),
                     lam / (2 * np.pi) * grow * np.sin(2 * np.pi * y),
                     (1 - grow ** 2) / 2], axis=1)


def kovasznay(re: float = KOVASZNAY_RE) -> Problem:
    """Steady Navier–Stokes for ``(u, v, p)`` at points ``(x, y)``: the two momentum equations
    ``(u . grad) u + grad p - laplace u / Re`` and continuity ``u_x + v_y``, with the exact flow
    as Dirichlet data for each of ``u``, ``v``, ``p`` on the whole boundary."""
    box = Rectangle(*KOVASZNAY_BOX)

    def pde(f: Fields):
        u, v = f[0], f[1]
        return [u * f.d(0, 0) + v * f.d(0, 1) + f.d(2, 0) - f.laplacian(0) / re,
                u * f.d(1, 0) + v * f.d(1, 1) + f.d(2, 1) - f.laplacian(1) / re,
                f.d(0, 0) + f.d(1, 1)]

    conditions = [Dirichlet(box.boundary_points, c, value=lambda p, c=c: kovasznay_exact(p, re)[:, c])
                  for c in range(3)]
    return Problem(pde, box.interior_points, conditions, reference=lambda p: kovasznay_exact(p, re))


def kovasznay_grid(n: int = 101) -> np.ndarray:
    """The ``n x n`` evaluation grid of the Kovasznay domain."""
    return box_grid(*KOVASZNAY_BOX, n)


def maxwell_te_exact(p: np.ndarray, mode: tuple[int, int] = (1, 1),
                     omega: float | None = None) -> np.ndarray:
    """``(Ex, Ey, Hz)`` of the cavity's ``mode`` at points ``(x, y, t)``, ``[n, 3]``:
    ``Hz = cos(kx x) cos(ky y) cos(w t)``, ``Ex = -ky / w cos(kx x) sin(ky y) sin(w t)``,
    ``Ey = kx / w sin(kx x) cos(ky y) sin(w t)`` with ``k = pi * mode``; ``omega`` defaults to
    the mode's frequency ``|k|``, the only one that solves the equations."""
    kx, ky = np.pi * mode[0], np.pi * mode[1]
    w = np.hypot(kx, ky) if omega is None else omega
    cx, sx, cy, sy = np.cos(kx * p[:, 0]), np.sin(kx * p[:, 0]), np.cos(ky * p[:, 1]), np.sin(ky * p[:, 1])
    ct, st = np.cos(w * p[:, 2]), np.sin(w * p[:, 2])
    return np.stack([-ky / w * cx * sy * st, kx / w * sx * cy * st, cx * cy * ct], axis=1)


@dataclass
class PerfectConductor(Condition):
    """``n x E = 0``: the tangential electric field ``n_x E_y - n_y E_x`` vanishes on a
    perfectly conducting wall with outward normal ``normal(x)``; ``E`` is components
    ``component`` and ``component + 1``."""

    normal: Callable[[np.ndarray], np.ndarray] = lambda x: np.zeros_like(x)

    def data(self, x: np.ndarray) -> list[np.ndarray]:
        return [np.asarray(self.normal(x), np.float64)]

    def residual(self, net, x, *data):
        e, n, c = net(x), data[0], self.component
        return n[:, 0:1] * e[:, c + 1:c + 2] - n[:, 1:2] * e[:, c:c + 1]


def maxwell_te(t1: float = 1.0, mode: tuple[int, int] = (1, 1)) -> Problem:
    """The TE equations for ``(Ex, Ey, Hz)`` at points ``(x, y, t)``: ``Ex_t = Hz_y``,
    ``Ey_t = -Hz_x``, ``Hz_t = Ex_y - Ey_x`` and Gauss's law ``Ex_x + Ey_y = 0``, with
    ``E = 0``, ``Hz`` the mode's profile at ``t = 0`` and ``n x E = 0`` on the walls."""
    cavity = SpaceTime(Rectangle((0.0, 0.0), (1.0, 1.0)), 0.0, t1)

    def pde(f: Fields):
        return [f.d(0, 2) - f.d(2, 1), f.d(1, 2) + f.d(2, 0), f.d(2, 2) - f.d(0, 1) + f.d(1, 0),
                f.d(0, 0) + f.d(1, 1)]

    initial = [Initial(cavity.initial_points, c,
                       value=lambda p, c=c: maxwell_te_exact(p, mode)[:, c]) for c in range(3)]
    return Problem(pde, cavity.interior_points,
                   [*initial, PerfectConductor(cavity.boundary_points, 0, cavity.normal)],
                   reference=lambda p: maxwell_te_exact(p, mode))


def maxwell_te_grid(t1: float = 1.0, n: int = 51, nt: int = 21) -> np.ndarray:
    """The evaluation grid of :func:`maxwell_te`: ``n x n`` points at ``nt`` times."""
    return box_grid((0.0, 0.0, 0.0), (1.0, 1.0, t1), (n, n, nt))
