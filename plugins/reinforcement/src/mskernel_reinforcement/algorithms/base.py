"""What an algorithm is: a :class:`Learner` that turns trajectories into updates, the
:class:`~mskernel_reinforcement.policy.Policy` its actors run, and a configuration class.

An algorithm is written once, against these two classes; the
:class:`~mskernel_reinforcement.trainer.Trainer` decides where its actors run (in the
learner's process or in others) and moves trajectories and weights between them::

    class MyAlgorithm(Algorithm):
        name = "mine"
        Config = MyConfig                    # a subclass of AlgorithmConfig

        @property
        def steps_per_collect(self): ...     # steps of each environment between updates
        def policy(self, plan): ...          # a new Policy (built in every actor process)
        def learner(self, plan): ...         # the Learner (built once, in the learner's process)

    register_algorithm(MyAlgorithm)          # now {"algorithm": {"name": "mine", ...}} works

The policy must be buildable from the configuration and the :class:`Plan` alone, in any
process: actor processes build their own and receive the learner's weights.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np
from mskernel import nn

from ..actor import Trajectory
from ..config import AlgorithmConfig
from ..environment import EnvSpec
from ..policy import Policy, cell_weights

__all__ = ["Algorithm", "Learner", "Plan"]


@dataclass(frozen=True)
class Plan:
    """What the components of a run are built for: the environment's ``spec``, the run's
    ``total_steps``, the environments stepped between two updates (``envs``: actors ×
    copies per actor) and the run's ``seed``."""

    spec: EnvSpec
    total_steps: int
    envs: int
    seed: int


class Learner(ABC):
    """Owns the trained networks, their optimizers and the compiled update step."""

    @abstractmethod
    def learn(self, trajectories: Sequence[Trajectory], env_steps: int) -> dict[str, float]:
        """Update from the actors' latest trajectories (one per actor, of equal length);
        ``env_steps`` counts the run's environment steps including these.  Returns metrics
        to log (losses, ...)."""

    @property
    @abstractmethod
    def acting_network(self) -> nn.Cell:
        """The network whose weights the actors' policies run."""

    @property
    def state(self) -> nn.Cell:
        """Everything a checkpoint of the learner holds (networks and optimizers)."""
        return self.acting_network

    def policy_weights(self) -> dict[str, np.ndarray]:
        """The acting network's weights, as sent to actors."""
        return cell_weights(self.acting_network)


class Algorithm(ABC):
    """An algorithm: its configuration, its policy and its learner (see the module
    docstring)."""

    name: ClassVar[str]
    Config: ClassVar[type[AlgorithmConfig]]
    #: ``"discrete"`` and/or ``"continuous"``: the action spaces it handles
    action_kinds: ClassVar[tuple[str, ...]] = ("discrete",)

    def __init__(self, config: AlgorithmConfig | Mapping[str, Any]) -> None:
        if not isinstance(config, self.Config):
            data = config.model_dump() if isinstance(config, AlgorithmConfig) else dict(config)
            data.setdefault("name", self.name)
            config = self.Config.model_validate(data)
        self.config: Any = config

    @property
    @abstractmethod
    def steps_per_collect(self) -> int:
        """Steps each environment takes between two updates."""

    @abstractmethod
    def policy(self, plan: Plan) -> Policy:
        """A new policy for an actor (its weights are replaced by the learner's)."""

    @abstractmethod
    def learner(self, plan: Plan) -> Learner:
        """The learner of a run."""

    def check(self, spec: EnvSpec) -> None:
        """Raise a clear error if this algorithm cannot act in ``spec``'s action space."""
        if spec.action_kind not in self.action_kinds:
            raise ValueError(f"{self.name} handles {' and '.join(self.action_kinds)} actions; "
                             f"this environment's are {spec.action_kind}")
