"""The server side of horizontal FL, run inside Flower's ``ServerApp``.

:func:`run_server` builds the task's model for the initial weights, Flower's strategy
(FedAvg, FedProx or FedAdam) wrapped in its DP wrapper when privacy is on and in the
:class:`~mskernel_federated.guard.GuardedStrategy` gate, and runs Flower's default workflow
(SecAgg+ for the fit stage when enabled).  After each round the global model is evaluated
on the task's test data and checkpointed with ``mskernel.save_checkpoint`` (atomic); the
history (per round: accuracy, loss, clients, rejections, ε, seconds, bytes) is written to
``history.json`` in ``server.output_dir``.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any, Optional

import numpy as np
from flwr.common import ndarrays_to_parameters
from flwr.server import LegacyContext, ServerConfig as FlowerServerConfig
from flwr.server.strategy import FedAdam, FedAvg, FedProx
from flwr.server.workflow import DefaultWorkflow
from flwr.server.workflow.constant import MAIN_CONFIGS_RECORD, Key
from flwr.server.workflow.default_workflows import default_fit_workflow

import mskernel
from mskernel import train
from mskernel_sdk import write_atomically

from .config import FederatedConfig
from .guard import GuardedStrategy
from .privacy import PrivacyAccountant, wrap_strategy
from .secagg import SecAggPlus, SecureAggregationError
from .task import Task, load_task
from .weights import get_weights, set_weights

ROUND_KEY = Key.CURRENT_ROUND
log = logging.getLogger("flwr")  # the log Flower streams to `flwr run --stream`


class GlobalModel:
    """The server's copy of the model: evaluation on the task's test data and atomic
    checkpoints of each round's global weights."""

    def __init__(self, task: Task, config: FederatedConfig) -> None:
        mskernel.random.set_seed(config.seed)
        self.task = task
        self.net = task.model()
        self.output_dir = (Path(config.server.output_dir) if config.server.output_dir
                           else None)
        self.test_data = (task.test_data(max(config.client.batch_size, 256))
                          if config.server.evaluate else None)
        metrics = {**task.metrics(), "loss": train.Loss()}
        self.model = (None if self.test_data is None
                      else train.Model(self.net, task.loss(), metrics=metrics))

    def initial_weights(self) -> list[np.ndarray]:
        return get_weights(self.net)

    def evaluate(self, server_round: int, arrays: list[np.ndarray], _: dict[str, Any]
                 ) -> Optional[tuple[float, dict[str, Any]]]:
        """Flower's ``evaluate_fn``: load, checkpoint, evaluate."""
        set_weights(self.net, arrays)
        if self.output_dir is not None:
            self.output_dir.mkdir(parents=True, exist_ok=True)
            mskernel.save_checkpoint(self.net, str(self.output_dir / "global.ckpt"))
        if self.model is None:
            return None
        results = self.model.eval(self.test_data)
        metrics = {k: float(v) for k, v in results.items()}
        log.info("round %d: global model %s", server_round,
                 ", ".join(f"{k} {v:.4f}" for k, v in metrics.items()))
        return metrics.get("loss", math.nan), metrics


