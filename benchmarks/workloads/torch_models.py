"""The anchor workloads in PyTorch, written as a PyTorch user would: ``nn`` modules,
``F.cross_entropy`` / ``F.mse_loss``, ``torch.optim.SGD(momentum=0.9)``; graph mode is
``torch.compile(model)`` (inductor; the optimizer step stays eager, as in the anchors of
``shared/bench``).  Attribute names equal :mod:`.mskernel_models`' so weights copy across by
name (batch norm's and layer norm's parameters are mapped there)."""

from __future__ import annotations

from itertools import pairwise
from typing import Any, Callable

import torch
import torch.nn.functional as F
from torch import nn

from .spec import (CLASSES, D_FF, D_MODEL, HEADS, LEARNING_RATE, MOMENTUM,
                    RESNET_BLOCKS, WEIGHT_SEED, Workload)


class LeNet5(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.flatten(1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def mlp(workload: Workload) -> nn.Module:
    layers: list[nn.Module] = []
    for fan_in, fan_out in pairwise(workload.mlp_sizes):
        layers += [nn.Linear(fan_in, fan_out), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


class BasicBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.shortcut = None
        if stride != 1 or c_in != c_out:
            self.shortcut = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False),
                                          nn.BatchNorm2d(c_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + (x if self.shortcut is None else self.shortcut(x)))


class ResNetSmall(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(16)
        self.blocks = nn.Sequential(*(BasicBlock(*block) for block in RESNET_BLOCKS))
        self.fc = nn.Linear(RESNET_BLOCKS[-1][1], CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.blocks(F.relu(self.bn(self.conv(x))))
        return self.fc(x.mean((2, 3)))


def transformer() -> nn.Module:
    return nn.TransformerEncoderLayer(D_MODEL, HEADS, D_FF, dropout=0.0, batch_first=True)


_MODELS: dict[str, Callable[[Workload], nn.Module]] = {
    "lenet5": lambda w: LeNet5(), "inference_lenet": lambda w: LeNet5(), "mlp": mlp,
    "resnet_small": lambda w: ResNetSmall(), "transformer": lambda w: transformer()}


def set_threads(threads: int) -> None:
    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already set: the process ran a parallel op before
        pass


def build_model(workload: Workload) -> nn.Module:
    torch.manual_seed(WEIGHT_SEED)
    return _MODELS[workload.name](workload)


def loss_function(workload: Workload) -> Callable[..., torch.Tensor]:
    return F.mse_loss if workload.name == "transformer" else F.cross_entropy


def make_step(workload: Workload, model: nn.Module, graph: bool,
              double: bool = False) -> Callable[[], Any]:
    """One step of ``model`` on the workload's batch: a training step returning the loss as a
    float, or (``inference_lenet``) the logits as a NumPy array.  ``graph``: run the model
    through ``torch.compile``; ``double``: feed float64 data (to a float64 model)."""
    x, y = (torch.from_numpy(a) for a in workload.batch_arrays())
    if double:
        x, y = x.double(), (y.double() if y.is_floating_point() else y)
    forward = torch.compile(model) if graph else model
    if not workload.training:
        model.eval()

        def infer() -> Any:
            with torch.inference_mode():
                return forward(x).numpy()
        return infer

    model.train()
    loss_fn = loss_function(workload)
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE, momentum=MOMENTUM)

    def train() -> float:
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(forward(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()
    return train


def describe() -> dict[str, Any]:
    return {"version": torch.__version__, "torch_threads": torch.get_num_threads()}
