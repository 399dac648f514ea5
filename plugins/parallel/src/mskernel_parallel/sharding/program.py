"""A function sharded over the ranks of a mesh: traced once, its strategies propagated, the
graph of this rank made (:mod:`.partition`) and run.

    layout = Layout((2, 2), ("dp", "mp"))
    dense = mskernel.shard(lambda x, w: x @ w, in_strategy=(layout("dp", "None"),
                                                            layout("None", "mp")))
    program = parallelize(loss_fn, x, y)          # on each rank of `mskernel run -n 4`
    loss = program(*program.local_arguments(x, y))

The rank's graph runs by applying its ops one by one (:meth:`ShardedProgram.__call__`): eagerly,
inside ``@jit`` and under ``grad`` alike, its collectives on the process groups of the mesh's
axes (created on first use).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from mskernel_sdk import (
    Graph, Tensor, TensorType, TokenType, apply, tensor_type, trace_function, tree_unflatten,
)

from .. import groups
from ..errors import CommunicationError, ShardingError
from .constraint import CONSTRAINT, PARAMETER_PLAN, constraint_layout
from .layout import Mesh, TensorLayout
from .partition import Partition, partition, shard_inputs
from .propagate import Assignment, propagate
from .redistribute import group_name


def default_mesh(size: int) -> Mesh:
    """``size`` ranks as a mesh of its prime factors, largest first (``d0``, ``d1``, …): tuple
    strategies map their block counts onto runs of these axes."""
    factors, n, p = [], size, 2
    while n > 1:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    factors = sorted(factors, reverse=True) or [1]
    return Mesh(tuple(factors), tuple(f"d{i}" for i in range(len(factors))))


def mesh_of(graph: Graph) -> Optional[Mesh]:
    """The mesh of the first layout strategy recorded on ``graph``, if any."""
    for node in graph.nodes:
        if node.op == CONSTRAINT:
            layout = constraint_layout(node.attrs["mesh_shape"], node.attrs["mesh_names"],
                                       node.attrs["spec"])
            if layout is not None:
                return layout.mesh
    return None


def _type_of(x: Any) -> TensorType:
    array = x.numpy() if isinstance(x, Tensor) else np.asarray(x)
    return tensor_type(array.dtype, array.shape)


def ensure_groups(mesh: Mesh) -> None:
    """Create the process group of each mesh axis this rank is on (its members call it
    together, every rank in the same order)."""
    world = groups.world()
    if world.size != mesh.size:
        raise ShardingError(f"the mesh {dict(zip(mesh.names, mesh.shape))} has {mesh.size} "
                            f"ranks; this run has {world.size} (mskernel run -n {mesh.size})")
    for axis in mesh.names:
        name = group_name(mesh, axis)
        if mesh.axis_size(axis) > 1 and name != "world":
            try:
                groups.get_group(name)
            except CommunicationError:
                groups.create_group(name, mesh.group(world.rank, axis))


class ShardedProgram:
    """``fn`` on ``args`` (arrays or tensors giving the input types), partitioned for
    ``rank`` of ``mesh`` (default: the mesh of its strategies, else :func:`default_mesh` of
    the world; this process's rank).  Parameters the function uses become inputs after
    ``args`` (``parameters``), stored sharded as propagation lays them out."""

    def __init__(self, fn: Any, *args: Any, mesh: Optional[Mesh] = None,
                 rank: Optional[int] = None, outputs: str = "replicated",
                 fixed: Optional[dict[int, Assignment]] = None) -> None:
        types = [_type_of(a) for a in args]
        name = getattr(fn, "__name__", type(fn).__name__)
        self.whole, self.out_tree, captured = trace_function(fn, types, name,
                                                             capture_concrete=True)
        self.parameters = list(captured)
        self.num_args = len(args)
        self.mesh = mesh or mesh_of(self.whole) or default_mesh(groups.world().size)
        given: dict[int, TensorLayout] = {}
        for k, p in enumerate(self.parameters):
            strategy = PARAMETER_PLAN.get(p)
            if isinstance(strategy, TensorLayout):
                given[self.num_args + k] = strategy
        self.propagation = propagate(self.whole, self.mesh, given, fixed)
        self.rank = groups.world().rank if rank is None else int(rank)
        self.partition: Partition = partition(self.propagation, self.rank, outputs)

    @property
    def graph(self) -> Graph:
        """This rank's graph."""
        return self.partition.graph

    @property
    def input_layouts(self) -> list[TensorLayout]:
        return self.partition.input_layouts

    def for_rank(self, rank: int) -> Partition:
        """Another rank's partition (simulations, the cost model)."""
        return partition(self.propagation, rank)

    def local_arguments(self, *args: Any) -> list[np.ndarray]:
        """This rank's blocks of ``args`` and of the parameters."""
        whole = [a.numpy() if isinstance(a, Tensor) else np.asarray(a) for a in args]
        whole += [p.numpy() for p in self.parameters]
        return shard_inputs(self.partition, whole)

    def __call__(self, *local: Any) -> Any:
        """Run this rank's graph on its blocks (``local_arguments``); returns ``fn``'s
        result (whole on every rank)."""
        graph = self.partition.graph
        if any(n.op.startswith("parallel.") for n in graph.nodes):
            ensure_groups(self.mesh)
        env = {v.uid: x if isinstance(x, Tensor) else Tensor(x)
               for v, x in zip(graph.inputs, local)}
        for node in graph.nodes:
            args = [env[v.uid] for v in node.inputs if not isinstance(v.type, TokenType)]
            result = apply(node.op, *args, regions=node.regions, **node.attrs)
            results = result if isinstance(result, tuple) else (result,)
            tensors = [v for v in node.outputs if not isinstance(v.type, TokenType)]
            for v, r in zip(tensors, results):
                env[v.uid] = r
        return tree_unflatten(self.out_tree, [env[v.uid] for v in graph.outputs[:-1]])


def parallelize(fn: Any, *args: Any, mesh: Optional[Mesh] = None, rank: Optional[int] = None,
                outputs: str = "replicated") -> ShardedProgram:
    """``fn`` sharded by its strategies for this rank: see :class:`ShardedProgram`."""
    return ShardedProgram(fn, *args, mesh=mesh, rank=rank, outputs=outputs)


__all__ = ["ShardedProgram", "default_mesh", "ensure_groups", "parallelize"]
