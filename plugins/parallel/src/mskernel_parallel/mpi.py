"""MPI in this process: whether it was launched as one rank of several, starting MPI (through
mpi4py, on first use), and turning MPI's reports of failed processes into errors that name
the failed ranks.

Failures are detected by MPI itself.  Under ``mskernel run`` ranks start with Open MPI's
User-Level Failure Mitigation (``mpirun --with-ft ulfm``): when a rank's process ends in the
middle of the program, every collective or receive that waits for it fails with
``MPI_ERR_PROC_FAILED`` instead of blocking; the rank that sees it revokes the communicator,
so the ranks blocked elsewhere on it fail too (``MPI_ERR_REVOKED``), and each raises
:class:`~mskernel_parallel.errors.RankFailedError` naming the ranks MPI reports as failed.
Under a plain ``mpirun`` (no ULFM) the launcher ends the whole job when a rank fails, so no
rank waits either.
"""

from __future__ import annotations

import functools
import os
import time
from types import ModuleType
from typing import Any

from .errors import CommunicationError, RankFailedError

#: Variables a launcher sets in each rank's environment (Open MPI, PMIx, MPICH's Hydra, MVAPICH).
LAUNCH_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK",
                    "MV2_COMM_WORLD_SIZE")
#: ``mpi`` or ``self``: force the engine instead of detecting the launcher.
ENGINE_VARIABLE = "MSKERNEL_COMM"

#: How long a rank whose communicator was revoked waits for MPI to name the failed rank.
NAMING_SECONDS = 2.0
_FAILURE_CLASSES = ("ERR_PROC_FAILED", "ERR_PROC_FAILED_PENDING", "ERR_REVOKED")


def launched_by_mpi() -> bool:
    """Whether this process is a rank started by an MPI launcher (or ``MSKERNEL_COMM=mpi``)."""
    forced = os.environ.get(ENGINE_VARIABLE, "").strip().lower()
    if forced in ("mpi", "self"):
        return forced == "mpi"
    if forced:
        raise CommunicationError(f"{ENGINE_VARIABLE}={forced!r}: expected 'mpi' or 'self'")
    return any(name in os.environ for name in LAUNCH_VARIABLES)


@functools.cache
def mpi() -> ModuleType:
    """``mpi4py.MPI``, importing it (which initialises MPI, with errors raised as Python
    exceptions and thread support ``MPI_THREAD_MULTIPLE``) the first time."""
    import mpi4py

    mpi4py.rc.initialize = True
    mpi4py.rc.finalize = True
    mpi4py.rc.errors = "exception"
    from mpi4py import MPI

    return MPI


def is_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is MPI's report that a process of the communicator failed."""
    MPI = mpi()
    if not isinstance(exc, MPI.Exception):
        return False
    classes = {getattr(MPI, name) for name in _FAILURE_CLASSES if hasattr(MPI, name)}
    return exc.Get_error_class() in classes


#: World ranks this process learnt had failed (it then skips ``MPI_Finalize`` at exit, which
#: would wait for them).
FAILED_SEEN: set[int] = set()


def failed_ranks(comm: Any) -> tuple[int, ...]:
    """The world ranks MPI knows to have failed, as seen through ``comm`` and the world."""
    MPI = mpi()
    world = MPI.COMM_WORLD.Get_group()
    ranks: set[int] = set()
    for c in (comm, MPI.COMM_WORLD):
        try:
            group = c.Get_failed()
        except (AttributeError, NotImplementedError, MPI.Exception):
            continue
        if group.Get_size():
            ranks.update(MPI.Group.Translate_ranks(group, list(range(group.Get_size())), world))
    found = tuple(sorted(r for r in ranks if r >= 0))
    FAILED_SEEN.update(found)
    return found


def _progress() -> None:
    """Let MPI handle what arrived (failure notices travel with its progress engine)."""
    MPI = mpi()
    try:
        MPI.COMM_WORLD.Iprobe(source=MPI.ANY_SOURCE)
    except MPI.Exception:  # revoked: the notices were handled anyway
        pass


def failure_error(comm: Any, what: str, exc: BaseException) -> CommunicationError:
    """The error to raise for an MPI exception during ``what`` on ``comm``: a
    :class:`RankFailedError` for a failed process (after revoking ``comm`` so the other ranks
    stop waiting too), else a :class:`CommunicationError` with MPI's message."""
    if not is_failure(exc):
        return CommunicationError(f"{what}: MPI error: {exc}")
    try:
        comm.Revoke()
    except Exception:  # already revoked, or no ULFM: the launcher ends the job
        pass
    ranks = failed_ranks(comm)
    deadline = time.monotonic() + NAMING_SECONDS
    while not ranks and time.monotonic() < deadline:  # a revoke can arrive before the news
        _progress()
        time.sleep(0.05)
        ranks = failed_ranks(comm)
    who = (f"rank{'s' if len(ranks) > 1 else ''} {', '.join(map(str, ranks))}" if ranks
           else "another rank")
    return RankFailedError(
        f"{what}: {who} of the world stopped (raised or was killed) while this rank waited; "
        "giving up instead of waiting forever (the first rank to stop says why)", ranks)
