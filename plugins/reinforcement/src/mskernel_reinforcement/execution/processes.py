"""Actors in processes of their own, started with :mod:`multiprocessing` (``spawn``: a fresh
interpreter, so no thread or native state is inherited from the learner).

Each process runs some of the run's actors and answers the learner's requests over a pipe
(:func:`serve_pipe`): ``("weights", w)``, ``("collect", steps, env_steps)`` → its actors'
trajectories, ``("close",)``.  All processes collect at once; the learner waits on the pipes
and on the processes' sentinels together, with a deadline, so it sees at once when one
dies:

- a process that exits (a crash, a signal, ``os._exit``) or whose actor raised (its traceback
  comes back over the pipe) is reported;
- a process that sends nothing for ``actor_timeout`` seconds while collecting (or for
  ``startup_timeout`` seconds while starting: importing, building its environments) is
  killed and reported;

and in each case a new process takes its place — with the same actors, reseeded, and the
learner's last weights — and is asked again, up to ``max_restarts`` times in a run, after
which :class:`~.base.ActorError` ends the run.  Nothing waits without a deadline.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import time
import traceback
import warnings
from multiprocessing.connection import Connection, wait
from typing import Any, Mapping, Optional

import numpy as np

from ..actor import Trajectory
from .base import ActorError, ActorFailure, ActorGroup, ActorSetup, serve_requests

__all__ = ["ActorFailedWarning", "ProcessActors", "serve_pipe", "spread"]

logger = logging.getLogger("mskernel.rl")

#: seconds a closing process gets to exit before it is terminated
CLOSE_GRACE = 5.0


class ActorFailedWarning(RuntimeWarning):
    """An actor process failed and was replaced."""


def spread(actors: int, processes: int) -> list[tuple[int, ...]]:
    """Actor indices per process: contiguous blocks, sizes differing by at most one."""
    bounds = np.linspace(0, actors, processes + 1).round().astype(int)
    return [tuple(range(bounds[p], bounds[p + 1])) for p in range(processes)]


def serve_pipe(conn: Connection, setup: ActorSetup, indices: tuple[int, ...],
               restart: int) -> None:
    """An actor process's main loop: build the actors, then answer requests until
    ``("close",)`` or until the learner's end of the pipe closes."""
    os.environ.setdefault("MSKERNEL_NUM_THREADS", "1")  # actors step small batches
    actors = []
    try:
        actors = [setup.build(i, restart) for i in indices]
        conn.send(("ready", None))
        while True:
            request = conn.recv()
            if request[0] == "close":
                break
            answer = serve_requests(actors, request)
            if answer is not None:
                conn.send(("data", answer))
    except (EOFError, KeyboardInterrupt, BrokenPipeError):
        pass  # the learner is gone
    except BaseException:
        try:
            conn.send(("error", traceback.format_exc()))
        finally:
            raise
    finally:
        for actor in actors:
            actor.close()


class _Worker:
    """One actor process, as the learner sees it."""

    def __init__(self, context: Any, setup: ActorSetup, slot: int, indices: tuple[int, ...],
                 restart: int) -> None:
        self.slot, self.indices, self.restart = slot, indices, restart
        self.ready = False
        self.conn, child = context.Pipe()
        self.process = context.Process(target=serve_pipe, args=(child, setup, indices, restart),
                                       name=f"mskernel-rl-actors-{slot}", daemon=True)
        self.process.start()
        child.close()

    def send(self, message: Any) -> bool:
        """Send ``message``; False if the process is gone."""
        try:
            self.conn.send(message)
            return True
        except (BrokenPipeError, ConnectionResetError, EOFError, OSError):
            return False

    def stop(self, grace: float) -> None:
        self.send(("close",))
        self.process.join(grace)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(grace)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()

    def exit_reason(self) -> str:
        self.process.join(1.0)
        code = self.process.exitcode
        if code is None:
            return "it stopped answering"
        if code < 0:
            return f"it was killed by signal {-code}"
        return f"it exited with code {code}"


