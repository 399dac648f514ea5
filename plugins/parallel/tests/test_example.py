"""``examples/parallel/data_parallel_lenet.py`` — the main job data parallel — on 2 and 4 ranks
equals the serial main job (``examples/lenet_fashion_mnist.py``) on the same data: the ranks
read interleaved shards of each batch and average their gradients, so after the same steps
rank 0 saves the serial run's parameters (float32 sums in another order) and the evaluation,
counted over the ranks, has the serial accuracy.  Small IDX files written here keep it
short; the full run is ``mskernel run -n 4 examples/parallel/data_parallel_lenet.py``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import alone, launch, ok

import mskernel

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
#: a few batches of the main job, in seconds
JOB = ["--epochs", "2", "--batch-size", "16", "--limit-batches", "3", "--lr", "1e-2"]


def _idx(array: np.ndarray) -> bytes:
    """``array`` as an unsigned-byte IDX file (MNIST's format)."""
    header = bytes([0, 0, 0x08, array.ndim]) + np.asarray(array.shape, ">u4").tobytes()
    return header + array.astype(np.uint8).tobytes()


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """Fashion-MNIST's files in small: 64 training and 2000 test images of noise with one
    bright row per class."""
    folder = tmp_path_factory.mktemp("idx")
    rng = np.random.default_rng(0)
    for prefix, count in (("train", 64), ("t10k", 2000)):
        labels = rng.integers(0, 10, count)
        rows = np.arange(28)[None, :, None] == 2 * labels[:, None, None]
        images = np.where(rows, 255, rng.integers(0, 60, (count, 28, 28)))
        for kind, array in (("images-idx3", images), ("labels-idx1", labels)):
            (folder / f"{prefix}-{kind}-ubyte").write_bytes(_idx(array))
    return folder


@pytest.fixture(scope="module")
def serial(data, tmp_path_factory) -> tuple[float, dict[str, np.ndarray]]:
    saved = tmp_path_factory.mktemp("serial") / "lenet.ckpt"
    output = ok(alone(str(EXAMPLES / "lenet_fashion_mnist.py"), "--data", str(data), "--save",
                      str(saved), *JOB))
    accuracy = float(output.split("test accuracy: ")[1].split(",")[0])
    return accuracy, _parameters(saved)


def _parameters(path: Path) -> dict[str, np.ndarray]:
    return {name: np.asarray(value.numpy()) for name, value in
            mskernel.load_checkpoint(str(path)).items()}


@pytest.mark.parametrize("n", [2, 4])
def test_data_parallel_main_job_equals_the_serial_one(n, data, serial, tmp_path):
    saved, summary = tmp_path / "lenet.ckpt", tmp_path / "result.json"
    output = ok(launch(n, str(EXAMPLES / "parallel" / "data_parallel_lenet.py"), "--data",
                       str(data), "--save", str(saved), "--json", str(summary), *JOB))
    assert f"{n} data-parallel ranks" in output
    assert "[rank 0] test accuracy:" in output and "[rank 1] test accuracy" not in output
    result = json.loads(summary.read_text())
    accuracy, parameters = serial
    assert result["ranks"] == n and result["accuracy"] == pytest.approx(accuracy, abs=1e-3)
    got = _parameters(saved)
    assert sorted(got) == sorted(parameters)
    for name, want in parameters.items():
        np.testing.assert_allclose(got[name], want, rtol=1e-4, atol=1e-5, err_msg=name)
