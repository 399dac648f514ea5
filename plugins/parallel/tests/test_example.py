"""``examples/parallel/data_parallel_lenet.py`` — the main job data parallel — on 2 and 4 ranks
equals the serial main job (``examples/lenet_fashion_mnist.py``) on the same data: the ranks
read interleaved shards of each batch and average their gradients, so after the same steps
rank 0 saves the serial run's parameters (float32 sums in another order) and the evaluation,
counted over the ranks, has the serial accuracy.  Small IDX files written here keep it to
seconds; the full run is ``mskernel run -n 4 examples/parallel/data_parallel_lenet.py``."""

from __future__ import annotations

import gzip
import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import TIMEOUT, _environment, launch, ok

import mskernel

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
#: a few batches of the main job, in seconds
JOB = ["--epochs", "2", "--batch-size", "16", "--limit-batches", "3", "--lr", "1e-2"]


def _write_idx(path: Path, array: np.ndarray) -> None:
    """An unsigned-byte IDX file: magic 0x0000 0x08 ndim, big-endian u32 dims, the bytes."""
    header = struct.pack(">HBB", 0, 0x08, array.ndim) + struct.pack(f">{array.ndim}I",
                                                                     *array.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("idx")
    rng = np.random.default_rng(0)
    for prefix, count in (("train", 64), ("t10k", 2000)):
        labels = rng.integers(0, 10, count)
        images = rng.integers(0, 60, (count, 28, 28))
        images[np.arange(count), labels * 2, :] = 255  # a learnable stripe per class
        _write_idx(folder / f"{prefix}-images-idx3-ubyte.gz", images)
        _write_idx(folder / f"{prefix}-labels-idx1-ubyte.gz", labels)
    return folder


@pytest.fixture(scope="module")
def serial(data, tmp_path_factory) -> tuple[float, dict[str, np.ndarray]]:
    saved = tmp_path_factory.mktemp("serial") / "lenet.ckpt"
    result = subprocess.run([sys.executable, str(EXAMPLES / "lenet_fashion_mnist.py"),
                             "--data", str(data), "--save", str(saved), *JOB],
                            capture_output=True, text=True, timeout=TIMEOUT, env=_environment())
    output = ok(result)
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
