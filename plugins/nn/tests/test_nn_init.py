"""Initialisers: MindSpore's rules and defaults, checked by their statistics (PyTorch's
samplers and gain table as the oracle), seeds, and layer defaults."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import mskernel
from mskernel_nn import api as nn
from mskernel_nn.initializer import (
    Constant, HeNormal, HeUniform, Normal, TruncatedNormal, Uniform, XavierNormal,
    XavierUniform, calculate_gain, initializer,
)

SHAPE = (128, 64, 3, 3)  # 73728 draws; fan_in 576, fan_out 1152


def _draw(init, shape=SHAPE, seed=0) -> np.ndarray:
    return np.asarray(initializer(init, shape, seed=seed))


def _torch_draw(fill, shape=SHAPE) -> np.ndarray:
    torch.manual_seed(0)
    t = torch.empty(shape)
    fill(t)
    return t.numpy()


def _same_distribution(ours: np.ndarray, theirs: np.ndarray) -> None:
    """Moments and extremes agree within what 73728 draws allow (a few standard errors)."""
    std = float(theirs.std())
    se = std / math.sqrt(ours.size)
    assert abs(ours.mean() - theirs.mean()) < 6 * se
    assert ours.std() == pytest.approx(std, rel=0.02)
    assert ours.min() >= theirs.min() - 0.05 * std and ours.max() <= theirs.max() + 0.05 * std
    for q in (0.05, 0.25, 0.5, 0.75, 0.95):
        assert np.quantile(ours, q) == pytest.approx(np.quantile(theirs, q), abs=0.03 * std)


SAMPLERS = [
    (Uniform(0.3), lambda t: torch.nn.init.uniform_(t, -0.3, 0.3)),
    (Normal(0.5, mean=1.0), lambda t: torch.nn.init.normal_(t, 1.0, 0.5)),
    (TruncatedNormal(1.0, mean=0.5, a=-1.0, b=1.5),
     lambda t: torch.nn.init.trunc_normal_(t, 0.5, 1.0, -1.0, 1.5)),
    (XavierUniform(gain=2.0), lambda t: torch.nn.init.xavier_uniform_(t, gain=2.0)),
    (XavierNormal(), torch.nn.init.xavier_normal_),
    (HeUniform(math.sqrt(5)), lambda t: torch.nn.init.kaiming_uniform_(t, a=math.sqrt(5))),
    (HeUniform(mode="fan_out", nonlinearity="relu"),
     lambda t: torch.nn.init.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu")),
    (HeNormal(0.1, nonlinearity="leaky_relu"),
     lambda t: torch.nn.init.kaiming_normal_(t, a=0.1)),
    (HeNormal(mode="fan_out", nonlinearity="tanh"),
     lambda t: torch.nn.init.kaiming_normal_(t, mode="fan_out", nonlinearity="tanh")),
]


@pytest.mark.parametrize("init, fill", SAMPLERS, ids=lambda v: repr(v)[:40])
def test_random_initializers_match_torch_distributions(init, fill):
    _same_distribution(_draw(init), _torch_draw(fill))


@pytest.mark.parametrize("nonlinearity, param", [
    ("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
    ("leaky_relu", None), ("leaky_relu", 0.3), ("selu", None)])
def test_calculate_gain_matches_torch(nonlinearity, param):
    assert calculate_gain(nonlinearity, param) == pytest.approx(
        torch.nn.init.calculate_gain(nonlinearity, param))


def test_seeds_make_draws_reproducible():
    assert np.array_equal(_draw("normal", (50,), seed=3), _draw("normal", (50,), seed=3))
    assert not np.array_equal(_draw("normal", (50,), seed=3), _draw("normal", (50,), seed=4))


def test_the_process_seed_makes_networks_reproducible():
    def build():
        return nn.SequentialCell(nn.Conv2d(3, 4, 3), nn.Flatten(), nn.Dense(4, 4), nn.Dense(4, 4))

    def weights(net):
        return [np.asarray(p) for p in net.get_parameters()]

    mskernel.random.set_seed(7)
    first = weights(build())
    mskernel.random.set_seed(7)
    again = weights(build())
    mskernel.random.set_seed(8)
    other = weights(build())
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not any(np.array_equal(a, b) for a, b in zip(first, other))
    assert not np.array_equal(first[1], first[3])  # each draw takes its own key
    assert len(first) == 5


@pytest.mark.parametrize("make, fan_in", [
    (lambda: nn.Dense(40, 30), 40), (lambda: nn.Conv2d(6, 8, 3, group=2, has_bias=True), 27),
    (lambda: nn.Conv2dTranspose(6, 8, 3, has_bias=True), 72)])
def test_layer_defaults_are_mindspore_2x(make, fan_in):
    layer = make()
    bound = 1 / math.sqrt(fan_in)  # HeUniform(sqrt(5)) and Uniform(1/sqrt(fan_in)) agree
    weight = np.asarray(layer.weight)
    assert np.abs(weight).max() <= bound
    assert np.abs(weight).max() > 0.9 * bound  # over a thousand draws or more
    assert np.abs(np.asarray(layer.bias)).max() <= bound
    assert nn.Embedding(10, 4).embedding_table.numpy().std() < 0.03  # Normal(0.01)


def test_deterministic_initializers_names_numbers_and_arrays():
    assert np.array_equal(_draw("ones", (2, 3)), np.ones((2, 3), np.float32))
    assert np.array_equal(_draw("zeros", 4), np.zeros(4, np.float32))
    assert np.array_equal(_draw(Constant(2.5), (2,)), [2.5, 2.5])
    assert np.array_equal(np.asarray(initializer(3, (2,), "int32")), [3, 3])
    given = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = initializer(given, (2, 3))
    assert t.dtype is mskernel.float32 and np.array_equal(np.asarray(t), given)
    assert initializer("normal", (4,), "float16").dtype is mskernel.float16
    dense = nn.Dense(2, 3, weight_init="zeros", bias_init=np.ones(3, np.float32))
    assert np.abs(np.asarray(dense.weight)).max() == 0 and np.asarray(dense.bias).min() == 1


def test_initializer_errors():
    with pytest.raises(ValueError, match="unknown initializer"):
        initializer("glorot", (2, 2))
    with pytest.raises(ValueError, match="needs \\[2, 2\\]"):
        initializer(np.zeros(3), (2, 2))
    with pytest.raises(TypeError, match="int32"):
        initializer("normal", (2,), "int32")
    with pytest.raises(ValueError, match="at least 2 dims"):
        initializer(XavierUniform(), (5,))
    with pytest.raises(ValueError, match="a < b"):
        TruncatedNormal(a=1.0, b=1.0)
    with pytest.raises(ValueError, match="mode"):
        HeUniform(mode="fan_avg")
    with pytest.raises(ValueError, match="unknown nonlinearity"):
        HeNormal(nonlinearity="swish")
    with pytest.raises(ValueError, match="shape"):
        initializer("normal")


def test_the_nn_namespace_exposes_the_initializer_function():
    from mskernel import nn

    drawn = nn.initializer(nn.Normal(0.5), (3, 4), seed=7)
    assert drawn.shape == (3, 4) and drawn.dtype.name == "float32"
    np.testing.assert_array_equal(drawn.numpy(), initializer(nn.Normal(0.5), (3, 4),
                                                             seed=7).numpy())
