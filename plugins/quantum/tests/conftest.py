import numpy as np
import pytest


@pytest.fixture
def rng(request):
    """A generator seeded by the test's name (reproducible, different per test)."""
    return np.random.default_rng(sum(request.node.name.encode()))


@pytest.fixture(params=["native", "numpy"])
def backend(request):
    return request.param
