"""Accumulation tolerances (mskernel.testing.accumulation): the bound holds for sums and dot
products computed in any order and precision a backend may choose, is tight enough to catch a
lost term, and every reduction-like core op states it for each of its samples."""

import math

import numpy as np
import pytest

from mskernel.ir.dtypes import dtype
from mskernel.runtime.interpreter import run_graph
from mskernel.testing import (
    OpSample, accumulation_of, sample_graph, sample_tolerances, samples_for, tolerance,
    tolerance_for_reduction, unit_roundoff,
)
from mskernel.testing.accumulation import ACCUMULATIONS


def sequential(terms, dt):
    total = dt(0)
    for t in terms:
        total = dt(total + t)
    return total


def pairwise(terms, dt):
    while len(terms) > 1:
        if len(terms) % 2:
            terms = np.append(terms, dt(0))
        terms = (terms[0::2] + terms[1::2]).astype(dt)
    return terms[0] if len(terms) else dt(0)


def blocked(terms, dt, block=8):
    """Eight partial sums, as a vectorised loop keeps them, added at the end."""
    partial = np.zeros(block, dt)
    for i in range(0, len(terms), block):
        chunk = terms[i:i + block]
        partial[:len(chunk)] = (partial[:len(chunk)] + chunk).astype(dt)
    return sequential(partial, dt)


ORDERS = {
    "forward": lambda t, dt: sequential(t, dt),
    "backward": lambda t, dt: sequential(t[::-1], dt),
    "largest-first": lambda t, dt: sequential(t[np.argsort(-np.abs(t))], dt),
    "smallest-first": lambda t, dt: sequential(t[np.argsort(np.abs(t))], dt),
    "pairwise": pairwise,
    "blocked": blocked,
}


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
@pytest.mark.parametrize("order", ORDERS)
def test_dot_products_in_any_order_stay_within_the_bound(name, order):
    dt = np.dtype(name).type
    rng = np.random.default_rng(list(map(ord, name + order)))
    spread = 8 if name == "float16" else 1000  # terms of mixed sizes, no overflow
    for length in (1, 7, 64, 300, 1000):
        a = rng.uniform(-2, 2, length).astype(dt)
        b = rng.uniform(-2, 2, length).astype(dt) * rng.choice([1, spread], length).astype(dt)
        products = (a * b).astype(dt)  # one rounding per product, in the dtype
        exact = float(np.dot(a.astype(np.float64), b.astype(np.float64)))
        got = float(ORDERS[order](products, dt))
        rtol, atol = tolerance_for_reduction(name, length, np.abs(a.astype(np.float64)) @
                                             np.abs(b.astype(np.float64)))
        assert abs(got - exact) <= atol + rtol * abs(exact), (length, got, exact, atol)


def test_the_bound_catches_a_lost_term():
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-2, 2, (2, 256))
    magnitude = np.abs(a) @ np.abs(b)
    rtol, atol = tolerance_for_reduction("float32", 256, magnitude)
    exact = a @ b
    smallest = np.min(np.abs(a * b)[np.abs(a * b) > 0.01])
    assert smallest > atol + rtol * abs(exact)


def test_bounds_by_dtype():
    assert tolerance_for_reduction("int32", 10**6, 1e9) == (0.0, 0.0)
    rtol, atol = tolerance_for_reduction("float32", 100, 3.0)
    nu = 100 * 2.0**-24
    assert rtol == tolerance(dtype("float32"))[0]
    assert atol == pytest.approx(tolerance(dtype("float32"))[1] + nu / (1 - nu) * 3.0)
    # half types accumulated in float32 by a backend that says so
    wide = tolerance_for_reduction("float16", 100, 3.0, accumulator="float32")[1]
    assert wide < tolerance_for_reduction("float16", 100, 3.0)[1]
    # complex products round twice more
    assert tolerance_for_reduction("complex64", 1, 1.0)[1] > tolerance_for_reduction(
        "float32", 1, 1.0)[1]
    assert unit_roundoff("bfloat16") == 2.0**-8 and unit_roundoff("complex128") == 2.0**-53
    with pytest.raises(ValueError, match="exhaust the precision of bfloat16"):
        tolerance_for_reduction("bfloat16", 256, 1.0)
    np.testing.assert_array_equal(  # NaN (a mean of nothing) bounds nothing
        tolerance_for_reduction("float64", 3, np.array([np.nan, 1.0]))[1][0],
        tolerance(dtype("float64"))[1])


