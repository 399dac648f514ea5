"""The public API: gradients against PyTorch in both modes, every option of grad and
value_and_grad (MindSpore's grad_position, weights, has_aux, return_ids and sens_param, JAX's
argnums), vjp/jvp, Jacobians and Hessians, stop_gradient, GradOperation, the namespaces, and
the error messages."""

import warnings

import numpy as np
import pytest
import torch

import mskernel
import mskernel.hooks.host as host_module
from mskernel import jit, ops
from mskernel.hooks import plugin_host
from mskernel.passes.dce import eliminate_dead_code
from mskernel_sdk import Parameter, assert_close, op_registry
from mskernel_autodiff import api
from mskernel_autodiff.api import GradientError

MODES = {"eager": lambda fn: fn, "jit": jit}
F64 = mskernel.float64


@pytest.fixture(params=sorted(MODES))
def mode(request):
    """Run a function eagerly, or as one compiled graph under @jit."""
    return MODES[request.param]


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def tensor(a):
    return mskernel.Tensor(np.asarray(a, np.float64))


def torch_grads(fn, *arrays):
    leaves = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    fn(*leaves).backward()
    return [leaf.grad.numpy() for leaf in leaves]


# -- plugin surface ---------------------------------------------------------------------------


def test_namespaces_expose_the_api():
    for name in ("grad", "value_and_grad", "get_grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
                 "stop_gradient", "custom_vjp", "custom_jvp", "GradOperation"):
        assert getattr(mskernel, name) is getattr(api, name), name
    assert mskernel.autodiff is api
    (record,) = [r for r in plugin_host().plugin_records() if r.name == "autodiff"]
    assert record.status == "ok", record.reason
    assert record.distribution == "mskernel-autodiff"


def test_without_the_plugin_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setattr(host_module, "discover", lambda: [])
    with host_module.fresh_host():
        with pytest.raises(AttributeError, match=r"pip install mskernel-autodiff"):
            mskernel.grad  # noqa: B018


# -- gradients --------------------------------------------------------------------------------


def test_grad_matches_torch_with_broadcasting(mode, rng):
    x, w, b = rng.standard_normal((4, 3)), rng.standard_normal((3, 2)), rng.standard_normal(2)

    def loss(x, w, b):
        return ops.sum(ops.tanh(x @ w + b) * ops.exp(-0.1 * ops.sum(x)))

    grads = mode(mskernel.grad(loss, argnums=(0, 1, 2)))(tensor(x), tensor(w), tensor(b))
    expected = torch_grads(
        lambda x, w, b: (torch.tanh(x @ w + b) * torch.exp(-0.1 * x.sum())).sum(), x, w, b)
    for got, want, arr in zip(grads, expected, (x, w, b)):
        assert got.shape == arr.shape
        assert_close(got.numpy(), want, F64)


def test_broadcast_operands_get_gradients_of_their_own_shape(mode):
    a, b, c = tensor(np.arange(3.0).reshape(3, 1)), tensor([1.0, 2.0, 4.0, 8.0]), tensor(0.5)
    ga, gb, gc = mode(mskernel.grad(lambda a, b, c: ops.sum(a * b + c), argnums=(0, 1, 2)))(
        a, b, c)
    assert_close(ga.numpy(), np.full((3, 1), 15.0), F64)
    assert_close(gb.numpy(), np.full(4, 3.0), F64)
    assert_close(gc.numpy(), np.array(12.0), F64)


def test_float32_gradients_stay_float32():
    x = mskernel.Tensor(np.array([0.5, -1.0], np.float32))
    g = mskernel.grad(lambda x: ops.sum(ops.sin(x) * x))(x)
    assert g.dtype is mskernel.float32
    assert_close(g.numpy(), np.sin(x.numpy()) + x.numpy() * np.cos(x.numpy()), mskernel.float32)


def test_argnums_tuples_and_nested_arguments():
    params = {"w": tensor([[1.0, 2.0], [3.0, 4.0]]), "b": tensor([0.5, -0.5])}
    x, scale = tensor([1.0, -1.0]), tensor(2.0)

    def loss(params, x, scale):
        return ops.sum((params["w"] @ x + params["b"]) * scale)

    g_params, g_scale = mskernel.grad(loss, argnums=(0, 2))(params, x, scale)
    assert sorted(g_params) == ["b", "w"]
    assert_close(g_params["w"].numpy(), 2.0 * np.array([[1.0, -1.0], [1.0, -1.0]]), F64)
    assert_close(g_params["b"].numpy(), np.array([2.0, 2.0]), F64)
    assert_close(g_scale.numpy(), np.array(-2.0), F64)
    g_x = mskernel.grad(loss, argnums=-2)(params, x, scale)
    assert_close(g_x.numpy(), 2.0 * np.array([4.0, 6.0]), F64)


