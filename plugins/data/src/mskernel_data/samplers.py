"""Samplers: which rows of a numbered source one pass reads, in which order (MindSpore's
``mindspore.dataset`` samplers).

Give one to a source as ``sampler=`` instead of ``shuffle``, ``num_samples``, ``num_shards``
and ``shard_id`` (which are the built-in sampling: the two ways do not mix)::

    ds = MnistDataset(path, sampler=SubsetRandomSampler(range(1000)))

A plain sequence of indices works as a :class:`SubsetSampler`.  A random sampler draws from
the pass's generator (derived from the seed and the epoch), so a pass is the same whatever
the number of workers, and every epoch draws anew.

Your own: subclass :class:`Sampler` and implement ``__iter__`` yielding row indices; it may
read ``self.dataset_size``, the number of rows of the source.  Its own randomness is not
seeded by ``config.set_seed``.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Iterator, Optional, Sequence

import numpy as np

from .errors import DatasetError


def shard_order(order: np.ndarray, num_shards: int, shard_id: int) -> np.ndarray:
    """Shard ``shard_id`` of ``order`` as MindSpore's distributed sampler splits it: every
    shard gets ``ceil(n / num_shards)`` indices, the order wrapping around to fill the last
    ones, shard ``k`` taking positions ``k, k + num_shards, ...``."""
    if not len(order):
        return order
    per_shard = math.ceil(len(order) / num_shards)
    return np.resize(order, per_shard * num_shards)[shard_id::num_shards]


def check_num_samples(num_samples: Optional[int], owner: str) -> Optional[int]:
    if num_samples is not None and (isinstance(num_samples, bool)
                                    or not isinstance(num_samples, int) or num_samples < 0):
        raise DatasetError(f"{owner}: num_samples must be a non-negative integer or None, got "
                           f"{num_samples!r}")
    return num_samples or None  # MindSpore: 0 means all


class Sampler:
    """The base of samplers: :meth:`rows` gives the row indices of one pass.

    A subclass of your own implements ``__iter__`` (see the module's documentation);
    ``num_samples`` caps how many of its indices are read."""

    def __init__(self, num_samples: Optional[int] = None) -> None:
        self.num_samples = check_num_samples(num_samples, type(self).__name__)
        self.dataset_size = 0

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__, yielding "
                                  "row indices")

    def rows(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """The row indices of one pass over a source of ``n`` rows."""
        self.dataset_size = n
        try:
            out = np.fromiter((int(i) for i in self), np.int64)[:self.num_samples]
        except Exception as exc:
            raise DatasetError(f"{type(self).__name__} failed to choose the rows of a pass: "
                               f"{type(exc).__name__}: {exc}") from exc
        return _checked(out, n, type(self).__name__)

    def count(self, n: int) -> int:
        """How many rows one pass reads from a source of ``n`` rows."""
        return len(self.rows(n, np.random.default_rng(0)))

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items()
                           if not k.startswith("_") and k != "dataset_size")
        return f"{type(self).__name__}({params})"


def _checked(indices: np.ndarray, n: int, owner: str) -> np.ndarray:
    bad = indices[(indices < 0) | (indices >= n)]
    if len(bad):
        raise DatasetError(f"{owner} chose row {int(bad[0])} of a source with {n} rows")
    return indices


class SequentialSampler(Sampler):
    """Rows in order from ``start_index`` (default 0)."""

    def __init__(self, start_index: Optional[int] = None,
                 num_samples: Optional[int] = None) -> None:
        super().__init__(num_samples)
        if start_index is not None and (not isinstance(start_index, int) or start_index < 0):
            raise DatasetError(f"SequentialSampler: start_index must be a non-negative integer "
                               f"or None, got {start_index!r}")
        self.start_index = start_index or 0

    def rows(self, n: int, rng: np.random.Generator) -> np.ndarray:
        if n and self.start_index >= n:
            raise DatasetError(f"SequentialSampler: start_index {self.start_index} is past the "
                               f"last row of a source with {n} rows")
        return np.arange(self.start_index, n)[:self.num_samples]

    def count(self, n: int) -> int:
        return len(self.rows(n, np.random.default_rng(0)))


class RandomSampler(Sampler):
    """Rows in random order, each once, or with ``replacement`` drawn independently;
    ``num_samples`` rows (at most the source's size)."""

    def __init__(self, replacement: bool = False, num_samples: Optional[int] = None) -> None:
        super().__init__(num_samples)
        self.replacement = bool(replacement)

    def rows(self, n: int, rng: np.random.Generator) -> np.ndarray:
        size = self.count(n)
        if self.replacement:
            return rng.integers(0, n, size=size) if n else np.arange(0)
        return rng.permutation(n)[:size]

    def count(self, n: int) -> int:
        return n if self.num_samples is None else min(n, self.num_samples)


class DistributedSampler(Sampler):
    """Shard ``shard_id`` of ``num_shards``: all shards see the same order (shuffled with
    ``shuffle``, from the same seed) and together cover every row, ``ceil(n / num_shards)``
    rows each (the order wraps around to fill the last shards)."""

    def __init__(self, num_shards: int, shard_id: int, shuffle: bool = True,
                 num_samples: Optional[int] = None) -> None:
        super().__init__(num_samples)
        if not isinstance(num_shards, int) or num_shards < 1:
            raise DatasetError(f"DistributedSampler: num_shards must be a positive integer, "
                               f"got {num_shards!r}")
        if not isinstance(shard_id, int) or not 0 <= shard_id < num_shards:
            raise DatasetError(f"DistributedSampler: shard_id must lie in [0, {num_shards}), "
                               f"got {shard_id!r}")
        self.num_shards, self.shard_id, self.shuffle = num_shards, shard_id, bool(shuffle)

    def rows(self, n: int, rng: np.random.Generator) -> np.ndarray:
        order = rng.permutation(n) if self.shuffle else np.arange(n)
        return shard_order(order, self.num_shards, self.shard_id)[:self.num_samples]

    def count(self, n: int) -> int:
        per_shard = math.ceil(n / self.num_shards)
        return per_shard if self.num_samples is None else min(per_shard, self.num_samples)


class SubsetSampler(Sampler):
    """The rows ``indices``, in that order (repeats allowed)."""

    def __init__(self, indices: Iterable[int], num_samples: Optional[int] = None) -> None:
        super().__init__(num_samples)
        self.indices = _index_array(indices, type(self).__name__)

    def rows(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return _checked(self._chosen(rng), n, type(self).__name__)

    def _chosen(self, rng: np.random.Generator) -> np.ndarray:
        return self.indices[:self.num_samples]

    def count(self, n: int) -> int:
        return len(self.indices[:self.num_samples])


class SubsetRandomSampler(SubsetSampler):
    """The rows ``indices`` in random order."""

    def _chosen(self, rng: np.random.Generator) -> np.ndarray:
        return rng.permutation(self.indices)[:self.num_samples]


class WeightedRandomSampler(Sampler):
    """``num_samples`` rows (default: as many as ``weights``) drawn with probabilities
    proportional to ``weights`` (one per row), with ``replacement`` or without."""

    def __init__(self, weights: Sequence[float], num_samples: Optional[int] = None,
                 replacement: bool = True) -> None:
        super().__init__(num_samples)
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim != 1 or not len(w) or (w < 0).any() or not np.isfinite(w).all() \
                or w.sum() == 0:
            raise DatasetError("WeightedRandomSampler: weights must be a non-empty list of "
                               "finite, non-negative numbers, not all zero")
        self.weights, self.replacement = w, bool(replacement)

    def rows(self, n: int, rng: np.random.Generator) -> np.ndarray:
        if len(self.weights) > n:
            raise DatasetError(f"WeightedRandomSampler has {len(self.weights)} weights for a "
                               f"source with {n} rows")
        size = self.count(n)
        if not self.replacement and size > np.count_nonzero(self.weights):
            raise DatasetError(f"WeightedRandomSampler cannot draw {size} rows without "
                               f"replacement from {np.count_nonzero(self.weights)} with weight")
        return rng.choice(len(self.weights), size=size, replace=self.replacement,
                          p=self.weights / self.weights.sum())

    def count(self, n: int) -> int:
        return len(self.weights) if self.num_samples is None else self.num_samples


def _index_array(indices: Iterable[int], owner: str) -> np.ndarray:
    arr = np.asarray(list(indices))
    if arr.ndim != 1 or (len(arr) and arr.dtype.kind not in "iu"):
        raise DatasetError(f"{owner}: indices must be a sequence of integers, got {indices!r}")
    return arr.astype(np.int64)


def as_sampler(sampler: Any) -> Optional[Sampler]:
    """``sampler`` as a :class:`Sampler`: a sequence of indices becomes a
    :class:`SubsetSampler`."""
    if sampler is None or isinstance(sampler, Sampler):
        return sampler
    if isinstance(sampler, (list, tuple, range, np.ndarray)):
        return SubsetSampler(sampler)
    raise DatasetError(f"sampler must be a Sampler or a sequence of row indices, got "
                       f"{type(sampler).__name__}")
