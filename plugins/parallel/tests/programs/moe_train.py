"""Train a mixture-of-experts layer with its experts spread over the ranks (all_to_all
dispatch and combine, top-2 routing with a capacity, the load-balancing loss), or the same
layer in one process over the ranks' token groups, and save losses and parameters.

    mskernel run -n 4 moe_train.py --out DIR
    python moe_train.py --out DIR --serial --groups 4
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import mskernel
from mskernel import Tensor, communication, ops
from mskernel.parallel import moe

TOKENS, D, HIDDEN, EXPERTS, STEPS, LR, BALANCE = 8, 6, 8, 4, 3, 0.1, 0.01


def layer_loss(x, t, router, w_in, w_out):  # type: ignore[no-untyped-def]
    y, balance = moe(x, router, w_in, w_out, top_k=2, capacity_factor=1.0)
    return ops.mean(ops.square(y - t)) + BALANCE * balance


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--serial", action="store_true")
    parser.add_argument("--groups", type=int, default=0, help="token groups (default: ranks)")
    args = parser.parse_args()
    communication.init()
    n = args.groups or communication.get_group_size()
    rank = communication.get_rank()
    rng = np.random.default_rng(0)
    router = rng.standard_normal((D, EXPERTS)).astype(np.float32)
    w_in = (rng.standard_normal((EXPERTS, D, HIDDEN)) * 0.4).astype(np.float32)
    w_out = (rng.standard_normal((EXPERTS, HIDDEN, D)) * 0.4).astype(np.float32)
    batches = [(rng.standard_normal((n, TOKENS, D)).astype(np.float32),
                rng.standard_normal((n, TOKENS, D)).astype(np.float32)) for _ in range(STEPS)]
    losses = []
    if args.serial:
        def objective(r, a, b, x, t):  # type: ignore[no-untyped-def]
            total = layer_loss(x[0], t[0], r, a, b)
            for g in range(1, n):
                total = total + layer_loss(x[g], t[g], r, a, b)
            return total / n

        step = mskernel.value_and_grad(objective, grad_position=(0, 1, 2))
        params = [router, w_in, w_out]
        for x, t in batches:
            loss, grads = step(*[Tensor(p) for p in params], Tensor(x), Tensor(t))
            params = [p - LR * g.numpy() for p, g in zip(params, grads)]
            losses.append(float(loss.numpy()))
        router, w_in, w_out = params
    else:
        local = EXPERTS // n
        mine = slice(rank * local, (rank + 1) * local)
        params = [router, w_in[mine], w_out[mine]]

        def objective(r, a, b, x, t):  # type: ignore[no-untyped-def]
            return layer_loss(x, t, r, a, b) / n     # the ranks' objective sums these

        step = mskernel.value_and_grad(objective, grad_position=(0, 1, 2))
        for x, t in batches:
            loss, (gr, ga, gb) = step(*[Tensor(p) for p in params], Tensor(x[rank]),
                                      Tensor(t[rank]))
            gr = communication.all_reduce(gr)            # the router is copied on every rank
            params = [p - LR * g.numpy() for p, g in zip(params, (gr, ga, gb))]
            losses.append(float(communication.all_reduce(loss).numpy()))
        router = params[0]
        w_in = communication.all_gather(Tensor(params[1])).numpy()
        w_out = communication.all_gather(Tensor(params[2])).numpy()
    if rank == 0:
        args.out.mkdir(parents=True, exist_ok=True)
        np.savez(args.out / "result.npz", losses=np.array(losses), router=router, w_in=w_in,
                 w_out=w_out)


if __name__ == "__main__":
    main()
