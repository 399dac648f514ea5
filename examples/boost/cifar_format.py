"""CIFAR-10's binary format: reading it, and a synthetic set written in it.

A CIFAR-10 binary batch file (``data_batch_1.bin`` … ``data_batch_5.bin``,
``test_batch.bin``) is a sequence of 3073-byte records: the label (one byte, 0–9), then the
32×32 image as 1024 red, 1024 green and 1024 blue bytes, row by row.  :func:`read_batches`
reads such files (checking the size is whole records and every label is 0–9) into
``uint8 [N, 3, 32, 32]`` images and ``int32`` labels.

No CIFAR-10 ships in the Debian or PyPI packages this project may install (the packages named
after it download it at run time, which nothing here may do), so :func:`write_synthetic`
writes a stand-in in the same format: each class is a fixed random 8×8 colour pattern,
upsampled to 32×32, placed at a random shift, with per-image brightness and Gaussian pixel
noise — learnable by a small ResNet, not by a linear model on raw pixels alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

RECORD = 1 + 3 * 32 * 32
CLASSES = 10


def read_batches(paths: Sequence[Path]) -> tuple[np.ndarray, np.ndarray]:
    """The images ``uint8 [N, 3, 32, 32]`` and labels ``int32 [N]`` of CIFAR-10 binary
    batch files."""
    images, labels = [], []
    for path in paths:
        size = Path(path).stat().st_size
        if size == 0 or size % RECORD:
            raise ValueError(f"{path}: {size} bytes is not a whole number of {RECORD}-byte "
                             "CIFAR-10 records")
        records = np.fromfile(path, np.uint8).reshape(-1, RECORD)
        if records[:, 0].max() >= CLASSES:
            raise ValueError(f"{path}: a label is {records[:, 0].max()}, past class 9")
        labels.append(records[:, 0].astype(np.int32))
        images.append(records[:, 1:].reshape(-1, 3, 32, 32))
    return np.concatenate(images), np.concatenate(labels)


def write_synthetic(folder: Path, train: int = 10000, test: int = 2000, seed: int = 0
                    ) -> tuple[Path, Path]:
    """Write ``data_batch_1.bin`` and ``test_batch.bin`` of the synthetic set into
    ``folder``; returns their paths."""
    rng = np.random.default_rng(seed)
    patterns = rng.uniform(0, 1, (CLASSES, 3, 8, 8))
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, count in (("data_batch_1.bin", train), ("test_batch.bin", test)):
        labels = rng.integers(0, CLASSES, count)
        big = np.repeat(np.repeat(patterns[labels], 4, axis=2), 4, axis=3)   # [N, 3, 32, 32]
        shifts = rng.integers(-4, 5, (count, 2))
        images = np.stack([np.roll(img, tuple(s), axis=(1, 2)) for img, s in zip(big, shifts)])
        images = images * rng.uniform(0.6, 1.0, (count, 1, 1, 1))
        images = images + rng.normal(0, 0.25, images.shape)
        pixels = np.clip(images * 255, 0, 255).astype(np.uint8).reshape(count, -1)
        records = np.concatenate([labels.astype(np.uint8)[:, None], pixels], axis=1)
        path = folder / name
        tmp = path.with_suffix(".tmp")
        records.tofile(tmp)
        tmp.replace(path)
        paths.append(path)
    return paths[0], paths[1]
