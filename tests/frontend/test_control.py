"""cond / switch / while_loop / fori_loop / scan: the same results eagerly and traced,
captures of outer values, and errors naming the mismatch."""

import numpy as np
import pytest

import mskernel as ms
from mskernel.frontend import functional as F
from mskernel.frontend.control import ControlFlowError, cond, fori_loop, scan, switch, while_loop
from mskernel.frontend.trace import trace_function
from mskernel.ir import tensor_type
from mskernel.runtime import compile_graph


def both_modes(fn, *arrays):
    """Run ``fn`` eagerly on tensors and traced + compiled; return both results as arrays."""
    eager = fn(*[ms.Tensor(a) for a in arrays])
    eager = [np.asarray(t.numpy()) for t in (eager if isinstance(eager, tuple) else (eager,))]
    types = [tensor_type(np.asarray(a).dtype, np.shape(a)) for a in arrays]
    graph, _, captured = trace_function(fn, types, "f")
    assert not captured
    traced = compile_graph(graph)(*arrays)
    return eager, traced


def assert_same(fn, *arrays):
    eager, traced = both_modes(fn, *arrays)
    for e, t in zip(eager, traced, strict=True):
        np.testing.assert_array_equal(e, t)


@pytest.mark.parametrize("value", [-1.0, 3.0])
def test_cond_with_captured_outer_value(value):
    def f(x, y):
        return cond(F.less(x, 0.0), lambda a: F.add(a, y), lambda a: F.add(a, F.add(y, y)), x)

    assert_same(f, np.float32(value), np.float32(5.0))


def test_cond_branch_type_mismatch_is_named():
    def f(x):
        return cond(F.less(x, 0.0), lambda a: a, lambda a: F.astype(a, "float64"), x)

    with pytest.raises(ControlFlowError, match=r"value 0 has type f64\[\] but f32\[\] was expected"):
        trace_function(f, [tensor_type("f32", ())], "f")


def test_while_loop_counts_to_a_value_dependent_bound():
    def f(n):
        return while_loop(lambda s: F.less(s[0], n), lambda s: (F.add(s[0], 1), F.add(s[1], s[0])),
                          (0, 0))

    assert_same(f, np.int64(6))


def test_while_body_dtype_change_is_refused():
    def f(x):
        return while_loop(lambda v: F.less(v, 10.0), lambda v: F.astype(F.add(v, 1.0), "float64"), x)

    with pytest.raises(ControlFlowError, match=r"body's result: value 0 has type f64\[\]"):
        trace_function(f, [tensor_type("f32", ())], "f")


def test_fori_loop_and_nested_cond():
    def f(x):
        def body(i, acc):
            return cond(F.less(F.astype(i, "float32"), 2.0), lambda a: F.add(a, x), lambda a: F.add(a, 1.0), acc)
        return fori_loop(0, 5, body, F.zeros_like(x))

    assert_same(f, np.array([1.0, 2.0], np.float32))


def test_scan_matches_cumulative_sum_both_directions():
    def f(xs):
        fwd = scan(lambda c, x: (F.add(c, x), c), F.zeros(()), xs)
        bwd = scan(lambda c, x: (F.add(c, x), c), F.zeros(()), xs, reverse=True)
        return fwd[0], fwd[1], bwd[0], bwd[1]

    xs = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    eager, traced = both_modes(f, xs)
    for e, t in zip(eager, traced):
        np.testing.assert_array_equal(e, t)
    np.testing.assert_array_equal(eager[1], [0.0, 1.0, 3.0, 6.0])
    np.testing.assert_array_equal(eager[3], [9.0, 7.0, 4.0, 0.0])


@pytest.mark.parametrize("index", [-3, 0, 1, 2, 7])
def test_switch_clamps_the_index(index):
    branches = [lambda x: F.add(x, 1.0), lambda x: F.add(x, 2.0), lambda x: F.add(x, 3.0)]
    assert_same(lambda i, x: switch(i, branches, x), np.int64(index), np.float32(0.0))
