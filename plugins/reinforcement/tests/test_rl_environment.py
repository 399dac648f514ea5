"""Environment: gymnasium ids, instances, factories and vector environments, stepped as
arrays, with true next observations and finished episodes."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from mskernel_reinforcement.environment import EnvError, EnvSpec, Environment


@pytest.mark.parametrize("vectorization", ["sync", "async"])
def test_steps_copies_together_and_keeps_final_observations(vectorization):
    with Environment("CartPole-v1", num_envs=3, vectorization=vectorization, seed=0) as env:
        assert env.spec == EnvSpec((4,), "discrete", action_count=2)
        obs = env.reset()
        assert obs.shape == (3, 4) and obs.dtype == np.float32
        ended = 0
        for _ in range(60):
            step = env.step(np.ones(3, np.int64))   # always push right: episodes end fast
            done = step.terminated | step.truncated
            # a finished copy is reset in the same step: its next observation is the final
            # one (out of bounds), its observation to act on the reset one
            for i in np.flatnonzero(done):
                assert not np.allclose(step.next_observations[i], step.observations[i])
                assert abs(step.next_observations[i, 2]) > 0.2 or abs(
                    step.next_observations[i, 0]) > 2.4
            np.testing.assert_array_equal(step.next_observations[~done], step.observations[~done])
            ended += int(done.sum())
        episodes = env.pop_episodes()
        assert len(episodes.returns) == ended > 0
        np.testing.assert_array_equal(episodes.returns, episodes.lengths)  # reward 1 per step
        assert set(episodes.envs.tolist()) <= {0, 1, 2}
        assert len(env.pop_episodes().returns) == 0


def test_same_seed_same_observations():
    a = Environment("CartPole-v1", num_envs=2, seed=5)
    b = Environment("CartPole-v1", num_envs=2, seed=5)
    np.testing.assert_array_equal(a.reset(), b.reset())
    np.testing.assert_array_equal(a.step(np.array([0, 1])).observations,
                                  b.step(np.array([0, 1])).observations)


def test_an_instance_a_factory_and_a_vector_env():
    with Environment(gym.make("Pendulum-v1")) as env:
        assert env.spec.action_kind == "continuous"
        assert env.spec.action_low == (-2.0,) and env.spec.action_high == (2.0,)
        step = env.step(np.zeros((1, 1), np.float32))
        assert step.rewards.shape == (1,)
    with Environment(lambda: gym.make("CartPole-v1"), num_envs=2) as env:
        assert env.num_envs == 2
    vector = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1")] * 2,
                                      autoreset_mode=AutoresetMode.SAME_STEP)
    with Environment(vector) as env:
        assert env.num_envs == 2


def test_what_cannot_be_stepped_is_refused_with_the_reason():
    with pytest.raises(EnvError, match="AutoresetMode.SAME_STEP"):
        Environment(gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1")]))
    with pytest.raises(EnvError, match="pass a factory"):
        Environment(gym.make("CartPole-v1"), num_envs=2)
    with pytest.raises(EnvError, match="1-d Box"):
        EnvSpec.from_spaces(gym.spaces.Box(0, 1, (2, 2)), gym.spaces.Discrete(2))
    with pytest.raises(EnvError, match="Discrete or a Box"):
        EnvSpec.from_spaces(gym.spaces.Box(0, 1, (2,)), gym.spaces.MultiBinary(3))
    with pytest.raises(EnvError, match="bounded"):
        EnvSpec.from_spaces(gym.spaces.Box(0, 1, (2,)), gym.spaces.Box(-np.inf, np.inf, (1,)))
