"""The client's local training, in this process: FedProx's proximal term, the time budget
of a straggler, and top-k replies with the residual kept in the node's state."""

from __future__ import annotations

import numpy as np
from flwr.app import RecordDict

from mskernel_federated.client import RESIDUAL_KEY, MskernelClient
from mskernel_federated.compression import decompress
from mskernel_federated.config import FederatedConfig
from mskernel_federated.server import GlobalModel
from mskernel_federated.task import load_task
from mskernel_federated.weights import global_norm


def setup(**sections: dict) -> tuple[FederatedConfig, list[np.ndarray]]:
    config = FederatedConfig.model_validate(
        {"task": "tiny_task:task", "seed": 3, "server": {"evaluate": False},
         "client": {"batch_size": 16, "learning_rate": 0.1, "jit": False,
                    **sections.pop("client", {})}, **sections})
    return config, GlobalModel(load_task(config.task), config).initial_weights()


def moved(config: FederatedConfig, initial: list[np.ndarray], fit_config: dict) -> float:
    client = MskernelClient(load_task(config.task), config, 0, 2)
    arrays, count, metrics = client.fit(initial, {"server-round": 1, **fit_config})
    assert count == 64 and metrics["steps"] == 4
    return global_norm([a - b for a, b in zip(arrays, initial)])


def test_the_proximal_term_keeps_the_model_near_the_global_one() -> None:
    config, initial = setup()
    assert moved(config, initial, {"proximal_mu": 5.0}) < 0.8 * moved(config, initial, {})


def test_a_time_budget_ends_local_training_early() -> None:
    config, initial = setup(client={"time_budget_s": 1e-6, "local_epochs": 3})
    client = MskernelClient(load_task(config.task), config, 0, 2)
    _, count, metrics = client.fit(initial, {"server-round": 1})
    assert metrics["steps"] == 1 and count == 16


def test_topk_replies_keep_the_rest_as_error_feedback() -> None:
    config, initial = setup(compression={"kind": "topk", "ratio": 0.25})
    state = RecordDict()
    client = MskernelClient(load_task(config.task), config, 0, 2, state)
    payload, _, metrics = client.fit(initial, {"server-round": 1})
    dense = decompress(payload, initial)
    residual = state.array_records[RESIDUAL_KEY].to_numpy_ndarrays()
    full, _, _ = MskernelClient(load_task(config.task), config.model_copy(
        update={"compression": config.compression.model_copy(update={"kind": "none"})}),
        0, 2).fit(initial, {"server-round": 1})
    for d, r, f, i in zip(dense, residual, full, initial):
        np.testing.assert_allclose(d + r, f - i, rtol=1e-5, atol=1e-6)
    assert metrics["bytes_sent"] < 0.55 * metrics["bytes_received"]  # an int32 index beside each value
