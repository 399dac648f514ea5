"""Layers against their torch.nn counterparts with the same weights: outputs, gradients with
respect to inputs and parameters, and the jitted layer against the eager one."""

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
tnn = torch.nn


def _x(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(np.float32)


class _Crop(tnn.Module):
    """A torch module followed by cropping (slices) and zero padding at the end of each
    spatial dim: MindSpore's transposed-convolution windows."""

    def __init__(self, inner: tnn.Module, starts, lengths) -> None:
        super().__init__()
        self.inner = inner
        self.starts, self.lengths = starts, lengths

    def forward(self, x):
        y = self.inner(x)
        for axis, (start, length) in enumerate(zip(self.starts, self.lengths), start=2):
            y = y.narrow(axis, start, min(length, y.shape[axis] - start))
            short = length - y.shape[axis]
            if short:
                pad = [0, 0] * (y.ndim - axis - 1) + [0, short]
                y = torch.nn.functional.pad(y, pad)
        return y


# -- dense, activations, shape layers ---------------------------------------------------------


@pytest.mark.parametrize("has_bias", [True, False])
def test_dense(has_bias):
    cell = nn.Dense(5, 3, has_bias=has_bias)
    compare_with_torch(cell, tnn.Linear(5, 3, bias=has_bias), [_x(2, 4, 5)])


def test_dense_with_an_activation_by_name():
    cell = nn.Dense(4, 3, activation="tanh")
    compare_with_torch(cell, tnn.Sequential(tnn.Linear(4, 3), tnn.Tanh()), [_x(6, 4)],
                       {"weight": "0.weight", "bias": "0.bias"})


ACTIVATIONS = [
    (nn.ReLU(), tnn.ReLU()), (nn.ReLU6(), tnn.ReLU6()), (nn.Sigmoid(), tnn.Sigmoid()),
    (nn.Tanh(), tnn.Tanh()), (nn.SiLU(), tnn.SiLU()),
    (nn.GELU(), tnn.GELU(approximate="tanh")), (nn.GELU(approximate=False), tnn.GELU()),
    (nn.Softmax(axis=1), tnn.Softmax(dim=1)), (nn.LogSoftmax(), tnn.LogSoftmax(dim=-1)),
    (nn.LeakyReLU(), tnn.LeakyReLU(0.2)), (nn.ELU(alpha=0.7), tnn.ELU(alpha=0.7)),
    (nn.Softplus(beta=2.0, threshold=3.0), tnn.Softplus(beta=2.0, threshold=3.0)),
    (nn.HSigmoid(), tnn.Hardsigmoid()), (nn.HSwish(), tnn.Hardswish()),
    (nn.PReLU(channel=3, w=0.3), tnn.PReLU(3)), (nn.Flatten(), tnn.Flatten()),
    (nn.Flatten(0, 1), tnn.Flatten(0, 1)), (nn.Identity(), tnn.Identity()),
]


@pytest.mark.parametrize("cell, module", ACTIVATIONS, ids=lambda c: type(c).__name__)
def test_activations_and_shape_layers(cell, module):
    x = _x(2, 3, 4) * 2.5  # reaches past the kinks of relu6, hard sigmoid and softplus
    compare_with_torch(cell, module, [x], {"w": "weight"}, check_jit=False)


def test_activations_jit():
    x = Tensor(_x(2, 3, 4))
    for cell, _ in ACTIVATIONS:
        assert_close(mskernel.jit(cell)(x), cell(x), F32, what=type(cell).__name__)


def test_get_activation_and_unknown_names():
    assert isinstance(nn.get_activation("ReLU"), nn.ReLU)
    with pytest.raises(KeyError, match="unknown activation"):
        nn.get_activation("swoosh")


# -- convolutions -----------------------------------------------------------------------------


def test_conv2d_pad_mode_pad_with_asymmetric_padding_groups_and_bias():
    cell = nn.Conv2d(4, 6, (3, 2), stride=2, pad_mode="pad", padding=(1, 2, 0, 1), group=2,
                     has_bias=True)
    module = tnn.Sequential(tnn.ZeroPad2d((0, 1, 1, 2)),  # left, right, top, bottom
                            tnn.Conv2d(4, 6, (3, 2), stride=2, groups=2))
    compare_with_torch(cell, module, [_x(2, 4, 7, 6)], {"weight": "1.weight", "bias": "1.bias"})


def test_conv2d_same_puts_the_odd_padding_after():
    cell = nn.Conv2d(3, 4, 4, stride=2)  # 7 -> 4 outputs: 3 rows of padding, 1 before
    module = tnn.Sequential(tnn.ZeroPad2d((1, 2, 1, 2)), tnn.Conv2d(3, 4, 4, stride=2,
                                                                   bias=False))
    compare_with_torch(cell, module, [_x(2, 3, 7, 7)], {"weight": "1.weight"})
    assert cell(Tensor(_x(1, 3, 7, 7))).shape == (1, 4, 4, 4)


def test_conv2d_valid_with_dilation():
    cell = nn.Conv2d(2, 3, 3, pad_mode="valid", dilation=2, has_bias=True)
    compare_with_torch(cell, tnn.Conv2d(2, 3, 3, dilation=2), [_x(1, 2, 8, 9)])


def test_conv1d_same_and_conv3d_pad():
    compare_with_torch(nn.Conv1d(3, 2, 3, has_bias=True), tnn.Conv1d(3, 2, 3, padding=1),
                       [_x(2, 3, 6)])
    compare_with_torch(nn.Conv3d(2, 2, 2, pad_mode="pad", padding=1),
                       tnn.Conv3d(2, 2, 2, padding=1, bias=False), [_x(1, 2, 3, 4, 3)])


def test_conv2d_transpose_pad_mode_matches_torch_with_output_padding():
    cell = nn.Conv2dTranspose(3, 4, 3, stride=2, pad_mode="pad", padding=1, output_padding=1,
                              has_bias=True)
    module = tnn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1)
    compare_with_torch(cell, module, [_x(2, 3, 4, 5)])
    assert cell(Tensor(_x(1, 3, 4, 5))).shape == (1, 4, 8, 10)


