"""LeNet-5 on Fashion-MNIST (the main job's network and data) with THOR, Momentum or Adam:
the epoch at which the test accuracy first reaches a target (89% by default) and the wall
time per step.

    python examples/boost/thor_lenet.py --optimizer thor --epochs 10
    python examples/boost/thor_lenet.py --optimizer momentum
    python examples/boost/thor_lenet.py --optimizer adam

Every optimizer trains the same network from the same seed on the same batches, in graph
mode; the test set is evaluated after every epoch.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import mskernel
from mskernel import dataset, nn, train

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lenet_fashion_mnist import DEFAULT_DATA, LeNet5, fashion_mnist  # noqa: E402


def optimizer_for(name: str, net: nn.Cell, args: argparse.Namespace, steps: int):
    if name == "thor":
        return mskernel.boost.thor(net, learning_rate=args.lr or 0.02, damping=args.damping,
                                   momentum=0.9, weight_decay=5e-4, frequency=args.frequency)
    if name == "momentum":
        return nn.Momentum(net.trainable_params(), args.lr or 0.05, 0.9, weight_decay=5e-4)
    schedule = nn.CosineDecayLR(min_lr=(args.lr or 2e-3) / 100, max_lr=args.lr or 2e-3,
                                decay_steps=args.epochs * steps)
    return nn.Adam(net.trainable_params(), learning_rate=schedule)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--optimizer", choices=("thor", "momentum", "adam"), default="thor")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--target", type=float, default=0.89)
    parser.add_argument("--lr", type=float, default=None)
    parser.add_argument("--damping", type=float, default=0.03)
    parser.add_argument("--frequency", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--limit-batches", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    mskernel.random.set_seed(args.seed)
    dataset.config.set_seed(args.seed)
    train_ds = fashion_mnist(args.data, "train", args.batch_size, args.limit_batches)
    test_ds = fashion_mnist(args.data, "test", 1000, args.limit_batches)
    steps = train_ds.get_dataset_size()
    net = LeNet5()
    loss = nn.CrossEntropyLoss()
    opt = optimizer_for(args.optimizer, net, args, steps)
    model = train.Model(net, loss, opt, metrics={"accuracy": train.Accuracy()})
    if args.optimizer == "thor":
        model = mskernel.boost.ConvertModelUtils.convert_to_thor_model(
            model, network=net, loss_fn=loss, optimizer=opt)
    reached, train_seconds = None, 0.0
    for epoch in range(1, args.epochs + 1):
        start = time.perf_counter()
        model.train(1, train_ds, callbacks=[])
        train_seconds += time.perf_counter() - start
        accuracy = model.eval(test_ds)["accuracy"]
        print(f"{args.optimizer} epoch {epoch}: test accuracy {accuracy:.4f}, "
              f"{train_seconds / (epoch * steps) * 1e3:.1f} ms per step", flush=True)
        if reached is None and accuracy >= args.target:
            reached = epoch
            break
    outcome = (f"reached {args.target:.0%} at epoch {reached}" if reached
               else f"did not reach {args.target:.0%} in {args.epochs} epochs")
    print(f"{args.optimizer}: {outcome}, "
          f"{train_seconds / (max(epoch, 1) * steps) * 1e3:.1f} ms per step")


if __name__ == "__main__":
    main()
