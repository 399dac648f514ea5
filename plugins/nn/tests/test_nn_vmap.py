"""Per-example gradients of a network's weights: ``vmap`` of ``grad`` with respect to its
trainable parameters (what differential privacy needs), with MindSpore's API.  MindSpore's
autodiff tutorials themselves run as ports in ``tests/mindspore``."""

import numpy as np

import mskernel
from mskernel import Tensor, nn


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
