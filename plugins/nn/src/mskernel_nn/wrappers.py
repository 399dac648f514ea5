"""Training wrappers (MindSpore's): ``WithLossCell`` (network + loss), ``WithEvalCell``
(loss, outputs and labels for metrics) and ``TrainOneStepCell`` (forward, backward and the
optimizer's update: one training step) — the pieces of a custom training loop::

    train_net = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), optimizer)
    train_net.set_train()
    step = mskernel.jit(train_net)          # graph mode: the whole step is one graph
    for x, y in dataset:
        loss = step(x, y)

The wrappers are transparent for names (``Cell(auto_prefix=False)``): the parameters under
them keep the names they have in the wrapped network (``"fc.weight"``, not
``"network._backbone.fc.weight"``), as MindSpore's wrappers do, so a checkpoint of the
training network loads into the bare network and back.
"""

from __future__ import annotations

from typing import Any, Optional

from mskernel_autodiff.api import value_and_grad
from mskernel_sdk import Tensor, data_parallel_group

from .cell import Cell
from .optim.optimizer import Optimizer

__all__ = ["TrainOneStepCell", "WithEvalCell", "WithLossCell"]


def _check_cell(value: Any, what: str, who: str) -> None:
    if not isinstance(value, Cell):
        raise TypeError(f"{who}: {what} must be a Cell, got {type(value).__name__}")


class WithLossCell(Cell):
    """``loss_fn(backbone(data), label)``."""

    def __init__(self, backbone: Cell, loss_fn: Cell) -> None:
        super().__init__(auto_prefix=False)
        _check_cell(backbone, "backbone", "WithLossCell")
        self._backbone = backbone
        self._loss_fn = loss_fn

    def construct(self, data: Any, label: Any) -> Tensor:
        return self._loss_fn(self._backbone(data), label)

    @property
    def backbone_network(self) -> Cell:
        return self._backbone


class WithEvalCell(Cell):
    """``(loss, outputs, label)`` with ``outputs = network(data)`` — what metrics need
    (the loss is ``None`` without a ``loss_fn``)."""

    def __init__(self, network: Cell, loss_fn: Any = None) -> None:
        super().__init__(auto_prefix=False)
        _check_cell(network, "network", "WithEvalCell")
        self._network = network
        self._loss_fn = loss_fn

    def construct(self, data: Any, label: Any) -> tuple[Any, Tensor, Any]:
        outputs = self._network(data)
        loss = None if self._loss_fn is None else self._loss_fn(outputs, label)
        return loss, outputs, label


class TrainOneStepCell(Cell):
    """One training step: the loss of ``network(*inputs)`` (a network with its loss, such as
    :class:`WithLossCell`, returning a scalar), its gradients with respect to the optimizer's
    parameters, and the optimizer's update.  Returns the loss (computed before the update).
    Run it under ``mskernel.jit`` to compile the whole step into one graph; the optimizer's
    state lives in Parameters, so the compiled step updates everything in place.

    Data parallel: when a plugin runs this process as one of several ranks (mskernel-parallel,
    through :func:`mskernel_sdk.data_parallel_group`) in ``data_parallel`` mode — set by
    ``parallel_mode`` here or process-wide by ``set_auto_parallel_context`` — the gradients
    are combined over the ranks before the update, inside the step's graph."""

    def __init__(self, network: Cell, optimizer: Optimizer,
                 parallel_mode: Optional[str] = None) -> None:
        super().__init__(auto_prefix=False)
        _check_cell(network, "network", "TrainOneStepCell")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"TrainOneStepCell: optimizer must be an nn Optimizer, got "
                            f"{type(optimizer).__name__}")
        self.network = network
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self.data_parallel = data_parallel_group(parallel_mode)
        if self.data_parallel is not None:
            self.data_parallel.prepare(self.weights)

    def construct(self, *inputs: Any) -> Tensor:
        loss, grads = value_and_grad(self.network, None, weights=self.weights)(*inputs)
        if self.data_parallel is not None:
            grads = self.data_parallel.reduce_gradients(grads)
        self.optimizer(grads)
        return loss
