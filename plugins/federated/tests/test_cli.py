"""``mskernel federated`` through the core's CLI hook."""

from __future__ import annotations

from pathlib import Path

import pytest

from mskernel.cli import main


def test_the_commands_are_listed(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["federated", "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for command in ("server", "client", "simulate"):
        assert command in out


def test_simulate_checks_the_clients_against_the_configuration(tmp_path: Path) -> None:
    config = tmp_path / "run.toml"
    config.write_text('task = "tiny_task:task"\n[strategy]\nmin_fit_clients = 5\n')
    with pytest.raises(SystemExit, match="--clients 3 is fewer than strategy.min_fit_clients"):
        main(["federated", "simulate", "--clients", "3", "--config", str(config)])


def test_a_bad_configuration_names_the_field(tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text("task: tiny_task:task\nrounds: 0\n")
    with pytest.raises(SystemExit, match=r"run.yaml: 1 validation error .*\nrounds\n"):
        main(["federated", "simulate", "--clients", "2", "--config", str(config)])