def test_conv2d_transpose_same_crops_like_mindspore():
    # extent 4, stride 2: 2 padding rows, 1 before; output size * stride
    cell = nn.Conv2dTranspose(2, 3, 4, stride=2, group=1)
    module = _Crop(tnn.ConvTranspose2d(2, 3, 4, stride=2, bias=False), (1, 1), (6, 8))
    compare_with_torch(cell, module, [_x(1, 2, 3, 4)], {"weight": "inner.weight"})


def test_conv2d_transpose_valid_pads_up_to_size_times_stride():
    # kernel 2 < stride 3: MindSpore's valid output is size * stride, zeros at the end
    cell = nn.Conv2dTranspose(2, 2, 2, stride=3, pad_mode="valid")
    module = _Crop(tnn.ConvTranspose2d(2, 2, 2, stride=3, bias=False), (0, 0), (9, 6))
    compare_with_torch(cell, module, [_x(2, 2, 3, 2)], {"weight": "inner.weight"})


def test_conv_argument_errors():
    with pytest.raises(ValueError, match="pad_mode='pad'"):
        nn.Conv2d(1, 1, 3, padding=1)
    with pytest.raises(ValueError, match="pad_mode"):
        nn.Conv2d(1, 1, 3, pad_mode="full")
    with pytest.raises(ValueError, match="divisible by group"):
        nn.Conv2d(3, 4, 3, group=2)
    with pytest.raises(ValueError, match="kernel_size"):
        nn.Conv2d(1, 1, (3, 3, 3))


# -- normalisation ----------------------------------------------------------------------------


def test_batch_norm_training_matches_torch_and_updates_moving_statistics():
    cell = nn.BatchNorm2d(3, momentum=0.8, gamma_init="normal", beta_init="normal").set_train()
    module = tnn.BatchNorm2d(3, momentum=0.2).train()  # PyTorch's momentum is 1 - MindSpore's
    names = {"gamma": "weight", "beta": "bias", "moving_mean": "running_mean",
             "moving_variance": "running_var"}
    compare_with_torch(cell, module, [_x(4, 3, 2, 5)], names)  # jitted with its update
    fresh = nn.BatchNorm2d(3, momentum=0.8).set_train()
    reference = tnn.BatchNorm2d(3, momentum=0.2).train()
    for seed in (1, 2):
        x = _x(4, 3, 2, 5, seed=seed) + seed
        fresh(Tensor(x))
        reference(torch.from_numpy(x))
    assert_close(fresh.moving_mean, reference.running_mean.numpy(), F32)
    assert_close(fresh.moving_variance, reference.running_var.numpy(), F32)
    assert [p.name for p in fresh.untrainable_params()] == ["moving_mean", "moving_variance"]
    fresh.set_train(False)
    reference.eval()
    x = _x(2, 3, 2, 5, seed=3)
    assert_close(fresh(Tensor(x)), reference(torch.from_numpy(x)).detach().numpy(), F32,
                 rtol=1e-5, atol=1e-5)


