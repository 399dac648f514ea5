"""Horizontal FL with real processes: a SuperLink, SuperNodes and ``flwr run`` on the
loopback interface (each test bounded by its run's timeout; the federation's processes are
ended, with their children, when it closes)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import mskernel
from mskernel_federated.client import MskernelClient
from mskernel_federated.config import FederatedConfig
from mskernel_federated.runtime import Federation
from mskernel_federated.server import GlobalModel
from mskernel_federated.task import load_task

RUN_TIMEOUT = 600.0  # a bound on a hung run, not a speed assertion


def config(tmp_path: Path, clients: int, **sections: dict) -> FederatedConfig:
    return FederatedConfig.model_validate({
        "task": "tiny_task:task", "rounds": 1, "seed": 7,
        "strategy": {"min_fit_clients": clients, "min_available_clients": clients},
        "client": {"batch_size": 16, "learning_rate": 0.05},
        "server": {"output_dir": str(tmp_path / "out"), "evaluate": True},
        "runtime": {"client_app": "faulty_apps:client_app"},
        **sections})


def trained_locally(cfg: FederatedConfig, partition: int, clients: int) -> list[np.ndarray]:
    """What client ``partition`` sends in round 1, computed in this process."""
    task = load_task(cfg.task)
    initial = GlobalModel(task, cfg).initial_weights()
    arrays, _, _ = MskernelClient(task, cfg, partition, clients).fit(
        initial, {"server-round": 1})
    return arrays


def global_weights(cfg: FederatedConfig) -> list[np.ndarray]:
    params = mskernel.load_checkpoint(str(Path(cfg.server.output_dir) / "global.ckpt"))
    net = load_task(cfg.task).model()
    return [params[name].asnumpy() for name in net.parameters_dict()]


def printed_floats(text: str) -> set[str]:
    return set(re.findall(r"-?\d+\.\d{6}", text))


def test_secagg_survives_three_clients_killed_mid_round(tmp_path: Path) -> None:
    clients, killed = 10, {2, 3, 4}
    cfg = config(tmp_path, clients, secagg={
        "enabled": True, "num_shares": 7, "reconstruction_threshold": 4, "max_weight": 64})
    with Federation(tmp_path / "fed") as federation:
        federation.start_server()
        for i in range(clients):
            federation.start_client(i, clients, crash=int(i in killed))
        history = federation.run(cfg, timeout=RUN_TIMEOUT)
        server_log = federation.log("server.log") + federation.log("superlink.log")
        for i in killed:
            assert federation.clients[i].poll() is not None, f"client {i} still runs"
    (record,) = history["rounds"]
    assert "error" not in record, record
    survivors = [trained_locally(cfg, i, clients) for i in range(clients) if i not in killed]
    expected = [np.mean(arrays, axis=0) for arrays in zip(*survivors)]
    for got, want in zip(global_weights(cfg), expected):
        np.testing.assert_allclose(got, want, rtol=0, atol=2e-5)
    # the server saw only the masked sum: no client's weights appear in its log
    logged = printed_floats(server_log)
    for i in range(clients):
        if i not in killed:
            own = {f"{v:.6f}" for a in trained_locally(cfg, i, clients) for v in a.ravel()[:50]}
            assert not own & logged, f"client {i}'s weights appear in the server's log"


def test_malformed_and_tampered_models_are_rejected_and_the_round_goes_on(
        tmp_path: Path) -> None:
    clients = 4
    cfg = config(tmp_path, clients)
    with Federation(tmp_path / "fed") as federation:
        federation.start_server()
        federation.start_client(0, clients)
        federation.start_client(1, clients)
        federation.start_client(2, clients, malformed=1)
        federation.start_client(3, clients, tampered=1)
        history = federation.run(cfg, timeout=RUN_TIMEOUT)
        server_log = federation.log("server.log")
    (record,) = history["rounds"]
    assert record["accepted"] == 2
    reasons = "\n".join(record["rejected"])
    assert re.search(r"array 0: expected float32\[16, 8\], got float32\[64\]", reasons), reasons
    assert "array 1: holds 1 non-finite values" in reasons, reasons
    assert "rejected the model of client" in server_log
    honest = [trained_locally(cfg, i, clients) for i in (0, 1)]
    for got, want in zip(global_weights(cfg), [np.mean(a, axis=0) for a in zip(*honest)]):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert record["accuracy"] > 0
