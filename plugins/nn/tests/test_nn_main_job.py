"""The main job (examples/lenet_fashion_mnist.py) on two batches: the code path of the full
run — MnistDataset on IDX files, LeNet-5, the compiled training step, evaluation, the
checkpoint — in seconds, on IDX files written here and on the real Fashion-MNIST files where
they are installed."""

from __future__ import annotations

import gzip
import importlib.util
import struct
from pathlib import Path

import numpy as np
import pytest

from mskernel_nn.checkpoint import load_checkpoint

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "lenet_fashion_mnist.py"
FASHION_MNIST = Path("/usr/share/datasets/fashion-mnist")


@pytest.fixture(scope="module")
def job():
    spec = importlib.util.spec_from_file_location("lenet_fashion_mnist", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_idx(path: Path, array: np.ndarray) -> None:
    """An unsigned-byte IDX file: magic 0x0000 0x08 ndim, big-endian u32 dims, the bytes."""
    header = struct.pack(">HBB", 0, 0x08, array.ndim) + struct.pack(f">{array.ndim}I",
                                                                     *array.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


@pytest.fixture
def idx_folder(tmp_path):
    rng = np.random.default_rng(0)
    for prefix, count in (("train", 64), ("t10k", 40)):
        labels = rng.integers(0, 10, count)
        images = rng.integers(0, 60, (count, 28, 28))
        images[np.arange(count), labels * 2, :] = 255  # a learnable stripe per class
        write_idx(tmp_path / f"{prefix}-images-idx3-ubyte.gz", images)
        write_idx(tmp_path / f"{prefix}-labels-idx1-ubyte.gz", labels)
    return tmp_path


def test_two_batches_of_any_idx_folder(job, idx_folder, tmp_path, capsys):
    saved = tmp_path / "lenet.ckpt"
    result = job.main(["--data", str(idx_folder), "--epochs", "1", "--batch-size", "16",
                       "--limit-batches", "2", "--save", str(saved)])
    out = capsys.readouterr().out
    assert f"Fashion-MNIST from {idx_folder}: 2 batches of 16 per epoch" in out
    assert "graph mode" in out and "epoch: 1, mean loss" in out
    assert f"test accuracy: {result['accuracy']:.4f}, wall time" in out
    assert 0.0 <= result["accuracy"] <= 1.0 and result["wall_time"] > 0
    weights = load_checkpoint(saved)
    assert weights["conv1.weight"].shape == (6, 1, 5, 5)
    assert weights["fc3.weight"].shape == (10, 84)


def test_eager_mode_runs_the_same_path(job, idx_folder, capsys):
    job.main(["--data", str(idx_folder), "--epochs", "1", "--batch-size", "16",
              "--limit-batches", "1", "--eager"])
    assert "eager mode" in capsys.readouterr().out


@pytest.mark.skipif(not FASHION_MNIST.is_dir(),
                    reason=f"{FASHION_MNIST} does not exist (Debian's dataset-fashion-mnist)")
def test_two_batches_of_the_real_fashion_mnist(job, capsys):
    result = job.main(["--epochs", "1", "--limit-batches", "2"])
    out = capsys.readouterr().out
    assert "2 batches of 128 per epoch, 2 test batches of 1000" in out
    assert 0.0 <= result["accuracy"] <= 1.0
