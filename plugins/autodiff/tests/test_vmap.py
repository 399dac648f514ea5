"""``mskernel.vmap``: axes (ints, ``None``, nested, negative, ``axis_size``), control flow
with a predicate per example, composition with ``grad`` both ways and with ``jit`` both ways
(one graph, the function traced once whatever the batch size), per-example gradients of an
MLP and a CNN against ``torch.func.vmap(torch.func.grad(...))``, and the errors."""

import numpy as np
import pytest
import torch
import torch.nn.functional as tF

import mskernel
from mskernel import ops
from mskernel.frontend.jit import jit
from mskernel.frontend.parameter import Parameter
from mskernel.testing import assert_close
from mskernel_autodiff import api
from mskernel_autodiff.batching import BatchingError

F32, F64 = mskernel.float32, mskernel.float64


@pytest.fixture
def rng():
    return np.random.default_rng(11)


def tensor(a, dtype=np.float64):
    return mskernel.Tensor(np.asarray(a, dtype))


def loop(fn, *args, in_axes):
    """The oracle: ``fn`` on each example in turn, results stacked along axis 0."""
    size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    results = []
    for b in range(size):
        example = [a if ax is None else tensor(np.take(a, b, axis=ax), np.asarray(a).dtype)
                   for a, ax in zip(args, in_axes)]
        results.append(fn(*example))
    if isinstance(results[0], tuple):
        return tuple(np.stack([r[k].numpy() for r in results]) for k in range(len(results[0])))
    return np.stack([r.numpy() for r in results])


def test_namespaces_expose_vmap():
    assert mskernel.vmap is api.vmap
    assert mskernel.autodiff.vmap is api.vmap


# -- axes -------------------------------------------------------------------------------------


def test_in_axes_and_out_axes(rng):
    x, w = rng.standard_normal((3, 4)), rng.standard_normal((5, 3))
    f = lambda x, w: ops.tanh(w @ x)  # noqa: E731
    got = mskernel.vmap(f, in_axes=(1, None))(tensor(x), tensor(w))
    assert_close(got.numpy(), loop(f, x, w, in_axes=(1, None)), F64)
    got = mskernel.vmap(f, in_axes=[-1, None], out_axes=-1)(tensor(x), tensor(w))
    assert_close(got.numpy(), loop(f, x, w, in_axes=(1, None)).T, F64)


def test_nested_axes_and_several_outputs(rng):
    a, b, c = rng.standard_normal((2, 6)), rng.standard_normal((6, 3)), rng.standard_normal(3)

    def f(pair, scale):
        left, right = pair
        return {"sum": ops.sum(left * 2.0) + ops.sum(right), "vec": right * scale["s"]}

    got = mskernel.vmap(f, in_axes=((1, 0), {"s": None}), out_axes={"sum": 0, "vec": 1})(
        (tensor(a), tensor(b)), {"s": tensor(c)})
    assert_close(got["sum"].numpy(), 2 * a.sum(0) + b.sum(1), F64)
    assert_close(got["vec"].numpy(), (b * c).T, F64)


def test_unmapped_outputs_and_axis_size(rng):
    x = rng.standard_normal((4, 2))
    const, mapped = mskernel.vmap(lambda x, y: (y * 2.0, x + y), in_axes=(0, None),
                                  out_axes=(None, 0))(tensor(x), tensor([1.0, 2.0]))
    assert_close(const.numpy(), [2.0, 4.0], F64)
    assert_close(mapped.numpy(), x + [1.0, 2.0], F64)
    repeated = mskernel.vmap(lambda y: y * 3.0, in_axes=None, axis_size=3)(tensor([1.0, 2.0]))
    assert_close(repeated.numpy(), np.tile([3.0, 6.0], (3, 1)), F64)
    empty = mskernel.vmap(lambda v: ops.sum(v * v))(tensor(np.zeros((0, 3))))
    assert empty.shape == (0,)


def test_python_numbers_and_keywords_are_not_mapped(rng):
    x = rng.standard_normal((3, 2))
    got = mskernel.vmap(lambda x, k, scale=1.0: x * k * scale, in_axes=(0, None))(
        tensor(x), 2.0, scale=3.0)
    assert_close(got.numpy(), 6.0 * x, F64)


# -- control flow -----------------------------------------------------------------------------


def test_cond_with_a_predicate_per_example(rng):
    x = rng.standard_normal((6, 3))

    def f(x):
        return ops.cond(ops.sum(x) > 0, lambda v: v * 2.0, lambda v: ops.exp(v), x)

    for run in (lambda fn: fn, jit):
        got = run(mskernel.vmap(f))(tensor(x))
        assert_close(got.numpy(), loop(f, x, in_axes=(0,)), F64)


