"""Molecular dynamics: particles in a periodic cubic box, cell-list neighbour lists,
Lennard-Jones, harmonic bonds and angles, and integrators (velocity Verlet for NVE, Langevin
and Berendsen for NVT).

An energy is a function of the positions written with ``mskernel.ops``; forces are minus its
gradient (``mskernel.grad``), so a new potential needs no force code.  The integrators run
``chunk`` steps per compiled call (``mskernel.ops.fori_loop`` under ``mskernel.jit``) and
rebuild the neighbour list on the host between calls when some particle has moved more than
half the skin.  Pairs are held in fixed-capacity arrays with a mask, so a rebuilt list reuses
the compiled step; the capacity grows (one recompilation) only when the list outgrows it.
Reduced Lennard-Jones units throughout (``sigma = epsilon = mass = k_B = 1``), float64.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import numpy as np

import mskernel
from mskernel import Tensor, ops

#: ``energy(positions, pair_i, pair_j, pair_mask) -> scalar``
Energy = Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]


def minimum_image(d, box: float):
    """Displacements ``d`` (ops or NumPy) folded into ``[-box/2, box/2)``."""
    if isinstance(d, np.ndarray):
        return d - box * np.round(d / box)
    return d - box * ops.round(d / box)


def cell_list_pairs(x: np.ndarray, box: float, cutoff: float) -> np.ndarray:
    """Every pair ``i < j`` closer than ``cutoff`` under periodic boundaries (``[P, 2]``),
    found by binning into cells of side at least ``cutoff`` and comparing each cell with
    itself and its 26 neighbours (all pairs when the box holds fewer than 3 cells a side)."""
    n = len(x)
    cells = int(box // cutoff)
    if cells < 3:
        i, j = np.triu_indices(n, 1)
    else:
        idx = np.floor((x % box) / (box / cells)).astype(np.int64) % cells
        flat = (idx[:, 0] * cells + idx[:, 1]) * cells + idx[:, 2]
        order = np.argsort(flat, kind="stable")
        starts = np.searchsorted(flat[order], np.arange(cells ** 3 + 1))
        shifts = np.array([(a, b, c) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)])
        rows, cols = [], []
        for s in shifts:
            other = (idx + s) % cells
            key = (other[:, 0] * cells + other[:, 1]) * cells + other[:, 2]
            lo, counts = starts[key], starts[key + 1] - starts[key]
            first = np.repeat(np.cumsum(counts) - counts, counts)
            rows.append(np.repeat(np.arange(n), counts))
            cols.append(order[np.repeat(lo, counts) + np.arange(counts.sum()) - first])
        i, j = np.concatenate(rows), np.concatenate(cols)
        keep = i < j
        i, j = i[keep], j[keep]
    d = minimum_image(x[j] - x[i], box)
    close = np.einsum("pk,pk->p", d, d) < cutoff ** 2
    return np.stack([i[close], j[close]], axis=1)


def lennard_jones(box: float, cutoff: float = 2.5, epsilon: float = 1.0,
                  sigma: float = 1.0) -> Energy:
    """The Lennard-Jones energy ``4 eps ((s/r)^12 - (s/r)^6)``, truncated at ``cutoff`` and
    shifted to zero there (so the energy is continuous: conservation is then limited by the
    integrator, not by jumps at the cutoff)."""
    shift = 4 * epsilon * ((sigma / cutoff) ** 12 - (sigma / cutoff) ** 6)

    def energy(x: Tensor, i: Tensor, j: Tensor, mask: Tensor) -> Tensor:
        d = minimum_image(ops.take(x, j, axis=0) - ops.take(x, i, axis=0), box)
        r2 = ops.sum(d * d, axis=1)
        inside = ops.logical_and(mask, r2 < cutoff ** 2)
        s6 = (sigma ** 2 / ops.where(inside, r2, ops.ones_like(r2))) ** 3
        pair = 4 * epsilon * (s6 * s6 - s6) - shift
        return ops.sum(ops.where(inside, pair, ops.zeros_like(pair)))

    return energy


def harmonic_bonds(bonds: np.ndarray, k: float, r0: float, box: Optional[float] = None
                   ) -> Callable[[Tensor], Tensor]:
    """``sum k/2 (|x_b - x_a| - r0)^2`` over ``bonds`` (``[B, 2]`` particle indices)."""
    a, b = (Tensor(np.asarray(bonds)[:, c].astype(np.int64)) for c in (0, 1))

    def energy(x: Tensor) -> Tensor:
        d = ops.take(x, b, axis=0) - ops.take(x, a, axis=0)
        d = d if box is None else minimum_image(d, box)
        r = ops.sqrt(ops.sum(d * d, axis=1))
        return 0.5 * k * ops.sum((r - r0) ** 2)

    return energy


def harmonic_angles(triples: np.ndarray, k: float, theta0: float, box: Optional[float] = None
                    ) -> Callable[[Tensor], Tensor]:
    """``sum k/2 (theta - theta0)^2`` over ``triples`` ``[T, 3]`` (``a, centre, c``), ``theta``
    the angle at the centre."""
    a, c, e = (Tensor(np.asarray(triples)[:, m].astype(np.int64)) for m in (0, 1, 2))

    def energy(x: Tensor) -> Tensor:
        centre = ops.take(x, c, axis=0)
        u, v = ops.take(x, a, axis=0) - centre, ops.take(x, e, axis=0) - centre
        if box is not None:
            u, v = minimum_image(u, box), minimum_image(v, box)
        cos = ops.sum(u * v, axis=1) / ops.sqrt(ops.sum(u * u, axis=1) * ops.sum(v * v, axis=1))
        theta = ops.atan2(ops.sqrt(ops.maximum(1 - cos * cos, ops.zeros_like(cos) + 1e-30)),
                          cos)
        return 0.5 * k * ops.sum((theta - theta0) ** 2)

    return energy


def lattice(n: int, density: float) -> tuple[np.ndarray, float]:
    """``n`` particles on a face-centred cubic lattice (the Lennard-Jones solid's; ``n = 4 k^3``
    fills it, other ``n`` leave vacancies) in a box of ``density``: positions ``[n, 3]`` and
    the box side."""
    box = (n / density) ** (1 / 3)
    k = int(np.ceil((n / 4) ** (1 / 3)))
    cells = np.stack(np.meshgrid(*[np.arange(k)] * 3, indexing="ij"), -1).reshape(-1, 1, 3)
    basis = np.array([[0, 0, 0], [0.5, 0.5, 0], [0.5, 0, 0.5], [0, 0.5, 0.5]])
    sites = (cells + basis).reshape(-1, 3)
    return (sites[:n] + 0.25) * (box / k), box


def maxwell_boltzmann(n: int, temperature: float, seed: int = 0) -> np.ndarray:
    """Velocities of ``temperature`` with zero total momentum (unit masses)."""
    v = np.random.default_rng(seed).normal(size=(n, 3)) * np.sqrt(temperature)
    v -= v.mean(axis=0)
    return v * np.sqrt(temperature / temperature_of(v))


def temperature_of(v: np.ndarray) -> float:
    """Kinetic temperature ``sum v^2 / (3 (n - 1))`` (momentum conserved)."""
    return float(np.sum(v * v) / (3 * (len(v) - 1)))


@dataclass
class Thermostat:
    """``kind`` ``"langevin"`` (BAOAB splitting, ``friction`` per unit time) or
    ``"berendsen"`` (velocities rescaled toward ``temperature`` with time constant ``tau``)."""

    kind: str
    temperature: float
    friction: float = 1.0
    tau: float = 0.5


@dataclass
class Trajectory:
    """What a run recorded every ``record_every`` steps: steps, potential, kinetic and total
    energy, temperature; and the seconds spent."""

    steps: list[int] = field(default_factory=list)
    potential: list[float] = field(default_factory=list)
    kinetic: list[float] = field(default_factory=list)
    seconds: float = 0.0
    rebuilds: int = 0

    @property
    def total(self) -> np.ndarray:
        return np.asarray(self.potential) + np.asarray(self.kinetic)

    def relative_drift(self) -> float:
        """``max |E(t) - E(0)| / |E(0)|`` of the total energy."""
        e = self.total
        return float(np.max(np.abs(e - e[0])) / abs(e[0]))


class Simulation:
    """Particles under ``energy`` (a pair energy from :func:`lennard_jones`, optionally plus
    ``extra(x)`` terms such as bonds and angles) in a periodic box of side ``box``."""

    def __init__(self, positions: np.ndarray, velocities: np.ndarray, box: float,
                 energy: Energy, cutoff: float = 2.5, skin: float = 0.4,
                 extra: Optional[Callable[[Tensor], Tensor]] = None, dt: float = 0.005,
                 chunk: int = 10, thermostat: Optional[Thermostat] = None, seed: int = 0) -> None:
        self.x = np.asarray(positions, np.float64) % box
        self.v = np.asarray(velocities, np.float64)
        self.box, self.cutoff, self.skin, self.dt, self.chunk = box, cutoff, skin, dt, chunk
        self.thermostat = thermostat
        self.key = seed
        self._pair_energy, self._extra = energy, extra
        self.capacity = 0
        self._rebuild()
        self._force = mskernel.grad(self.potential_energy)
        self._compile()

    def potential_energy(self, x: Tensor, i: Tensor, j: Tensor, mask: Tensor) -> Tensor:
        e = self._pair_energy(x, i, j, mask)
        return e if self._extra is None else e + self._extra(x)

    def _rebuild(self) -> None:
        """The neighbour list at the current positions (pairs within cutoff + skin)."""
        pairs = cell_list_pairs(self.x, self.box, self.cutoff + self.skin)
        if len(pairs) > self.capacity:
            self.capacity = int(len(pairs) * 1.25) + 64
            self._compiled = None
        padded = np.zeros((self.capacity, 2), np.int64)
        padded[:len(pairs)] = pairs
        mask = np.arange(self.capacity) < len(pairs)
        self.pairs = (Tensor(padded[:, 0]), Tensor(padded[:, 1]), Tensor(mask))
        self.x_at_rebuild = self.x.copy()

    def forces(self, x: Tensor) -> Tensor:
        return -self._force(x, *self.pairs)

    def _compile(self) -> None:
        dt, box, thermostat = self.dt, self.box, self.thermostat

        def verlet(state):
            x, v, f, i, j, mask, noise = state
            v = v + 0.5 * dt * f
            if thermostat is not None and thermostat.kind == "langevin":  # BAOAB
                c1 = np.exp(-thermostat.friction * dt)
                x = x + 0.5 * dt * v
                v = c1 * v + np.sqrt((1 - c1 ** 2) * thermostat.temperature) * noise
                x = x + 0.5 * dt * v
            else:
                x = x + dt * v
            x = x - box * ops.floor(x / box)
            f = -self._force(x, i, j, mask)
            v = v + 0.5 * dt * f
            return x, v, f, i, j, mask, noise

        def run(x, v, f, i, j, mask, noises):
            state = (x, v, f, i, j, mask, noises[0])
            for s in range(self.chunk):  # unrolled: noise differs per step
                state = verlet(state[:6] + (noises[s],))
            return state[0], state[1], state[2]

        self._compiled = mskernel.jit(run)

    def _moved_too_far(self, x: np.ndarray) -> bool:
        moved = minimum_image(x - self.x_at_rebuild, self.box)
        return bool(np.max(np.einsum("nk,nk->n", moved, moved)) > (self.skin / 2) ** 2)

    def _chunk(self, x: Tensor, v: Tensor, f: Tensor, noises: Tensor,
               traj: Trajectory) -> tuple[Tensor, Tensor, Tensor]:
        """One compiled chunk of steps.  When a particle ends it more than half the skin from
        where the list was built, a pair may have come within the cutoff unseen: the chunk
        is rerun from its start with a list rebuilt there."""
        for attempt in range(2):
            if self._compiled is None:
                self._compile()
            nx, nv, nf = self._compiled(x, v, f, *self.pairs, noises)
            new_x = np.asarray(nx.numpy())
            if not self._moved_too_far(new_x):
                self.x, self.v = new_x, np.asarray(nv.numpy())
                return nx, nv, nf
            self._rebuild()
            traj.rebuilds += 1
            f = self.forces(x)
        raise RuntimeError(f"particles move more than half the skin ({self.skin}) in one chunk "
                           f"of {self.chunk} steps; use a larger skin or a smaller chunk")

    def run(self, steps: int, record_every: int = 100,
            trajectory: Optional[Trajectory] = None) -> Trajectory:
        """``steps`` steps (a multiple of ``chunk``), recording energies every
        ``record_every`` steps (a multiple of ``chunk``); ``self.x`` and ``self.v`` follow."""
        if steps % self.chunk or record_every % self.chunk:
            raise ValueError(f"steps ({steps}) and record_every ({record_every}) must be "
                             f"multiples of chunk ({self.chunk})")
        traj = trajectory or Trajectory()
        x, v = Tensor(self.x), Tensor(self.v)
        f = self.forces(x)
        rng = np.random.default_rng(self.key)
        start = time.perf_counter()
        for step in range(0, steps + 1, self.chunk):
            if step % record_every == 0:
                traj.steps.append(step)
                traj.potential.append(float(self.potential_energy(x, *self.pairs).numpy()))
                traj.kinetic.append(float(0.5 * np.sum(self.v ** 2)))
            if step == steps:
                break
            noises = Tensor(rng.normal(size=(self.chunk,) + self.x.shape)
                            if self.thermostat and self.thermostat.kind == "langevin"
                            else np.zeros((self.chunk, 1, 1)))
            x, v, f = self._chunk(x, v, f, noises, traj)
            if self.thermostat is not None and self.thermostat.kind == "berendsen":
                scale = np.sqrt(1 + self.chunk * self.dt / self.thermostat.tau * (
                    self.thermostat.temperature / temperature_of(self.v) - 1))
                self.v *= scale
                v = Tensor(self.v)
        traj.seconds += time.perf_counter() - start
        return traj


def radial_distribution(x: np.ndarray, box: float, r_max: float, bins: int = 100
                        ) -> tuple[np.ndarray, np.ndarray]:
    """``g(r)`` of one configuration: bin centres and values (pairs from the cell list)."""
    pairs = cell_list_pairs(x, box, r_max)
    d = minimum_image(x[pairs[:, 1]] - x[pairs[:, 0]], box)
    r = np.sqrt(np.einsum("pk,pk->p", d, d))
    counts, edges = np.histogram(r, bins=bins, range=(0, r_max))
    shell = 4 / 3 * np.pi * (edges[1:] ** 3 - edges[:-1] ** 3)
    density = len(x) / box ** 3
    return 0.5 * (edges[1:] + edges[:-1]), counts / (shell * density * len(x) / 2)
