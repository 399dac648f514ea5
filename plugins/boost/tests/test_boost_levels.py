"""The Boost levels: configuration, gradient freezing (what is frozen stays put), gradient
accumulation (the mean gradient of k batches in one update), LessBN and its clipping, and
Model(boost_level=...) in graph and eager mode."""

from __future__ import annotations

import numpy as np
import pytest

import mskernel
from mskernel import nn
from mskernel_sdk import Tensor

from mskernel_boost.api import (
    AutoBoost, BoostTrainOneStepCell, LessBN, adaptive_clip, freeze_sequence, parameter_groups,
)
from mskernel_boost.levels.config import BoostConfig, LEVELS


def test_levels_and_config_dict():
    assert AutoBoost("O1").boost_config == {**LEVELS["O0"], "less_bn": True,
                                            "grad_freeze": True}
    assert AutoBoost("O2").boost_config["adasum"]
    manual = AutoBoost("O0", {"boost": {"mode": "manual", "grad_accumulation": True},
                              "grad_accumulation": {"grad_accumulation_step": 4},
                              "grad_freeze": {"freeze_p": 0.5}})
    assert manual.config.enabled("grad_accumulation") and not manual.config.enabled("less_bn")
    assert manual.config.grad_accumulation_step == 4 and manual.config.freeze_p == 0.5
    assert not any(AutoBoost("O2", {"boost": {"mode": "disable_all"}}).boost_config.values())
    with pytest.raises(ValueError, match="boost mode"):
        AutoBoost("O1", {"boost": {"mode": "fast"}})
    with pytest.raises(ValueError, match="boost_level must be one of"):
        AutoBoost("O3")
    with pytest.raises(ValueError, match="dim_reduce"):
        AutoBoost("O0", {"boost": {"mode": "manual", "dim_reduce": True}})
    with pytest.raises(ValueError, match="unknown key"):
        AutoBoost("O1", {"grad_freeze": {"bogus": 1}})


def test_freeze_sequences():
    assert freeze_sequence(4, 0, 0.5, 10) == [0, 0, 0, 1, 2, 3, 0, 0, 0, 1]
    seq = freeze_sequence(5, 1, 0.7, 2000)
    assert seq == freeze_sequence(5, 1, 0.7, 2000)              # seeded
    assert abs(seq.count(0) / len(seq) - 0.7) < 0.02
    counts = [seq.count(g) for g in range(1, 5)]
    assert counts == sorted(counts, reverse=True)   # groups freezing less, more often
    assert freeze_sequence(1, 1, 0.7, 5) == [0] * 5


def _net():
    mskernel.random.set_seed(0)
    return nn.SequentialCell([nn.Dense(6, 8), nn.ReLU(), nn.Dense(8, 8), nn.ReLU(),
                              nn.Dense(8, 3)])


def _batch(seed=0):
    rng = np.random.default_rng(seed)
    return (Tensor(rng.standard_normal((16, 6)).astype(np.float32)),
            Tensor(rng.integers(0, 3, 16).astype(np.int32)))


def test_parameter_groups_are_nested_suffixes():
    params = _net().trainable_params()
    groups = parameter_groups(params, 3)
    assert groups[0] == params
    assert all(g == params[len(params) - len(g):] for g in groups)
    assert [len(g) for g in groups] == sorted((len(g) for g in groups), reverse=True)


