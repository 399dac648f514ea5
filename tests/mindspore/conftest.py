"""What the ports of MindSpore's tutorials need in place of their downloads: a folder laid out
as MindSpore's ``MNIST_Data.zip`` unpacks (``MNIST_Data/train`` and ``MNIST_Data/test`` with
the four IDX files), holding small synthetic digits that a network can learn, and a way to
run a port as its own program in that folder."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pytest

# probes.py beside this file imports by name, as the test modules do
sys.path.insert(0, str(Path(__file__).parent))

PORTS = Path(__file__).parent / "ports"
RUNNER = Path(__file__).parent / "runner.py"

#: the row and column of the bright square that marks each of the ten classes
_MARKS = [(r, c) for r in (2, 11, 19) for c in (2, 11, 19)] + [(11, 6)]


def digits(count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` 28x28 uint8 images and their labels: a noisy square at a place that
    depends on the class, shifted by up to a pixel."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, count).astype(np.uint8)
    images = rng.integers(0, 40, (count, 28, 28)).astype(np.float32)
    for image, label in zip(images, labels):
        r, c = _MARKS[label]
        dr, dc = rng.integers(-1, 2, 2)
        image[r + dr:r + dr + 7, c + dc:c + dc + 7] += 210
    return np.clip(images, 0, 255).astype(np.uint8), labels


def write_idx(path: Path, array: np.ndarray) -> None:
    """``array`` (uint8) as an IDX file, the format of MNIST."""
    header = bytes([0, 0, 0x08, array.ndim]) + np.asarray(array.shape, ">u4").tobytes()
    path.write_bytes(header + array.tobytes())


def write_mnist(root: Path, train: int = 640, test: int = 192) -> Path:
    """``root/MNIST_Data`` with ``train`` and ``test`` digits, as MindSpore's download."""
    for usage, prefix, count, seed in (("train", "train", train, 0), ("test", "t10k", test, 1)):
        folder = root / "MNIST_Data" / usage
        folder.mkdir(parents=True)
        images, labels = digits(count, seed)
        write_idx(folder / f"{prefix}-images-idx3-ubyte", images)
        write_idx(folder / f"{prefix}-labels-idx1-ubyte", labels)
    return root / "MNIST_Data"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A fresh folder holding ``MNIST_Data``, where a port runs."""
    write_mnist(tmp_path)
    return tmp_path


@pytest.fixture
def run(workdir: Path) -> Callable[..., "Run"]:
    """``run(name, *args, keep=(), check=True)``: :func:`run_port` in ``workdir``."""
    return lambda name, *args, **options: run_port(name, workdir, *args, **options)


@dataclass
class Run:
    """What a port printed, and the module-level variables it was asked to keep."""

    stdout: str
    stderr: str
    returncode: int
    values: dict[str, np.ndarray]

    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.stdout.splitlines()]


def run_port(name: str, workdir: Path, *args: str, keep: Sequence[str] = (),
             check: bool = True, backends: str = "", timeout: float = 600) -> Run:
    """Run ``ports/<name>.py`` as its own program in ``workdir`` (through ``runner.py``,
    which keeps the variables ``keep``); with ``check`` it must succeed.  ``backends`` is the
    backend preference order (``MSKERNEL_BACKENDS``; default: the installed order)."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "MSKERNEL_PROGRESS": "0"}
    if backends:
        env["MSKERNEL_BACKENDS"] = backends
    saved = workdir / f"{name.replace('/', '_')}.npz"
    done = subprocess.run(
        [sys.executable, str(RUNNER), str(saved), ",".join(keep), str(PORTS / f"{name}.py"),
         *args], cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise AssertionError(f"ports/{name}.py exited with {done.returncode}:\n"
                             f"{done.stdout[-4000:]}\n{done.stderr[-8000:]}")
    values = dict(np.load(saved)) if saved.exists() else {}
    return Run(done.stdout, done.stderr, done.returncode, values)
