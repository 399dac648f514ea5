"""softmax, log_softmax and the normalisations: reference semantics against PyTorch on
float64 (outputs and returned statistics), and error messages."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from mskernel.errors import OpError
from mskernel.ir import GraphBuilder, tensor_type
from mskernel.ir.dtypes import float16, float32, float64
from mskernel.runtime.interpreter import run_graph
from mskernel.testing import OpSample, assert_close, sample_graph


def run(op, *arrays, **attrs):
    outputs = run_graph(sample_graph(OpSample(op, arrays, attrs)), list(arrays))
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def build(op, *shapes, dt="f32", **attrs):
    b = GraphBuilder()
    return b.op(op, *[b.input(tensor_type(dt, shape)) for shape in shapes], **attrs)


def normal(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape) for shape in shapes]


def tensors(*arrays):
    return [torch.from_numpy(a) for a in arrays]


def assert_all_close(actual, expected):
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        e = e.numpy() if isinstance(e, torch.Tensor) else e
        assert a.shape == e.shape, (i, a.shape, e.shape)
        assert_close(a, e, float64, what=f"output {i}")


@pytest.mark.parametrize("shape, axis", [((3, 5), -1), ((2, 3, 4), 1), ((2, 3, 4), 0),
                                         ((6,), 0), ((2, 0, 3), 1), ((2, 0, 3), -1)], ids=str)
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_matches_torch(op, shape, axis):
    (x,) = normal(shape)
    x = x * 10
    expected = getattr(torch, op)(torch.from_numpy(x), dim=axis).numpy()
    assert_close(run(op, x, axis=axis), expected, float64)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_is_stable_for_large_values_and_minus_inf_like_torch(op):
    x = np.array([[1000.0, 999.0, -1000.0], [-np.inf, 0.0, 1.0], [-np.inf] * 3, [np.inf, 0, 1]])
    expected = getattr(torch, op)(torch.from_numpy(x), dim=1).numpy()
    actual = run(op, x)
    assert_close(actual, expected, float64)
    assert np.all(np.isfinite(actual[0]))


def test_softmax_of_float16_keeps_the_dtype_and_its_precision():
    x = np.array([0.0, 12.0, 12.0, -3.0], np.float16)
    actual = run("softmax", x)
    assert actual.dtype == np.float16
    expected = torch.softmax(torch.from_numpy(x.astype(np.float64)), dim=0).numpy()
    assert_close(actual, expected, float16)


@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 2, 2)], ids=str)
def test_batch_norm_training_normalises_with_batch_statistics_like_torch(shape):
    x, scale, bias, mean, var = normal(shape, (3,), (3,), (3,), (3,))
    var = np.abs(var)
    y, batch_mean, batch_var = run("batch_norm", x, scale, bias, mean, var, training=True,
                                   eps=1e-3)
    tx, tscale, tbias = tensors(x, scale, bias)
    expected = F.batch_norm(tx, None, None, tscale, tbias, training=True, eps=1e-3)
    dims = [0, *range(2, len(shape))]
    expected_var, expected_mean = torch.var_mean(tx, dim=dims, correction=0)
    assert_all_close((y, batch_mean, batch_var), (expected, expected_mean, expected_var))


def test_batch_norm_statistics_of_a_channels_last_float32_batch_are_correctly_rounded():
    """A convolution may leave its NCHW output stored channels-last, where NumPy adds each
    channel's terms one at a time: in float32 the statistics of a ResNet's batch were off by
    1e-5, enough to flip ReLUs downstream and its gradients by 5%."""
    x = (normal((64, 16, 16, 2))[0] + 1).astype(np.float32).transpose(0, 3, 1, 2)
    scale, bias, mean, var = (np.full(2, v, np.float32) for v in (1.5, 0.5, 0.0, 1.0))
    outputs = run("batch_norm", x, scale, bias, mean, var, training=True)
    tx, tscale, tbias = tensors(x.astype(np.float64), scale, bias)
    expected_var, expected_mean = torch.var_mean(tx, dim=[0, 2, 3], correction=0)
    expected_y = F.batch_norm(tx, None, None, tscale.double(), tbias.double(), training=True)
    eps = float(np.finfo(np.float32).eps)
    for name, actual, expected in zip(("y", "mean", "var"), outputs,
                                      (expected_y, expected_mean, expected_var)):
        assert actual.dtype == np.float32
        assert_close(actual, expected.numpy(), float32, rtol=eps, atol=eps, what=name)


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 2, 2)], ids=str)
def test_batch_norm_inference_uses_and_returns_the_given_statistics(shape):
    x, scale, bias, mean, var = normal(shape, (3,), (3,), (3,), (3,))
    var = np.abs(var)
    outputs = run("batch_norm", x, scale, bias, mean, var)
    tx, tscale, tbias, tmean, tvar = tensors(x, scale, bias, mean, var)
    expected = F.batch_norm(tx, tmean, tvar, tscale, tbias, training=False)
    assert_all_close(outputs, (expected, mean, var))


@pytest.mark.parametrize("shape, axis", [((3, 5), -1), ((2, 3, 4), -1), ((2, 3, 4), 1),
                                         ((2, 3, 4), 0), ((2, 3, 4), -2)], ids=str)
def test_layer_norm_matches_torch_native_layer_norm(shape, axis):
    normalized = shape[axis % len(shape):]
    x, scale, bias = normal(shape, normalized, normalized)
    outputs = run("layer_norm", x, scale, bias, axis=axis, eps=1e-4)
    expected = torch.native_layer_norm(*tensors(x), list(normalized), *tensors(scale, bias), 1e-4)
    assert_all_close(outputs, expected)
    assert_close(outputs[0], F.layer_norm(*tensors(x), normalized, *tensors(scale, bias),
                                          eps=1e-4).numpy(), float64)


def test_layer_norm_of_constant_rows_gives_bias_and_rstd_from_eps():
    x = np.full((2, 3), 7.0)
    y, mean, rstd = run("layer_norm", x, np.ones(3), np.arange(3.0), eps=1e-2)
    np.testing.assert_array_equal(y, np.tile(np.arange(3.0), (2, 1)))
    np.testing.assert_array_equal(mean, [[7.0], [7.0]])
    assert_close(rstd, np.full((2, 1), 10.0), float64)


@pytest.mark.parametrize("shape, groups", [((2, 6, 3), 3), ((2, 4, 2, 2), 2), ((3, 4), 4),
                                           ((2, 6, 5), 1)], ids=str)
def test_group_norm_matches_torch_native_group_norm(shape, groups):
    channels = shape[1]
    x, scale, bias = normal(shape, (channels,), (channels,))
    outputs = run("group_norm", x, scale, bias, num_groups=groups, eps=1e-4)
    spatial = math.prod(shape[2:])
    expected = torch.native_group_norm(*tensors(x, scale, bias), shape[0], channels, spatial,
                                       groups, 1e-4)
    assert_all_close(outputs, expected)
    assert_close(outputs[0], F.group_norm(*tensors(x), groups, *tensors(scale, bias),
                                          eps=1e-4).numpy(), float64)


def test_group_norm_rejects_indivisible_channels():
    with pytest.raises(OpError, match=r"op 'group_norm' at .+: the 6 channels of x \(shape \[2, 6, 3\]\)"
                                      r" cannot be split into 4 groups: 6 is not divisible by 4"):
        build("group_norm", (2, 6, 3), (6,), (6,), num_groups=4)
    with pytest.raises(OpError, match="num_groups must be positive, got 0"):
        build("group_norm", (2, 6, 3), (6,), (6,), num_groups=0)


@pytest.mark.parametrize("op, shapes, attrs, message", [
    ("batch_norm", [(4, 3), (4,), (3,), (3,), (3,)], {},
     r"scale must have shape \[3\] to match x of shape \[4, 3\], got \[4\]"),
    ("batch_norm", [(3,)] * 5, {}, r"x must have shape \[N, C, \.\.\.\] \(rank >= 2\), got "
                                   r"shape \[3\]"),
    ("layer_norm", [(2, 3, 4), (4,), (4,)], {"axis": 1},
     r"scale must have shape \[3, 4\] to match x of shape \[2, 3, 4\], got \[4\]"),
    ("layer_norm", [(2, 3), (3,), (3,)], {"axis": 2}, r"axis 2 is out of range for rank 2"),
    ("group_norm", [(2, 4), (4,), (2,)], {"num_groups": 2},
     r"bias must have shape \[4\] to match x of shape \[2, 4\], got \[2\]"),
    ("softmax", [(2, 3)], {"axis": -3}, r"axis -3 is out of range for rank 2"),
])
def test_shape_errors_name_the_parameter_and_shapes(op, shapes, attrs, message):
    with pytest.raises(OpError, match=rf"op '{op}' at .+: {message}"):
        build(op, *shapes, **attrs)


@pytest.mark.parametrize("op, shapes", [("softmax", [(3,)]), ("log_softmax", [(3,)]),
                                        ("layer_norm", [(3,)] * 3)])
def test_normalisations_require_floats(op, shapes):
    with pytest.raises(OpError, match=rf"op '{op}' at .+: expects a floating-point input, got i32\[3\]"):
        build(op, *shapes, dt="i32")


def test_parameters_must_have_the_dtype_of_x():
    b = GraphBuilder()
    x = b.input(tensor_type("f32", (2, 3)))
    scale, bias = b.input(tensor_type("f16", (3,))), b.input(tensor_type("f32", (3,)))
    with pytest.raises(OpError, match=r"op 'layer_norm' at .+: operands must have the same dtype"):
        b.op("layer_norm", x, scale, bias)
