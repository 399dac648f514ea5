"""``mskernel.dataset.transforms``: the base of every transform, and the general ones
(MindSpore's ``mindspore.dataset.transforms`` names).

A transform is an object applied to the columns of one row.  ``map`` gives it the row's own
random generator, derived from the seed, the epoch and the row's position (:mod:`.rng`), so
a random transform decides the same way whichever worker runs it.  Called directly —
``RandomCrop(8)(image)`` — it draws from a generator seeded by ``config.set_seed``.

Writing one: subclass :class:`Transform` and implement ``apply(columns, rng)`` returning a
tuple of columns, or subclass :class:`~mskernel_data.vision.ImageTransform` for an op on one
image.  Any other callable works in ``map`` too (called as ``fn(*columns)``); it is not given
a generator, so its own randomness is not reproducible across worker counts.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from mskernel_sdk import as_storage, dtype as to_dtype

from .rng import eager_rng
from .workers import OperationFailed

Operation = Any  # a Transform or any callable taking and returning column values


class Transform:
    """Base class of transforms: ``apply(columns, rng) -> tuple of columns``."""

    def apply(self, columns: tuple, rng: np.random.Generator) -> tuple:
        raise NotImplementedError

    def __call__(self, *columns: Any) -> Any:
        """Apply eagerly; one output column comes back bare, several as a tuple."""
        out = self.apply(columns, eager_rng())
        return out[0] if len(out) == 1 else out

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({params})"


def call_operation(op: Operation, columns: tuple, rng: np.random.Generator) -> tuple:
    """Apply one operation of a ``map`` list to ``columns``: a transform gets ``rng``; any
    other callable is called with the columns and its result taken as one column unless it
    is a tuple."""
    if isinstance(op, Transform):
        return op.apply(columns, rng)
    out = op(*columns)
    return out if isinstance(out, tuple) else (out,)


def describe(op: Operation) -> str:
    return repr(op) if isinstance(op, Transform) else getattr(op, "__qualname__", repr(op))


def apply_operations(operations: Sequence[Operation], columns: tuple,
                     rng: np.random.Generator) -> tuple:
    """Apply ``operations`` in order, each on the previous one's output; an exception is
    wrapped in :class:`~.workers.OperationFailed` naming the operation."""
    for k, op in enumerate(operations):
        try:
            columns = call_operation(op, columns, rng)
        except Exception as exc:
            raise OperationFailed(f"{k + 1} of {len(operations)} ({describe(op)})", exc) from exc
    return columns


class Compose(Transform):
    """Apply ``transforms`` in sequence as one operation."""

    def __init__(self, transforms: Sequence[Operation]) -> None:
        if not transforms:
            raise ValueError("Compose needs at least one transform")
        self.transforms = list(transforms)

    def apply(self, columns: tuple, rng: np.random.Generator) -> tuple:
        for op in self.transforms:
            columns = call_operation(op, columns, rng)
        return columns


class RandomApply(Transform):
    """Apply ``transforms`` in sequence with probability ``prob``, else pass the row on."""

    def __init__(self, transforms: Sequence[Operation], prob: float = 0.5) -> None:
        check_prob(prob)
        self.transforms = list(transforms)
        self.prob = prob

    def apply(self, columns: tuple, rng: np.random.Generator) -> tuple:
        if rng.random() >= self.prob:
            return columns
        for op in self.transforms:
            columns = call_operation(op, columns, rng)
        return columns


class RandomChoice(Transform):
    """Apply one of ``transforms``, chosen uniformly per row."""

    def __init__(self, transforms: Sequence[Operation]) -> None:
        if not transforms:
            raise ValueError("RandomChoice needs at least one transform")
        self.transforms = list(transforms)

    def apply(self, columns: tuple, rng: np.random.Generator) -> tuple:
        return call_operation(self.transforms[rng.integers(len(self.transforms))], columns, rng)


class TypeCast(Transform):
    """Cast every column to ``data_type`` (an mskernel dtype, a NumPy dtype or a name)."""

    def __init__(self, data_type: Any) -> None:
        self.data_type = to_dtype(data_type)

    def apply(self, columns: tuple, rng: np.random.Generator) -> tuple:
        return tuple(as_storage(c, self.data_type) for c in columns)


class OneHot(Transform):
    """Integer labels (any shape) to one-hot vectors of ``num_classes`` along a new last
    axis, smoothed as ``(1 - smoothing_rate) * onehot + smoothing_rate / num_classes``.
    The result keeps the label's dtype without smoothing and is float32 with it."""

    def __init__(self, num_classes: int, smoothing_rate: float = 0.0) -> None:
        if num_classes < 1:
            raise ValueError(f"OneHot needs num_classes >= 1, got {num_classes}")
        check_prob(smoothing_rate, "smoothing_rate")
        self.num_classes = num_classes
        self.smoothing_rate = smoothing_rate

    def apply(self, columns: tuple, rng: np.random.Generator) -> tuple:
        return tuple(self._encode(np.asarray(c)) for c in columns)

    def _encode(self, labels: np.ndarray) -> np.ndarray:
        if labels.dtype.kind not in "iu":
            raise TypeError(f"OneHot needs integer labels, got {labels.dtype}")
        if labels.size and (labels.min() < 0 or labels.max() >= self.num_classes):
            raise ValueError(f"OneHot: labels must lie in [0, {self.num_classes}), got values "
                             f"from {labels.min()} to {labels.max()}")
        onehot = np.arange(self.num_classes) == labels[..., None]
        if self.smoothing_rate:
            return ((1 - self.smoothing_rate) * onehot
                    + self.smoothing_rate / self.num_classes).astype(np.float32)
        return onehot.astype(labels.dtype)


def check_prob(value: float, name: str = "prob") -> None:
    """Raise unless ``value`` is a probability."""
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {value}")
