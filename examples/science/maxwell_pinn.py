"""2-D Maxwell TE-mode PINN: the (1, 1) standing wave of a perfectly conducting unit cavity over
t in [0, 1] (c = 1), against the exact solution: Adam, then L-BFGS-B.  Prints the relative L2
error of (Ex, Ey, Hz) together and of each on a 51 x 51 x 21 grid, and the time taken.

    python examples/science/maxwell_pinn.py [--adam 5000] [--lbfgs 5000] [--width 50]
"""

from __future__ import annotations

import argparse
import os

import mskernel
from mskernel import science


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--adam", type=int, default=5000)
    parser.add_argument("--lbfgs", type=int, default=5000)
    parser.add_argument("--width", type=int, default=50)
    parser.add_argument("--depth", type=int, default=4)
    args = parser.parse_args()
    mskernel.random.set_seed(0)
    pinn = science.PINN(science.mlp([3] + [args.width] * args.depth + [3]), science.maxwell_te(),
                        n_domain=4000, n_condition=[500, 500, 500, 1000], method="sobol")
    pinn.train_adam(args.adam, 1e-3, resample_every=1000, log_every=1000, verbose=True)
    pinn.train_lbfgs(args.lbfgs, log_every=1000, verbose=True)
    grid = science.maxwell_te_grid()
    predicted, exact = pinn.predict(grid), science.maxwell_te_exact(grid)
    each = ", ".join(f"{name} {science.relative_l2(predicted[:, c], exact[:, c]):.2e}"
                     for c, name in enumerate(("Ex", "Ey", "Hz")))
    print(f"maxwell te: relative L2 error {pinn.error(grid):.3e} ({each}; target 1e-2); "
          f"adam {pinn.history.seconds['adam']:.1f}s, lbfgs {pinn.history.seconds['lbfgs']:.1f}s; "
          f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
