"""``mskernel.communication``: MindSpore's ``mindspore.communication`` on MPI.

    from mskernel.communication import init, get_rank, get_group_size, all_reduce
    init()                                   # MPI when launched by mskernel run / mpirun
    y = all_reduce(x)                        # the sum over every rank, on every rank

Process groups: ``init``, ``release``, ``get_rank``, ``get_group_size``, ``get_local_rank``,
``get_local_rank_size``, ``create_group``, ``destroy_group``, ``get_world_rank_from_group_rank``,
``get_group_rank_from_world_rank``, ``get_process_group_ranks``; ``GlobalComm.WORLD_COMM_GROUP``
(and ``HCCL_WORLD_COMM_GROUP``, ``NCCL_…``, ``MCCL_…``) names the world.  MindSpore's
primitive classes (``ops.AllReduce``, ...) are :mod:`mskernel_parallel.primitives`.  A process not launched as a rank is a world of one.

Collectives (each applies the op of the same name, :mod:`.ops`: eager or traced under
``@jit``, differentiable with mskernel-autodiff, ordered by the state token): ``all_reduce``,
``all_gather`` (``all_gather_into_tensor``), ``reduce_scatter`` (``reduce_scatter_tensor``),
``broadcast``, ``all_to_all``, ``send``, ``recv``, ``barrier``.  ``op`` is a :class:`ReduceOp`
name: ``"sum"``, ``"mean"``, ``"max"``, ``"min"``, ``"prod"``.
"""

from __future__ import annotations

from typing import Any, Optional

from mskernel_sdk import Tensor, apply, dtype as to_dtype

from . import groups, ops
from .errors import CollectiveMismatchError, CommunicationError, RankFailedError
from .groups import (
    create_group, destroy_group, get_group, group_ranks, init, is_initialized, release,
)

__all__ = [
    "CollectiveMismatchError", "CommunicationError", "GlobalComm", "HCCL_WORLD_COMM_GROUP",
    "MCCL_WORLD_COMM_GROUP", "NCCL_WORLD_COMM_GROUP", "RankFailedError", "ReduceOp",
    "all_gather", "all_gather_into_tensor", "all_reduce", "all_to_all", "barrier", "broadcast",
    "create_group", "destroy_group", "get_group_rank_from_world_rank", "get_group_size",
    "get_local_rank", "get_local_rank_size", "get_process_group_ranks", "get_rank",
    "get_world_rank_from_group_rank", "init", "is_initialized", "recv", "reduce_scatter",
    "reduce_scatter_tensor", "release", "send", "statistics",
]


class ReduceOp:
    """The reductions of ``all_reduce`` and ``reduce_scatter`` (MindSpore's names)."""

    SUM = "sum"
    MEAN = "mean"
    MAX = "max"
    MIN = "min"
    PROD = "prod"


class GlobalComm:
    """MindSpore's ``GlobalComm``: the name of the world group."""

    WORLD_COMM_GROUP = groups.WORLD
    BACKEND = "mpi"


#: MindSpore's names of the world group of each device backend (all the world here).
HCCL_WORLD_COMM_GROUP = "hccl_world_group"
NCCL_WORLD_COMM_GROUP = "nccl_world_group"
MCCL_WORLD_COMM_GROUP = "mccl_world_group"


def get_rank(group: Optional[str] = None) -> int:
    """This process's rank in ``group`` (default: the world)."""
    return get_group(group).rank


def get_group_size(group: Optional[str] = None) -> int:
    """The number of ranks of ``group`` (default: the world)."""
    return len(group_ranks(group))


def get_local_rank(group: Optional[str] = None) -> int:
    """This process's rank among the world's ranks on its machine."""
    _world_only(group, "get_local_rank")
    return groups.state().local_rank


def get_local_rank_size(group: Optional[str] = None) -> int:
    """How many ranks of the world run on this machine."""
    _world_only(group, "get_local_rank_size")
    return groups.state().local_size


def get_process_group_ranks(group: Optional[str] = None) -> list[int]:
    """The world ranks of ``group``, in group-rank order."""
    return list(group_ranks(group))


def get_world_rank_from_group_rank(group: str, group_rank_id: int) -> int:
    ranks = group_ranks(group)
    if not 0 <= group_rank_id < len(ranks):
        raise CommunicationError(f"group '{group}' has ranks 0 to {len(ranks) - 1}, not "
                                 f"{group_rank_id}")
    return ranks[group_rank_id]


