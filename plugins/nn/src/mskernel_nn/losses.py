"""Loss cells (MindSpore's ``nn`` losses; the numbers match ``torch.nn.functional``):
``SoftmaxCrossEntropyWithLogits``, ``CrossEntropyLoss``, ``NLLLoss``, ``MSELoss``, ``L1Loss``
and ``BCEWithLogitsLoss``.

Every loss is a :class:`~mskernel_nn.cell.Cell` called as ``loss(logits, labels)`` and takes
``reduction``: ``"mean"`` (the default), ``"sum"`` or ``"none"`` (one loss per element).  The
losses are compositions of core ops, so they run eagerly, under ``@jit`` and under ``grad``
alike.  Class-index losses take the class axis at position 1 — ``[N, C]`` or
``[N, C, d1, ...]`` scores with ``[N]`` / ``[N, d1, ...]`` integer labels — as PyTorch does.
"""

from __future__ import annotations

from typing import Any, Optional

from mskernel import ops as F
from mskernel_sdk import Tensor

from .cell import Cell

__all__ = [
    "BCEWithLogitsLoss", "CrossEntropyLoss", "L1Loss", "LossBase", "MSELoss", "NLLLoss",
    "SoftmaxCrossEntropyWithLogits",
]

_REDUCTIONS = ("mean", "sum", "none")