def mean_metrics(results: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
    """The clients' fit metrics averaged (unweighted), plus the number of replies."""
    keys = {k for _, m in results for k, v in m.items() if isinstance(v, (int, float))}
    out: dict[str, Any] = {k: float(np.mean([m[k] for _, m in results if k in m]))
                           for k in sorted(keys) if k != "partition_id"}
    out["clients"] = len(results)
    return out


def build_strategy(config: FederatedConfig, initial: list[np.ndarray],
                   evaluate_fn: Any) -> Any:
    """Flower's strategy for ``config.strategy`` (not yet wrapped)."""
    s = config.strategy
    common: dict[str, Any] = dict(
        fraction_fit=s.fraction_fit, fraction_evaluate=0.0, min_fit_clients=s.min_fit_clients,
        min_evaluate_clients=0, min_available_clients=s.min_available_clients,
        evaluate_fn=evaluate_fn, initial_parameters=ndarrays_to_parameters(initial),
        fit_metrics_aggregation_fn=mean_metrics,
    )
    if s.name == "fedprox":
        return FedProx(proximal_mu=s.proximal_mu, **common)
    if s.name == "fedadam":
        return FedAdam(eta=s.server_learning_rate, eta_l=config.client.learning_rate,
                       beta_1=s.server_beta_1, beta_2=s.server_beta_2, tau=s.server_tau,
                       **common)
    return FedAvg(**common)


class _RoundGuard:
    """The fit stage of one round; a failed SecAgg+ round is logged and recorded, and
    training goes on with the next round."""

    def __init__(self, fit_workflow: Any, strategy: GuardedStrategy) -> None:
        self.fit_workflow = fit_workflow
        self.strategy = strategy

    def __call__(self, grid: Any, context: Any) -> None:
        try:
            self.fit_workflow(grid, context)
        except SecureAggregationError as exc:
            current = int(context.state.config_records[MAIN_CONFIGS_RECORD][ROUND_KEY])
            message = f"round {current}: {exc}"
            log.error(message)
            self.strategy.rounds.setdefault(current, {"round": current})["error"] = message


def sampled_clients(config: FederatedConfig, available: int) -> int:
    """How many clients Flower's strategies sample out of ``available``."""
    s = config.strategy
    return max(int(available * s.fraction_fit), s.min_fit_clients)


def run_server(grid: Any, context: Any, config: FederatedConfig) -> dict[str, Any]:
    """Run ``config.rounds`` rounds; returns (and writes) the history."""
    task = load_task(config.task)
    model = GlobalModel(task, config)
    available = config.strategy.min_available_clients
    sampled = sampled_clients(config, available)
    strategy = build_strategy(config, model.initial_weights(), model.evaluate)
    strategy = wrap_strategy(strategy, config.privacy, sampled)
    guarded = GuardedStrategy(strategy, compressed=config.compression.kind == "topk",
                              secure=config.secagg.enabled,
                              max_update_norm=config.server.max_update_norm)
    legacy = LegacyContext(context=context, strategy=guarded,
                           config=FlowerServerConfig(num_rounds=config.rounds,
                                                     round_timeout=config.server.round_timeout_s))
    secagg = config.secagg
    fit_workflow = None
    if secagg.enabled:
        fit_workflow = SecAggPlus(
            num_shares=secagg.num_shares, reconstruction_threshold=secagg.reconstruction_threshold,
            max_weight=secagg.max_weight, clipping_range=secagg.clipping_range,
            quantization_range=secagg.quantization_range, timeout=config.server.round_timeout_s)
    DefaultWorkflow(fit_workflow=_RoundGuard(fit_workflow or default_fit_workflow, guarded))(
        grid, legacy)
    history = _history(config, legacy.history, guarded, sampled / available)
    if model.output_dir is not None:
        model.output_dir.mkdir(parents=True, exist_ok=True)
        write_atomically(str(model.output_dir / "history.json"),
                         [json.dumps(history, indent=1).encode()])
    return history


def _history(config: FederatedConfig, flower_history: Any, guarded: GuardedStrategy,
             sampling_rate: float) -> dict[str, Any]:
    rounds = {r: {k: v for k, v in rec.items() if k != "started"}
              for r, rec in guarded.rounds.items()}
    for name, series in flower_history.metrics_centralized.items():
        for r, value in series:
            if r > 0:
                rounds.setdefault(r, {"round": r})[name] = value
    accountant = None
    if config.privacy.mode != "off" and config.privacy.noise_multiplier > 0:
        accountant = PrivacyAccountant(config.privacy.noise_multiplier, sampling_rate)
    for r, rec in rounds.items():
        if accountant is not None:
            rec["epsilon"] = accountant.epsilon(config.privacy.delta, rounds=r)
            log.info("round %d: (ε = %.3f, δ = %g)-differentially private", r, rec["epsilon"],
                     config.privacy.delta)
    return {"config": json.loads(config.to_json()),
            "rounds": [rounds[r] for r in sorted(rounds)]}
