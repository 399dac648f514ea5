"""Semi-automatic operator parallelism: shard two matmuls, let the rest propagate.

    mskernel run -n 4 examples/parallel/semi_auto_parallel.py      # dp=2 x mp=2
    mskernel run -n 2 examples/parallel/semi_auto_parallel.py --mesh 1x2

A two-layer perceptron whose first matmul is column-parallel (its weight split by columns
over ``mp``) and second row-parallel (split by rows; each rank's partial product is summed
by one all-reduce) — Megatron-LM's MLP — with the batch split over ``dp``.  The biases, the
activation and the loss get their layouts by propagation, the parameters are stored split,
and the pass inserts the collectives.  Every rank also trains the same network alone and the
script checks that both end with the same losses and parameters.
"""

from __future__ import annotations

import argparse

import numpy as np

import mskernel
from mskernel import Parameter, Tensor, communication, ops
from mskernel.parallel import Layout, ShardedSGD
from one_process import train_and_compare  # examples/parallel/one_process.py

FEATURES, HIDDEN, OUT, BATCH, STEPS, LR = 16, 64, 8, 32, 5, 0.05


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mesh", default="2x2", help="dp x mp ranks (their product: -n)")
    args = parser.parse_args()
    communication.init()
    dp, mp = (int(n) for n in args.mesh.split("x"))
    layout = Layout((dp, mp), ("dp", "mp"))

    # The user's two strategies: column- then row-parallel matmul, batch over dp.
    column = mskernel.shard(ops.matmul, in_strategy=(layout("dp", "None"), layout("None", "mp")))
    row = mskernel.shard(ops.matmul, in_strategy=(layout("dp", "mp"), layout("mp", "None")))

    rng = np.random.default_rng(0)
    w1 = Parameter(Tensor(rng.standard_normal((FEATURES, HIDDEN)).astype(np.float32) * 0.2), "w1")
    b1 = Parameter(Tensor(np.zeros(HIDDEN, np.float32)), "b1")
    w2 = Parameter(Tensor(rng.standard_normal((HIDDEN, OUT)).astype(np.float32) * 0.2), "w2")
    b2 = Parameter(Tensor(np.zeros(OUT, np.float32)), "b2")
    params = [w1, b1, w2, b2]
    batches = [(rng.standard_normal((BATCH, FEATURES)).astype(np.float32),
                rng.standard_normal((BATCH, OUT)).astype(np.float32)) for _ in range(STEPS)]

    def loss_fn(x, y):  # type: ignore[no-untyped-def]
        hidden = ops.relu(column(x, w1) + b1)
        return ops.mean(ops.square(row(hidden, w2) + b2 - y))

    trainer = ShardedSGD(loss_fn, *batches[0], learning_rate=LR, mesh=layout.mesh)
    if communication.get_rank() == 0:
        print(trainer.describe())
    train_and_compare(trainer, loss_fn, params, batches, LR)

if __name__ == "__main__":
    main()
