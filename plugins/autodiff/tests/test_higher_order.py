"""Composed transformations: derivatives of any order, Hessian-vector products (forward over
reverse, reverse over forward), no perturbation confusion, and custom rules (custom_vjp,
custom_jvp) at every order — eagerly and compiled."""

import numpy as np
import pytest

import mskernel
from mskernel import jit, ops
from mskernel_autodiff.custom import CustomRuleError
from mskernel_autodiff.lookup import RuleResultError
from mskernel_autodiff.testing import check_grads, numerical_jvp

MODES = {"eager": lambda fn: fn, "jit": jit}


@pytest.fixture(params=sorted(MODES))
def mode(request):
    return MODES[request.param]


def tensor(a):
    return mskernel.Tensor(np.asarray(a, np.float64))


def nth(f, n):
    for _ in range(n):
        f = mskernel.grad(f)
    return f


X0 = 0.4
E = np.exp(X0)


@pytest.mark.parametrize("f, third", [
    (lambda x: ops.sin(ops.exp(x)),
     -np.cos(E) * E ** 3 - 3 * np.sin(E) * E ** 2 + np.cos(E) * E),
    (lambda x: ops.exp(ops.sin(x)),
     np.exp(np.sin(X0)) * (np.cos(X0) ** 3 - 3 * np.sin(X0) * np.cos(X0) - np.cos(X0))),
], ids=["sin(exp)", "exp(sin)"])
def test_third_derivatives(mode, f, third):
    np.testing.assert_allclose(mode(nth(f, 3))(tensor(X0)).numpy(), third, rtol=1e-12)


def test_fourth_derivative_against_differences_of_the_third():
    f = lambda x: ops.sin(ops.exp(x)) * ops.tanh(x)
    fourth = nth(f, 4)(tensor(X0)).numpy()
    numeric = numerical_jvp(nth(f, 3), (tensor(X0),), (tensor(1.0),), step=1e-5)[0]
    np.testing.assert_allclose(fourth, numeric, rtol=1e-7)


def loss(x):
    return ops.sum(ops.sin(x) * ops.exp(0.5 * x)) * ops.sum(x * x) + ops.prod(ops.tanh(x))


X = np.array([0.3, 1.2, -0.7, 0.5])
V = np.array([1.0, -2.0, 0.5, 0.25])


