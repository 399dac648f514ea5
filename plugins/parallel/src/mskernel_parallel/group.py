"""Process groups and the collectives they run on host arrays — the kernels of the
collective ops.

A :class:`ProcessGroup` is a set of ranks of the world with a name (``"world"``, or one given
to ``create_group``).  Each collective takes NumPy arrays and returns a new array; over MPI the
input array is handed to MPI as the send buffer and the result is received straight into the
returned array (no copies, except to move the split axis of ``all_to_all`` to the front and
float16 reductions, which MPI does not define, in float32).

A group of one (a process not launched by MPI, or a group of one rank) computes each collective
directly: ``all_reduce`` of one contribution is that contribution, and so on — the semantics
of every collective in a single process.  ``send`` to oneself queues the array, ``recv`` from
oneself takes the oldest queued array of that tag (as MPI's buffered self-messages do).

Waiting.  Every MPI operation is started nonblocking and waited for by :func:`wait`, which
tests the request in a short burst (each test drives MPI's progress engine: a large message
moves in many fragments) and then sleeps between tests: a rank that waits for the others gives
its core away instead of spinning (MPI's blocking calls busy-poll, which on shared or
oversubscribed cores slows the ranks still computing, measured 1.5 to 2 times on this
project's 2-core host).

Overlap.  :meth:`ProcessGroup.start_all_reduce` hands an all-reduce to the group's
communication thread and returns at once; :meth:`ProcessGroup.finish_all_reduce` waits for its
result.  The thread runs the group's collectives one at a time in the order they were started,
and every collective called directly waits for the started ones first, so each rank issues the
group's collectives in program order.  Meanwhile the calling thread computes (the backends
release the GIL while they run), which is how the all-reduce of a gradient bucket overlaps the
rest of the backward pass.

Agreement check.  Before a collective the ranks agree on what they are about to do: each
contributes a 63-bit digest of its header — the collective, its attributes, the dtype and shape
of its operand and how many collectives the group ran before — to one all-reduce of
``(max(d), max(-d))`` (16 bytes).  When some rank's digest differs, the ranks exchange their
headers as text and all raise :class:`~mskernel_parallel.errors.CollectiveMismatchError`
listing each rank's header, instead of handing MPI buffers of different sizes (which is
undefined behaviour).  ``send`` sends its header before the data, and ``recv`` checks it.
"""

from __future__ import annotations

import hashlib
import time
from collections import defaultdict, deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .errors import CollectiveMismatchError, CommunicationError
from .mpi import failure_error, mpi

#: The reductions of ``all_reduce`` and ``reduce_scatter``.
REDUCTIONS = ("sum", "mean", "max", "min", "prod")
_HEADER_BYTES = 256
MIN_SLEEP, MAX_SLEEP = 1e-5, 2.5e-4
#: tests of a request before the first sleep (a burst drives a transfer of many fragments)
BURST_TESTS = 100
#: where the results of all_reduce start (bytes): a cache line, the alignment the cpu backend's
#: kernels take their operands at, so that a backend adopts a result without copying it
ALIGNMENT = 64


def _digest(header: str) -> int:
    return int.from_bytes(hashlib.blake2b(header.encode(), digest_size=8).digest(), "little") >> 1


