"""The seam between an algorithm and where its actors run: an :class:`ActorGroup` collects
trajectories from all its actors and passes the learner's weights to them, whether the actors
live in the learner's process (:class:`LocalActors`), in processes of their own
(:mod:`.processes`) or on MPI ranks (:mod:`.mpi`).

Every actor is built the same way, from an :class:`ActorSetup` — everything needed to build
it in any process: the algorithm (its class and configuration), the plan, the environment's
configuration and the run's seed.  Actor ``i`` started for the ``r``-th time draws its seed
from ``(seed, i, r)``, so a run is reproducible and a replacement actor does not repeat the
experience of the one it replaces.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

import numpy as np

from ..actor import Actor, Trajectory
from ..config import AlgorithmConfig, EnvConfig
from ..environment import Environment

__all__ = ["ActorError", "ActorFailure", "ActorGroup", "ActorSetup", "LocalActors",
           "serve_requests"]


class ActorError(RuntimeError):
    """Actors failed more often than the run allows (``max_restarts``)."""


@dataclass(frozen=True)
class ActorSetup:
    """How to build actor ``index`` of a run in any process (picklable: the algorithm class
    is pickled by reference, so it must be importable there)."""

    algorithm: type
    config: AlgorithmConfig
    plan: Any
    env: EnvConfig
    seed: int

    def seed_of(self, index: int, restart: int = 0) -> int:
        return int(np.random.SeedSequence([self.seed, index, restart]).generate_state(1)[0])

    def build(self, index: int, restart: int = 0) -> Actor:
        env = Environment(self.env.id, self.env.num_envs, self.env.vectorization,
                          **self.env.kwargs)
        policy = self.algorithm(self.config).policy(self.plan)
        return Actor(env, policy, self.seed_of(index, restart), index)


@dataclass
class ActorFailure:
    """An actor process that failed: which one (``worker`` and the actors it ran), how it
    ended (``reason``: its exit code or signal, its traceback, or a timeout), at which
    environment step of the run, and whether a replacement was started."""

    worker: int
    actors: tuple[int, ...]
    reason: str
    env_steps: int
    replaced: bool = field(default=False)

    def __str__(self) -> str:
        who = f"actor process {self.worker} (actors {', '.join(map(str, self.actors))})"
        then = "replaced by a new process" if self.replaced else "not replaced"
        return f"{who} failed at environment step {self.env_steps}: {self.reason}; {then}"


class ActorGroup(ABC):
    """The actors of a run.  :meth:`collect` returns one trajectory per actor, in actor
    order; :meth:`broadcast` replaces their policies' weights.  Failures the group recovered
    from are listed in :attr:`failures`."""

    def __init__(self) -> None:
        self.failures: list[ActorFailure] = []

    @abstractmethod
    def collect(self, steps: int, env_steps: int) -> list[Trajectory]:
        """``steps`` steps of every actor's environments, after telling each policy the
        run's progress (``env_steps`` so far)."""

    @abstractmethod
    def broadcast(self, weights: Mapping[str, np.ndarray]) -> None:
        """Send the learner's weights to every actor."""

    def close(self, result: Any = None) -> None:
        """Stop the actors and release their environments (handing ``result``, the run's
        result, to actor processes that return it)."""

    def __enter__(self) -> "ActorGroup":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class LocalActors(ActorGroup):
    """Actors in the learner's process, stepped one after the other."""

    def __init__(self, setup: ActorSetup, actors: int) -> None:
        super().__init__()
        self.actors = [setup.build(i) for i in range(actors)]

    def collect(self, steps: int, env_steps: int) -> list[Trajectory]:
        return serve_requests(self.actors, ("collect", steps, env_steps))

    def broadcast(self, weights: Mapping[str, np.ndarray]) -> None:
        serve_requests(self.actors, ("weights", weights))

    def close(self, result: Any = None) -> None:
        for actor in self.actors:
            actor.close()
        self.actors = []


def serve_requests(actors: list[Actor], request: tuple[Any, ...]) -> Optional[Any]:
    """Carry out one request of the learner on ``actors`` — ``("weights", weights)`` or
    ``("collect", steps, env_steps)`` (returning their trajectories) — wherever they run."""
    kind = request[0]
    if kind == "weights":
        for actor in actors:
            actor.policy.load_weights(request[1])
        return None
    if kind == "collect":
        _, steps, env_steps = request
        for actor in actors:
            actor.policy.set_progress(env_steps)
        return [actor.collect(steps) for actor in actors]
    raise ValueError(f"unknown actor request {kind!r}")
