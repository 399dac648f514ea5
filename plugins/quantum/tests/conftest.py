import numpy as np
import pytest

from mskernel_quantum import _native


@pytest.fixture
def rng(request):
    """A generator seeded by the test's name (reproducible, different per test)."""
    return np.random.default_rng(sum(request.node.name.encode()))


@pytest.fixture(params=["native", "numpy"])
def backend(request):
    return request.param


@pytest.fixture(params=_native.isas())
def isa(request):
    """Each build of the native kernels this CPU can run (baseline, AVX2/FMA, AVX-512)."""
    previous = _native.isa()
    _native.use_isa(request.param)
    yield request.param
    _native.use_isa(previous)
