"""The AST conversion behind @jit: which statements stage If/While nodes and which stay
Python, what flows out of a staged branch or loop, the errors naming a construct or a variable
with its line, and how converted code keeps globals, closures, methods and called functions."""

from __future__ import annotations

import ast
import inspect
import textwrap
import warnings

import numpy as np
import pytest

import mskernel as ms
from mskernel import ops
from mskernel.frontend.autograph import (
    ConversionError, ConversionWarning, convert, do_not_convert, to_source,
)
from mskernel.frontend.control import ControlFlowError
from mskernel.frontend.jit import jit
from mskernel.frontend.tensor import TracedValueError
from mskernel.ir import Graph


def t(*values, dtype=np.float32):
    return ms.Tensor(np.array(values, dtype))


def line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def graph_of(fn, *args) -> Graph:
    return jit(fn).lower(*args).graph


def ops_of(graph: Graph) -> list[str]:
    return [node.op for node in graph.walk()]


# -- staged or Python ---------------------------------------------------------------------------


def test_python_and_concrete_conditions_run_as_python():
    enabled = ms.Tensor(True)  # a concrete tensor: its truth value is known while tracing

    def f(x, n):
        for i in range(n):  # a Python range: unrolled
            if enabled:
                x = x + 1.0
        while n > 0:
            x = x * 2.0
            n -= 1
        return x

    graph = graph_of(f, t(1), 2)
    assert "If" not in ops_of(graph) and "While" not in ops_of(graph)
    assert ops_of(graph).count("add") == 2 and ops_of(graph).count("mul") == 2


def test_traced_conditions_stage_if_and_while():
    def f(x, n):
        for _ in range(n):
            x = x + 1.0
        if x.sum() > 3:
            x = -x
        return x

    assert {"If", "While"} <= set(ops_of(graph_of(f, t(1), ms.Tensor(np.int64(2)))))


def test_a_while_loop_turns_into_a_while_node_when_its_test_becomes_traced():
    def f(x):
        steps = 0
        while steps < 2 or x.sum() < 10:
            x = x * 2.0
            steps += 1
        return x, steps

    graph = graph_of(f, t(1))
    assert ops_of(graph).count("While") == 1 and ops_of(graph).count("mul") == 3
    x, steps = jit(f)(t(1))
    assert float(x) == 16.0 and int(steps) == 4


def test_only_variables_live_after_a_branch_are_its_outputs():
    def f(x):
        if x.sum() > 0:
            tmp = x * 3.0  # used only inside the branch
            y = tmp + 1.0
        else:
            y = x
        return y

    (node,) = [n for n in graph_of(f, t(1)).nodes if n.op == "If"]
    assert len(node.outputs) == 1


def test_python_values_equal_in_both_branches_stay_python():
    def f(x):
        if x.sum() > 0:
            y, mode = x + 1.0, "fast"
        else:
            y, mode = x - 1.0, "fast"
        return y if mode == "fast" else x

    (node,) = [n for n in graph_of(f, t(1)).nodes if n.op == "If"]
    assert len(node.outputs) == 1


def test_python_numbers_carried_by_a_loop_take_the_dtype_they_meet():
    def f(x):
        acc = 0  # a Python int meeting float16 rows: float16, as eagerly
        for row in x:
            acc = acc + row
        return acc

    x = ms.Tensor(np.ones((3, 2), np.float16))
    out = jit(f)(x)
    assert out.dtype is ms.float16 and out.shape == (2,)
    np.testing.assert_array_equal(out.numpy(), f(x).numpy())


def test_short_circuit_is_kept_for_python_operands():
    def f(x, extra):
        if extra is None or extra.sum() > 0:  # extra.sum() is not evaluated for None
            return x
        return -x

    np.testing.assert_array_equal(jit(f)(t(1), None).numpy(), [1])
    np.testing.assert_array_equal(jit(f)(t(1), t(-1)).numpy(), [-1])


def test_converted_code_runs_eagerly_as_plain_python():
    def f(x):
        total = x * 0.0
        for row in x:
            if row.sum() < 0:
                continue
            total = total + row
            if total.sum() > 100:
                break
        return total

    x = ms.Tensor(np.array([[1, 2], [-5, 1], [3, 3]], np.float32))
    np.testing.assert_array_equal(convert(f)(x).numpy(), f(x).numpy())
    converted = ast.parse(to_source(f))
    assert not any(isinstance(n, (ast.Break, ast.Continue)) for n in ast.walk(converted))
    assert "ag__.for_stmt" in ast.unparse(converted)


# -- variables and types that cannot be staged ---------------------------------------------------


