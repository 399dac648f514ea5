"""Training in mixed precision: through Model(amp_level=...), eager and graph mode alike, and
loss scaling that skips the steps whose gradients overflow and recovers."""

from __future__ import annotations

import numpy as np
import pytest

import mskernel
from mskernel import bfloat16, float16, float32, nn
from mskernel_sdk import MskernelError, Tensor

from mskernel_boost.amp.api import auto_mixed_precision, build_train_network
from mskernel_boost.amp.loss_scale import (
    DynamicLossScaleManager, DynamicLossScaler, FixedLossScaleManager, StaticLossScaler,
    TrainOneStepWithLossScaleCell, all_finite,
)


def _losses(net, batch, jit, amp_level="O0", steps=4, **kwargs):
    optimizer = nn.Momentum(net.trainable_params(), 0.05, 0.9)
    model = mskernel.Model(net, nn.CrossEntropyLoss(), optimizer, jit=jit, amp_level=amp_level,
                           **kwargs)
    step = model._step("train", model.train_network)
    model.train_network.set_train(True)
    out = []
    for _ in range(steps):
        loss = step(Tensor(batch[0]), Tensor(batch[1]))
        out.append(float(np.asarray(loss[0] if isinstance(loss, tuple) else loss)))
    return out, model


@pytest.mark.parametrize("level", ["O1", "O2", "O3"])
def test_model_trains_in_mixed_precision_like_float32(small_net, make_net, batch, level):
    expected, _ = _losses(make_net(), batch, jit=True)
    got, model = _losses(small_net, batch, jit=True, amp_level=level)
    np.testing.assert_allclose(got, expected, rtol=0.03, atol=0.03)
    assert got[-1] < got[0]
    # fp32 master weights: the parameters and the optimizer's state stay float32
    assert all(p.dtype is float32 for p in small_net.get_parameters()
               if p.dtype.is_floating)
    assert isinstance(model.predict_network, mskernel.amp.MixedPrecisionCell)


def test_eager_and_graph_mode_agree(small_net, make_net, batch):
    eager_net = make_net()
    graph, _ = _losses(small_net, batch, jit=True, amp_level="O2")
    eager, _ = _losses(eager_net, batch, jit=False, amp_level="O2")
    np.testing.assert_allclose(graph, eager, rtol=1e-2, atol=1e-2)


def test_unknown_model_options_are_rejected(small_net):
    with pytest.raises(TypeError, match="unexpected keyword arguments \\['bogus'\\]"):
        mskernel.Model(small_net, nn.CrossEntropyLoss(),
                       nn.Momentum(small_net.trainable_params(), 0.1, 0.9), amp_level="O2",
                       bogus=1)


def test_all_finite():
    assert bool(all_finite([Tensor(np.ones(3, np.float32)), Tensor(np.zeros(2, np.float32))]))
    assert not bool(all_finite([Tensor(np.ones(3, np.float32)),
                                Tensor(np.array([1.0, np.inf], np.float32))]))
    assert not bool(all_finite(Tensor(np.array([np.nan], np.float32))))


def test_dynamic_scaler_shrinks_on_overflow_and_grows_after_the_window():
    scaler = DynamicLossScaler(1024.0, 2.0, 3)
    for finite, scale in [(False, 512), (True, 512), (True, 512), (True, 1024), (False, 512),
                          (True, 512)]:
        scaler.adjust(Tensor(np.array(finite)))
        assert float(np.asarray(scaler.scale_value)) == scale
    tiny = DynamicLossScaler(1.0, 2.0, 3)
    tiny.adjust(Tensor(np.array(False)))
    assert float(np.asarray(tiny.scale_value)) == 1.0  # never below 1
    x = Tensor(np.array(3.0, np.float32))
    assert float(np.asarray(StaticLossScaler(8.0).unscale(StaticLossScaler(8.0).scale(x)))) == 3.0
    with pytest.raises(ValueError, match="scale_window"):
        DynamicLossScaler(1.0, 2.0, 0)


@pytest.mark.parametrize("jit", [False, True])
def test_overflowing_steps_are_skipped_and_training_recovers(small_net, batch, jit):
    net = auto_mixed_precision(small_net, "O2", float16)
    optimizer = nn.Momentum(small_net.trainable_params(), 0.05, 0.9)
    # 2**20 times a loss near 1 overflows float16 gradients; the scale then halves per step
    step_cell = TrainOneStepWithLossScaleCell(nn.WithLossCell(net, nn.CrossEntropyLoss()),
                                              optimizer, DynamicLossScaleManager(2.0 ** 20, 2, 2))
    step_cell.set_train(True)
    step = mskernel.jit(step_cell) if jit else step_cell
    before = {p.name: p.asnumpy().copy() for p in optimizer.get_parameters()}
    before.update({p.name: p.asnumpy().copy() for p in small_net.trainable_params()})
    x, y = Tensor(batch[0]), Tensor(batch[1])
    loss, overflow, scale = step(x, y)
    assert bool(np.asarray(overflow)) and float(np.asarray(scale)) == 2.0 ** 19
    for p in (*optimizer.get_parameters(), *small_net.trainable_params()):
        np.testing.assert_array_equal(p.asnumpy(), before[p.name], err_msg=p.name)
    overflows = [bool(np.asarray(step(x, y)[1])) for _ in range(12)]
    assert not overflows[-1] and overflows[0]   # the scale came down until steps went through
    assert int(np.asarray(optimizer.global_step)) == overflows.count(False)
    changed = [not np.array_equal(p.asnumpy(), before[p.name])
               for p in small_net.trainable_params()]
    assert all(changed)
    losses = [float(np.asarray(step(x, y)[0])) for _ in range(5)]
    assert losses[-1] < float(np.asarray(loss))


def test_model_takes_a_loss_scale_manager(small_net, batch):
    losses, model = _losses(small_net, batch, jit=True, amp_level="O2", amp_dtype=float16,
                            loss_scale_manager=FixedLossScaleManager(128.0))
    assert isinstance(model.train_network, TrainOneStepWithLossScaleCell)
    assert losses[-1] < losses[0]
    # float16 at O2 scales dynamically by default, bfloat16 does not scale
    _, model = _losses(small_net, batch, jit=True, amp_level="O2", amp_dtype=float16, steps=1)
    assert isinstance(model.train_network.scaler, DynamicLossScaler)
    _, model = _losses(small_net, batch, jit=True, amp_level="O2", steps=1)
    assert not isinstance(model.train_network, TrainOneStepWithLossScaleCell)


def test_build_train_network(small_net, batch):
    step = build_train_network(small_net, nn.Momentum(small_net.trainable_params(), 0.05, 0.9),
                               nn.CrossEntropyLoss(), level="O1", amp_dtype=bfloat16)
    step.set_train(True)
    loss = step(Tensor(batch[0]), Tensor(batch[1]))
    assert np.isfinite(float(np.asarray(loss)))
    assert mskernel.amp.TrainOneStepWithLossScaleCell is TrainOneStepWithLossScaleCell


def test_an_unprovided_level_names_the_distribution(small_net):
    from mskernel_sdk import TrainingSetup, apply_training_transforms

    with pytest.raises(MskernelError, match="'nonexistent' training transform: no installed"):
        apply_training_transforms(TrainingSetup(small_net, None, None), "test",
                                  nonexistent="O1")
