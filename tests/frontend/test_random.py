"""``mskernel.random``: explicit keys (determinism, independence, eager == traced), the
distributions' ranges and statistics, and the seeded conveniences ``rand``/``randn``."""

from __future__ import annotations

import numpy as np
import pytest

import mskernel
from mskernel.errors import MskernelError
from mskernel.frontend import random as frontend_random
from mskernel.frontend.trace import trace_function
from mskernel.ir.types import TensorType
from mskernel.runtime import compile_graph

random = mskernel.random
Tensor = mskernel.Tensor
N = 20_000  # draws for the statistical checks: standard errors below 1%


def test_mskernel_random_is_this_module():
    assert random is frontend_random


def test_keys_are_jax_layout_and_deterministic():
    np.testing.assert_array_equal(random.key(0).numpy(), [0, 0])
    np.testing.assert_array_equal(random.key(2**40 + 5).numpy(), [256, 5])
    assert random.key(7).dtype is mskernel.uint32
    a = random.uniform(random.key(3), (4,))
    b = random.uniform(random.key(3), (4,))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_split_and_fold_in_give_distinct_keys():
    k = random.key(0)
    keys = random.split(k, 3)
    assert isinstance(keys, tuple) and len(keys) == 3
    k1, k2 = random.split(k)
    folded = [random.fold_in(k, i) for i in range(3)]
    rows = {tuple(x.numpy().tolist()) for x in (k, *keys, *folded)}
    assert len(rows) == 7
    np.testing.assert_array_equal(k1.numpy(), keys[0].numpy())  # split(k, n)[i] is stable
    np.testing.assert_array_equal(random.fold_in(k, 2).numpy(), folded[2].numpy())


def test_a_key_must_be_a_uint32_pair():
    with pytest.raises(TypeError, match=r"uint32\[2\] tensor made by mskernel.random.key"):
        random.normal(np.zeros(2, np.float32), (2,))


def test_uniform_range_dtype_and_mean():
    x = random.uniform(random.key(1), (N,), minval=-2.0, maxval=3.0).numpy()
    assert x.dtype == np.float32 and x.min() >= -2.0 and x.max() < 3.0
    assert abs(x.mean() - 0.5) < 0.05
    h = random.uniform(random.key(1), (2, 3), "float16")
    assert h.dtype is mskernel.float16 and h.shape == (2, 3)


def test_uniform_with_tensor_bounds_broadcasts():
    lo, hi = np.array([0.0, 10.0], np.float32), np.array([1.0, 20.0], np.float32)
    x = random.uniform(random.key(2), (1000, 2), minval=Tensor(lo), maxval=hi).numpy()
    assert (x >= lo).all() and (x < hi).all()
    assert x[:, 1].mean() > 14


def test_normal_and_truncated_normal():
    z = random.normal(random.key(4), (N,)).numpy()
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1) < 0.03
    shifted = random.normal(random.key(4), (N,), mean=5.0, std=2.0).numpy()
    np.testing.assert_allclose(shifted, 5 + 2 * z, rtol=1e-6, atol=1e-6)
    t = random.truncated_normal(random.key(5), -1.0, 2.0, (N,), "float64").numpy()
    assert t.dtype == np.float64 and t.min() >= -1.0 and t.max() <= 2.0
    # mean of the standard normal truncated to [-1, 2]: (phi(-1) - phi(2)) / (Phi(2) - Phi(-1))
    assert abs(t.mean() - 0.2296) < 0.02


def test_bernoulli_rates():
    b = random.bernoulli(random.key(6), 0.3, (N,)).numpy()
    assert b.dtype == np.bool_ and abs(b.mean() - 0.3) < 0.02
    p = np.array([0.1, 0.9], np.float32)
    draws = random.bernoulli(random.key(7), Tensor(p), (N, 2)).numpy()
    np.testing.assert_allclose(draws.mean(0), p, atol=0.02)
    assert random.bernoulli(random.key(8), p).shape == (2,)


