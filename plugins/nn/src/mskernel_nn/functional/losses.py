"""Loss functions of MindSpore's ``ops`` (the numbers match ``torch.nn.functional``):
:func:`cross_entropy`, :func:`nll_loss`, :func:`mse_loss`, :func:`l1_loss`,
:func:`smooth_l1_loss`, :func:`kl_div` and :func:`binary_cross_entropy`; the loss cells of
:mod:`mskernel_nn.losses` call them.

Each takes ``reduction``: ``"mean"``, ``"sum"`` or ``"none"`` (one loss per element).  They
are compositions of core ops, so they run eagerly, under ``@jit`` and under ``grad`` alike.
Class-index losses take the class axis at position 1 — ``[N, C]`` or ``[N, C, d1, ...]``
scores with ``[N]`` / ``[N, d1, ...]`` integer labels — as PyTorch does.
"""

from __future__ import annotations

from typing import Any, Optional

from mskernel import ops as F
from mskernel_sdk import Tensor

__all__ = [
    "binary_cross_entropy", "cross_entropy", "kl_div", "l1_loss", "mse_loss", "nll_loss",
    "smooth_l1_loss",
]

REDUCTIONS = ("mean", "sum", "none")


def check_reduction(reduction: str, who: str) -> str:
    if reduction not in REDUCTIONS:
        raise ValueError(f"{who}: reduction must be one of {', '.join(REDUCTIONS)}, got "
                         f"{reduction!r}")
    return reduction


def reduce(loss: Tensor, reduction: str, who: str) -> Tensor:
    """``loss`` averaged (``"mean"``), summed (``"sum"``) or as it is (``"none"``)."""
    check_reduction(reduction, who)
    return F.mean(loss) if reduction == "mean" else F.sum(loss) if reduction == "sum" else loss


def check_smoothing(label_smoothing: float, who: str) -> float:
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{who}: label_smoothing must lie in [0, 1], got {label_smoothing}")
    return float(label_smoothing)


def class_last(x: Tensor) -> Tensor:
    """Scores ``[N, C, d1, ...]`` with the class axis moved last (``[N, d1, ..., C]``)."""
    if x.ndim < 1:
        raise ValueError("class scores need a class axis: shape [C], [N, C] or [N, C, d1, ...]")
    return x if x.ndim <= 2 else F.moveaxis(x, 1, -1)


def check_index_labels(scores: Tensor, labels: Tensor, who: str) -> None:
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


