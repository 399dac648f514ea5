import sys
from pathlib import Path

import numpy as np
import pytest

# Helper modules beside this file (onnx_checks, models) are imported by name whatever import
# mode pytest uses for the test modules; the anchor models live in benchmarks/workloads.
HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[2] / "benchmarks"))


@pytest.fixture
def rng(request):
    """A generator seeded by the test's name (reproducible, different per test)."""
    return np.random.default_rng(sum(request.node.name.encode()))


def pytest_terminal_summary(terminalreporter):
    from onnx_checks import TALLY

    if TALLY:
        terminalreporter.write_line(
            f"ONNX exports (sample x opset): {TALLY['ran']} agreed with the reference under "
            f"ONNX Runtime, {TALLY['gap']} passed ONNX's checker but met an ONNX Runtime "
            f"kernel gap, {TALLY['refused']} refused with a reason")
