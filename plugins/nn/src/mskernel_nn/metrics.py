"""Evaluation metrics (MindSpore's ``mindspore.train`` metrics): ``Accuracy``, ``Precision``,
``Recall``, ``Fbeta``, ``F1``, ``TopKCategoricalAccuracy``, the regression errors ``MAE`` and
``MSE``, and ``Loss``.

A metric accumulates over batches on the host: ``clear()`` resets it, ``update(*inputs)`` adds a
batch, ``eval()`` gives the value.  Inputs may be tensors or NumPy arrays.  Classification
metrics take ``(y_pred, y)``: scores ``[N, C]`` and labels ``[N]`` (class indices) or ``[N, C]``
(one-hot).  :class:`~mskernel_nn.model.Model` feeds each metric the outputs of its evaluation
network ``(loss, y_pred, y)`` picked by the metric's ``indexes`` (``set_indexes``): ``[1, 2]``
by default, ``[0]`` for :class:`Loss`.
"""

from __future__ import annotations

import warnings
from typing import Any, Optional, Sequence

import numpy as np

__all__ = ["MAE", "MSE", "Accuracy", "F1", "Fbeta", "Loss", "Metric", "Precision", "Recall",
           "Top1CategoricalAccuracy", "Top5CategoricalAccuracy", "TopKCategoricalAccuracy",
           "get_metric_fn", "names"]


class Metric:
    """Base class: subclasses implement ``clear``, ``update`` and ``eval``."""

    #: which evaluation-network outputs ``(loss, y_pred, y)`` :class:`Model` passes to update
    default_indexes: tuple[int, ...] = (1, 2)

    def __init__(self) -> None:
        self._indexes: Optional[list[int]] = None
        self.clear()

    @property
    def indexes(self) -> list[int]:
        return list(self.default_indexes) if self._indexes is None else list(self._indexes)

    def set_indexes(self, indexes: Sequence[int]) -> Metric:
        """Choose the evaluation-network outputs this metric is updated with."""
        self._indexes = [int(i) for i in indexes]
        return self

    def clear(self) -> None:
        raise NotImplementedError

    def update(self, *inputs: Any) -> None:
        raise NotImplementedError

    def eval(self) -> Any:
        raise NotImplementedError

    #: the attributes holding what ``update`` accumulated, each a count or sum over examples
    #: (so the state of several ranks' data is their elementwise sum); ``()``: not mergeable
    accumulators: tuple[str, ...] = ()

    def merge_over(self, group: Any) -> None:
        """Make this metric the one of every rank's data: sum its :attr:`accumulators` over
        the ranks of ``group`` (a :class:`mskernel_sdk.DataParallelGroup`).  A metric without
        accumulators stays this rank's, with a warning."""
        if not self.accumulators:
            warnings.warn(f"{type(self).__name__} declares no accumulators, so its value covers "
                          f"rank {group.rank}'s share of the data only", stacklevel=2)
            return
        if any(getattr(self, name) is None for name in self.accumulators):
            raise ValueError(f"{type(self).__name__}: rank {group.rank} evaluated no examples, "
                             "so there is nothing to merge over the ranks")
        values = [np.asarray(getattr(self, name), np.float64) for name in self.accumulators]
        flat = group.sum_over_ranks(np.concatenate([v.reshape(-1) for v in values]))
        offset = 0
        for name, value in zip(self.accumulators, values):
            merged = flat[offset:offset + value.size].reshape(value.shape)
            offset += value.size
            old = getattr(self, name)
            setattr(self, name, type(old)(merged) if np.isscalar(old) else
                    merged.astype(np.asarray(old).dtype))

    def __call__(self, *inputs: Any) -> Any:
        """Clear, update with one batch and evaluate."""
        self.clear()
        self.update(*inputs)
        return self.eval()

    def _require(self, count: int) -> None:
        if count == 0:
            raise RuntimeError(f"{type(self).__name__}.eval() needs at least one example; "
                               "call update() first")

    @staticmethod
    def _convert_data(data: Any) -> np.ndarray:
        return np.asarray(data)


def _inputs(metric: Metric, inputs: tuple[Any, ...], count: int) -> list[np.ndarray]:
    if len(inputs) != count:
        raise ValueError(f"{type(metric).__name__}.update() takes {count} inputs "
                         f"({'y_pred, y' if count == 2 else 'loss'}), got {len(inputs)}")
    return [Metric._convert_data(x) for x in inputs]