def soft_loss(log_probs: Tensor, targets: Tensor, weight: Optional[Tensor],
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


def class_weight(weight: Any, who: str) -> Optional[Tensor]:
    if weight is None:
        return None
    w = F.asarray(weight)
    if w.ndim != 1 or not w.dtype.is_floating:
        raise ValueError(f"{who}: weight must be a 1-d float tensor (one weight per class), got "
                         f"{w.type}")
    return w


def _class_weight_for(weight: Any, scores: Tensor, who: str) -> Optional[Tensor]:
    w = class_weight(weight, who)
    if w is None:
        return None
    if w.shape != scores.shape[-1:]:
        raise ValueError(f"{who}: weight has {w.shape[0]} entries but the scores have "
                         f"{scores.shape[-1]} classes")
    return F.astype(w, scores.dtype)


def nll_loss(input: Any, target: Any, weight: Any = None, ignore_index: int = -100,
             reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """The negative log-likelihood of class-index ``target`` under log-probabilities
    ``input`` (class axis 1); ``weight`` per class, ``ignore_index`` labels left out (and out
    of the mean's denominator), ``label_smoothing`` mixing in the uniform distribution."""
    log_probs = class_last(F.asarray(input))
    labels = F.asarray(target)
    check_index_labels(log_probs, labels, "nll_loss")
    return _indexed_loss(log_probs, labels, _class_weight_for(weight, log_probs, "nll_loss"),
                         int(ignore_index), check_smoothing(label_smoothing, "nll_loss"),
                         check_reduction(reduction, "nll_loss"))


def cross_entropy(input: Any, target: Any, weight: Any = None, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Softmax cross-entropy of unnormalised scores ``input`` (class axis 1): integer
    ``target`` holds class indices (``weight``, ``ignore_index`` apply, as
    :func:`nll_loss`), a float ``target`` class probabilities of the scores' shape."""
    log_probs = F.log_softmax(class_last(F.asarray(input)), axis=-1)
    labels = F.asarray(target)
    smoothing = check_smoothing(label_smoothing, "cross_entropy")
    w = _class_weight_for(weight, log_probs, "cross_entropy")
    if labels.dtype.is_floating:
        return reduce(soft_loss(log_probs, class_last(labels), w, smoothing), reduction,
                      "cross_entropy")
    check_index_labels(log_probs, labels, "cross_entropy")
    return _indexed_loss(log_probs, labels, w, int(ignore_index), smoothing,
                         check_reduction(reduction, "cross_entropy"))


def mse_loss(input: Any, target: Any, reduction: str = "mean") -> Tensor:
    """The squared difference of ``input`` and ``target`` (broadcast together)."""
    return reduce(F.square(F.subtract(input, target)), reduction, "mse_loss")


def l1_loss(input: Any, target: Any, reduction: str = "mean") -> Tensor:
    """The absolute difference of ``input`` and ``target`` (broadcast together)."""
    return reduce(F.abs(F.subtract(input, target)), reduction, "l1_loss")


def smooth_l1_loss(input: Any, target: Any, beta: float = 1.0,
                   reduction: str = "none") -> Tensor:
    """Huber-like: ``0.5 * d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta``, for
    ``d = input - target`` (MindSpore's default ``reduction="none"``)."""
    if beta <= 0:
        raise ValueError(f"smooth_l1_loss: beta must be positive, got {beta}")
    d = F.abs(F.subtract(input, target))
    loss = F.where(F.less(d, beta), F.divide(F.multiply(F.square(d), 0.5), beta),
                   F.subtract(d, 0.5 * beta))
    return reduce(loss, reduction, "smooth_l1_loss")


def kl_div(logits: Any, labels: Any, reduction: str = "mean", log_target: bool = False) -> Tensor:
    """The Kullback-Leibler divergence of ``labels`` (probabilities, or log-probabilities
    with ``log_target``) from the log-probabilities ``logits``:
    ``labels * (log(labels) - logits)``, 0 where a label is 0.  ``reduction`` may also be
    ``"batchmean"`` (the sum divided by the size of the first axis)."""
    x = F.asarray(logits)
    y = F.astype(labels, x.dtype)
    if log_target:
        loss = F.multiply(F.exp(y), F.subtract(y, x))
    else:
        positive = F.greater(y, 0)
        log_y = F.log(F.where(positive, y, F.ones_like(y)))
        loss = F.where(positive, F.multiply(y, F.subtract(log_y, x)), F.zeros_like(y))
    if reduction == "batchmean":
        return F.divide(F.sum(loss), x.shape[0] if x.ndim else 1)
    return reduce(loss, reduction, "kl_div")


def binary_cross_entropy(input: Any, target: Any, weight: Any = None,
                         reduction: str = "mean") -> Tensor:
    """The binary cross-entropy of probabilities ``input`` against ``target`` in [0, 1],
    each log clamped at -100 as PyTorch does."""
    p = F.asarray(input)
    y = F.astype(target, p.dtype)
    log_p = F.maximum(F.log(p), -100.0)
    log_not_p = F.maximum(F.log(F.subtract(1.0, p)), -100.0)
    loss = F.negative(F.add(F.multiply(y, log_p), F.multiply(F.subtract(1.0, y), log_not_p)))
    if weight is not None:
        loss = F.multiply(loss, weight)
    return reduce(loss, reduction, "binary_cross_entropy")
