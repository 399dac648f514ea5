"""Domains of PDE problems: :class:`Interval`, :class:`Rectangle`, :class:`Disk`,
:class:`Polygon`, and a spatial domain times a time interval (:class:`SpaceTime`).

Every geometry maps unit-cube samples (:func:`~.sampling.unit_samples`) onto its interior and
its boundary, and tells whether points lie inside and which way its boundary faces.  Points
are float64 ``[n, dim]`` arrays (space coordinates first, then time).
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from .sampling import unit_samples

Seed = Optional[int | np.random.Generator]


class Geometry:
    """A domain of ``dim`` coordinates.  Subclasses implement :meth:`inside`,
    :meth:`_map_interior` and :meth:`_map_boundary` (unit samples onto the domain) and
    :meth:`normal`; ``bbox`` is ``(low, high)``."""

    dim: int
    bbox: tuple[np.ndarray, np.ndarray]

    def inside(self, x: np.ndarray) -> np.ndarray:
        """Whether each point lies in the closed domain (bool ``[n]``)."""
        raise NotImplementedError

    def normal(self, x: np.ndarray) -> np.ndarray:
        """The outward unit normal at boundary points ``x`` (``[n, dim]``)."""
        raise NotImplementedError

    def _map_interior(self, u: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _map_boundary(self, u: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    #: unit-sample coordinates a boundary point needs
    boundary_params = 1

    def interior_points(self, n: int, method: str = "uniform", seed: Seed = None) -> np.ndarray:
        """``n`` points of the interior drawn by ``method`` (see :mod:`.sampling`)."""
        return self._map_interior(unit_samples(n, self.dim, method, seed))

    def boundary_points(self, n: int, method: str = "uniform", seed: Seed = None) -> np.ndarray:
        """``n`` points of the boundary, uniform in arc length."""
        return self._map_boundary(unit_samples(n, self.boundary_params, method, seed))


class Interval(Geometry):
    """``[low, high]``; its boundary is the two end points, drawn alternately."""

    dim = 1

    def __init__(self, low: float, high: float) -> None:
        if not low < high:
            raise ValueError(f"Interval needs low < high, got {low}, {high}")
        self.low, self.high = float(low), float(high)
        self.bbox = (np.array([low], float), np.array([high], float))

    def inside(self, x: np.ndarray) -> np.ndarray:
        return (x[:, 0] >= self.low) & (x[:, 0] <= self.high)

    def normal(self, x: np.ndarray) -> np.ndarray:
        return np.where(np.abs(x - self.low) < np.abs(x - self.high), -1.0, 1.0)

    def _map_interior(self, u: np.ndarray) -> np.ndarray:
        return self.low + (self.high - self.low) * u

    def _map_boundary(self, u: np.ndarray) -> np.ndarray:
        return np.where(np.arange(len(u))[:, None] % 2 == 0, self.low, self.high)


class Polygon(Geometry):
    """A simple polygon given by its vertices (either orientation; an L-shape, say).  Interior
    points are drawn in the bounding box and kept when inside (more are drawn until ``n``)."""

    dim = 2

    def __init__(self, vertices: Sequence[Sequence[float]]) -> None:
        v = np.asarray(vertices, float)
        if v.ndim != 2 or v.shape[1] != 2 or len(v) < 3:
            raise ValueError(f"Polygon needs at least 3 vertices [x, y], got shape {v.shape}")
        area2 = np.sum(v[:, 0] * np.roll(v[:, 1], -1) - np.roll(v[:, 0], -1) * v[:, 1])
        self.vertices = v if area2 > 0 else v[::-1]  # counter-clockwise
        self.edges = np.roll(self.vertices, -1, axis=0) - self.vertices
        self.lengths = np.linalg.norm(self.edges, axis=1)
        self.bbox = (v.min(axis=0), v.max(axis=0))

    def inside(self, x: np.ndarray) -> np.ndarray:
        """Even-odd ray casting; points on an edge count as inside."""
        px, py = x[:, :1], x[:, 1:2]
        a, b = self.vertices, np.roll(self.vertices, -1, axis=0)
        crosses = (a[:, 1] > py) != (b[:, 1] > py)
        with np.errstate(divide="ignore", invalid="ignore"):
            at = a[:, 0] + (py - a[:, 1]) * (b[:, 0] - a[:, 0]) / (b[:, 1] - a[:, 1])
        odd = np.sum(crosses & (px < at), axis=1) % 2 == 1
        return odd | (self._edge_distance(x).min(axis=1) < 1e-12)

    def _edge_distance(self, x: np.ndarray) -> np.ndarray:
        rel = x[:, None, :] - self.vertices[None]
        s = np.clip(np.sum(rel * self.edges, -1) / self.lengths ** 2, 0.0, 1.0)
        return np.linalg.norm(rel - s[..., None] * self.edges, axis=-1)

    def normal(self, x: np.ndarray) -> np.ndarray:
        edge = self._edge_distance(x).argmin(axis=1)
        e = self.edges[edge] / self.lengths[edge, None]
        return np.stack([e[:, 1], -e[:, 0]], axis=1)  # right of a counter-clockwise edge

    def interior_points(self, n: int, method: str = "uniform", seed: Seed = None) -> np.ndarray:
        rng = np.random.default_rng(seed)
        low, high = self.bbox
        kept: list[np.ndarray] = []
        count = 0
        while count < n:
            x = low + (high - low) * unit_samples(2 * (n - count) + 16, 2, method, rng)
            x = x[self.inside(x)]
            kept.append(x)
            count += len(x)
        return np.concatenate(kept)[:n]

    def _map_boundary(self, u: np.ndarray) -> np.ndarray:
        arc = u[:, 0] * self.lengths.sum()
        ends = np.cumsum(self.lengths)
        edge = np.minimum(np.searchsorted(ends, arc, side="right"), len(ends) - 1)
        s = (arc - (ends[edge] - self.lengths[edge])) / self.lengths[edge]
        return self.vertices[edge] + s[:, None] * self.edges[edge]


class Rectangle(Polygon):
    """The box ``[low, high]`` in 2-D, its interior mapped directly (no rejection)."""

    def __init__(self, low: Sequence[float], high: Sequence[float]) -> None:
        (x0, y0), (x1, y1) = low, high
        super().__init__([(x0, y0), (x1, y0), (x1, y1), (x0, y1)])

    interior_points = Geometry.interior_points

    def _map_interior(self, u: np.ndarray) -> np.ndarray:
        low, high = self.bbox
        return low + (high - low) * u


class Disk(Geometry):
    """The closed disk of ``radius`` about ``center``."""

    dim = 2

    def __init__(self, center: Sequence[float], radius: float) -> None:
        if radius <= 0:
            raise ValueError(f"Disk needs radius > 0, got {radius}")
        self.center, self.radius = np.asarray(center, float), float(radius)
        self.bbox = (self.center - radius, self.center + radius)

    def inside(self, x: np.ndarray) -> np.ndarray:
        return np.linalg.norm(x - self.center, axis=1) <= self.radius * (1 + 1e-12)

    def normal(self, x: np.ndarray) -> np.ndarray:
        d = x - self.center
        return d / np.linalg.norm(d, axis=1, keepdims=True)

    def _map_interior(self, u: np.ndarray) -> np.ndarray:  # area-uniform: r = R sqrt(u)
        r, theta = self.radius * np.sqrt(u[:, :1]), 2 * np.pi * u[:, 1:2]
        return self.center + r * np.concatenate([np.cos(theta), np.sin(theta)], axis=1)

    def _map_boundary(self, u: np.ndarray) -> np.ndarray:
        theta = 2 * np.pi * u[:, :1]
        return self.center + self.radius * np.concatenate([np.cos(theta), np.sin(theta)], axis=1)


class SpaceTime(Geometry):
    """A spatial geometry times the time interval ``[t0, t1]`` (time is the last coordinate).
    Its boundary is the spatial boundary at all times; :meth:`initial_points` are the interior
    at ``t0``."""

    def __init__(self, space: Geometry, t0: float, t1: float) -> None:
        if not t0 < t1:
            raise ValueError(f"SpaceTime needs t0 < t1, got {t0}, {t1}")
        self.space, self.t0, self.t1 = space, float(t0), float(t1)
        self.dim = space.dim + 1
        self.boundary_params = space.boundary_params + 1
        self.bbox = (np.append(space.bbox[0], t0), np.append(space.bbox[1], t1))

    def inside(self, x: np.ndarray) -> np.ndarray:
        t = x[:, -1]
        return self.space.inside(x[:, :-1]) & (t >= self.t0) & (t <= self.t1)

    def normal(self, x: np.ndarray) -> np.ndarray:
        return np.concatenate([self.space.normal(x[:, :-1]), np.zeros((len(x), 1))], axis=1)

    def _times(self, u: np.ndarray) -> np.ndarray:
        return self.t0 + (self.t1 - self.t0) * u

    def interior_points(self, n: int, method: str = "uniform", seed: Seed = None) -> np.ndarray:
        u = unit_samples(n, self.dim, method, seed)
        if isinstance(self.space, Polygon) and not isinstance(self.space, Rectangle):
            x = self.space.interior_points(n, method, seed)
        else:
            x = self.space._map_interior(u[:, :-1])
        return np.concatenate([x, self._times(u[:, -1:])], axis=1)

    def boundary_points(self, n: int, method: str = "uniform", seed: Seed = None) -> np.ndarray:
        u = unit_samples(n, self.boundary_params, method, seed)
        return np.concatenate([self.space._map_boundary(u[:, :-1]), self._times(u[:, -1:])],
                              axis=1)

    def initial_points(self, n: int, method: str = "uniform", seed: Seed = None) -> np.ndarray:
        x = self.space.interior_points(n, method, seed)
        return np.concatenate([x, np.full((n, 1), self.t0)], axis=1)
