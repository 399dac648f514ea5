"""Python control flow under a transform under ``@jit``: the functions handed to ``grad``,
``value_and_grad``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian`` and to control-flow
bodies are converted like the jitted function itself, whether the transform is applied
outside (``jit(grad(f))``) or inside the jitted function.

Each function of the corpus — if/elif/else, while, for over a range (static and traced
bounds) and over a tensor, break/continue, early return, helpers, nesting — is
differentiated eagerly, under ``jit`` both ways, and by central differences in float64."""

import numpy as np
import pytest

import mskernel
from mskernel import ops
from mskernel_autodiff.testing import numerical_jvp

RTOL, ATOL = 1e-6, 1e-8


def tensor(a):
    return mskernel.Tensor(np.asarray(a, np.float64))


# -- the corpus -------------------------------------------------------------------------------


def branches(x):
    s = x.sum()
    if s > 2.0:
        y = x * x
    elif s > 0.0:
        y = ops.sin(x)
    else:
        y = -x
    return (y * x).sum()


def halving(x):
    y = x
    while (y * y).sum() > 1.0:
        y = y * 0.5
    return (y * y * y).sum()


def static_range(x):
    acc = 0.0
    term = x
    for i in range(4):
        acc = acc + term.sum() / (i + 1)
        term = term * x
    return acc


def traced_range(x):
    n = (x > 0).astype(mskernel.int64).sum()
    acc = x.sum() * 0.0
    for i in range(n):
        acc = acc + ops.tanh(x * (i + 1)).sum()
    return acc


def over_tensor(x):
    acc = 0.0
    for v in x:
        acc = acc + v * v * v
    return acc


def break_and_continue(x):
    acc = x[0] * 0.0
    for i in range(3):
        v = x[i]
        if v < 0:
            continue
        acc = acc + v * v
        if acc > 2.0:
            break
    return acc


def early_return(x):
    if x.sum() > 1.0:
        return (x * x).sum()
    return ops.exp(x).sum()


def _normalised(v):
    if v.sum() > 1.0:
        return v / v.sum()
    return v


def calls_a_helper(x):
    return (_normalised(x) ** 2).sum()


def nested(x):
    y = x
    k = 0
    while k < 3:
        if y.sum() > 0:
            y = y * ops.cos(y)
        else:
            y = y + 1.0
        k += 1
    total = 0.0
    for v in y:
        if v > 0:
            total = total + v
        else:
            total = total - v * v
    return total


def newton_sqrt(x):
    a = (x * x).sum() + 1.0
    r = a
    steps = 0
    while True:
        r = 0.5 * (r + a / r)
        steps += 1
        if ops.abs(r * r - a) < 1e-12 or steps >= 60:
            break
    return r


CORPUS = {
    "if/elif/else: if": (branches, [1.0, 0.5, 1.5]),
    "if/elif/else: elif": (branches, [0.2, 0.3, -0.1]),
    "if/elif/else: else": (branches, [-1.0, -0.5, 0.25]),
    "while": (halving, [1.5, -2.0, 0.7]),
    "for over a static range": (static_range, [0.3, -0.4, 0.9]),
    "for over a traced range": (traced_range, [0.3, -0.4, 0.9]),
    "for over a tensor": (over_tensor, [0.3, -1.4, 0.9]),
    "break and continue": (break_and_continue, [-0.5, 1.2, 1.1]),
    "early return: taken": (early_return, [1.0, 0.5, -0.2]),
    "early return: not taken": (early_return, [0.1, -0.5, 0.2]),
    "a converted helper": (calls_a_helper, [1.0, 0.5, 0.25]),
    "nested loops and branches": (nested, [0.4, -0.3, 0.8]),
    "while True with a break": (newton_sqrt, [0.6, -1.1, 0.4]),
}


def numerical_grad(f, x):
    basis = np.eye(x.size)
    return np.array([numerical_jvp(f, (x,), (tensor(e),))[0] for e in basis])


@pytest.fixture(params=sorted(CORPUS))
def case(request):
    f, x = CORPUS[request.param]
    return f, tensor(x)


