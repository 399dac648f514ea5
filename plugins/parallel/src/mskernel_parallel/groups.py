"""The process groups of this process: the world and the groups created by name.

``init()`` starts the communication engine: MPI when the process was launched as a rank
(``mskernel run``, ``mpirun``; see :func:`~mskernel_parallel.mpi.launched_by_mpi`), else a
world of one process, with no MPI at all.  Every function here initialises on first use, so
``get_rank()`` or a collective works without an explicit ``init()``.
"""

from __future__ import annotations

import threading
import warnings
import zlib
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from .errors import CommunicationError
from .group import ProcessGroup
from .mpi import launched_by_mpi, mpi

#: The name of the group of every rank.
WORLD = "world"
#: MindSpore's names of the world group, accepted for it.
WORLD_ALIASES = frozenset({WORLD, "hccl_world_group", "nccl_world_group", "mccl_world_group"})
#: ``init(backend_name)``: the engines, and MindSpore's device backends (collectives here run on
#: host memory over MPI whichever of these a script names).
ENGINES = ("mpi", "self")
_DEVICE_BACKENDS = ("hccl", "nccl", "mccl", "lccl")


@dataclass
class _State:
    engine: str
    world: ProcessGroup
    local_rank: int
    local_size: int
    groups: dict[str, ProcessGroup] = field(default_factory=dict)
    #: groups this rank is not a member of: name -> their world ranks
    others: dict[str, tuple[int, ...]] = field(default_factory=dict)


_state: Optional[_State] = None
_lock = threading.Lock()


def init(backend_name: Optional[str] = None) -> None:
    """Start communication (idempotent).  ``backend_name``: ``"mpi"``, ``"self"`` (a world of
    one process), ``None`` (MPI when launched as a rank, else ``"self"``), or one of
    MindSpore's ``"hccl"``/``"nccl"``/``"mccl"``, which run on MPI here."""
    global _state
    name = (backend_name or "").lower()
    if name in _DEVICE_BACKENDS:
        warnings.warn(f"init({backend_name!r}): mskernel's collectives run on host memory over "
                      "MPI; using MPI", stacklevel=2)
        name = "mpi"
    if name and name not in ENGINES:
        raise CommunicationError(f"init: unknown backend {backend_name!r}; expected one of "
                                 f"{', '.join(ENGINES + _DEVICE_BACKENDS)} or None")
    with _lock:
        if _state is not None:
            if name and name != _state.engine:
                raise CommunicationError(f"init({backend_name!r}): communication is already "
                                         f"initialised with '{_state.engine}'; release() first")
            return
        engine = name or ("mpi" if launched_by_mpi() else "self")
        _state = _start_mpi() if engine == "mpi" else _State(
            "self", ProcessGroup(WORLD, (0,), 0), local_rank=0, local_size=1)


def _start_mpi() -> _State:
    from . import faults

    MPI = mpi()
    comm = MPI.COMM_WORLD.Dup()
    local = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED)
    world = ProcessGroup(WORLD, range(comm.Get_size()), comm.Get_rank(), comm)
    state = _State("mpi", world, local.Get_rank(), local.Get_size())
    local.Free()
    faults.install(world.rank, world.size)
    return state


def release() -> None:
    """Free the groups (MPI itself is finalised when the process exits)."""
    global _state
    with _lock:
        if _state is None:
            return
        for g in [*_state.groups.values(), _state.world]:
            g.close()
            if g.comm is not None:
                g.comm.Free()
        _state = None


def is_initialized() -> bool:
    return _state is not None


def state() -> _State:
    if _state is None:
        init()
    assert _state is not None
    return _state


def engine() -> str:
    """``"mpi"`` or ``"self"``."""
    return state().engine


def world() -> ProcessGroup:
    return state().world


def get_group(name: Optional[str] = None) -> ProcessGroup:
    """The group called ``name`` (``None``: the world) that this rank is a member of."""
    s = state()
    if name is None or name in WORLD_ALIASES:
        return s.world
    if name in s.groups:
        return s.groups[name]
    if name in s.others:
        raise CommunicationError(
            f"rank {s.world.rank} is not a member of group '{name}' (world ranks "
            f"{list(s.others[name])}); only its members use it")
    known = ", ".join(sorted([WORLD, *s.groups, *s.others]))
    raise CommunicationError(f"no process group '{name}'; known: {known}; create it with "
                             "create_group(name, ranks)")


def group_ranks(name: Optional[str] = None) -> tuple[int, ...]:
    """The world ranks of group ``name``, whether or not this rank is a member."""
    s = state()
    if name is not None and name in s.others:
        return s.others[name]
    return get_group(name).ranks


def create_group(name: str, ranks: Sequence[int]) -> None:
    """Create group ``name`` of the world ranks ``ranks`` (group rank ``i`` is ``ranks[i]``).
    Its members call it together; another rank may call it too and only records it."""
    s = state()
    if not isinstance(name, str) or not name or name in WORLD_ALIASES:
        raise CommunicationError(f"create_group: invalid group name {name!r}")
    if name in s.groups or name in s.others:
        raise CommunicationError(f"create_group: group '{name}' exists; destroy_group it first")
    members = tuple(int(r) for r in ranks)
    if not members or len(set(members)) != len(members) or not all(
            0 <= r < s.world.size for r in members):
        raise CommunicationError(
            f"create_group('{name}'): ranks must be distinct world ranks 0 to "
            f"{s.world.size - 1}, got {list(ranks)}")
    me = s.world.rank
    if me not in members:
        s.others[name] = members
        return
    comm: Any = None
    if s.world.comm is not None:
        MPI = mpi()
        sub = s.world.comm.Get_group().Incl(list(members))
        tag = zlib.crc32(name.encode()) % 32768
        try:
            comm = s.world.comm.Create_group(sub, tag)
        except MPI.Exception as exc:
            from .mpi import failure_error

            raise failure_error(s.world.comm, f"create_group('{name}')", exc) from None
    s.groups[name] = ProcessGroup(name, members, members.index(me), comm)


def destroy_group(name: str) -> None:
    """Forget group ``name`` (its members call it together)."""
    s = state()
    if name in s.others:
        del s.others[name]
        return
    g = get_group(name)
    if g is s.world:
        raise CommunicationError("destroy_group: the world group cannot be destroyed")
    g.close()
    if g.comm is not None:
        g.comm.Free()
    del s.groups[name]
