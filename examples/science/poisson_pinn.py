"""2-D Poisson PINN on the unit square (u = sin(pi x) sin(pi y)): Adam, then L-BFGS-B.
Prints the relative L2 error on a 101 x 101 grid and the time taken.

    python examples/science/poisson_pinn.py [--adam 5000] [--lbfgs 5000]
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
    parser.add_argument("--width", type=int, default=20)
    args = parser.parse_args()
    mskernel.random.set_seed(0)
    pinn = science.PINN(science.mlp([2] + [args.width] * 3 + [1]), science.poisson(),
                        n_domain=2000, n_condition=400, method="sobol")
    pinn.train_adam(args.adam, 1e-3, resample_every=1000, log_every=1000, verbose=True)
    pinn.train_lbfgs(args.lbfgs, log_every=1000, verbose=True)
    error = pinn.error(science.square_grid(101))
    print(f"poisson: relative L2 error {error:.3e} (target 1e-3); "
          f"adam {pinn.history.seconds['adam']:.1f}s, lbfgs {pinn.history.seconds['lbfgs']:.1f}s; "
          f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
