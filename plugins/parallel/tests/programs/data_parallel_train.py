"""Train a small network data parallel (or alone) and save what the test compares.

Run by ``tests/test_data_parallel.py`` under ``mskernel run -n N`` with ``--batch B`` and
alone with ``--batch N*B``: the parameters after the steps, the losses, the evaluation metrics
and a checkpoint written by rank 0 and loaded by every rank must agree.

    python data_parallel_train.py --out DIR --batch 16 --steps 4 [--network mlp|lenet]
        [--eager] [--explicit]    (--explicit: Model(parallel_mode=...) instead of the context)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import mskernel
from mskernel import communication, dataset, nn, train
from mskernel.parallel import ParallelMode, set_auto_parallel_context

ROWS, EVAL_ROWS, FEATURES, CLASSES = 256, 64, 20, 5


class LeNetSmall(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, pad_mode="valid", has_bias=True)
        self.pool = nn.MaxPool2d(2, 2)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(4 * 3 * 3, CLASSES)

    def construct(self, x):  # type: ignore[no-untyped-def]
        return self.fc(self.flatten(self.pool(nn.ReLU()(self.conv(x)))))


def network(kind: str) -> nn.Cell:
    if kind == "lenet":
        return LeNetSmall()
    return nn.SequentialCell([nn.Dense(FEATURES, 32), nn.ReLU(), nn.Dense(32, CLASSES)])


def data(kind: str, rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    shape = (rows, 1, 8, 8) if kind == "lenet" else (rows, FEATURES)
    return rng.normal(size=shape).astype(np.float32), rng.integers(0, CLASSES, rows).astype(
        np.int32)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--network", default="mlp")
    parser.add_argument("--eager", action="store_true")
    parser.add_argument("--explicit", action="store_true")
    parser.add_argument("--bucket-mb", type=float, default=None)
    args = parser.parse_args()

    communication.init()
    rank, size = communication.get_rank(), communication.get_group_size()
    if args.explicit:  # the mode from Model(parallel_mode=...), the mean from the context
        set_auto_parallel_context(gradients_mean=True)
    else:
        set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL, gradients_mean=True)
    if args.bucket_mb is not None:
        set_auto_parallel_context(comm_fusion={"allreduce": {"mode": "size",
                                                             "config": args.bucket_mb}})
    mskernel.random.set_seed(7)  # the same initial parameters on every rank
    net = network(args.network)
    x, y = data(args.network, ROWS, 0)
    train_ds = dataset.NumpySlicesDataset((x, y), ["x", "y"], shuffle=True).batch(
        args.batch, drop_remainder=True).take(args.steps)
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
    model = train.Model(net, nn.CrossEntropyLoss(), optimizer, metrics={"acc": nn.Accuracy(),
                        "loss": nn.Loss()}, jit=not args.eager,
                        parallel_mode="data_parallel" if args.explicit else None)
    losses: list[float] = []
    checkpoints = train.ModelCheckpoint("dp", str(args.out / "ckpt"),
                                        train.CheckpointConfig(save_checkpoint_steps=args.steps))
    model.train(1, train_ds, callbacks=[checkpoints, train.LambdaCallback(
        on_train_step_end=lambda ctx: losses.append(
            float(np.asarray(ctx.original_args().net_outputs))))])
    ex, ey = data(args.network, EVAL_ROWS, 1)
    metrics = model.eval(dataset.NumpySlicesDataset((ex, ey), ["x", "y"], shuffle=False).batch(8))

    params = {p.name: p.numpy() for p in net.trainable_params()}
    # every rank loads the checkpoint rank 0 wrote: the same values as its own replica
    loaded = train.load_checkpoint(checkpoints.latest_ckpt_file_name)
    for name, value in params.items():
        np.testing.assert_array_equal(np.asarray(loaded[name]), value)
    # the replicas agree: rank 0's parameters broadcast equal this rank's
    for name, value in params.items():
        np.testing.assert_allclose(communication.broadcast(value, 0).numpy(), value,
                                   rtol=1e-6, atol=1e-7)
    # each rank's loss is its shard's mean: their mean is the whole batch's loss
    mean_losses = communication.all_reduce(np.array(losses, np.float32), "mean").numpy()
    if rank == 0:
        args.out.mkdir(parents=True, exist_ok=True)
        np.savez(args.out / "result.npz", losses=mean_losses,
                 acc=np.array(metrics["acc"]), loss=np.array(metrics["loss"]), size=size,
                 **{f"param:{k}": v for k, v in params.items()})
    files = sorted(p.name for p in (args.out / "ckpt").iterdir())
    print(f"rank {rank}/{size}: losses {np.round(losses, 5).tolist()}, metrics {metrics}, "
          f"checkpoints {files}")


if __name__ == "__main__":
    main()
