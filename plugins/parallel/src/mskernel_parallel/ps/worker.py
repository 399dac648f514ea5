"""A parameter-server worker: computes gradients on its data, pushes them to the servers (each
its shard of the flattened gradient) and takes the updated parameters back."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..errors import CommunicationError, RankFailedError
from .roles import Roles
from .server import MODES
from .wire import TAG_DONE, TAG_INIT, TAG_PARAMS, TAG_PULL, TAG_PUSH, TAG_STOP, Inbox, pack


class WorkerStopped(CommunicationError):
    """A server left this worker out (it was silent too long)."""


class Worker:
    """Trains ``parameters`` (mskernel Parameters, the same model on every worker) on the
    parameter servers: ``step(grads)`` after each backward pass.  The first worker gives the
    servers the initial values and the optimizer (``learning_rate``, ``momentum``, ``mode``
    ``"sync"`` or ``"async"``); every worker starts from the servers' values."""

    def __init__(self, comm: Any, roles: Roles, parameters: Sequence[Any],
                 learning_rate: float, momentum: float = 0.0, mode: str = "sync",
                 server_timeout: float = 600.0) -> None:
        if mode not in MODES:
            raise CommunicationError(f"parameter server: mode must be one of {MODES}, got "
                                     f"{mode!r}")
        self.comm, self.roles, self.parameters = comm, roles, list(parameters)
        self.index = roles.workers.index(roles.rank)
        self.steps = 0
        self.server_timeout = server_timeout
        self.inbox = Inbox(comm, self._server_failed)
        sizes = [int(np.prod(p.shape)) for p in self.parameters]
        self.offsets = np.cumsum([0, *sizes])
        bounds = np.linspace(0, self.offsets[-1], len(roles.servers) + 1).round().astype(int)
        self.shards = list(zip(bounds[:-1], bounds[1:]))
        if self.index == 0:
            flat = self._flatten([p.numpy() for p in self.parameters])
            hyper = np.array([learning_rate, momentum, MODES.index(mode)], np.float64)
            for server, (lo, hi) in zip(roles.servers, self.shards):
                comm.Send(pack(0, flat[lo:hi]), dest=server, tag=TAG_INIT)
                comm.Send(pack(0, hyper), dest=server, tag=TAG_INIT)
        self.pull()

    def step(self, grads: Sequence[Any]) -> None:
        """Push the gradients (one per parameter, tensors or arrays) and load the updated
        parameters (in ``sync`` mode after every worker's push of this step)."""
        self.steps += 1
        flat = self._flatten([np.asarray(g, np.float32) for g in grads])
        for server, (lo, hi) in zip(self.roles.servers, self.shards):
            self.comm.Send(pack(self.steps, flat[lo:hi]), dest=server, tag=TAG_PUSH)
        self._receive_params()

    def pull(self) -> None:
        """Load the servers' current parameters."""
        for server in self.roles.servers:
            self.comm.Send(pack(0), dest=server, tag=TAG_PULL)
        self._receive_params()

    def finish(self) -> None:
        """Tell the servers (and the scheduler) this worker is done."""
        for rank in (*self.roles.servers, *([self.roles.scheduler]
                                            if self.roles.scheduler is not None else [])):
            self.comm.Send(pack(self.steps), dest=rank, tag=TAG_DONE)

    def _receive_params(self) -> None:
        flat = np.empty(self.offsets[-1], np.float32)
        for server, (lo, hi) in zip(self.roles.servers, self.shards):
            message = self.inbox.receive([server], (TAG_PARAMS, TAG_STOP), self.server_timeout)
            if message.tag == TAG_STOP:
                raise WorkerStopped(f"worker {self.index} (rank {self.roles.rank}): server rank "
                                    f"{server} left this worker out of training")
            flat[lo:hi] = message.values
        for p, lo, hi in zip(self.parameters, self.offsets[:-1], self.offsets[1:]):
            p.set_data(flat[lo:hi].reshape(p.shape).astype(np.asarray(p.numpy()).dtype))

    def _flatten(self, arrays: list[np.ndarray]) -> np.ndarray:
        return np.concatenate([a.reshape(-1).astype(np.float32) for a in arrays])

    def _server_failed(self, ranks: tuple[int, ...]) -> None:
        servers = [r for r in ranks if r in self.roles.servers]
        if servers:
            raise RankFailedError(f"worker {self.index} (rank {self.roles.rank}): parameter "
                                  f"server rank(s) {servers} ended", tuple(servers))
