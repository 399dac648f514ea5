"""Where actors run: in the learner's process, in processes of their own, or on MPI ranks —
chosen by the run's :class:`~mskernel_reinforcement.config.ExecutionConfig`, behind one
interface (:class:`ActorGroup`) so an algorithm never knows which."""

from __future__ import annotations

from ..config import ExecutionConfig
from .base import ActorError, ActorFailure, ActorGroup, ActorSetup, LocalActors
from .mpi import MPIActors, uses_mpi
from .processes import ProcessActors

__all__ = ["ActorError", "ActorFailure", "ActorGroup", "ActorSetup",
           "LocalActors", "MPIActors", "ProcessActors", "actor_group", "uses_mpi"]


def actor_group(setup: ActorSetup, execution: ExecutionConfig) -> ActorGroup:
    """The actors ``execution`` asks for, started (on MPI, from rank 0)."""
    if execution.processes == 0:
        return LocalActors(setup, execution.actors)
    if uses_mpi(execution):
        return MPIActors(setup, execution)
    return ProcessActors(setup, execution.actors, execution.processes, execution.actor_timeout,
                         execution.startup_timeout, execution.max_restarts)
