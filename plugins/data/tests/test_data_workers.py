"""Parallel pipelines: the same rows with any number of workers, failures reported with the
row and the original traceback, and no worker left behind however the iteration ends."""

import gc
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from mskernel_data.api import (
    DatasetError, GeneratorDataset, NumpySlicesDataset, config, transforms, vision,
)

import pipeline_fns

HERE = Path(__file__).parent


def augmented(workers, processes, seed=7):
    """Random crops, flips and rotations of shuffled images, then a shuffle buffer."""
    config.set_seed(seed)
    images = np.arange(24 * 12 * 12 * 3, dtype=np.uint8).reshape(24, 12, 12, 3)
    ds = NumpySlicesDataset({"image": images, "index": np.arange(24)})
    ds = ds.map([vision.RandomCrop(8, padding=2), vision.RandomHorizontalFlip(),
                 vision.RandomRotation(30), transforms.RandomApply([vision.Invert()])],
                input_columns="image", num_parallel_workers=workers,
                python_multiprocessing=processes)
    return ds.shuffle(8).batch(5)


def rows(ds, **kwargs):
    return [[v.copy() for v in row] for row in ds.create_tuple_iterator(output_numpy=True,
                                                                        **kwargs)]


def assert_same_rows(a, b):
    assert len(a) == len(b)
    for row_a, row_b in zip(a, b):
        for x, y in zip(row_a, row_b):
            np.testing.assert_array_equal(x, y)


