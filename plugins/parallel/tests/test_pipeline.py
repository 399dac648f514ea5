"""Pipeline parallelism under ``mskernel run``: 2 and 4 stages, 4 micro-batches, the 1F1B
schedule, equal to one process training the whole network on the whole batch (losses and
parameters after a few steps, float32 tolerance)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import alone, launch, ok


@pytest.mark.parametrize("n, recompute", [(2, False), (4, False), (2, True)])
def test_1f1b_pipeline_matches_one_process(n, recompute, tmp_path):
    ok(alone("pipeline_train.py", "--out", str(tmp_path / "serial"), "--serial", "--stages",
             str(n)))
    output = ok(launch(n, "pipeline_train.py", "--out", str(tmp_path / "pipe"), "--micro", "4",
                       *(["--recompute"] if recompute else [])))
    for stage in range(n):  # 1F1B: stage s holds at most n - s micro-batches (recompute: none)
        held = 0 if recompute else min(n - stage, 4)
        assert f"stage {stage} held {held} micro-batches" in output
    want = dict(np.load(tmp_path / "serial" / "result.npz"))
    got = dict(np.load(tmp_path / "pipe" / "result.npz"))
    assert sorted(got) == sorted(want) and len(want) == 1 + 2 * n
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-5)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6, err_msg=name)


def test_sendrecv_in_a_group_of_one_receives_what_it_sent():
    from mskernel_parallel.group import ProcessGroup

    group = ProcessGroup("solo", (0,), 0)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(group.sendrecv(x, 0, (2, 3), np.float32, 0, send_tag=5,
                                                 recv_tag=5), x)
