"""The check both operator-parallel examples end with: train the same network in this
process alone and compare with what the ranks computed."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

import mskernel
from mskernel import Parameter, Tensor, communication


def train_and_compare(trainer: Any, loss_fn: Callable[..., Any], params: Sequence[Parameter],
                      batches: Sequence[tuple[np.ndarray, np.ndarray]],
                      learning_rate: float) -> None:
    """Train with ``trainer`` (a ``ShardedSGD``) on ``batches``, then with plain SGD in this
    process from the same initial ``params``; fail unless losses and parameters agree to
    float32 tolerance."""
    initial = [p.numpy().copy() for p in params]
    losses = [trainer.step(x, y) for x, y in batches]
    sharded = dict(zip(map(id, trainer.trained), trainer.parameters()))
    for p, value in zip(params, initial):
        p.set_data(Tensor(value))
    step = mskernel.value_and_grad(loss_fn, grad_position=None, weights=list(params))
    alone = []
    for x, y in batches:
        loss, grads = step(x, y)
        for p, g in zip(params, grads):
            p.set_data(Tensor(p.numpy() - learning_rate * g.numpy()))
        alone.append(float(loss.numpy()))
    np.testing.assert_allclose(losses, alone, rtol=1e-5)
    worst = max(float(np.abs(sharded[id(p)] - p.numpy()).max()) for p in params)
    assert worst < 1e-5, worst
    if communication.get_rank() == 0:
        print(f"losses {np.round(losses, 5).tolist()}")
        print(f"matches one process: max parameter difference {worst:.2e}")
