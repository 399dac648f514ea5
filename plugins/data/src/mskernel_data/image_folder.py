"""``ImageFolderDataset``: images stored one folder per class."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence, Union

import numpy as np

from .errors import DatasetError
from .execution import Row
from .source import MappableSource


class ImageFolderDataset(MappableSource):
    """Rows ``image`` and ``label`` (int32) from ``dataset_dir/<class name>/<file>``.

    Classes are the sub-folders in sorted order, numbered from 0, unless ``class_indexing``
    maps folder names to labels (then only those folders are read).  ``extensions`` keeps
    files with those suffixes (case-insensitive; None: every file not starting with ``.``).
    ``image`` is the file's bytes (uint8, 1-D; decode them with ``vision.Decode()`` in a
    ``map``) or, with ``decode=True``, the decoded RGB image (uint8, HWC).  Files are read by
    ``num_parallel_workers`` threads.
    """

    def __init__(self, dataset_dir: Union[str, Path], num_samples: Optional[int] = None,
                 num_parallel_workers: Optional[int] = None, shuffle: Optional[bool] = None,
                 sampler: Any = None, extensions: Optional[Sequence[str]] = None,
                 class_indexing: Optional[dict[str, int]] = None, decode: bool = False,
                 num_shards: Optional[int] = None, shard_id: Optional[int] = None) -> None:
        super().__init__(num_samples, shuffle, num_shards, shard_id, num_parallel_workers,
                         sampler)
        root = Path(dataset_dir)
        if not root.is_dir():
            raise DatasetError(f"ImageFolderDataset: {root} is not a directory")
        if class_indexing is None:
            folders = sorted(p.name for p in root.iterdir() if p.is_dir())
            class_indexing = {name: i for i, name in enumerate(folders)}
        suffixes = None if extensions is None else {e.lower() for e in extensions}
        self.class_indexing = dict(class_indexing)
        self.decode = decode
        self._samples: list[tuple[Path, int]] = []
        for name, label in sorted(self.class_indexing.items()):
            folder = root / name
            if not folder.is_dir():
                raise DatasetError(f"ImageFolderDataset: class_indexing names {name!r} but "
                                   f"{folder} is not a directory")
            self._samples += [(f, label) for f in sorted(folder.iterdir())
                              if f.is_file() and not f.name.startswith(".")
                              and (suffixes is None or f.suffix.lower() in suffixes)]

    def get_col_names(self) -> list[str]:
        return ["image", "label"]

    def _length(self) -> int:
        return len(self._samples)

    def _read(self, index: int) -> Row:
        path, label = self._samples[index]
        data = np.fromfile(path, np.uint8)
        if self.decode:
            from .image import decode

            data = decode(data)
        return data, np.asarray(label, np.int32)
