"""DeepXDE's side (PyTorch backend): ``DDE_BACKEND=pytorch python bench_deepxde.py
burgers|poisson OUT.npy`` trains the same PINN and saves its prediction on the grid."""

from __future__ import annotations

import os
import sys
import time

import workload as W  # sets the thread environment first

os.environ.setdefault("DDE_BACKEND", "pytorch")
import deepxde as dde  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402


def burgers() -> dde.data.Data:
    cfg = W.PINN["burgers"]
    space_time = dde.geometry.GeometryXTime(dde.geometry.Interval(-1, 1),
                                            dde.geometry.TimeDomain(0, 1))

    def pde(x, u):
        return (dde.grad.jacobian(u, x, i=0, j=1) + u * dde.grad.jacobian(u, x, i=0, j=0)
                - W.NU * dde.grad.hessian(u, x, i=0, j=0))

    bc = dde.icbc.DirichletBC(space_time, lambda x: 0, lambda _, on_boundary: on_boundary)
    ic = dde.icbc.IC(space_time, lambda x: -np.sin(np.pi * x[:, 0:1]),
                     lambda _, on_initial: on_initial)
    return dde.data.TimePDE(space_time, pde, [bc, ic], num_domain=cfg["domain"],
                            num_boundary=cfg["boundary"], num_initial=cfg["initial"],
                            train_distribution="Sobol")


def poisson() -> dde.data.Data:
    cfg = W.PINN["poisson"]
    square = dde.geometry.Rectangle([0, 0], [1, 1])

    def pde(x, u):
        source = 2 * np.pi ** 2 * torch.sin(np.pi * x[:, 0:1]) * torch.sin(np.pi * x[:, 1:2])
        return dde.grad.hessian(u, x, i=0, j=0) + dde.grad.hessian(u, x, i=1, j=1) + source

    bc = dde.icbc.DirichletBC(square, lambda x: 0, lambda _, on_boundary: on_boundary)
    return dde.data.PDE(square, pde, [bc], num_domain=cfg["domain"],
                        num_boundary=cfg["boundary"], train_distribution="Sobol")


def main(case: str, out: str) -> None:
    cfg = W.PINN[case]
    torch.set_num_threads(W.THREADS)
    dde.config.set_random_seed(0)
    data = burgers() if case == "burgers" else poisson()
    model = dde.Model(data, dde.nn.FNN(cfg["layers"], "tanh", "Glorot normal"))
    model.compile("adam", lr=1e-3)  # its first call imports what training needs: not timed
    start = time.perf_counter()
    model.train(iterations=cfg["adam"], display_every=cfg["adam"])
    adam = time.perf_counter() - start
    # mskernel's L-BFGS-B settings (pinn.PINN.train_lbfgs); DeepXDE's PyTorch loop runs
    # torch.optim.LBFGS in calls of iter_per_step iterations, which set_LBFGS_options leaves
    # at its import-time value: bring it in line with maxiter as DeepXDE's import does
    dde.optimizers.set_LBFGS_options(maxcor=50, ftol=float(np.finfo(float).eps), gtol=1e-9,
                                     maxiter=cfg["lbfgs"], maxls=50)
    options = dde.optimizers.config.LBFGS_options
    options["iter_per_step"] = min(1000, options["maxiter"])
    options["fun_per_step"] = options["maxfun"] * options["iter_per_step"] // options["maxiter"]
    model.compile("L-BFGS")
    lbfgs_start = time.perf_counter()
    model.train(display_every=cfg["lbfgs"])
    lbfgs = time.perf_counter() - lbfgs_start
    np.save(out, model.predict(W.grid(case))[:, 0])
    W.report(framework="deepxde", case=case, seconds=adam + lbfgs, adam=adam, lbfgs=lbfgs)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