def test_batch_norm_inference_and_batch_norm_1d():
    cell = nn.BatchNorm1d(4, moving_mean_init="normal", moving_var_init=2.0)
    names = {"gamma": "weight", "beta": "bias", "moving_mean": "running_mean",
             "moving_variance": "running_var"}
    compare_with_torch(cell, tnn.BatchNorm1d(4).eval(), [_x(5, 4)], names)
    compare_with_torch(nn.BatchNorm1d(4).set_train(), tnn.BatchNorm1d(4).train(),
                       [_x(5, 4, 3)], names, check_jit=False)


def test_a_jitted_batch_norm_updates_its_moving_statistics_in_place():
    eager, graph = nn.BatchNorm2d(2).set_train(), nn.BatchNorm2d(2).set_train()
    step = mskernel.jit(graph)
    for seed in range(3):
        x = Tensor(_x(3, 2, 2, 2, seed=seed))
        assert_close(step(x), eager(x), F32)
    assert step.cache_info().misses == 1

    def train_step(bn):
        return mskernel.value_and_grad(lambda x: (bn(x) * x).sum(), None,
                                       weights=bn.trainable_params())

    eager_step, graph_step = train_step(eager), mskernel.jit(train_step(graph))
    for seed in range(3, 5):
        x = Tensor(_x(3, 2, 2, 2, seed=seed))
        (loss, grads), (jit_loss, jit_grads) = eager_step(x), graph_step(x)
        assert_close(jit_loss, loss, F32, rtol=1e-5, atol=1e-5)
        for g, jg in zip(grads, jit_grads, strict=True):
            assert_close(jg, g, F32, rtol=1e-5, atol=1e-5)
    assert_close(graph.moving_mean, eager.moving_mean, F32)
    assert_close(graph.moving_variance, eager.moving_variance, F32)


def test_batch_norm_statistics_modes_and_errors():
    cell = nn.BatchNorm2d(2, use_batch_statistics=False).set_train()
    x = Tensor(_x(2, 2, 3, 3))
    assert_close(cell(x), np.asarray(x) / np.sqrt(1 + 1e-5), F32)
    assert_close(cell.moving_mean, np.zeros(2, np.float32), F32)
    with pytest.raises(ValueError, match="rank 4"):
        cell(Tensor(_x(2, 2, 3)))
    frozen = nn.BatchNorm2d(2, affine=False)
    assert frozen.trainable_params() == []


@pytest.mark.parametrize("shape, normalized", [((3, 5), (5,)), ((2, 3, 4), (3, 4))])
def test_layer_norm(shape, normalized):
    axis = -len(normalized)
    cell = nn.LayerNorm(normalized, begin_norm_axis=axis, begin_params_axis=axis,
                        gamma_init="normal", beta_init="normal", epsilon=1e-5)
    compare_with_torch(cell, tnn.LayerNorm(normalized, eps=1e-5), [_x(*shape)],
                       {"gamma": "weight", "beta": "bias"})


def test_layer_norm_with_parameters_over_fewer_axes_than_normalised():
    class Reference(tnn.Module):
        def __init__(self):
            super().__init__()
            self.weight = tnn.Parameter(torch.ones(4))
            self.bias = tnn.Parameter(torch.zeros(4))

        def forward(self, x):
            return tnn.functional.layer_norm(x, x.shape[1:], eps=1e-7) * self.weight + self.bias

    cell = nn.LayerNorm((4,), begin_norm_axis=1, gamma_init="normal", beta_init="normal")
    compare_with_torch(cell, Reference(), [_x(2, 3, 4)], {"gamma": "weight", "beta": "bias"})
    with pytest.raises(ValueError, match="normalized_shape"):
        cell(Tensor(_x(2, 4, 3)))


def test_group_norm():
    cell = nn.GroupNorm(2, 4, gamma_init="normal", beta_init="normal")
    compare_with_torch(cell, tnn.GroupNorm(2, 4), [_x(3, 4, 2, 3)],
                       {"gamma": "weight", "beta": "bias"})


# -- pooling ----------------------------------------------------------------------------------

