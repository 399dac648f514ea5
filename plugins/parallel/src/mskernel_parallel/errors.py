"""The errors of distributed runs.  Each names the collective, the process group and the
ranks concerned."""

from __future__ import annotations

from mskernel_sdk import MskernelError


class CommunicationError(MskernelError, RuntimeError):
    """A collective or a process group cannot be used as asked (not initialised, a rank
    outside the group, an unknown group)."""


class CollectiveMismatchError(CommunicationError):
    """The ranks of a group called different collectives, or one collective on tensors of
    different shapes or dtypes, at the same point of their programs."""


class RankFailedError(CommunicationError):
    """A rank of the group failed (its process raised or was killed) while this one waited
    for it; ``ranks`` are the failed ranks of the world (empty when MPI could not tell)."""

    def __init__(self, message: str, ranks: tuple[int, ...] = ()) -> None:
        super().__init__(message)
        self.ranks = ranks


class ShardingError(MskernelError, ValueError):
    """A sharding strategy or layout that does not fit its tensor, op or device mesh."""
