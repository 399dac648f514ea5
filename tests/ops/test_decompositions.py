"""Every composite core op's decomposition against the op's reference semantics: expanded all
the way into primitives, on every sample of the op (each float dtype at the sample's
tolerance, integers and bools exactly) and, for the elementwise composites, on special values
— NaN, infinities, signed zeros, tiny and huge numbers — where NaN, infinities and the sign of
zeros must match exactly."""

import itertools
import math

import numpy as np
import pytest

from mskernel.errors import OpError
from mskernel.ir.verify import verify
from mskernel.ops import op_registry
from mskernel.runtime import Capabilities
from mskernel.runtime.expand import expand_composites
from mskernel.runtime.interpreter import run_graph
from mskernel.testing import OpSample, assert_close, sample_graph, samples_for

CORE = [op for op in op_registry() if op.owner == "mskernel"]
COMPOSITES = sorted(op.name for op in CORE if not op.primitive)
PRIMITIVES = Capabilities.uniform(op.name for op in CORE if op.primitive)


def fully_expanded(graph):
    expanded = expand_composites(graph, PRIMITIVES, op_registry()).graph
    leftover = sorted({n.op for n in expanded.walk() if n.op not in PRIMITIVES})
    assert not leftover, f"not expanded into primitives: {leftover}"
    verify(expanded, op_registry())
    return expanded


def run_both(sample):
    graph = sample_graph(sample)
    with np.errstate(all="ignore"):
        expected = run_graph(graph, list(sample.args))
        actual = run_graph(fully_expanded(graph), list(sample.args))
    return graph, expected, actual


@pytest.mark.parametrize("op", COMPOSITES)
def test_decomposition_computes_what_the_reference_does(op):
    samples = samples_for(op)
    assert samples
    for sample in samples:
        graph, expected, actual = run_both(sample)
        for value, e, a in zip(graph.outputs, expected, actual):
            assert_close(a, e, value.type.dtype, rtol=sample.rtol, atol=sample.atol,
                         what=str(sample))


FLOAT_SPECIALS = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -3.5,
                  1e-30, -1e-30, 1e-42, 1e30, -1e30, 88.5, -88.5, 700.0, -700.0]
_COMPLEX_PARTS = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.5, -2.0]


def special_values(dt):
    """Values of ``dt`` a decomposition most easily gets wrong."""
    dt = np.dtype(dt)
    if dt.kind == "b":
        return np.array([False, True])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return np.array(sorted({info.min, info.min + 1, -1 % (info.max + 1) if dt.kind == "u"
                                else -1, 0, 1, 2, info.max - 1, info.max}), dt)
    if dt.kind == "c":
        return np.array([complex(r, i) for r, i in itertools.product(_COMPLEX_PARTS, repeat=2)],
                        dt)
    with np.errstate(over="ignore"):
        return np.array(FLOAT_SPECIALS).astype(dt)


ELEMENTWISE = [op.name for op in CORE if not op.primitive and op.has_trait("elementwise")]
SPECIAL_DTYPES = (np.float32, np.float64, np.float16, np.complex64, np.int8, np.uint8, np.bool_)
ATTRS = {"gelu": [{"approximate": "none"}, {"approximate": "tanh"}],
         "clip": [{"min": -1.0, "max": 2.5}, {"min": 1e6}, {"max": -0.0}, {"min": -200.7}]}


def special_samples(op):
    """The op on every special value (every pair of them for a binary op) of each dtype it
    accepts."""
    binary = len(op_registry().get(op).inputs) == 2
    for dt in SPECIAL_DTYPES:
        values = special_values(dt)
        if binary:
            xs, ys = zip(*itertools.product(values, repeat=2))
            args = (np.array(xs, dt), np.array(ys, dt))
        else:
            args = (values,)
        for attrs in ATTRS.get(op, [{}]):
            sample = OpSample(op, args, attrs)
            try:
                sample_graph(sample)
            except OpError:  # a dtype the op does not take
                continue
            yield sample


def assert_same_specials(actual, expected, dt, what):
    actual, expected = np.asarray(actual), np.asarray(expected)
    if expected.dtype.kind not in "fc":
        np.testing.assert_array_equal(actual, expected, err_msg=what)
        return
    for part in (np.real, np.imag) if expected.dtype.kind == "c" else (np.asarray,):
        a, e = part(actual), part(expected)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(e), err_msg=f"{what}: NaN")
        infinite = np.isinf(e)
        np.testing.assert_array_equal(a[infinite], e[infinite], err_msg=f"{what}: infinities")
        zero = e == 0
        np.testing.assert_array_equal(np.signbit(a[zero]), np.signbit(e[zero]),
                                      err_msg=f"{what}: signed zeros")
    assert_close(actual, expected, dt, what=what)


@pytest.mark.parametrize("op", ELEMENTWISE)
def test_elementwise_decomposition_on_special_values(op):
    samples = list(special_samples(op))
    assert samples
    for sample in samples:
        graph, expected, actual = run_both(sample)
        for value, e, a in zip(graph.outputs, expected, actual):
            assert_same_specials(a, e, value.type.dtype, str(sample))


@pytest.mark.parametrize("op, attrs", [
    ("mean", {"axes": (1,)}), ("var", {"axes": (1,)}), ("std", {"axes": (0,), "correction": 1}),
    ("logsumexp", {"axes": (1,)}), ("softmax", {"axis": 1}), ("log_softmax", {"axis": 0}),
])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_reductions_on_special_values(op, attrs, dt):
    values = np.array(FLOAT_SPECIALS)
    if op in ("var", "std") and dt == np.float32:  # squares of 1e30 overflow (module doc)
        values[np.abs(values) == 1e30] = 3e15
    with np.errstate(over="ignore"):
        x = values.astype(dt).reshape(4, 5)
    sample = OpSample(op, (x,), attrs)
    graph, expected, actual = run_both(sample)
    assert_same_specials(actual[0], expected[0], graph.outputs[0].type.dtype, str(sample))
