"""Fashion-MNIST split non-IID over the clients: a Dirichlet(α) share of each class per
client (Hsu et al., 2019), the same split in every process (seeded), and an MLP.

The task of the federated example (``fashion.toml``); ``client_app`` is the plugin's client
app plus a ``dropout`` mod: with ``MSKERNEL_FL_DROPOUT=p`` a client leaves each SecAgg+
round with probability ``p`` just before it would send its masked model (after the keys and
shares went out), as a client that loses its connection mid-round.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from flwr.app import Error, Message
from flwr.client import ClientApp
from flwr.common.secure_aggregation.secaggplus_constants import (
    RECORD_KEY_CONFIGS, Key, Stage,
)

from mskernel_federated import Task
from mskernel_federated.apps import CLIENT_MODS, client_fn

DATA = Path(os.environ.get("MSKERNEL_FL_DATA", "/usr/share/datasets/fashion-mnist"))
ALPHA = float(os.environ.get("MSKERNEL_FL_ALPHA", "0.5"))
SPLIT_SEED = 2024
MEAN, STD = 0.2860, 0.3530


@lru_cache(maxsize=2)
def split(usage: str) -> tuple[np.ndarray, np.ndarray]:
    """All images (normalised float32 [N, 784]) and int32 labels of one split, read with
    ``mskernel.dataset.MnistDataset`` once and kept as ``.npy`` files in the temporary
    folder for the other processes (each client round is a process of its own)."""
    from mskernel import dataset

    cache = Path(tempfile.gettempdir()) / f"mskernel-fashion-{usage}-{DATA.stat().st_mtime_ns}"
    if not (cache / "labels.npy").exists():
        rows = dataset.MnistDataset(str(DATA), usage=usage, shuffle=False).batch(70_000)
        images, labels = next(rows.create_tuple_iterator(output_numpy=True))
        x = (images.reshape(len(images), -1).astype(np.float32) / 255 - MEAN) / STD
        staging = Path(tempfile.mkdtemp(dir=tempfile.gettempdir()))
        np.save(staging / "images.npy", x)
        np.save(staging / "labels.npy", labels.astype(np.int32))
        try:
            staging.rename(cache)
        except OSError:  # another process was first
            shutil.rmtree(staging, ignore_errors=True)
    return np.load(cache / "images.npy", mmap_mode="r"), np.load(cache / "labels.npy")


def dirichlet_partition(labels: np.ndarray, clients: int, alpha: float,
                        seed: int = SPLIT_SEED) -> list[np.ndarray]:
    """Row indices per client: each class's rows dealt out in Dirichlet(α) proportions."""
    rng = np.random.default_rng(seed)
    parts: list[list[int]] = [[] for _ in range(clients)]
    for c in np.unique(labels):
        rows = rng.permutation(np.flatnonzero(labels == c))
        cuts = (np.cumsum(rng.dirichlet([alpha] * clients))[:-1] * len(rows)).astype(int)
        for client, chunk in enumerate(np.split(rows, cuts)):
            parts[client] += chunk.tolist()
    return [np.sort(np.asarray(p, np.int64)) for p in parts]


class FashionTask(Task):
    hidden = 256

    def model(self) -> Any:
        from mskernel import nn

        return nn.SequentialCell(nn.Dense(784, self.hidden), nn.ReLU(),
                                 nn.Dense(self.hidden, 128), nn.ReLU(), nn.Dense(128, 10))

    def train_data(self, partition_id: int, num_partitions: int, batch_size: int) -> Any:
        from mskernel import dataset

        x, y = split("train")
        rows = dirichlet_partition(y, num_partitions, ALPHA)[partition_id]
        return dataset.NumpySlicesDataset({"data": np.asarray(x[rows]), "label": y[rows]},
                                          shuffle=True).batch(batch_size)

    def test_data(self, batch_size: int) -> Any:
        from mskernel import dataset

        x, y = split("test")
        return dataset.NumpySlicesDataset({"data": np.asarray(x), "label": y},
                                          shuffle=False).batch(1000)


task = FashionTask()


def dropout_mod(msg: Any, context: Any, call_next: Any) -> Any:
    rate = float(os.environ.get("MSKERNEL_FL_DROPOUT", "0"))
    configs = msg.content.config_records.get(RECORD_KEY_CONFIGS)
    if rate > 0 and configs is not None and configs.get(Key.STAGE) == \
            Stage.COLLECT_MASKED_VECTORS and random.random() < rate:
        return Message(Error(code=0, reason="the client dropped out mid-round"), reply_to=msg)
    return call_next(msg, context)


client_app = ClientApp(client_fn=client_fn,
                       mods=[dropout_mod, *CLIENT_MODS])