def test_python_numbers_are_differentiable_arguments():
    assert_close(mskernel.grad(lambda x: x * x * x)(2.0).numpy(), np.float32(12.0),
                 mskernel.float32)


def test_has_aux(mode):
    def loss(x):
        y = ops.sin(x)
        return ops.sum(y * y), y

    x = tensor([0.3, 1.1])
    g, (aux,) = mode(mskernel.grad(loss, has_aux=True))(x)
    (value, aux2), g2 = mode(mskernel.value_and_grad(loss, has_aux=True))(x)
    expected = 2 * np.sin(x.numpy()) * np.cos(x.numpy())
    for got in (g, g2):
        assert_close(got.numpy(), expected, F64)
    for a in (aux, aux2):
        assert_close(a.numpy(), np.sin(x.numpy()), F64)
    assert_close(value.numpy(), np.sum(np.sin(x.numpy()) ** 2), F64)


# -- MindSpore's contract ---------------------------------------------------------------------


def test_grad_position_and_weights_positionally_as_mindspore_documents(mode):
    """mindspore.grad's examples: inputs by position, has_aux positionally, and the tutorial's
    ``value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)``."""
    x, y, z = tensor([1.0, 2.0]), tensor([-2.0, 3.0]), tensor([0.0, 3.0])
    gy, gz = mode(mskernel.grad(lambda x, y, z: x * y * z, grad_position=(1, 2)))(x, y, z)
    assert_close(gy.numpy(), [0.0, 6.0], F64)  # a vector output: the gradient of its sum
    assert_close(gz.numpy(), [-2.0, 6.0], F64)

    def fn(x, y, z):
        return x * ops.exp(y) * ops.pow(z, 2), z

    x, y, z = tensor([3.0, 3.0]), tensor([0.0, 0.0]), tensor([5.0, 5.0])
    (gy, gz), aux = mode(mskernel.grad(fn, (1, 2), None, True))(x, y, z)
    assert isinstance(aux, tuple) and len(aux) == 1
    assert_close(aux[0].numpy(), [5.0, 5.0], F64)
    assert_close(gy.numpy(), [75.0, 75.0], F64)
    assert_close(gz.numpy(), [30.0, 30.0], F64)

    w = Parameter(np.array([0.5, -1.0]), name="w")
    b = Parameter(np.array(0.25), name="b")

    def forward_fn(data, label):
        logits = ops.sum(data * w) + b
        return (logits - label) ** 2, logits

    grad_fn = mskernel.value_and_grad(forward_fn, None, (w, b), has_aux=True)
    (loss, logits), grads = mode(grad_fn)(tensor([1.0, 2.0]), tensor(1.0))
    residual = 0.5 - 2.0 + 0.25 - 1.0
    assert_close(loss.numpy(), residual ** 2, F64)
    assert_close(logits.numpy(), residual + 1.0, F64)
    assert isinstance(grads, tuple) and len(grads) == 2
    assert_close(grads[0].numpy(), 2 * residual * np.array([1.0, 2.0]), F64)
    assert_close(grads[1].numpy(), 2 * residual, F64)


def test_several_outputs_are_differentiated_as_their_sum_without_has_aux(mode):
    def fn(x):
        return ops.sin(x), x * x, ops.argmax(x)  # the integer output carries no gradient

    x = tensor([0.2, -0.7])
    value, g = mode(mskernel.value_and_grad(fn))(x)
    assert len(value) == 3
    assert_close(g.numpy(), np.cos(x.numpy()) + 2 * x.numpy(), F64)
    g_first, aux = mode(mskernel.grad(fn, has_aux=True))(x)
    assert_close(g_first.numpy(), np.cos(x.numpy()), F64)
    assert len(aux) == 2
    assert_close(aux[0].numpy(), x.numpy() ** 2, F64)


