"""Kovasznay flow PINN (steady Navier–Stokes, Re = 20) against the exact solution: Adam, then
L-BFGS-B.  Prints the relative L2 error of (u, v, p) together and of each on a 101 x 101 grid
of [-0.5, 1] x [-0.5, 1.5], and the time taken.

    python examples/science/kovasznay_pinn.py [--adam 10000] [--lbfgs 10000] [--width 50]
"""

from __future__ import annotations

import argparse
import os

import mskernel
from mskernel import science


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--adam", type=int, default=10000)
    parser.add_argument("--lbfgs", type=int, default=10000)
    parser.add_argument("--width", type=int, default=50)
    parser.add_argument("--depth", type=int, default=4)
    args = parser.parse_args()
    mskernel.random.set_seed(0)
    pinn = science.PINN(science.mlp([2] + [args.width] * args.depth + [3]), science.kovasznay(),
                        n_domain=2601, n_condition=400, method="sobol")
    pinn.train_adam(args.adam, 1e-3, resample_every=2000, log_every=1000, verbose=True)
    pinn.train_lbfgs(args.lbfgs, log_every=1000, verbose=True)
    grid = science.kovasznay_grid(101)
    predicted, exact = pinn.predict(grid), science.kovasznay_exact(grid)
    each = ", ".join(f"{name} {science.relative_l2(predicted[:, c], exact[:, c]):.2e}"
                     for c, name in enumerate("uvp"))
    print(f"kovasznay: relative L2 error {pinn.error(grid):.3e} ({each}; target 1e-3); "
          f"adam {pinn.history.seconds['adam']:.1f}s, lbfgs {pinn.history.seconds['lbfgs']:.1f}s; "
          f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