def _class_labels(y_pred: np.ndarray, y: np.ndarray, who: str) -> tuple[np.ndarray, np.ndarray]:
    """Predicted and true class indices from scores ``[N, C]`` and labels ``[N]`` or
    ``[N, C]`` (one-hot)."""
    if y_pred.ndim != 2:
        raise ValueError(f"{who}: y_pred must be scores of shape [N, C], got {list(y_pred.shape)}")
    truth = y.argmax(axis=1) if y.ndim == 2 else y.reshape(-1)
    if truth.shape[0] != y_pred.shape[0]:
        raise ValueError(f"{who}: y_pred has {y_pred.shape[0]} rows but y has "
                         f"{truth.shape[0]} labels")
    return y_pred.argmax(axis=1), truth.astype(np.int64)


class _HitRate(Metric):
    """The fraction of examples a subclass's ``update`` counts as hits (``_add(hits)``)."""

    accumulators = ("_correct", "_total")

    def clear(self) -> None:
        self._correct = 0
        self._total = 0

    def _add(self, hits: np.ndarray) -> None:
        self._correct += int(hits.sum())
        self._total += hits.size

    def eval(self) -> float:
        self._require(self._total)
        return self._correct / self._total


class Accuracy(_HitRate):
    """The fraction of correct predictions.  ``eval_type="classification"``: the arg-max of
    the scores equals the label; ``"multilabel"``: every rounded score equals its 0/1 label."""

    def __init__(self, eval_type: str = "classification") -> None:
        if eval_type not in ("classification", "multilabel"):
            raise ValueError(f"eval_type must be 'classification' or 'multilabel', got "
                             f"{eval_type!r}")
        self.eval_type = eval_type
        super().__init__()

    def update(self, *inputs: Any) -> None:
        y_pred, y = _inputs(self, inputs, 2)
        if self.eval_type == "classification":
            pred, truth = _class_labels(y_pred, y, "Accuracy")
            correct = pred == truth
        else:
            if y_pred.shape != y.shape:
                raise ValueError(f"Accuracy(multilabel): y_pred {list(y_pred.shape)} and y "
                                 f"{list(y.shape)} must have one shape")
            correct = (np.round(y_pred) == y).reshape(len(y), -1).all(axis=1)
        self._add(correct)