def test_return_ids_pairs_gradients_with_positions_and_parameter_names(mode):
    w = Parameter(np.array([2.0, 3.0]), name="w")
    b = Parameter(np.array([1.0]), name="b")

    def net(x, y):
        return ops.sum(x * w * y + b)

    x, y = tensor([1.0, -1.0]), tensor([4.0, 5.0])
    both = mskernel.grad(net, (0, 1), [w, b], return_ids=True)(x, y)
    (inputs, params) = both
    assert [i for i, _ in inputs] == [0, 1] and [n for n, _ in params] == ["w", "b"]
    single = mskernel.grad(net, 1, return_ids=True)(x, y)
    assert single[0] == 1
    assert_close(single[1].numpy(), [2.0, -3.0], F64)
    _, by_id = mskernel.value_and_grad(net, 0, w, return_ids=True)(x, y)
    assert by_id[1][0] == "w"
    for ids, identifier, expected in ((both, 0, [8.0, 15.0]), (both, w, [4.0, -5.0]),
                                      (both, b, [2.0]), (by_id, 0, [8.0, 15.0])):
        assert_close(mskernel.get_grad(ids, identifier).numpy(), expected, F64)
    # names are Python strings: a jitted function looks its gradients up and returns them
    picked = mode(lambda x, y: mskernel.get_grad(
        mskernel.grad(net, (0, 1), [w, b], return_ids=True)(x, y), w))(x, y)
    assert_close(picked.numpy(), [4.0, -5.0], F64)


def test_argnums_stays_an_alias_of_grad_position(mode):
    f = lambda x, y: ops.sum(x * y)  # noqa: E731
    x, y = tensor([1.0, 2.0]), tensor([3.0, 4.0])
    gx, gy = mode(mskernel.grad(f, argnums=(0, 1)))(x, y)
    assert_close(gy.numpy(), x.numpy(), F64)
    assert_close(mode(mskernel.grad(f, argnums=1))(x, y).numpy(), x.numpy(), F64)


def test_weights_are_tracked_by_identity(mode):
    w = Parameter(np.array([[1.0, -2.0], [0.5, 3.0]]), name="w")
    b = Parameter(np.array([0.1, 0.2]), name="b")

    def loss(x):
        return ops.sum(ops.tanh(x @ w + b))

    x = tensor([0.7, -0.4])
    g_weights = mode(mskernel.grad(loss, argnums=None, weights=[w, b]))(x)
    g_x, (g_w, g_b) = mode(mskernel.grad(loss, weights=(w, b)))(x)
    by_name = mode(mskernel.grad(loss, argnums=None, weights={"w": w, "b": b}))(x)
    expected = torch_grads(lambda x, w, b: torch.tanh(x @ w + b).sum(),
                           x.numpy(), w.numpy(), b.numpy())
    assert isinstance(g_weights, tuple)  # MindSpore's layout for a list of weights
    for got in (g_weights[0], g_w, by_name["w"]):
        assert_close(got.numpy(), expected[1], F64)
    for got in (g_weights[1], g_b, by_name["b"]):
        assert_close(got.numpy(), expected[2], F64)
    assert_close(g_x.numpy(), expected[0], F64)


def test_training_step_assigning_parameters(mode, rng):
    w = Parameter(rng.standard_normal(3), name="w")
    x, y = tensor(rng.standard_normal((8, 3))), tensor(rng.standard_normal(8))

    def loss():
        return ops.mean((x @ w - y) ** 2)

    def step():
        value, (g,) = mskernel.value_and_grad(loss, None, [w])()
        w.assign_value(w - 0.1 * g)
        return value

    run = mode(step)
    before = w.numpy()
    losses = [float(run()) for _ in range(4)]
    expected = before - 0.1 * 2 * x.numpy().T @ (x.numpy() @ before - y.numpy()) / 8
    assert all(b < a for a, b in zip(losses, losses[1:]))
    assert losses[0] == pytest.approx(np.mean((x.numpy() @ before - y.numpy()) ** 2))
    run_once = mode(step)
    w.assign_value(tensor(before))
    run_once()
    assert_close(w.numpy(), expected, F64)


def test_unused_inputs_get_zero_gradients(mode):
    g = mode(mskernel.grad(lambda x, y: ops.sum(y * 2.0), argnums=(0, 1)))(
        tensor([1.0, 2.0]), tensor([3.0]))
    assert_close(g[0].numpy(), np.zeros(2), F64)
    assert_close(g[1].numpy(), np.array([2.0]), F64)


def test_sens_param_passes_the_output_cotangent(mode, rng):
    x, sens = rng.standard_normal(3), rng.standard_normal((2, 3))

    def f(x):
        return ops.stack([ops.sin(x), x * x])

    g = mode(mskernel.grad(f, sens_param=True))(tensor(x), tensor(sens))
    assert_close(g.numpy(), sens[0] * np.cos(x) + sens[1] * 2 * x, F64)


