"""Reduction ops: reference semantics against PyTorch on float64, dtype rules and errors."""

import warnings

import numpy as np
import pytest
import torch

from mskernel.errors import OpError
from mskernel.ir import GraphBuilder, tensor_type
from mskernel.ir.dtypes import float32, float64
from mskernel.ops import reduction, op_registry
from mskernel.runtime.interpreter import run_graph
from mskernel.testing import OpSample, assert_close, sample_graph

# PyTorch reads an empty dim list as "every axis", so axes=() is tested on its own.
AXES = [None, (0,), (-1,), (0, 2), (-3, -2, -1)]
SHAPES = [(3, 4, 5), (2, 0, 3), (1, 1, 1)]


def run(op, *arrays, **attrs):
    outputs = run_graph(sample_graph(OpSample(op, arrays, attrs)), list(arrays))
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def build(op, *types, **attrs):
    b = GraphBuilder()
    return b.op(op, *[b.input(tensor_type(dt, shape)) for dt, shape in types], **attrs)


def dims(axes, rank):
    return list(range(rank)) if axes is None else list(axes)


def torch_prod(t, dim, keepdim):
    for d in sorted((d % t.dim() for d in dim), reverse=True):
        t = torch.prod(t, dim=d, keepdim=keepdim)
    return t


ORACLES = {
    "sum": torch.sum, "mean": torch.mean, "prod": torch_prod, "logsumexp": torch.logsumexp,
    "max": torch.amax, "min": torch.amin,
}


