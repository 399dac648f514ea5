"""Run the graphs of every rank of a mesh in one process: each rank's graph on its own
thread with the reference semantics of each op, its collectives exchanging operands with the
other ranks' threads.  What a sharded program computes on ``N`` ranks, checked without
launching them (tests, the cost model's checks); a real run uses MPI (``mskernel run``)."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, Callable, Sequence

import numpy as np
from mskernel_sdk import TOKEN_VALUE, Graph, OpDef, op_registry, run_reference

from .. import ops
from ..errors import CommunicationError
from .layout import Mesh

TIMEOUT_S = 120.0


class _World:
    """Exchanges between the threads of the ranks of one group at a time."""

    def __init__(self, mesh: Mesh) -> None:
        self.mesh = mesh
        self._lock = threading.Lock()
        self._groups: dict[tuple[int, ...], tuple[threading.Barrier, list[Any]]] = {}

    def members(self, group: str, rank: int) -> list[int]:
        if group == "world":
            return list(range(self.mesh.size))
        return self.mesh.group(rank, group.rsplit(".", 1)[1])

    def exchange(self, members: Sequence[int], rank: int, value: Any) -> list[Any]:
        """Every member's ``value``, in member order."""
        with self._lock:
            key = tuple(members)
            if key not in self._groups:
                self._groups[key] = (threading.Barrier(len(members), timeout=TIMEOUT_S),
                                     [None] * len(members))
            barrier, slots = self._groups[key]
        slots[members.index(rank)] = value
        barrier.wait()
        values = list(slots)
        barrier.wait()
        return values

    def abort(self) -> None:
        with self._lock:
            for barrier, _ in self._groups.values():
                barrier.abort()


_REDUCE: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sum": lambda s: s.sum(0), "mean": lambda s: s.mean(0), "max": lambda s: s.max(0),
    "min": lambda s: s.min(0), "prod": lambda s: s.prod(0)}


def _semantics(op: str, values: list[np.ndarray], me: int, attrs: dict[str, Any]) -> np.ndarray:
    n, x = len(values), values[me]
    if op == ops.ALL_REDUCE:
        return _REDUCE[attrs["reduction"]](np.stack(values)).astype(x.dtype)
    if op == ops.ALL_GATHER:
        return np.concatenate(values, axis=0)
    if op == ops.REDUCE_SCATTER:
        whole = _REDUCE[attrs["reduction"]](np.stack(values)).astype(x.dtype)
        return np.split(whole, n, axis=0)[me]
    if op == ops.BROADCAST:
        return np.array(values[attrs["root"]], copy=True)
    if op == ops.ALL_TO_ALL:
        blocks = [np.split(v, n, axis=attrs["split_axis"])[me] for v in values]
        return np.concatenate(blocks, axis=attrs["concat_axis"])
    raise CommunicationError(f"the simulation does not run '{op}'")


class _Registry:
    """The op registry, with the collectives exchanging through ``world`` as ``rank``."""

    def __init__(self, world: _World, rank: int) -> None:
        self.world, self.rank, self.base = world, rank, op_registry()

    def get(self, name: str) -> OpDef:
        opdef = self.base.get(name)
        if "collective" not in opdef.traits:
            return opdef
        world, rank = self.world, self.rank

        def reference(*args: Any, group: str, group_size: int, **attrs: Any) -> Any:
            members = world.members(group, rank)
            if len(members) != group_size:
                raise CommunicationError(f"'{name}' on group '{group}' of {group_size} ranks; "
                                         f"the mesh gives {len(members)}")
            if name == ops.BARRIER:
                world.exchange(members, rank, None)
                return TOKEN_VALUE
            values = world.exchange(members, rank, np.asarray(args[0]))
            return _semantics(name, values, members.index(rank), attrs), TOKEN_VALUE
        return dataclasses.replace(opdef, reference=reference)


def simulate(graphs: Sequence[Graph], args: Sequence[Sequence[Any]], mesh: Mesh) -> list[list[Any]]:
    """Each rank's outputs: ``graphs[r]`` run on ``args[r]`` (its arrays, then
    ``TOKEN_VALUE`` for a token input) as rank ``r`` of ``mesh``."""
    if len(graphs) != mesh.size or len(args) != mesh.size:
        raise CommunicationError(f"simulate: {len(graphs)} graphs and {len(args)} argument "
                                 f"lists for a mesh of {mesh.size} ranks")
    world = _World(mesh)
    results: list[Any] = [None] * mesh.size
    errors: list[BaseException] = []

    def run(rank: int) -> None:
        try:
            results[rank] = run_reference(graphs[rank], list(args[rank]), _Registry(world, rank))
        except BaseException as exc:  # noqa: BLE001 - reported below, after every thread ends
            errors.append(exc)
            world.abort()

    threads = [threading.Thread(target=run, args=(r,), daemon=True) for r in range(mesh.size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    real = [e for e in errors if not isinstance(e, threading.BrokenBarrierError)]
    if real or errors:
        raise (real or errors)[0]
    return results
