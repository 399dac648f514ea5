import sys
from pathlib import Path

import numpy as np
import pytest

from mskernel_data import config

# The helper modules beside this file (pipeline_fns, data_files) are imported by name, by the
# tests and by worker processes, whatever import mode pytest uses for the test modules.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def default_config():
    """Every test starts from the default settings and leaves them so."""
    saved = config.current()
    yield
    config._current = saved
    config.set_seed(saved.seed)


@pytest.fixture
def rng(request):
    """A generator seeded by the test's name (reproducible, different per test)."""
    return np.random.default_rng(sum(request.node.name.encode()))
