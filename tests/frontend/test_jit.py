"""@jit: compiled once per signature (shapes, dtypes, static arguments), the cache, lowering
and the IR text, methods and callable objects, parameters, nesting, and errors pointing at
the user's lines."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import mskernel as ms
from mskernel import ops
from mskernel.errors import MskernelError, OpError
from mskernel.frontend.jit import Compiled, Lowered, jit
from mskernel.frontend.parameter import Parameter
from mskernel.frontend.trace import EscapedTracerError


def t(*values, dtype=np.float32):
    return ms.Tensor(np.array(values, dtype))


def line_of(fn, text):
    """The file line of the first source line of ``fn`` containing ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


# -- one compilation per signature --------------------------------------------------------------


def test_compiles_once_per_signature():
    @jit
    def f(x, y):
        return x * y + 1.0

    for _ in range(3):
        np.testing.assert_array_equal(f(t(1, 2), t(3, 4)).numpy(), [4, 9])
    assert f.cache_info() == (2, 1, 1)
    f(t(1, 2, 3), t(1, 1, 1))  # another shape
    f(t(1, 2, dtype=np.float64), t(3, 4, dtype=np.float64))  # another dtype
    f(t(5, 6), t(7, 8))  # the first signature again
    assert f.cache_info() == (3, 3, 3)


def test_numpy_arrays_are_inputs_and_share_the_cache_with_tensors():
    @jit
    def f(x):
        return x - 1.0

    np.testing.assert_array_equal(f(np.float32([3, 4])).numpy(), [2, 3])
    np.testing.assert_array_equal(f(t(5, 6)).numpy(), [4, 5])
    assert f.cache_info().misses == 1


def test_cached_calls_with_numpy_arrays_skip_the_signature_walk(monkeypatch):
    @jit
    def f(x, y):
        return x * y

    f(np.float32([1, 2]), np.float32([3, 4]))

    def no_walk(*_):
        raise AssertionError("a cached call with arrays walked the arguments")

    monkeypatch.setattr(f, "_signature", no_walk)
    np.testing.assert_array_equal(f(np.float32([2, 3]), np.float32([4, 5])).numpy(), [8, 15])
    np.testing.assert_array_equal(f(t(2, 3), np.float32([1, 1])).numpy(), [2, 3])
    assert f.cache_info() == (2, 1, 1)
    monkeypatch.undo()
    assert f(np.float64([1, 2]), np.float64([3, 4])).dtype == ms.float64  # another signature
    assert f.cache_info().misses == 2


def test_python_numbers_are_static():
    @jit
    def f(x, scale):
        return x * scale

    f(t(1, 2), 2.0)
    f(t(1, 2), 2.0)
    assert f.cache_info().misses == 1
    np.testing.assert_array_equal(f(t(1, 2), 3.0).numpy(), [3, 6])
    assert f.cache_info().misses == 2
    f(t(1, 2), 3)  # an int is another static value than the float 3.0
    f(t(1, 2), -0.0)
    f(t(1, 2), 0.0)
    assert f.cache_info().misses == 5
    assert "dense<f32[]: [3.0]>" in f.lower(t(1, 2), 3.0).as_text()


def test_static_argnums_and_argnames():
    @jit(static_argnums=1, static_argnames=("mode",))
    def f(x, axes, mode="sum"):
        return x.sum(axis=axes) if mode == "sum" else x.max(axis=axes)

    x = ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(f(x, (1,)).numpy(), [3, 12])
    np.testing.assert_array_equal(f(x, (0,), mode="max").numpy(), [3, 4, 5])
    np.testing.assert_array_equal(f(x, (0,), mode="max").numpy(), [3, 4, 5])
    assert f.cache_info() == (1, 2, 2)


def test_unhashable_static_argument_is_refused():
    @jit(static_argnums=1)
    def f(x, table):
        return x

    with pytest.raises(TypeError, match="argument 'table': a list is neither a tensor nor "):
        f(t(1), [1, 2])


