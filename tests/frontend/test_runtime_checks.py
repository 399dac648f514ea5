"""``raise`` and ``assert`` under @jit, staged as MindSpore's graph mode stages them: a ``raise``
in a tensor-dependent branch or loop body raises only when that code runs, an ``assert`` on a
traced value is checked at every run, both with the user's message and line; a failing run
leaves the parameters as they were.  On the reference backend and the preferred one."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import mskernel as ms
from mskernel.frontend.device import device
from mskernel.frontend.jit import jit
from mskernel.frontend.tensor import TracedValueError
from mskernel.runtime import FallbackWarning

HERE = __file__


def t(*values, dtype=np.float32):
    return ms.Tensor(np.array(values, dtype))


def line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _devices() -> list[str]:
    preferred = ms.Tensor([0.0]).device
    return ["reference"] + ([preferred] if preferred != "reference" else [])


@pytest.fixture(params=_devices())
def on(request):
    """Run on this backend, without falling back to another."""
    with device(request.param), warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        yield request.param


def raises_where(fn, text, error, message, *args):
    """``fn(*args)`` raises ``error`` with the text ``message``, noting the line of ``text``."""
    with pytest.raises(error) as caught:
        fn(*args)
    assert str(caught.value) == message
    note = f"the statement at {HERE}:{line_of(fn.python_function, text)}"
    assert any(note in n for n in caught.value.__notes__), caught.value.__notes__


def test_a_raise_in_a_tensor_dependent_branch_raises_only_when_the_branch_runs(on):
    @jit
    def f(x, y):
        if x <= y:
            raise ValueError("x should be greater than y.")  # staged
        else:
            x += 1
        return x

    assert float(f(t(3), t(1))) == 4.0
    raises_where(f, "# staged", ValueError, "x should be greater than y.", t(-2), t(-1))
    assert float(f(t(5), t(1))) == 6.0 and f.cache_info().misses == 1


def test_a_branch_that_raises_needs_no_values_for_what_follows(on):
    @jit
    def f(x):
        if x.sum() < 0:
            raise ValueError  # a class: raised as ValueError()
        y = x * 2
        return y

    np.testing.assert_array_equal(f(t(1, 2)).numpy(), [2, 4])
    raises_where(f, "# a class", ValueError, "", t(-5, 1))


def test_nested_branches_hand_their_checks_out(on):
    @jit
    def f(x):
        if x > 0:
            if x > 10:
                raise OverflowError(f"too large: over {10}")  # inner
            x = x - 1
        else:
            x = x + 1
        return x

    assert float(f(t(5))) == 4.0 and float(f(t(-5))) == -4.0
    raises_where(f, "# inner", OverflowError, "too large: over 10", t(11))


def test_a_raise_in_a_tensor_dependent_loop_stops_the_loop_and_raises(on):
    @jit
    def f(x):
        steps = 0
        while x < 10:
            if x < 0:
                raise RuntimeError("negative in the loop")  # loop check
            x = x + 3
            steps += 1
        return x, steps

    x, steps = f(t(1))
    assert float(x) == 10.0 and int(steps) == 3
    raises_where(f, "# loop check", RuntimeError, "negative in the loop", t(-4))


def test_an_assert_on_a_traced_value_is_checked_at_every_run(on):
    @jit
    def f(x):
        y = x * 2
        assert (y > 0).all(), f"y must be positive, {len(y)} values"  # checked
        return y

    np.testing.assert_array_equal(f(t(1, 2)).numpy(), [2, 4])
    raises_where(f, "# checked", AssertionError, "y must be positive, 2 values", t(1, -2))
    graph = f.lower(t(1, 2)).graph
    assert len(graph.outputs) == 2 and str(graph.outputs[1].type) == "bool[]"


def test_assert_in_a_list_and_not_in(on):
    @jit
    def f(x):
        assert x in [2, 3, 4]  # membership
        assert x not in (4, 8), "four or eight"
        return x

    assert float(f(t(3))) == 3.0
    raises_where(f, "# membership", AssertionError, "", t(-1))
    with pytest.raises(AssertionError, match="four or eight"):
        f(t(4))


def test_a_failing_run_leaves_the_parameters_as_they_were(on):
    w = ms.Parameter(np.zeros(2, np.float32), name="w")

    @jit
    def step(x):
        w.assign_value(w + x)
        if (w > 5).any():
            raise ValueError("w grew too large")
        return w.sum()

    assert float(step(t(1, 2))) == 3.0
    with pytest.raises(ValueError, match="w grew too large"):
        step(t(9, 9))
    np.testing.assert_array_equal(w.numpy(), [1, 2])


def test_what_runs_unconditionally_raises_at_once():
    traced = []

    @jit
    def f(x, flag):
        traced.append(flag)
        if flag:  # a Python condition: plain Python
            raise KeyError("flag set")
        assert flag is False, "static assert"
        return x

    with pytest.raises(KeyError, match="flag set"):
        f(t(1), True)
    assert traced == [True]  # raised while tracing, nothing compiled
    assert float(f(t(1), False)) == 1.0


def test_a_raise_caught_inside_the_branch_stays_python():
    @jit
    def f(x):
        if x > 0:
            try:
                raise KeyError("handled")
            except KeyError:
                x = x * 10
        return x

    assert float(f(t(2))) == 20.0 and float(f(t(-2))) == -2.0


def test_checks_outside_staged_code_keep_the_traced_value_error():
    def body(x):
        assert x > 0
        return x

    with pytest.raises(TracedValueError, match="bool\\(tensor\\) needs a concrete value"):
        jit(lambda x: ms.ops.cond(x > 0, body, lambda v: v, x))(t(1))


# -- MindSpore's other graph-mode names -------------------------------------------------------


def test_mutable_makes_a_number_an_input():
    @jit
    def f(x, n):
        return x * n

    for n in (2, 3):
        assert float(f(t(1), ms.mutable(n))) == n
    assert f.cache_info().misses == 1
    pair = (t(1), t(2))
    assert ms.mutable(pair) is pair
    with pytest.raises(ValueError, match="dynamic_len"):
        ms.mutable([t(1)], dynamic_len=True)
    with pytest.raises(TypeError, match="str values cannot be graph inputs"):
        ms.mutable(("a", t(1)))


def test_jit_class_marks_classes():
    @ms.jit_class
    class Scale:
        def __init__(self, k):
            self.k = k

        def __call__(self, x):
            return x * self.k

    assert float(jit(lambda x: Scale(3)(x))(t(2))) == 6.0
    with pytest.raises(TypeError, match="decorates a class"):
        ms.jit_class(lambda: 0)
