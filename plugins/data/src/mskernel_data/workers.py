"""Worker pools: run a per-row function over a stream of rows, in order, ahead of the consumer.

A pipeline stage that works row by row (a ``map``, a file source reading sample ``i``) hands
its per-row function — a :class:`Stage` — to a pool and asks for ``imap(epoch, payloads)``:
results come back in the order of ``payloads`` whatever order the workers finish in, and at
most ``window`` rows are in flight, which is the stage's prefetch; process workers get
them in chunks, one message per chunk.  Three pools share that
loop and differ in where rows are computed: :class:`InlinePool` (the iterating thread, one
worker), :class:`ThreadPool` and :class:`ProcessPool`.

A stage gets ``(epoch, position, payload)``, so it can derive the row's random generator from
what the row *is* (:mod:`.rng`); no pool passes any state of its own to it.

An exception inside a stage becomes a :class:`Failure` (picklable: it crosses from a worker
process as text) and is raised in the consumer as a :class:`~.errors.DatasetError` naming the
stage, the operation, the row and the epoch, with the original traceback.

Process workers start with the ``forkserver`` method by default (see :mod:`.config`), with
this module preloaded in the server so a worker starts in milliseconds.  They stop when the
pool closes (explicitly, when it is garbage-collected, or at interpreter exit), when the
parent process dies (a pipe only the parent holds reaches end-of-file), or are terminated if
they do not stop within a grace period.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import pickle
import queue
import signal
import traceback
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Any, Iterable, Iterator, Optional, Protocol

from .errors import DatasetError
from .rng import Epoch

_GRACE_S = 2.0  # how long a closing pool waits for workers before terminating them
_POLL_S = 0.5  # how often an idle worker checks that its parent is alive


class Stage(Protocol):
    """A per-row function a pool runs; picklable when the pool uses processes.

    ``label`` names the pipeline step in errors (``"map on ['image']"``).  A stage that
    applies several operations raises :class:`OperationFailed` to say which one failed.
    """

    label: str

    def __call__(self, epoch: Epoch, position: int, payload: Any) -> Any: ...


class OperationFailed(Exception):
    """Raised by a stage around the exception of one of its operations, naming it."""

    def __init__(self, operation: str, cause: BaseException) -> None:
        super().__init__(operation)
        self.operation = operation
        self.cause = cause


@dataclass
class Failure:
    """A row a stage could not compute, as reported to the consumer."""

    stage: str
    operation: str
    epoch: Epoch
    position: Optional[int]  # None: the stage could not even be loaded
    error: str
    traceback: str
    where: str
    original: Optional[BaseException] = field(default=None, repr=False)

    @classmethod
    def of(cls, stage: str, epoch: Epoch, position: int, exc: BaseException, where: str,
           keep_original: bool) -> "Failure":
        operation = ""
        if isinstance(exc, OperationFailed):
            operation, exc = exc.operation, exc.cause
        return cls(stage=stage, operation=operation, epoch=epoch, position=position,
                   error=f"{type(exc).__name__}: {exc}",
                   traceback="".join(traceback.format_exception(exc)).rstrip(),
                   where=where, original=exc if keep_original else None)

    def as_error(self) -> DatasetError:
        what = f"{self.stage}, operation {self.operation}," if self.operation else self.stage
        if self.position is None:
            when = "could not start"
        else:
            passes = "".join(f", repeat pass {p}" for p in self.epoch[1:])
            when = f"failed on row {self.position} of epoch {self.epoch[0]}{passes}"
        return DatasetError(f"{what} {when} ({self.where}): {self.error}\n\n"
                            f"Original traceback ({self.where}):\n{self.traceback}")

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "original": None}


def _run(stage: Stage, epoch: Epoch, position: int, payload: Any, where: str,
         keep_original: bool) -> tuple[bool, Any]:
    try:
        return True, stage(epoch, position, payload)
    except Exception as exc:
        return False, Failure.of(stage.label, epoch, position, exc, where, keep_original)


class Pool:
    """Runs a stage over a stream in order with at most ``window`` rows in flight, handed
    to the workers ``chunk`` rows at a time."""

    chunk = 1

    def __init__(self, stage: Stage, window: int) -> None:
        self.stage = stage
        self.window = max(1, window)
        self._runs = 0

    def imap(self, epoch: Epoch, payloads: Iterable[Any]) -> Iterator[Any]:
        """The stage's results for ``payloads``, in order; raises the first failure."""
        self._runs += 1
        run = self._runs
        source = iter(payloads)
        submitted = delivered = 0
        exhausted = False
        try:
            while True:
                while not exhausted and submitted - delivered < self.window:
                    room = min(self.chunk, self.window - (submitted - delivered))
                    chunk = list(itertools.islice(source, room))
                    exhausted = len(chunk) < room
                    if chunk:
                        self._submit(run, epoch, submitted, chunk)
                        submitted += len(chunk)
                if delivered == submitted:
                    return
                ok, value = self._result(run, delivered)
                delivered += 1
                if not ok:
                    raise value.as_error() from value.original
                yield value
        finally:
            self._abandon(run)

    def close(self) -> None:
        """Stop the workers; idempotent."""

    def _submit(self, run: int, epoch: Epoch, first: int, payloads: list[Any]) -> None:
        """Start computing ``payloads``, the rows at positions ``first``, ``first + 1``..."""
        raise NotImplementedError

    def _result(self, run: int, position: int) -> tuple[bool, Any]:
        raise NotImplementedError

    def _abandon(self, run: int) -> None:
        """Forget what is still in flight for ``run`` (the consumer stopped early)."""


