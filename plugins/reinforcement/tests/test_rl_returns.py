"""GAE and returns against hand-computed values and a forward-sum NumPy reference."""

from __future__ import annotations

import numpy as np
import pytest

from mskernel_reinforcement.returns import gae


def reference_gae(rewards, values, bootstrap, terminated, truncated, gamma, lam):
    """The definition, summed forwards: ``A_t = sum_k (gamma lam)^k delta_{t+k}`` up to the
    end of the episode or of the trajectory, element by element."""
    steps, envs = rewards.shape
    advantages = np.zeros((steps, envs))
    for n in range(envs):
        deltas = []
        for t in range(steps):
            done = terminated[t, n] or truncated[t, n]
            if done or t == steps - 1:
                next_value = 0.0 if terminated[t, n] else bootstrap[t, n]
            else:
                next_value = values[t + 1, n]
            deltas.append(rewards[t, n] + gamma * next_value - values[t, n])
        for t in range(steps):
            total, k = 0.0, t
            while True:
                total += (gamma * lam) ** (k - t) * deltas[k]
                if terminated[k, n] or truncated[k, n] or k == steps - 1:
                    break
                k += 1
            advantages[t, n] = total
    return advantages, advantages + values


def test_by_hand_one_episode_terminated_then_bootstrapped():
    # env 0: r = 1, 1 (terminated), then 1 at the last step, bootstrapped by 10
    rewards = np.array([[1.0], [1.0], [1.0]])
    values = np.zeros((3, 1))
    bootstrap = np.array([[0.0], [0.0], [10.0]])
    terminated = np.array([[False], [True], [False]])
    truncated = np.zeros((3, 1), bool)
    advantages, returns = gae(rewards, values, bootstrap, terminated, truncated, 0.5, 1.0)
    # returns: 1 + 0.5 * 1 = 1.5 ; 1 ; 1 + 0.5 * 10 = 6
    np.testing.assert_allclose(returns[:, 0], [1.5, 1.0, 6.0])
    np.testing.assert_allclose(advantages, returns)


def test_by_hand_truncation_bootstraps_from_the_final_observation():
    rewards = np.array([[1.0], [2.0]])
    values = np.array([[3.0], [4.0]])
    bootstrap = np.array([[7.0], [5.0]])  # V(final obs) at the truncation, V(next) at the end
    terminated = np.zeros((2, 1), bool)
    truncated = np.array([[True], [False]])
    advantages, returns = gae(rewards, values, bootstrap, terminated, truncated, 0.9, 0.5)
    # t=0: truncated, delta = 1 + 0.9 * 7 - 3 = 4.3 and the chain stops there
    # t=1: delta = 2 + 0.9 * 5 - 4 = 2.5
    np.testing.assert_allclose(advantages[:, 0], [4.3, 2.5], rtol=1e-6)
    np.testing.assert_allclose(returns[:, 0], [7.3, 6.5], rtol=1e-6)


@pytest.mark.parametrize("gamma, lam", [(0.99, 0.95), (0.98, 0.8), (0.9, 1.0), (0.9, 0.0),
                                        (1.0, 1.0)])
def test_matches_the_forward_sum_definition(gamma, lam):
    rng = np.random.default_rng(7)
    steps, envs = 40, 6
    rewards = rng.standard_normal((steps, envs)).astype(np.float32)
    values = rng.standard_normal((steps, envs)).astype(np.float32)
    bootstrap = rng.standard_normal((steps, envs)).astype(np.float32)
    ends = rng.random((steps, envs))
    terminated = ends < 0.08
    truncated = (ends >= 0.08) & (ends < 0.12)
    advantages, returns = gae(rewards, values, bootstrap, terminated, truncated, gamma, lam)
    expected_adv, expected_ret = reference_gae(rewards.astype(np.float64), values, bootstrap,
                                               terminated, truncated, gamma, lam)
    assert advantages.dtype == np.float32 and returns.shape == (steps, envs)
    # float32 sums of at most 40 terms of magnitude ~1
    np.testing.assert_allclose(advantages, expected_adv, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(returns, expected_ret, rtol=1e-5, atol=1e-5)


def test_lambda_one_gives_discounted_returns():
    rewards = np.ones((5, 1), np.float32)
    zeros = np.zeros((5, 1), np.float32)
    never = np.zeros((5, 1), bool)
    _, returns = gae(rewards, zeros, zeros, never, never, 0.5, 1.0)
    np.testing.assert_allclose(returns[:, 0], [sum(0.5 ** k for k in range(5 - t))
                                               for t in range(5)], rtol=1e-6)


def test_shapes_and_ranges_are_checked():
    ones = np.ones((3, 2))
    with pytest.raises(ValueError, match="values has shape"):
        gae(ones, np.ones((3, 1)), ones, ones > 2, ones > 2, 0.9, 0.9)
    with pytest.raises(ValueError, match="gamma and lam"):
        gae(ones, ones, ones, ones > 2, ones > 2, 1.5, 0.9)