def alive(pid):
    """Whether ``pid`` is a running (not zombie) process."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def wait_gone(pids, timeout=15.0):
    """The pids still alive after waiting up to ``timeout`` seconds for them to exit."""
    deadline = time.monotonic() + timeout
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def test_augmentations_are_the_same_with_any_number_of_workers():
    inline = rows(augmented(1, False))
    assert_same_rows(inline, rows(augmented(3, True)))
    assert_same_rows(inline, rows(augmented(3, False)))


def test_spawned_workers_give_the_same_rows_and_fork_is_refused():
    with pytest.raises(ValueError, match="forkserver"):
        config.set_multiprocessing_start_method("fork")
    inline = rows(augmented(1, False))
    config.set_multiprocessing_start_method("spawn")
    assert_same_rows(inline, rows(augmented(2, True)))


def test_a_different_seed_gives_different_rows():
    a, b = rows(augmented(1, False, seed=1)), rows(augmented(1, False, seed=2))
    assert any(not np.array_equal(x[0], y[0]) for x, y in zip(a, b))


def test_epochs_differ_and_iterators_continue_the_epoch_count():
    one_iterator = augmented(2, True)
    it = one_iterator.create_tuple_iterator(num_epochs=3, output_numpy=True)
    by_iterator = [[[v.copy() for v in row] for row in it] for _ in range(3)]
    per_loop = augmented(2, True)
    by_loops = [rows(per_loop, num_epochs=1) for _ in range(3)]
    for a, b in zip(by_iterator, by_loops):
        assert_same_rows(a, b)
    assert not np.array_equal(by_iterator[0][0][0], by_iterator[1][0][0])
    assert list(it) == []  # three epochs asked for, three given


def test_order_is_kept_when_workers_finish_out_of_order():
    ds = NumpySlicesDataset(np.arange(200), shuffle=False)
    ds = ds.map(pipeline_fns.times_ten, num_parallel_workers=4, python_multiprocessing=True)
    assert [int(r[0]) for r in ds.create_tuple_iterator(output_numpy=True)] == list(
        range(0, 2000, 10))


def test_random_access_generator_read_by_worker_processes():
    ds = GeneratorDataset(pipeline_fns.Squares(30), ["i", "square"], shuffle=False,
                          num_parallel_workers=3)
    got = [(int(i), int(s)) for i, s in ds.create_tuple_iterator(output_numpy=True)]
    assert got == [(i, i * i) for i in range(30)]


def test_error_in_a_map_names_the_operation_row_and_original_traceback():
    ds = NumpySlicesDataset(np.arange(40), column_names="x", shuffle=False).map(
        [transforms.TypeCast("float32"), pipeline_fns.fail_on_13, pipeline_fns.times_ten],
        num_parallel_workers=2, python_multiprocessing=True)
    seen = []
    with pytest.raises(DatasetError) as info:
        for (x,) in ds.create_tuple_iterator(output_numpy=True):
            seen.append(float(x))
    message = str(info.value)
    assert "map on ['x'], operation 2 of 3 (fail_on_13)" in message
    assert "row 13 of epoch 0" in message
    assert "ValueError: unlucky value 13" in message
    assert 'raise ValueError(f"unlucky value {int(x)}")' in message  # the worker's traceback
    assert "pipeline_fns.py" in message and "in worker process" in message
    assert seen == [10.0 * i for i in range(13)]  # the rows before it arrived, in order


def test_error_stops_the_workers_of_the_failing_pipeline():
    ds = NumpySlicesDataset(np.arange(40), column_names="x", shuffle=False)
    ds = ds.map(pipeline_fns.with_worker_pid, output_columns=["x", "pid"],
                num_parallel_workers=2, python_multiprocessing=True)
    ds = ds.map(pipeline_fns.fail_on_13, input_columns="x")
    pids = set()
    with pytest.raises(DatasetError, match="row 13"):
        for _, pid in ds.create_tuple_iterator(output_numpy=True):
            pids.add(int(pid))
    assert pids and wait_gone(pids, timeout=0) == []


def test_error_in_a_thread_worker_chains_the_original_exception():
    ds = NumpySlicesDataset(np.arange(20), shuffle=False).map(
        pipeline_fns.fail_on_13, num_parallel_workers=3)
    with pytest.raises(DatasetError, match="row 13 of epoch 0 .in a worker thread") as info:
        list(ds)
    assert isinstance(info.value.__cause__, ValueError)


def test_error_in_a_random_access_source_names_the_row():
    ds = GeneratorDataset(pipeline_fns.BrokenAt(10, 6), "i", shuffle=False,
                          num_parallel_workers=2)
    with pytest.raises(DatasetError, match=r"GeneratorDataset reading failed on row 6 .*"
                                           r"KeyError: 'item 6 is missing'"):
        list(ds)


def test_breaking_out_of_a_loop_stops_the_workers():
    ds = NumpySlicesDataset(np.arange(500), column_names="x", shuffle=False).map(
        pipeline_fns.with_worker_pid, output_columns=["x", "pid"], num_parallel_workers=2,
        python_multiprocessing=True)
    pids = set()
    for _, pid in ds.create_tuple_iterator(output_numpy=True):
        pids.add(int(pid))
        if len(pids) == 2:
            break
    gc.collect()
    assert wait_gone(pids) == []


def test_stop_and_garbage_collection_stop_an_endless_iterator():
    ds = NumpySlicesDataset(np.arange(50), column_names="x", shuffle=False).map(
        pipeline_fns.with_worker_pid, output_columns=["x", "pid"], num_parallel_workers=2,
        python_multiprocessing=True)
    first = ds.create_tuple_iterator(output_numpy=True)  # num_epochs=-1: lives until closed
    pids_first = {int(pid) for _, pid in first}
    first.stop()
    assert wait_gone(pids_first, timeout=0) == []
    second = ds.create_tuple_iterator(output_numpy=True)
    pids_second = {int(pid) for _, pid in second}
    assert all(alive(p) for p in pids_second)  # still held for further epochs
    del second
    gc.collect()
    assert wait_gone(pids_second) == []


def test_a_worker_that_dies_is_reported():
    ds = NumpySlicesDataset(np.arange(20), shuffle=False).map(
        pipeline_fns.exit_on_5, num_parallel_workers=2, python_multiprocessing=True)
    with pytest.raises(DatasetError, match="worker process .* exited with code 3"):
        list(ds)


def test_operations_that_cannot_be_pickled_are_refused_with_a_remedy():
    ds = NumpySlicesDataset(np.arange(4)).map(lambda x: x, num_parallel_workers=2,
                                              python_multiprocessing=True)
    with pytest.raises(DatasetError, match="cannot be sent to worker processes.*threads"):
        list(ds)


def run_script(body):
    """Run ``body`` in a fresh interpreter (with the tests folder importable); its stdout."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(body)], capture_output=True,
                          text=True, env=env, timeout=120)
    return done


