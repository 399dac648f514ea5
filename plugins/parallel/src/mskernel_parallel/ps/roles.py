"""Who does what in parameter-server mode: one optional scheduler, the servers and the workers,
each a rank of the world.

By environment (MindSpore's): every rank sets ``MS_ROLE`` to ``MS_SCHED``, ``MS_PSERVER`` or
``MS_WORKER`` (``mpirun -n 1 -x MS_ROLE=MS_SCHED python train.py : -n 2 -x MS_ROLE=MS_PSERVER
...``); ``MS_SERVER_NUM`` and ``MS_WORKER_NUM``, when set, must match.  By arguments:
``num_servers`` servers after an optional scheduler on rank 0, the remaining ranks workers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..errors import CommunicationError
from ..group import ProcessGroup

SCHEDULER, SERVER, WORKER = "scheduler", "server", "worker"
_ENV_ROLES = {"MS_SCHED": SCHEDULER, "MS_PSERVER": SERVER, "MS_WORKER": WORKER}
_CODES = (SCHEDULER, SERVER, WORKER)


@dataclass(frozen=True)
class Roles:
    """The role of every world rank, and this rank's."""

    rank: int
    of_rank: tuple[str, ...]

    @property
    def role(self) -> str:
        return self.of_rank[self.rank]

    def ranks(self, role: str) -> tuple[int, ...]:
        return tuple(r for r, x in enumerate(self.of_rank) if x == role)

    @property
    def scheduler(self) -> Optional[int]:
        found = self.ranks(SCHEDULER)
        return found[0] if found else None

    @property
    def servers(self) -> tuple[int, ...]:
        return self.ranks(SERVER)

    @property
    def workers(self) -> tuple[int, ...]:
        return self.ranks(WORKER)


def assign(world: ProcessGroup, num_servers: Optional[int] = None,
           scheduler: bool = False) -> Roles:
    """Every rank's role (a collective over the world when roles come from ``MS_ROLE``)."""
    env_role = os.environ.get("MS_ROLE")
    if env_role is not None:
        if env_role not in _ENV_ROLES:
            raise CommunicationError(f"MS_ROLE={env_role!r}: expected one of "
                                     f"{', '.join(_ENV_ROLES)}")
        mine = np.array([_CODES.index(_ENV_ROLES[env_role])], np.int64)
        codes = world.all_gather(mine)
        roles = Roles(world.rank, tuple(_CODES[c] for c in codes))
    else:
        if num_servers is None:
            num_servers = int(os.environ.get("MS_SERVER_NUM", "1"))
        first = 1 if scheduler else 0
        if num_servers < 1 or first + num_servers >= world.size:
            raise CommunicationError(
                f"parameter server: {world.size} rank(s) cannot hold "
                f"{'a scheduler, ' if scheduler else ''}{num_servers} server(s) and at least one "
                "worker; launch more ranks or ask for fewer servers")
        of_rank = [SCHEDULER] * first + [SERVER] * num_servers
        roles = Roles(world.rank, tuple(of_rank + [WORKER] * (world.size - len(of_rank))))
    _check(roles)
    return roles


def _check(roles: Roles) -> None:
    if len(roles.ranks(SCHEDULER)) > 1:
        raise CommunicationError(f"parameter server: one scheduler at most, got ranks "
                                 f"{list(roles.ranks(SCHEDULER))}")
    if not roles.servers or not roles.workers:
        raise CommunicationError(f"parameter server: needs a server and a worker, got roles "
                                 f"{list(roles.of_rank)}")
    for name, role in (("MS_SERVER_NUM", SERVER), ("MS_WORKER_NUM", WORKER)):
        wanted = os.environ.get(name)
        if wanted is not None and int(wanted) != len(roles.ranks(role)):
            raise CommunicationError(f"{name}={wanted}, but {len(roles.ranks(role))} rank(s) "
                                     f"are {role}s: {list(roles.ranks(role))}")
