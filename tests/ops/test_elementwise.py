"""Elementwise ops: reference semantics against NumPy/Python math, and typing errors."""

import math

import numpy as np
import pytest

from mskernel.errors import OpError
from mskernel.ir import GraphBuilder, tensor_type
from mskernel.ops import op_registry
from mskernel.runtime.interpreter import run_graph


def run1(op, *arrays, **attrs):
    b = GraphBuilder()
    inputs = [b.input(tensor_type(np.asarray(a).dtype, np.shape(a))) for a in arrays]
    return run_graph(b.build([b.op(op, *inputs, **attrs)]), arrays)[0]


def test_broadcasting_follows_numpy():
    x = np.arange(6, dtype=np.float32).reshape(2, 1, 3)
    y = np.arange(4, dtype=np.float32).reshape(4, 1)
    np.testing.assert_array_equal(run1("add", x, y), x + y)


def test_erf_matches_math_erf():
    x = np.linspace(-4, 4, 41)
    np.testing.assert_allclose(run1("erf", x), [math.erf(v) for v in x], rtol=0, atol=1e-15)


def test_sigmoid_is_stable_at_extremes():
    x = np.array([-1000.0, -30.0, 0.0, 30.0, 1000.0])
    out = run1("sigmoid", x)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, 1 / (1 + np.exp(-np.clip(x, -700, 700))), rtol=1e-15, atol=1e-300)


def test_gelu_tanh_differs_from_exact_by_small_amount():
    x = np.linspace(-3, 3, 13)
    exact = run1("gelu", x)
    approx = run1("gelu", x, approximate="tanh")
    np.testing.assert_allclose(exact, 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2))))
    assert np.max(np.abs(exact - approx)) < 1e-3


def test_integer_division_by_zero_is_an_error():
    with pytest.raises(ZeroDivisionError, match="floor_divide"):
        run1("floor_divide", np.array([1, 2]), np.array([1, 0]))


def test_bfloat16_results_are_rounded_to_bfloat16():
    b = GraphBuilder()
    x = b.input(tensor_type("bf16", (3,)))
    g = b.build([b.op("exp", x)])
    out = run_graph(g, [np.array([0.1, 1.0, 2.5], np.float32)])[0]
    bits = out.view(np.uint32)
    assert np.all(bits & 0xFFFF == 0)


@pytest.mark.parametrize("op", ["exp", "sigmoid", "erf"])
def test_float_only_ops_reject_integers_with_the_op_name(op):
    b = GraphBuilder()
    x = b.input(tensor_type("i32", (2,)))
    with pytest.raises(OpError, match=rf"op '{op}'.*floating-point.*i32\[2\]"):
        b.op(op, x)


def test_mismatched_shapes_name_both_shapes():
    b = GraphBuilder()
    x, y = b.input(tensor_type("f32", (2, 3))), b.input(tensor_type("f32", (4,)))
    with pytest.raises(OpError, match=r"op 'mul'.*\[2, 3\] and \[4\] cannot be broadcast"):
        b.op("mul", x, y)


def test_clip_rejects_inverted_bounds():
    b = GraphBuilder()
    with pytest.raises(OpError, match="min .* greater than max"):
        b.op("clip", b.input(tensor_type("f32", (2,))), min=2.0, max=1.0)


def test_elementwise_ops_carry_the_trait():
    assert op_registry().get("add").has_trait("elementwise")
    assert op_registry().get("add").has_trait("commutative")
    assert not op_registry().get("sub").has_trait("commutative")