class LossBase(Cell):
    """Base of the losses: holds ``reduction`` and applies it (:meth:`get_loss`)."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        if reduction not in _REDUCTIONS:
            raise ValueError(f"{type(self).__name__}: reduction must be one of "
                             f"{', '.join(_REDUCTIONS)}, got {reduction!r}")
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


def _check_smoothing(label_smoothing: float, who: str) -> float:
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{who}: label_smoothing must lie in [0, 1], got {label_smoothing}")
    return float(label_smoothing)


def _class_last(x: Tensor) -> Tensor:
    """Scores ``[N, C, d1, ...]`` with the class axis moved last (``[N, d1, ..., C]``)."""
    if x.ndim < 1:
        raise ValueError("class scores need a class axis: shape [C], [N, C] or [N, C, d1, ...]")
    return x if x.ndim <= 2 else F.moveaxis(x, 1, -1)


def _check_index_labels(scores: Tensor, labels: Tensor, who: str) -> None:
    expected = scores.shape[:-1]
    if not (labels.dtype.is_integer or labels.dtype.is_bool) or labels.shape != expected:
        raise ValueError(f"{who}: class-index labels must be integers of shape "
                         f"{list(expected)} for scores of shape {list(scores.shape)}, got "
                         f"{labels.dtype.name} labels of shape {list(labels.shape)}")


def _indexed_loss(log_probs: Tensor, labels: Tensor, weight: Optional[Tensor],
                  ignore_index: int, smoothing: float, reduction: str) -> Tensor:
    """The negative log-likelihood of class-index ``labels`` under ``log_probs`` (class axis
    last), optionally smoothed towards the uniform distribution — PyTorch's ``nll_loss`` and
    ``cross_entropy``, ``weight`` and ``ignore_index`` included.  ``"mean"`` divides by the
    summed weight of the labels that are not ignored."""
    classes = log_probs.shape[-1]
    if labels.dtype.kind != "i":  # unsigned or bool labels: signed, so -1 can mark ignored ones
        labels = F.astype(labels, "int64")
    valid = F.not_equal(labels, ignore_index)
    onehot = F.one_hot(F.where(valid, labels, -1), classes, dtype=log_probs.dtype)
    weighted = log_probs if weight is None else F.multiply(log_probs, weight)
    picked = onehot if weight is None else F.multiply(onehot, weight)  # w_y at each label
    loss = F.negative(F.sum(F.multiply(onehot, weighted), axis=-1))
    if smoothing:
        uniform = F.negative(F.sum(weighted, axis=-1))
        uniform = F.where(valid, uniform, F.zeros_like(uniform))
        loss = F.add(F.multiply(loss, 1.0 - smoothing), F.multiply(uniform, smoothing / classes))
    if reduction == "mean":
        return F.divide(F.sum(loss), F.sum(picked))
    return F.sum(loss) if reduction == "sum" else loss


def _soft_loss(log_probs: Tensor, targets: Tensor, weight: Optional[Tensor],
               smoothing: float) -> Tensor:
    """Cross-entropy against class probabilities ``targets`` (class axis last), per element."""
    classes = log_probs.shape[-1]
    if targets.shape != log_probs.shape:
        raise ValueError(f"class-probability targets must have the scores' shape "
                         f"{list(log_probs.shape)}, got {list(targets.shape)}")
    targets = F.astype(targets, log_probs.dtype)
    if smoothing:
        targets = F.add(F.multiply(targets, 1.0 - smoothing), smoothing / classes)
    terms = F.multiply(targets, log_probs)
    if weight is not None:
        terms = F.multiply(terms, weight)
    return F.negative(F.sum(terms, axis=-1))


def _class_weight(weight: Any, who: str) -> Optional[Tensor]:
    if weight is None:
        return None
    w = F.asarray(weight)
    if w.ndim != 1 or not w.dtype.is_floating:
        raise ValueError(f"{who}: weight must be a 1-d float tensor (one weight per class), got "
                         f"{w.type}")
    return w


class _ClassLoss(LossBase):
    """The options class-index losses share: ``weight``, ``ignore_index``."""

    def __init__(self, weight: Any, ignore_index: int, reduction: str) -> None:
        super().__init__(reduction)
        self.weight = _class_weight(weight, type(self).__name__)
        self.ignore_index = int(ignore_index)

    def _weight_for(self, scores: Tensor) -> Optional[Tensor]:
        if self.weight is None:
            return None
        if self.weight.shape != scores.shape[-1:]:
            raise ValueError(f"{type(self).__name__}: weight has {self.weight.shape[0]} entries "
                             f"but the scores have {scores.shape[-1]} classes")
        return F.astype(self.weight, scores.dtype)


class NLLLoss(_ClassLoss):
    """The negative log-likelihood of class-index labels, given log-probabilities
    (``torch.nn.functional.nll_loss``)."""

    def __init__(self, weight: Any = None, ignore_index: int = -100,
                 reduction: str = "mean") -> None:
        super().__init__(weight, ignore_index, reduction)

    def construct(self, logits: Any, labels: Any) -> Tensor:
        log_probs = _class_last(F.asarray(logits))
        labels = F.asarray(labels)
        _check_index_labels(log_probs, labels, "NLLLoss")
        return _indexed_loss(log_probs, labels, self._weight_for(log_probs), self.ignore_index,
                             0.0, self.reduction)


class CrossEntropyLoss(_ClassLoss):
    """Softmax cross-entropy of unnormalised scores (``torch.nn.functional.cross_entropy``):
    integer labels are class indices (``weight``, ``ignore_index`` apply), float labels are
    class probabilities of the scores' shape.  ``label_smoothing`` mixes the target with the
    uniform distribution."""

    def __init__(self, weight: Any = None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(weight, ignore_index, reduction)
        self.label_smoothing = _check_smoothing(label_smoothing, "CrossEntropyLoss")

    def construct(self, logits: Any, labels: Any) -> Tensor:
        log_probs = F.log_softmax(_class_last(F.asarray(logits)), axis=-1)
        labels = F.asarray(labels)
        weight = self._weight_for(log_probs)
        if labels.dtype.is_floating:
            return self.get_loss(_soft_loss(log_probs, _class_last(labels), weight,
                                             self.label_smoothing))
        _check_index_labels(log_probs, labels, "CrossEntropyLoss")
        return _indexed_loss(log_probs, labels, weight, self.ignore_index,
                             self.label_smoothing, self.reduction)


class SoftmaxCrossEntropyWithLogits(LossBase):
    """Softmax cross-entropy of ``logits [N, C]`` (MindSpore's defaults: ``sparse=False``
    takes one-hot or probability labels ``[N, C]``, ``sparse=True`` class indices ``[N]``;
    ``reduction="none"``).  ``label_smoothing`` mixes the labels with the uniform
    distribution."""

    def __init__(self, sparse: bool = False, reduction: str = "none",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(reduction)
        self.sparse = bool(sparse)
        self.label_smoothing = _check_smoothing(label_smoothing,
                                                "SoftmaxCrossEntropyWithLogits")

    def construct(self, logits: Any, labels: Any) -> Tensor:
        log_probs = F.log_softmax(F.asarray(logits), axis=-1)
        labels = F.asarray(labels)
        if self.sparse:
            _check_index_labels(log_probs, labels, "SoftmaxCrossEntropyWithLogits(sparse=True)")
            labels = F.one_hot(labels, log_probs.shape[-1], dtype=log_probs.dtype)
        return self.get_loss(_soft_loss(log_probs, labels, None, self.label_smoothing))

    def extend_repr(self) -> str:
        return f"sparse={self.sparse}, reduction={self.reduction}"


class MSELoss(LossBase):
    """The squared difference of ``logits`` and ``labels`` (broadcast together)."""

    def construct(self, logits: Any, labels: Any) -> Tensor:
        return self.get_loss(F.square(F.subtract(logits, labels)))


class L1Loss(LossBase):
    """The absolute difference of ``logits`` and ``labels`` (broadcast together)."""

    def construct(self, logits: Any, labels: Any) -> Tensor:
        return self.get_loss(F.abs(F.subtract(logits, labels)))


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
