"""LessBN: fewer batch norms, steadied by adaptive gradient clipping.

Batch normalisation costs a statistics pass over every activation, forward and backward.
``LessBN(network)`` keeps the first batch norm of the network and replaces the others by the
identity (``nn.Identity``, in place; their parameters leave the network), and
:func:`adaptive_clip` is what keeps training stable without them (Brock et al., 2021, the
normaliser-free networks' clipping): each output unit's gradient row ``g`` of a weight ``w``
is scaled to ``min(1, clip · max(‖w‖, 1e-3) / ‖g‖)``. ``fn_flag`` replaces the last dense
layer by MindSpore's ``CommonHeadLastFN`` (normalised inputs and weights times a multiplier;
the optimizer was made before, so the multiplier is a fixed scale of 16, as in cosine
classifiers, and the layer trains the dense layer's own weight and bias), and
:func:`centralize` is MindSpore's gradient centralisation (``gc_flag``): a weight gradient
loses its mean over all but the output axis.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from mskernel import ops as F
from mskernel_sdk import Parameter, Tensor
from mskernel.nn import BatchNorm1d, BatchNorm2d, BatchNorm3d, Cell, Dense, Identity

__all__ = ["CommonHeadLastFN", "LessBN", "adaptive_clip", "centralize"]

_NORMS = (BatchNorm1d, BatchNorm2d, BatchNorm3d)


class CommonHeadLastFN(Cell):
    """``multiplier · (normalize(x) @ normalize(W)ᵀ + b)`` with the rows of ``x`` and ``W``
    L2-normalised; takes over a dense layer's weight and bias (the multiplier: see the
    module's documentation)."""

    def __init__(self, dense: Dense) -> None:
        super().__init__()
        self.weight = dense.weight
        self.has_bias = dense.has_bias
        if dense.has_bias:
            self.bias = dense.bias
        self.multiplier = Parameter(np.full(1, 16.0, np.float32), name="multiplier",
                                    requires_grad=False)

    def construct(self, x: Any) -> Tensor:
        x = _normalize(x)
        y = F.matmul(x, F.transpose(_normalize(self.weight)))
        if self.has_bias:
            y = F.add(y, self.bias)
        return F.multiply(y, self.multiplier)


def _normalize(x: Any) -> Tensor:
    norm = F.sqrt(F.add(F.sum(F.square(x), axis=1, keepdims=True), 1e-12))
    return F.divide(x, norm)


class LessBN(Cell):
    """``network`` with every batch norm but the first replaced by the identity (in place),
    and with ``fn_flag`` its last dense layer by :class:`CommonHeadLastFN`."""

    def __init__(self, network: Cell, fn_flag: bool = False) -> None:
        super().__init__(auto_prefix=False)
        self.network = network
        object.__setattr__(self, "removed", _drop_batch_norms(network))
        if fn_flag:
            _last_dense_to_fn(network)

    def construct(self, *inputs: Any) -> Any:
        return self.network(*inputs)


def _children(network: Cell) -> list[tuple[Cell, str, Cell]]:
    return [(parent, name, child) for _, parent in network.cells_and_names()
            for name, child in list(parent._cells.items())]


def _drop_batch_norms(network: Cell) -> int:
    norms = [(p, n) for p, n, c in _children(network) if isinstance(c, _NORMS)]
    for parent, name in norms[1:]:
        parent.insert_child_to_cell(name, Identity())
    return max(len(norms) - 1, 0)


def _last_dense_to_fn(network: Cell) -> None:
    dense = [(p, n, c) for p, n, c in _children(network) if isinstance(c, Dense)]
    if dense:
        parent, name, layer = dense[-1]
        parent.insert_child_to_cell(name, CommonHeadLastFN(layer))


def centralize(grad: Tensor) -> Tensor:
    """The gradient less its mean over every axis but the first (weights of rank > 1)."""
    if grad.ndim < 2:
        return grad
    return F.subtract(grad, F.mean(grad, axis=tuple(range(1, grad.ndim)), keepdims=True))


def adaptive_clip(grad: Tensor, weight: Tensor, clip: float) -> Tensor:
    """Unit-wise adaptive gradient clipping: each row's gradient norm at most ``clip`` times
    its weight row's norm (at least 1e-3); vectors are one unit."""
    axes = tuple(range(1, grad.ndim)) if grad.ndim > 1 else (0,)
    g_norm = F.sqrt(F.sum(F.square(grad), axis=axes, keepdims=True))
    w_norm = F.maximum(F.sqrt(F.sum(F.square(weight), axis=axes, keepdims=True)),
                       Tensor(np.float32(1e-3)))
    scale = F.minimum(F.divide(F.multiply(w_norm, clip), F.maximum(g_norm, Tensor(
        np.float32(1e-6)))), Tensor(np.float32(1.0)))
    return F.multiply(grad, scale)
