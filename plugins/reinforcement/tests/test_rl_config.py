"""Configurations: files, validation errors, and algorithms registered from outside."""

from __future__ import annotations

import json

import pytest

from mskernel_reinforcement.algorithms import algorithm_class, register_algorithm
from mskernel_reinforcement.algorithms.ppo import PPO, PPOConfig
from mskernel_reinforcement.config import TrainerConfig, load_config

TOML = """
total_steps = 50_000
seed = 3

[env]
id = "CartPole-v1"
num_envs = 4

[algorithm]
name = "ppo"
n_steps = 32
batch_size = 64

[execution]
actors = 4
processes = 2
broadcast_interval = 2
"""


def test_a_toml_file_says_how_many_actors_run_in_how_many_processes(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text(TOML)
    config = load_config(path)
    assert isinstance(config.algorithm, PPOConfig)
    assert config.algorithm.batch_size == 64 and config.algorithm.n_epochs == 10  # a default
    assert (config.execution.actors, config.execution.processes) == (4, 2)
    # JSON round trip, with the algorithm's own fields
    again = tmp_path / "run.json"
    again.write_text(config.to_json())
    assert load_config(again) == config
    assert json.loads(config.to_json())["algorithm"]["n_steps"] == 32


@pytest.mark.parametrize("change, message", [
    ({"algorithm": {"name": "ppo", "n_step": 3}}, "n_step"),
    ({"algorithm": {"name": "reinforce"}}, "unknown algorithm 'reinforce'"),
    ({"algorithm": {"n_steps": 3}}, "needs a 'name'"),
    ({"execution": {"actors": 2, "processes": 3}}, "processes \\(3\\) cannot exceed actors"),
    ({"env": {"id": "CartPole-v1", "vectorization": "threads"}}, "vectorization"),
    ({"total_steps": 0}, "total_steps"),
])
def test_wrong_settings_are_named(change, message):
    data = {"env": {"id": "CartPole-v1"}, "algorithm": {"name": "dqn"}, "total_steps": 10}
    with pytest.raises(ValueError, match=message):
        TrainerConfig.model_validate({**data, **change})


def test_file_errors_name_the_file(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('total_steps = 10\n[env]\nid = "CartPole-v1"\n[algorithm]\nname = "a2c"\n'
                    'gamma = 2\n')
    with pytest.raises(ValueError, match="(?s)bad.toml.*algorithm.gamma"):
        load_config(path)
    with pytest.raises(ValueError, match="\\.json, \\.toml or \\.yaml"):
        load_config(tmp_path / "run.ini")


class TunedPPOConfig(PPOConfig):
    name: str = "tuned-ppo"


class TunedPPO(PPO):
    """An algorithm written outside the plugin, configured by name like the built-in ones."""

    name = "tuned-ppo"
    Config = TunedPPOConfig


def test_an_algorithm_registered_from_outside_is_configured_by_name():
    register_algorithm(TunedPPO)
    assert algorithm_class("tuned-ppo") is TunedPPO
    config = TrainerConfig.model_validate({"env": {"id": "CartPole-v1"}, "total_steps": 10,
                                           "algorithm": {"name": "tuned-ppo", "n_epochs": 2}})
    assert type(config.algorithm) is TunedPPOConfig and config.algorithm.n_epochs == 2
    with pytest.raises(ValueError, match="already registered"):
        register_algorithm(type("Other", (PPO,), {"name": "tuned-ppo"}))
    with pytest.raises(ValueError, match="already registered"):
        register_algorithm(type("FakePPO", (PPO,), {"name": "ppo"}))