class InlinePool(Pool):
    """Computes each row in the iterating thread, when it is submitted."""

    def __init__(self, stage: Stage) -> None:
        super().__init__(stage, window=1)
        self._done: dict[int, tuple[bool, Any]] = {}

    def _submit(self, run: int, epoch: Epoch, first: int, payloads: list[Any]) -> None:
        for position, payload in enumerate(payloads, first):
            self._done[position] = _run(self.stage, epoch, position, payload,
                                        "in the iterating thread", keep_original=True)

    def _result(self, run: int, position: int) -> tuple[bool, Any]:
        return self._done.pop(position)

    def _abandon(self, run: int) -> None:
        self._done.clear()


class ThreadPool(Pool):
    """Worker threads: cheap to start, share memory; good when operations release the GIL
    (NumPy, Pillow) or wait on files."""

    def __init__(self, stage: Stage, workers: int, window: int) -> None:
        super().__init__(stage, window)
        self._executor = ThreadPoolExecutor(workers, thread_name_prefix="mskernel-data")
        self._futures: dict[int, Future] = {}
        self._finalizer = weakref.finalize(self, _shutdown_threads, self._executor)

    def _submit(self, run: int, epoch: Epoch, first: int, payloads: list[Any]) -> None:
        for position, payload in enumerate(payloads, first):
            self._futures[position] = self._executor.submit(
                _run, self.stage, epoch, position, payload, "in a worker thread", True)

    def _result(self, run: int, position: int) -> tuple[bool, Any]:
        return self._futures.pop(position).result()

    def _abandon(self, run: int) -> None:
        for future in self._futures.values():
            future.cancel()
        self._futures.clear()

    def close(self) -> None:
        self._finalizer()


def _shutdown_threads(executor: ThreadPoolExecutor) -> None:
    executor.shutdown(wait=True, cancel_futures=True)