def test_nested_containers_in_and_out():
    @jit
    def f(pair, named, *, scale):
        a, b = pair
        return {"sum": a + b, "scaled": [named["w"] * scale, named["b"]]}

    out = f((t(1, 2), t(3, 4)), {"w": t(1, 1), "b": t(0, 5)}, scale=t(2))
    assert set(out) == {"sum", "scaled"} and isinstance(out["scaled"], list)
    np.testing.assert_array_equal(out["sum"].numpy(), [4, 6])
    np.testing.assert_array_equal(out["scaled"][0].numpy(), [2, 2])
    f((t(0, 0), t(1, 1)), {"w": t(2, 2), "b": t(1, 1)}, scale=t(3))
    assert f.cache_info().misses == 1
    f([t(0, 0), t(1, 1)], {"w": t(2, 2), "b": t(1, 1)}, scale=t(3))  # a list, not a tuple
    assert f.cache_info().misses == 2


def test_python_values_come_back_as_python_values():
    @jit
    def f(x, n):
        return x.sum(), 2.5, n + 1, [k * k for k in range(n)]

    total, constant, count, squares = f(t(1, 2), 3)
    assert (constant, count, squares) == (2.5, 4, [0, 1, 4])  # as MindSpore returns constants
    assert isinstance(total, ms.Tensor) and float(total) == 3.0
    assert f(t(1, 2), 3)[2] == 4 and f.cache_info().misses == 1
    assert jit(lambda: 7)() == 7


def test_closure_tensors_are_constants_and_globals_are_read_when_tracing():
    weight = t(2, 3)

    @jit
    def f(x):
        return x * weight

    np.testing.assert_array_equal(f(t(1, 1)).numpy(), [2, 3])
    assert "constant" in f.lower(t(1, 1)).as_text()


# -- lowering and the IR text -------------------------------------------------------------------


def test_lower_gives_the_ir_before_and_after_optimisation():
    @jit
    def f(x):
        y = x * 1.0
        if x.sum() > 0:
            y = y + 2.0
        return y

    lowered = f.lower(t(1, 2))
    assert isinstance(lowered, Lowered)
    text = lowered.as_text()
    assert text.startswith("graph @f(%0: f32[2])") and "If(" in text and "mul(" in text
    assert f"test_jit.py\":{line_of(f.python_function, 'y + 2.0')}" in text
    optimized = lowered.as_text(optimized=True)
    assert "mul(" not in optimized and "If(" in optimized
    assert f.cache_info().misses == 0  # lowering does not compile or cache

    compiled = lowered.compile()
    assert isinstance(compiled, Compiled)
    np.testing.assert_array_equal(compiled(t(1, 2)).numpy(), [3, 4])
    with pytest.raises(MskernelError, match=r"compiled for inputs f32\[2\]; the arguments given "
                                            r"have a different signature \(f32\[3\]\)"):
        compiled(t(1, 2, 3))


def test_opt_level_selects_the_pipeline():
    def f(x):
        return x * 1.0 + 0.0

    assert jit(f, opt_level=0).lower(t(1)).as_text(optimized=True) == jit(f).lower(t(1)).as_text()
    assert "mul(" not in jit(f, opt_level=2).lower(t(1)).as_text(optimized=True)


def test_backend_can_be_named():
    @jit(backend="reference")
    def f(x):
        return x + 1.0

    assert f(t(1)).device == "reference"
    assert [s.backend for s in f.lower(t(1)).compile().executable.plan.segments] == ["reference"]


# -- methods, callable objects, parameters ------------------------------------------------------


class Scaler:
    def __init__(self, factor):
        self.factor = ms.Tensor(np.float32(factor))

    @jit
    def apply(self, x, shift):
        if x.sum() > 0:
            return x * self.factor + shift
        return x - shift


