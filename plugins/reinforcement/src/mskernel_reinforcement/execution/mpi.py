"""Actors on MPI ranks: the same program started on ``processes + 1`` ranks —
``mskernel run -n N train.py`` (mskernel-parallel's launcher, which starts ranks with Open
MPI's fault tolerance so a failed rank is reported rather than ending the job) or
``mpirun -n N python train.py`` — learns on rank 0 while every other rank runs its share of
the actors, with messages through mpi4py.

:meth:`Trainer.train <mskernel_reinforcement.trainer.Trainer.train>` does the right thing on
every rank: rank 0 trains through :class:`MPIActors`, the others :func:`serve_rank` until
rank 0 closes them, and every rank returns the run's result.

A rank that fails is replaced, as an actor process always is, by a process started beside
the learner (the job's ranks are fixed once it is launched).  A rank whose actor raised sends
its traceback and then waits, idle, for the end of the run, so that the job itself goes on.

A job that lost a rank ends without ``MPI_Finalize``: Open MPI's finalize waits for every rank
of the job, the dead one included, and depending on timing it returns in seconds or not at all
(minutes under load).  Rank 0 knows which ranks failed and says so in the close it sends the
others; each survivor then leaves MPI at exit without finalizing, as the failed rank did.
"""

from __future__ import annotations

import os
from typing import Any, Optional

from ..config import ExecutionConfig
from .base import ActorSetup
from .processes import PipeChannel, spread
from .remote import Channel, ChannelClosed, RemoteActors, serve

__all__ = ["MPIActors", "MPIChannel", "launched_on_ranks", "mpi_world", "serve_rank",
           "skip_finalize"]

#: variables an MPI launcher sets in each rank's environment (Open MPI, PMIx, MPICH's Hydra)
LAUNCH_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK")
#: message tags: the learner's requests, the actors' answers
REQUEST, ANSWER = 11, 12


def launched_on_ranks() -> bool:
    """Whether an MPI launcher started this process (checked without importing MPI)."""
    return any(name in os.environ for name in LAUNCH_VARIABLES)


def mpi_world() -> Any:
    """mpi4py's ``COMM_WORLD`` (initialising MPI, with errors raised as exceptions)."""
    try:
        import mpi4py
    except ImportError:
        raise ImportError("actors on MPI ranks need mpi4py: pip install "
                          "'mskernel-reinforcement[mpi]'") from None
    mpi4py.rc.errors = "exception"
    from mpi4py import MPI

    return MPI.COMM_WORLD


def uses_mpi(execution: ExecutionConfig) -> bool:
    """Whether a run with ``execution`` places its actors on MPI ranks."""
    if execution.processes == 0:
        return False
    if execution.launcher == "mpi":
        return True
    return execution.launcher == "auto" and launched_on_ranks() and \
        mpi_world().Get_size() > 1


def _check_world(comm: Any, execution: ExecutionConfig) -> None:
    if comm.Get_size() != execution.processes + 1:
        raise ValueError(f"processes = {execution.processes} needs {execution.processes + 1} "
                         f"MPI ranks (rank 0 learns), but this job has {comm.Get_size()}: run "
                         f"it with mskernel run -n {execution.processes + 1}")


def skip_finalize() -> None:
    """Leave MPI at this process's exit without ``MPI_Finalize``, which, once a rank of the
    job has failed, can wait for it without a deadline."""
    import mpi4py

    mpi4py.rc.finalize = False


class MPIChannel(Channel):
    """The learner's link to one actor rank.  The ranks found failed are added to ``lost``
    (shared by the links of one job), and the close the rank receives is ``("close",
    payload, lost_ranks)``, after which a survivor of a failure does :func:`skip_finalize`."""

    def __init__(self, comm: Any, rank: int, slot: int, indices: tuple[int, ...],
                 lost: set[int]) -> None:
        super().__init__(slot, indices, 0)
        self.comm, self.rank, self.lost = comm, rank, lost
        self.failed = False

    def _fail(self) -> None:
        self.failed = True
        self.lost.add(self.rank)

    def send(self, message: Any) -> bool:
        if self.failed:
            return False
        try:
            self.comm.send(message, dest=self.rank, tag=REQUEST)
            return True
        except Exception:   # mpi4py's MPI.Exception: the rank failed
            self._fail()
            return False

    def receive(self) -> Optional[tuple[str, Any]]:
        if self.failed:
            raise ChannelClosed(f"MPI rank {self.rank} is unreachable")
        try:
            message = self.comm.improbe(source=self.rank, tag=ANSWER)
            return None if message is None else message.recv()  # type: ignore[no-any-return]
        except Exception as exc:   # MPI reports the rank as failed
            self._fail()
            raise ChannelClosed(f"MPI rank {self.rank} failed: {exc}") from None

    def stop(self, grace: float) -> None:
        """A rank is not ours to end: once failed, it is only written off."""

    def close(self, payload: Any) -> None:
        if not self.failed:   # a rank whose actor raised waits for this to end
            self.send(("close", payload, tuple(sorted(self.lost))))


class MPIActors(RemoteActors):
    """Rank 0's view of the actors on ranks ``1 … processes``."""

    def __init__(self, setup: ActorSetup, execution: ExecutionConfig) -> None:
        comm = mpi_world()
        _check_world(comm, execution)
        context = None

        def spawn(slot: int, indices: tuple[int, ...], restart: int) -> Channel:
            nonlocal context
            if context is None:
                import multiprocessing

                context = multiprocessing.get_context("spawn")
            return PipeChannel(context, setup, slot, indices, restart)

        self.lost: set[int] = set()   # ranks found failed
        channels: list[Channel] = [
            MPIChannel(comm, slot + 1, slot, indices, self.lost)
            for slot, indices in enumerate(spread(execution.actors, execution.processes))]
        super().__init__(channels, spawn, execution.actor_timeout, execution.startup_timeout,
                         execution.max_restarts)

    def close(self, result: Any = None) -> None:
        super().close(result)
        if self.lost:
            skip_finalize()


def serve_rank(setup: ActorSetup, execution: ExecutionConfig) -> Any:
    """Run this rank's actors for the learner on rank 0 until it closes them; returns what
    it sent with the close (the run's result)."""
    comm = mpi_world()
    _check_world(comm, execution)
    rank = comm.Get_rank()
    indices = spread(execution.actors, execution.processes)[rank - 1]

    def receive() -> Any:
        request = comm.recv(source=0, tag=REQUEST)
        if request[0] == "close" and request[2]:   # a rank failed: see skip_finalize
            skip_finalize()
        return request

    def send(message: Any) -> None:
        comm.send(message, dest=0, tag=ANSWER)

    try:
        return serve(receive, send, setup, indices, 0)
    except Exception:
        # reported to the learner already (or it will time out); stay until the end
        while True:
            request = receive()
            if request[0] == "close":
                return request[1]
