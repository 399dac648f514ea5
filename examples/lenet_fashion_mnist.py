"""Train LeNet-5 on Fashion-MNIST with mskernel-nn and report the test accuracy.

The data are the real IDX files (``--data DIR``: any folder of MNIST-format IDX files,
gzipped or not) read by ``mskernel.dataset.MnistDataset``.  Training runs through
``mskernel.train.Model`` in graph mode: each step — forward, loss, backward, Adam's update —
is one compiled graph that updates the parameters and the optimizer's state in place.
``--eager`` runs the same steps op by op instead; ``--amp O2`` trains in mixed precision
(bfloat16, through mskernel-boost's ``Model(amp_level=...)``).  Nothing is downloaded.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

import mskernel
from mskernel import dataset, nn, train

DEFAULT_DATA = Path("/usr/share/datasets/fashion-mnist")
#: the training images' mean and standard deviation, for normalising the input
MEAN, STD = 0.2860, 0.3530
CLASSES = 10


class LeNet5(nn.Cell):
    """LeNet-5 (LeCun et al., 1998) for 28×28 images: two 5×5 convolutions with max pooling,
    then three dense layers; ReLU activations."""

    def __init__(self, num_class: int = CLASSES, num_channel: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode="same", has_bias=True)
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid", has_bias=True)
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(16 * 5 * 5, 120)
        self.fc2 = nn.Dense(120, 84)
        self.fc3 = nn.Dense(84, num_class)

    def construct(self, x: Any) -> Any:
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


def normalised(images: np.ndarray) -> np.ndarray:
    """A batch of uint8 ``[N, 28, 28, 1]`` images as normalised float32 ``[N, 1, 28, 28]``
    (a whole batch at a time: five times faster than per-image transforms)."""
    scaled = images.astype(np.float32) * np.float32(1 / (255 * STD)) - np.float32(MEAN / STD)
    return np.ascontiguousarray(scaled.transpose(0, 3, 1, 2))


def fashion_mnist(data: Path, usage: str, batch_size: int, limit: Optional[int]) -> Any:
    """Batches of normalised images and int32 labels (training batches shuffled each epoch,
    the last partial one dropped); the first ``limit`` batches only when given."""
    rows = dataset.MnistDataset(str(data), usage=usage, shuffle=usage == "train")
    batches = rows.batch(batch_size, drop_remainder=usage == "train")
    batches = batches.map(normalised, input_columns="image")
    batches = batches.map(dataset.transforms.TypeCast(mskernel.int32), input_columns="label")
    return batches if limit is None else batches.take(limit)


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="folder of MNIST-format IDX files (default: %(default)s)")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=2e-3, help="Adam's peak learning rate, "
                        "decayed along a cosine to 1/100 of it (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eager", action="store_true",
                        help="run op by op instead of compiling each training step")
    parser.add_argument("--amp", default="O0", choices=("O0", "O1", "O2", "O3"),
                        help="mixed-precision level (bfloat16; needs mskernel-boost)")
    parser.add_argument("--limit-batches", type=int, default=None, metavar="N",
                        help="use only the first N batches of each split (a quick check)")
    parser.add_argument("--save", type=Path, default=None, metavar="FILE",
                        help="save the trained network's checkpoint to FILE")
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> dict[str, float]:
    """Train and evaluate; returns ``{"accuracy": ..., "wall_time": ...}``."""
    return run(parse_args(argv))


def run(args: argparse.Namespace, ranks: int = 1, report: bool = True) -> dict[str, float]:
    """The job for parsed ``args``.  With ``ranks`` data-parallel ranks (the caller set the
    parallel mode), each rank's datasets shard themselves and every batch is split between
    the ranks, so they take the same steps as one process; ``report``: print the progress."""
    mskernel.random.set_seed(args.seed)
    dataset.config.set_seed(args.seed)
    start = time.perf_counter()
    train_ds = fashion_mnist(args.data, "train", args.batch_size // ranks, args.limit_batches)
    test_ds = fashion_mnist(args.data, "test", 1000 // ranks, args.limit_batches)
    steps = train_ds.get_dataset_size()
    if report:
        print(f"Fashion-MNIST from {args.data}: {steps} batches of {args.batch_size} per epoch, "
              f"{test_ds.get_dataset_size()} test batches of 1000; device "
              f"'{mskernel.get_device()}', {'eager' if args.eager else 'graph'} mode"
              + (f", mixed precision {args.amp}" if args.amp != "O0" else "")
              + (f", {ranks} data-parallel ranks" if ranks > 1 else ""))

    net = LeNet5()
    schedule = nn.CosineDecayLR(min_lr=args.lr / 100, max_lr=args.lr,
                                decay_steps=max(args.epochs * steps, 1))
    optimizer = nn.Adam(net.trainable_params(), learning_rate=schedule)
    model = train.Model(net, nn.CrossEntropyLoss(), optimizer,
                        metrics={"accuracy": train.Accuracy()}, jit=not args.eager,
                        amp_level=args.amp)
    callbacks = [train.LossMonitor(per_print_times=0), train.TimeMonitor()] if report else []
    model.train(args.epochs, train_ds, callbacks=callbacks)
    accuracy = model.eval(test_ds)["accuracy"]
    wall_time = time.perf_counter() - start
    if args.save is not None and report:
        mskernel.save_checkpoint(net, args.save)
        print(f"saved the trained network to {args.save}")
    if report:
        print(f"test accuracy: {accuracy:.4f}, wall time {wall_time:.1f} s")
    return {"accuracy": accuracy, "wall_time": wall_time}


if __name__ == "__main__":
    main()
