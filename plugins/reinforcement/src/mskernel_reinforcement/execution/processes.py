"""Actor processes started here with :mod:`multiprocessing` — ``spawn``: a fresh
interpreter, so no thread or native state is inherited from the learner — each linked to the
learner by a pipe.  The learner waits on the pipes and on the processes' sentinels together,
so a process that ends is seen at once (see :mod:`.remote` for the protocol and what happens
when a process fails)."""

from __future__ import annotations

import multiprocessing as mp
import os
from multiprocessing.connection import Connection
from typing import Any, Optional

import numpy as np

from .base import ActorSetup
from .remote import Channel, ChannelClosed, RemoteActors, serve

__all__ = ["PipeChannel", "ProcessActors", "serve_pipe", "spread"]


def spread(actors: int, processes: int) -> list[tuple[int, ...]]:
    """Actor indices per process: contiguous blocks, sizes differing by at most one."""
    bounds = np.linspace(0, actors, processes + 1).round().astype(int)
    return [tuple(range(bounds[p], bounds[p + 1])) for p in range(processes)]


def serve_pipe(conn: Connection, setup: ActorSetup, indices: tuple[int, ...],
               restart: int) -> None:
    """The main function of an actor process: :func:`~.remote.serve` over the pipe, until
    the learner closes it or its end of the pipe is gone."""
    os.environ.setdefault("MSKERNEL_NUM_THREADS", "1")  # actors step small batches
    try:
        serve(conn.recv, conn.send, setup, indices, restart)
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        pass  # the learner is gone


class PipeChannel(Channel):
    """A process started here, running ``indices``, linked by a pipe."""

    def __init__(self, context: Any, setup: ActorSetup, slot: int, indices: tuple[int, ...],
                 restart: int) -> None:
        super().__init__(slot, indices, restart)
        self.conn, child = context.Pipe()
        self.process = context.Process(target=serve_pipe, args=(child, setup, indices, restart),
                                       name=f"mskernel-rl-actors-{slot}", daemon=True)
        self.process.start()
        child.close()

    def send(self, message: Any) -> bool:
        try:
            self.conn.send(message)
            return True
        except (BrokenPipeError, ConnectionResetError, EOFError, OSError):
            return False

    def receive(self) -> Optional[tuple[str, Any]]:
        try:
            if self.conn.poll(0):
                return self.conn.recv()  # type: ignore[no-any-return]
        except (EOFError, OSError):
            raise ChannelClosed(self.exit_reason()) from None
        if not self.process.is_alive():
            raise ChannelClosed(self.exit_reason())
        return None

    def handles(self) -> list[Any]:
        return [self.conn, self.process.sentinel]

    def exit_reason(self) -> str:
        self.process.join(1.0)
        code = self.process.exitcode
        if code is None:
            return "it stopped answering"
        if code < 0:
            return f"it was killed by signal {-code}"
        return f"it exited with code {code}"

    def stop(self, grace: float) -> None:
        self.process.join(grace)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(max(grace, 1.0))
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


class ProcessActors(RemoteActors):
    """``actors`` actors spread over ``processes`` processes started here."""

    def __init__(self, setup: ActorSetup, actors: int, processes: int, timeout: float,
                 startup_timeout: float, max_restarts: int) -> None:
        context = mp.get_context("spawn")

        def spawn(slot: int, indices: tuple[int, ...], restart: int) -> Channel:
            return PipeChannel(context, setup, slot, indices, restart)

        channels = [spawn(slot, indices, 0)
                    for slot, indices in enumerate(spread(actors, processes))]
        super().__init__(channels, spawn, timeout, startup_timeout, max_restarts)
