"""examples/ascend/lenet_emulated.py end to end on two batches of a small IDX folder: the
main job's LeNet-5 trained under ascend-emulate with two loss scales, then its precision
report (in a fresh process, as users run it: MSKERNEL_BACKENDS is read at start)."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "ascend" / "lenet_emulated.py"


def idx_bytes(array: np.ndarray) -> bytes:
    """MNIST's IDX format: zero, type 0x08 (unsigned byte), rank; big-endian dims; data."""
    dims = np.array(array.shape, ">u4").tobytes()
    return bytes([0, 0, 0x08, array.ndim]) + dims + array.astype(np.uint8).tobytes()


@pytest.fixture
def idx_folder(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    for split, count in (("train", 32), ("t10k", 24)):
        labels = rng.integers(0, 10, count)
        images = rng.integers(0, 255, (count, 28, 28))
        for kind, array in (("images-idx3", images), ("labels-idx1", labels)):
            (tmp_path / f"{split}-{kind}-ubyte.gz").write_bytes(gzip.compress(idx_bytes(array)))
    return tmp_path


def test_lenet_trains_under_emulation_and_reports_its_precision(idx_folder: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--data", str(idx_folder), "--batch-size", "16",
         "--limit-batches", "2", "--loss-scales", "1", "64"],
        capture_output=True, text=True, timeout=900,
        env={**os.environ, "MSKERNEL_BACKENDS": "ascend-emulate,cpu"})
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0] == ("ascend-emulate, precision mode allow_fp32_to_fp16, backends "
                        "ascend-emulate,cpu")
    runs = [line for line in lines if line.startswith("loss scale ")]
    assert [r.split(":")[0] for r in runs] == ["loss scale 1", "loss scale 64"]
    assert all("float16 underflows" in r and "nan" not in r for r in runs)
    report = lines[lines.index(next(x for x in lines if x.startswith("Ascend precision"))):]
    assert report[0].startswith("Ascend precision report: LeNet5, precision mode "
                                "allow_fp32_to_fp16")
    main_job = (EXAMPLE.parents[1] / "lenet_fashion_mnist.py").read_text().splitlines()
    construct = next(i for i, text in enumerate(main_job, 1) if "def construct" in text)
    assert [row.split()[0] for row in report[2:]] == [  # the six lines of LeNet5.construct
        f"lenet_fashion_mnist.py:{line}" for line in range(construct + 1, construct + 7)]