def test_while_loop_with_a_trip_count_per_example():
    limits = np.array([0.5, 3.0, 10.0, 1.5])

    def f(limit, x):  # doubles x until it passes its own limit
        return ops.while_loop(lambda v: ops.sum(v) < limit, lambda v: v * 2.0, x)

    x = tensor([0.25, 0.25])
    for run in (lambda fn: fn, jit):
        got = run(mskernel.vmap(f, in_axes=(0, None)))(tensor(limits), x)
        assert_close(got.numpy(), loop(f, limits, x, in_axes=(0, None)), F64)
    counted = mskernel.vmap(lambda n: ops.fori_loop(0, n, lambda i, v: v + i, tensor(0.0)))(
        mskernel.Tensor(np.array([0, 1, 4, 2])))
    assert_close(counted.numpy(), [0.0, 0.0, 6.0, 1.0], F64)


# -- composition ------------------------------------------------------------------------------


def test_the_function_is_traced_once_whatever_the_batch_size(rng):
    calls = []

    def f(x):
        calls.append(x.shape)
        return ops.sum(ops.sin(x) * x)

    for size in (2, 5):
        mskernel.vmap(f)(tensor(rng.standard_normal((size, 3))))
    assert calls == [(3,), (3,)]  # one example's shape: no Python loop over the batch
    graphs = [jit(mskernel.vmap(f)).lower(tensor(np.zeros((size, 3)))).graph
              for size in (2, 5)]
    assert [n.op for n in graphs[0].nodes] == [n.op for n in graphs[1].nodes]


def test_vmap_under_jit_and_jit_under_vmap_are_one_graph(rng):
    x, w = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    inner = jit(lambda x, w: ops.relu(x @ w))
    outer = jit(lambda x, w: mskernel.vmap(inner, in_axes=(0, None))(x, w))
    graph = outer.lower(tensor(x), tensor(w)).graph
    assert [n.op for n in graph.nodes if n.op in ("matmul", "relu", "While", "If")] == \
        ["matmul", "relu"]
    matmul = next(n for n in graph.nodes if n.op == "matmul")
    assert matmul.outputs[0].type.shape == (4, 2)
    expected = np.maximum(x @ w, 0)
    assert_close(outer(tensor(x), tensor(w)).numpy(), expected, F64)
    assert_close(mskernel.vmap(inner, in_axes=(0, None))(tensor(x), tensor(w)).numpy(),
                 expected, F64)


def test_nested_vmap(rng):
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))
    dots = mskernel.vmap(mskernel.vmap(lambda a, b: ops.sum(a * b), in_axes=(None, 0)),
                         in_axes=(0, None))(tensor(x), tensor(y))
    assert_close(dots.numpy(), x @ y.T, F64)


@pytest.mark.parametrize("run", [lambda fn: fn, jit], ids=["eager", "jit"])
def test_grad_of_vmap_sees_closures_and_parameters(rng, run):
    x = rng.standard_normal((5, 3))
    w = Parameter(rng.standard_normal(3), name="w")
    scale = tensor(1.5)

    def total(v):
        per_example = mskernel.vmap(lambda row: ops.sum(ops.tanh(row * w) * v) * scale)(tensor(x))
        return ops.sum(per_example)

    v = tensor(rng.standard_normal(3))
    g_v, g_w = run(mskernel.grad(total, 0, [w]))(v)
    t_v = torch.tensor(v.numpy(), requires_grad=True)
    t_w = torch.tensor(w.numpy(), requires_grad=True)
    (torch.tanh(torch.tensor(x) * t_w) * t_v).sum().mul(1.5).backward()
    assert_close(g_v.numpy(), t_v.grad.numpy(), F64)
    assert_close(g_w[0].numpy(), t_w.grad.numpy(), F64)


def test_per_example_gradients_with_respect_to_parameters(rng):
    w = Parameter(rng.standard_normal((3, 2)), name="w")
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))

    def loss(x, y):
        return ops.sum((x @ w - y) ** 2)

    per_example = mskernel.vmap(mskernel.grad(loss, None, [w]))(tensor(x), tensor(y))
    assert per_example[0].shape == (4, 3, 2)
    expected = np.stack([2 * np.outer(x[b], x[b] @ w.numpy() - y[b]) for b in range(4)])
    assert_close(per_example[0].numpy(), expected, F64)


# -- per-example gradients against torch.func -------------------------------------------------


def _torch_per_example(loss, params, x, y):
    params = tuple(torch.tensor(p) for p in params)
    grads = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(
        params, torch.tensor(x), torch.tensor(y))
    return [g.numpy() for g in grads]


