"""Derivatives through control flow against central differences in float64: cond, switch,
while_loop, fori_loop and scan, eagerly (Python control flow on concrete values) and compiled
(the If/While region rules), in reverse and forward mode, to second order; bounded and
unbounded While loops."""

import numpy as np
import pytest

import mskernel
from mskernel import jit, ops
from mskernel.ops import cond, fori_loop, scan, switch, while_loop
from mskernel_autodiff.control import emit_while
from mskernel_autodiff.testing import check_grads, numerical_jvp

MODES = {"eager": lambda fn: fn, "jit": jit}
RTOL, ATOL = 1e-6, 1e-8


@pytest.fixture(params=sorted(MODES))
def mode(request):
    return MODES[request.param]


def tensor(a):
    return mskernel.Tensor(np.asarray(a, np.float64))


def index(i):
    return mskernel.Tensor(np.int64(i))


def numerical_grad(f, x):
    """The gradient of a scalar ``f`` by central differences along each basis direction."""
    basis = np.eye(x.size).reshape(x.size, *x.shape)
    return np.array([numerical_jvp(f, (x,), (tensor(e),))[0] for e in basis]).reshape(x.shape)


def check_both_modes(f, x, mode):
    """grad and jvp of ``f`` at ``x`` (run by ``mode``) against central differences."""
    g = mode(mskernel.grad(f))(x)
    np.testing.assert_allclose(g.numpy(), numerical_grad(f, x), rtol=RTOL, atol=ATOL)
    v = tensor(np.linspace(-1.0, 1.0, x.size).reshape(x.shape))
    _, tangent = mode(lambda x, v: mskernel.jvp(f, (x,), (v,)))(x, v)
    np.testing.assert_allclose(tangent.numpy(), numerical_jvp(f, (x,), (v,))[0],
                               rtol=RTOL, atol=ATOL)


X = np.array([0.3, 1.2, -0.7])


# -- cond and switch --------------------------------------------------------------------------


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["then", "else"])
def test_cond(mode, sign):
    w = tensor([0.5, -1.5, 2.0])

    def f(x):
        y = cond(ops.sum(x) * sign > 0,
                 lambda a, b: ops.sin(a) * b + ops.exp(a * w),  # closes over w
                 lambda a, b: ops.tanh(a * b), x, x * 2.0)
        return ops.sum(y * y)

    check_both_modes(f, tensor(X), mode)


def test_switch_with_integer_operands(mode):
    def f(x):
        branches = [lambda a, n: ops.sin(a) * ops.astype(n, "float64"),
                    lambda a, n: a * a, lambda a, n: ops.exp(a)]
        return ops.sum(switch(ops.argmax(x), branches, x, index(3)))

    for x in (X, [2.0, 0.5, 0.1], [0.0, 0.1, 5.0]):
        check_both_modes(f, tensor(x), mode)


# -- loops ------------------------------------------------------------------------------------


def test_while_loop_with_a_value_dependent_trip_count(mode):
    w = tensor([1.1, 0.9, 1.3])

    def f(x):
        def body(state):
            i, v = state
            return i + 1, ops.sin(v) * w + x  # reads the loop-invariant x and w

        def running(state):
            i, v = state
            return ops.logical_and(i < 6, ops.sum(v * v) < 6.0)

        _, v = while_loop(running, body, (index(0), x))
        return ops.sum(v * v)

    check_both_modes(f, tensor(X), mode)


def test_while_loop_that_never_runs(mode):
    f = lambda x: ops.sum(while_loop(lambda v: ops.sum(v) > 100.0, ops.exp, x) ** 2)
    check_both_modes(f, tensor(X), mode)


def test_fori_loop_with_nested_cond(mode):
    def f(x):
        def body(i, v):
            return cond(i % 2 == 0, lambda u: ops.sin(u) * 1.5, lambda u: u * ops.cos(u), v)

        return ops.sum(fori_loop(0, 5, body, x))

    check_both_modes(f, tensor(X), mode)


