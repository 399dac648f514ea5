"""The configuration of a federated run: pydantic models, loadable from TOML or YAML.

A file holds the sections below at its top level (``[strategy]``, ``[secagg]`` ...); every
field has a default, so an empty file plus ``task`` is a run::

    task = "fashion_task:task"     # module:attribute of a Task (see mskernel_federated.task)
    rounds = 10
    [strategy]
    name = "fedavg"
    [secagg]
    enabled = true
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any, Literal, Optional

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StrategyConfig(_Section):
    """How the server samples clients and combines their models."""

    name: Literal["fedavg", "fedprox", "fedadam"] = "fedavg"
    fraction_fit: float = Field(default=1.0, gt=0, le=1)
    min_fit_clients: int = Field(default=2, ge=1)
    min_available_clients: int = Field(default=2, ge=1)
    proximal_mu: float = Field(default=0.0, ge=0, description="FedProx's μ")
    server_learning_rate: float = Field(default=0.1, gt=0, description="FedAdam's η")
    server_beta_1: float = Field(default=0.9, ge=0, lt=1)
    server_beta_2: float = Field(default=0.99, ge=0, lt=1)
    server_tau: float = Field(default=1e-9, gt=0, description="FedAdam's adaptivity τ")


class ClientConfig(_Section):
    """Local training on each client."""

    local_epochs: int = Field(default=1, ge=1)
    batch_size: int = Field(default=32, ge=1)
    learning_rate: float = Field(default=0.01, gt=0)
    time_budget_s: Optional[float] = Field(
        default=None, gt=0, description="stop local training after this many seconds and "
        "send what was learnt so far (a straggler's partial work)")
    jit: bool = True


class SecAggConfig(_Section):
    """Flower's SecAgg+: the server learns only the sum of the clients' models."""

    enabled: bool = False
    num_shares: int = Field(default=5, ge=3)
    reconstruction_threshold: int = Field(default=3, ge=2)
    clipping_range: float = Field(default=8.0, gt=0)
    quantization_range: int = Field(default=2**26, gt=0)
    max_weight: float = Field(default=100_000.0, gt=0)

    @model_validator(mode="after")
    def _threshold_below_shares(self) -> "SecAggConfig":
        if self.enabled and self.reconstruction_threshold >= self.num_shares:
            raise ValueError(f"secagg: reconstruction_threshold ({self.reconstruction_threshold})"
                             f" must be less than num_shares ({self.num_shares})")
        return self


class PrivacyConfig(_Section):
    """Differential privacy of the global model.

    ``central``: clients clip their update to ``clipping_norm`` and the server adds Gaussian
    noise of standard deviation ``noise_multiplier * clipping_norm / sampled clients`` to the
    mean (works under SecAgg+).  ``central-server``: the server clips as well.  The accountant
    reports ε at ``delta`` after each round.
    """

    mode: Literal["off", "central", "central-server"] = "off"
    noise_multiplier: float = Field(default=1.0, ge=0)
    clipping_norm: float = Field(default=1.0, gt=0)
    delta: float = Field(default=1e-5, gt=0, lt=1)


class CompressionConfig(_Section):
    """Top-k sparsified updates with error feedback (what is not sent is kept and added to
    the next round's update)."""

    kind: Literal["none", "topk"] = "none"
    ratio: float = Field(default=0.1, gt=0, le=1, description="fraction of entries sent")


class ServerConfig(_Section):
    """Rounds, time limits, validation, evaluation and checkpoints."""

    round_timeout_s: Optional[float] = Field(
        default=None, gt=0, description="a round closes after this long; late clients "
        "(stragglers) are left out of it")
    max_update_norm: Optional[float] = Field(
        default=None, gt=0, description="reject a client model whose distance to the global "
        "model exceeds this")
    output_dir: Optional[str] = Field(
        default=None, description="where the server writes history.json and the global "
        "model's checkpoints (one per round, atomic)")
    evaluate: bool = Field(default=True, description="evaluate the global model on the "
                           "task's test data after each round")


class RuntimeConfig(_Section):
    """The Flower components a run uses (``module:attribute``); the defaults are this
    package's apps."""

    server_app: str = "mskernel_federated.apps:server_app"
    client_app: str = "mskernel_federated.apps:client_app"


class FederatedConfig(_Section):
    """A federated run."""

    task: str = Field(description="module:attribute naming a Task")
    rounds: int = Field(default=3, ge=1)
    seed: int = Field(default=0, ge=0)
    strategy: StrategyConfig = StrategyConfig()
    client: ClientConfig = ClientConfig()
    secagg: SecAggConfig = SecAggConfig()
    privacy: PrivacyConfig = PrivacyConfig()
    compression: CompressionConfig = CompressionConfig()
    server: ServerConfig = ServerConfig()
    runtime: RuntimeConfig = RuntimeConfig()

    @model_validator(mode="after")
    def _compatible(self) -> "FederatedConfig":
        if self.secagg.enabled and self.compression.kind != "none":
            raise ValueError("compression: SecAgg+ sums dense masked vectors; top-k updates "
                             "cannot be combined with secagg.enabled")
        if self.secagg.enabled and self.privacy.mode == "central-server":
            raise ValueError("privacy: under SecAgg+ the server never sees a client's update "
                             "and cannot clip it; use mode = \"central\" (clients clip)")
        if self.compression.kind != "none" and self.privacy.mode != "off":
            raise ValueError("compression: the DP wrappers clip dense updates; choose one of "
                             "compression and privacy")
        return self

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str) -> "FederatedConfig":
        return cls.model_validate_json(text)


def load_config(path: str | Path, **overrides: Any) -> FederatedConfig:
    """Read a :class:`FederatedConfig` from a ``.toml``, ``.yaml``/``.yml`` or ``.json``
    file; ``overrides`` replace top-level fields (``rounds=5``)."""
    path = Path(path)
    text = path.read_text()
    suffix = path.suffix.lower()
    if suffix == ".toml":
        data = tomllib.loads(text)
    elif suffix in (".yaml", ".yml"):
        data = yaml.safe_load(text) or {}
    elif suffix == ".json":
        data = json.loads(text)
    else:
        raise ValueError(f"{path}: a federated configuration is a .toml, .yaml or .json file")
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a table of settings, got {type(data).__name__}")
    return FederatedConfig.model_validate({**data, **overrides})
