"""Loss cells (MindSpore's ``nn`` losses; the numbers match ``torch.nn.functional``):
``SoftmaxCrossEntropyWithLogits``, ``CrossEntropyLoss``, ``NLLLoss``, ``MSELoss``, ``L1Loss``
and ``BCEWithLogitsLoss``.

Every loss is a :class:`~mskernel_nn.cell.Cell` called as ``loss(logits, labels)`` and takes
``reduction``: ``"mean"`` (the default), ``"sum"`` or ``"none"`` (one loss per element).  Each
calls its function of :mod:`mskernel_nn.functional.losses` (``mskernel.ops.cross_entropy`` …),
which says how it computes.
"""

from __future__ import annotations

from typing import Any

from mskernel import ops as F
from mskernel_sdk import Tensor

from .cell import Cell
from .functional.losses import (
    REDUCTIONS, check_index_labels, check_smoothing, class_weight, cross_entropy, l1_loss,
    mse_loss, nll_loss, soft_loss,
)

__all__ = [
    "BCEWithLogitsLoss", "CrossEntropyLoss", "L1Loss", "LossBase", "MSELoss", "NLLLoss",
    "SoftmaxCrossEntropyWithLogits",
]

class LossBase(Cell):
    """Base of the losses: holds ``reduction`` and applies it (:meth:`get_loss`)."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        if reduction not in REDUCTIONS:
            raise ValueError(f"{type(self).__name__}: reduction must be one of "
                             f"{', '.join(REDUCTIONS)}, got {reduction!r}")
        self.reduction = reduction

    def get_loss(self, x: Tensor, weights: Any = 1.0) -> Tensor:
        """``x * weights`` reduced as ``reduction`` says."""
        if not (isinstance(weights, float) and weights == 1.0):
            x = F.multiply(x, weights)
        if self.reduction == "mean":
            return F.mean(x)
        if self.reduction == "sum":
            return F.sum(x)
        return x

    def extend_repr(self) -> str:
        return f"reduction={self.reduction}"


class _ClassLoss(LossBase):
    """The options class-index losses share: ``weight``, ``ignore_index``."""

    def __init__(self, weight: Any, ignore_index: int, reduction: str) -> None:
        super().__init__(reduction)
        self.weight = class_weight(weight, type(self).__name__)
        self.ignore_index = int(ignore_index)


class NLLLoss(_ClassLoss):
    """The negative log-likelihood of class-index labels, given log-probabilities
    (``torch.nn.functional.nll_loss``)."""

    def __init__(self, weight: Any = None, ignore_index: int = -100,
                 reduction: str = "mean") -> None:
        super().__init__(weight, ignore_index, reduction)

    def construct(self, logits: Any, labels: Any) -> Tensor:
        return nll_loss(logits, labels, self.weight, self.ignore_index, self.reduction)


class CrossEntropyLoss(_ClassLoss):
    """Softmax cross-entropy of unnormalised scores (``torch.nn.functional.cross_entropy``):
    integer labels are class indices (``weight``, ``ignore_index`` apply), float labels are
    class probabilities of the scores' shape.  ``label_smoothing`` mixes the target with the
    uniform distribution."""

    def __init__(self, weight: Any = None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(weight, ignore_index, reduction)
        self.label_smoothing = check_smoothing(label_smoothing, "CrossEntropyLoss")

    def construct(self, logits: Any, labels: Any) -> Tensor:
        return cross_entropy(logits, labels, self.weight, self.ignore_index, self.reduction,
                             self.label_smoothing)


class SoftmaxCrossEntropyWithLogits(LossBase):
    """Softmax cross-entropy of ``logits [N, C]`` (MindSpore's defaults: ``sparse=False``
    takes one-hot or probability labels ``[N, C]``, ``sparse=True`` class indices ``[N]``;
    ``reduction="none"``).  ``label_smoothing`` mixes the labels with the uniform
    distribution."""

    def __init__(self, sparse: bool = False, reduction: str = "none",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(reduction)
        self.sparse = bool(sparse)
        self.label_smoothing = check_smoothing(label_smoothing,
                                               "SoftmaxCrossEntropyWithLogits")

    def construct(self, logits: Any, labels: Any) -> Tensor:
        log_probs = F.log_softmax(F.asarray(logits), axis=-1)
        labels = F.asarray(labels)
        if self.sparse:
            check_index_labels(log_probs, labels, "SoftmaxCrossEntropyWithLogits(sparse=True)")
            labels = F.one_hot(labels, log_probs.shape[-1], dtype=log_probs.dtype)
        return self.get_loss(soft_loss(log_probs, labels, None, self.label_smoothing))

    def extend_repr(self) -> str:
        return f"sparse={self.sparse}, reduction={self.reduction}"


class MSELoss(LossBase):
    """The squared difference of ``logits`` and ``labels`` (broadcast together)."""

    def construct(self, logits: Any, labels: Any) -> Tensor:
        return mse_loss(logits, labels, self.reduction)


class L1Loss(LossBase):
    """The absolute difference of ``logits`` and ``labels`` (broadcast together)."""

    def construct(self, logits: Any, labels: Any) -> Tensor:
        return l1_loss(logits, labels, self.reduction)


class BCEWithLogitsLoss(LossBase):
    """Binary cross-entropy of the sigmoid of ``logits`` against ``labels`` in [0, 1], computed
    stably from the logits (``torch.nn.functional.binary_cross_entropy_with_logits``).
    ``weight`` rescales each element's loss, ``pos_weight`` (one per class, the last axis)
    the positive term."""

    def __init__(self, reduction: str = "mean", weight: Any = None,
                 pos_weight: Any = None) -> None:
        super().__init__(reduction)
        self.weight = None if weight is None else F.asarray(weight)
        self.pos_weight = None if pos_weight is None else F.asarray(pos_weight)

    def construct(self, logits: Any, labels: Any) -> Tensor:
        return F.binary_cross_entropy_with_logits(logits, labels, self.weight, self.pos_weight,
                                                  self.reduction)
