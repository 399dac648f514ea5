"""Actors outside the learner's process, reached through channels.

A :class:`Channel` carries the learner's requests to one actor process — a process started
here (:mod:`.processes`) or an MPI rank (:mod:`.mpi`) — and its answers back.  The process
builds its actors, says ``("ready", None)``, then answers each request (:func:`serve`):

- ``("weights", weights)``: no answer;
- ``("collect", steps, env_steps)``: ``("data", trajectories)``, or ``("error", traceback)``
  if an actor raised;
- ``("close", payload)``: it stops (and :func:`serve` returns ``payload``).

:class:`RemoteActors` asks every process at once and waits for all of them with a deadline
per process — ``actor_timeout`` while collecting, ``startup_timeout`` while starting — so it
notices at once when one fails:

- its process ended (a crash, a signal) or its channel broke;
- an actor raised (its traceback comes back);
- it sent nothing before its deadline;

and in each case it reports the failure (a :class:`~.base.ActorFailure` in ``failures`` and
a warning on the ``"mskernel.rl"`` logger), starts a new local process in its place — the
same actors, reseeded, with the learner's last weights — and asks it again, up to
``max_restarts`` times in a run, after which :class:`~.base.ActorError` ends the run.
Nothing waits without a deadline.
"""

from __future__ import annotations

import logging
import time
import traceback
from abc import ABC, abstractmethod
from multiprocessing.connection import wait
from typing import Any, Callable, Mapping, Optional

import numpy as np

from ..actor import Trajectory
from .base import ActorError, ActorFailure, ActorGroup, ActorSetup, serve_requests

__all__ = ["Channel", "ChannelClosed", "RemoteActors", "serve"]

logger = logging.getLogger("mskernel.rl")

#: the longest a wait sleeps between looks at channels that cannot be waited on (MPI)
POLL_SECONDS = 0.005
#: seconds a closing process gets to exit before it is ended
CLOSE_GRACE = 5.0


class ChannelClosed(Exception):
    """The process behind a channel is gone; the message says how it ended."""


class Channel(ABC):
    """The learner's end of the link to one actor process, which runs the actors
    ``indices`` (started for the ``restart``-th time)."""

    def __init__(self, slot: int, indices: tuple[int, ...], restart: int) -> None:
        self.slot, self.indices, self.restart = slot, indices, restart
        self.ready = False

    @abstractmethod
    def send(self, message: Any) -> bool:
        """Send ``message``; False if the process is gone."""

    @abstractmethod
    def receive(self) -> Optional[tuple[str, Any]]:
        """The next message if one has arrived, else None (never blocks); raises
        :class:`ChannelClosed` if the process is gone."""

    def handles(self) -> list[Any]:
        """Objects :func:`multiprocessing.connection.wait` can wait on for this channel
        (empty: it must be polled)."""
        return []

    @abstractmethod
    def stop(self, grace: float) -> None:
        """Ask the process to close; end it if it has not after ``grace`` seconds (where
        this side can)."""

    def close(self, payload: Any) -> None:
        self.send(("close", payload))


def serve(receive: Callable[[], Any], send: Callable[[Any], None], setup: ActorSetup,
          indices: tuple[int, ...], restart: int) -> Any:
    """An actor process's loop: build actors ``indices``, then answer requests until
    ``("close", payload)``; returns the payload.  An actor's exception is sent back with its
    traceback and re-raised."""
    actors = []
    try:
        actors = [setup.build(i, restart) for i in indices]
        send(("ready", None))
        while True:
            request = receive()
            if request[0] == "close":
                return request[1]
            try:
                answer = serve_requests(actors, request)
            except Exception:
                send(("error", traceback.format_exc()))
                raise
            if answer is not None:
                send(("data", answer))
    finally:
        for actor in actors:
            actor.close()