def test_hessian_vector_products_agree_with_differences_of_the_gradient(mode):
    x, v = tensor(X), tensor(V)
    fwd_over_rev = mode(lambda x, v: mskernel.jvp(mskernel.grad(loss), (x,), (v,))[1])(x, v)
    rev_over_fwd = mode(mskernel.grad(lambda x, v: mskernel.jvp(loss, (x,), (v,))[1]))(x, v)
    rev_over_rev = mode(mskernel.grad(lambda x, v: ops.sum(mskernel.grad(loss)(x) * v)))(x, v)
    numeric = numerical_jvp(mskernel.grad(loss), (x,), (v,))[0]
    hessian = mskernel.hessian(loss)(x).numpy()
    for hvp in (fwd_over_rev, rev_over_fwd, rev_over_rev):
        np.testing.assert_allclose(hvp.numpy(), numeric, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(hvp.numpy(), hessian @ V, rtol=1e-10)


def test_forward_over_forward():
    x, v = tensor(X), tensor(V)
    second = mskernel.jvp(lambda x: mskernel.jvp(loss, (x,), (v,))[1], (x,), (v,))[1]
    np.testing.assert_allclose(second.numpy(), V @ mskernel.hessian(loss)(x).numpy() @ V,
                               rtol=1e-10)


def test_check_grads_to_third_order():
    check_grads(lambda x: ops.tanh(x) * ops.sum(ops.sin(x)), (tensor(X),), order=3,
                rtol=1e-5, atol=1e-7)


def test_no_perturbation_confusion():
    """JAX's example: d/dx [x * (d/dy x*y)] = d/dx x² = 2x, in both modes."""
    x = tensor(3.0)
    f_rev = lambda x: x * mskernel.grad(lambda y: x * y)(x)
    f_fwd = lambda x: x * mskernel.jvp(lambda y: x * y, (x,), (tensor(1.0),))[1]
    assert float(mskernel.grad(f_rev)(x)) == 6.0
    assert float(mskernel.jvp(f_fwd, (x,), (tensor(1.0),))[1]) == 6.0


def test_same_tensor_for_two_arguments():
    x = tensor([1.0, 2.0])
    gx, gy = mskernel.grad(lambda x, y: ops.sum(x * x * y), argnums=(0, 1))(x, x)
    np.testing.assert_allclose(gx.numpy(), 2 * x.numpy() ** 2)
    np.testing.assert_allclose(gy.numpy(), x.numpy() ** 2)


# -- custom rules -----------------------------------------------------------------------------


@mskernel.custom_vjp
def sin_with_residual(x):
    return ops.sin(x)


sin_with_residual.defvjp(lambda x: (sin_with_residual(x), ops.cos(x)),
                         lambda cos_x, g: (g * cos_x,))


@mskernel.custom_vjp
def clip_gradient(x, bound):
    return x


clip_gradient.defvjp(lambda x, bound: (x, bound),
                     lambda bound, g: (ops.clip(g, -bound, bound), None))


def test_custom_vjp_rule_is_used(mode):
    g = mode(mskernel.grad(lambda x: ops.sum(clip_gradient(x * 3.0, 0.5))))(tensor([1.0, -2.0]))
    np.testing.assert_allclose(g.numpy(), [1.5, 1.5])


def test_custom_vjp_at_higher_orders(mode):
    x = tensor([0.3, -1.1])
    f = lambda x: ops.sum(sin_with_residual(x))
    np.testing.assert_allclose(mode(mskernel.grad(f))(x).numpy(), np.cos(x.numpy()))
    second = mode(mskernel.grad(lambda x: ops.sum(mskernel.grad(f)(x))))(x)
    np.testing.assert_allclose(second.numpy(), -np.sin(x.numpy()), rtol=1e-12)
    hessian = mskernel.hessian(f)(x).numpy()
    np.testing.assert_allclose(hessian, np.diag(-np.sin(x.numpy())), rtol=1e-12, atol=1e-15)
    _, tangent = mskernel.jvp(sin_with_residual, (x,), (tensor([1.0, 2.0]),))
    np.testing.assert_allclose(tangent.numpy(), np.cos(x.numpy()) * [1.0, 2.0])


@mskernel.custom_jvp
def log1pexp(x):
    return ops.log(1.0 + ops.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * ops.sigmoid(x)


def test_custom_jvp_serves_both_modes(mode):
    x = tensor([1000.0, 0.0, -3.0])  # exp overflows: the plain derivative is nan at 1000
    sigmoid = 1.0 / (1.0 + np.exp(-x.numpy()))
    g = mode(mskernel.grad(lambda x: ops.sum(log1pexp(x))))(x)
    np.testing.assert_allclose(g.numpy(), sigmoid, rtol=1e-12)
    _, tangent = mode(lambda x: mskernel.jvp(log1pexp, (x,), (ops.ones_like(x),)))(x)
    np.testing.assert_allclose(tangent.numpy(), sigmoid, rtol=1e-12)
    second = mode(mskernel.grad(lambda x: ops.sum(mskernel.grad(
        lambda y: ops.sum(log1pexp(y)))(x))))(x)
    np.testing.assert_allclose(second.numpy(), sigmoid * (1 - sigmoid), rtol=1e-12)


def test_custom_rules_with_nested_arguments():
    @mskernel.custom_vjp
    def weighted(pair, scale):
        return ops.sum(pair["a"] * pair["b"]) * scale

    def fwd(pair, scale):
        return weighted(pair, scale), (pair, scale)

    def bwd(res, g):
        pair, scale = res
        return {"a": g * scale * pair["b"] * 10.0, "b": g * scale * pair["a"]}, None

    weighted.defvjp(fwd, bwd)
    pair = {"a": tensor([1.0, 2.0]), "b": tensor([3.0, 4.0])}
    g = mskernel.grad(weighted)(pair, 2.0)
    np.testing.assert_allclose(g["a"].numpy(), [60.0, 80.0])
    np.testing.assert_allclose(g["b"].numpy(), [2.0, 4.0])


def test_custom_rule_errors():
    @mskernel.custom_vjp
    def no_rule(x):
        return x * 2.0

    with pytest.raises(CustomRuleError, match=r"'no_rule' is differentiated, but has no rule: "
                                              r"define one with no_rule.defvjp\(fwd, bwd\)"):
        mskernel.grad(lambda x: ops.sum(no_rule(x)))(tensor([1.0]))
    assert float(ops.sum(no_rule(tensor([1.0])))) == 2.0  # undifferentiated calls just run

    @mskernel.custom_vjp
    def bad_bwd(x, y):
        return x * y

    bad_bwd.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (g * res[1],))
    with pytest.raises(CustomRuleError, match=r"bwd of custom_vjp function 'bad_bwd' must "
                                              r"return a tuple with one entry per positional "
                                              r"argument \(2\)"):
        mskernel.grad(lambda x: ops.sum(bad_bwd(x, x)))(tensor([1.0]))

    @mskernel.custom_jvp
    def bad_jvp(x):
        return x

    bad_jvp.defjvp(lambda p, t: (p[0], ops.sum(t[0])))
    with pytest.raises(RuleResultError, match=r"returned a tangent of type f64\[\] for position "
                                              r"0, which has type f64\[2\]"):
        mskernel.jvp(bad_jvp, (tensor([1.0, 2.0]),), (tensor([1.0, 1.0]),))
