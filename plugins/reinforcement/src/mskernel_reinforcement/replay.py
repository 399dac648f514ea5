"""Replay buffers: ``ReplayBuffer`` (uniform sampling) and ``PrioritizedReplayBuffer``
(proportional prioritisation, Schaul et al., 2016).

A buffer is a ring of ``capacity`` transitions stored field by field in arrays allocated once,
when the buffer is made, in the dtypes the learner consumes: adding a batch writes rows in
place (wrapping around, overwriting the oldest), sampling gathers rows into a batch that a
compiled update step takes as it is.  Nothing is allocated per transition.

The storage is host memory: a sampled batch is handed to ``@mskernel.jit`` update steps,
which read NumPy arrays as graph inputs.  (A ring of ``mskernel.Parameter`` s written through
``Parameter.assign_value`` would copy the whole field on every write: the core's tensors are
immutable and an indexed update makes a new array.)

The prioritised buffer keeps its priorities in two binary trees over the slots — sums, for
sampling in proportion to ``priority ** alpha``, and minimums, for the largest importance
weight — updated for a whole batch of slots at once, level by level.
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Optional

import numpy as np

__all__ = ["Batch", "PrioritizedReplayBuffer", "ReplayBuffer"]

#: A field's layout: the shape of one transition's entry and its dtype.
FieldSpec = tuple[tuple[int, ...], Any]


class Batch(NamedTuple):
    """Sampled transitions: ``data`` (field → ``[batch, *shape]`` array), the slots they came
    from (``indices``, for :meth:`PrioritizedReplayBuffer.update_priorities`) and importance
    weights (``weights``: ones for uniform sampling)."""

    data: dict[str, np.ndarray]
    indices: np.ndarray
    weights: np.ndarray


class ReplayBuffer:
    """A ring buffer of transitions sampled uniformly (with replacement).

    ``fields`` maps each field's name to ``(shape, dtype)`` of one transition's entry::

        buffer = ReplayBuffer(100_000, {"obs": ((4,), np.float32), "action": ((), np.int64),
                                        "reward": ((), np.float32)}, seed=0)
        buffer.add(obs=obs_batch, action=actions, reward=rewards)
        batch = buffer.sample(64)          # batch.data["obs"].shape == (64, 4)
    """

    def __init__(self, capacity: int, fields: Mapping[str, FieldSpec],
                 seed: Optional[int] = None) -> None:
        if capacity < 1:
            raise ValueError(f"{type(self).__name__}: capacity must be at least 1, got {capacity}")
        if not fields:
            raise ValueError(f"{type(self).__name__}: give at least one field")
        self.capacity = int(capacity)
        self.storage = {name: np.zeros((self.capacity, *shape), dtype)
                        for name, (shape, dtype) in fields.items()}
        self.rng = np.random.default_rng(seed)
        self._next = 0
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def add(self, **batch: np.ndarray) -> np.ndarray:
        """Write a batch of transitions (every field, each ``[n, *shape]``); returns the slots
        written.  A batch larger than the capacity keeps its last ``capacity`` rows."""
        if set(batch) != set(self.storage):
            raise ValueError(f"{type(self).__name__}.add: expected the fields "
                             f"{sorted(self.storage)}, got {sorted(batch)}")
        sizes = {name: len(np.asarray(value)) for name, value in batch.items()}
        n = next(iter(sizes.values()))
        if any(size != n for size in sizes.values()):
            raise ValueError(f"{type(self).__name__}.add: the fields have different batch "
                             f"sizes {sizes}")
        for name, value in batch.items():
            expected = self.storage[name].shape[1:]
            if np.shape(value)[1:] != expected:
                raise ValueError(f"{type(self).__name__}.add: field {name!r} has entries of "
                                 f"shape {list(np.shape(value)[1:])}, expected {list(expected)}")
        skip = max(0, n - self.capacity)
        slots = (self._next + np.arange(skip, n)) % self.capacity
        for name, value in batch.items():
            self.storage[name][slots] = np.asarray(value)[skip:]
        self._next = int((self._next + n) % self.capacity)
        self._size = min(self._size + n, self.capacity)
        return slots

    def sample(self, batch_size: int) -> Batch:
        """``batch_size`` transitions drawn uniformly, with replacement."""
        self._check_sample(batch_size)
        indices = self.rng.integers(0, self._size, batch_size)
        return Batch(self._gather(indices), indices, np.ones(batch_size, np.float32))

    def _check_sample(self, batch_size: int) -> None:
        if self._size == 0:
            raise ValueError(f"{type(self).__name__}.sample: the buffer is empty")
        if batch_size < 1:
            raise ValueError(f"{type(self).__name__}.sample: batch_size must be at least 1, "
                             f"got {batch_size}")

    def _gather(self, indices: np.ndarray) -> dict[str, np.ndarray]:
        return {name: array[indices] for name, array in self.storage.items()}


class PrioritizedReplayBuffer(ReplayBuffer):
    """Proportional prioritised replay: slot ``i`` is drawn with probability
    ``p_i^alpha / sum_k p_k^alpha`` (stratified: one draw from each of ``batch_size`` equal
    slices of the total), and weighted by ``(size * P(i))^-beta`` divided by the largest such
    weight.  New transitions get the largest priority seen so far, so each is replayed at
    least about once; :meth:`update_priorities` sets the priorities of sampled slots
    (usually ``|TD error| + eps``).  ``beta`` may be changed between samples (it is usually
    annealed to 1)."""

    def __init__(self, capacity: int, fields: Mapping[str, FieldSpec], alpha: float = 0.6,
                 beta: float = 0.4, eps: float = 1e-6, seed: Optional[int] = None) -> None:
        super().__init__(capacity, fields, seed)
        if alpha < 0 or beta < 0 or eps <= 0:
            raise ValueError(f"PrioritizedReplayBuffer: alpha and beta must be >= 0 and eps "
                             f"> 0, got {alpha}, {beta}, {eps}")
        self.alpha, self.beta, self.eps = float(alpha), float(beta), float(eps)
        self._leaves = 1 << max(0, (self.capacity - 1).bit_length())
        self._sums = np.zeros(2 * self._leaves, np.float64)
        self._mins = np.full(2 * self._leaves, np.inf, np.float64)
        self._max_priority = 1.0

    def add(self, **batch: np.ndarray) -> np.ndarray:
        slots = super().add(**batch)
        self._set(slots, np.full(len(slots), self._max_priority ** self.alpha))
        return slots

    def sample(self, batch_size: int) -> Batch:
        self._check_sample(batch_size)
        total = self._sums[1]
        bounds = (np.arange(batch_size) + self.rng.random(batch_size)) * (total / batch_size)
        indices = self._find(np.minimum(bounds, np.nextafter(total, 0)))
        probabilities = self._sums[self._leaves + indices] / total
        min_probability = self._mins[1] / total
        weights = (probabilities / min_probability) ** -self.beta
        return Batch(self._gather(indices), indices, weights.astype(np.float32))

    def update_priorities(self, indices: np.ndarray, priorities: np.ndarray) -> None:
        """Set the priorities of ``indices`` (slots from :meth:`sample`) to ``priorities``
        (``eps`` is added; they must be finite and >= 0)."""
        priorities = np.asarray(priorities, np.float64).ravel() + self.eps
        indices = np.asarray(indices, np.int64).ravel()
        if priorities.shape != indices.shape:
            raise ValueError(f"update_priorities: {len(indices)} indices but "
                             f"{len(priorities)} priorities")
        if not np.all(np.isfinite(priorities)) or np.any(priorities < 0):
            raise ValueError("update_priorities: priorities must be finite and >= 0")
        if np.any((indices < 0) | (indices >= self._size)):
            raise ValueError(f"update_priorities: slots must be in [0, {self._size})")
        self._max_priority = max(self._max_priority, float(priorities.max()))
        self._set(indices, priorities ** self.alpha)

    def priorities(self, indices: np.ndarray) -> np.ndarray:
        """``priority ** alpha`` of ``indices`` (what sampling is proportional to)."""
        return self._sums[self._leaves + np.asarray(indices, np.int64)]

    def _set(self, slots: np.ndarray, values: np.ndarray) -> None:
        """Set leaves (the last value wins for a repeated slot) and recompute their
        ancestors, one level at a time."""
        nodes = self._leaves + slots
        self._sums[nodes] = values
        self._mins[nodes] = values
        nodes = np.unique(nodes // 2)
        while nodes[0] >= 1:
            left, right = 2 * nodes, 2 * nodes + 1
            self._sums[nodes] = self._sums[left] + self._sums[right]
            self._mins[nodes] = np.minimum(self._mins[left], self._mins[right])
            if nodes[0] == 1:
                break
            nodes = np.unique(nodes // 2)

    def _find(self, prefix: np.ndarray) -> np.ndarray:
        """The slot of each prefix sum: descend from the root, going right by the left
        child's sum where the prefix exceeds it."""
        nodes = np.ones(len(prefix), np.int64)
        prefix = prefix.copy()
        while nodes[0] < self._leaves:
            left = 2 * nodes
            go_right = prefix >= self._sums[left]
            prefix = np.where(go_right, prefix - self._sums[left], prefix)
            nodes = np.where(go_right, left + 1, left)
        return np.minimum(nodes - self._leaves, self._size - 1)
