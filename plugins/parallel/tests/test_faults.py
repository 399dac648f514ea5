"""A failed rank never leaves the others waiting: a rank killed with SIGKILL mid-step, or one
that raises, makes the other ranks fail within seconds with an error naming it, and the
launcher's exit code and summary say which rank did what — ``programs/faults.py``."""

from __future__ import annotations

import re

import pytest
from conftest import launch

# generous for a loaded host; a hang would run into conftest.TIMEOUT instead
BOUND = 120


@pytest.mark.parametrize("how", ["kill", "raise"])
def test_a_failed_rank_of_four_stops_the_others(how):
    result = launch(4, "faults.py", "2", how, timeout=BOUND)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    summary = output[output.index("mskernel run: the job failed"):]
    if how == "kill":
        assert re.search(r"rank 2: killed", summary), summary
    else:
        assert "rank 2: raised ValueError: step 3 failed on purpose" in summary, summary
        assert "ValueError: step 3 failed on purpose" in output  # its traceback
    for rank in (0, 1, 3):
        line = re.search(rf"  rank {rank}: (.*)", summary).group(1)
        assert line.startswith("raised RankFailedError"), summary
        assert re.search(r"ranks? [0-9, ]*\b2\b", line), line  # names the failed rank
    assert "step 9 done" not in output  # nobody went on


def test_without_ulfm_the_job_still_ends():
    result = launch(2, "faults.py", "1", "kill", options=["--no-ft"], timeout=BOUND)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "rank 1: killed" in output


def test_a_hanging_rank_is_ended_after_the_grace_period():
    result = launch(2, "faults.py", "1", "hang", options=["--grace", "3"], timeout=BOUND)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "the other ranks had not ended 3 s after a rank failed" in output
    assert "rank 1: raised ValueError" in output