class _PerClass(Metric):
    """Counts per class of true positives, predicted positives and actual positives."""

    accumulators = ("_counts",)

    def clear(self) -> None:
        self._counts: Optional[np.ndarray] = None  # [3, classes]

    def update(self, *inputs: Any) -> None:
        y_pred, y = _inputs(self, inputs, 2)
        pred, truth = _class_labels(y_pred, y, type(self).__name__)
        classes = y_pred.shape[1]
        if truth.size and (truth.min() < 0 or truth.max() >= classes):
            raise ValueError(f"{type(self).__name__}: labels must lie in [0, {classes}), got "
                             f"{truth.min()} to {truth.max()}")
        counts = np.stack([np.bincount(v, minlength=classes)
                           for v in (pred[pred == truth], pred, truth)])
        if self._counts is None:
            self._counts = counts
        elif self._counts.shape != counts.shape:
            raise ValueError(f"{type(self).__name__}: this batch has {classes} classes, earlier "
                             f"ones {self._counts.shape[1]}")
        else:
            self._counts += counts

    def _totals(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(true positives, predicted positives, actual positives) per class."""
        self._require(0 if self._counts is None else int(self._counts[2].sum()))
        tp, predicted, actual = self._counts  # type: ignore[misc]
        return tp, predicted, actual


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den``, 0 where ``den`` is 0 (a class never predicted or never present)."""
    return np.divide(num, den, out=np.zeros(num.shape, np.float64), where=den != 0)


def _averaged(values: np.ndarray, average: bool) -> Any:
    return float(values.mean()) if average else values


class Precision(_PerClass):
    """Per-class precision ``TP / predicted positives`` (0 for a class never predicted);
    ``eval(average=True)`` gives their mean (macro average)."""

    def __init__(self, eval_type: str = "classification") -> None:
        _check_classification(eval_type, "Precision")
        super().__init__()

    def eval(self, average: bool = False) -> Any:
        tp, predicted, _ = self._totals()
        return _averaged(_ratio(tp, predicted), average)


class Recall(_PerClass):
    """Per-class recall ``TP / actual positives``; ``eval(average=True)``: macro average."""

    def __init__(self, eval_type: str = "classification") -> None:
        _check_classification(eval_type, "Recall")
        super().__init__()

    def eval(self, average: bool = False) -> Any:
        tp, _, actual = self._totals()
        return _averaged(_ratio(tp, actual), average)


class Fbeta(_PerClass):
    """Per-class F-beta score ``(1 + β²)·P·R / (β²·P + R)``; ``eval(average=True)``: macro
    average."""

    def __init__(self, beta: float) -> None:
        if not beta > 0:
            raise ValueError(f"Fbeta needs beta > 0, got {beta}")
        self.beta = float(beta)
        super().__init__()

    def eval(self, average: bool = False) -> Any:
        tp, predicted, actual = self._totals()
        b2 = self.beta ** 2
        return _averaged(_ratio((1 + b2) * tp, b2 * actual + predicted), average)


class F1(Fbeta):
    """The F1 score per class (``Fbeta(1)``)."""

    def __init__(self) -> None:
        super().__init__(1.0)


def _check_classification(eval_type: str, who: str) -> None:
    if eval_type != "classification":
        raise ValueError(f"{who} supports eval_type='classification', got {eval_type!r}")


class TopKCategoricalAccuracy(_HitRate):
    """The fraction of examples whose label is among the ``k`` highest scores."""

    def __init__(self, k: int) -> None:
        if not isinstance(k, int) or k < 1:
            raise ValueError(f"TopKCategoricalAccuracy needs an int k >= 1, got {k!r}")
        self.k = k
        super().__init__()

    def update(self, *inputs: Any) -> None:
        y_pred, y = _inputs(self, inputs, 2)
        _, truth = _class_labels(y_pred, y, type(self).__name__)
        top = np.argsort(-y_pred, axis=1, kind="stable")[:, :self.k]
        self._add((top == truth[:, None]).any(axis=1))


class Top1CategoricalAccuracy(TopKCategoricalAccuracy):
    """``TopKCategoricalAccuracy(1)``: plain accuracy."""

    def __init__(self) -> None:
        super().__init__(1)


class Top5CategoricalAccuracy(TopKCategoricalAccuracy):
    """``TopKCategoricalAccuracy(5)``."""

    def __init__(self) -> None:
        super().__init__(5)


class _ErrorSum(Metric):
    """A regression error as MindSpore defines it: the sum of ``error(y - y_pred)`` over every
    element, divided by the number of examples (the first axis) — per example, the errors of
    its outputs add up."""

    def clear(self) -> None:
        self._error_sum = 0.0
        self._samples = 0

    @staticmethod
    def error(diff: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def update(self, *inputs: Any) -> None:
        y_pred, y = _inputs(self, inputs, 2)
        if y.size != y_pred.size:
            raise ValueError(f"{type(self).__name__}: y has shape {list(y.shape)} but y_pred "
                             f"{list(y_pred.shape)}; they must hold as many values")
        diff = y.reshape(y_pred.shape).astype(np.float64) - y_pred
        self._error_sum += float(self.error(diff).sum())
        self._samples += y_pred.shape[0] if y_pred.ndim else 1

    def eval(self) -> float:
        self._require(self._samples)
        return self._error_sum / self._samples


class MAE(_ErrorSum):
    """Mean absolute error (``|y - y_pred|`` summed per example, averaged over examples)."""

    error = staticmethod(np.abs)


class MSE(_ErrorSum):
    """Mean squared error (``(y - y_pred)²`` summed per example, averaged over examples)."""

    error = staticmethod(np.square)


class Loss(Metric):
    """The mean of the losses given to ``update`` (each a scalar, or a batch's per-example
    losses counted one by one)."""

    default_indexes = (0,)
    accumulators = ("_sum", "_count")

    def clear(self) -> None:
        self._sum = 0.0
        self._count = 0

    def update(self, *inputs: Any) -> None:
        (loss,) = _inputs(self, inputs, 1)
        if loss.ndim > 1:
            raise ValueError(f"Loss.update() takes a scalar or a 1-d loss, got shape "
                             f"{list(loss.shape)}")
        self._sum += float(loss.sum())
        self._count += loss.size

    def eval(self) -> float:
        self._require(self._count)
        return self._sum / self._count


_BY_NAME: dict[str, type[Metric]] = {
    "accuracy": Accuracy, "acc": Accuracy, "precision": Precision, "recall": Recall,
    "f1": F1, "top_1_accuracy": Top1CategoricalAccuracy,
    "top_5_accuracy": Top5CategoricalAccuracy, "loss": Loss, "mae": MAE, "mse": MSE,
}


def names() -> list[str]:
    """The metric names :func:`get_metric_fn` knows."""
    return sorted(_BY_NAME)


def get_metric_fn(name: str, *args: Any, **kwargs: Any) -> Metric:
    """A new metric by name (``"accuracy"``/``"acc"``, ``"precision"``, ``"recall"``,
    ``"f1"``, ``"top_1_accuracy"``, ``"top_5_accuracy"``, ``"mae"``, ``"mse"``, ``"loss"``;
    case-insensitive),
    constructed with ``args``/``kwargs``."""
    cls = _BY_NAME.get(name.lower()) if isinstance(name, str) else None
    if cls is None:
        raise ValueError(f"unknown metric {name!r}; known: {', '.join(names())}")
    return cls(*args, **kwargs)