def test_python_control_flow_on_concrete_values():
    def f(x):
        total = ops.sum(x * 0.0)
        while float(ops.sum(x)) < 10.0:  # runs while the concrete value says so
            x = x * 2.0
            total = total + ops.sum(ops.sin(x))
        if float(total) > 0:
            return total * total
        return -total

    x = tensor([0.6, 0.9])  # doubled 3 times: sums 3, 6, 12
    g = mskernel.grad(f)(x)
    xs = [x.numpy() * 2 ** k for k in (1, 2, 3)]
    total = sum(np.sum(np.sin(v)) for v in xs)
    d_total = sum(2 ** k * np.cos(v) for k, v in zip((1, 2, 3), xs))
    expected = (2 * total if total > 0 else -1.0) * d_total
    assert_close(g.numpy(), expected, F64)


def test_parameter_updates_make_new_tensors(mode, rng):
    w0, x, y = rng.standard_normal(3), rng.standard_normal((8, 3)), rng.standard_normal(8)

    def step(w, x, y):
        loss, g = mskernel.value_and_grad(lambda w: ops.mean((x @ w - y) ** 2))(w)
        return loss, w - 0.1 * g

    w = first = tensor(w0)
    losses = []
    for _ in range(5):
        loss, w = mode(step)(w, tensor(x), tensor(y))
        losses.append(float(loss))
    assert_close(first.numpy(), w0, F64)  # the starting point was not touched
    assert all(b < a for a, b in zip(losses, losses[1:]))


# -- vjp, jvp, Jacobians, Hessians ------------------------------------------------------------


def test_vjp_may_be_called_again_and_leaves_integers_alone():
    x, n = tensor([0.2, 0.4]), mskernel.Tensor(np.array([2, 3]))
    out, pullback = mskernel.vjp(lambda x, n: ops.sin(x) * ops.astype(n, F64), x, n)
    for ct in ([1.0, 0.0], [2.0, -1.0]):
        g_x, g_n = pullback(tensor(ct))
        assert g_n is None
        assert_close(g_x.numpy(), np.array(ct) * np.cos(x.numpy()) * [2, 3], F64)
    _, pullback, aux = mskernel.vjp(lambda x: (x * 3.0, x), x, has_aux=True)
    assert_close(pullback(tensor([1.0, 1.0]))[0].numpy(), np.full(2, 3.0), F64)
    assert aux is not None


def test_jvp_matches_torch(mode, rng):
    x, v = rng.standard_normal(4), rng.standard_normal(4)

    def f(x):
        return ops.exp(ops.sin(x)) * ops.sum(x * x)

    out, tangent = mode(lambda x, v: mskernel.jvp(f, (x,), (v,)))(tensor(x), tensor(v))
    want_out, want_tangent = torch.autograd.functional.jvp(
        lambda x: torch.exp(torch.sin(x)) * (x * x).sum(), torch.tensor(x), torch.tensor(v))
    assert_close(out.numpy(), want_out.numpy(), F64)
    assert_close(tangent.numpy(), want_tangent.numpy(), F64)


@pytest.mark.parametrize("jacobian", ["jacrev", "jacfwd"])
def test_jacobians_match_torch(jacobian, rng):
    x, y = rng.standard_normal(3), rng.standard_normal((2, 3))

    def f(x, y):
        return ops.tanh(y @ x), ops.sum(y * x, axis=0)

    jac = getattr(mskernel, jacobian)(f, argnums=(0, 1))(tensor(x), tensor(y))
    expected = torch.autograd.functional.jacobian(
        lambda x, y: (torch.tanh(y @ x), (y * x).sum(0)), (torch.tensor(x), torch.tensor(y)))
    for k in range(2):
        for a in range(2):
            assert jac[k][a].shape == tuple(expected[k][a].shape)
            assert_close(jac[k][a].numpy(), expected[k][a].numpy(), F64)


def test_hessian_matches_torch(mode, rng):
    x = rng.standard_normal(3)
    h = mode(mskernel.hessian(lambda x: ops.sum(ops.exp(x) * ops.sin(x[::-1]))))(tensor(x))
    expected = torch.autograd.functional.hessian(
        lambda x: (torch.exp(x) * torch.sin(x.flip(0))).sum(), torch.tensor(x))
    assert_close(h.numpy(), expected.numpy(), F64)


# -- stop_gradient and GradOperation ----------------------------------------------------------