class ProcessActors(ActorGroup):
    """``actors`` actors spread over ``processes`` processes (see the module docstring)."""

    def __init__(self, setup: ActorSetup, actors: int, processes: int, timeout: float,
                 startup_timeout: float, max_restarts: int) -> None:
        super().__init__()
        self.setup, self.max_restarts = setup, max_restarts
        self.timeout, self.startup_timeout = timeout, startup_timeout
        self.context = mp.get_context("spawn")
        self.workers = [_Worker(self.context, setup, slot, indices, 0)
                        for slot, indices in enumerate(spread(actors, processes))]
        self.weights: Optional[Mapping[str, np.ndarray]] = None
        self.env_steps = 0

    def broadcast(self, weights: Mapping[str, np.ndarray]) -> None:
        self.weights = weights
        for worker in list(self.workers):
            if not worker.send(("weights", weights)):
                self._replace(worker, worker.exit_reason())

    def collect(self, steps: int, env_steps: int) -> list[Trajectory]:
        self.env_steps = env_steps
        request = ("collect", steps, env_steps)
        pending = {w.slot: w for w in self.workers}
        deadline = {slot: self._deadline(w) for slot, w in pending.items()}
        for worker in list(pending.values()):
            if not worker.send(request):
                pending[worker.slot] = self._replace(worker, worker.exit_reason(), request)
                deadline[worker.slot] = self._deadline(pending[worker.slot])
        results: dict[int, list[Trajectory]] = {}
        while pending:
            waiting = min(deadline[s] for s in pending) - time.monotonic()
            handles = [h for w in pending.values() for h in (w.conn, w.process.sentinel)]
            ready = set(wait(handles, timeout=max(0.0, waiting)))
            for slot, worker in list(pending.items()):
                failure = None
                if worker.conn in ready:
                    failure = self._receive(worker, results)
                    if worker.ready and slot not in results and failure is None:
                        deadline[slot] = self._deadline(worker)   # started: now collecting
                elif worker.process.sentinel in ready:
                    failure = worker.exit_reason()
                elif time.monotonic() >= deadline[slot]:
                    failure = (f"no trajectories within actor_timeout = {self.timeout:g} s"
                               if worker.ready else
                               f"not started within startup_timeout = {self.startup_timeout:g} s")
                if slot in results:
                    del pending[slot]
                elif failure is not None:
                    pending[slot] = self._replace(worker, failure, request)
                    deadline[slot] = self._deadline(pending[slot])
        return [t for slot in sorted(results) for t in results[slot]]

    def _deadline(self, worker: _Worker) -> float:
        return time.monotonic() + (self.timeout if worker.ready else self.startup_timeout)

    def _receive(self, worker: _Worker, results: dict[int, list[Trajectory]]) -> Optional[str]:
        """Read one message; the failure's description if the worker failed."""
        try:
            kind, payload = worker.conn.recv()
        except (EOFError, OSError):
            return worker.exit_reason()
        if kind == "ready":
            worker.ready = True
        elif kind == "data":
            results[worker.slot] = payload
        else:
            return f"an actor raised:\n{payload}"
        return None

    def _replace(self, worker: _Worker, reason: str,
                 request: Optional[tuple[Any, ...]] = None) -> _Worker:
        """Report ``worker``'s failure, start its replacement (with the last weights) and
        give it ``request``."""
        worker.stop(grace=0.0)
        failure = ActorFailure(worker.slot, worker.indices, reason, self.env_steps)
        self.failures.append(failure)
        if len(self.failures) > self.max_restarts:
            raise ActorError(f"{failure}; actor processes failed {len(self.failures)} times, "
                             f"more than max_restarts = {self.max_restarts}")
        failure.replaced = True
        logger.warning("%s", failure)
        warnings.warn(str(failure), ActorFailedWarning, stacklevel=2)
        new = _Worker(self.context, self.setup, worker.slot, worker.indices, worker.restart + 1)
        self.workers[self.workers.index(worker)] = new
        if self.weights is not None:
            new.send(("weights", self.weights))
        if request is not None:
            new.send(request)
        return new

    def close(self) -> None:
        for worker in self.workers:
            worker.send(("close",))
        for worker in self.workers:
            worker.stop(CLOSE_GRACE)
