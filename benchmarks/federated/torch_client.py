"""The PyTorch side of the comparison: a Flower client training the same MLP as
``examples/federated/fashion_task.py`` with PyTorch (same layers and parameter order, same
data split, batches, optimizer and learning rate), served by the same SuperNodes and the
same mskernel server."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch
from flwr.client import ClientApp, NumPyClient

from fashion_task import FashionTask, dirichlet_partition, split
from mskernel_federated.apps import run_config


def mlp(hidden: int = FashionTask.hidden) -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(784, hidden), torch.nn.ReLU(),
                               torch.nn.Linear(hidden, 128), torch.nn.ReLU(),
                               torch.nn.Linear(128, 10))


class TorchClient(NumPyClient):
    def __init__(self, partition_id: int, num_partitions: int, config: Any) -> None:
        self.partition_id, self.num_partitions, self.config = partition_id, num_partitions, config

    def fit(self, parameters: list[np.ndarray], config: dict[str, Any]) -> Any:
        start = time.monotonic()
        cfg = self.config.client
        torch.manual_seed(self.config.seed + 1000 * int(config.get("server-round", 0))
                          + self.partition_id)
        net = mlp()
        with torch.no_grad():
            for p, a in zip(net.parameters(), parameters):
                p.copy_(torch.from_numpy(a))
        x, y = split("train")
        rows = dirichlet_partition(y, self.num_partitions, 0.5)[self.partition_id]
        images = torch.from_numpy(np.asarray(x[rows]))
        labels = torch.from_numpy(y[rows]).long()
        optimizer = torch.optim.SGD(net.parameters(), lr=cfg.learning_rate, momentum=0.9)
        steps = 0
        for _ in range(cfg.local_epochs):  # shuffled batches sliced from tensors: no loader
            order = torch.randperm(len(labels))
            for first in range(0, len(order), cfg.batch_size):
                batch = order[first:first + cfg.batch_size]
                xb, yb = images[batch], labels[batch]
                optimizer.zero_grad()
                torch.nn.functional.cross_entropy(net(xb), yb).backward()
                optimizer.step()
                steps += 1
        arrays = [p.detach().numpy().copy() for p in net.parameters()]
        sent = sum(a.nbytes for a in arrays)
        return arrays, steps * cfg.batch_size, {
            "steps": steps, "train_seconds": time.monotonic() - start,
            "bytes_received": sum(a.nbytes for a in parameters), "bytes_sent": sent}


def client_fn(context: Any) -> Any:
    node = context.node_config
    return TorchClient(int(node["partition-id"]), int(node["num-partitions"]),
                       run_config(context)).to_client()


client_app = ClientApp(client_fn=client_fn)
