"""Operator parallelism on this machine: a transformer block trained on 2 or 4 ranks with
each plan the search weighs — data parallel, Megatron-LM's tensor parallel, and the plan
``AutoParallel`` picks — their bytes communicated per step and their predicted against
measured step time.

    mskernel run -n 2 benchmarks/parallel/operator_parallel.py [--steps 5]
    mskernel run -n 4 benchmarks/parallel/operator_parallel.py

The cost model is calibrated on this host first (one rank's matmul FLOP/s and bandwidth of an
elementwise op on the cpu backend, the latency and bandwidth of an all-reduce between the
ranks), so the predictions are in this machine's units.  Each plan: one untimed step, then
``--steps`` steps between barriers, timed on rank 0; bytes are those rank 0 handed to
collectives (its process groups' counts), per step.  Rank 0 prints a Markdown table.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import mskernel
from mskernel import Parameter, Tensor, communication, ops
from mskernel.parallel import AutoParallel, Mesh, ShardedSGD
from mskernel_parallel.sharding.cost import Device, cost
from mskernel_parallel.sharding.redistribute import group_name

BATCH, SEQ, D_MODEL, HEADS, HIDDEN = 8, 64, 256, 8, 1024


def block_loss():  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    shapes = [(D_MODEL, D_MODEL)] * 4 + [(D_MODEL, HIDDEN), (HIDDEN, D_MODEL)]
    weights = [Parameter(Tensor((rng.standard_normal(s) / math.sqrt(s[0])).astype(np.float32)),
                         f"w{i}") for i, s in enumerate(shapes)]

    def heads(t):  # type: ignore[no-untyped-def]
        return ops.transpose(ops.reshape(t, (BATCH, SEQ, HEADS, D_MODEL // HEADS)), (0, 2, 1, 3))

    def loss(x, y):  # type: ignore[no-untyped-def]
        wq, wk, wv, wo, w1, w2 = weights
        q, k, v = heads(ops.matmul(x, wq)), heads(ops.matmul(x, wk)), heads(ops.matmul(x, wv))
        att = ops.matmul(ops.softmax(ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))), -1), v)
        h = x + ops.matmul(ops.reshape(ops.transpose(att, (0, 2, 1, 3)), (BATCH, SEQ, D_MODEL)),
                           wo)
        h = h + ops.matmul(ops.gelu(ops.matmul(h, w1)), w2)
        return ops.mean(ops.square(h - y))

    x = rng.standard_normal((BATCH, SEQ, D_MODEL)).astype(np.float32)
    y = rng.standard_normal((BATCH, SEQ, D_MODEL)).astype(np.float32)
    return loss, x, y


def _seconds(fn, repeat: int = 5) -> float:  # type: ignore[no-untyped-def]
    fn()
    best = float("inf")
    for _ in range(repeat):
        began = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - began)
    return best


def calibrate() -> Device:
    """This host's rates: matmul FLOP/s, elementwise bytes/s, all-reduce α and β — rank 0's,
    so that every rank searches the same cost model (and finds the same plan)."""
    a = Tensor(np.ones((256, 256), np.float32))
    b = Tensor(np.ones((256, 1024), np.float32))
    flops = 2 * 256 * 256 * 1024 / _seconds(lambda: ops.matmul(a, b).numpy())
    big = Tensor(np.ones(1 << 20, np.float32))
    bandwidth = 3 * big.numpy().nbytes / _seconds(lambda: (big + big).numpy())
    small, large = np.ones(1, np.float32), np.ones(1 << 20, np.float32)
    alpha = _seconds(lambda: communication.all_reduce(small).numpy())
    n = communication.get_group_size()
    sent = 2 * (n - 1) / n * large.nbytes
    link = sent / max(_seconds(lambda: communication.all_reduce(large).numpy()) - alpha, 1e-9)
    rates = communication.broadcast(np.array([flops, bandwidth, link, alpha]), 0).numpy()
    return Device(flops=rates[0], bandwidth=rates[1], link=rates[2], alpha=rates[3])


def plans(loss, x, y, n: int, device: Device) -> dict[str, tuple[Mesh, dict]]:  # type: ignore[no-untyped-def]
    searched = AutoParallel(loss, x, y, parallel_mode="recursive_programming", device_num=n,
                            device=device)
    matmuls = [i for i, node in enumerate(searched.graph.nodes) if node.op == "matmul"]
    roles = ["n", "n", "n", "b1", "b1", "k", "n", "k"]  # q k v scores attend out up down
    return {"data parallel": (Mesh((n, 1), ("dp", "mp")), {i: {"b0": ("dp",)} for i in matmuls}),
            "Megatron": (Mesh((1, n), ("dp", "mp")),
                         {i: {r: ("mp",)} for i, r in zip(matmuls, roles)}),
            "searched": (searched.mesh, searched.strategies)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()
    communication.init()
    n, rank = communication.get_group_size(), communication.get_rank()
    device = calibrate()
    loss, x, y = block_loss()
    rows = []
    for name, (mesh, strategies) in plans(loss, x, y, n, device).items():
        trainer = ShardedSGD(loss, x, y, learning_rate=0.01, mesh=mesh, strategies=strategies)
        names = ["world"] + [group_name(mesh, a) for a in mesh.names
                             if 1 < mesh.axis_size(a) < mesh.size]
        trainer.step(x, y)
        before = sum(communication.statistics(g)["payload_bytes"] for g in names)
        communication.barrier()
        began = time.perf_counter()
        for _ in range(args.steps):
            trainer.step(x, y)
        communication.barrier()
        took = (time.perf_counter() - began) / args.steps
        sent = (sum(communication.statistics(g)["payload_bytes"] for g in names) - before)
        predicted = cost(trainer.program.propagation, device, len(trainer.trained))
        rows.append((name, mesh, sent / args.steps, predicted.time_s, took))
    if rank == 0:
        print(f"calibrated: matmul {device.flops / 1e9:.1f} GFLOP/s, elementwise "
              f"{device.bandwidth / 1e9:.1f} GB/s, all-reduce alpha {device.alpha * 1e6:.0f} us, "
              f"link {device.link / 1e9:.2f} GB/s")
        print("| ranks | plan | mesh dp x mp | bytes into collectives per step (rank 0) | "
              "predicted step | measured step |")
        print("|---|---|---|---|---|---|")
        for name, mesh, sent, predicted, took in rows:
            print(f"| {n} | {name} | {mesh.shape[0]} x {mesh.shape[1]} | {sent / 1e6:.2f} MB | "
                  f"{predicted * 1e3:.1f} ms | {took * 1e3:.1f} ms |")


if __name__ == "__main__":
    main()
