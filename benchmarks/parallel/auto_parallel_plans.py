"""The strategy search on simulated devices: plans for a stack of transformer layers on 8, 64
and 512 devices, their predicted step time, communication and parameter memory per device,
beside plain data parallelism and Megatron-LM's tensor parallelism (8-way, data parallel
across groups of 8), and how long the search took (wall clock, and the process's CPU time,
which other jobs on a shared host do not inflate).

    python benchmarks/parallel/auto_parallel_plans.py [--layers 24] [--devices 8 64 512]

No device is used: the model is traced from its input types only and the cost model
(``mskernel_parallel.sharding.cost``) predicts each plan.  Search times depend on the host.
"""

from __future__ import annotations

import argparse
import time

from mskernel_sdk import tensor_type

from mskernel import ops
from mskernel.parallel import AutoParallel, Mesh
from mskernel_parallel.sharding.search import plan_cost

BATCH, SEQ, D_MODEL, HEADS, HIDDEN = 512, 1024, 4096, 32, 16384


def stack(layers: int):  # type: ignore[no-untyped-def]
    def heads(t):  # type: ignore[no-untyped-def]
        return ops.transpose(ops.reshape(t, (BATCH, SEQ, HEADS, D_MODEL // HEADS)), (0, 2, 1, 3))

    def net(x, *weights):  # type: ignore[no-untyped-def]
        for layer in range(layers):
            wq, wk, wv, wo, w1, w2 = weights[6 * layer:6 * layer + 6]
            q, k, v = heads(ops.matmul(x, wq)), heads(ops.matmul(x, wk)), heads(ops.matmul(x, wv))
            att = ops.matmul(ops.softmax(ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))), -1), v)
            x = x + ops.matmul(ops.reshape(ops.transpose(att, (0, 2, 1, 3)),
                                           (BATCH, SEQ, D_MODEL)), wo)
            x = x + ops.matmul(ops.gelu(ops.matmul(x, w1)), w2)
        return x

    f32 = lambda *shape: tensor_type("f32", shape)  # noqa: E731
    weights = [f32(D_MODEL, D_MODEL)] * 4 + [f32(D_MODEL, HIDDEN), f32(HIDDEN, D_MODEL)]
    return net, [f32(BATCH, SEQ, D_MODEL)] + weights * layers


def reference_plans(plan: AutoParallel, devices: int) -> dict[str, tuple[Mesh, dict]]:
    matmuls = [i for i, n in enumerate(plan.graph.nodes) if n.op == "matmul"]
    dp = {i: {"b0": ("dp",)} for i in matmuls}
    megatron = {}
    for j, i in enumerate(matmuls):
        role = j % 8  # q, k, v, scores, attend, out, up, down
        split = {0: "n", 1: "n", 2: "n", 3: "b1", 4: "b1", 5: "k", 6: "n", 7: "k"}[role]
        megatron[i] = {"b0": ("dp",), split: ("mp",)}
    tp = min(8, devices)
    return {"data parallel": (Mesh((devices, 1), ("dp", "mp")), dp),
            f"Megatron {tp}-way x data parallel": (Mesh((devices // tp, tp), ("dp", "mp")),
                                                   megatron)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--devices", type=int, nargs="+", default=[8, 64, 512])
    args = parser.parse_args()
    net, types = stack(args.layers)
    params = len(types) - 1
    last = None
    print(f"{args.layers} layers, batch {BATCH} x seq {SEQ}, d_model {D_MODEL}, {HEADS} heads, "
          f"hidden {HIDDEN}; a training step per device")
    print("| devices | plan | mesh dp x mp | predicted step | communication | parameters | "
          "search |")
    print("|---|---|---|---|---|---|---|")
    for devices in args.devices:
        began, cpu = time.perf_counter(), time.process_time()
        plan = AutoParallel(net, *types, parallel_mode="recursive_programming",
                            device_num=devices, parameters=params)
        took = f"{time.perf_counter() - began:.1f} s ({time.process_time() - cpu:.1f} s CPU)"
        rows = [("searched", plan.mesh, plan.cost, took)]
        for name, (mesh, fixed) in reference_plans(plan, devices).items():
            rows.append((name, mesh, plan_cost(plan.graph, mesh, fixed, params), ""))
        for name, mesh, c, searched in rows:
            print(f"| {devices} | {name} | {mesh.shape[0]} x {mesh.shape[1]} | "
                  f"{c.time_s * 1e3:.1f} ms | {c.comm_bytes / 1e9:.2f} GB | "
                  f"{c.param_bytes / 1e9:.2f} GB{'' if c.param_bytes <= 80e9 else ' (over)'} | "
                  f"{searched} |")
        last = plan
    if last is not None:  # the first layer's ops and the summary of the largest plan
        lines = last.describe().splitlines()
        print("\n".join(lines[:14] + ["  ..."] + lines[-1:]))


if __name__ == "__main__":
    main()
