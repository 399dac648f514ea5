"""Policies: sampling distributions, greedy actions, epsilon-greedy, squashed Gaussians,
and weights moved between networks."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import mskernel
from mskernel_reinforcement.distributions import gaussian_log_prob, squashed_gaussian
from mskernel_reinforcement.networks import ActorCritic, QNetwork, SquashedGaussianActor
from mskernel_reinforcement.policy import (
    CategoricalPolicy, EpsilonGreedyPolicy, LinearSchedule, SquashedGaussianPolicy,
)

from conftest import log_softmax, numpy_mlp


def test_categorical_samples_follow_the_softmax(discrete_plan):
    network = ActorCritic(4, 3, (16,), rng=np.random.default_rng(0))
    for param in network.policy.get_parameters():   # logits far from uniform
        param.assign_value(param.numpy() * 40)
    policy = CategoricalPolicy(network, discrete_plan.spec)
    obs = np.tile(np.array([[0.5, -0.2, 0.1, 0.3]], np.float32), (4000, 1))
    actions, extras = policy.act(obs, np.random.default_rng(1))
    weights = {k: v.numpy() for k, v in network.parameters_and_names()}
    log_probs = log_softmax(numpy_mlp(weights, "policy.", obs[:1]))[0]
    counts = np.bincount(actions, minlength=3)
    assert stats.chisquare(counts, np.exp(log_probs) * len(obs)).pvalue > 1e-3
    np.testing.assert_allclose(extras["log_prob"], log_probs[actions], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(extras["value"], numpy_mlp(weights, "value.", obs)[:, 0],
                               rtol=1e-4, atol=1e-5)
    greedy, _ = policy.act(obs[:5], np.random.default_rng(2), explore=False)
    assert np.all(greedy == np.argmax(log_probs))
    np.testing.assert_allclose(policy.values(obs[:3]), extras["value"][:3], rtol=1e-6)


def test_the_forward_pass_is_one_cached_graph_per_batch_and_mode(discrete_plan):
    policy = CategoricalPolicy(ActorCritic(4, 3, (8,)), discrete_plan.spec)
    rng = np.random.default_rng(0)
    for _ in range(5):
        policy.act(rng.standard_normal((2, 4)).astype(np.float32), rng)
    policy.act(rng.standard_normal((2, 4)).astype(np.float32), rng, explore=False)
    # new weights are read as state: no recompilation
    policy.load_weights({k: v * 2 for k, v in policy.weights().items()})
    policy.act(rng.standard_normal((2, 4)).astype(np.float32), rng)
    info = policy._forward.cache_info()
    assert (info.misses, info.hits) == (2, 5)


def test_epsilon_greedy(discrete_plan):
    network = QNetwork(4, 3, (8,))
    schedule = LinearSchedule(1.0, 0.1, 0.5, 100)
    policy = EpsilonGreedyPolicy(network, discrete_plan.spec, schedule)
    obs = np.random.default_rng(0).standard_normal((3000, 4)).astype(np.float32)
    greedy = network(mskernel.Tensor(obs)).numpy().argmax(1)
    actions, _ = policy.act(obs, np.random.default_rng(1))
    assert 0.25 < np.mean(actions == greedy) < 0.42    # epsilon 1: uniform, 1/3 agree
    policy.set_progress(50)
    assert policy.epsilon == pytest.approx(0.1) and schedule(10) == pytest.approx(0.82)
    actions, _ = policy.act(obs, np.random.default_rng(1))
    assert abs(np.mean(actions != greedy) - 0.1 * 2 / 3) < 0.03
    np.testing.assert_array_equal(policy.act(obs, None, explore=False)[0], greedy)


def test_squashed_gaussian_log_density_matches_the_change_of_variables():
    rng = np.random.default_rng(0)
    mean = rng.standard_normal((5, 2)).astype(np.float32)
    log_std = (rng.standard_normal((5, 2)) * 0.5).astype(np.float32)
    noise = rng.standard_normal((5, 2)).astype(np.float32)
    action, log_prob = squashed_gaussian(mean, log_std, noise)
    u = mean + np.exp(log_std) * noise
    gaussian = stats.norm.logpdf(u, mean, np.exp(log_std)).sum(-1)
    np.testing.assert_allclose(action.numpy(), np.tanh(u), rtol=1e-6)
    np.testing.assert_allclose(gaussian_log_prob(mean, log_std, u).numpy(), gaussian, rtol=1e-5)
    np.testing.assert_allclose(log_prob.numpy(),
                               gaussian - np.log(1 - np.tanh(u) ** 2 + 1e-6).sum(-1),
                               rtol=1e-4, atol=1e-5)


def test_squashed_gaussian_policy_scales_to_the_bounds(continuous_plan):
    spec = continuous_plan.spec
    policy = SquashedGaussianPolicy(SquashedGaussianActor(3, 2, (8,)), spec, random_steps=10)
    obs = np.random.default_rng(0).standard_normal((500, 3)).astype(np.float32)
    random_actions, _ = policy.act(obs, np.random.default_rng(1))   # before random_steps
    assert random_actions.shape == (500, 2)
    assert random_actions[:, 1].min() < 0 < 2 < random_actions[:, 1].max() <= 3
    policy.set_progress(10)
    actions, _ = policy.act(obs, np.random.default_rng(1))
    assert np.all(actions >= [-2, -1]) and np.all(actions <= [2, 3])
    greedy, _ = policy.act(obs, None, explore=False)
    mean, _ = policy.network(mskernel.Tensor(obs))
    np.testing.assert_allclose(greedy, np.tanh(mean.numpy()) * [2, 2] + [0, 1], rtol=1e-5,
                               atol=1e-6)


def test_weights_must_match(discrete_plan):
    policy = CategoricalPolicy(ActorCritic(4, 3, (8,)), discrete_plan.spec)
    weights = policy.weights()
    with pytest.raises(ValueError, match="missing \\['value.2.bias'\\]"):
        policy.load_weights({k: v for k, v in weights.items() if k != "value.2.bias"})
    weights["policy.0.weight"] = np.zeros((2, 2), np.float32)
    with pytest.raises(ValueError, match="'policy.0.weight' has shape \\[2, 2\\]"):
        policy.load_weights(weights)
