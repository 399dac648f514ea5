"""The run configuration: TOML, YAML and JSON files, validation with clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from mskernel_federated.config import FederatedConfig, load_config

TOML = """
task = "tiny_task:task"
rounds = 4
[strategy]
name = "fedprox"
proximal_mu = 0.01
[secagg]
enabled = true
num_shares = 7
reconstruction_threshold = 4
"""

YAML = """
task: tiny_task:task
rounds: 4
strategy: {name: fedprox, proximal_mu: 0.01}
secagg: {enabled: true, num_shares: 7, reconstruction_threshold: 4}
"""


def test_toml_and_yaml_give_the_same_configuration(tmp_path: Path) -> None:
    (tmp_path / "run.toml").write_text(TOML)
    (tmp_path / "run.yaml").write_text(YAML)
    from_toml = load_config(tmp_path / "run.toml")
    assert from_toml == load_config(tmp_path / "run.yaml")
    assert from_toml.strategy.proximal_mu == 0.01 and from_toml.secagg.num_shares == 7
    assert FederatedConfig.from_json(from_toml.to_json()) == from_toml
    assert load_config(tmp_path / "run.toml", rounds=9).rounds == 9


def test_bad_settings_are_named(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="must be less than num_shares"):
        FederatedConfig.model_validate({"task": "m:t", "secagg": {
            "enabled": True, "num_shares": 5, "reconstruction_threshold": 5}})
    with pytest.raises(ValidationError, match="top-k updates cannot be combined"):
        FederatedConfig.model_validate({"task": "m:t", "secagg": {"enabled": True},
                                        "compression": {"kind": "topk"}})
    with pytest.raises(ValidationError, match="cannot clip it"):
        FederatedConfig.model_validate({"task": "m:t", "secagg": {"enabled": True},
                                        "privacy": {"mode": "central-server"}})
    with pytest.raises(ValidationError, match="Extra inputs"):
        FederatedConfig.model_validate({"task": "m:t", "strategy": {"nmae": "fedavg"}})
    (tmp_path / "run.ini").write_text("")
    with pytest.raises(ValueError, match="a .toml, .yaml or .json file"):
        load_config(tmp_path / "run.ini")
