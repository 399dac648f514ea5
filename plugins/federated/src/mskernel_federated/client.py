"""The client side of horizontal FL: a Flower ``NumPyClient`` that trains the task's
``Cell`` with ``mskernel.train.Model`` on the client's partition.

Each ``fit`` loads the global weights, trains ``client.local_epochs`` epochs (fewer when
``client.time_budget_s`` runs out: a straggler sends what it has), and answers with the new
weights — or, with top-k compression, the sparsified update, the rest kept in the node's
state as error feedback.  FedProx's proximal term ``μ/2 ‖w − w_global‖²`` is added to the
loss when the server's round configuration carries ``proximal_mu``.
"""

from __future__ import annotations

import time
from typing import Any, Optional, Sequence

import numpy as np
from flwr.app import ArrayRecord, RecordDict
from flwr.client import NumPyClient

import mskernel
from mskernel import dataset, nn, train

from .compression import compress
from .config import FederatedConfig
from .task import Task
from .weights import get_weights, nbytes, set_weights

RESIDUAL_KEY = "mskernel.topk-residual"


class ProximalLoss(nn.Cell):
    """``loss_fn(network(data), label) + μ/2 ‖w − anchor‖²`` (FedProx's local objective)."""

    def __init__(self, network: Any, loss_fn: Any, anchor: Sequence[np.ndarray],
                 mu: float) -> None:
        super().__init__(auto_prefix=False)
        self.network = network
        self.loss_fn = loss_fn
        self.anchor = [mskernel.Tensor(a) for a in anchor]
        self.half_mu = mu / 2

    def construct(self, data: Any, label: Any) -> Any:
        loss = self.loss_fn(self.network(data), label)
        for p, a in zip(self.network.parameters_dict().values(), self.anchor):
            loss = loss + self.half_mu * ((p - a) ** 2).sum()
        return loss


class TimeBudget(train.Callback):
    """Ends training once ``seconds`` have passed (after the current step)."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def step_end(self, run_context: Any) -> None:
        if time.monotonic() >= self.deadline:
            run_context.request_stop()


class StepCount(train.Callback):
    """Counts the training steps and sums their losses."""

    def __init__(self) -> None:
        self.steps = 0
        self.loss_sum = 0.0

    def step_end(self, run_context: Any) -> None:
        self.steps += 1
        outputs = run_context.original_args().net_outputs
        self.loss_sum += float(np.asarray(outputs).reshape(-1)[0])


class MskernelClient(NumPyClient):
    """Trains ``task``'s model on partition ``partition_id`` of ``num_partitions``."""

    def __init__(self, task: Task, config: FederatedConfig, partition_id: int,
                 num_partitions: int, state: Optional[RecordDict] = None) -> None:
        self.task = task
        self.config = config
        self.partition_id = partition_id
        self.num_partitions = num_partitions
        self.state = state

    def fit(self, parameters: list[np.ndarray], config: dict[str, Any]
            ) -> tuple[list[np.ndarray], int, dict[str, Any]]:
        server_round = int(config.get("server-round", config.get("server_round", 0)))
        seed = self.config.seed + 1000 * server_round + self.partition_id
        mskernel.random.set_seed(seed)
        dataset.config.set_seed(seed)
        start = time.monotonic()
        net = self.task.model()
        set_weights(net, parameters)
        cfg = self.config.client
        batches = self.task.train_data(self.partition_id, self.num_partitions, cfg.batch_size)
        mu = float(config.get("proximal_mu", 0.0))
        loss_fn = self.task.loss()
        optimizer = self.task.optimizer(net.trainable_params(), cfg.learning_rate)
        if mu > 0:
            model = train.Model(ProximalLoss(net, loss_fn, parameters, mu), None, optimizer,
                                jit=cfg.jit)
        else:
            model = train.Model(net, loss_fn, optimizer, jit=cfg.jit)
        counter = StepCount()
        callbacks: list[Any] = [counter]
        if cfg.time_budget_s is not None:
            callbacks.append(TimeBudget(cfg.time_budget_s))
        model.train(cfg.local_epochs, batches, callbacks=callbacks)
        trained = get_weights(net)
        num_examples = max(1, counter.steps * cfg.batch_size)
        reply = self._reply(trained, parameters)
        metrics = {
            "train_loss": counter.loss_sum / max(counter.steps, 1),
            "steps": counter.steps,
            "train_seconds": time.monotonic() - start,
            "bytes_received": nbytes(parameters),
            "bytes_sent": nbytes(reply),
            "partition_id": self.partition_id,
        }
        return reply, num_examples, metrics

    def _reply(self, trained: list[np.ndarray], received: list[np.ndarray]
               ) -> list[np.ndarray]:
        """The new weights, or their top-k update with error feedback."""
        compression = self.config.compression
        if compression.kind == "none":
            return trained
        update = [t - r for t, r in zip(trained, received)]
        residual = None
        if self.state is not None and RESIDUAL_KEY in self.state:
            residual = self.state.array_records[RESIDUAL_KEY].to_numpy_ndarrays()
        payload, new_residual = compress(update, residual, compression.ratio)
        if self.state is not None:
            self.state[RESIDUAL_KEY] = ArrayRecord(new_residual)
        return payload