@pytest.mark.parametrize("op", sorted(ACCUMULATIONS))
def test_every_sample_of_a_reduction_like_op_states_its_accumulation(op):
    samples = samples_for(op)
    assert samples
    for sample in samples:
        accumulation = accumulation_of(sample)
        if accumulation is None:  # a scatter that replaces or takes extremes sums nothing
            assert sample.op.startswith("scatter") and sample.attrs["reduce"] not in (
                "add", "mul"), sample
            continue
        assert accumulation.length >= 0, sample
        graph = sample_graph(sample)
        with np.errstate(all="ignore"):
            outputs = run_graph(graph, list(sample.args))
        assert len(accumulation.magnitudes) == len(outputs), sample
        for out, magnitude in zip(outputs, accumulation.magnitudes):
            if magnitude is not None:
                shaped = np.broadcast_to(np.asarray(magnitude), np.shape(out))
                assert not (np.asarray(shaped) < 0).any(), sample
        bounds = sample_tolerances(sample, [v.type.dtype for v in graph.outputs])
        assert len(bounds) == len(outputs)


def test_sums_of_products_take_their_magnitudes_from_the_absolute_values():
    x = np.array([[1.0, -2.0], [3.0, -4.0]], np.float32)
    w = np.array([[-1.0, 1.0], [1.0, 1.0]], np.float32)
    accumulation = accumulation_of(OpSample("matmul", (x, w)))
    assert accumulation.length == 2
    np.testing.assert_array_equal(accumulation.magnitudes[0], np.abs(x) @ np.abs(w))
    accumulation = accumulation_of(OpSample("sum", (x,), {"axes": (1,)}))
    assert accumulation.length == 2
    np.testing.assert_array_equal(accumulation.magnitudes[0], [3.0, 7.0])
    conv = OpSample("conv", (np.ones((1, 4, 5), np.float32), np.ones((6, 2, 3), np.float32)),
                    {"groups": 2})
    assert accumulation_of(conv).length == 2 * 3
    einsum = OpSample("einsum", (np.ones((2, 3, 4)), np.ones((4, 3))),
                      {"equation": "i...j,j...->..."})
    assert accumulation_of(einsum).length == 2 * 4


def test_scatter_sums_each_element_with_every_update_addressed_to_it():
    x = np.array([1.0, -1.0, 2.0])
    updates = np.array([-2.0, 3.0, 4.0, -5.0])
    index = np.array([0, 2, 0, 0])
    add = accumulation_of(OpSample("scatter", (x, index, updates), {"axis": 0, "reduce": "add"}))
    assert add.length == 1 + 4
    np.testing.assert_array_equal(add.magnitudes[0], [12.0, 1.0, 5.0])
    mul = accumulation_of(OpSample("scatter_nd", (x, index[:, None], updates),
                                   {"reduce": "mul"}))
    np.testing.assert_array_equal(mul.magnitudes[0], [40.0, 1.0, 6.0])
    assert accumulation_of(OpSample("scatter", (x, index, updates),
                                    {"axis": 0, "reduce": "max"})) is None


def test_an_op_that_sums_nothing_has_no_accumulation_and_the_sample_may_override():
    x = np.ones((2, 3), np.float32)
    assert accumulation_of(OpSample("exp", (x,))) is None
    overridden = OpSample("sum", (x,), rtol=0.5)
    assert sample_tolerances(overridden, [dtype("float32")]) == [(0.5, 1e-6)]
    assert sample_tolerances(OpSample("exp", (x,)), [dtype("float32"), None]) == [
        tolerance(dtype("float32")), (0.0, 0.0)]
    assert math.isclose(accumulation_of(OpSample("mean", (x,))).magnitudes[0], 1.0)
