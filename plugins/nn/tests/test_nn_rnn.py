"""LSTM and GRU against torch.nn with the same weights (multi-layer, bidirectional,
batch-first, given initial states), eagerly and under @jit."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import mskernel
from mskernel import Tensor
from mskernel_sdk import assert_close
from mskernel_nn import api as nn
from mskernel_nn.testing import compare_with_torch

F32 = mskernel.float32


def _x(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


CONFIGS = [
    {"num_layers": 1},
    {"num_layers": 2, "bidirectional": True},
    {"num_layers": 2, "batch_first": True, "has_bias": False},
]


def _torch_kwargs(config: dict) -> dict:
    kwargs = dict(config)
    kwargs["bias"] = kwargs.pop("has_bias", True)
    return kwargs


def _sequence(config: dict) -> np.ndarray:
    return _x(2, 5, 3) if config.get("batch_first") else _x(5, 2, 3)


@pytest.mark.parametrize("config", CONFIGS, ids=str)
def test_lstm_matches_torch(config):
    cell = nn.LSTM(3, 4, **config)
    compare_with_torch(cell, torch.nn.LSTM(3, 4, **_torch_kwargs(config)), [_sequence(config)],
                       check_jit=config.get("bidirectional", False))


@pytest.mark.parametrize("config", CONFIGS, ids=str)
def test_gru_matches_torch(config):
    cell = nn.GRU(3, 4, **config)
    compare_with_torch(cell, torch.nn.GRU(3, 4, **_torch_kwargs(config)), [_sequence(config)],
                       check_jit=config.get("bidirectional", False))


def test_initial_states_get_gradients():
    layers = 2 * 2
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True)

    class WithState(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True)

        def forward(self, x, h, c):
            return self.inner(x, (h, c))

    class Ours(nn.Cell):
        def __init__(self):
            super().__init__()
            self.inner = lstm

        def construct(self, x, h, c):
            return self.inner(x, (h, c))

    compare_with_torch(Ours(), WithState(), [_x(5, 2, 3), _x(layers, 2, 4, seed=1),
                                             _x(layers, 2, 4, seed=2)])
    gru = nn.GRU(3, 4)
    out, h_n = gru(Tensor(_x(5, 2, 3)), Tensor(_x(1, 2, 4, seed=1)))
    assert out.shape == (5, 2, 4) and h_n.shape == (1, 2, 4)
    assert_close(h_n[0], out[-1], F32)


def test_parameter_names_follow_torch_and_defaults_are_bounded():
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    assert [n for n, _ in lstm.parameters_and_names()] == \
        [n for n, _ in torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True).named_parameters()]
    for p in lstm.get_parameters():
        assert np.abs(np.asarray(p)).max() <= 0.5  # Uniform(1 / sqrt(hidden_size))


def test_the_recurrence_is_one_loop_under_jit():
    gru = nn.GRU(3, 4)
    text = mskernel.jit(gru).lower(Tensor(_x(6, 2, 3))).as_text()
    assert text.count("While") == 1


def test_dropout_between_layers_only_in_training():
    lstm = nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = Tensor(_x(5, 2, 3))
    assert_close(lstm(x)[0], lstm(x)[0], F32)
    lstm.set_train()
    assert not np.allclose(np.asarray(lstm(x)[0]), np.asarray(lstm(x)[0]))


def test_input_errors():
    with pytest.raises(ValueError, match=r"\[T, N, input_size\]"):
        nn.GRU(3, 4)(Tensor(_x(5, 2, 2)))
    with pytest.raises(ValueError, match="h_0"):
        nn.GRU(3, 4)(Tensor(_x(5, 2, 3)), Tensor(_x(2, 2, 4)))