def _ours_per_example(loss, params, x, y, run):
    fn = run(lambda p, x, y: mskernel.vmap(mskernel.grad(loss), in_axes=(None, 0, 0))(p, x, y))
    grads = fn(tuple(tensor(p, np.float32) for p in params), tensor(x, np.float32),
               mskernel.Tensor(y))
    return [g.numpy() for g in grads]


@pytest.mark.parametrize("run", [lambda fn: fn, jit], ids=["eager", "jit"])
def test_per_example_gradients_of_an_mlp_match_torch_func(rng, run):
    params = [rng.standard_normal((6, 16)).astype(np.float32) * 0.5,
              rng.standard_normal(16).astype(np.float32) * 0.1,
              rng.standard_normal((16, 4)).astype(np.float32) * 0.5,
              rng.standard_normal(4).astype(np.float32) * 0.1]
    x = rng.standard_normal((8, 6)).astype(np.float32)
    y = rng.integers(0, 4, 8).astype(np.int64)

    def loss(p, x, y):
        w1, b1, w2, b2 = p
        logits = ops.relu(x @ w1 + b1) @ w2 + b2
        return -ops.sum(ops.one_hot(y, 4) * ops.log_softmax(logits))

    def torch_loss(p, x, y):
        w1, b1, w2, b2 = p
        return tF.cross_entropy((torch.relu(x @ w1 + b1) @ w2 + b2)[None], y[None])

    for ours, theirs in zip(_ours_per_example(loss, params, x, y, run),
                            _torch_per_example(torch_loss, params, x, y)):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("run", [lambda fn: fn, jit], ids=["eager", "jit"])
def test_per_example_gradients_of_a_cnn_match_torch_func(rng, run):
    params = [rng.standard_normal((4, 2, 3, 3)).astype(np.float32) * 0.3,
              rng.standard_normal(4).astype(np.float32) * 0.1,
              rng.standard_normal((4 * 4 * 4, 3)).astype(np.float32) * 0.2,
              rng.standard_normal(3).astype(np.float32) * 0.1]
    x = rng.standard_normal((5, 2, 8, 8)).astype(np.float32)
    y = rng.integers(0, 3, 5).astype(np.int64)

    def loss(p, x, y):
        conv_w, conv_b, w, b = p
        h = ops.relu(ops.conv2d(ops.reshape(x, (1, 2, 8, 8)), conv_w, conv_b, padding=1))
        h = ops.reshape(ops.max_pool2d(h, 2), (1, -1))
        logits = (h @ w + b)[0]
        return -ops.sum(ops.one_hot(y, 3) * ops.log_softmax(logits))

    def torch_loss(p, x, y):
        conv_w, conv_b, w, b = p
        h = torch.relu(tF.conv2d(x[None], conv_w, conv_b, padding=1))
        h = tF.max_pool2d(h, 2).reshape(1, -1)
        return tF.cross_entropy(h @ w + b, y[None])

    for ours, theirs in zip(_ours_per_example(loss, params, x, y, run),
                            _torch_per_example(torch_loss, params, x, y)):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


# -- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize("call, message", [
    (lambda: mskernel.vmap(lambda x, y: x + y)(tensor(np.ones((2, 3))), tensor(np.ones((3, 3)))),
     r"the mapped axes have different sizes: 2 for leaf 0 \(shape \[2, 3\], axis 0\); 3 for "
     r"leaf 1"),
    (lambda: mskernel.vmap(lambda x: x, in_axes=(0, 1))(tensor([1.0])),
     r"in_axes has 2 entries, but the function got 1 positional argument"),
    (lambda: mskernel.vmap(lambda x: x, in_axes=((0, 0),))(tensor([1.0])),
     r"in_axes\[0\] has 2 entries, but the value there is a Tensor"),
    (lambda: mskernel.vmap(lambda x: x, in_axes=2)(tensor([1.0, 2.0])),
     r"in_axes maps axis 2 of argument leaf 0, which has shape \[2\]"),
    (lambda: mskernel.vmap(lambda x: x, in_axes=None)(tensor([1.0])),
     r"no argument is mapped.*axis_size="),
    (lambda: mskernel.vmap(lambda x: x, out_axes=None)(tensor([1.0, 2.0])),
     r"output 0 varies over the batch, but its out_axes entry is None"),
    (lambda: mskernel.vmap(lambda x: x, in_axes="0"),
     r"in_axes entries must be ints or None, got '0'"),
    (lambda: mskernel.vmap(lambda k: mskernel.random.normal(k, (2,)))(
        mskernel.Tensor(np.zeros((3, 2), np.uint32))),
     r"vmap cannot batch op 'random_normal': draws from a batch of keys"),
])
def test_misuse_gets_a_clear_error(call, message):
    with pytest.raises(BatchingError, match=message):
        call()