def test_variable_set_in_one_branch_and_used_after_is_named():
    def f(x):
        if x.sum() > 0:
            y = x * 2.0
        return y

    with pytest.raises(ControlFlowError,
                       match=rf"test_autograph.py:{line_of(f, 'if x.sum()')}: variable 'y' is "
                             "assigned only in the if branch"):
        jit(f)(t(1))


def test_branch_type_mismatch_names_the_variable_and_types():
    def f(x):
        if x.sum() > 0:
            y = x
        else:
            y = ops.astype(x, "float64")
        return y

    with pytest.raises(ControlFlowError, match=r"gives variable 'y' a f32\[1\] tensor in the if "
                                               r"branch but a f64\[1\] tensor in the else branch"):
        jit(f)(t(1))


def test_loop_variable_changing_shape_is_named():
    def f(x):
        while x.sum() < 10:
            x = ops.concat([x, x])
        return x

    pattern = (rf":{line_of(f, 'while')}: variable 'x' is a f32\[1\] tensor before .* but a "
               r"f32\[2\] tensor after its body")
    with pytest.raises(ControlFlowError, match=pattern):
        jit(f)(t(1))


def test_variable_first_assigned_in_a_traced_loop_and_used_after_is_named():
    def f(x, n):
        for i in range(n):
            last = x * 2.0
        return last

    with pytest.raises(ControlFlowError, match="variable 'last' is first assigned inside"):
        jit(f)(t(1), ms.Tensor(np.int64(3)))


def test_different_python_values_from_a_traced_branch_are_refused():
    def f(x):
        mode = "up" if x.sum() > 0 else "down"
        return x, mode

    with pytest.raises(ControlFlowError, match="can only choose between tensors and numbers"):
        jit(f)(t(1))


def test_a_variable_left_unset_by_a_python_branch_fails_when_used():
    def f(x, flag):
        if flag:
            y = x
        return y + 1.0

    with pytest.raises(NameError, match=rf"variable 'y' is used at .*test_autograph.py:"
                                        rf"{line_of(f, 'return y')} before it is assigned"):
        jit(f)(t(1), False)


def test_errors_while_tracing_a_branch_say_that_both_branches_are_traced():
    def f(x):
        if x.sum() > 0:
            return x
        return x.reshape(7)

    with pytest.raises(ValueError, match="reshape") as info:
        jit(f)(t(1, 2))
    assert any("both branches are traced" in note for note in info.value.__notes__)


# -- unsupported constructs -----------------------------------------------------------------------


def _raises_at(fn, construct, line_text, *args):
    with pytest.raises(ConversionError) as info:
        jit(fn)(*args)
    expected = f"test_autograph.py:{line_of(fn, line_text)}: {construct} is not supported"
    assert expected in str(info.value)


def test_loop_else_is_refused():
    def while_else(x):
        while x.sum() < 3:
            x = x + 1.0
        else:
            x = -x
        return x

    def for_else(x):
        for row in x:
            x = x + row
        else:
            x = -x
        return x

    _raises_at(while_else, "`while ... else`", "while x.sum()", t(1))
    _raises_at(for_else, "`for ... else`", "for row", t(1))


COUNTER = 0


def test_global_and_nonlocal_writes_inside_blocks_are_refused():
    def global_write(x):
        global COUNTER
        if x.sum() > 0:
            COUNTER += 1
        return x

    count = 0

    def nonlocal_write(x):
        nonlocal count
        for _ in range(2):
            count = count + 1
        return x

    _raises_at(global_write, "assigning global or nonlocal variable 'COUNTER' inside an `if` block",
               "if x.sum()", t(1))
    _raises_at(nonlocal_write, "assigning global or nonlocal variable 'count' inside a `for` loop",
               "for _ in", t(1))


def test_del_match_generators_and_reserved_names_are_refused():
    def deletes(x):
        for _ in range(2):
            y = x
            del y
        return x

    def matches(x):
        match x.ndim:
            case 1:
                return x
        return -x

    def generator(x):
        yield x

    def reserved(x):
        ag__tmp = x
        return ag__tmp

    _raises_at(deletes, "`del y` inside a `for` loop", "del y", t(1))
    _raises_at(matches, "a `match` statement", "match x.ndim", t(1))
    _raises_at(generator, "a generator function", "def generator", t(1))
    _raises_at(reserved, "the name 'ag__tmp'", "ag__tmp = x", t(1))


