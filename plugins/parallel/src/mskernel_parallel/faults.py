"""What a rank does when it fails, so the others never wait for it.

A rank of several that raises an uncaught exception prints the traceback (which the launcher
prefixes with its rank), records its status and ends its process at once with ``SIGTERM``,
skipping ``MPI_Finalize`` (which would wait for the other ranks, themselves waiting for it).
MPI then sees a failed process: under ``mskernel run`` (Open MPI with ULFM) the others' pending
collectives raise :class:`~mskernel_parallel.errors.RankFailedError` naming it; under a plain
``mpirun`` the job is ended.

Status files.  Under ``mskernel run`` each rank writes ``rank-<r>`` in the directory
``$MSKERNEL_RUN_DIR``: its pid when it starts, then one line with how it ended (``ok``,
``exit <code>``, ``raised <exception>``).  The launcher reads them to report each rank and to
notice a rank that vanished without a word (killed).
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
from pathlib import Path
from types import TracebackType
from typing import Optional

#: The directory of the ranks' status files, set by ``mskernel run``.
RUN_DIR_VARIABLE = "MSKERNEL_RUN_DIR"
#: The world rank, as Open MPI and PMIx tell it (before MPI starts).
RANK_VARIABLES = ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK")

_installed = False


def launch_rank() -> Optional[int]:
    """This process's world rank as the launcher set it, ``None`` outside a launch."""
    for name in RANK_VARIABLES:
        if name in os.environ:
            return int(os.environ[name])
    return None


def status_file(rank: int) -> Optional[Path]:
    folder = os.environ.get(RUN_DIR_VARIABLE)
    return Path(folder, f"rank-{rank}") if folder else None


def record(rank: int, line: str) -> None:
    """Append ``line`` to this rank's status file (a no-op outside ``mskernel run``)."""
    path = status_file(rank)
    if path is not None:
        with open(path, "a", encoding="utf-8") as f:
            f.write(line.replace("\n", " ")[:500] + "\n")
            f.flush()
            os.fsync(f.fileno())


def stop_now() -> None:
    """End this process at once, by ``SIGTERM`` with its default action (MPI sees a failed
    process; nothing waits in ``MPI_Finalize``)."""
    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def finish(rank: int) -> None:
    """A rank's program ended normally: record it; when another rank failed, end the process
    now instead of in ``MPI_Finalize``, which could wait for the failed rank."""
    from .mpi import FAILED_SEEN

    record(rank, "ok")
    if FAILED_SEEN:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def fail(rank: int, exc: BaseException, tb: Optional[TracebackType]) -> None:
    """Report an uncaught exception of this rank and end the process.  A rank that stops
    because another failed prints where it was in the user's code, not the whole stack."""
    from .errors import RankFailedError

    if isinstance(exc, RankFailedError):
        frames = [f for f in traceback.extract_tb(tb) if not _is_library(f.filename)]
        where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
        sys.stderr.write(f"rank {rank} stopped{where}: {exc}\n")
    else:
        lines = traceback.format_exception(type(exc), exc, tb)
        sys.stderr.write(f"rank {rank} failed:\n{''.join(lines)}")
    record(rank, f"raised {type(exc).__name__}: {exc}")
    stop_now()


def _is_library(filename: str) -> bool:
    parts = os.path.normpath(filename).split(os.sep)
    return filename.startswith("<") or any(
        p == "mskernel" or p.startswith("mskernel_") for p in parts)


def install(rank: int, size: int) -> None:
    """Make an uncaught exception end this rank at once (when it has peers)."""
    global _installed
    if _installed or size < 2:
        return
    _installed = True

    def hook(kind: type[BaseException], exc: BaseException, tb: Optional[TracebackType]) -> None:
        fail(rank, exc, tb)

    sys.excepthook = hook