POOLS = [
    (nn.MaxPool2d(3, 2), tnn.MaxPool2d(3, 2)),
    (nn.MaxPool2d(3, 2, pad_mode="pad", padding=1), tnn.MaxPool2d(3, 2, padding=1)),
    (nn.MaxPool2d(3, 1, pad_mode="same"), tnn.MaxPool2d(3, 1, padding=1)),
    (nn.MaxPool2d(2, 2, pad_mode="same"),  # 7 -> 4: one row of padding, after
     tnn.Sequential(tnn.ConstantPad2d((0, 1, 0, 1), -float("inf")), tnn.MaxPool2d(2, 2))),
    (nn.MaxPool1d(2, 2), tnn.MaxPool1d(2, 2)),
    (nn.AvgPool2d(2, 2), tnn.AvgPool2d(2, 2)),
    (nn.AvgPool2d(3, 2, pad_mode="pad", padding=1), tnn.AvgPool2d(3, 2, padding=1)),
    (nn.AvgPool2d(3, 2, pad_mode="pad", padding=1, count_include_pad=False),
     tnn.AvgPool2d(3, 2, padding=1, count_include_pad=False)),
    (nn.AvgPool2d(3, 1, pad_mode="same"), tnn.AvgPool2d(3, 1, padding=1, count_include_pad=False)),
    (nn.AvgPool3d(2, 1), tnn.AvgPool3d(2, 1)),
    (nn.AdaptiveAvgPool2d((2, 3)), tnn.AdaptiveAvgPool2d((2, 3))),
    (nn.AdaptiveAvgPool1d(3), tnn.AdaptiveAvgPool1d(3)),
    (nn.AdaptiveMaxPool2d(2), tnn.AdaptiveMaxPool2d(2)),
]


def _pool_input(cell) -> np.ndarray:
    rank = {"1d": 3, "2d": 4, "3d": 5}[type(cell).__name__[-2:]]
    return _x(2, 3, *(7, 6, 5)[:rank - 2])


@pytest.mark.parametrize("cell, module", POOLS, ids=lambda c: type(c).__name__)
def test_pooling(cell, module):
    compare_with_torch(cell, module, [_pool_input(cell)], check_jit=False)


def test_pooling_jit():
    for cell, _ in POOLS:
        x = Tensor(_pool_input(cell))
        assert_close(mskernel.jit(cell)(x), cell(x), F32, what=repr(cell))


def test_pooling_errors():
    with pytest.raises(ValueError, match="padding must be 0"):
        nn.MaxPool2d(2, padding=1)
    with pytest.raises(ValueError, match="pad_mode"):
        nn.AvgPool2d(2, pad_mode="full")


# -- embedding and dropout --------------------------------------------------------------------


@pytest.mark.parametrize("use_one_hot", [False, True])
def test_embedding_with_a_padding_row(use_one_hot):
    cell = nn.Embedding(7, 4, use_one_hot=use_one_hot, padding_idx=2)
    assert_close(cell.embedding_table[2], np.zeros(4, np.float32), F32)
    ids = np.array([[0, 2, 6], [2, 3, 3]], np.int64)
    compare_with_torch(cell, tnn.Embedding(7, 4, padding_idx=2), [ids],
                       {"embedding_table": "weight"})


def test_dropout_is_the_identity_in_inference_and_scales_what_it_keeps():
    cell = nn.Dropout(p=0.25)
    x = Tensor(np.ones((200, 50), np.float32))
    assert cell(x) is x
    cell.set_train()
    y = np.asarray(cell(x))
    assert set(np.unique(y)) == {0.0, np.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.02
    assert not np.array_equal(np.asarray(cell(x)), y)  # a new mask per call
    assert nn.Dropout(keep_prob=0.9).p == pytest.approx(0.1)
    with pytest.raises(ValueError, match="drop probability"):
        nn.Dropout(p=1.0)


def test_dropout_masks_are_reproducible_and_the_same_eager_and_jitted():
    mskernel.random.set_seed(11)
    eager = nn.Dropout(p=0.5).set_train()
    mskernel.random.set_seed(11)
    graph = nn.Dropout(p=0.5).set_train()
    step = mskernel.jit(graph)
    x = Tensor(np.ones((4, 8), np.float32))
    masks = []
    for _ in range(2):
        expected = eager(x)
        assert_close(step(x), expected, F32)
        masks.append(np.asarray(expected))
    assert not np.array_equal(*masks)
    assert graph.rng_key.requires_grad is False
