"""Molecular dynamics: neighbour lists against brute force, forces against finite differences
and hand formulas, energy conservation (NVE) and thermostats (NVT)."""

from __future__ import annotations

import numpy as np
import pytest

from mskernel import Tensor
from mskernel_science import md


@pytest.fixture(scope="module")
def fluid():
    x, box = md.lattice(108, 0.8)
    x = x + np.random.default_rng(0).normal(scale=0.05, size=x.shape)
    return x % box, box


def test_cell_list_finds_exactly_the_close_pairs():
    rng = np.random.default_rng(1)
    box = 9.0
    x = rng.uniform(0, box, (300, 3))
    pairs = md.cell_list_pairs(x, box, 2.8)  # 3 cells a side
    i, j = np.triu_indices(len(x), 1)
    d = md.minimum_image(x[j] - x[i], box)
    close = np.sum(d * d, axis=1) < 2.8 ** 2
    assert set(map(tuple, pairs)) == set(zip(i[close], j[close]))


def test_lennard_jones_forces_are_minus_the_energy_gradient(fluid):
    x, box = fluid
    sim = md.Simulation(x, np.zeros_like(x), box, md.lennard_jones(box))
    f = np.asarray(sim.forces(Tensor(x)).numpy())
    h, e = 1e-6, np.zeros_like(x)
    for n, k in [(0, 0), (17, 2), (80, 1)]:
        e[:] = 0
        e[n, k] = h
        up = float(sim.potential_energy(Tensor(x + e), *sim.pairs).numpy())
        down = float(sim.potential_energy(Tensor(x - e), *sim.pairs).numpy())
        assert f[n, k] == pytest.approx(-(up - down) / (2 * h), rel=1e-5, abs=1e-6)
    np.testing.assert_allclose(f.sum(axis=0), 0, atol=1e-9)  # Newton's third law


def test_pair_energy_matches_a_direct_sum(fluid):
    x, box = fluid
    sim = md.Simulation(x, np.zeros_like(x), box, md.lennard_jones(box, cutoff=2.5))
    i, j = np.triu_indices(len(x), 1)
    d = md.minimum_image(x[j] - x[i], box)
    r = np.sqrt(np.sum(d * d, axis=1))
    r = r[r < 2.5]
    direct = np.sum(4 * (r ** -12 - r ** -6) - 4 * (2.5 ** -12 - 2.5 ** -6))
    assert float(sim.potential_energy(Tensor(x), *sim.pairs).numpy()) == pytest.approx(direct)


def test_bond_and_angle_forces_match_hand_formulas():
    x = np.array([[0.0, 0.0, 0.0], [1.3, 0.0, 0.0], [1.3, 0.9, 0.4]])
    bond = md.harmonic_bonds(np.array([[0, 1]]), k=5.0, r0=1.0)
    from mskernel import grad
    g = np.asarray(grad(bond)(Tensor(x)).numpy())
    np.testing.assert_allclose(g[1], [5.0 * 0.3, 0, 0], rtol=1e-12)  # k (r - r0) along the bond
    np.testing.assert_allclose(g[0], -g[1], rtol=1e-12)
    angle = md.harmonic_angles(np.array([[0, 1, 2]]), k=2.0, theta0=np.pi / 2)
    u, v = x[0] - x[1], x[2] - x[1]
    theta = np.arccos(u @ v / np.linalg.norm(u) / np.linalg.norm(v))
    assert float(angle(Tensor(x)).numpy()) == pytest.approx(0.5 * 2.0 * (theta - np.pi / 2) ** 2)
    g = np.asarray(grad(angle)(Tensor(x)).numpy())
    h = 1e-6
    for n in range(3):
        for k in range(3):
            e = np.zeros_like(x)
            e[n, k] = h
            fd = (float(angle(Tensor(x + e)).numpy()) - float(angle(Tensor(x - e)).numpy())) / (2 * h)
            assert g[n, k] == pytest.approx(fd, rel=1e-5, abs=1e-8)


def test_nve_run_conserves_energy(fluid):
    x, box = fluid
    v = md.maxwell_boltzmann(len(x), 0.8, seed=2)
    sim = md.Simulation(x, v, box, md.lennard_jones(box), dt=0.002, chunk=10)
    traj = sim.run(300, record_every=50)
    assert traj.relative_drift() < 2e-4
    assert traj.rebuilds >= 1  # the list was rebuilt on the way and energy still held
    assert np.std(traj.potential) > 1e-3  # things moved


@pytest.mark.parametrize("kind", ["langevin", "berendsen"])
def test_thermostats_drive_the_temperature(fluid, kind):
    x, box = fluid
    v = md.maxwell_boltzmann(len(x), 0.3, seed=3)
    sim = md.Simulation(x, v, box, md.lennard_jones(box), dt=0.005, chunk=5, skin=0.5,
                        thermostat=md.Thermostat(kind, 1.5, friction=5.0, tau=0.1))
    sim.run(300, record_every=100)
    assert 1.0 < md.temperature_of(sim.v) < 2.1


def test_radial_distribution_of_an_ideal_gas_is_flat():
    rng = np.random.default_rng(4)
    box = 10.0
    r, g = md.radial_distribution(rng.uniform(0, box, (2000, 3)), box, 3.0, bins=15)
    np.testing.assert_allclose(g[3:], 1.0, atol=0.1)
