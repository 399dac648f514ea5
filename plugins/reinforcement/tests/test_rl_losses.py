"""The algorithms' losses against NumPy references computed from the same weights, and PPO's
whole compiled update step against PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from mskernel_reinforcement.algorithms.a2c import A2CConfig, A2CLearner
from mskernel_reinforcement.algorithms.dqn import DQNConfig, DQNLearner
from mskernel_reinforcement.algorithms.ppo import PPOConfig, PPOLearner
from mskernel_reinforcement.algorithms.sac import SACConfig, SACLearner
from mskernel_reinforcement.policy import cell_weights

from conftest import log_softmax, numpy_mlp


def ppo_batch(rng, n=8, actions=3):
    return (rng.standard_normal((n, 4)).astype(np.float32),
            rng.integers(0, actions, n).astype(np.int32),
            (rng.standard_normal(n) * 0.3 - 1.1).astype(np.float32),
            rng.standard_normal(n).astype(np.float32),
            rng.standard_normal(n).astype(np.float32))


def numpy_actor_critic_loss(weights, batch, clip, config, ppo=True):
    obs, actions, old_log_prob, advantages, returns = (np.asarray(b, np.float64) for b in batch)
    logits = numpy_mlp(weights, "policy.", obs)
    values = numpy_mlp(weights, "value.", obs)[:, 0]
    log_probs = log_softmax(logits)
    log_prob = log_probs[np.arange(len(obs)), actions.astype(int)]
    if config.normalize_advantage:
        advantages = (advantages - advantages.mean()) / (advantages.std(ddof=1) + 1e-8)
    if ppo:
        ratio = np.exp(log_prob - old_log_prob)
        policy_loss = -np.minimum(ratio * advantages,
                                  np.clip(ratio, 1 - clip, 1 + clip) * advantages).mean()
    else:
        policy_loss = -(advantages * log_prob).mean()
    value_loss = ((returns - values) ** 2).mean()
    entropy = -(np.exp(log_probs) * log_probs).sum(-1).mean()
    total = policy_loss + config.vf_coef * value_loss - config.ent_coef * entropy
    return total, policy_loss, value_loss, entropy


@pytest.mark.parametrize("normalize", [True, False])
def test_ppo_loss_matches_numpy(discrete_plan, normalize):
    config = PPOConfig(n_steps=4, batch_size=8, hidden_sizes=(16, 16), ent_coef=0.01,
                       normalize_advantage=normalize)
    learner = PPOLearner(config, discrete_plan)
    batch = ppo_batch(np.random.default_rng(0))
    clip = np.float32(0.1)   # small, so that some ratios are clipped
    loss, (policy_loss, value_loss, entropy, approx_kl, clip_fraction) = learner._loss(
        *batch, clip)
    expected = numpy_actor_critic_loss(cell_weights(learner.network), batch, 0.1, config)
    # float32 forward passes of width 16 against float64
    np.testing.assert_allclose([float(loss), float(policy_loss), float(value_loss),
                                float(entropy)], expected, rtol=2e-5, atol=2e-6)
    assert 0.0 < float(clip_fraction) < 1.0 and float(approx_kl) >= 0.0


def test_a2c_loss_matches_numpy(discrete_plan):
    config = A2CConfig(n_steps=4, hidden_sizes=(16,), ent_coef=0.05)
    learner = A2CLearner(config, discrete_plan)
    batch = ppo_batch(np.random.default_rng(1))
    loss, (policy_loss, value_loss, entropy) = learner._loss(*batch)
    expected = numpy_actor_critic_loss(cell_weights(learner.network), batch, None, config,
                                       ppo=False)
    np.testing.assert_allclose([float(loss), float(policy_loss), float(value_loss),
                                float(entropy)], expected, rtol=2e-5, atol=2e-6)


def test_ppo_update_step_matches_pytorch(discrete_plan):
    """One compiled update — loss, gradients, clipping by global norm, Adam — against the
    same step in PyTorch from the same weights."""
    config = PPOConfig(n_steps=4, batch_size=8, hidden_sizes=(16, 16), ent_coef=0.01,
                       max_grad_norm=0.3, learning_rate=1e-2)
    learner = PPOLearner(config, discrete_plan)
    before = cell_weights(learner.network)
    rng = np.random.default_rng(2)
    batches = [ppo_batch(rng) for _ in range(3)]
    for batch in batches:
        learner._step(*batch, np.float32(0.2))
    after = cell_weights(learner.network)

    params = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
              for k, v in before.items()}
    optimizer = torch.optim.Adam(params.values(), lr=1e-2, eps=1e-5)

    def mlp(prefix, x):
        x = x @ params[f"{prefix}0.weight"].T + params[f"{prefix}0.bias"]
        x = torch.tanh(x) @ params[f"{prefix}2.weight"].T + params[f"{prefix}2.bias"]
        return torch.tanh(x) @ params[f"{prefix}4.weight"].T + params[f"{prefix}4.bias"]

    for obs, actions, old_log_prob, advantages, returns in batches:
        obs, old, adv, ret = (torch.tensor(a, dtype=torch.float64)
                              for a in (obs, old_log_prob, advantages, returns))
        log_probs = torch.log_softmax(mlp("policy.", obs), -1)
        log_prob = log_probs.gather(1, torch.tensor(actions, dtype=torch.long)[:, None])[:, 0]
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        ratio = torch.exp(log_prob - old)
        policy_loss = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean()
        value_loss = ((ret - mlp("value.", obs)[:, 0]) ** 2).mean()
        entropy = -(log_probs.exp() * log_probs).sum(-1).mean()
        loss = policy_loss + 0.5 * value_loss - 0.01 * entropy
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params.values(), 0.3)
        optimizer.step()
    for name, value in after.items():
        np.testing.assert_allclose(value, params[name].detach().numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=name)
    assert any(not np.allclose(after[k], before[k]) for k in before)


@pytest.mark.parametrize("double", [False, True])
def test_dqn_loss_matches_numpy(discrete_plan, double):
    config = DQNConfig(hidden_sizes=(16,), gamma=0.9, double=double)
    learner = DQNLearner(config, discrete_plan)
    rng = np.random.default_rng(3)
    # make the target differ from the online network
    for param in learner.target.get_parameters():
        param.assign_value(param.numpy() + rng.standard_normal(param.shape).astype(np.float32))
    n = 16
    obs, next_obs = (rng.standard_normal((n, 4)).astype(np.float32) for _ in range(2))
    actions = rng.integers(0, 3, n).astype(np.int32)
    rewards = rng.standard_normal(n).astype(np.float32)
    terminated = (rng.random(n) < 0.3).astype(np.float32)
    weights = rng.random(n).astype(np.float32)
    loss, errors = learner._loss(obs, actions, rewards, next_obs, terminated, weights)

    relu = lambda x: np.maximum(x, 0)  # noqa: E731
    online, target = cell_weights(learner.online), cell_weights(learner.target)
    q_next_target = numpy_mlp(target, "q.", next_obs, relu)
    chooser = numpy_mlp(online, "q.", next_obs, relu) if double else q_next_target
    next_q = q_next_target[np.arange(n), chooser.argmax(1)]
    y = rewards + 0.9 * (1 - terminated) * next_q
    q = numpy_mlp(online, "q.", obs, relu)[np.arange(n), actions]
    diff = q - y
    huber = np.where(np.abs(diff) < 1, 0.5 * diff ** 2, np.abs(diff) - 0.5)
    np.testing.assert_allclose(errors.numpy(), diff, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(float(loss), (weights * huber).mean(), rtol=1e-5)


def test_sac_losses_match_numpy(continuous_plan):
    config = SACConfig(hidden_sizes=(16, 16), gamma=0.9, initial_ent_coef=0.3)
    learner = SACLearner(config, continuous_plan)
    rng = np.random.default_rng(4)
    n = 8
    obs, next_obs = (rng.standard_normal((n, 3)).astype(np.float32) for _ in range(2))
    actions = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
    rewards = rng.standard_normal(n).astype(np.float32)
    terminated = (rng.random(n) < 0.3).astype(np.float32)
    noise, next_noise = (rng.standard_normal((n, 2)).astype(np.float32) for _ in range(2))
    alpha = np.float32(0.3)
    critic_loss = learner._critic_loss(obs, actions, rewards, next_obs, terminated, next_noise,
                                       alpha)
    actor_loss = learner._actor_loss(obs, noise, alpha)

    relu = lambda x: np.maximum(x, 0)  # noqa: E731
    actor, critic, target = (cell_weights(c) for c in (learner.actor, learner.critic,
                                                        learner.target))

    def sample(o, eps):
        features = relu(numpy_mlp(actor, "trunk.0.", o, relu))
        mean = features @ actor["mean.weight"].T + actor["mean.bias"]
        log_std = np.clip(features @ actor["log_std.weight"].T + actor["log_std.bias"], -20, 2)
        u = mean + np.exp(log_std) * eps
        a = np.tanh(u)
        log_prob = (-0.5 * eps ** 2 - log_std - 0.5 * np.log(2 * np.pi)).sum(-1)
        return a, log_prob - np.log(1 - a ** 2 + 1e-6).sum(-1)

    def q(weights, o, a):
        x = np.concatenate([o, a], -1)
        return (numpy_mlp(weights, "q1.", x, relu)[:, 0], numpy_mlp(weights, "q2.", x, relu)[:, 0])

    next_a, next_log_prob = sample(next_obs, next_noise)
    soft = np.minimum(*q(target, next_obs, next_a)) - 0.3 * next_log_prob
    y = rewards + 0.9 * (1 - terminated) * soft
    q1, q2 = q(critic, obs, actions)
    expected_critic = 0.5 * (((q1 - y) ** 2).mean() + ((q2 - y) ** 2).mean())
    a, log_prob = sample(obs, noise)
    expected_actor = (0.3 * log_prob - np.minimum(*q(critic, obs, a))).mean()
    np.testing.assert_allclose(float(critic_loss), expected_critic, rtol=1e-4)
    np.testing.assert_allclose(float(actor_loss), expected_actor, rtol=1e-4, atol=1e-5)
