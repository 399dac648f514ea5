"""Finding the shard files of a MindRecord dataset."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence, Union

from ..errors import DatasetError
from .shard import ShardFile

Paths = Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]]


def open_shards(dataset_files: Paths) -> list[ShardFile]:
    """The shards of a dataset: one file's name stands for every shard its header lists
    (found beside it, in the header's order), as in MindSpore; a list names exactly the
    files to read.  All must share one schema."""
    if isinstance(dataset_files, (str, os.PathLike)):
        first = ShardFile(_existing(dataset_files))
        folder = Path(first.path).parent
        shards = [first if name == Path(first.path).name else ShardFile(_existing(folder / name))
                  for name in first.header.shard_addresses]
    else:
        paths = list(dataset_files)
        if not paths:
            raise DatasetError("dataset_files is an empty list")
        shards = [ShardFile(_existing(p)) for p in paths]
    schema = shards[0].schema.as_json()["schema"]
    for shard in shards[1:]:
        if shard.schema.as_json()["schema"] != schema:
            raise DatasetError(f"{shard.path} has another schema than {shards[0].path}: "
                               f"{shard.schema.as_json()['schema']} vs {schema}")
    return shards


def _existing(path: Union[str, "os.PathLike[str]"]) -> str:
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise DatasetError(f"MindRecord file {path} does not exist")
    return path
