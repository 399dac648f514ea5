"""Atomic writes leave no temporaries for long: writers SIGKILLed mid-save leave the previous
file intact and either nothing (an unnamed ``O_TMPFILE`` file) or a temporary named with
their pid, which the next save removes; the temporaries of running writers, of other
targets and files of other names are kept."""

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from mskernel.ir.atomic import remove_stale_temporaries, write_atomically
from mskernel.ir.container import read_container, write_container
from mskernel.ir.fileformat import MODEL_FILE

WRITER = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    from mskernel.ir.container import write_container
    from mskernel.ir.fileformat import MODEL_FILE

    def stall(fd):  # every byte is written; stop before it is made durable and renamed
        print("writing", flush=True)
        time.sleep(60)

    os.fsync = stall
    if sys.argv[2] == "named":
        del os.O_TMPFILE
    write_container(sys.argv[1], MODEL_FILE, "killed", {}, {"w": np.full(1 << 16, 5.0)})
""")
UNNAMED = hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd")


def temporaries(directory):
    return sorted(n for n in os.listdir(directory) if n.endswith(".tmp"))


def kill_writers_mid_save(path, how, count=3):
    """Start ``count`` writers of ``path``, wait until each has written everything, list
    the directory, SIGKILL them; return the listing and their pids."""
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), how],
                              stdout=subprocess.PIPE, text=True) for _ in range(count)]
    try:
        for proc in procs:
            assert proc.stdout.readline().strip() == "writing"
        during = temporaries(path.parent)
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(timeout=30)
            proc.stdout.close()
    assert all(proc.returncode == -signal.SIGKILL for proc in procs)
    return during, [proc.pid for proc in procs]


@pytest.fixture
def path(tmp_path):
    path = tmp_path / "model.msk"
    write_container(path, MODEL_FILE, "first", {}, {"w": np.arange(10.0)})
    return path


def test_named_temporaries_of_killed_writers_are_removed_by_the_next_save(path):
    during, pids = kill_writers_mid_save(path, "named")
    assert [name.split(".")[3] for name in during] == sorted(str(pid) for pid in pids)
    assert temporaries(path.parent) == during  # still there: nobody saved since
    np.testing.assert_array_equal(read_container(path, MODEL_FILE).tensors["w"], np.arange(10.0))
    write_container(path, MODEL_FILE, "next", {}, {"w": np.ones(3)})
    assert os.listdir(path.parent) == [path.name]
    np.testing.assert_array_equal(read_container(path, MODEL_FILE).tensors["w"], np.ones(3))


@pytest.mark.skipif(not UNNAMED, reason="the OS has no O_TMPFILE or no /proc/self/fd")
def test_unnamed_temporaries_of_killed_writers_leave_nothing(path):
    during, _ = kill_writers_mid_save(path, "unnamed")
    assert during == []  # written without a name
    assert os.listdir(path.parent) == [path.name]
    np.testing.assert_array_equal(read_container(path, MODEL_FILE).tensors["w"], np.arange(10.0))


def test_only_stale_temporaries_of_the_same_target_are_removed(path, tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", ""])
    dead.wait(timeout=30)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        names = {
            "dead": f".model.msk.{dead.pid}.0123456789abcdef.tmp",
            "live": f".model.msk.{live.pid}.0123456789abcdef.tmp",
            "mine": f".model.msk.{os.getpid()}.0123456789abcdef.tmp",
            "other target": f".other.msk.{dead.pid}.0123456789abcdef.tmp",
            "other name": f".model.msk.{dead.pid}.tmp",
            "a directory": f".model.msk.{dead.pid}.fedcba9876543210.tmp",
        }
        for what, name in names.items():
            if what == "a directory":
                (tmp_path / name).mkdir()
            else:
                (tmp_path / name).write_bytes(b"partial")
        assert remove_stale_temporaries(str(path)) == [names["dead"]]
        write_atomically(str(path), [b"new"])
        assert sorted(os.listdir(tmp_path)) == sorted(
            [path.name, *(n for what, n in names.items() if what != "dead")])
        assert path.read_bytes() == b"new"
    finally:
        live.kill()
        live.wait(timeout=30)