@pytest.mark.parametrize("jit", [False, True])
def test_frozen_parameters_and_their_state_keep_their_values(jit):
    net = _net()
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    config = BoostConfig(switches={**LEVELS["O0"], "grad_freeze": True}, param_groups=3,
                         freeze_type=0, freeze_p=0.5)
    cell = BoostTrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), opt, config)
    cell.set_train(True)
    step = mskernel.jit(cell) if jit else cell
    assert len(cell.groups) == 2 and cell.sequence[:4] == [0, 1, 0, 1]
    x, y = _batch()
    step(x, y)                       # group 0: everything trains
    before = {p.name: p.asnumpy().copy() for p in (*opt.get_parameters(),
                                                   *net.trainable_params())}
    step(x, y)                       # group 1: the first block is frozen
    trained = {p.name for p in cell.groups[1]}
    assert 0 < len(trained) < len(before)
    for p in net.trainable_params():
        moved = not np.array_equal(p.asnumpy(), before[p.name])
        assert moved == (p.name in trained), p.name
    frozen = {p.name for p in net.trainable_params()} - trained
    slots = [s for s in opt.get_parameters() if s.name.partition(".")[2] in frozen]
    assert slots
    for s in slots:
        np.testing.assert_array_equal(s.asnumpy(), before[s.name])


def test_accumulation_updates_with_the_mean_gradient_every_k_steps():
    lr = 0.1
    config = BoostConfig(switches={**LEVELS["O0"], "grad_accumulation": True},
                         grad_accumulation_step=2)
    net = _net()
    w0 = [p.asnumpy().copy() for p in net.trainable_params()]
    cell = BoostTrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()),
                                 nn.SGD(net.trainable_params(), lr), config).set_train(True)
    step = mskernel.jit(cell)
    (x1, y1), (x2, y2) = _batch(1), _batch(2)
    step(x1, y1)
    assert all(np.array_equal(p.asnumpy(), w) for p, w in zip(net.trainable_params(), w0))
    step(x2, y2)
    reference = _net()
    with_loss = nn.WithLossCell(reference, nn.CrossEntropyLoss())
    weights = reference.trainable_params()
    g1 = mskernel.grad(with_loss, None, weights)(x1, y1)
    g2 = mskernel.grad(with_loss, None, weights)(x2, y2)
    for p, w, a, b in zip(net.trainable_params(), w0, g1, g2):
        np.testing.assert_allclose(p.asnumpy(), w - lr * (a.asnumpy() + b.asnumpy()) / 2,
                                   rtol=1e-5, atol=1e-6)


def test_less_bn_keeps_the_first_batch_norm_and_clips_adaptively():
    class Convs(nn.Cell):
        def __init__(self):
            super().__init__()
            self.body = nn.SequentialCell([nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(),
                                           nn.Conv2d(2, 2, 3), nn.BatchNorm2d(2),
                                           nn.Conv2d(2, 2, 3), nn.BatchNorm2d(2)])

        def construct(self, x):
            return self.body(x)

    net = Convs()
    less = LessBN(net)
    assert less.removed == 2
    assert sum(isinstance(c, nn.BatchNorm2d) for _, c in net.cells_and_names()) == 1
    rng = np.random.default_rng(0)
    g = rng.standard_normal((4, 3)).astype(np.float32) * 10
    w = rng.standard_normal((4, 3)).astype(np.float32)
    clipped = adaptive_clip(Tensor(g), Tensor(w), 0.05).asnumpy()
    g_norm = np.linalg.norm(g, axis=1, keepdims=True)
    w_norm = np.maximum(np.linalg.norm(w, axis=1, keepdims=True), 1e-3)
    np.testing.assert_allclose(clipped, g * np.minimum(1, 0.05 * w_norm / g_norm), rtol=1e-5)


@pytest.mark.parametrize("level", ["O1", "O2"])
def test_model_with_a_boost_level_trains(level):
    net = _net()
    x, y = _batch()
    model = mskernel.Model(net, nn.CrossEntropyLoss(), nn.Momentum(net.trainable_params(),
                                                                   0.1, 0.9),
                           boost_level=level, boost_config_dict={
                               "grad_freeze": {"param_groups": 2, "freeze_p": 0.5}})
    assert isinstance(model.train_network, BoostTrainOneStepCell)
    step = model._step("train", model.train_network)
    model.train_network.set_train(True)
    losses = [float(step(x, y)) for _ in range(12)]
    assert losses[-1] < losses[0]
