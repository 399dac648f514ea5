"""Training runs, short enough for CI: PPO on CartPole improves its greedy return, a saved
policy reloads to the same returns, and DQN's, SAC's and A2C's learners do what they say."""

from __future__ import annotations

import numpy as np
import pytest

from mskernel.cli import main as mskernel_main
from mskernel_reinforcement.actor import Actor
from mskernel_reinforcement.algorithms.dqn import DQN, DQNConfig
from mskernel_reinforcement.algorithms.sac import SAC, SACConfig
from mskernel_reinforcement.environment import Environment
from mskernel_reinforcement.policy import cell_weights
from mskernel_reinforcement.trainer import Trainer, evaluate, load_policy

PPO_CARTPOLE = {
    "env": {"id": "CartPole-v1", "num_envs": 8},
    "algorithm": {"name": "ppo", "n_steps": 32, "batch_size": 256, "n_epochs": 10,
                  "gamma": 0.98, "gae_lambda": 0.8, "learning_rate": 1e-3},
    "evaluation": {"episodes": 20},
    "total_steps": 8192, "seed": 0,
}


def test_a_short_ppo_run_on_cartpole_improves_its_return(tmp_path):
    trainer = Trainer(PPO_CARTPOLE)
    before = trainer.evaluate().mean
    result = trainer.train()
    after = result.evaluations[-1].mean
    assert result.env_steps == 8192 and result.updates == 32
    assert after > max(100.0, 3 * before), (before, after)
    assert np.mean(result.recent_returns) > 40   # exploring returns rose too

    # the saved policy alone gives the same greedy returns
    trainer.save(tmp_path / "ppo.ckpt")
    policy, config, steps = load_policy(tmp_path / "ppo.ckpt")
    assert steps == 8192 and config == trainer.config
    again = evaluate(policy, config.env, 20, 10, seed=config.seed + 1_000_003)
    assert again.mean == pytest.approx(after)


def test_training_from_the_command_line(tmp_path, capsys):
    config = tmp_path / "a2c.toml"
    config.write_text('total_steps = 400\n[env]\nid = "CartPole-v1"\nnum_envs = 4\n'
                      '[algorithm]\nname = "a2c"\n[evaluation]\nepisodes = 4\nnum_envs = 2\n')
    assert mskernel_main(["rl", "train", str(config), "--quiet", "--save",
                          str(tmp_path / "a2c.ckpt")]) == 0
    out = capsys.readouterr().out
    assert "400 environment steps" in out and "over 4 episodes" in out
    assert mskernel_main(["rl", "evaluate", str(tmp_path / "a2c.ckpt"), "--episodes", "3"]) == 0
    assert "CartPole-v1: greedy return" in capsys.readouterr().out


def test_dqn_learns_from_replay_and_syncs_its_target(discrete_plan):
    config = DQNConfig(learning_starts=16, batch_size=16, train_freq=8, gradient_steps=4,
                       target_update_interval=32, hidden_sizes=(16,), learning_rate=1e-2,
                       prioritized=True)
    algorithm = DQN(config)
    with Environment("CartPole-v1", num_envs=2) as env:
        plan = type(discrete_plan)(env.spec, 1000, 2, 0)
        learner = algorithm.learner(plan)
        actor = Actor(env, algorithm.policy(plan), seed=0)
        steps = 0
        for _ in range(4):   # 16 environment steps per round: the target is due every 2nd
            online_before = cell_weights(learner.online)
            steps += 16
            metrics = learner.learn([actor.collect(8)], steps)
            if steps > 16:
                assert np.isfinite(metrics["loss"])
                target = cell_weights(learner.target)
                synced = steps % 32 == 0
                assert all(np.array_equal(target[k], online_before[k]) == synced for k in target)
            else:
                assert metrics == {}
        assert len(learner.buffer) == 64
        # sampled slots got new priorities (|TD error|), the rest keep the initial one
        priorities = learner.buffer.priorities(np.arange(64))
        assert len(np.unique(priorities)) > 8


def test_sac_tunes_its_entropy_and_averages_its_target(continuous_plan):
    algorithm = SAC(SACConfig(learning_starts=50, batch_size=32, hidden_sizes=(32, 32),
                              tau=0.1))
    with Environment("Pendulum-v1") as env:
        plan = type(continuous_plan)(env.spec, 1000, 1, 0)
        learner = algorithm.learner(plan)
        actor = Actor(env, algorithm.policy(plan), seed=0)
        for steps in range(1, 101):
            metrics = learner.learn([actor.collect(1)], steps)
    # 50 updates: the entropy coefficient moved down from 1 (the policy's entropy is above
    # the target of -1), the target critic moved towards the critic
    assert 0.9 < metrics["alpha"] < 1.0 and np.isfinite(metrics["critic_loss"])
    critic, target = cell_weights(learner.critic), cell_weights(learner.target)
    assert all(not np.array_equal(critic[k], target[k]) for k in critic)
    assert learner._step.cache_info().misses == 1
