"""Per-rank checkpoint files, read in one process: reassembled from their layouts, and
refused with a clear error when a rank's file is missing or a block does not fit its layout
(the multi-rank save and reshard is in ``test_operator_parallel.py``)."""

from __future__ import annotations

import numpy as np
import pytest
from mskernel_sdk import write_container

from mskernel.parallel import Layout, load_distributed_checkpoint
from mskernel_parallel.errors import ShardingError
from mskernel_parallel.sharding.checkpoint import KIND, rank_file

LAYOUT = Layout((2, 2), ("dp", "mp"))
WHOLE = {"w": np.arange(24, dtype=np.float32).reshape(4, 6),
         "b": np.arange(6, dtype=np.float32)}
LAYOUTS = {"w": LAYOUT("None", "mp"), "b": LAYOUT("mp")}


def write(path, rank, blocks=None):
    mesh = LAYOUT.mesh
    write_container(rank_file(path, rank), KIND, "test",
                    {"rank": rank, "mesh_shape": list(mesh.shape), "mesh_names": list(mesh.names),
                     "layouts": {n: {"spec": lay.spec(), "shape": list(WHOLE[n].shape)}
                                 for n, lay in LAYOUTS.items()}},
                    blocks or {n: lay.shard(WHOLE[n], rank) for n, lay in LAYOUTS.items()})
    return rank_file(path, rank)


def test_per_rank_files_reassemble(tmp_path):
    files = [write(tmp_path / "net.ckpt", r) for r in (3, 1, 0, 2)]
    got = load_distributed_checkpoint(files)
    assert sorted(got) == ["b", "w"]
    for name, value in WHOLE.items():
        np.testing.assert_array_equal(got[name], value)


def test_a_missing_rank_or_a_wrong_block_is_refused(tmp_path):
    files = [write(tmp_path / "net.ckpt", r) for r in range(3)]
    with pytest.raises(ShardingError, match="one file per rank"):
        load_distributed_checkpoint(files)
    bad = {"w": np.zeros((4, 6), np.float32), "b": np.zeros(3, np.float32)}
    files.append(write(tmp_path / "net.ckpt", 3, bad))
    with pytest.raises(ShardingError, match="rank 3's block of 'w' has shape"):
        load_distributed_checkpoint(files)
