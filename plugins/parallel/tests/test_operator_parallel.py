"""Operator parallelism on real ranks: redistribution between layouts over MPI (graphs run by
the reference semantics and compiled by the cpu backend), and a
Megatron-style MLP and transformer block trained on 2 (``mp``) and 4 (``dp`` × ``mp``) ranks
ending with the losses and parameters of one process (float32 tolerance)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import alone, launch, ok

MODELS = ["mlp", "block"]
EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "parallel"


@pytest.mark.parametrize("n, mesh", [(2, "2"), (4, "2x2")])
def test_redistribution_over_mpi(n, mesh):
    assert "checked 30 pairs" in ok(launch(n, "redistribute_check.py", "--mesh", mesh,
                                           "--pairs", "30"))


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    results = {}
    for model in MODELS:
        out = tmp_path_factory.mktemp(f"serial-{model}")
        ok(alone("operator_parallel_train.py", "--out", str(out), "--model", model, "--serial"))
        results[model] = dict(np.load(out / "result.npz"))
    return results


@pytest.mark.parametrize("n, mesh", [(2, "1x2"), (4, "2x2")])
@pytest.mark.parametrize("model", MODELS)
def test_sharded_training_matches_one_process(model, n, mesh, serial, tmp_path):
    output = ok(launch(n, "operator_parallel_train.py", "--out", str(tmp_path), "--model", model,
                       "--mesh", mesh))
    assert output.count("collectives ['parallel.all_reduce']") == n  # Megatron: all-reduces only
    got, want = dict(np.load(tmp_path / "result.npz")), serial[model]
    assert sorted(got) == sorted(want)
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-5)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6, err_msg=name)


def test_zero1_shards_the_momentum_and_matches_one_process(tmp_path):
    """Momentum SGD with the optimizer state split over dp (ZeRO-1) on 2x2 ranks equals
    momentum SGD in one process, holding less state per rank."""
    ok(alone("operator_parallel_train.py", "--out", str(tmp_path / "serial"), "--model", "block",
             "--serial", "--momentum", "0.9"))
    runs = {}
    for zero in (False, True):
        out = tmp_path / f"zero{zero}"
        output = ok(launch(4, "operator_parallel_train.py", "--out", str(out), "--model", "block",
                           "--mesh", "2x2", "--momentum", "0.9", *(["--zero"] if zero else [])))
        runs[zero] = max(int(line.rsplit(" ", 1)[1]) for line in output.splitlines()
                         if "optimizer bytes" in line)
        got, want = dict(np.load(out / "result.npz")), dict(np.load(tmp_path / "serial" /
                                                                    "result.npz"))
        np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-5)
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6, err_msg=name)
    assert runs[True] < 0.7 * runs[False]


def test_sharded_checkpoints_gather_and_reshard(serial, tmp_path):
    """4 ranks save both checkpoints; the whole one holds the serial parameters, and the
    per-rank files load into 2 ranks (another mesh) with the same values."""
    from mskernel_parallel.sharding.checkpoint import load_distributed_checkpoint

    import mskernel

    saved = tmp_path / "saved"
    saved.mkdir()
    ok(launch(4, "operator_parallel_train.py", "--out", str(tmp_path / "four"), "--model", "block",
              "--mesh", "2x2", "--save", str(saved)))
    want = serial["block"]
    whole = mskernel.train.load_checkpoint(str(saved / "net.ckpt"))
    files = sorted(saved.glob("net_rank*.ckpt"))
    assert len(files) == 4
    gathered = load_distributed_checkpoint(files)
    assert sorted(gathered) == sorted(whole)
    for name, value in gathered.items():
        np.testing.assert_array_equal(value, whole[name].numpy())
    ok(launch(2, "operator_parallel_train.py", "--out", str(tmp_path / "two"), "--model", "block",
              "--mesh", "1x2", "--resume", str(saved)))
    resumed = dict(np.load(tmp_path / "two" / "result.npz"))
    for name in want:
        if name.startswith("param:"):
            np.testing.assert_allclose(resumed[name], want[name], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("example, plan", [("semi_auto_parallel.py", "all_reduce over mp"),
                                           ("auto_parallel.py", "predicted per device")])
def test_examples_match_one_process_on_four_ranks(example, plan):
    output = ok(launch(4, str(EXAMPLES / example)))
    assert "matches one process" in output and plan in output