def test_cond_holding_a_loop(mode):
    def f(x):
        looped = lambda v: fori_loop(0, 3, lambda i, u: ops.tanh(u * 2.0 + 0.1), v)
        return ops.sum(cond(ops.amax(x) > 1.0, looped, ops.exp, x))

    check_both_modes(f, tensor(X), mode)


@pytest.mark.parametrize("reverse", [False, True])
def test_scan(mode, reverse):
    def f(x):
        def step(carry, xi):
            carry = ops.tanh(carry * xi + 0.3)
            return carry, carry * xi

        carry, ys = scan(step, ops.sum(x) * 0.1, x, reverse=reverse)
        return ops.sum(ys * ys) + carry

    check_both_modes(f, tensor(X), mode)


@pytest.mark.parametrize("bound", [None, 6], ids=["unbounded", "bounded"])
def test_while_op_gradients_wrt_state_and_invariants(mode, bound):
    """Both While strategies: stacked states (``max_iterations``) and recomputation."""

    def f(x, w):
        def body(s):
            return [s[0] + 1, ops.sin(s[1]) * s[2] + s[1] * 0.5, s[2]]

        _, v, _ = emit_while(lambda s: s[0] < 4, body, [index(0), x, w], bound)
        return ops.sum(v * v)

    x, w = tensor(X), tensor([0.5, -0.2, 0.9])
    gx, gw = mode(mskernel.grad(f, argnums=(0, 1)))(x, w)
    np.testing.assert_allclose(gx.numpy(), numerical_grad(lambda x: f(x, w), x), RTOL, ATOL)
    np.testing.assert_allclose(gw.numpy(), numerical_grad(lambda w: f(x, w), w), RTOL, ATOL)
    check_both_modes(lambda x: f(x, w), x, mode)


def test_while_loop_exceeding_its_bound_is_an_error():
    def f(x):
        return ops.sum(emit_while(lambda s: s[0] < 5, lambda s: [s[0] + 1, s[1] * 2.0],
                                  [index(0), x], 3)[1])

    with pytest.raises(mskernel.errors.MskernelError, match=r"max_iterations=3"):
        jit(mskernel.grad(f))(tensor(X))


# -- second order -----------------------------------------------------------------------------


@pytest.mark.parametrize("bound", [None, 5], ids=["unbounded", "bounded"])
def test_second_derivatives_through_loops_and_branches(mode, bound):
    def f(x):
        def body(s):
            v = cond(ops.sum(s[1]) > 0, lambda u: ops.sin(u) * 1.3, lambda u: u * u, s[1])
            return [s[0] + 1, v + s[2] * 0.1, s[2]]

        _, v, _ = emit_while(lambda s: s[0] < 3, body, [index(0), x, x], bound)
        return ops.sum(ops.exp(v))

    x = tensor(X)
    grad_sum = lambda x: ops.sum(mskernel.grad(f)(x) * tensor([1.0, 2.0, -1.0]))
    g2 = mode(mskernel.grad(grad_sum))(x)
    np.testing.assert_allclose(g2.numpy(), numerical_grad(grad_sum, x), rtol=1e-5, atol=1e-7)


def test_check_grads_through_scan_to_second_order():
    def f(x):
        return scan(lambda c, xi: (ops.sin(c) * xi, c * xi), ops.sum(x), x)[1]

    check_grads(f, (tensor(X),), order=2, rtol=1e-5, atol=1e-7)


def test_parameter_read_inside_a_traced_loop_body_gets_its_gradient():
    import mskernel

    b = mskernel.Parameter(np.ones(3, np.float32), name="b")

    def f(x):
        carry, _ = mskernel.ops.scan(lambda c, xt: (c + xt * b, c),
                                     mskernel.Tensor(np.zeros(3, np.float32)), x)
        return mskernel.ops.sum(carry)

    step = mskernel.value_and_grad(f, None, weights=[b])
    x = mskernel.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(step(x)[1][0].numpy(), [3.0, 5.0, 7.0])
    np.testing.assert_array_equal(mskernel.jit(step)(x)[1][0].numpy(), [3.0, 5.0, 7.0])
