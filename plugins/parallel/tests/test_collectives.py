"""Every collective on 2 and 4 ranks (4 oversubscribed on this host): values eager and under
``@jit`` at O3 against NumPy, derivative rules (the VJP is the JVP's transpose over the sum of
the ranks' inner products; the JVP matches central differences), process groups, and shape,
dtype and point-to-point mismatches reported as errors — ``programs/collectives.py``."""

from __future__ import annotations

import pytest
from conftest import alone, launch, ok


@pytest.mark.parametrize("n", [2, 4])
def test_collectives_on_ranks(n):
    output = ok(launch(n, "collectives.py"))
    for rank in range(n):
        assert f"[rank {rank}] rank {rank} of {n}: every check passed" in output


def test_collectives_in_one_process():
    assert "rank 0 of 1: every check passed" in ok(alone("collectives.py"))
