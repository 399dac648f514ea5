"""Replay buffers: ring storage, uniform sampling, and proportional prioritisation checked
against exact probabilities and importance weights."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from mskernel_reinforcement.replay import PrioritizedReplayBuffer, ReplayBuffer

FIELDS = {"obs": ((3,), np.float32), "action": ((), np.int32)}


def rows(start: int, n: int) -> dict[str, np.ndarray]:
    ids = np.arange(start, start + n)
    return {"obs": np.stack([ids, ids, ids], 1).astype(np.float32),
            "action": ids.astype(np.int32)}


def test_storage_is_allocated_once_and_wraps_around():
    buffer = ReplayBuffer(5, FIELDS, seed=0)
    storage = {k: v for k, v in buffer.storage.items()}
    assert buffer.storage["obs"].shape == (5, 3) and buffer.storage["action"].dtype == np.int32
    assert list(buffer.add(**rows(0, 3))) == [0, 1, 2]
    assert list(buffer.add(**rows(3, 4))) == [3, 4, 0, 1]   # overwrites the oldest
    assert len(buffer) == 5
    assert list(buffer.storage["action"]) == [5, 6, 2, 3, 4]
    assert all(buffer.storage[k] is storage[k] for k in storage)  # written in place
    buffer.add(**rows(10, 12))                                # more than the capacity
    assert sorted(buffer.storage["action"]) == [17, 18, 19, 20, 21]


def test_uniform_sampling_covers_the_filled_rows_evenly():
    buffer = ReplayBuffer(100, FIELDS, seed=1)
    buffer.add(**rows(0, 10))
    batch = buffer.sample(20_000)
    assert batch.data["obs"].shape == (20_000, 3)
    np.testing.assert_array_equal(batch.data["action"], batch.indices)   # rows stay together
    np.testing.assert_array_equal(batch.data["obs"][:, 0], batch.indices)
    assert batch.indices.max() < 10 and np.all(batch.weights == 1)
    counts = np.bincount(batch.indices, minlength=10)
    assert stats.chisquare(counts).pvalue > 1e-3


def test_bad_batches_are_refused_with_the_field_named():
    buffer = ReplayBuffer(4, FIELDS)
    with pytest.raises(ValueError, match="empty"):
        buffer.sample(1)
    with pytest.raises(ValueError, match="expected the fields"):
        buffer.add(obs=np.zeros((1, 3)))
    with pytest.raises(ValueError, match="'obs' has entries of shape \\[2\\]"):
        buffer.add(obs=np.zeros((1, 2)), action=np.zeros(1))
    with pytest.raises(ValueError, match="different batch sizes"):
        buffer.add(obs=np.zeros((2, 3)), action=np.zeros(1))


def test_prioritised_sampling_follows_priorities_to_the_alpha():
    alpha = 0.7
    buffer = PrioritizedReplayBuffer(13, FIELDS, alpha=alpha, beta=0.5, seed=2)  # not 2^k
    buffer.add(**rows(0, 13))
    priorities = np.arange(1, 14, dtype=np.float64)
    buffer.update_priorities(np.arange(13), priorities)
    expected = (priorities + buffer.eps) ** alpha
    expected /= expected.sum()
    counts = np.zeros(13)
    for _ in range(200):
        batch = buffer.sample(256)
        counts += np.bincount(batch.indices, minlength=13)
        np.testing.assert_array_equal(batch.data["action"], batch.indices)
    assert stats.chisquare(counts, expected * counts.sum()).pvalue > 1e-3


def test_importance_weights():
    buffer = PrioritizedReplayBuffer(8, FIELDS, alpha=0.5, beta=0.4, seed=3)
    buffer.add(**rows(0, 6))
    buffer.update_priorities(np.arange(6), np.array([4.0, 1.0, 9.0, 16.0, 1.0, 25.0]))
    batch = buffer.sample(64)
    p = (np.array([4.0, 1.0, 9.0, 16.0, 1.0, 25.0]) + buffer.eps) ** 0.5
    prob = p / p.sum()
    w = (6 * prob) ** -0.4
    np.testing.assert_allclose(batch.weights, (w / w.max())[batch.indices], rtol=1e-6)
    assert batch.weights.max() <= 1.0


def test_new_transitions_get_the_largest_priority_so_far():
    buffer = PrioritizedReplayBuffer(8, FIELDS, alpha=1.0, seed=4)
    buffer.add(**rows(0, 2))
    buffer.update_priorities(np.array([0, 1]), np.array([3.0, 0.5]))
    buffer.add(**rows(2, 1))
    np.testing.assert_allclose(buffer.priorities(np.array([0, 1, 2])),
                               [3.0 + 1e-6, 0.5 + 1e-6, 3.0 + 1e-6])


def test_sum_tree_stays_consistent_under_random_updates():
    rng = np.random.default_rng(5)
    buffer = PrioritizedReplayBuffer(37, FIELDS, alpha=1.0, seed=5)
    for step in range(30):
        buffer.add(**rows(step, int(rng.integers(1, 5))))
        slots = rng.integers(0, len(buffer), 6)            # repeats included
        buffer.update_priorities(slots, rng.random(6) * 10)
        leaves = buffer.priorities(np.arange(len(buffer)))
        assert buffer._sums[1] == pytest.approx(leaves.sum(), rel=1e-12)
        assert buffer._mins[1] == pytest.approx(leaves.min(), rel=1e-12)
        # the tree search returns the slot whose prefix interval holds the value
        prefix = rng.random(16) * leaves.sum()
        np.testing.assert_array_equal(buffer._find(prefix),
                                      np.searchsorted(np.cumsum(leaves), prefix, side="right"))


def test_priority_updates_are_checked():
    buffer = PrioritizedReplayBuffer(4, FIELDS)
    buffer.add(**rows(0, 2))
    with pytest.raises(ValueError, match="finite"):
        buffer.update_priorities(np.array([0]), np.array([np.nan]))
    with pytest.raises(ValueError, match=r"slots must be in \[0, 2\)"):
        buffer.update_priorities(np.array([3]), np.array([1.0]))
    with pytest.raises(ValueError, match="2 indices but 1 priorities"):
        buffer.update_priorities(np.array([0, 1]), np.array([1.0]))