def _aligned_empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An uninitialised array whose data starts at a multiple of :data:`ALIGNMENT` bytes."""
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    return raw[start:start + nbytes].view(dtype).reshape(shape)


def _bytes(array: np.ndarray) -> np.ndarray:
    """An array's memory as bytes: a view of a C-contiguous array (a received result is written
    there), a contiguous copy of any other (only ever sent)."""
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8)


class ProcessGroup:
    """``ranks`` (world ranks, in group-rank order) under ``name``; ``comm`` is its MPI
    communicator, ``None`` for a group of one without MPI."""

    def __init__(self, name: str, ranks: Sequence[int], rank: int, comm: Any = None) -> None:
        self.name = name
        self.ranks = tuple(ranks)
        self.rank = rank
        self.size = len(self.ranks)
        self.comm = comm
        self.collectives = 0  # run so far: part of each agreement header
        #: bytes of the operands this rank handed to collectives (and sent), and of the
        #: agreement checks, so far
        self.payload_bytes = 0
        self.check_bytes = 0
        #: seconds spent in MPI operations so far, waiting for the other ranks included
        self.seconds = 0.0
        self._mailbox: dict[int, deque[np.ndarray]] = defaultdict(deque)
        self._started: dict[int, Future[list[np.ndarray]]] = {}
        self._thread: Optional[ThreadPoolExecutor] = None

    def __repr__(self) -> str:
        return f"ProcessGroup({self.name!r}, ranks={list(self.ranks)}, rank={self.rank})"

    # -- the collectives -----------------------------------------------------------------------

    def all_reduce(self, x: np.ndarray, op: str = "sum") -> np.ndarray:
        """The elementwise reduction ``op`` of every rank's ``x``, on every rank."""
        self._finish_started()
        return self._all_reduce(x, op)

    def start_all_reduce(self, xs: Sequence[np.ndarray], op: str, key: int) -> None:
        """Start the all-reduce of the arrays ``xs`` (one dtype; fused into one buffer when
        there are several) on the communication thread; ``finish_all_reduce(key)`` returns
        each one's result.  ``xs`` must stay unchanged until then (MPI reads them meanwhile)."""
        if key in self._started:
            raise CommunicationError(f"all_reduce {key} on group '{self.name}' was started "
                                     "twice without finish_all_reduce")
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix=f"comm-{self.name}")
        self._started[key] = self._thread.submit(self._all_reduce_bucket, tuple(xs), op)

    def finish_all_reduce(self, key: int) -> list[np.ndarray]:
        """The results of the all-reduce started under ``key``, once it has completed."""
        started = self._started.pop(key, None)
        if started is None:
            raise CommunicationError(f"all_reduce {key} on group '{self.name}' was not started")
        return started.result()

    def _all_reduce_bucket(self, xs: tuple[np.ndarray, ...], op: str) -> list[np.ndarray]:
        """Each array's all-reduce, several fused into one buffer in which each starts at a
        multiple of :data:`ALIGNMENT` bytes (zeros between), so each result is aligned."""
        if len(xs) == 1:
            return [self._all_reduce(xs[0], op)]
        unit = max(1, ALIGNMENT // xs[0].itemsize)
        starts = np.cumsum([0] + [-(-x.size // unit) * unit for x in xs])
        fused = np.zeros(int(starts[-1]), xs[0].dtype)
        for x, start in zip(xs, starts):
            fused[start:start + x.size] = x.reshape(-1)
        reduced = self._all_reduce(fused, op)
        return [reduced[start:start + x.size].reshape(x.shape) for x, start in zip(xs, starts)]

    def close(self) -> None:
        """Wait for the started collectives and end the communication thread."""
        if self._thread is not None:
            self._thread.shutdown(wait=True)
            self._thread = None

    def _finish_started(self) -> None:
        """Wait until the collectives started on the communication thread have run (their
        results stay for ``finish_all_reduce``), so this one follows them on every rank."""
        for started in list(self._started.values()):
            started.exception()

    def _all_reduce(self, x: np.ndarray, op: str) -> np.ndarray:
        self._agree(f"all_reduce op={op}", x)
        if self.comm is None:
            out = _aligned_empty(x.shape, x.dtype)
            out[...] = x
            return out
        return self._reduce(lambda s, r, o: self.comm.Iallreduce(s, r, op=o), x, x.shape, op)

    def reduce_scatter(self, x: np.ndarray, op: str = "sum") -> np.ndarray:
        """The reduction of every rank's ``x``, split along axis 0 into ``size`` blocks:
        rank ``i`` gets block ``i``."""
        self._finish_started()
        self._agree(f"reduce_scatter op={op}", x)
        if self.comm is None:
            return np.array(x, copy=True)
        shape = (x.shape[0] // self.size, *x.shape[1:])
        return self._reduce(lambda s, r, o: self.comm.Ireduce_scatter_block(s, r, op=o),
                            x, shape, op)

    def all_gather(self, x: np.ndarray) -> np.ndarray:
        """Every rank's ``x`` concatenated along axis 0, in rank order, on every rank."""
        self._finish_started()
        self._agree("all_gather", x)
        out = np.empty((self.size * x.shape[0], *x.shape[1:]), x.dtype)
        if self.comm is None:
            out[...] = x
            return out
        self._call("all_gather", lambda: self.comm.Iallgather(_bytes(x), _bytes(out)))
        return out

    def broadcast(self, x: np.ndarray, root: int = 0) -> np.ndarray:
        """Rank ``root``'s ``x`` on every rank."""
        self._check_rank(root, "broadcast", "root")
        self._finish_started()
        self._agree(f"broadcast root={root}", x)
        out = np.array(x, copy=True, order="C") if self.rank == root else np.empty(x.shape,
                                                                                  x.dtype)
        if self.comm is not None:
            self._call("broadcast", lambda: self.comm.Ibcast(_bytes(out), root=root))
        return out

    def all_to_all(self, x: np.ndarray, split_axis: int = 0, concat_axis: int = 0) -> np.ndarray:
        """``x`` split along ``split_axis`` into ``size`` blocks, block ``j`` sent to rank
        ``j``; the blocks received, in rank order, concatenated along ``concat_axis``."""
        self._finish_started()
        self._agree(f"all_to_all split_axis={split_axis} concat_axis={concat_axis}", x)
        blocks = np.moveaxis(x, split_axis, 0)
        blocks = blocks.reshape(self.size, blocks.shape[0] // self.size, *blocks.shape[1:])
        received = np.empty(blocks.shape, blocks.dtype)
        if self.comm is None:
            received[...] = blocks
        else:
            send = np.ascontiguousarray(blocks)
            self._call("all_to_all", lambda: self.comm.Ialltoall(_bytes(send), _bytes(received)))
        parts = [np.moveaxis(block, 0, split_axis) for block in received]
        return np.concatenate(parts, axis=concat_axis)

    def send(self, x: np.ndarray, dest: int, tag: int = 0) -> None:
        """Send ``x`` to rank ``dest`` of the group (matched by its ``recv`` with this
        ``tag``)."""
        self._check_rank(dest, "send", "dest")
        self._finish_started()
        header = self._point_header(x.dtype, x.shape)
        self.payload_bytes += x.nbytes
        if self.comm is None:
            self._mailbox[tag].append(np.array(x, copy=True))
            return
        buffer = np.frombuffer(header.encode().ljust(_HEADER_BYTES), np.uint8)
        self._call(f"send to rank {dest}", lambda: self.comm.Isend(buffer, dest=dest, tag=tag))
        self._call(f"send to rank {dest}", lambda: self.comm.Isend(_bytes(x), dest=dest, tag=tag))

    def recv(self, shape: Sequence[int], dtype: np.dtype, src: int, tag: int = 0) -> np.ndarray:
        """The array rank ``src`` sent with ``tag``, which must have ``shape`` and ``dtype``."""
        self._check_rank(src, "recv", "src")
        self._finish_started()
        expected = self._point_header(np.dtype(dtype), tuple(shape))
        if self.comm is None:
            queue = self._mailbox[tag]
            if not queue:
                raise CommunicationError(
                    f"recv from rank {src} (tag {tag}) on group '{self.name}' of one rank: "
                    "nothing was sent with this tag; a group of one receives what it sent itself")
            got = queue.popleft()
            if got.shape != tuple(shape) or got.dtype != dtype:
                raise CollectiveMismatchError(
                    f"recv on group '{self.name}' expects {expected}, the send had "
                    f"{self._point_header(got.dtype, got.shape)}")
            return got
        header = np.empty(_HEADER_BYTES, np.uint8)
        self._call(f"recv from rank {src}", lambda: self.comm.Irecv(header, source=src, tag=tag))
        sent = header.tobytes().rstrip(b" ").decode()
        out = np.empty(tuple(shape), dtype)
        if sent != expected:
            nbytes = int(sent.rsplit("bytes=", 1)[-1]) if "bytes=" in sent else 0
            self._call(f"recv from rank {src}",
                       lambda: self.comm.Irecv(np.empty(nbytes, np.uint8), source=src, tag=tag))
            raise CollectiveMismatchError(
                f"recv on group '{self.name}' (rank {self.rank}) from rank {src}, tag {tag}: "
                f"expects {expected}, rank {src} sent {sent}")
        self._call(f"recv from rank {src}", lambda: self.comm.Irecv(_bytes(out), source=src,
                                                                    tag=tag))
        return out

    def sendrecv(self, x: np.ndarray, dest: int, shape: Sequence[int], dtype: np.dtype,
                 src: int, send_tag: int = 0, recv_tag: int = 0) -> np.ndarray:
        """Send ``x`` to ``dest`` and receive the array ``src`` sent with ``recv_tag`` at once:
        neither waits for the other, so two ranks sending to each other (a pipeline's
        forward activation one way, a cotangent the other) cannot deadlock."""
        self._check_rank(dest, "sendrecv", "dest")
        self._check_rank(src, "sendrecv", "src")
        if self.comm is None:
            self.send(x, dest, send_tag)
            return self.recv(shape, dtype, src, recv_tag)
        self.payload_bytes += x.nbytes
        out_header = np.frombuffer(self._point_header(x.dtype, x.shape).encode().ljust(
            _HEADER_BYTES), np.uint8)
        data = np.ascontiguousarray(x)
        sends = [self.comm.Isend(out_header, dest=dest, tag=send_tag),
                 self.comm.Isend(_bytes(data), dest=dest, tag=send_tag)]
        expected = self._point_header(np.dtype(dtype), tuple(shape))
        header = np.empty(_HEADER_BYTES, np.uint8)
        self._call(f"recv from rank {src}", lambda: self.comm.Irecv(header, source=src,
                                                                    tag=recv_tag))
        sent = header.tobytes().rstrip(b" ").decode()
        if sent != expected:
            raise CollectiveMismatchError(
                f"sendrecv on group '{self.name}' (rank {self.rank}) from rank {src}, tag "
                f"{recv_tag}: expects {expected}, rank {src} sent {sent}")
        out = np.empty(tuple(shape), dtype)
        self._call(f"recv from rank {src}", lambda: self.comm.Irecv(_bytes(out), source=src,
                                                                    tag=recv_tag))
        for request in sends:
            self._call(f"send to rank {dest}", lambda request=request: request)
        return out

    def barrier(self) -> None:
        """Return once every rank of the group has called ``barrier``."""
        self._finish_started()
        self._agree("barrier", None)
        if self.comm is not None:
            self._call("barrier", self.comm.Ibarrier)

    # -- helpers --------------------------------------------------------------------------------

    def _reduce(self, run: Callable[[Any, Any, Any], Any], x: np.ndarray, shape: tuple[int, ...],
                op: str) -> np.ndarray:
        MPI = mpi()
        work = x.astype(np.float32) if x.dtype == np.float16 else x
        if work.dtype == np.bool_:
            mpi_op = {"max": MPI.LOR, "min": MPI.LAND}[op]
        else:
            mpi_op = {"sum": MPI.SUM, "mean": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN,
                      "prod": MPI.PROD}[op]
        send, out = np.ascontiguousarray(work), _aligned_empty(shape, work.dtype)
        self._call(f"{op} reduction", lambda: run(send, out, mpi_op))
        if op == "mean":
            out /= out.dtype.type(self.size)
        return out.astype(x.dtype, copy=False)

    def _point_header(self, dtype: np.dtype, shape: tuple[int, ...]) -> str:
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        return f"{dtype.name}{list(shape)} bytes={nbytes}"

    def _check_rank(self, rank: int, what: str, role: str) -> None:
        if not 0 <= rank < self.size:
            raise CommunicationError(
                f"{what} on group '{self.name}' of {self.size} rank(s): {role} {rank} is not a "
                f"rank of the group (0 to {self.size - 1})")

    def _agree(self, what: str, x: Optional[np.ndarray]) -> None:
        """Check that every rank is at the same collective with the same operand type."""
        self.collectives += 1
        self.payload_bytes += 0 if x is None else x.nbytes
        if self.comm is None:
            return
        self.check_bytes += 16
        operand = "" if x is None else f" {x.dtype.name}{list(x.shape)}"
        header = f"#{self.collectives} {what}{operand}"
        digest = _digest(header)
        mine = np.array([digest, -digest], np.int64)
        agreed = np.empty_like(mine)
        self._call(what.split()[0], lambda: self.comm.Iallreduce(mine, agreed, op=mpi().MAX))
        if agreed[0] == digest and -agreed[1] == digest:
            return
        text = np.frombuffer(header.encode()[:_HEADER_BYTES].ljust(_HEADER_BYTES), np.uint8)
        headers = np.empty((self.size, _HEADER_BYTES), np.uint8)
        self._call(what.split()[0], lambda: self.comm.Iallgather(text, headers))
        listed = "; ".join(f"rank {r}: {row.tobytes().rstrip(b' ').decode()}"
                           for r, row in enumerate(headers))
        raise CollectiveMismatchError(
            f"the ranks of group '{self.name}' called different collectives or gave operands "
            f"of different types (the collective's number, name, attributes, dtype and "
            f"shape on each rank): {listed}")

    def _call(self, what: str, start: Callable[[], Any]) -> None:
        """Start a nonblocking MPI operation and wait for it (see :func:`wait`)."""
        began = time.perf_counter()
        try:
            wait(start())
        except mpi().Exception as exc:
            raise failure_error(self.comm, f"{what} on group '{self.name}' (rank {self.rank})",
                                exc) from None
        finally:
            self.seconds += time.perf_counter() - began


def wait(request: Any) -> None:
    """Wait for an MPI request: a burst of :data:`BURST_TESTS` tests, then sleeping between
    tests (10 µs, doubling to 250 µs) instead of spinning in MPI's progress loop: a waiting
    rank leaves the CPU to the ranks still computing, which matters whenever ranks share
    cores (oversubscribed, or a shared host).  Each test also moves the transfer on, so the
    burst finishes a small or shared-memory transfer at full speed (sleeping between every
    test made a 7 MB all-reduce on two ranks take 2 to 5 times as long)."""
    for _ in range(BURST_TESTS):
        if request.Test():
            return
    delay = 0.0
    while not request.Test():
        time.sleep(delay)
        delay = min(MAX_SLEEP, 2 * delay + MIN_SLEEP)
