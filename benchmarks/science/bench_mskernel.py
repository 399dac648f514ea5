"""mskernel's side: ``python bench_mskernel.py burgers|poisson OUT.npy`` trains the PINN and
saves its prediction on the grid; ``python bench_mskernel.py lj N STEPS`` times the LJ fluid."""

from __future__ import annotations

import sys
import time

import workload as W  # sets the thread environment first

import numpy as np  # noqa: E402

import mskernel  # noqa: E402
from mskernel import science  # noqa: E402
from mskernel_science import md  # noqa: E402


def pinn(case: str, out: str) -> None:
    cfg = W.PINN[case]
    mskernel.random.set_seed(0)
    problem = science.burgers(W.NU) if case == "burgers" else science.poisson()
    counts = [cfg["boundary"], cfg["initial"]] if case == "burgers" else [cfg["boundary"]]
    model = science.PINN(science.mlp(cfg["layers"]), problem, cfg["domain"], counts,
                         method="sobol")
    start = time.perf_counter()
    model.train_adam(cfg["adam"], 1e-3, log_every=cfg["adam"])
    model.train_lbfgs(cfg["lbfgs"], log_every=cfg["lbfgs"])
    seconds = time.perf_counter() - start
    np.save(out, model.predict(W.grid(case))[:, 0])
    W.report(framework="mskernel", case=case, seconds=seconds, **model.history.seconds)


def lj(n: int, steps: int) -> None:
    x, v, box = W.lj_start(n)
    chunk = 5
    sim = md.Simulation(x, v, box, md.lennard_jones(box, W.LJ["cutoff"]), cutoff=W.LJ["cutoff"],
                        skin=W.LJ["skin"], dt=W.LJ["dt"], chunk=chunk)
    sim.run(W.LJ_WARMUP, record_every=W.LJ_WARMUP)  # compile, first rebuilds
    traj = sim.run(steps, record_every=steps)
    W.report(framework="mskernel", case=f"lj{n}", steps_per_second=steps / traj.seconds,
             relative_drift=traj.relative_drift(), rebuilds=traj.rebuilds)


if __name__ == "__main__":
    if sys.argv[1] == "lj":
        lj(int(sys.argv[2]), int(sys.argv[3]))
    else:
        pinn(sys.argv[1], sys.argv[2])
