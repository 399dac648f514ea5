"""Data parallel training equals serial training: N ranks with batch B each end with the
parameters, mean losses and evaluation metrics of one process with batch N·B, within float32
tolerance — graph mode (``Model(jit=True)``, parallel mode from ``set_auto_parallel_context``)
and eager mode (``Model(..., parallel_mode="data_parallel")``), on an MLP and a small LeNet.
The checkpoint rank 0 writes loads on every rank (checked inside ``programs/
data_parallel_train.py``)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import alone, launch, ok

SERIAL_BATCH = 32
#: mlp-graph: 2 KB buckets, so the step has buckets of one gradient and of several, each
#: all-reduce started during the backward pass; lenet-eager: one bucket (25 MB), eagerly
CASES = {"mlp-graph": ["--network", "mlp", "--bucket-mb", "0.002"],
         "lenet-eager": ["--network", "lenet", "--eager", "--explicit"]}


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    """The serial result of each case, computed once."""
    results = {}
    for name, args in CASES.items():
        out = tmp_path_factory.mktemp(f"serial-{name}")
        ok(alone("data_parallel_train.py", "--out", str(out), "--batch", str(SERIAL_BATCH),
                 *args))
        results[name] = dict(np.load(out / "result.npz"))
    return results


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("case", list(CASES))
def test_n_ranks_match_one_process(n, case, serial, tmp_path):
    output = ok(launch(n, "data_parallel_train.py", "--out", str(tmp_path), "--batch",
                       str(SERIAL_BATCH // n), *CASES[case]))
    got, want = dict(np.load(tmp_path / "result.npz")), serial[case]
    assert int(got["size"]) == n
    params = [k for k in want if k.startswith("param:")]
    assert params and sorted(params) == sorted(k for k in got if k.startswith("param:"))
    for name in params:  # a few steps of float32 with sums in another order
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6, err_msg=name)
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-5)
    np.testing.assert_allclose(got["acc"], want["acc"], rtol=0, atol=0)
    np.testing.assert_allclose(got["loss"], want["loss"], rtol=1e-5)
    assert output.count("checkpoints ['dp-1_4.ckpt']") == n  # one file, seen by every rank
