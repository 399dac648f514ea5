"""``MnistDataset``: MNIST-format data (MNIST, Fashion-MNIST, KMNIST) from IDX files."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from .errors import DatasetError
from .execution import Row
from .idx import idx_shape, read_idx
from .source import MappableSource

_PREFIX = {"train": "train", "test": "t10k"}
#: The parts each usage reads, in MindSpore's order: it reads the matching files sorted by
#: name, so ``"all"`` gives the test rows (``t10k-*``) before the training rows.
_PARTS = {"train": ("train",), "test": ("test",), "all": ("test", "train")}


class MnistDataset(MappableSource):
    """Rows ``image`` (uint8, shape ``(28, 28, 1)``) and ``label`` (uint32, a scalar).

    ``dataset_dir`` holds ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
    ``t10k-images-idx3-ubyte`` and ``t10k-labels-idx1-ubyte`` (each may end in ``.gz`` and
    use ``.`` for the last ``-``, as some mirrors do).  ``usage`` is ``"train"``, ``"test"``
    or ``"all"``; ``"all"`` (and None, the default) reads whichever of the two parts the
    folder holds — ``MnistDataset("MNIST_Data/train")`` reads a folder of training files
    only — the test rows first when both are there, as MindSpore does.  Files are checked
    when the dataset is created and read into memory on first use.  ``sampler`` replaces
    ``shuffle``, ``num_samples``, ``num_shards`` and ``shard_id`` (see :mod:`.samplers`).
    """

    def __init__(self, dataset_dir: Union[str, Path], usage: Optional[str] = None,
                 num_samples: Optional[int] = None, num_parallel_workers: Optional[int] = None,
                 shuffle: Optional[bool] = None, sampler: Any = None,
                 num_shards: Optional[int] = None, shard_id: Optional[int] = None) -> None:
        super().__init__(num_samples, shuffle, num_shards, shard_id, num_parallel_workers,
                         sampler)
        if usage not in (*_PARTS, None):
            raise DatasetError(f"MnistDataset usage must be 'train', 'test' or 'all', got "
                               f"{usage!r}")
        self.dataset_dir, self.usage = Path(dataset_dir), usage
        if not self.dataset_dir.is_dir():
            raise DatasetError(f"MnistDataset: {self.dataset_dir} is not a folder")
        parts = _PARTS[usage or "all"]
        if usage in (None, "all"):
            parts = tuple(p for p in parts if _has_files(self.dataset_dir, _PREFIX[p])) or parts
        self._files = [(_find(self.dataset_dir, _PREFIX[p], "images", 3),
                        _find(self.dataset_dir, _PREFIX[p], "labels", 1)) for p in parts]
        self._sizes = [_check_pair(images, labels) for images, labels in self._files]
        self._offsets = np.cumsum([0, *self._sizes])
        self._arrays: Optional[list[tuple[np.ndarray, np.ndarray]]] = None

    def get_col_names(self) -> list[str]:
        return ["image", "label"]

    def _length(self) -> int:
        return int(self._offsets[-1])

    def _read(self, index: int) -> Row:
        if self._arrays is None:
            self._arrays = [(read_idx(images), read_idx(labels)) for images, labels in self._files]
        part = int(np.searchsorted(self._offsets, index, side="right")) - 1
        images, labels = self._arrays[part]
        local = index - int(self._offsets[part])
        return images[local][..., None].copy(), np.asarray(labels[local], np.uint32)


def _names(prefix: str, kind: str, rank: int) -> list[str]:
    return [f"{prefix}-{kind}{sep}idx{rank}-ubyte{ext}" for sep in "-." for ext in ("", ".gz")]


def _has_files(directory: Path, prefix: str) -> bool:
    return any((directory / name).is_file() for kind, rank in (("images", 3), ("labels", 1))
               for name in _names(prefix, kind, rank))


def _find(directory: Path, prefix: str, kind: str, rank: int) -> Path:
    names = _names(prefix, kind, rank)
    for name in names:
        if (directory / name).is_file():
            return directory / name
    raise DatasetError(f"MnistDataset: no {kind} file in {directory}; looked for "
                       f"{', '.join(names)}")


def _check_pair(images: Path, labels: Path) -> int:
    image_shape, label_shape = idx_shape(images), idx_shape(labels)
    if len(image_shape) != 3 or len(label_shape) != 1 or image_shape[0] != label_shape[0]:
        raise DatasetError(f"MnistDataset: {images.name} has shape {image_shape} and "
                           f"{labels.name} {label_shape}; expected (n, rows, cols) images and "
                           "n labels")
    return image_shape[0]