def test_grad_eager_and_under_jit_both_ways_match_central_differences(case):
    f, x = case
    expected = numerical_grad(f, x)

    @mskernel.jit
    def grad_inside(x):
        return mskernel.grad(f)(x)

    for how, g in [("eager", mskernel.grad(f)), ("jit(grad(f))", mskernel.jit(mskernel.grad(f))),
                   ("grad inside @jit", grad_inside)]:
        np.testing.assert_allclose(g(x).numpy(), expected, rtol=RTOL, atol=ATOL, err_msg=how)
    np.testing.assert_allclose(mskernel.jit(f)(x).numpy(), f(x).numpy(), rtol=1e-12)


def test_the_other_transforms_under_jit(case):
    f, x = case
    v = tensor([0.5, -1.0, 0.25])
    gradient = numerical_grad(f, x)

    value, g = mskernel.jit(mskernel.value_and_grad(f))(x)
    np.testing.assert_allclose(value.numpy(), f(x).numpy(), rtol=1e-12)
    np.testing.assert_allclose(g.numpy(), gradient, rtol=RTOL, atol=ATOL)

    @mskernel.jit
    def pullback_and_pushforward(x, v):
        out, vjp_fn = mskernel.vjp(f, x)
        (cotangent,) = vjp_fn(ops.ones_like(out))
        _, tangent = mskernel.jvp(f, (x,), (v,))
        return cotangent, tangent

    cotangent, tangent = pullback_and_pushforward(x, v)
    np.testing.assert_allclose(cotangent.numpy(), gradient, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(tangent.numpy(), gradient @ v.numpy(), rtol=RTOL, atol=ATOL)
    for jacobian in (mskernel.jacrev, mskernel.jacfwd):
        np.testing.assert_allclose(mskernel.jit(jacobian(f))(x).numpy(), gradient,
                                   rtol=RTOL, atol=ATOL, err_msg=jacobian.__name__)


@pytest.mark.parametrize("name", ["if/elif/else: elif", "for over a traced range",
                                  "nested loops and branches"])
def test_hessian_under_jit_matches_differences_of_the_gradient(name):
    f, x = CORPUS[name]
    x = tensor(x)
    grad_f = mskernel.grad(f)
    expected = np.stack([numerical_jvp(grad_f, (x,), (tensor(e),))[0] for e in np.eye(3)])
    np.testing.assert_allclose(mskernel.jit(mskernel.hessian(f))(x).numpy(), expected,
                               rtol=1e-5, atol=1e-7)


def test_control_flow_bodies_under_jit_and_grad():
    """A cond branch and a fori_loop body with Python control flow, traced under @jit and
    differentiated inside it."""

    def grow(x):
        if x.sum() > 0:
            return x * 1.5
        return x * 0.5

    def shrink(x):
        y = x
        for _ in range(2):
            y = ops.sin(y)
        return y

    def step(i, x):
        while (x * x).sum() > 4.0:
            x = x * 0.5
        return x + 0.1 * i

    def f(x):
        y = ops.cond(x[0] > 0, grow, shrink, x)
        return ops.fori_loop(0, 3, step, y).sum()

    for x in ([0.5, 1.5, -0.25], [-0.5, 1.0, 2.5]):
        x = tensor(x)
        expected = numerical_grad(f, x)
        np.testing.assert_allclose(mskernel.jit(mskernel.grad(f))(x).numpy(), expected,
                                   rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(mskernel.jit(f)(x).numpy(), f(x).numpy(), rtol=1e-12)


def test_a_lambda_handed_to_grad_converts_what_it_calls():
    x = tensor([1.5, -2.0, 0.7])
    expected = 2.0 * numerical_grad(halving, x)
    scaled = mskernel.jit(mskernel.grad(lambda v: halving(v) * 2.0))
    np.testing.assert_allclose(scaled(x).numpy(), expected, rtol=RTOL, atol=ATOL)
    inside = mskernel.jit(lambda v: mskernel.grad(lambda w: 2.0 * halving(w))(v))
    np.testing.assert_allclose(inside(x).numpy(), expected, rtol=RTOL, atol=ATOL)