def test_randint_covers_its_range_uniformly():
    r = random.randint(random.key(9), (N,), -3, 4, "int16").numpy()
    assert r.dtype == np.int16
    counts = np.bincount(r + 3, minlength=7)
    assert counts.sum() == N and (np.abs(counts / N - 1 / 7) < 0.02).all()


def test_permutation():
    p = random.permutation(random.key(10), 50).numpy()
    assert sorted(p.tolist()) == list(range(50)) and p.tolist() != list(range(50))
    x = np.arange(12).reshape(3, 4)
    rows = random.permutation(random.key(11), Tensor(x)).numpy()
    assert sorted(map(tuple, rows.tolist())) == sorted(map(tuple, x.tolist()))
    cols = random.permutation(random.key(11), x, axis=1).numpy()
    np.testing.assert_array_equal(np.sort(cols, axis=1), x)


def test_categorical_follows_softmax():
    logits = np.log(np.array([0.2, 0.5, 0.3], np.float32))
    draws = random.categorical(random.key(12), logits, shape=(N,)).numpy()
    assert draws.dtype == np.int64 and draws.shape == (N,)
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / N, [0.2, 0.5, 0.3], atol=0.02)
    columns = np.stack([logits, logits], axis=1)  # categories along axis 0
    assert random.categorical(random.key(12), columns, axis=0).shape == (2,)


def _keyed_draws(k):
    k1, k2 = random.split(k)
    return (random.uniform(k1, (3,)), random.normal(random.fold_in(k2, 7), (2, 2), "float64"),
            random.bernoulli(k2, 0.5, (4,)), random.randint(k1, (3,), 0, 10),
            random.permutation(k2, 5), random.bits(k1, (2,)))


def test_explicit_keys_give_the_same_numbers_eager_and_traced():
    seed_key = random.key(42)
    eager = _keyed_draws(seed_key)
    graph, _, _ = trace_function(_keyed_draws, [seed_key.type], "draws")
    traced = compile_graph(graph)(seed_key.numpy())
    for got, want in zip(traced, eager):
        np.testing.assert_array_equal(got, want.numpy())


# -- the process seed -------------------------------------------------------------------------


@pytest.fixture
def fresh_process_seed(monkeypatch):
    monkeypatch.setattr(frontend_random, "_process_seed", frontend_random._ProcessSeed())


def test_rand_and_randn_with_a_seed(fresh_process_seed):
    np.testing.assert_array_equal(random.rand(2, 3, seed=5).numpy(),
                                  random.uniform(random.key(5), (2, 3)).numpy())
    np.testing.assert_array_equal(random.randn(4, seed=5, dtype="float64").numpy(),
                                  random.normal(random.key(5), (4,), "float64").numpy())


def test_rand_without_a_seed_needs_set_seed(fresh_process_seed):
    with pytest.raises(MskernelError, match="set_seed"):
        random.rand(2)
    random.set_seed(3)
    first, second = random.rand(3), random.randn(3)
    assert not np.array_equal(first.numpy(), random.rand(3).numpy())
    np.testing.assert_array_equal(first.numpy(),
                                  random.uniform(random.fold_in(random.key(3), 0), (3,)).numpy())
    random.set_seed(3)  # restarts the counter
    np.testing.assert_array_equal(random.rand(3).numpy(), first.numpy())
    np.testing.assert_array_equal(random.randn(3).numpy(), second.numpy())


def test_a_traced_randn_bakes_in_its_key(fresh_process_seed):
    random.set_seed(0)
    graph, _, _ = trace_function(lambda x: x + random.randn(3),
                                 [TensorType(mskernel.float32, (3,))], "noisy")
    compiled = compile_graph(graph)
    zeros = np.zeros(3, np.float32)
    np.testing.assert_array_equal(compiled(zeros)[0], compiled(zeros)[0])
