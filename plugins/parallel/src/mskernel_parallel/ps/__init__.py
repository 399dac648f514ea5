"""The parameter server (MindSpore's PS mode) on MPI: ``mskernel.parallel.ps``.

Ranks take roles — an optional scheduler, servers holding the parameters sharded between them,
workers computing gradients — from ``MS_ROLE`` (MindSpore's environment) or from
:func:`init`'s arguments.  The same script runs on every rank::

    from mskernel.parallel import ps
    role = ps.init(num_servers=2, scheduler=True)   # servers and the scheduler serve here
    worker = role.worker(net.trainable_params(), learning_rate=0.1, momentum=0.9,
                         mode="sync")               # or "async"
    for x, y in shard:
        loss, grads = grad_fn(x, y)
        worker.step(grads)                          # push gradients, load new parameters
    worker.finish()

On a server or the scheduler, :func:`init` serves until every worker has finished and then
ends the process (as MindSpore's servers do), so the training code after it runs on workers
only; ``init(exit=False)`` returns the :class:`Role` instead, with the server's report.

A worker whose process ends is reported by each server at once (Open MPI's failure notice,
under ``mskernel run``), and one silent for ``worker_timeout`` seconds (default 60) is
reported as unresponsive; training goes on with the others.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from .. import groups
from .roles import SCHEDULER, SERVER, WORKER, Roles, assign
from .server import Server, ServerReport, run_scheduler
from .worker import Worker, WorkerStopped

__all__ = ["Role", "Worker", "WorkerStopped", "init"]


@dataclass
class Role:
    """This rank's part: ``name`` is ``"scheduler"``, ``"server"`` or ``"worker"``."""

    name: str
    roles: Roles
    comm: Any
    report: Optional[ServerReport] = None
    summary: Optional[list[str]] = None

    @property
    def is_worker(self) -> bool:
        return self.name == WORKER

    def worker(self, parameters: Sequence[Any], learning_rate: float, momentum: float = 0.0,
               mode: str = "sync") -> Worker:
        """This worker's connection to the servers (see :class:`Worker`)."""
        if not self.is_worker:
            raise RuntimeError(f"rank {self.roles.rank} is the {self.name}, not a worker")
        return Worker(self.comm, self.roles, parameters, learning_rate, momentum, mode)


def init(num_servers: Optional[int] = None, scheduler: bool = False,
         worker_timeout: float = 60.0, exit: bool = True) -> Role:
    """Take this rank's role; servers and the scheduler serve until training ends (then end
    the process, unless ``exit=False``)."""
    world = groups.world()
    roles = assign(world, num_servers, scheduler)
    comm = world.comm.Dup() if world.comm is not None else None
    if comm is None:
        raise RuntimeError("the parameter server needs several ranks: launch with "
                           "mskernel run -n N")
    role = Role(roles.role, roles, comm)
    if roles.role == SERVER:
        role.report = Server(comm, roles, worker_timeout).serve()
    elif roles.role == SCHEDULER:
        role.summary = run_scheduler(comm, roles)
    if exit and not role.is_worker:
        sys.exit(0)
    return role