class RemoteActors(ActorGroup):
    """Actor processes behind ``channels`` (see the module docstring); replacements are
    processes started here by ``spawn_local(slot, indices, restart)``."""

    def __init__(self, channels: list[Channel], spawn_local: Callable[..., Channel],
                 timeout: float, startup_timeout: float, max_restarts: int) -> None:
        super().__init__()
        self.channels = channels
        self.spawn_local = spawn_local
        self.timeout, self.startup_timeout = timeout, startup_timeout
        self.max_restarts = max_restarts
        self.weights: Optional[Mapping[str, np.ndarray]] = None
        self.env_steps = 0
        self._replaced: list[Channel] = []
        self._closed = False

    def broadcast(self, weights: Mapping[str, np.ndarray]) -> None:
        self.weights = weights
        for channel in list(self.channels):
            if not channel.send(("weights", weights)):
                self._replace(channel, "its channel is closed")

    def collect(self, steps: int, env_steps: int) -> list[Trajectory]:
        self.env_steps = env_steps
        request = ("collect", steps, env_steps)
        pending: dict[int, Channel] = {}
        deadline: dict[int, float] = {}
        for channel in list(self.channels):
            if not channel.send(request):
                channel = self._replace(channel, "its channel is closed", request)
            pending[channel.slot], deadline[channel.slot] = channel, self._deadline(channel)
        results: dict[int, list[Trajectory]] = {}
        while pending:
            self._wait(list(pending.values()), min(deadline.values()) - time.monotonic())
            for slot, channel in list(pending.items()):
                starting = not channel.ready
                failure = self._take_messages(channel, results)
                if slot in results:
                    del pending[slot], deadline[slot]
                    continue
                if failure is None and time.monotonic() >= deadline[slot]:
                    failure = (f"no trajectories within actor_timeout = {self.timeout:g} s"
                               if channel.ready else
                               f"not started within startup_timeout = {self.startup_timeout:g} s")
                if failure is not None:
                    channel = pending[slot] = self._replace(channel, failure, request)
                    deadline[slot] = self._deadline(channel)
                elif starting and channel.ready:
                    deadline[slot] = self._deadline(channel)   # started: now collecting
        return [t for slot in sorted(results) for t in results[slot]]

    def _deadline(self, channel: Channel) -> float:
        return time.monotonic() + (self.timeout if channel.ready else self.startup_timeout)

    @staticmethod
    def _wait(channels: list[Channel], timeout: float) -> None:
        handles = [h for c in channels for h in c.handles()]
        if all(c.handles() for c in channels):
            wait(handles, timeout=max(0.0, timeout))
        elif handles:
            wait(handles, timeout=min(max(0.0, timeout), POLL_SECONDS))
        else:
            time.sleep(min(max(0.0, timeout), POLL_SECONDS))

    @staticmethod
    def _take_messages(channel: Channel, results: dict[int, list[Trajectory]]) -> Optional[str]:
        """Read what ``channel`` has sent; the failure's description if it failed."""
        while True:
            try:
                message = channel.receive()
            except ChannelClosed as closed:
                return str(closed)
            if message is None:
                return None
            kind, payload = message
            if kind == "ready":
                channel.ready = True
            elif kind == "data":
                results[channel.slot] = payload
                return None
            else:
                return f"an actor raised:\n{payload}"

    def _replace(self, channel: Channel, reason: str,
                 request: Optional[tuple[Any, ...]] = None) -> Channel:
        """Report ``channel``'s failure, start its replacement (with the last weights) and
        give it ``request``."""
        channel.stop(grace=0.0)
        failure = ActorFailure(channel.slot, channel.indices, reason, self.env_steps)
        self.failures.append(failure)
        if len(self.failures) > self.max_restarts:
            raise ActorError(f"{failure}; actor processes failed {len(self.failures)} times, "
                             f"more than max_restarts = {self.max_restarts}")
        failure.replaced = True
        logger.warning("%s", failure)
        new = self.spawn_local(channel.slot, channel.indices, channel.restart + 1)
        self.channels[self.channels.index(channel)] = new
        self._replaced.append(channel)
        if self.weights is not None:
            new.send(("weights", self.weights))
        if request is not None:
            new.send(request)
        return new

    def close(self, result: Any = None) -> None:
        if self._closed:
            return
        self._closed = True
        everyone = self.channels + self._replaced   # an MPI rank written off still waits
        for channel in everyone:
            channel.close(result)
        for channel in self.channels:
            channel.stop(grace=CLOSE_GRACE)

