"""LeNet-5 on Fashion-MNIST with Ascend's numerics, on any machine (``ascend-emulate``).

Trains the main job's LeNet-5 with its graph lowered for Ascend (fusions, 5HD layouts, the
precision mode's float16) and run by the emulator, once per loss scale: the loss is
multiplied by the scale before the backward pass and the learning rate divided by it, the
same update as unscaling the gradients, so in exact arithmetic every run is the same and
the differences are float16's.  For each run it prints the final training loss, the test
accuracy and how many values float16 flushed to zero (underflow) or saturated (overflow)
in the training steps; then the per-layer precision report of the trained network.

    python examples/ascend/lenet_emulated.py --limit-batches 100 --loss-scales 1 1024
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence

os.environ.setdefault("MSKERNEL_BACKENDS", "ascend-emulate,cpu")

import mskernel  # noqa: E402
import mskernel_ascend  # noqa: E402
from mskernel import nn, train  # noqa: E402
from mskernel_ascend.numerics import recording  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lenet_fashion_mnist import DEFAULT_DATA, LeNet5, fashion_mnist  # noqa: E402


class ScaledLoss(nn.Cell):
    """``network``'s loss times ``scale``: the seed of the backward pass is ``scale``."""

    def __init__(self, network: nn.Cell, scale: float) -> None:
        super().__init__(auto_prefix=False)
        self.network = network
        self.scale = scale

    def construct(self, x: Any, y: Any) -> Any:
        return self.network(x, y) * self.scale


def run(data: Path, scale: float, args: argparse.Namespace) -> dict[str, Any]:
    mskernel.random.set_seed(args.seed)
    net = LeNet5()
    loss = nn.WithLossCell(net, nn.CrossEntropyLoss())
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=args.lr / scale, momentum=0.9)
    step = mskernel.jit(nn.TrainOneStepCell(ScaledLoss(loss, scale), optimizer))
    train_ds = fashion_mnist(data, "train", args.batch_size, args.limit_batches)
    start = time.perf_counter()
    losses = []
    with recording() as events:
        for _ in range(args.epochs):
            for batch in train_ds.create_dict_iterator():
                losses.append(float(step(batch["image"], batch["label"]).asnumpy()) / scale)
    test_ds = fashion_mnist(data, "test", 1000, args.limit_batches)
    accuracy = train.Model(net, metrics={"accuracy": train.Accuracy()}).eval(test_ds)["accuracy"]
    tail = losses[-10:]
    return {"net": net, "loss": sum(tail) / len(tail), "accuracy": accuracy,
            "underflow": events.total_underflow, "overflow": events.total_overflow,
            "rounded": sum(events.rounded.values()), "seconds": time.perf_counter() - start}


def main(argv: Optional[Sequence[str]] = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--precision-mode", default="allow_fp32_to_fp16",
                        choices=mskernel_ascend.PRECISION_MODES)
    parser.add_argument("--loss-scales", type=float, nargs="+", default=[1.0, 1024.0])
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit-batches", type=int, default=None, metavar="N")
    args = parser.parse_args(argv)
    mskernel_ascend.set_precision_mode(args.precision_mode)
    print(f"ascend-emulate, precision mode {args.precision_mode}, backends "
          f"{os.environ['MSKERNEL_BACKENDS']}")
    results = []
    for scale in args.loss_scales:
        result = run(args.data, scale, args)
        results.append(result)
        share = 100 * result["underflow"] / max(result["rounded"], 1)
        print(f"loss scale {scale:g}: final loss {result['loss']:.4f}, test accuracy "
              f"{result['accuracy']:.4f}, float16 underflows {result['underflow']} "
              f"({share:.3f}% of rounded values), overflows {result['overflow']}, "
              f"{result['seconds']:.1f} s")
    images = next(fashion_mnist(args.data, "test", 64, 1).create_dict_iterator())["image"]
    mskernel_ascend.precision_report(results[-1]["net"], [images])
    return results


if __name__ == "__main__":
    main()
