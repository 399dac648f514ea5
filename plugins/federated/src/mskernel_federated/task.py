"""What a federated run trains: a :class:`Task` names the model, each client's data, the
loss and the optimizer.  A run's configuration points at one as ``"module:attribute"``;
every process (the server and each client) imports it, so it must build the same model
everywhere and pick the client's data from its partition id alone.

A task author subclasses :class:`Task` and implements :meth:`model` and
:meth:`train_data` (and :meth:`test_data` for the server's evaluation)::

    class FashionTask(Task):
        def model(self): return Mlp()
        def train_data(self, partition_id, num_partitions, batch_size): ...
        def test_data(self, batch_size): ...

    task = FashionTask()
"""

from __future__ import annotations

import importlib
from typing import Any, Optional


class Task:
    """The model and data of a federated run (override :meth:`model`, :meth:`train_data`,
    and optionally :meth:`test_data`, :meth:`loss`, :meth:`optimizer`)."""

    def model(self) -> Any:
        """A fresh ``mskernel.nn.Cell``; every call must give the same architecture (the
        initial weights come from the server)."""
        raise NotImplementedError(f"{type(self).__name__}.model() must return an nn.Cell")

    def train_data(self, partition_id: int, num_partitions: int, batch_size: int) -> Any:
        """The client's local data: an ``mskernel.dataset`` pipeline of ``(data, label)``
        batches, for partition ``partition_id`` of ``num_partitions``."""
        raise NotImplementedError(f"{type(self).__name__}.train_data() must return the "
                                  "client's batches")

    def test_data(self, batch_size: int) -> Optional[Any]:
        """Batches the server evaluates the global model on, or None for no evaluation."""
        return None

    def loss(self) -> Any:
        """The loss cell (default: softmax cross-entropy with integer labels)."""
        from mskernel import nn

        return nn.CrossEntropyLoss()

    def optimizer(self, params: list[Any], learning_rate: float) -> Any:
        """The clients' local optimizer (default: SGD with momentum 0.9)."""
        from mskernel import nn

        return nn.SGD(params, learning_rate=learning_rate, momentum=0.9)

    def metrics(self) -> dict[str, Any]:
        """Metrics of the evaluation (default: accuracy)."""
        from mskernel import train

        return {"accuracy": train.Accuracy()}


def load_task(spec: str) -> Task:
    """The :class:`Task` named by ``"module:attribute"`` (a class is instantiated)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"task {spec!r}: expected 'module:attribute'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"task {spec!r}: cannot import module {module_name!r} ({exc}); "
                         "put it on PYTHONPATH or next to the configuration file") from exc
    try:
        obj = getattr(module, attr)
    except AttributeError:
        raise ValueError(f"task {spec!r}: module {module_name!r} has no {attr!r}") from None
    task = obj() if isinstance(obj, type) else obj
    if not isinstance(task, Task):
        raise TypeError(f"task {spec!r} is a {type(task).__name__}, not a "
                        "mskernel_federated.Task")
    return task
