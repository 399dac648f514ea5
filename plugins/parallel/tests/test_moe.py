"""Expert parallelism: the router's dispatch (top-k, capacity, first choices first), and a
mixture-of-experts layer trained with its experts on 2 and 4 ranks equal to one process
computing the same token groups with every expert (losses and parameters)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import alone, launch, ok

from mskernel_parallel.sharding.moe import route


def test_route_fills_first_choices_first_and_drops_over_capacity():
    probs = np.array([[0.7, 0.2, 0.1], [0.6, 0.3, 0.1], [0.5, 0.1, 0.4]], np.float32)
    mask = route(probs, top_k=2, capacity=2)
    assert mask.shape == (3, 3, 2) and mask.sum(axis=(1, 2)).tolist() == [2, 2, 1]
    assert mask[0, 0, 0] == mask[1, 0, 1] == 1          # expert 0 full with the first choices
    assert mask[2, 0].sum() == 0 and mask[2, 2, 0] == 1  # token 2's first choice dropped
    assert mask[0, 1, 0] == mask[1, 1, 1] == 1
    assert (mask.sum(axis=0) <= 1).all()                 # one token per slot


@pytest.mark.parametrize("n", [2, 4])
def test_experts_over_ranks_match_one_process(n, tmp_path):
    ok(alone("moe_train.py", "--out", str(tmp_path / "serial"), "--serial", "--groups", str(n)))
    ok(launch(n, "moe_train.py", "--out", str(tmp_path / "experts")))
    want = dict(np.load(tmp_path / "serial" / "result.npz"))
    got = dict(np.load(tmp_path / "experts" / "result.npz"))
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-5)
    for name in ("router", "w_in", "w_out"):
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6, err_msg=name)
