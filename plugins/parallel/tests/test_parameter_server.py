"""The parameter server on 2 and 4 ranks: synchronous SGD on sharded servers equals one
process with the workers' batches together; asynchronous SGD applies every push; a worker that
is killed, or falls silent, is reported by the server and the others train on —
``programs/ps_train.py``."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import alone, launch, ok

STEPS, BATCH = 6, 8


@pytest.mark.parametrize("n, servers, scheduler", [(2, 1, False), (4, 2, False), (4, 1, True)])
def test_sync_sgd_equals_one_process(n, servers, scheduler, tmp_path):
    workers = n - servers - scheduler
    options = ["--servers", str(servers), "--steps", str(STEPS), "--batch", str(BATCH)]
    output = ok(launch(n, "ps_train.py", "--out", str(tmp_path), *options,
                       *(["--scheduler"] if scheduler else [])))
    ok(alone("ps_train.py", "--out", str(tmp_path), "--alone", str(workers), *options))
    got, want = np.load(tmp_path / "ps.npz"), np.load(tmp_path / "alone.npz")
    for name in want.files:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6, err_msg=name)
    assert output.count(f"server: {STEPS} updates; lost: none") == servers
    if scheduler:
        assert f"scheduler: {workers} of {workers} worker(s) finished" in output


def test_async_sgd_applies_every_push(tmp_path):
    output = ok(launch(4, "ps_train.py", "--out", str(tmp_path), "--servers", "1",
                       "--scheduler", "--mode", "async", "--steps", str(STEPS)))
    assert f"server: {2 * STEPS} updates; lost: none" in output  # two workers, no rounds
    assert f"server 0 (rank 1): {2 * STEPS} update(s)" in output  # as the scheduler heard it
    assert all(np.isfinite(v).all() for v in np.load(tmp_path / "ps.npz").values())


@pytest.mark.parametrize("how", ["kill", "silent"])
def test_a_lost_worker_is_reported_and_the_others_go_on(how, tmp_path):
    flag = "--kill-worker" if how == "kill" else "--silent-worker"
    result = launch(4, "ps_train.py", "--out", str(tmp_path), "--servers", "1", "--scheduler",
                    "--steps", str(STEPS), flag, "1", "--kill-step", "2")
    output = result.stdout + result.stderr
    assert result.returncode != 0  # a worker did not finish
    why = "its process ended" if how == "kill" else "sent nothing for 5 s"
    assert f"worker 1 (rank 3) lost after step 2: {why}" in output, output
    # sync rounds went on without it: the other worker finished every step
    assert f"[rank 2] worker 0: {STEPS} steps" in output, output
    assert "scheduler: 1 of 2 worker(s) finished" in output
