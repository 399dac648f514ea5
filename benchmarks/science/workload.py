"""The science workloads, defined once and built by every framework's script.

- PINNs (``burgers``, ``poisson``): the network (tanh MLP, Xavier-normal weights), the number of
  collocation and condition points (Sobol, drawn once, never resampled) and the optimiser
  schedule (Adam at 1e-3 for ``adam`` steps, then L-BFGS for ``lbfgs`` iterations).  Each script
  trains, then writes its prediction on the evaluation grid; :mod:`run_all` measures the error
  against the same reference for every framework.
- Lennard-Jones fluid (``lj``): ``n`` particles at density 0.8 on an FCC lattice with
  Maxwell-Boltzmann velocities at T = 1 (the same start for every framework), cutoff 2.5,
  neighbour-list skin 0.6, velocity Verlet at dt = 0.005 in float64; steps per second over
  ``steps`` steps after ``LJ_WARMUP`` warm-up steps (compilation, the first rebuilds).

Pure Python and NumPy (no framework imports), so each script imports it before its framework.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

THREADS = int(os.environ.get("BENCH_THREADS", "2"))
for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_name, str(THREADS))
# idle OpenMP workers sleep instead of spinning: on a shared host spinning costs the others' time
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

PINN = {
    "burgers": {"layers": [2, 20, 20, 20, 1], "domain": 2540, "boundary": 80, "initial": 160,
                "adam": 2000, "lbfgs": 1000},
    "poisson": {"layers": [2, 20, 20, 20, 1], "domain": 2000, "boundary": 400,
                "adam": 2000, "lbfgs": 1000},
}
#: ``BENCH_ADAM`` / ``BENCH_LBFGS`` shorten the schedule (for a quick check of the scripts)
for _cfg in PINN.values():
    _cfg["adam"] = int(os.environ.get("BENCH_ADAM", _cfg["adam"]))
    _cfg["lbfgs"] = int(os.environ.get("BENCH_LBFGS", _cfg["lbfgs"]))
LJ = {"density": 0.8, "temperature": 1.0, "cutoff": 2.5, "skin": 0.6, "dt": 0.005}
#: steps run before the timed ones (a multiple of every script's chunk)
LJ_WARMUP = 20
NU = 0.01 / np.pi


def grid(case: str) -> np.ndarray:
    """The evaluation grid: Burgers' 256 x 100 ``(x, t)``, Poisson's 101 x 101 unit square."""
    if case == "burgers":
        x, t = np.meshgrid(np.linspace(-1, 1, 256), np.linspace(0, 1, 100), indexing="ij")
    else:
        x, t = np.meshgrid(np.linspace(0, 1, 101), np.linspace(0, 1, 101), indexing="ij")
    return np.stack([x.ravel(), t.ravel()], axis=1)


def lj_start(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, float]:
    """Positions on an FCC lattice, velocities at the temperature (zero momentum), box side."""
    box = (n / LJ["density"]) ** (1 / 3)
    k = int(np.ceil((n / 4) ** (1 / 3)))
    cells = np.stack(np.meshgrid(*[np.arange(k)] * 3, indexing="ij"), -1).reshape(-1, 1, 3)
    basis = np.array([[0, 0, 0], [0.5, 0.5, 0], [0.5, 0, 0.5], [0, 0.5, 0.5]])
    x = ((cells + basis).reshape(-1, 3)[:n] + 0.25) * (box / k)
    v = np.random.default_rng(seed).normal(size=(n, 3)) * np.sqrt(LJ["temperature"])
    return x, v - v.mean(axis=0), box


def report(**fields) -> None:
    """One JSON line on stdout: what :mod:`run_all` collects."""
    print(json.dumps(fields), flush=True)
    sys.stdout.flush()
