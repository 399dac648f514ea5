"""The configuration of a training run: which environment, which algorithm with which
hyperparameters, and how it is executed — how many actors, in how many processes.

Every object is a pydantic model: validated when built, typed, and loadable from a file
(:func:`load_config`: JSON or TOML; YAML when PyYAML is installed)::

    # ppo_cartpole.toml
    total_steps = 100_000
    seed = 0

    [env]
    id = "CartPole-v1"
    num_envs = 8

    [algorithm]
    name = "ppo"
    n_steps = 32
    batch_size = 256

    [execution]
    actors = 4          # four actors ...
    processes = 2       # ... in two processes, two actors each

The algorithm section is validated by the configuration class its ``name`` registered
(:func:`~mskernel_reinforcement.algorithms.register_algorithm`), so an algorithm written
outside this plugin is configured the same way.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, field_validator, model_validator

__all__ = [
    "AlgorithmConfig", "EnvConfig", "EvaluationConfig", "ExecutionConfig", "TrainerConfig",
    "load_config",
]


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EnvConfig(_Config):
    """The environment each actor steps: a gymnasium id (``"CartPole-v1"``), ``num_envs``
    copies stepped together by one vector environment — ``"sync"`` (in the actor's process)
    or ``"async"`` (one subprocess per copy) — and keyword arguments for
    ``gymnasium.make``."""

    id: str
    num_envs: int = Field(1, ge=1)
    vectorization: Literal["sync", "async"] = "sync"
    kwargs: dict[str, Any] = Field(default_factory=dict)


class ExecutionConfig(_Config):
    """How the actors run.  ``actors`` actors, each with its own vector environment, feed one
    learner.  With ``processes = 0`` they run in the learner's process; otherwise they are
    spread over that many processes, started by ``launcher``: ``"multiprocessing"``,
    ``"mpi"`` (the ranks of ``mskernel run -n N`` / ``mpirun``: rank 0 learns, the others
    act), or ``"auto"`` (MPI when the program was started on several MPI ranks).

    The learner sends its weights to the actors every ``broadcast_interval`` updates.  An actor
    process that dies, raises, takes longer than ``actor_timeout`` seconds for one collection
    or ``startup_timeout`` seconds to start is reported and replaced (a fresh process with
    the last weights), at most ``max_restarts`` times over the run."""

    actors: int = Field(1, ge=1)
    processes: int = Field(0, ge=0)
    launcher: Literal["auto", "multiprocessing", "mpi"] = "auto"
    broadcast_interval: int = Field(1, ge=1)
    actor_timeout: float = Field(300.0, gt=0)
    startup_timeout: float = Field(300.0, gt=0)
    max_restarts: int = Field(3, ge=0)

    @model_validator(mode="after")
    def _processes_hold_actors(self) -> "ExecutionConfig":
        if self.processes > self.actors:
            raise ValueError(f"processes ({self.processes}) cannot exceed actors "
                             f"({self.actors}): each process runs at least one actor")
        return self


class EvaluationConfig(_Config):
    """Greedy evaluation during training: every ``interval`` environment steps (0: only at the
    end), ``episodes`` episodes on ``num_envs`` environments stepped together.  With
    ``target`` set, training stops at the first evaluation whose mean return reaches it (the
    environment is *solved*).  Evaluation steps are not counted as training steps."""

    interval: int = Field(0, ge=0)
    episodes: int = Field(100, ge=1)
    num_envs: int = Field(10, ge=1)
    target: Optional[float] = None


class AlgorithmConfig(_Config):
    """Base of the algorithms' configurations: ``name`` selects the algorithm; each
    algorithm's subclass adds its hyperparameters."""

    name: str


class TrainerConfig(_Config):
    """A whole run: ``total_steps`` environment steps (over all actors and their
    environments) of ``algorithm`` on ``env``, executed as ``execution`` says."""

    env: EnvConfig
    algorithm: SerializeAsAny[AlgorithmConfig]
    execution: ExecutionConfig = Field(default_factory=ExecutionConfig)
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)
    total_steps: int = Field(ge=1)
    seed: int = 0

    @field_validator("algorithm", mode="before")
    @classmethod
    def _algorithm_config(cls, value: Any) -> Any:
        from .algorithms import algorithm_class

        if isinstance(value, AlgorithmConfig) and type(value) is not AlgorithmConfig:
            return value
        data = value.model_dump() if isinstance(value, AlgorithmConfig) else value
        if not isinstance(data, dict) or "name" not in data:
            raise ValueError("the algorithm section needs a 'name' (such as 'ppo' or 'dqn')")
        return algorithm_class(data["name"]).Config.model_validate(data)

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)


def load_config(source: Union[str, Path, dict[str, Any]]) -> TrainerConfig:
    """A :class:`TrainerConfig` from a file (``.json``, ``.toml``, ``.yaml``/``.yml``) or a
    dict; a validation error names the file and each wrong field."""
    if isinstance(source, dict):
        return TrainerConfig.model_validate(source)
    path = Path(source)
    suffix = path.suffix.lower()
    if suffix not in (".json", ".toml", ".yaml", ".yml"):
        raise ValueError(f"{path}: a configuration file is .json, .toml or .yaml, "
                         f"not {suffix or 'a file without a suffix'}")
    text = path.read_text(encoding="utf-8")
    if suffix == ".json":
        data = json.loads(text)
    elif suffix == ".toml":
        data = tomllib.loads(text)
    else:
        try:
            import yaml
        except ImportError:
            raise ValueError(f"{path}: reading YAML needs PyYAML (pip install pyyaml); "
                             "JSON and TOML need nothing") from None
        data = yaml.safe_load(text)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a table of settings, got {type(data).__name__}")
    try:
        return TrainerConfig.model_validate(data)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from exc
