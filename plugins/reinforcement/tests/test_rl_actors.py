"""Actors in processes of their own: several feed one learner, receive its weights, and a
process that is killed, raises or hangs is reported and replaced — never waited on forever."""

from __future__ import annotations

import numpy as np
import pytest

from mskernel_reinforcement.algorithms import Plan
from mskernel_reinforcement.algorithms.ppo import PPO, PPOConfig
from mskernel_reinforcement.config import EnvConfig
from mskernel_reinforcement.environment import EnvSpec
from mskernel_reinforcement.execution import ActorError, ActorSetup, ProcessActors
from mskernel_reinforcement.execution.processes import spread
from mskernel_reinforcement.trainer import Trainer

from conftest import log_softmax, numpy_mlp

CARTPOLE = EnvSpec((4,), "discrete", action_count=2)


def failing_run(tmp_path, mode: str, marker: bool = True, **execution) -> dict:
    kwargs = {"mode": mode, "marker": str(tmp_path / "failed") if marker else "",
              "at_step": 12}
    return {"env": {"id": "rl_test_envs:FailingCartPole-v0", "num_envs": 2, "kwargs": kwargs},
            "algorithm": {"name": "ppo", "n_steps": 8, "batch_size": 16, "n_epochs": 1,
                          "hidden_sizes": [8]},
            "evaluation": {"episodes": 2, "num_envs": 2},
            "execution": {"actors": 2, "processes": 2, **execution},
            "total_steps": 96, "seed": 0}


def test_spread():
    assert spread(5, 2) == [(0, 1, 2), (3, 4)] or spread(5, 2) == [(0, 1), (2, 3, 4)]
    assert spread(4, 4) == [(0,), (1,), (2,), (3,)]
    assert sum(len(p) for p in spread(7, 3)) == 7


def test_actor_processes_collect_with_the_weights_they_were_sent():
    config = PPOConfig(n_steps=8, batch_size=16, hidden_sizes=(8,))
    plan = Plan(CARTPOLE, 1000, 3 * 2, 0)
    setup = ActorSetup(PPO, config, plan, EnvConfig(id="CartPole-v1", num_envs=2), seed=0)
    weights = PPO(config).learner(plan).policy_weights()
    with ProcessActors(setup, actors=3, processes=2, timeout=120, startup_timeout=300,
                       max_restarts=0) as actors:
        actors.broadcast(weights)
        trajectories = actors.collect(8, env_steps=0)
    assert [t.actor for t in trajectories] == [0, 1, 2]
    assert all(t.observations.shape == (8, 2, 4) for t in trajectories)
    firsts = [t.observations[0, 0].tobytes() for t in trajectories]
    assert len(set(firsts)) == 3          # each actor is seeded differently
    for t in trajectories:                # the log-probabilities are those of the weights sent
        obs = t.observations.reshape(-1, 4)
        log_probs = log_softmax(numpy_mlp(weights, "policy.", obs))
        np.testing.assert_allclose(t.extras["log_prob"].ravel(),
                                   log_probs[np.arange(len(obs)), t.actions.ravel()],
                                   rtol=1e-4, atol=1e-5)
    assert actors.failures == []


def test_a_killed_actor_process_is_reported_and_replaced(tmp_path, caplog):
    result = Trainer(failing_run(tmp_path, "kill", broadcast_interval=2)).train()
    assert "killed by signal 9; replaced by a new process" in caplog.text
    assert result.env_steps == 96 and result.updates == 3
    (failure,) = result.failures
    assert failure.replaced and failure.reason == "it was killed by signal 9"
    assert failure.worker in (0, 1) and failure.actors == (failure.worker,)


def test_an_actor_that_raises_is_reported_with_its_traceback(tmp_path):
    result = Trainer(failing_run(tmp_path, "raise")).train()
    (failure,) = result.failures
    assert "Traceback" in failure.reason and "the simulator lost its state" in failure.reason
    assert result.env_steps == 96


def test_a_hung_actor_is_killed_at_its_deadline(tmp_path):
    result = Trainer(failing_run(tmp_path, "hang", actor_timeout=3)).train()
    (failure,) = result.failures
    assert failure.reason == "no trajectories within actor_timeout = 3 s"
    assert failure.replaced and result.env_steps == 96


def test_actors_that_keep_failing_end_the_run(tmp_path):
    with pytest.raises(ActorError, match="max_restarts = 1"):
        Trainer(failing_run(tmp_path, "kill", marker=False, actors=1, processes=1,
                            max_restarts=1)).train()
