"""Automatic operator parallelism: the strategy search shards a network no one annotated.

    mskernel run -n 4 examples/parallel/auto_parallel.py

``AutoParallel(..., parallel_mode="recursive_programming", device_num=4)`` traces the loss,
tries the matmuls' strategies on every ``(dp, mp)`` mesh of four ranks with the cost model
(compute, α–β communication, memory) and prints the plan it predicts fastest; ``ShardedSGD``
then trains with that plan.  Every rank also trains the network alone and the script checks
that both end with the same losses and parameters.
"""

from __future__ import annotations

import numpy as np

from mskernel import Parameter, Tensor, communication, ops
from mskernel.parallel import AutoParallel, ShardedSGD
from one_process import train_and_compare  # examples/parallel/one_process.py

BATCH, FEATURES, HIDDEN, OUT, STEPS, LR = 64, 256, 1024, 32, 4, 0.02


def main() -> None:
    communication.init()
    rng = np.random.default_rng(0)
    shapes = {"w1": (FEATURES, HIDDEN), "w2": (HIDDEN, HIDDEN), "w3": (HIDDEN, OUT)}
    params = [Parameter(Tensor((rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32)), n)
              for n, s in shapes.items()]
    w1, w2, w3 = params
    batches = [(rng.standard_normal((BATCH, FEATURES)).astype(np.float32),
                rng.standard_normal((BATCH, OUT)).astype(np.float32)) for _ in range(STEPS)]

    def loss_fn(x, y):  # type: ignore[no-untyped-def]
        h = ops.gelu(ops.matmul(ops.gelu(ops.matmul(x, w1)), w2))
        return ops.mean(ops.square(ops.matmul(h, w3) - y))

    plan = AutoParallel(loss_fn, *batches[0], parallel_mode="recursive_programming",
                        device_num=communication.get_group_size())
    if communication.get_rank() == 0:
        print(plan.describe())
    trainer = ShardedSGD(loss_fn, *batches[0], learning_rate=LR, plan=plan)
    train_and_compare(trainer, loss_fn, params, batches, LR)

if __name__ == "__main__":
    main()
