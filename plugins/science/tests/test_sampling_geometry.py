"""Samplers fill the unit cube evenly; geometries put their points inside, on the boundary,
with outward unit normals."""

from __future__ import annotations

import numpy as np
import pytest

from mskernel import science


@pytest.mark.parametrize("method", science.METHODS)
def test_unit_samples_cover_the_cube(method):
    x = science.unit_samples(4096, 2, method, seed=0)
    assert x.shape == (4096, 2) and x.min() >= 0 and x.max() < 1
    counts, _, _ = np.histogram2d(x[:, 0], x[:, 1], bins=8, range=[[0, 1], [0, 1]])
    assert counts.min() > 0.6 * 64 and counts.max() < 1.4 * 64  # 64 expected per cell


def test_quasi_random_samples_are_more_even_than_pseudo_random():
    def discrepancy(method):
        from scipy.stats import qmc
        return qmc.discrepancy(science.unit_samples(512, 2, method, seed=1))
    assert discrepancy("sobol") < discrepancy("uniform") / 5
    assert discrepancy("halton") < discrepancy("uniform") / 5


def test_resampling_draws_new_points():
    rng = np.random.default_rng(0)
    a, b = (science.unit_samples(64, 2, "sobol", rng) for _ in range(2))
    assert not np.allclose(a, b)


def test_unknown_method_is_named():
    with pytest.raises(ValueError, match="lhs"):
        science.unit_samples(4, 2, "grid")


L_SHAPE = [(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)]
GEOMETRIES = {
    "interval": science.Interval(-1, 3),
    "rectangle": science.Rectangle((0, -1), (2, 1)),
    "disk": science.Disk((1, 1), 0.5),
    "l_shape": science.Polygon(L_SHAPE),
    "disk_x_time": science.SpaceTime(science.Disk((0, 0), 1), 0, 2),
}


@pytest.mark.parametrize("name", GEOMETRIES)
@pytest.mark.parametrize("method", ["uniform", "lhs", "sobol"])
def test_points_lie_in_the_domain_and_fill_it(name, method):
    geom = GEOMETRIES[name]
    x = geom.interior_points(2000, method, seed=3)
    assert x.shape == (2000, geom.dim) and geom.inside(x).all()
    low, high = geom.bbox
    # the points reach near every side of the bounding box
    assert np.all(x.min(axis=0) < low + 0.1 * (high - low))
    assert np.all(x.max(axis=0) > high - 0.1 * (high - low))
    b = geom.boundary_points(400, method, seed=4)
    assert geom.inside(b).all()
    n = geom.normal(b)
    spatial = n[:, :geom.dim - 1] if isinstance(geom, science.SpaceTime) else n
    np.testing.assert_allclose(np.linalg.norm(spatial, axis=1), 1.0)
    # outward: a small step along the normal leaves the domain
    assert not geom.inside(b + 1e-3 * n).any()


def test_l_shape_excludes_its_notch_and_samples_area_evenly():
    geom = GEOMETRIES["l_shape"]
    x = geom.interior_points(6000, "uniform", seed=0)
    assert not np.any((x[:, 0] > 1.001) & (x[:, 1] > 1.001))
    # three unit squares of equal area: about a third of the points in each
    thirds = [np.mean((x[:, 0] < 1) & (x[:, 1] < 1)), np.mean(x[:, 0] >= 1), np.mean(x[:, 1] >= 1)]
    np.testing.assert_allclose(thirds, 1 / 3, atol=0.03)


def test_boundary_is_uniform_in_arc_length():
    b = GEOMETRIES["rectangle"].boundary_points(8000, "sobol", seed=0)
    on_long_sides = np.mean(np.isclose(np.abs(b[:, 1]), 1))
    assert abs(on_long_sides - 0.5) < 0.02  # sides 2, 2, 2, 2 of perimeter 8


def test_initial_points_sit_at_the_start_time():
    x = GEOMETRIES["disk_x_time"].initial_points(100, "lhs", seed=0)
    assert np.all(x[:, -1] == 0) and GEOMETRIES["disk"].inside(x[:, :2] / 2 + 1).all()
