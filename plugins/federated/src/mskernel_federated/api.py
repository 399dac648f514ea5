"""``mskernel.federated``: federated learning on Flower (see :mod:`mskernel_federated`)."""

from __future__ import annotations

from .config import (
    ClientConfig, CompressionConfig, FederatedConfig, PrivacyConfig, RuntimeConfig,
    SecAggConfig, ServerConfig, StrategyConfig, load_config,
)
from .privacy import PrivacyAccountant, noise_for_epsilon
from .task import Task, load_task
from .weights import UpdateError, get_weights, set_weights

__all__ = [
    "ClientConfig", "CompressionConfig", "FederatedConfig", "PrivacyAccountant",
    "PrivacyConfig", "RuntimeConfig", "SecAggConfig", "ServerConfig", "StrategyConfig", "Task",
    "UpdateError", "get_weights", "load_config", "load_task", "noise_for_epsilon",
    "set_weights",
]