def normal(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


def oracle_cases():
    """(op, shape, axes), leaving out max/min of an empty reduction (an error, tested below)."""
    for op in sorted(ORACLES):
        for shape in SHAPES:
            for axes in AXES:
                empty = any(shape[a] == 0 for a in dims(axes, len(shape)))
                if not (empty and op in ("max", "min")):
                    yield op, shape, axes


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("op, shape, axes", oracle_cases())
def test_reductions_match_torch(op, shape, axes, keepdims):
    x = normal(shape)
    expected = ORACLES[op](torch.from_numpy(x), dim=dims(axes, x.ndim), keepdim=keepdims)
    actual = run(op, x, axes=axes, keepdims=keepdims)
    assert actual.shape == tuple(expected.shape)
    assert_close(actual, expected.numpy(), float64)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axes", [None, (1,), (0, -1)])
@pytest.mark.parametrize("correction", [0, 1, 2, 4])
@pytest.mark.parametrize("op", ["var", "std"])
def test_var_and_std_match_torch_correction(op, correction, axes, keepdims):
    x = normal((3, 4, 5))
    with warnings.catch_warnings():  # torch warns when correction >= the count
        warnings.simplefilter("ignore", UserWarning)
        expected = getattr(torch, op)(torch.from_numpy(x), dim=dims(axes, 3),
                                      correction=correction, keepdim=keepdims)
    actual = run(op, x, axes=axes, keepdims=keepdims, correction=correction)
    assert_close(actual, expected.numpy(), float64)


def test_var_with_correction_at_or_beyond_the_count_is_inf_or_nan_like_torch():
    x = np.array([[1.0, 3.0], [2.0, 2.0]])
    np.testing.assert_array_equal(run("var", x, axes=(1,), correction=2), [np.inf, np.nan])
    np.testing.assert_array_equal(run("var", x, axes=(1,), correction=5), [np.inf, np.nan])


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_arg_reductions_match_torch(op, axis, keepdims):
    x = normal((3, 4, 5))
    expected = getattr(torch, op)(torch.from_numpy(x), dim=axis, keepdim=keepdims)
    actual = run(op, x, axis=axis, keepdims=keepdims)
    assert actual.dtype == np.int64
    np.testing.assert_array_equal(actual, expected.numpy())


def test_arg_reductions_pick_the_first_extreme_and_the_first_nan():
    x = np.array([[1, 3, 3], [2, 2, 1]], np.int32)
    np.testing.assert_array_equal(run("argmax", x, axis=1), [1, 0])
    np.testing.assert_array_equal(run("argmin", x, axis=0), [0, 1, 1])
    with_nan = np.array([1.0, np.nan, 3.0, np.nan])
    assert run("argmax", with_nan) == torch.argmax(torch.from_numpy(with_nan)).item() == 1
    assert run("argmin", with_nan) == 1


@pytest.mark.parametrize("op", ["all", "any"])
@pytest.mark.parametrize("axes", [None, (1,), (0, 2)])
def test_all_and_any_match_torch(op, axes):
    x = normal((3, 4, 2)) > -1.0
    expected = getattr(torch, op)(torch.from_numpy(x), dim=tuple(dims(axes, 3)), keepdim=True)
    np.testing.assert_array_equal(run(op, x, axes=axes, keepdims=True), expected.numpy())


def test_logsumexp_handles_infinities_and_large_values_like_torch():
    inf = np.inf
    x = np.array([[-inf, -inf, -inf], [-inf, 1.0, 2.0], [inf, 0.0, -inf], [inf, inf, 1.0],
                  [1000.0, 1000.0, -1000.0], [np.nan, 0.0, inf]])
    expected = torch.logsumexp(torch.from_numpy(x), dim=1).numpy()
    actual = run("logsumexp", x, axes=(1,))
    assert_close(actual, expected, float64)
    assert actual[4] == pytest.approx(1000 + np.log(2), rel=1e-15)


def test_max_propagates_nan_like_torch():
    x = np.array([[1.0, np.nan], [2.0, 3.0]])
    expected = torch.amax(torch.from_numpy(x), dim=1).numpy()
    np.testing.assert_array_equal(run("max", x, axes=(1,)), expected)


def test_empty_axes_reduce_nothing():
    x = normal((2, 3))
    for op in ("sum", "prod", "mean", "max", "logsumexp"):
        assert_close(run(op, x, axes=()), x, float64, what=op)
    np.testing.assert_array_equal(run("var", x, axes=()), np.zeros((2, 3)))


def test_empty_sum_and_prod_give_their_identities():
    x = np.zeros((0, 3), np.int32)
    np.testing.assert_array_equal(run("sum", x, axes=(0,)), [0, 0, 0])
    np.testing.assert_array_equal(run("prod", x, axes=(0,)), [1, 1, 1])


def test_max_over_a_nonempty_axis_of_an_empty_tensor_is_empty():
    assert run("max", np.zeros((0, 3)), axes=(1,)).shape == (0,)


@pytest.mark.parametrize("dt", [np.int8, np.uint8])
def test_integer_sum_and_prod_keep_the_dtype_and_wrap(dt):
    x = np.array([100, 100, 100], dt)
    total, product = run("sum", x), run("prod", x)
    assert total.dtype == dt and total == np.array(300).astype(dt)
    assert product.dtype == dt and product == np.array(100**3).astype(dt)


def test_complex_mean_sum_and_prod():
    x = normal((3, 4)) + 1j * normal((3, 4), seed=1)
    t = torch.from_numpy(x)
    assert_close(run("mean", x, axes=(1,)), torch.mean(t, dim=1).numpy(), float64)
    assert_close(run("sum", x, axes=(0,)), torch.sum(t, dim=0).numpy(), float64)
    assert_close(run("prod", x, axes=(1,)), torch.prod(t, dim=1).numpy(), float64)


def test_float16_accumulates_in_a_wider_dtype():
    x = np.array([2048.0, 1.0, 1.0], np.float16)  # 2048 + 1 rounds back to 2048 in float16
    total, mean = run("sum", x), run("mean", x)
    assert total.dtype == mean.dtype == np.float16
    assert total == 2050.0 and mean == np.float16(2050.0 / 3)


@pytest.mark.parametrize("op", ["sum", "mean", "var"])
def test_float32_reductions_over_strided_axes_are_correctly_rounded(op):
    """NCHW stored channels-last (as a convolution may leave it): NumPy adds the 16384 terms
    of each channel one at a time, which in float32 is off by ~1e-6 relative."""
    x = (normal((64, 16, 16, 2)) + 1).astype(np.float32).transpose(0, 3, 1, 2)
    expected = getattr(np, op)(x.astype(np.float64), axis=(0, 2, 3))
    actual = run(op, x, axes=(0, 2, 3))
    assert actual.dtype == np.float32
    assert_close(actual, expected, float32, rtol=float(np.finfo(np.float32).eps), atol=0)


@pytest.mark.parametrize("op, dt, words", [
    ("sum", "bool", r"numeric input, got bool\[3\]; cast it"),
    ("prod", "bool", r"cast it to an integer or floating dtype"),
    ("mean", "i32", r"floating-point or complex input, got i32\[3\]"),
    ("var", "c64", r"floating-point input, got c64\[3\]"),
    ("logsumexp", "i64", r"floating-point input"),
    ("max", "c64", r"real numeric input, got c64\[3\]"),
    ("argmax", "bool", r"real numeric input, got bool\[3\]"),
    ("all", "f32", r"bool input, got f32\[3\]"),
])
def test_dtype_errors_name_the_accepted_kind(op, dt, words):
    with pytest.raises(OpError, match=rf"op '{op}' at .+: expects .*{words}"):
        build(op, (dt, (3,)))


@pytest.mark.parametrize("op", ["max", "min", "argmax", "argmin"])
def test_reducing_a_size0_axis_without_identity_is_an_error(op):
    attrs = {"axis": 0} if op.startswith("arg") else {"axes": (0,)}
    with pytest.raises(OpError, match=rf"op '{op}' at .+: cannot reduce the size-0 axis 0 of shape "
                                      r"\[0, 3\]: the reduction has no identity"):
        build(op, ("f32", (0, 3)), **attrs)


def test_argmax_of_an_empty_tensor_is_an_error():
    with pytest.raises(OpError, match=r"cannot search the empty tensor f32\[2,0\]"):
        build("argmax", ("f32", (2, 0)))


def test_bad_axes_are_errors():
    with pytest.raises(OpError, match=r"op 'sum' at .+: axis 2 is out of range for rank 2"):
        build("sum", ("f32", (2, 3)), axes=(0, 2))
    with pytest.raises(OpError, match=r"repeated axis in \(1, -1\)"):
        build("mean", ("f32", (2, 3)), axes=(1, -1))
    with pytest.raises(OpError, match=r"op 'argmin' at .+: axis -3 is out of range for rank 2"):
        build("argmin", ("f32", (2, 3)), axis=-3)


def test_every_reduction_carries_the_trait():
    names = [op.name for op in reduction.OPS]
    assert sorted(names) == sorted(["sum", "mean", "prod", "max", "min", "all", "any", "argmax",
                                    "argmin", "logsumexp", "var", "std"])
    assert all(op_registry().get(name).has_trait("reduction") for name in names)
