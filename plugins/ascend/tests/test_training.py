"""Training under emulation: a jitted training step run whole by ascend-emulate, where loss
scaling keeps the float16 gradients from flushing to zero."""

from __future__ import annotations

import numpy as np
import pytest

from mskernel_ascend import precision_mode
from mskernel_ascend.numerics import recording

mskernel = pytest.importorskip("mskernel")
nn = pytest.importorskip("mskernel.nn", reason="training needs mskernel-nn")


class ScaledLoss(nn.Cell):
    def __init__(self, network, scale: float) -> None:
        super().__init__(auto_prefix=False)
        self.network, self.scale = network, scale

    def construct(self, x, y):
        return self.network(x, y) * self.scale


def train(scale: float, steps: int = 12) -> tuple[list[float], int]:
    """A small classifier on inputs of magnitude 1e-5, whose first layer's weight gradients
    fall below float16's smallest value unless scaled; returns the losses and the
    underflows counted."""
    mskernel.random.set_seed(0)
    rng = np.random.default_rng(0)
    x = (1e-5 * rng.standard_normal((64, 20))).astype(np.float32)
    y = (x[:, :4].argmax(axis=1)).astype(np.int32)
    net = nn.SequentialCell(nn.Dense(20, 32), nn.ReLU(), nn.Dense(32, 4))
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.5 / scale, momentum=0.9)
    loss = ScaledLoss(nn.WithLossCell(net, nn.CrossEntropyLoss()), scale)
    step = mskernel.jit(nn.TrainOneStepCell(loss, optimizer))
    xs, ys = mskernel.Tensor(x), mskernel.Tensor(y)
    losses = []
    with recording() as events:
        for _ in range(steps):
            losses.append(float(step(xs, ys).asnumpy()) / scale)
    return losses, events.total_underflow


def test_loss_scaling_under_emulation(monkeypatch: pytest.MonkeyPatch) -> None:
    with precision_mode("allow_fp32_to_fp16"), mskernel.device("ascend-emulate"):
        plain, plain_underflow = train(1.0)
        scaled, scaled_underflow = train(1024.0)
    assert plain_underflow > 10 * max(scaled_underflow, 1)
    assert scaled[-1] < scaled[0]
    assert all(np.isfinite(plain + scaled))
