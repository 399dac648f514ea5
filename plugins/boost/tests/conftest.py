from __future__ import annotations

import numpy as np
import pytest
from mskernel import nn


class SmallNet(nn.Cell):
    """conv → batch norm → relu → dense: every kind of op the levels treat differently."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, pad_mode="same", has_bias=True)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(4 * 6 * 6, 3)

    def construct(self, x):
        return self.fc(self.flatten(self.relu(self.bn(self.conv(x)))))


def fresh_net() -> SmallNet:
    """A SmallNet with the same initial weights every time."""
    import mskernel

    mskernel.random.set_seed(0)
    return SmallNet()


@pytest.fixture
def small_net() -> SmallNet:
    return fresh_net()


@pytest.fixture
def batch() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return (rng.standard_normal((8, 2, 6, 6)).astype(np.float32),
            rng.integers(0, 3, 8).astype(np.int32))


@pytest.fixture
def make_net():
    """Makes SmallNets with the same initial weights."""
    return fresh_net
