"""The parameter server's messages over MPI point-to-point, and a receive that keeps watch
for failed peers.

Every message is one byte buffer: a header of four int64 — a kind-specific integer (the step,
or a mode code), the payload's element count, and two spare words — followed by float32 (or
float64, for hyperparameters) values.  Tags name the message kinds.

:class:`Inbox` waits for a message from a set of ranks, polling MPI every millisecond (the
waiting thread sleeps in between, so an idle server costs no CPU).  Under ``mskernel run``
(Open MPI with ULFM) a peer whose process ended makes MPI report a failure; the inbox
acknowledges it, names the failed ranks to its owner (``on_failed``) and goes on waiting for
the others.  A peer that stays silent longer than ``timeout`` is reported as unresponsive.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Collection, Optional

import numpy as np

from ..mpi import failed_ranks, is_failure, mpi

TAG_INIT, TAG_PUSH, TAG_PULL, TAG_PARAMS, TAG_DONE, TAG_REPORT, TAG_STOP = range(700, 707)
TAG_NAMES = {TAG_INIT: "init", TAG_PUSH: "push", TAG_PULL: "pull", TAG_PARAMS: "params",
             TAG_DONE: "done", TAG_REPORT: "report", TAG_STOP: "stop"}
_HEADER = 4
POLL_SECONDS = 0.001


def pack(word: int, values: np.ndarray = np.zeros(0, np.float32), extra: int = 0) -> np.ndarray:
    """A message: ``word``, the count of ``values``, ``extra``, then the values' bytes."""
    values = np.ascontiguousarray(values)
    header = np.array([word, values.size, extra, values.dtype.itemsize], np.int64)
    return np.concatenate([header.view(np.uint8), values.reshape(-1).view(np.uint8)])


@dataclass
class Message:
    source: int
    tag: int
    word: int
    extra: int
    values: np.ndarray


def unpack(source: int, tag: int, buffer: np.ndarray) -> Message:
    header = buffer[:_HEADER * 8].view(np.int64)
    dtype = np.float64 if header[3] == 8 else np.float32
    values = buffer[_HEADER * 8:].view(dtype)
    if values.size != header[1]:
        raise ValueError(f"a parameter-server message from rank {source} announces "
                         f"{header[1]} values and carries {values.size}")
    return Message(source, tag, int(header[0]), int(header[2]), values)


class PeerSilent(Exception):
    """No message from the awaited ranks within the timeout (``ranks``), or none can come:
    they have all ended (``ranks`` empty)."""

    def __init__(self, ranks: Collection[int], seconds: float) -> None:
        super().__init__(f"rank(s) {sorted(ranks)} sent nothing for {seconds:g} s")
        self.ranks = tuple(sorted(ranks))


class Inbox:
    """Receives messages on ``comm``; ``on_failed(ranks)`` hears of ranks whose process ended."""

    def __init__(self, comm: Any, on_failed: Callable[[tuple[int, ...]], None]) -> None:
        self.comm = comm
        self.on_failed = on_failed
        self.failed: set[int] = set()

    def receive(self, sources: Collection[int], tags: Collection[int],
                timeout: Optional[float] = None) -> Message:
        """The next message from one of ``sources`` with one of ``tags`` (the others wait
        their turn); raises :class:`PeerSilent` after ``timeout`` seconds without one."""
        MPI = mpi()
        status = MPI.Status()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if set(sources) <= self.failed:
                raise PeerSilent((), 0.0)  # every awaited rank has ended
            try:
                self.comm.Iprobe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG)  # news of failures
                for source in sorted(set(sources) - self.failed):
                    for tag in tags:
                        if self.comm.Iprobe(source=source, tag=tag, status=status):
                            count = status.Get_count(MPI.BYTE)
                            buffer = np.empty(count, np.uint8)
                            self.comm.Recv(buffer, source=source, tag=tag)
                            return unpack(source, tag, buffer)
            except MPI.Exception as exc:
                if not is_failure(exc):
                    raise
                self._acknowledge()
                continue
            if deadline is not None and time.monotonic() > deadline:
                raise PeerSilent(set(sources) - self.failed, timeout or 0.0)
            time.sleep(POLL_SECONDS)

    def _acknowledge(self) -> None:
        try:
            self.comm.Ack_failed()
        except Exception:  # noqa: BLE001 - without ULFM there is nothing to acknowledge
            pass
        new = tuple(r for r in failed_ranks(self.comm) if r not in self.failed)
        self.failed.update(new)
        if new:
            self.on_failed(new)