def test_traced_condition_inside_try_except_is_refused_python_one_is_not():
    def f(x, guard):
        try:
            if guard:
                x = x + 1.0
            if x.sum() > 0:
                x = x * 2.0
        except ValueError:
            pass
        return x

    with pytest.raises(ConversionError, match=rf":{line_of(f, 'if x.sum()')}: a tensor-dependent "
                                              r"`if` inside `try \.\.\. except`"):
        jit(f)(t(1), True)


def test_with_blocks_and_try_finally_are_converted():
    import contextlib

    def f(x):
        with contextlib.nullcontext():
            if x.sum() > 0:
                x = x * 2.0
        try:
            while x.sum() < 10:
                x = x + 3.0
        finally:
            x = x - 1.0
        return x

    np.testing.assert_array_equal(jit(f)(t(1)).numpy(), f(t(1)).numpy())


# -- globals, closures, methods, callees -----------------------------------------------------------

LIMIT = 2.0


def test_converted_code_sees_later_changes_of_globals_and_closure_cells():
    global LIMIT
    offset = 1.0
    calls = 0

    def f(x):
        nonlocal calls
        calls += 1  # a nonlocal write outside any block: fine
        if x.sum() > LIMIT:
            return x + offset
        return x - offset

    converted = convert(f)
    assert float(converted(t(3))) == 4.0
    offset, LIMIT = 10.0, 5.0
    try:
        assert float(converted(t(3))) == -7.0
    finally:
        LIMIT = 2.0
    assert calls == 2


class Base:
    def scale(self, x):
        return x * 2.0


class Derived(Base):
    def __init__(self):
        self.__threshold = 1.0  # a private (mangled) attribute

    def scale(self, x):
        y = super().scale(x)
        if y.sum() > self.__threshold:
            y = y + 1.0
        return y


def test_methods_keep_super_and_private_names():
    d = Derived()
    np.testing.assert_array_equal(jit(d.scale)(t(1)).numpy(), [3])
    np.testing.assert_array_equal(jit(d.scale)(t(-1)).numpy(), [-2])


def helper_with_if(v):
    if v.sum() > 0:
        return v
    return -v


@do_not_convert
def helper_not_converted(v):
    if v.sum() > 0:
        return v
    return -v


def helper_with_unsupported_syntax(v):
    match 1:
        case _:
            return v * 3.0


def test_user_functions_called_from_converted_code_are_converted():
    def f(x):
        return helper_with_if(x) + np.float32(1.0)

    np.testing.assert_array_equal(jit(f)(t(-2)).numpy(), [3])

    def g(x):
        return helper_not_converted(x)

    with pytest.raises(TracedValueError):
        jit(g)(t(-2))


def test_a_callee_that_cannot_be_converted_is_called_as_it_is_with_a_warning():
    def f(x):
        return helper_with_unsupported_syntax(x)

    with pytest.warns(ConversionWarning, match="helper_with_unsupported_syntax is called without "
                                               "conversion.*`match` statement"):
        np.testing.assert_array_equal(jit(f)(t(1)).numpy(), [3])


def test_a_function_without_source_is_traced_unconverted_with_a_warning():
    namespace: dict = {}
    exec(textwrap.dedent("""
        def f(x):
            return x * 2.0
    """), namespace)
    with pytest.warns(ConversionWarning, match="traced without converting"):
        np.testing.assert_array_equal(jit(namespace["f"])(t(2)).numpy(), [4])


def test_nested_generators_stay_python_and_nested_lambdas_run():
    def f(x):
        def rows():
            for k in range(2):
                yield x * float(k)
        pick = lambda v: v + 1.0  # noqa: E731
        return pick(sum(rows()))

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(jit(f)(t(3)).numpy(), [4])


def _sign(v):
    if v.sum() > 0:
        return v
    return -v


def test_lambdas_are_converted_and_told_apart_on_one_line():
    double, triple = (lambda x: _sign(x) * 2.0), (lambda x: _sign(-x) * 3.0)  # noqa: E731
    x = t(1.0, -3.0)
    for fn in (double, triple):
        np.testing.assert_array_equal(jit(fn)(x).numpy(), fn(x).numpy())
    absolute = lambda x: x if x.sum() > 0 else -x  # noqa: E731
    assert "If" in ops_of(graph_of(absolute, x))
    np.testing.assert_array_equal(jit(absolute)(x).numpy(), [-1.0, 3.0])
    assert "return ag__.call(_sign, x) * 2.0" in to_source(double)


def test_partial_of_user_code_is_converted():
    import functools

    def scaled(x, factor):
        if x.sum() > 0:
            return x * factor
        return -x * factor

    @jit
    def f(x):
        return functools.partial(scaled, factor=2.0)(x)

    np.testing.assert_array_equal(f(t(1.0, -3.0)).numpy(), [-2.0, 6.0])