def test_stop_gradient_in_both_modes(mode):
    x = tensor([0.5, -2.0])
    g = mode(mskernel.grad(lambda x: ops.sum(mskernel.stop_gradient(x) * x)))(x)
    assert_close(g.numpy(), x.numpy(), F64)
    _, tangent = mode(lambda x: mskernel.jvp(lambda x: mskernel.stop_gradient(x) * x,
                                             (x,), (ops.ones_like(x),)))(x)
    assert_close(tangent.numpy(), x.numpy(), F64)
    assert mskernel.stop_gradient(x) is x  # outside any transformation there is nothing to stop


def test_grad_operation():
    w = Parameter(np.array([2.0, 3.0]), name="w")

    def net(x, y):
        return ops.sum(x * w * y)

    x, y = tensor([1.0, -1.0]), tensor([4.0, 5.0])
    first = mskernel.GradOperation()(net)(x, y)
    every = mskernel.GradOperation(get_all=True)(net)(x, y)
    by_list = mskernel.GradOperation(get_by_list=True)(net, [w])(x, y)
    both = mskernel.GradOperation(get_all=True, get_by_list=True)(net, [w])(x, y)
    sens = mskernel.GradOperation(sens_param=True)(net)(x, y, tensor(3.0))
    by_keyword = mskernel.GradOperation(sens_param=True)(net)(x, y, sens=tensor(3.0))
    assert_close(first.numpy(), [8.0, 15.0], F64)
    assert_close(every[1].numpy(), [2.0, -3.0], F64)
    assert_close(by_list[0].numpy(), [4.0, -5.0], F64)
    assert_close(both[0][0].numpy(), [8.0, 15.0], F64)
    assert_close(both[1][0].numpy(), [4.0, -5.0], F64)
    assert_close(sens.numpy(), [24.0, 45.0], F64)
    assert_close(by_keyword.numpy(), [24.0, 45.0], F64)
    assert isinstance(by_list, tuple) and isinstance(every, tuple)


def test_mindspore_ops_names():
    for name in ("stop_gradient", "depend", "GradOperation"):
        assert getattr(ops, name) is getattr(api, name), name


def test_depend_orders_an_expression_that_nothing_reads():
    w = Parameter(np.array([1.0, 2.0]), name="w")

    @jit
    def step(x):
        w.assign_value(w * 2.0)
        y = ops.depend(x * 3.0, ops.exp(x))
        ops.depend(y, ops.log(x))  # the result is dropped: the node and log(x) stay
        return y

    x = tensor([1.0, 4.0])
    traced = step.lower(x).graph
    assert eliminate_dead_code(traced, op_registry()) is traced  # nothing there is dead
    graph = step.lower(x).optimized_graph
    by_op = {node.op: node for node in graph.nodes}
    assert [n.op for n in graph.nodes if n.op == "autodiff.depend"] == ["autodiff.depend"] * 2
    assert "exp" in by_op and "log" in by_op
    store = by_op["ref_store"]
    first, second = [n for n in graph.nodes if n.op == "autodiff.depend"]
    assert first.inputs[-1] is store.outputs[-1]  # after the parameter update
    assert second.inputs[-1] is first.outputs[-1]
    assert graph.outputs[-1] is second.outputs[-1]
    assert_close(step(x).numpy(), [3.0, 12.0], F64)
    assert_close(w.numpy(), [2.0, 4.0], F64)  # lower() traces without running


def test_depend_runs_compiled_on_the_preferred_backend():
    """A backend that does not claim depend runs its decomposition: no fallback."""
    @jit
    def step(x):
        return ops.depend(x * 3.0, ops.exp(x)) + 1.0

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback to the reference backend warns
        assert_close(step(tensor([1.0, 4.0])).numpy(), [4.0, 13.0], F64)


def test_depend_passes_derivatives_to_its_value_only(mode):
    x = tensor([0.5, 2.0])
    g = mode(mskernel.grad(lambda x: ops.sum(ops.depend(x * x, ops.exp(x)))))(x)
    assert_close(g.numpy(), 2 * x.numpy(), F64)
    _, tangent = mode(lambda x: mskernel.jvp(lambda x: ops.depend(x * x, ops.sin(x)), (x,),
                                             (ops.ones_like(x),)))(x)
    assert_close(tangent.numpy(), 2 * x.numpy(), F64)
    assert ops.depend(x, ops.exp(x)) is x  # eagerly the expression has already run


