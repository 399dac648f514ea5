"""1-D Fourier neural operator on Burgers (nu = 0.1, t = 1) with data from the plugin's own
pseudo-spectral solver: trains on ``--train`` initial conditions, prints the mean relative L2
error on ``--test`` held-out ones (target 1e-2; the FNO paper reports ~2e-3 at 1024 points).

    python examples/science/fno_burgers.py [--n 256] [--train 1000] [--test 200] [--epochs 100]
"""

from __future__ import annotations

import argparse
import os
import time

import mskernel
from mskernel_science import fno


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--train", type=int, default=1000)
    parser.add_argument("--test", type=int, default=200)
    parser.add_argument("--epochs", type=int, default=100)
    args = parser.parse_args()
    mskernel.random.set_seed(0)
    start = time.perf_counter()
    u0, u1 = fno.burgers_dataset(args.train + args.test, args.n, seed=0)
    made = time.perf_counter() - start
    net = fno.FNO1d(modes=16, width=64, layers=4)
    start = time.perf_counter()
    history = fno.train(net, u0[:args.train], u1[:args.train], args.epochs)
    trained = time.perf_counter() - start
    error = fno.relative_l2_per_sample(fno.predict(net, u0[args.train:]), u1[args.train:])
    print(f"fno burgers: held-out relative L2 {error:.3e} (target 1e-2); train loss "
          f"{history[-1]:.3e}; data {made:.1f}s, training {trained:.1f}s; "
          f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
