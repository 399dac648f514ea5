"""MindSpore's primitive classes (``ops.ReduceMean(keep_dims=True)(x, 1)``): made from the
table, documented from it, and computing what MindSpore documents — checked against NumPy
and PyTorch, eagerly and under ``@jit``."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import mskernel as ms
from mskernel import jit, ops
from mskernel_nn.primitives import PRIMITIVES, TABLE, Primitive

RNG = np.random.default_rng(5)
X = RNG.standard_normal((2, 3, 4)).astype(np.float32)
M = RNG.standard_normal((3, 4)).astype(np.float32)


def test_every_row_is_a_documented_ops_class():
    assert len(PRIMITIVES) == len(TABLE) >= 100
    for row in TABLE:
        cls = getattr(ops, row.name)
        assert issubclass(cls, Primitive) and cls.row is row
        assert cls.__doc__.startswith(f"MindSpore's ``ops.{row.name}``"), row.name
        assert "Calls ``" in cls.__doc__


def test_help_says_what_a_class_maps_to():
    assert str(inspect.signature(ops.ReduceMean)) == "(keep_dims=False)"
    assert "mskernel.ops.mean(x, axis (() for all), keep_dims)" in ops.ReduceMean.__doc__
    assert "Arithmetic mean" in ops.ReduceMean.__doc__
    assert repr(ops.ReduceMean(keep_dims=True)) == "Prim[ReduceMean]<keep_dims=True>"


#: (primitive made with its attributes, inputs, the expected output)
CASES = [
    (ops.ReduceMean(keep_dims=True), (X, 1), X.mean(1, keepdims=True)),
    (ops.ReduceMean(), (X,), X.mean()),
    (ops.ReduceSum(), (X, (0, 2)), X.sum((0, 2))),
    (ops.ReduceSum(skip_mode=True), (X, ()), X),
    (ops.ReduceMax(True), (X, -1), X.max(-1, keepdims=True)),
    (ops.ReduceMin(), (X, 0), X.min(0)),
    (ops.ReduceProd(), (M, 1), M.prod(1)),
    (ops.ReduceAll(), (X > -3, 1), (X > -3).all(1)),
    (ops.Abs(), (X,), np.abs(X)),
    (ops.Neg(), (X,), -X),
    (ops.Exp(), (X,), np.exp(X)),
    (ops.Sqrt(), (np.abs(X),), np.sqrt(np.abs(X))),
    (ops.ReLU(), (X,), np.maximum(X, 0)),
    (ops.ReLU6(), (6 * X,), np.clip(6 * X, 0, 6)),
    (ops.Sigmoid(), (X,), torch.sigmoid(torch.tensor(X)).numpy()),
    (ops.Tanh(), (X,), np.tanh(X)),
    (ops.HSwish(), (3 * X,), TF.hardswish(torch.tensor(3 * X)).numpy()),
    (ops.Elu(0.5), (X,), TF.elu(torch.tensor(X), 0.5).numpy()),
    (ops.Add(), (X, 1.0), X + 1),
    (ops.Sub(), (X, M), X - M),
    (ops.Mul(), (X, M), X * M),
    (ops.Div(), (X, 2.0), X / 2),
    (ops.RealDiv(), (X, 4.0), X / 4),
    (ops.Pow(), (np.abs(X), 2.0), np.abs(X) ** 2),
    (ops.Maximum(), (X, M), np.maximum(X, M)),
    (ops.Equal(), (X, X), np.ones_like(X, bool)),
    (ops.Greater(), (X, 0.0), X > 0),
    (ops.SquaredDifference(), (X, M), (X - M) ** 2),
    (ops.FloorMod(), (np.array([5, -5]), np.array([3, 3])), np.array([2, 1])),
    (ops.Transpose(), (X, (2, 0, 1)), X.transpose(2, 0, 1)),
    (ops.Reshape(), (X, (6, -1)), X.reshape(6, -1)),
    (ops.ExpandDims(), (X, 1), X[:, None]),
    (ops.Squeeze(), (X[:, None, :, :1],), X[:, :, 0]),
    (ops.Squeeze(1), (X[:, None],), X),
    (ops.Flatten(), (X,), X.reshape(2, 12)),
    (ops.Concat(axis=1), ((X, X),), np.concatenate((X, X), 1)),
    (ops.Stack(-1), ([M, M],), np.stack([M, M], -1)),
    (ops.Tile(), (M, (2, 1)), np.tile(M, (2, 1))),
    (ops.Cast(), (X, ms.int32), X.astype(np.int32)),
    (ops.Zeros(), ((2, 3), ms.float16), np.zeros((2, 3), np.float16)),
    (ops.Ones(), ((2,), ms.int32), np.ones(2, np.int32)),
    (ops.Fill(), (ms.float32, (2, 2), 5), np.full((2, 2), 5, np.float32)),
    (ops.Eye(), (2, 3, ms.int32), np.eye(2, 3, dtype=np.int32)),
    (ops.ZerosLike(), (X,), np.zeros_like(X)),
    (ops.Select(), (X > 0, X, M), np.where(X > 0, X, M)),
    (ops.Gather(), (M, np.array([2, 0]), 0), M[[2, 0]]),
    (ops.GatherNd(), (M, np.array([[0, 1], [2, 3]])), M[[0, 2], [1, 3]]),
    (ops.OneHot(), (np.array([0, 2]), 3, ms.Tensor(1.0), ms.Tensor(0.0)), np.eye(3)[[0, 2]]),
    (ops.CumSum(reverse=True), (M, 1), np.flip(np.flip(M, 1).cumsum(1), 1)),
    (ops.AddN(), ([M, M, M],), 3 * M),
    (ops.MatMul(), (M, M.T), M @ M.T),
    (ops.MatMul(transpose_a=True), (M, M), M.T @ M),
    (ops.MatMul(False, True), (M, M), M @ M.T),
    (ops.BatchMatMul(transpose_b=True), (X, X), X @ X.transpose(0, 2, 1)),
    (ops.Einsum("ij,jk->ik"), ((M, M.T),), M @ M.T),
    (ops.Softmax(), (X,), torch.softmax(torch.tensor(X), -1).numpy()),
    (ops.Softmax(axis=0), (X,), torch.softmax(torch.tensor(X), 0).numpy()),
    (ops.LogSoftmax(1), (X,), torch.log_softmax(torch.tensor(X), 1).numpy()),
    (ops.L2Normalize(axis=1), (M,), M / np.sqrt(np.maximum((M ** 2).sum(1, keepdims=True),
                                                               1e-4))),
    (ops.BiasAdd(), (X, np.arange(3, dtype=np.float32)), X + np.arange(3)[:, None]),
    (ops.BiasAdd("NHWC"), (X, np.arange(4, dtype=np.float32)), X + np.arange(4)),
    (ops.SigmoidCrossEntropyWithLogits(), (M, (M > 0).astype(np.float32)),
     TF.binary_cross_entropy_with_logits(torch.tensor(M), torch.tensor(M > 0).float(),
                                         reduction="none").numpy()),
    (ops.SparseSoftmaxCrossEntropyWithLogits(), (M, np.array([0, 3, 1])),
     TF.cross_entropy(torch.tensor(M), torch.tensor([0, 3, 1])).numpy()),
]


@pytest.mark.parametrize("prim, inputs, expected", CASES,
                         ids=[f"{i}-{c[0].name}" for i, c in enumerate(CASES)])
def test_primitives_compute_what_mindspore_documents(prim, inputs, expected):
    got = prim(*inputs)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=2e-6, atol=1e-6)
    assert np.asarray(got).dtype == np.asarray(expected).dtype or \
        np.asarray(expected).dtype == np.float64
    tensors = [a for a in inputs if isinstance(a, np.ndarray)]
    if len(tensors) == len(inputs):
        np.testing.assert_allclose(np.asarray(jit(prim)(*inputs)), np.asarray(got), rtol=1e-6,
                                   atol=1e-7)


def test_primitives_with_several_outputs_and_metadata():
    index, value = ops.ArgMaxWithValue(axis=1, keep_dims=True)(M)
    np.testing.assert_array_equal(index.numpy(), M.argmax(1)[:, None])
    assert index.dtype is ms.int32
    np.testing.assert_array_equal(value.numpy(), M.max(1, keepdims=True))
    assert ops.Argmax()(M).dtype is ms.int32 and ops.Argmin(0, ms.int64)(M).dtype is ms.int64
    np.testing.assert_array_equal(ops.Argmin(axis=0)(M).numpy(), M.argmin(0))
    values, indices = ops.Sort(descending=True)(M)
    np.testing.assert_array_equal(values.numpy(), -np.sort(-M, 1))
    np.testing.assert_array_equal(indices.numpy(), np.argsort(-M, 1, kind="stable"))
    values, indices = ops.TopK()(M, 2)
    np.testing.assert_array_equal(values.numpy(), -np.sort(-M, 1)[:, :2])
    assert ops.Shape()(X) == (2, 3, 4) and ops.Rank()(X) == 3 and ops.Size()(X) == 24
    assert ops.DType()(X) is ms.float32
    pieces = ops.Split(axis=2, output_num=2)(X)
    assert [p.shape for p in pieces] == [(2, 3, 2)] * 2
    assert [p.shape for p in ops.Unstack(axis=1)(X)] == [(2, 4)] * 3


def test_softmax_cross_entropy_with_logits_returns_the_loss_and_its_gradient():
    labels = np.eye(4, dtype=np.float32)[[1, 0, 3]]
    loss, dlogits = ops.SoftmaxCrossEntropyWithLogits()(M, labels)
    t = torch.tensor(M, requires_grad=True)
    want = TF.cross_entropy(t, torch.tensor(labels), reduction="none")
    want.sum().backward()
    np.testing.assert_allclose(loss.numpy(), want.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(dlogits.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("pad_mode, pad, torch_padding", [
    ("valid", 0, 0), ("same", 0, "same"), ("pad", 1, 1), ("pad", (1, 0, 2, 1), None),
])
def test_conv2d_is_torch_s_with_mindspore_s_padding(pad_mode, pad, torch_padding):
    x = RNG.standard_normal((2, 3, 7, 6)).astype(np.float32)
    w = RNG.standard_normal((5, 3, 3, 3)).astype(np.float32)
    got = ops.Conv2D(5, 3, pad_mode=pad_mode, pad=pad)(x, w)
    tx = torch.tensor(x) if torch_padding is not None else TF.pad(torch.tensor(x), (2, 1, 1, 0))
    want = TF.conv2d(tx, torch.tensor(w), padding=torch_padding or 0)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    strided = ops.Conv2D(5, 3, stride=(1, 1, 2, 2), dilation=2, group=1)(x, w)
    want = TF.conv2d(torch.tensor(x), torch.tensor(w), stride=2, dilation=2)
    np.testing.assert_allclose(strided.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_pooling_is_torch_s():
    x = RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(ops.MaxPool(2, 2)(x).numpy(),
                               TF.max_pool2d(torch.tensor(x), 2, 2).numpy())
    np.testing.assert_allclose(ops.AvgPool(kernel_size=3, strides=1)(x).numpy(),
                               TF.avg_pool2d(torch.tensor(x), 3, 1).numpy(), rtol=1e-6)
    assert ops.MaxPool(3, 2, "same")(x).shape == (2, 3, 3, 3)


def test_dropout_gives_the_output_and_its_mask():
    x = np.ones((100, 40), np.float32)
    out, mask = ops.Dropout(keep_prob=0.8, Seed0=1, Seed1=2)(x)
    assert mask.dtype is ms.bool_ and abs(mask.numpy().mean() - 0.8) < 0.03
    np.testing.assert_allclose(out.numpy(), np.where(mask.numpy(), 1 / 0.8, 0), rtol=1e-6)
    np.testing.assert_array_equal(ops.Dropout(0.8, 1, 2)(x)[1].numpy(), mask.numpy())


def test_a_primitive_inside_a_cell_runs_compiled():
    class Net(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            self.mean = ops.ReduceMean(keep_dims=False)
            self.matmul = ops.MatMul(transpose_b=True)

        def construct(self, x):
            return self.mean(self.matmul(x, x), 1)

    net = Net()
    np.testing.assert_allclose(jit(net)(M).numpy(), (M @ M.T).mean(1), rtol=1e-5)


def test_wrong_arguments_name_the_primitive_and_its_signature():
    with pytest.raises(TypeError, match=r"ops.ReduceMean: .*; it takes \(keep_dims=False\)"):
        ops.ReduceMean(True, 2)
    with pytest.raises(TypeError, match=r"ops.MatMul\(\): .*; its inputs are \(x, y\)"):
        ops.MatMul()(M)
    with pytest.raises(TypeError, match=r"ops.Conv2D: .*kernel_size"):
        ops.Conv2D(3)
    with pytest.raises(ValueError, match=r"Conv2D: weight f32\[5,3,3,3\] has 5 output channels, "
                                         "out_channel is 4"):
        ops.Conv2D(4, 3)(np.ones((1, 3, 5, 5), np.float32), np.ones((5, 3, 3, 3), np.float32))
    with pytest.raises(ValueError, match="data_format 'NHWC' is not supported"):
        ops.MaxPool(2, 2, data_format="NHWC")(np.ones((1, 1, 4, 4), np.float32))
