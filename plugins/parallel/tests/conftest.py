"""Helpers of the multi-process tests: run a program of ``tests/programs`` on N ranks with
``mskernel run`` (loopback only, bounded in time; the launcher removes its status files and
ends every rank it started) or alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Sequence

import pytest

PROGRAMS = Path(__file__).with_name("programs")
#: a run that has not ended by then has hung: the test fails (and the launcher's session ends)
TIMEOUT = float(os.environ.get("MSKERNEL_PARALLEL_TEST_TIMEOUT", "240"))


def launch(n: int, program: str, *args: str, options: Sequence[str] = (),
           timeout: float = TIMEOUT, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``mskernel run -n n [options] programs/<program> args...``: its exit code and output."""
    command = [sys.executable, "-m", "mskernel.cli", "run", "-n", str(n), *options,
               str(PROGRAMS / program), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env=_environment())


def alone(program: str, *args: str, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    """``python programs/<program> args...``: one process, no MPI."""
    return subprocess.run([sys.executable, str(PROGRAMS / program), *args], capture_output=True,
                          text=True, timeout=timeout, env=_environment())


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("MSKERNEL_NUM_THREADS", "1")
    for name in ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK", "MSKERNEL_COMM"):
        env.pop(name, None)
    return env


def check_every_rank(program: str, n: int, passed: str) -> None:
    """Run ``program`` on ``n`` ranks (``n == 1``: alone, without MPI) and check that each rank
    printed ``rank R of n: <passed>``."""
    output = ok(launch(n, program) if n > 1 else alone(program))
    for rank in range(n):
        assert f"rank {rank} of {n}: {passed}" in output, output[-3000:]


def ok(result: subprocess.CompletedProcess[str]) -> str:
    """The run's output; fails the test with it when the run failed."""
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"exit code {result.returncode}:\n{output[-6000:]}"
    return output


@pytest.fixture
def rng(request):  # type: ignore[no-untyped-def]
    import numpy as np

    return np.random.default_rng(sum(request.node.name.encode()))