class ProcessPool(Pool):
    """Worker processes: true parallelism for Python operations.  The stage is pickled once
    per worker; rows travel pickled, a chunk per message, so user functions must be
    importable (module-level, not lambdas or functions typed at an interactive prompt)."""

    def __init__(self, stage: Stage, workers: int, window: int, start_method: str) -> None:
        super().__init__(stage, window)
        self.chunk = max(1, min(16, self.window // (2 * workers)))
        try:
            stage_bytes = pickle.dumps(stage, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            raise DatasetError(
                f"{stage.label} cannot be sent to worker processes: {type(exc).__name__}: "
                f"{exc}. Define the operations at module level (not lambdas or local "
                "functions), or run the workers as threads (python_multiprocessing=False)"
            ) from exc
        ctx = multiprocessing.get_context(start_method)
        if start_method == "forkserver":
            ctx.set_forkserver_preload([__name__, "mskernel_data.vision"])
        self._tasks = ctx.Queue()
        self._stop = ctx.Event()
        lifeline_r, self._lifeline = ctx.Pipe(duplex=False)
        self._procs: list[multiprocessing.process.BaseProcess] = []
        self._readers = []
        for _ in range(workers):
            reader, writer = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_worker_main, name="mskernel-data-worker", daemon=True,
                               args=(stage_bytes, self._tasks, writer, self._stop, lifeline_r))
            proc.start()
            writer.close()
            self._procs.append(proc)
            self._readers.append(reader)
        lifeline_r.close()
        self._done: dict[int, tuple[bool, Any]] = {}
        self._finalizer = weakref.finalize(
            self, _shutdown_processes, self._procs, self._readers, self._tasks, self._stop,
            self._lifeline)

    def _submit(self, run: int, epoch: Epoch, first: int, payloads: list[Any]) -> None:
        self._tasks.put((run, epoch, first, pickle.dumps(payloads, pickle.HIGHEST_PROTOCOL)))

    def _result(self, run: int, position: int) -> tuple[bool, Any]:
        while position not in self._done:
            self._receive(run)
        return self._done.pop(position)

    def _receive(self, run: int) -> None:
        sentinels = {p.sentinel: p for p in self._procs}
        for ready in wait([*self._readers, *sentinels]):
            if ready in sentinels:
                self._raise_died(sentinels[ready])
            try:
                message = ready.recv_bytes()
            except EOFError:
                continue  # its worker is exiting; the sentinel reports it
            result_run, results = pickle.loads(message)
            if result_run is None:  # the worker could not load the stage
                results.stage = self.stage.label
                raise results.as_error()
            if result_run == run:  # else rows of a run the consumer abandoned
                self._done.update((position, (ok, value)) for position, ok, value in results)

    def _raise_died(self, proc: multiprocessing.process.BaseProcess) -> None:
        proc.join(0)
        code = proc.exitcode
        how = (f"was killed by signal {signal.Signals(-code).name}" if code is not None
               and code < 0 else f"exited with code {code}")
        raise DatasetError(
            f"{self.stage.label}: worker process {proc.pid} {how} while rows were in flight "
            "(out of memory? a crash in native code? its own error, if any, is printed above; "
            "a script that starts workers must guard its top-level code with "
            "`if __name__ == \"__main__\":`)")

    def _abandon(self, run: int) -> None:
        self._done.clear()

    def close(self) -> None:
        self._finalizer()


def _shutdown_processes(procs, readers, tasks, stop, lifeline) -> None:
    stop.set()
    for reader in readers:  # a worker blocked sending a result gets EPIPE and exits
        reader.close()
    try:
        for _ in procs:  # wakes idle workers at once (they would notice `stop` on their own)
            tasks.put(None)
        tasks.close()
    except (ValueError, OSError):  # already closed by multiprocessing's exit handlers
        pass
    tasks.cancel_join_thread()
    for proc in procs:
        proc.join(_GRACE_S)
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
            proc.join(_GRACE_S)
        if proc.is_alive():
            proc.kill()
            proc.join()
        proc.close()
    lifeline.close()


def _worker_main(stage_bytes: bytes, tasks, results_pipe, stop, lifeline) -> None:
    """A worker process: load the stage, then compute rows until told to stop or orphaned."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    where = f"in worker process {os.getpid()}"
    try:
        stage = pickle.loads(stage_bytes)
    except Exception as exc:
        failure = Failure(stage="", operation="", epoch=(), position=None,
                          error=f"{type(exc).__name__}: {exc}",
                          traceback="".join(traceback.format_exception(exc)).rstrip(),
                          where=where)
        _send(results_pipe, (None, failure))
        return
    while not stop.is_set():
        try:
            task = tasks.get(timeout=_POLL_S)
        except queue.Empty:
            if lifeline.poll():  # end-of-file: the parent process is gone
                return
            continue
        if task is None:
            return
        run, epoch, first, payloads = task
        results = []
        for position, payload in enumerate(pickle.loads(payloads), first):
            ok, value = _run(stage, epoch, position, payload, where, False)
            results.append((position, ok, value))
            if not ok:
                break
        if not _send(results_pipe, _pack(run, results, stage, epoch, where)):
            return


def _pack(run: int, results: list[tuple[int, bool, Any]], stage: Stage, epoch: Epoch,
          where: str) -> bytes:
    """Pickle a chunk's results, turning a result that cannot be pickled into a failure."""
    try:
        return pickle.dumps((run, results), pickle.HIGHEST_PROTOCOL)
    except Exception:
        packed = []
        for position, ok, value in results:
            try:
                pickle.dumps(value)
                packed.append((position, ok, value))
            except Exception as exc:
                failure = Failure.of(stage.label, epoch, position, exc, where, False)
                failure.error = f"its result cannot be sent to the parent: {failure.error}"
                packed.append((position, False, failure))
                break
        return pickle.dumps((run, packed), pickle.HIGHEST_PROTOCOL)


def _send(results, message: Any) -> bool:
    """Send to the parent; False when the parent closed its end (the pool is closing)."""
    try:
        results.send_bytes(message if isinstance(message, bytes) else pickle.dumps(message))
        return True
    except (BrokenPipeError, OSError):
        return False