def test_jitted_method_binds_self_statically_with_one_cache_per_instance():
    two, three = Scaler(2.0), Scaler(3.0)
    np.testing.assert_array_equal(two.apply(t(1, 2), 1.0).numpy(), [3, 5])
    np.testing.assert_array_equal(three.apply(t(1, 2), 1.0).numpy(), [4, 7])
    np.testing.assert_array_equal(two.apply(t(-1, -2), 1.0).numpy(), [-2, -3])
    assert two.apply is two.apply
    assert two.apply.cache_info() == (1, 1, 1) and three.apply.cache_info() == (0, 1, 1)
    assert Scaler.apply.python_function.__name__ == "apply"


def test_callable_objects_jit_their_construct_or_call():
    class Layer:
        def __init__(self):
            self.bias = t(1, 1)

        def construct(self, x):
            return x + self.bias

    class Doubler:
        def __call__(self, x):
            return x * 2.0

    np.testing.assert_array_equal(jit(Layer())(t(1, 2)).numpy(), [2, 3])
    np.testing.assert_array_equal(jit(Doubler())(t(1, 2)).numpy(), [2, 4])
    with pytest.raises(TypeError, match="jit expects a function"):
        jit(42)


def test_parameters_are_read_and_written_through_refs_without_recompiling():
    w = Parameter(np.float32([1, 2]), name="w")

    @jit
    def step(x):
        w.assign_value(w - x)
        return w * 2.0

    np.testing.assert_array_equal(step(t(1, 1)).numpy(), [0, 2])
    np.testing.assert_array_equal(w.numpy(), [0, 1])
    w.assign_value(np.float32([10, 10]))
    np.testing.assert_array_equal(step(t(1, 2)).numpy(), [18, 16])
    np.testing.assert_array_equal(w.numpy(), [9, 8])
    assert step.cache_info().misses == 1


# -- nesting and tracers ------------------------------------------------------------------------


def test_a_jitted_function_called_while_tracing_is_inlined():
    @jit
    def inner(x):
        if x.sum() > 0:
            return x * 2.0
        return -x

    @jit
    def outer(x):
        return inner(x) + inner(x + 10.0)

    np.testing.assert_array_equal(outer(t(1, 2)).numpy(), [24, 28])
    assert inner.cache_info().misses == 0
    assert outer.lower(t(1, 2)).as_text().count("If(") == 2


def test_a_traced_tensor_kept_past_its_trace_is_refused():
    kept = []

    @jit
    def leak(x):
        kept.append(x * 2.0)
        return x

    leak(t(1))
    with pytest.raises(EscapedTracerError):
        jit(lambda y: y + kept[0])(t(1))


# -- errors point at the user's lines -----------------------------------------------------------


def test_op_errors_name_the_users_line():
    @jit
    def f(x):
        y = x + 1.0
        return y + ops.ones((3,))

    line = line_of(f.python_function, "ops.ones((3,))")
    with pytest.raises(OpError, match=rf"op 'add' at .*test_jit.py:{line}: shapes \[2\] and \[3\]"):
        f(t(1, 2))


def test_traceback_shows_the_original_source_line():
    @jit
    def f(x):
        if x.sum() > 0:
            z = x.reshape((3,))
        else:
            z = x
        return z

    with pytest.raises(OpError) as info:
        f(t(1, 2))
    frames = [entry for entry in info.traceback if entry.path.name == "test_jit.py"]
    assert frames[-1].lineno + 1 == line_of(f.python_function, "x.reshape((3,))")
    assert "x.reshape((3,))" in str(frames[-1].statement)


def test_a_traced_loop_index_promotes_like_the_python_int_of_eager_mode():
    import numpy as np

    import mskernel as ms

    def f(x, n):
        for i in range(n):
            x = x * (i * 2) + 1.0
        return x

    x = ms.Tensor(np.ones(3, np.float32))
    eager = f(x, 4)
    traced = ms.jit(f)(x, ms.Tensor(np.int64(4)))
    assert eager.dtype is traced.dtype is ms.float32
    np.testing.assert_array_equal(eager.numpy(), traced.numpy())
