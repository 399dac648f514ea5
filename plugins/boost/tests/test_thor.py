"""THOR: its Kronecker factors and damped inverses against a NumPy computation on a tiny
network, the refresh schedule, and training (eager and graph mode alike)."""

from __future__ import annotations

import numpy as np
import pytest

import mskernel
from mskernel import nn
from mskernel_sdk import Tensor

from mskernel_boost.thor import THOR, ThorTrainOneStepCell, thor


class Tiny(nn.Cell):
    """conv 3x3 (valid) → flatten → dense, no activations: a backward pass NumPy can do."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, pad_mode="valid", has_bias=True)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(3 * 2 * 2, 2)

    def construct(self, x):
        return self.fc(self.flatten(self.conv(x)))


def _tiny():
    mskernel.random.set_seed(3)
    return Tiny()


def _data(n=5):
    rng = np.random.default_rng(4)
    return (rng.standard_normal((n, 2, 4, 4)).astype(np.float32),
            rng.standard_normal((n, 2)).astype(np.float32))


def _patches(x, k=3):
    """im2col of a valid, stride-1 convolution: rows (image, pixel), columns (c, kh, kw)."""
    n, c, h, w = x.shape
    rows = []
    for i in range(n):
        for r in range(h - k + 1):
            for s in range(w - k + 1):
                rows.append(x[i, :, r:r + k, s:s + k].reshape(-1))
    return np.array(rows, np.float64)


def numpy_factors(conv_w, conv_b, fc_w, fc_b, x, t, gradient=False):
    """A and G of both layers for the mean squared error, with a hand-written backward pass
    (``gradient``: the dense weight's gradient instead)."""
    n = x.shape[0]
    p = _patches(x.astype(np.float64))                                   # [n*4, 18]
    conv_out = p @ conv_w.reshape(3, -1).T.astype(np.float64) + conv_b  # [(i, pixel), 3]
    flat = conv_out.reshape(n, 4, 3).transpose(0, 2, 1).reshape(n, 12)   # NCHW flatten
    y = flat @ fc_w.T.astype(np.float64) + fc_b
    g_fc = 2 * (y - t) / y.size                                           # d mean((y-t)^2)/dy
    if gradient:
        return g_fc.T @ flat
    g_flat = g_fc @ fc_w.astype(np.float64)
    g_conv = g_flat.reshape(n, 3, 4).transpose(0, 2, 1).reshape(-1, 3)    # [(i, pixel), 3]
    a_conv = p.T @ p / p.shape[0]
    a_fc = flat.T @ flat / n
    return (a_conv, n * g_conv.T @ g_conv), (a_fc, n * g_fc.T @ g_fc)


@pytest.mark.parametrize("jit", [False, True])
def test_factors_and_inverses_match_numpy(jit):
    net = _tiny()
    weights = [p.asnumpy().copy() for p in (net.conv.weight, net.conv.bias, net.fc.weight,
                                             net.fc.bias)]
    damping = 0.04
    opt = thor(net, 0.0, damping, 0.9, frequency=3)
    step_cell = ThorTrainOneStepCell(net, nn.MSELoss(), opt).set_train(True)
    step = mskernel.jit(step_cell) if jit else step_cell
    x, t = _data()
    step(Tensor(x), Tensor(t))
    expected = numpy_factors(*weights, x, t)
    root = np.sqrt(damping)
    for (a, g), a_inv, g_inv in zip(expected, opt.inverses_a, opt.inverses_g):
        np.testing.assert_allclose(a_inv.asnumpy(), np.linalg.inv(a + root * np.eye(len(a))),
                                   rtol=2e-3, atol=2e-3)
        np.testing.assert_allclose(g_inv.asnumpy(), np.linalg.inv(g + root * np.eye(len(g))),
                                   rtol=2e-3, atol=2e-3)


def test_the_update_is_g_inverse_gradient_a_inverse():
    net = _tiny()
    weights = [p.asnumpy().copy() for p in (net.conv.weight, net.conv.bias, net.fc.weight,
                                             net.fc.bias)]
    lr = 0.1
    opt = thor(net, lr, 0.04, 0.0, frequency=1)
    x, t = _data()
    ThorTrainOneStepCell(net, nn.MSELoss(), opt).set_train(True)(Tensor(x), Tensor(t))
    grad_fc = numpy_factors(*weights, x, t, gradient=True)
    a_inv, g_inv = opt.inverses_a[1].asnumpy(), opt.inverses_g[1].asnumpy()
    np.testing.assert_allclose(weights[2] - net.fc.weight.asnumpy(),
                               lr * g_inv @ grad_fc @ a_inv, rtol=1e-3, atol=1e-5)


def test_inverses_are_refreshed_every_frequency_steps():
    net = _tiny()
    opt = thor(net, 0.05, 0.04, 0.9, frequency=3)
    step = mskernel.jit(ThorTrainOneStepCell(net, nn.MSELoss(), opt).set_train(True))
    x, t = _data()
    snapshots = []
    for _ in range(7):
        step(Tensor(x), Tensor(t))
        snapshots.append(opt.inverses_g[1].asnumpy().copy())
    changed = [not np.array_equal(a, b) for a, b in zip(snapshots, snapshots[1:])]
    # refreshed at steps 0, 3 and 6: the snapshots after steps 3 and 6 differ from the ones
    # before them, the others are carried over
    assert changed == [False, False, True, False, False, True]


def test_thor_trains_like_in_eager_mode_and_lowers_the_loss():
    x, t = _data(16)
    losses = {}
    for jit in (False, True):
        net = _tiny()
        opt = thor(net, 0.05, 0.1, 0.9, frequency=2)
        step_cell = ThorTrainOneStepCell(net, nn.MSELoss(), opt).set_train(True)
        step = mskernel.jit(step_cell) if jit else step_cell
        losses[jit] = [float(step(Tensor(x), Tensor(t))) for _ in range(8)]
    np.testing.assert_allclose(losses[True], losses[False], rtol=1e-4, atol=1e-5)
    assert losses[True][-1] < 0.5 * losses[True][0]


def test_model_conversion_and_names():
    net = _tiny()
    names = [n for n, _ in net.parameters_and_names()]
    opt = thor(net, 0.05, 0.1, 0.9)
    assert [n for n, _ in net.parameters_and_names()] == names   # the wrapping keeps names
    loss = nn.MSELoss()
    model = mskernel.boost.ConvertModelUtils.convert_to_thor_model(
        mskernel.Model(net, loss, opt), network=net, loss_fn=loss, optimizer=opt)
    assert isinstance(model.train_network, ThorTrainOneStepCell)
    x, t = _data(16)
    model.train(2, [(x, t)] * 3, callbacks=[])
    assert int(np.asarray(opt.global_step)) == 6
    with pytest.raises(ValueError, match="frequency"):
        THOR(_tiny(), 0.1, 0.1, 0.9, frequency=0)
    with pytest.raises(TypeError, match="unexpected keyword"):
        thor(_tiny(), 0.1, 0.1, 0.9, bogus=1)
