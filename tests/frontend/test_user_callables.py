"""Functions handed to higher-order functions run converted under a trace: the control-flow
functions of the core declare theirs, and a library's own higher-order function opts in with
``user_callables``."""

import warnings

import numpy as np
import pytest

import mskernel as ms
from mskernel import ops
from mskernel.frontend.autograph import ConversionWarning, user_callables
from mskernel.frontend.tensor import TracedValueError


def x3():
    return ms.Tensor(np.array([0.5, -1.5, 2.0], np.float32))


def halve_until_small(x):
    while (x * x).sum() > 1.0:
        x = x * 0.5
    return x


def sign_flip(x):
    if x.sum() > 0:
        return -x
    return x


def test_cond_branches_and_loop_bodies_with_python_control_flow_under_jit():
    def f(x):
        y = ops.cond(x[2] > 0, sign_flip, halve_until_small, x)
        y = ops.switch(1, [halve_until_small, sign_flip], y)
        y = ops.while_loop(lambda y: (y * y).sum() > 0.25, lambda y: sign_flip(y) * 0.5, y)
        y = ops.fori_loop(0, 2, lambda i, y: halve_until_small(y + 0.25), y)
        carry, ys = ops.scan(lambda c, v: (sign_flip(c + v), c), y, ms.Tensor(np.ones((2, 3), np.float32)))
        return carry, ys

    x = x3()
    for got, want in zip(ms.jit(f)(x), f(x)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


# A library's higher-order function: its module is a plugin's, so converted code does not
# convert it, nor the functions it calls.
LIBRARY = '''
def twice(fn, x):
    return fn(fn(x))
'''


def library_function(decorate):
    namespace = {"__name__": "mskernel_examplelib"}
    exec(compile(LIBRARY, "<mskernel_examplelib>", "exec"), namespace)
    return decorate(namespace["twice"])


def test_a_library_higher_order_function_opts_in():
    plain = library_function(lambda fn: fn)
    declared = library_function(user_callables("fn"))
    x = x3()
    with pytest.raises(TracedValueError):
        ms.jit(lambda x: plain(sign_flip, x))(x)
    for call in (lambda x: declared(sign_flip, x), lambda x: declared(fn=sign_flip, x=x)):
        np.testing.assert_allclose(ms.jit(call)(x).numpy(), sign_flip(sign_flip(x)).numpy())


def test_eager_calls_are_not_converted():
    def uses_match(x):  # a construct conversion refuses: converting would warn
        match 1:
            case 1:
                return x * 2

    declared = library_function(user_callables("fn"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConversionWarning)
        np.testing.assert_allclose(declared(uses_match, x3()).numpy(), x3().numpy() * 4)


def test_a_parameter_that_does_not_exist_is_refused():
    with pytest.raises(TypeError, match=r"twice has no parameter 'f'"):
        library_function(user_callables("f"))
