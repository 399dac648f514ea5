"""MindSpore's autodiff tutorials ported with only the import renamed: the quick start's
training step (``value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)``) and
the "Automatic Differentiation" tutorial (gradients of inputs and weights, ``has_aux``,
``stop_gradient``, a network's ``trainable_params()``).  The data are synthetic; where the
tutorial calls an ``ops`` function mskernel does not have yet, it is written out."""

import numpy as np
import pytest
import torch

import mskernel
from mskernel import Parameter, Tensor, nn, ops


def _bce_with_logits(z, y):
    # ops.binary_cross_entropy_with_logits(z, y, ones_like(z), ones_like(z)), mean-reduced
    return ops.mean(ops.maximum(z, ops.zeros_like(z)) - z * y + ops.softplus(-ops.abs(z)))


@pytest.fixture
def tutorial_weights():
    rng = np.random.default_rng(0)
    w = Parameter(Tensor(rng.standard_normal((5, 3)), mskernel.float32), name="w")
    b = Parameter(Tensor(rng.standard_normal((3,)), mskernel.float32), name="b")
    return w, b


def _torch_grads(w, b, x, y):
    tw = torch.tensor(w.numpy(), requires_grad=True)
    tb = torch.tensor(b.numpy(), requires_grad=True)
    z = torch.tensor(x.numpy()) @ tw + tb
    torch.nn.functional.binary_cross_entropy_with_logits(z, torch.tensor(y.numpy())).backward()
    return tw.grad.numpy(), tb.grad.numpy(), z.detach().numpy()


def test_autodiff_tutorial(tutorial_weights):
    w, b = tutorial_weights
    x = ops.ones(5, mskernel.float32)
    y = ops.zeros(3, mskernel.float32)
    expected_w, expected_b, expected_z = _torch_grads(w, b, x, y)

    def function(x, y, w, b):
        z = ops.matmul(x, w) + b
        return _bce_with_logits(z, y)

    grads = mskernel.grad(function, (2, 3))(x, y, w, b)
    np.testing.assert_allclose(grads[0].numpy(), expected_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads[1].numpy(), expected_b, rtol=1e-5, atol=1e-6)

    def function_with_logits(x, y, w, b):
        z = ops.matmul(x, w) + b
        return _bce_with_logits(z, y), z

    grads, (z,) = mskernel.grad(function_with_logits, (2, 3), has_aux=True)(x, y, w, b)
    np.testing.assert_allclose(z.numpy(), expected_z, rtol=1e-5)
    np.testing.assert_allclose(grads[1].numpy(), expected_b, rtol=1e-5, atol=1e-6)

    def function_stop_gradient(x, y, w, b):
        z = ops.matmul(x, w) + b
        return _bce_with_logits(z, y), ops.stop_gradient(z)

    # both outputs are differentiated, but the second contributes nothing
    grads = mskernel.grad(function_stop_gradient, (2, 3))(x, y, w, b)
    np.testing.assert_allclose(grads[0].numpy(), expected_w, rtol=1e-5, atol=1e-6)

    class Network(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = w
            self.b = b

        def construct(self, x):
            return ops.matmul(x, self.w) + self.b

    model = Network()
    loss_fn = nn.BCEWithLogitsLoss()

    def forward_fn(x, y):
        return loss_fn(model(x), y)

    grad_fn = mskernel.value_and_grad(forward_fn, None, weights=model.trainable_params())
    loss, grads = grad_fn(x, y)
    assert isinstance(grads, tuple) and len(grads) == 2
    np.testing.assert_allclose(grads[0].numpy(), expected_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads[1].numpy(), expected_b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("graph_mode", [False, True], ids=["pynative", "jit"])
def test_quick_start_training_step(graph_mode):
    rng = np.random.default_rng(1)
    data = Tensor(rng.standard_normal((32, 1, 4, 4)).astype(np.float32))
    label = Tensor(rng.integers(0, 10, 32).astype(np.int32))

    model = nn.SequentialCell(nn.Flatten(), nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 10))
    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.SGD(model.trainable_params(), 1e-1)

    def forward_fn(data, label):
        logits = model(data)
        loss = loss_fn(logits, label)
        return loss, logits

    grad_fn = mskernel.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)

    def train_step(data, label):
        (loss, _), grads = grad_fn(data, label)
        optimizer(grads)
        return loss

    step = mskernel.jit(train_step) if graph_mode else train_step
    losses = [float(step(data, label).numpy()) for _ in range(60)]
    assert losses[-1] < 0.6 * losses[0], losses


def test_per_example_gradients_of_a_networks_weights():
    """Differential privacy's per-example gradients with MindSpore's API: vmap of grad with
    respect to a network's trainable parameters, against grad on each example."""
    rng = np.random.default_rng(2)
    net = nn.SequentialCell(nn.Dense(6, 8), nn.ReLU(), nn.Dense(8, 3))
    loss_fn = nn.CrossEntropyLoss()
    weights = net.trainable_params()
    x = Tensor(rng.standard_normal((5, 6)).astype(np.float32))
    y = Tensor(rng.integers(0, 3, 5).astype(np.int32))

    def forward(x, y):
        return loss_fn(net(x[None]), y[None])

    per_example = mskernel.vmap(mskernel.grad(forward, None, weights))(x, y)
    assert [g.shape for g in per_example] == [(5, *w.shape) for w in weights]
    for b in range(5):
        single = mskernel.grad(forward, None, weights)(x[b], y[b])
        for batched, one in zip(per_example, single):
            np.testing.assert_allclose(batched.numpy()[b], one.numpy(), rtol=1e-5, atol=1e-6)
