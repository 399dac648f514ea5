"""Every collective on 2 and 4 ranks (4 oversubscribed on this host): values eager and under
``@jit`` at O3 against NumPy, derivative rules (the VJP is the JVP's transpose over the sum of
the ranks' inner products; the JVP matches central differences), process groups, and shape,
dtype and point-to-point mismatches reported as errors — ``programs/collectives.py``."""

from __future__ import annotations

import pytest
from conftest import check_every_rank


@pytest.mark.parametrize("n", [1, 2, 4])
def test_collectives_on_ranks(n):
    check_every_rank("collectives.py", n, "every check passed")
