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


def test_cells_grouped_into_stages_by_cost_match_one_process(tmp_path):
    ok(alone("pipeline_train.py", "--out", str(tmp_path / "serial"), "--serial", "--stages", "2",
             "--cells", "5"))
    output = ok(launch(2, "pipeline_train.py", "--out", str(tmp_path / "pipe"), "--cells", "5"))
    assert "stages [[0, 1], [2, 3, 4]]" in output or "stages [[0, 1, 2], [3, 4]]" in output
    want = dict(np.load(tmp_path / "serial" / "result.npz"))
    got = dict(np.load(tmp_path / "pipe" / "result.npz"))
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6, err_msg=name)


def test_assign_stages_balances_predicted_compute_or_follows_pipeline_stage():
    from mskernel import nn
    from mskernel_parallel.errors import ShardingError
    from mskernel_parallel.sharding.pipeline import assign_stages

    cells = [nn.Dense(8, 8), nn.Dense(8, 64), nn.Dense(64, 8), nn.Dense(8, 8), nn.Dense(8, 8),
             nn.Dense(8, 8)]
    x = np.ones((4, 8), np.float32)
    assert assign_stages(cells, x, 2) == [[0, 1], [2, 3, 4, 5]]   # the wide pair split apart
    assert assign_stages(cells, x, 3) == [[0], [1], [2, 3, 4, 5]]
    for cell, stage in zip(cells, [0, 0, 0, 1, 1, 1]):
        cell.pipeline_stage = stage
    assert assign_stages(cells, x, 2) == [[0, 1, 2], [3, 4, 5]]
    cells[0].pipeline_stage = 1
    with pytest.raises(ShardingError, match="pipeline_stage"):
        assign_stages(cells, x, 2)


def test_sendrecv_in_a_group_of_one_receives_what_it_sent():
    from mskernel_parallel.group import ProcessGroup

    group = ProcessGroup("solo", (0,), 0)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(group.sendrecv(x, 0, (2, 3), np.float32, 0, send_tag=5,
                                                 recv_tag=5), x)
