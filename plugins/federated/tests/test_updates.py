"""Parameters as arrays, top-k compression with error feedback, and the server's gate."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from flwr.common import Code, FitRes, Status, ndarrays_to_parameters, parameters_to_ndarrays
from flwr.server.strategy import FedAvg

from mskernel_federated.compression import compress, decompress
from mskernel_federated.guard import GuardedStrategy
from mskernel_federated.weights import UpdateError, get_weights, set_weights

import tiny_task


def test_weights_round_trip_and_mismatches_are_named() -> None:
    net = tiny_task.task.model()
    arrays = [a + 1 for a in get_weights(net)]
    set_weights(net, arrays)
    for got, want in zip(get_weights(net), arrays):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(UpdateError, match=r"0.weight: expected float32\[16, 8\], got "
                                          r"float64\[16, 8\]"):
        set_weights(net, [arrays[0].astype(np.float64), *arrays[1:]])
    with pytest.raises(UpdateError, match="expected 4 arrays, got 3"):
        set_weights(net, arrays[:3])


def test_topk_error_feedback_delays_but_never_loses_an_update() -> None:
    rng = np.random.default_rng(0)
    shapes = [(6, 5), (7,)]
    residual, sent_total = None, [np.zeros(s, np.float32) for s in shapes]
    update_total = [np.zeros(s, np.float32) for s in shapes]
    for _ in range(5):
        update = [rng.normal(size=s).astype(np.float32) for s in shapes]
        payload, residual = compress(update, residual, ratio=0.2)
        assert [p.size for p in payload[::2]] == [6, 2]
        dense = decompress(payload, update)
        for i in range(len(shapes)):
            sent_total[i] += dense[i]
            update_total[i] += update[i]
    for sent, total, rest in zip(sent_total, update_total, residual):
        np.testing.assert_allclose(sent + rest, total, rtol=1e-5, atol=1e-5)


def test_a_malformed_topk_payload_is_named() -> None:
    like = [np.zeros((3, 2), np.float32)]
    with pytest.raises(UpdateError, match="expected 2 arrays, got 1"):
        decompress([np.zeros(1, np.int64)], like)
    with pytest.raises(UpdateError, match=r"index outside \[0, 6\)"):
        decompress([np.array([6]), np.array([1.0], np.float32)], like)


class Proxy:
    def __init__(self, node_id: int) -> None:
        self.node_id = node_id


def fit_res(arrays: list[np.ndarray], examples: int = 10) -> FitRes:
    return FitRes(Status(Code.OK, ""), ndarrays_to_parameters(arrays), examples, {})


def test_the_gate_rejects_bad_models_and_averages_the_rest(caplog) -> None:
    glob = [np.zeros((2, 2), np.float32), np.zeros(3, np.float32)]
    gate = GuardedStrategy(FedAvg(), max_update_norm=10.0)
    gate.global_arrays = glob
    good = [[np.full((2, 2), v, np.float32), np.full(3, v, np.float32)] for v in (1.0, 3.0)]
    results = [(Proxy(1), fit_res(good[0])), (Proxy(2), fit_res(good[1])),
               (Proxy(3), fit_res([np.zeros(4, np.float32), glob[1]])),
               (Proxy(4), fit_res([glob[0], np.array([0, np.inf, 0], np.float32)])),
               (Proxy(5), fit_res([glob[0], np.full(3, 100.0, np.float32)])),
               (Proxy(6), fit_res(glob[:1]))]
    with caplog.at_level(logging.ERROR, logger="flwr"):
        parameters, _ = gate.aggregate_fit(1, results, [])
    mean = parameters_to_ndarrays(parameters)
    np.testing.assert_allclose(mean[0], 2.0)
    np.testing.assert_allclose(mean[1], 2.0)
    rejected = gate.rounds[1]["rejected"]
    assert len(rejected) == 4 and gate.rounds[1]["accepted"] == 2
    assert "client 3: array 0: expected float32[2, 2], got float32[4]" in rejected[0]
    assert "client 4: array 1: holds 1 non-finite values" in rejected[1]
    assert "client 5: the update's norm 173.2 exceeds max_update_norm = 10" in rejected[2]
    assert "client 6: expected 2 arrays, got 1" in rejected[3]
    assert "100.0" not in caplog.text  # the log names the client and reason, never values
