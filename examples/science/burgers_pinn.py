"""1-D viscous Burgers PINN (nu = 0.01/pi, Raissi et al. 2019) against the Cole–Hopf
reference: Adam with resampling, then L-BFGS-B.  Prints the relative L2 error on the
256 x 100 grid and the time taken.

    python examples/science/burgers_pinn.py [--adam 10000] [--lbfgs 10000] [--adaptive]
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
    parser.add_argument("--adaptive", action="store_true")
    args = parser.parse_args()
    mskernel.random.set_seed(0)
    pinn = science.PINN(science.mlp([2] + [20] * 8 + [1]), science.burgers(),
                        n_domain=10000, n_condition=[200, 200], method="lhs",
                        weights="adaptive" if args.adaptive else None)
    pinn.train_adam(args.adam, 1e-3, resample_every=2000, log_every=1000, verbose=True)
    pinn.train_lbfgs(args.lbfgs, log_every=1000, verbose=True)
    error = pinn.error(science.burgers_grid())
    print(f"burgers: relative L2 error {error:.3e} (target 1e-3, the PINN paper ~7e-4); "
          f"adam {pinn.history.seconds['adam']:.1f}s, lbfgs {pinn.history.seconds['lbfgs']:.1f}s; "
          f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
