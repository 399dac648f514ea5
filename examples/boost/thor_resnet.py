"""resnet_small (the benchmark's anchor) with THOR against Momentum on a CIFAR-format set:
the steps to reach a target test accuracy and the wall time per step.

    python examples/boost/thor_resnet.py --data DIR        # real CIFAR-10 binary batches
    python examples/boost/thor_resnet.py                   # the synthetic CIFAR-format set

Without ``--data`` the synthetic set of :mod:`cifar_format` is written to a temporary folder
(no CIFAR-10 is available offline).  Both optimizers train the same network from the same
seed on the same batches in graph mode; the test set is evaluated every ``--eval-every``
steps.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import mskernel
from mskernel import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from cifar_format import read_batches, write_synthetic  # noqa: E402
from workloads.mskernel_models import ResNetSmall  # noqa: E402

MEAN = np.array([0.49, 0.48, 0.45], np.float32).reshape(1, 3, 1, 1)
STD = np.array([0.25, 0.24, 0.26], np.float32).reshape(1, 3, 1, 1)


def normalised(images: np.ndarray) -> np.ndarray:
    return ((images.astype(np.float32) / 255 - MEAN) / STD).astype(np.float32)


def accuracy(net: nn.Cell, images: np.ndarray, labels: np.ndarray) -> float:
    net.set_train(False)
    predict = mskernel.jit(net)
    correct = 0
    for i in range(0, len(images), 500):
        logits = predict(mskernel.Tensor(normalised(images[i:i + 500]))).asnumpy()
        correct += int((logits.argmax(1) == labels[i:i + 500]).sum())
    net.set_train(True)
    return correct / len(images)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--optimizer", choices=("thor", "momentum"), default="thor")
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--eval-every", type=int, default=25)
    parser.add_argument("--target", type=float, default=0.9)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.data is None:
            train_file, test_file = write_synthetic(Path(tmp))
            train_files, test_files = [train_file], [test_file]
        else:
            train_files = sorted(args.data.glob("data_batch_*.bin"))
            test_files = [args.data / "test_batch.bin"]
        x_train, y_train = read_batches(train_files)
        x_test, y_test = read_batches(test_files)
    mskernel.random.set_seed(0)
    net = ResNetSmall()
    loss = nn.CrossEntropyLoss()
    if args.optimizer == "thor":
        opt = mskernel.boost.thor(net, 0.01, 0.05, 0.9, weight_decay=5e-4, frequency=20)
        step_cell = mskernel.boost.ThorTrainOneStepCell(net, loss, opt)
    else:
        opt = nn.Momentum(net.trainable_params(), 0.05, 0.9, weight_decay=5e-4)
        step_cell = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    step = mskernel.jit(step_cell.set_train(True))
    rng = np.random.default_rng(0)
    order = rng.permutation(len(x_train))
    seconds, reached = 0.0, None
    for i in range(1, args.steps + 1):
        idx = order[(i - 1) * args.batch_size % len(order):][:args.batch_size]
        if len(idx) < args.batch_size:
            order = rng.permutation(len(x_train))
            idx = order[:args.batch_size]
        x = mskernel.Tensor(normalised(x_train[idx]))
        y = mskernel.Tensor(y_train[idx])
        start = time.perf_counter()
        float(step(x, y))
        seconds += time.perf_counter() - start
        if i % args.eval_every == 0:
            acc = accuracy(net, x_test, y_test)
            print(f"{args.optimizer} step {i}: test accuracy {acc:.4f}, "
                  f"{seconds / i * 1e3:.0f} ms per step", flush=True)
            if acc >= args.target:
                reached = i
                break
    print(f"{args.optimizer}: " + (f"reached {args.target:.0%} at step {reached}" if reached
                                   else f"did not reach {args.target:.0%} in {args.steps} steps")
          + f", {seconds / i * 1e3:.0f} ms per step")


if __name__ == "__main__":
    main()
