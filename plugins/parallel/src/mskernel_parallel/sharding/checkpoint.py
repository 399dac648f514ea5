"""Checkpoints of sharded parameters (MindSpore's ``integrated_save`` and
``load_distributed_checkpoint``).

- ``save_checkpoint(trainer, file)`` (every rank calls it): the parameters gathered whole and
  written once, by rank 0, as mskernel-nn's checkpoint — any single process loads it;
- ``save_checkpoint(trainer, file, integrated_save=False)``: each rank writes its own blocks
  to ``<stem>_rank<r><suffix>`` with their layouts (mesh, split of each dimension, whole
  shape), nothing gathered;
- ``load_distributed_checkpoint(files, trainer)``: the per-rank files reassembled into whole
  tensors and, with ``trainer``, cut into its blocks — for the same mesh or another device
  count (resharding).

Per-rank files are the core's pickle-free container under this plugin's magic, written
atomically; each file's layouts are checked against its blocks and against the other files
before anything is assembled.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence, Union

import numpy as np
from mskernel_sdk import ContainerKind, read_container, write_container

import mskernel

from .. import groups
from ..errors import ShardingError
from .layout import Mesh, assemble, parse_spec

KIND = ContainerKind(magic=b"MSKSHARD", version=2, noun="sharded checkpoint",
                     writer="mskernel-parallel")
PathLike = Union[str, Path]


def rank_file(path: PathLike, rank: int) -> Path:
    """The file of ``rank``'s blocks for the checkpoint ``path``."""
    path = Path(path)
    return path.with_name(f"{path.stem}_rank{rank}{path.suffix}")


def _names(trainer: Any) -> list[str]:
    names = [p.name for p in trainer.trained]
    if any(not n for n in names) or len(set(names)) != len(names):
        raise ShardingError(f"every parameter needs a distinct name to be saved, got {names}")
    return names


def save_checkpoint(trainer: Any, ckpt_file_name: PathLike, integrated_save: bool = True) -> None:
    """Save ``trainer``'s parameters (a :class:`~.train.ShardedSGD`); every rank calls it."""
    names = _names(trainer)
    world = groups.world()
    if integrated_save:
        whole = trainer.parameters()
        if world.rank == 0:
            mskernel.train.save_checkpoint(dict(zip(names, whole)), ckpt_file_name)
        world.barrier()
        return
    mesh = trainer.program.mesh
    layouts = {n: {"spec": layout.spec(), "shape": list(p.shape)}
               for n, layout, p in zip(names, trainer.param_layouts, trainer.trained)}
    write_container(rank_file(ckpt_file_name, trainer.program.rank), KIND, "mskernel-parallel",
                    {"rank": trainer.program.rank, "mesh_shape": list(mesh.shape),
                     "mesh_names": list(mesh.names), "layouts": layouts},
                    {n: b.numpy() for n, b in zip(names, trainer.blocks)})
    world.barrier()


def load_distributed_checkpoint(checkpoint_filenames: Sequence[PathLike],
                                trainer: Optional[Any] = None) -> dict[str, np.ndarray]:
    """The whole parameters from every rank's file (``rank_file`` of each rank, in any
    order); with ``trainer``, also loaded into its blocks, on its own mesh."""
    files = [read_container(f, KIND, {"rank": int, "mesh_shape": list, "mesh_names": list,
                                      "layouts": dict}) for f in checkpoint_filenames]
    if not files:
        raise ShardingError("load_distributed_checkpoint: no files")
    first = files[0].header
    mesh = Mesh(tuple(first["mesh_shape"]), tuple(first["mesh_names"]))
    by_rank = {}
    for path, f in zip(checkpoint_filenames, files):
        if (f.header["mesh_shape"], f.header["mesh_names"]) != (first["mesh_shape"],
                                                                first["mesh_names"]):
            raise ShardingError(f"{path} was saved on another mesh than {checkpoint_filenames[0]}")
        by_rank[f.header["rank"]] = f
    if sorted(by_rank) != list(range(mesh.size)):
        raise ShardingError(f"a checkpoint of {mesh.size} ranks needs one file per rank; got "
                            f"ranks {sorted(by_rank)}")
    whole: dict[str, np.ndarray] = {}
    for name, entry in first["layouts"].items():
        if not (isinstance(entry, dict) and isinstance(entry.get("spec"), str)
                and isinstance(entry.get("shape"), list)
                and all(isinstance(n, int) and n >= 0 for n in entry["shape"])):
            raise ShardingError(f"{checkpoint_filenames[0]}: the layout of {name!r} is not a "
                                f"spec and a shape: {entry!r}")
        layout = parse_spec(mesh, entry["spec"])
        shape = tuple(entry["shape"])
        parts = []
        for r in range(mesh.size):
            block = np.asarray(by_rank[r].tensors[name])
            if block.shape != layout.local_shape(shape):
                raise ShardingError(f"rank {r}'s block of {name!r} has shape {list(block.shape)}; "
                                    f"its layout {layout} of {list(shape)} gives "
                                    f"{list(layout.local_shape(shape))}")
            parts.append(block)
        whole[name] = assemble(parts, layout, shape)
    if trainer is not None:
        trainer.load(whole)
    return whole
