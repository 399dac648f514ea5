"""A parameter server: holds one contiguous shard of the model's parameters (flattened), and
updates it with SGD with momentum (MindSpore's ``Momentum``: ``v = m·v + g``, ``p -= lr·v``)
from the gradients the workers push.

- ``sync``: a round ends when every live worker has pushed its gradient for it; the server
  applies their mean and sends the new shard to each.  N workers with batch B each then train
  exactly as one process with batch N·B.
- ``async``: each pushed gradient is applied at once and the updated shard sent back to its
  worker (Hogwild-style staleness, no waiting).

A worker whose process ends is reported at once (MPI's failure notice) and left out of later
rounds; one that sends nothing for ``worker_timeout`` seconds is reported as unresponsive and
left out too (told to stop if it comes back).  The server ends when every worker has finished
or been left out, and reports each lost worker to the scheduler when there is one.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .roles import Roles
from .wire import (
    TAG_DONE, TAG_INIT, TAG_PARAMS, TAG_PULL, TAG_PUSH, TAG_REPORT, TAG_STOP, Inbox, PeerSilent,
    pack,
)

MODES = ("sync", "async")
#: how often a waiting server checks for silent workers
CHECK_SECONDS = 1.0


@dataclass
class Lost:
    rank: int
    step: int
    why: str


@dataclass
class ServerReport:
    """What a server did: rounds (sync) or updates (async) applied, and the workers it lost."""

    updates: int = 0
    lost: list[Lost] = field(default_factory=list)


class Server:
    def __init__(self, comm: Any, roles: Roles, worker_timeout: float) -> None:
        self.comm = comm
        self.roles = roles
        self.index = roles.servers.index(roles.rank)
        self.live = set(roles.workers)
        self.step_of: dict[int, int] = {w: 0 for w in roles.workers}
        self.report = ServerReport()
        self.worker_timeout = worker_timeout
        self.inbox = Inbox(comm, self._failed)

    def serve(self) -> ServerReport:
        init = self.inbox.receive([self.roles.workers[0]], [TAG_INIT])
        self.params = init.values.astype(np.float32)
        learning_rate, momentum, mode_code = (float(v) for v in self.inbox.receive(
            [self.roles.workers[0]], [TAG_INIT]).values)
        self.learning_rate, self.momentum = np.float32(learning_rate), np.float32(momentum)
        self.mode = MODES[int(mode_code)]
        self.velocity = np.zeros_like(self.params)
        pending: dict[int, np.ndarray] = {}
        heard = {rank: time.monotonic() for rank in self.live}
        while self.live:
            try:
                message = self.inbox.receive(self.live, (TAG_PUSH, TAG_PULL, TAG_DONE),
                                             CHECK_SECONDS)
            except PeerSilent:
                pass
            else:
                heard[message.source] = time.monotonic()
                self._handle(message, pending)
            now = time.monotonic()
            for rank in sorted(self.live - set(pending)):  # pending ones wait for this server
                if now - heard[rank] > self.worker_timeout:
                    self._lose(rank, f"sent nothing for {self.worker_timeout:g} s")
            if self.mode == "sync" and pending and self.live <= set(pending):
                self._round(pending)
        self._tell_scheduler()
        return self.report

    def _handle(self, message: Any, pending: dict[int, np.ndarray]) -> None:
        rank = message.source
        if message.tag == TAG_PULL:
            self._send(rank, TAG_PARAMS, self.params)
        elif message.tag == TAG_DONE:
            self.live.discard(rank)
        elif message.values.size != self.params.size:
            self._lose(rank, f"pushed {message.values.size} values for a shard of "
                             f"{self.params.size}: its model differs")
        elif self.mode == "async":
            self._apply(message.values)
            self.step_of[rank] = message.word
            self._send(rank, TAG_PARAMS, self.params)
        else:
            pending[rank] = message.values.copy()
            self.step_of[rank] = message.word

    def _round(self, pending: dict[int, np.ndarray]) -> None:
        self._apply(np.mean(np.stack(list(pending.values())), axis=0, dtype=np.float32))
        for rank in pending:
            self._send(rank, TAG_PARAMS, self.params)
        pending.clear()

    def _apply(self, gradient: np.ndarray) -> None:
        self.velocity *= self.momentum
        self.velocity += gradient
        self.params -= self.learning_rate * self.velocity
        self.report.updates += 1

    def _send(self, rank: int, tag: int, values: np.ndarray) -> None:
        self.comm.Send(pack(self.report.updates, values), dest=rank, tag=tag)

    def _failed(self, ranks: tuple[int, ...]) -> None:
        for rank in ranks:
            if rank in self.live:
                self._lose(rank, "its process ended")

    def _lose(self, rank: int, why: str) -> None:
        if rank not in self.live:
            return
        self.live.discard(rank)
        worker = self.roles.workers.index(rank)
        lost = Lost(rank, self.step_of.get(rank, 0), why)
        self.report.lost.append(lost)
        sys.stderr.write(f"parameter server {self.index} (rank {self.roles.rank}): worker "
                         f"{worker} (rank {rank}) lost after step {lost.step}: {why}; going on "
                         f"with {len(self.live)} worker(s)\n")
        sys.stderr.flush()
        if "ended" not in why:
            try:  # a silent worker that comes back learns it was left out
                self.comm.Send(pack(0), dest=rank, tag=TAG_STOP)
            except Exception:  # noqa: BLE001 - it may be gone by now
                pass

    def _tell_scheduler(self) -> None:
        if self.roles.scheduler is None:
            return
        lost = np.array([[x.rank, x.step] for x in self.report.lost] or np.zeros((0, 2)),
                        np.float64)
        self.comm.Send(pack(self.report.updates, lost.reshape(-1)), dest=self.roles.scheduler,
                       tag=TAG_REPORT)


def run_scheduler(comm: Any, roles: Roles) -> list[str]:
    """The scheduler: waits until every worker has finished (or been lost) and every server has
    reported, and returns the cluster's summary lines (also printed)."""
    finished: set[int] = set()
    dead: set[int] = set()
    inbox = Inbox(comm, lambda ranks: dead.update(ranks))
    lines = []
    waiting = set(roles.workers) | set(roles.servers)
    while waiting - dead:
        try:
            message = inbox.receive(waiting - dead, (TAG_DONE, TAG_REPORT))
        except PeerSilent:  # the rest ended
            continue
        waiting.discard(message.source)
        if message.tag == TAG_DONE:
            finished.add(message.source)
            continue
        lost = message.values.reshape(-1, 2).astype(int)
        server = roles.servers.index(message.source)
        lines.append(f"server {server} (rank {message.source}): {message.word} update(s)"
                     + "".join(f"; lost worker rank {r} after step {s}" for r, s in lost))
    lines.append(f"scheduler: {len(finished)} of {len(roles.workers)} worker(s) finished"
                 + (f", rank(s) {sorted(dead)} ended early" if dead else ""))
    print("\n".join(lines), flush=True)
    return lines


