"""``mskernel.rl``: reinforcement learning on mskernel.

Components — :class:`Environment` (gymnasium environments stepped together), :class:`Policy`
and its kinds, :class:`Actor` and :class:`Trajectory`, :class:`ReplayBuffer` and
:class:`PrioritizedReplayBuffer`, :class:`Learner`; algorithms — :class:`PPO`, :class:`A2C`,
:class:`DQN`, :class:`SAC` (and :func:`register_algorithm` for more); running them —
:class:`Trainer`, configured by a :class:`TrainerConfig` (:func:`load_config` reads one from a
file), with :func:`evaluate` and :func:`load_policy` for trained policies.
"""

from __future__ import annotations

from .actor import Actor, Trajectory
from .algorithms import (
    Algorithm, Learner, Plan, algorithm_class, algorithm_names, register_algorithm,
)
from .algorithms.a2c import A2C, A2CConfig
from .algorithms.dqn import DQN, DQNConfig
from .algorithms.ppo import PPO, PPOConfig
from .algorithms.sac import SAC, SACConfig
from .config import (
    AlgorithmConfig, EnvConfig, EvaluationConfig, ExecutionConfig, TrainerConfig, load_config,
)
from .distributions import (
    categorical_entropy, categorical_log_prob, categorical_sample, gaussian_log_prob,
    squashed_gaussian,
)
from .environment import EnvError, EnvSpec, Environment, Episodes, Step
from .execution import ActorError, ActorFailure, ActorGroup
from .networks import ActorCritic, QNetwork, SquashedGaussianActor, TwinQ, mlp
from .policy import (
    CategoricalPolicy, EpsilonGreedyPolicy, LinearSchedule, Policy, SquashedGaussianPolicy,
)
from .replay import Batch, PrioritizedReplayBuffer, ReplayBuffer
from .returns import gae
from .trainer import Evaluation, SavedPolicy, Trainer, TrainingResult, evaluate, load_policy
from .updates import clip_by_global_norm, update_target

__all__ = [
    # components
    "Actor", "Batch", "EnvError", "EnvSpec", "Environment", "Episodes", "Learner", "Policy",
    "PrioritizedReplayBuffer", "ReplayBuffer", "Step", "Trajectory",
    # policies, networks, distributions, returns, update pieces
    "ActorCritic", "CategoricalPolicy", "EpsilonGreedyPolicy", "LinearSchedule", "QNetwork",
    "SquashedGaussianActor", "SquashedGaussianPolicy", "TwinQ", "categorical_entropy",
    "categorical_log_prob", "categorical_sample", "clip_by_global_norm", "gae",
    "gaussian_log_prob", "mlp", "squashed_gaussian", "update_target",
    # algorithms
    "A2C", "A2CConfig", "Algorithm", "DQN", "DQNConfig", "PPO", "PPOConfig", "Plan", "SAC",
    "SACConfig", "algorithm_class", "algorithm_names", "register_algorithm",
    # running
    "ActorError", "ActorFailure", "ActorGroup", "AlgorithmConfig",
    "EnvConfig", "Evaluation", "EvaluationConfig", "ExecutionConfig", "SavedPolicy", "Trainer",
    "TrainerConfig", "TrainingResult", "evaluate", "load_config", "load_policy",
]
