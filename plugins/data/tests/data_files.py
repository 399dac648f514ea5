"""Writing small dataset files for the tests."""

import gzip
from pathlib import Path

import numpy as np


def write_idx(path: Path, array: np.ndarray, compress: bool = False) -> Path:
    """Write ``array`` as an IDX file (the MNIST format), gzipped when ``compress``."""
    codes = {np.dtype(np.uint8): 0x08, np.dtype(np.int8): 0x09, np.dtype(np.int16): 0x0B,
             np.dtype(np.int32): 0x0C, np.dtype(np.float32): 0x0D, np.dtype(np.float64): 0x0E}
    header = bytes([0, 0, codes[array.dtype], array.ndim])
    header += np.asarray(array.shape, ">u4").tobytes()
    data = header + array.astype(array.dtype.newbyteorder(">")).tobytes()
    if compress:
        data = gzip.compress(data)
    path.write_bytes(data)
    return path


def write_mnist(directory: Path, rng, train: int, test: int, compress: bool):
    """A small MNIST-layout folder; returns {usage: (images, labels)}."""
    suffix = ".gz" if compress else ""
    made = {}
    for usage, prefix, n in (("train", "train", train), ("test", "t10k", test)):
        images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, n, dtype=np.uint8)
        write_idx(directory / f"{prefix}-images-idx3-ubyte{suffix}", images, compress)
        write_idx(directory / f"{prefix}-labels-idx1-ubyte{suffix}", labels, compress)
        made[usage] = (images, labels)
    return made
