"""A small task for the tests: a two-layer classifier of 8 features into 3 classes, each
client holding 64 rows drawn from its own seed (so every process rebuilds the same data)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mskernel_federated import Task

FEATURES, CLASSES, ROWS = 8, 3, 64
TRUE_WEIGHTS = np.random.default_rng(1234).normal(size=(FEATURES, CLASSES))


def rows(seed: int, count: int = ROWS) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(count, FEATURES)).astype(np.float32)
    y = np.argmax(x @ TRUE_WEIGHTS, axis=1).astype(np.int32)
    return x, y


class TinyTask(Task):
    def model(self) -> Any:
        from mskernel import nn

        return nn.SequentialCell(nn.Dense(FEATURES, 16), nn.ReLU(), nn.Dense(16, CLASSES))

    def train_data(self, partition_id: int, num_partitions: int, batch_size: int) -> Any:
        from mskernel import dataset

        x, y = rows(100 + partition_id)
        return dataset.NumpySlicesDataset({"data": x, "label": y}, shuffle=False
                                          ).batch(batch_size)

    def test_data(self, batch_size: int) -> Any:
        from mskernel import dataset

        x, y = rows(99, 256)
        return dataset.NumpySlicesDataset({"data": x, "label": y}, shuffle=False
                                          ).batch(batch_size)


task = TinyTask()