def test_depend_is_an_effect_a_branch_cannot_have_yet():
    from mskernel.errors import MskernelError
    from mskernel.frontend.dispatch import apply

    @jit
    def branchy(x):
        return ops.cond(ops.sum(x) > 0, lambda x: ops.depend(x, ops.exp(x)), lambda x: x, x)

    with pytest.raises(MskernelError, match=r"op 'autodiff.depend' at .*test_api.py:\d+ has side "
                                            r"effects, which a branch, loop body or "
                                            r"vmapped function cannot have"):
        branchy(tensor([1.0]))
    # eagerly an effect runs at once, in program order: depend returns its value
    assert apply("autodiff.depend", tensor([1.0]), tensor([2.0])).asnumpy().tolist() == [1.0]


# -- errors -----------------------------------------------------------------------------------


def test_grad_needs_a_real_floating_point_output():
    with pytest.raises(GradientError, match=r"real floating-point outputs, got i64\[\]"):
        mskernel.grad(lambda x: ops.argmax(x))(tensor([1.0, 2.0]))
    with pytest.raises(GradientError, match=r"real floating-point outputs, got c64\[2\].*"
                                            r"sens_param"):
        mskernel.grad(lambda x: ops.astype(x, mskernel.complex64))(mskernel.Tensor([1.0, 2.0]))


def test_grad_refuses_integer_inputs_like_jax():
    with pytest.raises(GradientError, match=r"argument 1 is a i64\[2\] tensor.*floating-point"
                                            r".*leave it out of argnums"):
        mskernel.grad(lambda x, n: ops.sum(x), argnums=(0, 1))(tensor([1.0, 2.0]),
                                                              mskernel.Tensor([1, 2]))
    with pytest.raises(GradientError, match=r"weights entry 0 is a i64\[1\]"):
        mskernel.grad(lambda x: ops.sum(x), weights=[mskernel.Tensor([1])])(tensor([1.0]))


@pytest.mark.parametrize("call, message", [
    (lambda: mskernel.grad(lambda x: ops.sum(x), argnums=3)(tensor([1.0])),
     r"argnums 3 does not name a positional argument \(the function got 1\)"),
    (lambda: mskernel.grad(lambda x, y: ops.sum(x), argnums=(0, -2))(tensor(1.0), tensor(2.0)),
     r"argnums \(0, -2\) names an argument twice"),
    (lambda: mskernel.grad(lambda x: ops.sum(x), has_aux=True)(tensor([1.0])),
     r"has_aux=True the function must return more than one output.*got a Tensor"),
    (lambda: mskernel.grad(lambda x: (ops.sum(x),), has_aux=True)(tensor([1.0])),
     r"has_aux=True the function must return more than one output.*got 1 output"),
    (lambda: mskernel.grad(lambda x: ops.sum(x), 1, argnums=0),
     r"argnums= is another name for grad_position; pass only one"),
    (lambda: mskernel.grad(lambda x: ops.sum(x), has_aux=1),
     r"has_aux must be a bool, got int"),
    (lambda: mskernel.GradOperation(get_all=1),
     r"GradOperation: get_all must be a bool, got int"),
    (lambda: mskernel.get_grad(((0, tensor(1.0)),), 2),
     r"no gradient paired with 2; pass the result of grad or value_and_grad with "
     r"return_ids=True"),
    (lambda: mskernel.grad(lambda x: x, sens_param=True)(tensor([1.0]), tensor([1.0, 2.0])),
     r"sens leaf 0 has type f64\[2\], but it must have its primal's type f64\[1\]"),
    (lambda: mskernel.jvp(lambda x: x, (tensor([1.0]),), (mskernel.Tensor([1.0], "float32"),)),
     r"tangent 0 leaf 0 has type f32\[1\], but it must have its primal's type f64\[1\]"),
    (lambda: mskernel.vjp(lambda x: (x, x), tensor([1.0]))[1](tensor([1.0])),
     r"cotangent has structure \*, but it must match \(\*, \*\)"),
    (lambda: mskernel.grad(lambda x: ops.sum(x), argnums=None)(tensor([1.0])),
     r"grad_position=None needs weights="),
])
def test_misuse_gets_a_clear_error(call, message):
    with pytest.raises(GradientError, match=message):
        call()


def test_grad_of_a_jitted_function_sees_its_ops():
    import mskernel as ms

    f = ms.jit(lambda x: ms.ops.sum(x * x))
    x = ms.Tensor(np.array([1.0, 2.0, 3.0], np.float32))
    f(x)  # compiled and cached first: grad must not reuse the compiled graph blindly
    np.testing.assert_allclose(ms.grad(f)(x).numpy(), [2.0, 4.0, 6.0])
