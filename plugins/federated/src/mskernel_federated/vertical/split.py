"""Split learning between two parties of vertical FL (Vepakomma et al., 2018; MindSpore
Federated's vertical training): each party runs a bottom model on its own feature columns;
the label party also holds the top model, the loss and the labels.

A step on the rows ``rows`` (positions in the order the PSI gave both parties):

1. the passive party sends its bottom model's activations ``h_p`` of those rows;
2. the label party computes its own activations, the top model on ``[h_p, h_l]`` and the
   loss, updates its bottom and top models, and sends back ``∂loss/∂h_p``;
3. the passive party back-propagates that gradient through its bottom model and updates it.

Only activations and gradients of activations cross between the parties — never features,
labels or weights.  The result equals training the joined network on the joined data.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

import numpy as np

import mskernel


def _weights(cells: Iterable[Any]) -> list[Any]:
    return [p for cell in cells for p in cell.trainable_params()]


class BottomParty:
    """A party without labels: ``model`` maps its ``features`` (rows aligned by the PSI)
    to activations; ``optimizer`` updates the model's trainable parameters."""

    def __init__(self, model: Any, optimizer: Any, features: np.ndarray) -> None:
        self.model = model
        self.optimizer = optimizer
        self.features = np.asarray(features)
        self._inputs: Optional[Any] = None

    def forward(self, rows: np.ndarray) -> np.ndarray:
        """Message 1: the activations of ``rows``."""
        self._inputs = mskernel.Tensor(self.features[rows])
        return self.model(self._inputs).asnumpy()

    def backward(self, activation_grad: np.ndarray) -> None:
        """Message 3 received: back-propagate ``∂loss/∂activations`` and update."""
        if self._inputs is None:
            raise RuntimeError("BottomParty.backward: no forward pass to back-propagate")
        weights = self.model.trainable_params()
        _, grads = mskernel.value_and_grad(self.model, argnums=None, weights=weights,
                                           sens_param=True)(
            self._inputs, mskernel.Tensor(np.asarray(activation_grad, np.float32)))
        self.optimizer(tuple(grads))
        self._inputs = None


class LabelParty:
    """The party with the labels: its bottom model, the ``top`` model over the passive
    party's activations followed by its own, the loss, and one ``optimizer`` over the
    bottom and top models' trainable parameters (in that order)."""

    def __init__(self, bottom: Any, top: Any, loss_fn: Any, optimizer: Any,
                 features: np.ndarray, labels: np.ndarray) -> None:
        self.bottom = bottom
        self.top = top
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.features = np.asarray(features)
        self.labels = np.asarray(labels)

    def step(self, rows: np.ndarray, passive_activations: np.ndarray) -> tuple[float, np.ndarray]:
        """Message 2: one step on ``rows``; returns the loss and ``∂loss/∂activations``
        for the passive party."""
        x = mskernel.Tensor(self.features[rows])
        y = mskernel.Tensor(self.labels[rows])

        def loss(h_passive: Any) -> Any:
            joined = mskernel.ops.concat([h_passive, self.bottom(x)], axis=1)
            return self.loss_fn(self.top(joined), y)

        value, (activation_grad, grads) = mskernel.value_and_grad(
            loss, argnums=0, weights=_weights([self.bottom, self.top]))(
            mskernel.Tensor(np.asarray(passive_activations, np.float32)))
        self.optimizer(tuple(grads))
        return float(value.asnumpy()), activation_grad.asnumpy()


def train_split(passive: BottomParty, label: LabelParty, batches: Iterable[np.ndarray]
                ) -> list[float]:
    """Train over ``batches`` of aligned row positions; returns each step's loss."""
    losses = []
    for rows in batches:
        loss, grad = label.step(rows, passive.forward(rows))
        passive.backward(grad)
        losses.append(loss)
    return losses