def get_group_rank_from_world_rank(world_rank_id: int, group: str) -> int:
    ranks = group_ranks(group)
    if world_rank_id not in ranks:
        raise CommunicationError(f"world rank {world_rank_id} is not in group '{group}' "
                                 f"(world ranks {list(ranks)})")
    return ranks.index(world_rank_id)


def statistics(group: Optional[str] = None) -> dict[str, float]:
    """What this rank has communicated on ``group`` so far: ``collectives`` (calls; sends and
    receives are not counted), ``payload_bytes`` (the operands it handed to collectives and
    sends), ``check_bytes`` (the agreement checks before each collective,
    :mod:`mskernel_parallel.group`) and ``seconds`` (spent in MPI, waiting for the other ranks
    included)."""
    g = get_group(group)
    return {"collectives": g.collectives, "payload_bytes": g.payload_bytes,
            "check_bytes": g.check_bytes, "seconds": g.seconds}


def _world_only(group: Optional[str], what: str) -> None:
    if group is not None and group not in groups.WORLD_ALIASES:
        raise CommunicationError(f"{what} describes the world; got group {group!r}")


# -- collectives -------------------------------------------------------------------------------


def _as_tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _group_attrs(group: Optional[str]) -> dict[str, Any]:
    g = get_group(group)
    return {"group": g.name, "group_size": g.size}


def all_reduce(tensor: Any, op: str = ReduceOp.SUM, group: Optional[str] = None) -> Tensor:
    """The reduction ``op`` of every rank's ``tensor``, elementwise, on every rank."""
    return apply(ops.ALL_REDUCE, _as_tensor(tensor), reduction=op, **_group_attrs(group))


def all_gather(tensor: Any, group: Optional[str] = None) -> Tensor:
    """Every rank's ``tensor`` concatenated along axis 0 in rank order, on every rank."""
    return apply(ops.ALL_GATHER, _as_tensor(tensor), **_group_attrs(group))


def reduce_scatter(tensor: Any, op: str = ReduceOp.SUM, group: Optional[str] = None) -> Tensor:
    """The reduction of every rank's ``tensor``, split along axis 0 into one block per rank:
    this rank's block."""
    return apply(ops.REDUCE_SCATTER, _as_tensor(tensor), reduction=op, **_group_attrs(group))


def broadcast(tensor: Any, src: int = 0, group: Optional[str] = None) -> Tensor:
    """Rank ``src``'s ``tensor`` (group rank) on every rank."""
    return apply(ops.BROADCAST, _as_tensor(tensor), root=src, **_group_attrs(group))


def all_to_all(tensor: Any, split_axis: int = 0, concat_axis: int = 0,
               group: Optional[str] = None) -> Tensor:
    """``tensor`` split along ``split_axis`` into one block per rank, block ``j`` sent to rank
    ``j``; the blocks received, in rank order, concatenated along ``concat_axis``."""
    return apply(ops.ALL_TO_ALL, _as_tensor(tensor), split_axis=split_axis,
                 concat_axis=concat_axis, **_group_attrs(group))


def send(tensor: Any, dst: int = 0, group: Optional[str] = None, tag: int = 0) -> None:
    """Send ``tensor`` to rank ``dst`` (group rank); its ``recv`` with ``tag`` receives it."""
    apply(ops.SEND, _as_tensor(tensor), dest=dst, tag=tag, **_group_attrs(group))


def recv(tensor: Any, src: int = 0, group: Optional[str] = None, tag: int = 0,
         dtype: Any = None) -> Tensor:
    """The tensor rank ``src`` sent with ``tag``; ``tensor`` gives its shape and dtype
    (MindSpore passes a tensor to receive into; here it is only a template), or is a shape,
    with ``dtype`` (default float32)."""
    if isinstance(tensor, (tuple, list)):
        shape, dt = tuple(tensor), to_dtype(dtype or "float32")
    else:
        template = _as_tensor(tensor)
        shape, dt = template.shape, template.dtype
    return apply(ops.RECV, src=src, tag=tag, shape=shape, dtype=dt, **_group_attrs(group))


def barrier(group: Optional[str] = None) -> None:
    """Wait until every rank of ``group`` has called ``barrier``."""
    apply(ops.BARRIER, **_group_attrs(group))


#: MindSpore 2.x's functional names (``mindspore.communication.comm_func``).
all_gather_into_tensor = all_gather
reduce_scatter_tensor = reduce_scatter


