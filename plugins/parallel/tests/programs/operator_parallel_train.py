"""Train a Megatron-style sharded MLP or transformer block for a few steps (or the same
network alone) and save the losses and the whole parameters for the test to compare.

    mskernel run -n 4 operator_parallel_train.py --out DIR --model block --mesh 2x2
    python operator_parallel_train.py --out DIR --model block --serial

The strategies name two mesh axes, ``dp`` (the batch) and ``mp`` (the matmuls' hidden
dimension): column-parallel projections (their outputs split over ``mp``), row-parallel ones
after them (their inputs split over ``mp``, their partial sums all-reduced); propagation
places the rest (biases, activations, attention, layer norms).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

import mskernel
from mskernel import communication, nn, ops
from mskernel.parallel import Layout, load_distributed_checkpoint, save_checkpoint
from mskernel_parallel.sharding.train import ShardedSGD

BATCH, SEQ, D_MODEL, HEADS, HIDDEN = 4, 4, 8, 4, 16
STEPS, LR = 3, 0.05


def column(cell: nn.Cell, lay: Layout, rank: int) -> nn.Cell:
    lead = ("dp",) + ("None",) * (rank - 2)
    return cell.shard(in_strategy=(lay(*lead, "None"),), out_strategy=(lay(*lead, "mp"),))


def row(cell: nn.Cell, lay: Layout, rank: int) -> nn.Cell:
    lead = ("dp",) + ("None",) * (rank - 2)
    return cell.shard(in_strategy=(lay(*lead, "mp"),), out_strategy=(lay(*lead, "None"),))


class MLP(nn.Cell):
    def __init__(self, lay: Layout) -> None:
        super().__init__()
        self.fc1 = column(nn.Dense(D_MODEL, HIDDEN), lay, 2)
        self.fc2 = row(nn.Dense(HIDDEN, D_MODEL), lay, 2)

    def construct(self, x):  # type: ignore[no-untyped-def]
        return self.fc2(ops.gelu(self.fc1(x)))


class Block(nn.Cell):
    """Pre-norm self-attention and MLP with residuals."""

    def __init__(self, lay: Layout) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm((D_MODEL,)), nn.LayerNorm((D_MODEL,))
        self.q, self.k, self.v = (column(nn.Dense(D_MODEL, D_MODEL), lay, 3) for _ in range(3))
        self.o = row(nn.Dense(D_MODEL, D_MODEL), lay, 3)
        self.fc1 = column(nn.Dense(D_MODEL, HIDDEN), lay, 3)
        self.fc2 = row(nn.Dense(HIDDEN, D_MODEL), lay, 3)

    def heads(self, x):  # type: ignore[no-untyped-def]
        return ops.transpose(ops.reshape(x, (BATCH, SEQ, HEADS, D_MODEL // HEADS)), (0, 2, 1, 3))

    def construct(self, x):  # type: ignore[no-untyped-def]
        h = self.ln1(x)
        q, k, v = self.heads(self.q(h)), self.heads(self.k(h)), self.heads(self.v(h))
        scores = ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))) / math.sqrt(D_MODEL // HEADS)
        attended = ops.matmul(ops.softmax(scores, -1), v)
        x = x + self.o(ops.reshape(ops.transpose(attended, (0, 2, 1, 3)), (BATCH, SEQ, D_MODEL)))
        return x + self.fc2(ops.gelu(self.fc1(self.ln2(x))))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--model", choices=["mlp", "block"], default="mlp")
    parser.add_argument("--mesh", default="1x1", help="dp x mp")
    parser.add_argument("--serial", action="store_true")
    parser.add_argument("--momentum", type=float, default=0.0)
    parser.add_argument("--zero", action="store_true", help="shard the optimizer state (ZeRO-1)")
    parser.add_argument("--save", type=Path, help="write integrated and per-rank checkpoints")
    parser.add_argument("--resume", type=Path, help="load per-rank checkpoints, train no step")
    args = parser.parse_args()
    communication.init()
    dp, mp = (int(n) for n in args.mesh.split("x"))
    lay = Layout((dp, mp), ("dp", "mp"))
    net = MLP(lay) if args.model == "mlp" else Block(lay)
    rng = np.random.default_rng(0)
    for _, p in sorted(net.parameters_and_names()):
        p.set_data(mskernel.Tensor(rng.standard_normal(p.shape).astype(np.float32) * 0.3))
    shape = (BATCH, D_MODEL) if args.model == "mlp" else (BATCH, SEQ, D_MODEL)
    batches = [(rng.standard_normal(shape).astype(np.float32),
                rng.standard_normal(shape).astype(np.float32)) for _ in range(STEPS)]

    def loss_fn(x, y):  # type: ignore[no-untyped-def]
        return ops.mean(ops.square(net(x) - y))

    names = [n for n, _ in net.parameters_and_names()]
    params = [p for _, p in net.parameters_and_names()]
    if args.serial:
        step = mskernel.value_and_grad(loss_fn, grad_position=None, weights=params)
        losses, velocity = [], [np.zeros(p.shape, np.float32) for p in params]
        for x, y in batches:
            loss, grads = step(x, y)
            for k, (p, g) in enumerate(zip(params, grads)):
                velocity[k] = args.momentum * velocity[k] + g.numpy()
                p.set_data(mskernel.Tensor(p.numpy() - LR * velocity[k]))
            losses.append(float(loss.numpy()))
        whole = {n: p.numpy() for n, p in zip(names, params)}
    else:
        trainer = ShardedSGD(loss_fn, *batches[0], learning_rate=LR, mesh=lay.mesh,
                             momentum=args.momentum, shard_optimizer=args.zero)
        if args.resume:
            load_distributed_checkpoint(sorted(args.resume.glob("net_rank*.ckpt")), trainer)
            batches = []
        losses = [trainer.step(x, y) for x, y in batches]
        if args.save:
            save_checkpoint(trainer, args.save / "net.ckpt")
            save_checkpoint(trainer, args.save / "net.ckpt", integrated_save=False)
        by_param = dict(zip(map(id, trainer.trained), trainer.parameters()))
        whole = {n: by_param[id(p)] for n, p in zip(names, params)}
        collectives = sorted({n.op for n in trainer.program.graph.nodes
                              if n.op.startswith("parallel.")})
        print("collectives", collectives, flush=True)
        print("optimizer bytes", trainer.optimizer_bytes(), flush=True)
    if communication.get_rank() == 0:
        args.out.mkdir(parents=True, exist_ok=True)
        np.savez(args.out / "result.npz", losses=np.array(losses),
                 **{f"param:{n}": w for n, w in whole.items()})


if __name__ == "__main__":
    main()
