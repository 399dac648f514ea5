"""The same functions eagerly and under @jit: a corpus of plain Python functions written as a
user would (operators, indexing, Python control flow on tensors), each run on several inputs.

Results must agree: same structure, same dtypes, and on the reference backend bit-identical
values (it runs the same NumPy kernels in both modes).  On the preferred installed backend, when
that is another one, values agree within the dtype's tolerance: graph mode may fuse ops whose
kernels round differently (as XLA and torch.compile do).  A Python number eager code returns may
come back from a jitted function as a 0-d tensor of its default dtype (a value carried
through a tensor-dependent loop or branch); only its value is compared then.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

import mskernel as ms
from mskernel import ops
from mskernel.frontend.jit import jit
from mskernel.frontend.pytree import flatten
from mskernel.testing import assert_close

# -- closures and globals over Python constants ------------------------------------------------

SCALE = 3.0
OFFSETS = (1.0, -2.0)
TABLE = np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)  # made a tensor on the current device


def make_affine(a, b):
    def affine(x):
        return x * a + b
    return affine


def make_thresholded(limit):
    def thresholded(x):
        if x.max() > limit:
            return x - limit
        return x + limit
    return thresholded


def helper_abs_sum(v):
    """A user function called from jitted code: converted too (its `if` is on a tensor)."""
    if v.sum() < 0:
        return -v.sum()
    return v.sum()


def helper_clip_loop(v, hi):
    while v.max() > hi:
        v = v * 0.5
    return v


# -- arithmetic, broadcasting, indexing, reductions --------------------------------------------


def linear(x, w, b):
    return x @ w + b


def polynomial(x):
    return 3.0 * x ** 2 - 2.0 * x + 1.0


def outer_broadcast(a, b):
    return ops.reshape(a, (-1, 1)) * b - b / 2


def promotion(i, f):
    return i + f, i * 2, f * 2.5, (i > 1) & (f < 3.0)


def manual_softmax(x):
    e = ops.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def globals_and_tables(x):
    return x * SCALE + OFFSETS[0] - OFFSETS[1], x @ ms.Tensor(TABLE)


def slicing(x):
    return x[1:, ::2] + x[0, ::2], x[:, -1], x[..., 0]


def gather_and_update(x, idx):
    rows = ops.take(x, idx, axis=0)
    return rows, x.at[0].set(-1.0), ops.where(x > 4.0, x, 0.0)


def reductions(x):
    return x.mean(), x.std(axis=0), x.max(axis=1), ops.argmax(x, axis=1), ops.cumsum(x, axis=1)


def integer_math(a, b):
    return a // b, a % b, ops.minimum(a, b), a * b - a


# -- branches ----------------------------------------------------------------------------------


def branch_on_sum(x):
    if x.sum() > 0:
        y = x * 2.0
    else:
        y = -x
    return y


def elif_chain(x):
    s = x.sum()
    if s > 10.0:
        y = x - 10.0
    elif s > 0.0:
        y = x * 0.5
    elif s > -10.0:
        y = x + 1.0
    else:
        y = ops.zeros_like(x)
    return y, s


def if_without_else(x):
    y = x
    if x.min() < 0.0:
        y = y - x.min()
    return y


def nested_branches(x, y):
    if x.sum() > 0:
        if y.sum() > 0:
            z = x + y
        else:
            z = x - y
    else:
        if y.sum() > x.sum():
            z = y * 2.0
        else:
            z = x * 2.0
    return z


def boolean_operators(x):
    if x.max() > 0 and x.min() < 0:
        return x * 10.0
    if not x.sum() > 0 or x.max() > 100.0:
        return -x
    return x


def conditional_expression(x):
    factor = 2.0 if x.sum() > 0 else 0.5
    return x * factor, (x if x.max() > 3 else x + 1.0)


def static_mode(x, mode):
    if mode == "double":
        return x * 2.0
    elif mode == "square":
        return x * x
    return x


def shape_dependent(x):
    if x.shape[0] > 2:  # a Python condition on a static shape: plain Python
        return x[:2]
    return x


def augmented_assignment(x):
    y = x + 0.0
    if x.sum() > 0:
        y += 1.0
        y *= 2.0
    else:
        y -= 1.0
    return y


def python_value_branches(x):
    if x.sum() > 0:
        k = 3.0
    else:
        k = -1.0
    return x * k


def closure_branch(x):
    return make_thresholded(2.0)(x)


# -- early return ------------------------------------------------------------------------------


def guard_clause(x):
    if x.sum() < 0:
        return -x
    y = x * 3.0
    return y + 1.0


def nested_early_returns(x):
    s = x.sum()
    if s > 0:
        if s > 5:
            return x - 5.0
        x = x * 2.0
    return x + 0.5


def early_return_tuple(x):
    if x.mean() > 1.0:
        return x, x.sum()
    return x * 0.0, x.max()


def returns_inside_with_and_try(x):
    with contextlib.nullcontext():
        if x.sum() > 0:
            return x * 2.0
        y = x - 1.0
    try:
        if y.sum() < -5.0:
            return y * 10.0
    finally:
        y = y + 0.5
    return y


def returns_python_value(x):
    if x.sum() > 0:
        return 1.0
    return 0.0


# -- loops -------------------------------------------------------------------------------------


def while_doubling(x):
    while x.sum() < 100.0:
        x = x * 2.0
    return x


def while_counter(n):
    i = 0
    total = 0
    while i < n:
        total = total + i * i
        i = i + 1
    return total, i


def newton_sqrt(a):
    x = a
    while ops.abs(x * x - a).max() > 1e-4:
        x = 0.5 * (x + a / x)
    return x


def collatz_steps(n):
    steps = 0
    while n != 1:
        n = ops.where(n % 2 == 0, n // 2, 3 * n + 1)
        steps += 1
    return steps


def gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


def static_range(x):
    for i in range(3):
        x = x * 2.0 + i
    return x


def traced_range(x, n):
    for _ in range(n):
        x = x + 1.0
    return x


def range_start_stop_step(x, start, stop):
    acc = x[0] * 0.0
    for i in range(start, stop, 2):
        acc = acc + x[i]
    return acc


def traced_step_range(x, start, stop, step):
    acc = x[0] * 0.0
    for i in range(start, stop, step):
        acc = acc * 2.0 + x[i]
    return acc


def while_with_continue(x):
    k = 0
    total = x * 0.0
    while k < x.shape[0] * 2:
        k += 1
        if x[k % x.shape[0]] < 0:
            continue
        total = total + x
    return total


def return_inside_while(x):
    while x.max() < 50.0:
        x = x * 3.0
        if x.min() > 10.0:
            return x, True
    return -x, False


def loop_inside_branch(x):
    if x.sum() > 0:
        while x.sum() < 30.0:
            x = x + x
    else:
        for row in ops.reshape(x, (-1, 1)):
            x = x - row
    return x


def fibonacci(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def rows_sum_of_squares(x):
    total = 0.0
    for row in x:
        total = total + row * row
    return total


def rows_with_break(x):
    acc = ops.zeros_like(x[0])
    for row in x:
        if row.sum() > 5.0:
            break
        acc = acc + row
    return acc


def rows_with_continue(x):
    acc = ops.zeros_like(x[0])
    for row in x:
        if row.min() < 0.0:
            continue
        acc = acc + row
    return acc


def while_true_with_break(x):
    steps = 0
    while True:
        x = x * 1.5
        steps += 1
        if x.sum() > 20.0:
            break
    return x, steps


def nested_loops(x, n):
    for i in range(n):
        for j in range(2):
            x = x + ops.astype(i * j, "float32")
        if x.sum() > 50.0:
            break
    return x


def triangle_with_break_and_continue(x, n):
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            if (i + j) % 2 == 1:
                continue
            x = x + 1.0
    return x


def inner_break_outer_continue(x):
    total = ops.zeros_like(x[0])
    for row in x:
        if row.sum() < 0.0:
            continue
        k = 0
        while k < 5:
            if (row * k).sum() > 6.0:
                break
            k += 1
        total = total + row * ops.astype(k, "float32")
    return total


def return_from_loop(x):
    for row in x:
        if row.sum() > 3.0:
            return row
    return ops.zeros_like(x[0])


def max_by_unrolled_loop(x):
    m = x[0]
    for i in range(1, x.shape[0]):
        if x[i] > m:
            m = x[i]
    return m


def python_list_accumulation(x):
    parts = []
    for k in (1.0, 2.0, 3.0):
        parts.append(x * k)
    return ops.stack(parts), len(parts)


def loop_over_dict(d):
    out = {}
    for key in sorted(d):
        out[key] = d[key] * 2.0
    return out


# -- calls -------------------------------------------------------------------------------------


def calls_converted_helpers(x):
    return helper_abs_sum(x), helper_clip_loop(x, 2.0)


def nested_def(x):
    def step(v):
        if v.sum() > 0:
            return v - 1.0
        return v + 1.0
    return step(step(x))


def mutually_calling_nested_defs(x, n):
    def is_even(k):
        if k == 0:
            return True
        return is_odd(k - 1)

    def is_odd(k):
        if k == 0:
            return False
        return is_even(k - 1)

    return ops.where(is_even(n), x, -x), is_odd(n)


def closure_over_factory(x):
    return make_affine(2.0, -1.0)(x)


# -- the table ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    fn: Callable[..., Any]
    inputs: tuple[tuple[Any, ...], ...]  # argument tuples; NumPy values become tensors
    static: tuple[int, ...] = ()


def f32(*values: Any) -> np.ndarray:
    return np.array(values, np.float32)


def i64(value: int) -> np.ndarray:
    return np.array(value, np.int64)


M = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0], [2.0, 2.0, 2.0]], np.float32)

CASES = [
    Case(linear, ((np.ones((2, 3), np.float32), M, f32(1, 2, 3)),)),
    Case(polynomial, ((f32(-1, 0, 2.5),),)),
    Case(outer_broadcast, ((f32(1, 2), f32(3, 4, 5)),)),
    Case(promotion, ((np.array([1, 2, 3], np.int32), f32(0.5, 3, 4)),)),
    Case(manual_softmax, ((M,),)),
    Case(globals_and_tables, ((np.ones((3, 2), np.float32),),)),
    Case(slicing, ((np.arange(12, dtype=np.float32).reshape(3, 4),),)),
    Case(gather_and_update, ((M, np.array([2, 0], np.int64)),)),
    Case(reductions, ((M,),)),
    Case(integer_math, ((np.array([7, -7, 9], np.int64), np.array([2, 3, -4], np.int64)),)),
    Case(branch_on_sum, ((f32(1, 2),), (f32(-1, -2),))),
    Case(elif_chain, ((f32(8, 9),), (f32(1, 2),), (f32(-1, -2),), (f32(-8, -9),))),
    Case(if_without_else, ((f32(1, -3),), (f32(1, 3),))),
    Case(nested_branches, ((f32(1), f32(2)), (f32(1), f32(-2)), (f32(-1), f32(2)),
                           (f32(-1), f32(-3)))),
    Case(boolean_operators, ((f32(-1, 2),), (f32(1, 2),), (f32(-1, -2),), (f32(1, 200),))),
    Case(conditional_expression, ((f32(1, 4),), (f32(-1, 2),))),
    Case(static_mode, ((f32(1, 3), "double"), (f32(1, 3), "square"), (f32(1, 3), "none")),
         static=(1,)),
    Case(shape_dependent, ((M,), (M[:2],))),
    Case(augmented_assignment, ((f32(1, 2),), (f32(-1, -2),))),
    Case(python_value_branches, ((f32(1, 2),), (f32(-1, -2),))),
    Case(closure_branch, ((f32(1, 3),), (f32(0, 1),))),
    Case(guard_clause, ((f32(-1, -2),), (f32(1, 2),))),
    Case(nested_early_returns, ((f32(3, 4),), (f32(1, 2),), (f32(-1, -2),))),
    Case(early_return_tuple, ((f32(2, 3),), (f32(0, 1),))),
    Case(returns_inside_with_and_try, ((f32(1, 2),), (f32(-1, -2),), (f32(-5, -5),))),
    Case(returns_python_value, ((f32(2, 3),), (f32(-2, 1),))),
    Case(while_doubling, ((f32(1, 2),), (f32(60, 70),))),
    Case(while_counter, ((i64(0),), (i64(5),))),
    Case(newton_sqrt, ((f32(2, 9, 0.25),),)),
    Case(collatz_steps, ((i64(1),), (i64(6),), (i64(27),))),
    Case(gcd, ((i64(48), i64(18)), (i64(17), i64(5)))),
    Case(static_range, ((f32(1, 2),),)),
    Case(traced_range, ((f32(1, 2), i64(0)), (f32(1, 2), i64(4)))),
    Case(range_start_stop_step, ((f32(1, 2, 3, 4, 5, 6), i64(1), i64(6)),
                                 (f32(1, 2, 3, 4, 5, 6), i64(4), i64(2)))),
    Case(traced_step_range, ((f32(1, 2, 3, 4, 5, 6), i64(5), i64(0), i64(-2)),
                             (f32(1, 2, 3, 4, 5, 6), i64(0), i64(6), i64(3)))),
    Case(while_with_continue, ((f32(1, -2, 3),),)),
    Case(return_inside_while, ((f32(1, 2),), (f32(20, 40),), (f32(-1, 1),))),
    Case(loop_inside_branch, ((f32(1, 2),), (f32(-1, -2),))),
    Case(fibonacci, ((i64(0),), (i64(1),), (i64(10),))),
    Case(rows_sum_of_squares, ((M,),)),
    Case(rows_with_break, ((M,), (M[::-1],))),
    Case(rows_with_continue, ((M,),)),
    Case(while_true_with_break, ((f32(1, 2),), (f32(30, 1),))),
    Case(nested_loops, ((f32(1, 2), i64(3)), (f32(10, 20), i64(6)))),
    Case(triangle_with_break_and_continue, ((f32(0), i64(4)), (f32(0), i64(0)))),
    Case(inner_break_outer_continue, ((M,), (-M,))),
    Case(return_from_loop, ((M,), (-M,))),
    Case(max_by_unrolled_loop, ((f32(3, 9, 2, 9.5),),)),
    Case(python_list_accumulation, ((f32(1, 2),),)),
    Case(loop_over_dict, (({"b": f32(1), "a": f32(2, 3)},),)),
    Case(calls_converted_helpers, ((f32(-1, -2),), (f32(3, 4),))),
    Case(nested_def, ((f32(1, 2),), (f32(-3, 1),))),
    Case(mutually_calling_nested_defs, ((f32(1, 2), 3), (f32(1, 2), 4)), static=(1,)),
    Case(closure_over_factory, ((f32(1, 2),),)),
]


def _tensors(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return ms.Tensor(value)
    if isinstance(value, dict):
        return {k: _tensors(v) for k, v in value.items()}
    return value


def _assert_same(eager: Any, jitted: Any, what: str, exact: bool) -> None:
    is_tensor = lambda x: isinstance(x, ms.Tensor)  # noqa: E731
    e_leaves, e_tree = flatten(eager, is_tensor)
    j_leaves, j_tree = flatten(jitted, is_tensor)
    assert e_tree == j_tree, f"{what}: structure {j_tree} under jit, {e_tree} eagerly"
    for k, (e, j) in enumerate(zip(e_leaves, j_leaves)):
        if isinstance(e, (int, float, bool)) and not isinstance(j, ms.Tensor):
            assert type(j) is type(e) and j == e, f"{what}: output {k}: {j!r} under jit, {e!r}"
            continue  # a constant comes back as the Python value (as in MindSpore)
        assert isinstance(j, ms.Tensor), f"{what}: output {k} is a {type(j).__name__} under jit"
        if isinstance(e, ms.Tensor):
            assert j.dtype is e.dtype, f"{what}: output {k}: {j.dtype} under jit, {e.dtype} eagerly"
        expected = np.asarray(e.numpy() if is_tensor(e) else e)
        if exact:
            np.testing.assert_array_equal(j.numpy(), expected, err_msg=f"{what}: output {k}")
        else:
            assert_close(j.numpy(), expected, j.dtype, what=f"{what}: output {k}")


def test_the_corpus_is_large_enough():
    assert len(CASES) >= 40
    assert len({case.fn for case in CASES}) == len(CASES)


def _devices() -> list[str]:
    """The reference backend, and the preferred backend when that is another one."""
    preferred = ms.Tensor([0.0]).device
    return ["reference"] + ([preferred] if preferred != "reference" else [])


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("case", CASES, ids=[case.fn.__name__ for case in CASES])
def test_eager_and_jit_agree(case, device):
    jitted = jit(case.fn, static_argnums=case.static)
    with ms.frontend.device.device(device):
        for inputs in case.inputs:
            args = [_tensors(a) for a in inputs]
            _assert_same(case.fn(*args), jitted(*args), f"{case.fn.__name__}{inputs}",
                         exact=device == "reference")
    signatures = {_signature(inputs, case.static) for inputs in case.inputs}
    assert jitted.cache_info().misses == len(signatures)


def _signature(inputs: tuple[Any, ...], static: tuple[int, ...]) -> tuple[Any, ...]:
    def key(i: int, a: Any) -> Any:
        if i in static:
            return a
        if isinstance(a, dict):
            return tuple(sorted((k, v.dtype.str, v.shape) for k, v in a.items()))
        return (a.dtype.str, a.shape)

    return tuple(key(i, a) for i, a in enumerate(inputs))
