"""Where actors run: in the learner's process, in processes of their own, or on MPI ranks —
chosen by the run's :class:`~mskernel_reinforcement.config.ExecutionConfig`, behind one
interface (:class:`ActorGroup`) so an algorithm never knows which."""

from __future__ import annotations

from ..config import ExecutionConfig
from .base import ActorError, ActorFailure, ActorGroup, ActorSetup, LocalActors
from .processes import ActorFailedWarning, ProcessActors

__all__ = ["ActorError", "ActorFailedWarning", "ActorFailure", "ActorGroup", "ActorSetup",
           "LocalActors", "ProcessActors", "actor_group"]


def actor_group(setup: ActorSetup, execution: ExecutionConfig) -> ActorGroup:
    """The actors ``execution`` asks for, started."""
    if execution.processes == 0:
        return LocalActors(setup, execution.actors)
    return ProcessActors(setup, execution.actors, execution.processes, execution.actor_timeout,
                         execution.startup_timeout, execution.max_restarts)
