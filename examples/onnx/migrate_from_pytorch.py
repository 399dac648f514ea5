"""Bring a PyTorch network to mskernel, as MindSpore's model migration does.

1. ``import_torch``: the module goes through ``torch.onnx.export`` and mskernel's ONNX
   importer; the imported graph runs on mskernel's backends with the module's weights.
2. ``load_torch_state_dict``: the ``state_dict`` is mapped by name and shape onto an
   equivalent mskernel ``Cell`` (BatchNorm's ``running_mean`` becomes ``moving_mean``,
   ``weight`` becomes ``gamma`` ...), which then computes what the module computes.

Both are compared with PyTorch on the same input; the mapping's report says what was renamed
and what has no counterpart.  Runs in a few seconds on a CPU.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn as tnn

import mskernel
from mskernel import nn
from mskernel_onnx.migration import import_torch, load_torch_state_dict


class TorchNet(tnn.Module):
    """A small image classifier: convolutions with batch norm, pooling, a linear head."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.conv1 = tnn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn1 = tnn.BatchNorm2d(16)
        self.conv2 = tnn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False)
        self.bn2 = tnn.BatchNorm2d(32)
        self.pool = tnn.AdaptiveAvgPool2d(1)
        self.fc = tnn.Linear(32, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.bn2(self.conv2(x)))
        return self.fc(torch.flatten(self.pool(x), 1))


class Net(nn.Cell):
    """The same network in mskernel.nn (MindSpore's layer names and arguments)."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, pad_mode="pad", padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, stride=2, pad_mode="pad", padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(32, classes)
        self.relu = nn.ReLU()

    def construct(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.relu(self.bn2(self.conv2(x)))
        return self.fc(self.flatten(self.pool(x)))


def main() -> None:
    torch.manual_seed(0)
    module = TorchNet().eval()
    with torch.no_grad():  # trained-looking batch-norm statistics
        for bn in (module.bn1, module.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
    x = np.random.default_rng(0).standard_normal((4, 3, 32, 32)).astype(np.float32)
    with torch.no_grad():
        expected = module(torch.from_numpy(x)).numpy()

    imported = import_torch(module, torch.from_numpy(x))
    print(f"imported graph @{imported.graph.name}: {len(imported.graph.nodes)} nodes, "
          f"{len(imported.weights)} weights named as the state_dict")
    through_onnx = imported.compile()(x)[0]
    print(f"through ONNX:  max |mskernel - torch| = {np.abs(through_onnx - expected).max():.2e}")

    cell = Net()
    cell.set_train(False)
    report = load_torch_state_dict(cell, module.state_dict())
    print(report)
    direct = cell(mskernel.Tensor(x)).numpy()
    print(f"as a Cell:     max |mskernel - torch| = {np.abs(direct - expected).max():.2e}")

    for out in (through_onnx, direct):
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
    assert report.complete


if __name__ == "__main__":
    main()