PIPELINE = """
    import numpy as np, sys
    from mskernel_data.api import NumpySlicesDataset
    import pipeline_fns
    ds = NumpySlicesDataset(np.arange(100000), column_names="x", shuffle=False).map(
        pipeline_fns.with_worker_pid, output_columns=["x", "pid"], num_parallel_workers=2,
        python_multiprocessing=True)
    it = ds.create_tuple_iterator(output_numpy=True)
    pids = set()
    for _, pid in it:
        pids.add(int(pid))
        if len(pids) == 2:
            break
    print(*pids, flush=True)
"""


@pytest.mark.parametrize("ending", ["exit", "error", "killed"])
def test_no_worker_outlives_the_interpreter(ending):
    """Workers go when the interpreter exits normally, on an uncaught exception, and even
    when the parent is killed without a chance to clean up."""
    endings = {"exit": "", "error": "raise SystemExit('boom')",
               "killed": "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"}
    done = run_script(PIPELINE + "    " + endings[ending] + "\n")
    pids = [int(p) for p in done.stdout.split()]
    assert len(pids) == 2, done.stderr
    assert wait_gone(pids) == []


def vm_rss_kib():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def test_memory_and_file_descriptors_stay_flat_over_many_epochs():
    """Fifty epochs through one iterator's workers, then fifteen iterators each starting and
    stopping its own workers: neither memory nor open files may keep growing."""
    images = np.arange(64 * 28 * 28, dtype=np.uint32).astype(np.uint8).reshape(64, 28, 28, 1)
    ds = NumpySlicesDataset({"image": images, "label": np.arange(64)})
    ds = ds.map([vision.RandomCrop(24), vision.Rescale(1 / 255, 0), vision.HWC2CHW()],
                input_columns="image", num_parallel_workers=2, python_multiprocessing=True)
    ds = ds.shuffle(16).batch(8)

    def epoch(iterator):
        return sum(int(labels.sum()) for _, labels in iterator)

    def fresh_iterator():
        return ds.create_tuple_iterator(num_epochs=1, output_numpy=True)

    for _ in range(3):  # warm up: imports, the fork server, allocator pools
        assert epoch(fresh_iterator()) == sum(range(64))
    gc.collect()
    rss, fds = vm_rss_kib(), open_fds()
    long_lived = ds.create_tuple_iterator(num_epochs=50, output_numpy=True)
    for _ in range(50):
        assert epoch(long_lived) == sum(range(64))
    for _ in range(15):
        assert epoch(fresh_iterator()) == sum(range(64))
    gc.collect()
    assert open_fds() <= fds
    growth = vm_rss_kib() - rss
    assert growth < 8 * 1024, f"RSS grew by {growth} KiB over 65 epochs"


def test_workers_compute_ahead_up_to_the_prefetch_window():
    """With 2 workers and prefetch_size 3, taking one row lets 2 + 3 rows be computed."""
    config.set_prefetch_size(3)
    computed = []

    def record(x):
        computed.append(int(x))
        return x

    ds = NumpySlicesDataset(np.arange(50), shuffle=False).map(record, num_parallel_workers=2)
    it = ds.create_tuple_iterator(output_numpy=True)
    assert int(next(it)[0]) == 0
    deadline = time.monotonic() + 10
    while len(computed) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)  # give a wrongly unbounded pool the chance to run further
    assert sorted(computed) == [0, 1, 2, 3, 4]
    it.stop()
