"""Train a small MLP with the parameter server, or alone (``--alone``, one process, batch
W·B, the same Momentum update) for the comparison.

    mskernel run -n 4 ps_train.py --out DIR --servers 2 [--scheduler] [--mode async]
        [--kill-worker K --kill-step T] [--silent-worker K --silent-step T]
"""

from __future__ import annotations

import argparse
import os
import signal
import time
from pathlib import Path

import numpy as np

import mskernel
from mskernel import dataset, nn

ROWS, FEATURES, CLASSES, LR, MOMENTUM = 256, 20, 5, 0.1, 0.9


def model() -> nn.Cell:
    mskernel.random.set_seed(7)
    return nn.SequentialCell([nn.Dense(FEATURES, 32), nn.ReLU(), nn.Dense(32, CLASSES)])


def batches(batch: int, num_shards: int | None, shard_id: int | None, steps: int):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(ROWS, FEATURES)).astype(np.float32)
    y = rng.integers(0, CLASSES, ROWS).astype(np.int32)
    rows = dataset.NumpySlicesDataset((x, y), ["x", "y"], shuffle=False, num_shards=num_shards,
                                      shard_id=shard_id)
    return list(rows.batch(batch, drop_remainder=True).take(steps).create_tuple_iterator())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--servers", type=int, default=1)
    parser.add_argument("--scheduler", action="store_true")
    parser.add_argument("--mode", default="sync")
    parser.add_argument("--alone", type=int, default=0, metavar="WORKERS")
    parser.add_argument("--kill-worker", type=int, default=-1)
    parser.add_argument("--kill-step", type=int, default=-1)
    parser.add_argument("--silent-worker", type=int, default=-1)
    args = parser.parse_args()
    net = model()
    loss_net = nn.WithLossCell(net, nn.CrossEntropyLoss())
    weights = net.trainable_params()
    grad_fn = mskernel.jit(mskernel.value_and_grad(loss_net, None, weights=weights))
    args.out.mkdir(parents=True, exist_ok=True)
    if args.alone:
        step = nn.TrainOneStepCell(loss_net, nn.Momentum(weights, LR, MOMENTUM))
        for x, y in batches(args.batch * args.alone, None, None, args.steps):
            step(x, y)
        np.savez(args.out / "alone.npz", **{p.name: p.numpy() for p in weights})
        return

    from mskernel.parallel import ps

    role = ps.init(num_servers=args.servers, scheduler=args.scheduler, worker_timeout=5.0,
                   exit=False)
    if role.report is not None:
        lost = "; ".join(f"rank {x.rank} after step {x.step} ({x.why})" for x in role.report.lost)
        print(f"server: {role.report.updates} updates; lost: {lost or 'none'}", flush=True)
    if not role.is_worker:
        return
    workers = role.roles.workers
    index = workers.index(role.roles.rank)
    worker = role.worker(weights, learning_rate=LR, momentum=MOMENTUM, mode=args.mode)
    losses = []
    for step, (x, y) in enumerate(batches(args.batch, len(workers), index, args.steps)):
        if index == args.kill_worker and step == args.kill_step:
            os.kill(os.getpid(), signal.SIGKILL)
        if index == args.silent_worker and step == args.kill_step:
            time.sleep(12)  # longer than the servers' worker_timeout
        loss, grads = grad_fn(x, y)
        losses.append(float(loss.numpy()))
        worker.step(grads)
    worker.pull()  # the servers' final values (async: other workers' updates too)
    worker.finish()
    print(f"worker {index}: {worker.steps} steps, losses {np.round(losses, 4).tolist()}",
          flush=True)
    if index == 0:
        np.savez(args.out / "ps.npz", **{p.name: p.numpy() for p in weights})


if __name__ == "__main__":
    main()
