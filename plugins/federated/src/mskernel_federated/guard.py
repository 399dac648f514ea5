"""The server's gate for client models: every reply is checked against the global model
before the strategy sees it.

A reply whose arrays do not match the global model in number, shape or dtype, that holds a
non-finite value, or that moved further than ``max_update_norm`` from the global model, is
rejected: the server logs a clear error naming the client and the reason (never the
values), records it in the round's history, and the round goes on with the other replies.
With top-k compression the replies are sparse updates, densified here; under SecAgg+ every
reply carries the unmasked sum (the server never sees a single client's model), which is
checked the same way.  The gate also times
each round and keeps the history the server writes out.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Optional

import numpy as np
from flwr.common import (
    FitRes, Parameters, ndarrays_to_parameters, parameters_to_ndarrays,
)
from flwr.server.strategy import Strategy

from .compression import decompress
from .weights import UpdateError, check_like, global_norm

log = logging.getLogger("flwr")  # the log Flower streams to `flwr run --stream`


class GuardedStrategy(Strategy):
    """Validates (and densifies) the replies, then hands them to ``strategy``."""

    def __init__(self, strategy: Strategy, *, compressed: bool = False, secure: bool = False,
                 max_update_norm: Optional[float] = None) -> None:
        super().__init__()
        self.strategy = strategy
        self.compressed = compressed
        self.secure = secure
        self.max_update_norm = max_update_norm
        self.global_arrays: list[np.ndarray] = []
        self.rounds: dict[int, dict[str, Any]] = {}

    def __repr__(self) -> str:
        return f"GuardedStrategy({self.strategy!r})"

    def initialize_parameters(self, client_manager: Any) -> Optional[Parameters]:
        return self.strategy.initialize_parameters(client_manager)

    def configure_fit(self, server_round: int, parameters: Parameters,
                      client_manager: Any) -> list[tuple[Any, Any]]:
        self.global_arrays = parameters_to_ndarrays(parameters)
        instructions = self.strategy.configure_fit(server_round, parameters, client_manager)
        self.rounds[server_round] = {"round": server_round, "started": time.monotonic(),
                                     "sampled": len(instructions), "rejected": []}
        return instructions

    def _checked(self, res: FitRes) -> FitRes:
        arrays = parameters_to_ndarrays(res.parameters)
        if self.secure:  # SecAgg+ dequantizes the sum into float64
            arrays = [a.astype(g.dtype, copy=False) if a.dtype.kind == g.dtype.kind == "f"
                      else a for a, g in zip(arrays, self.global_arrays)]
        if self.compressed:
            arrays = [g + d for g, d in zip(self.global_arrays,
                                            decompress(arrays, self.global_arrays))]
        check_like(self.global_arrays, arrays)
        if self.max_update_norm is not None:
            distance = global_norm([a - g for a, g in zip(arrays, self.global_arrays)])
            if distance > self.max_update_norm:
                raise UpdateError(f"the update's norm {distance:.4g} exceeds "
                                  f"max_update_norm = {self.max_update_norm:.4g}")
        if self.compressed or self.secure:
            res.parameters = ndarrays_to_parameters(arrays)
        return res

    def aggregate_fit(self, server_round: int, results: list[tuple[Any, FitRes]],
                      failures: list[Any]) -> tuple[Optional[Parameters], dict[str, Any]]:
        record = self.rounds.setdefault(server_round, {"round": server_round, "rejected": []})
        accepted = []
        for proxy, res in results:
            node = str(getattr(proxy, "node_id", getattr(proxy, "cid", "?")))
            try:
                accepted.append((proxy, self._checked(res)))
            except (UpdateError, ValueError) as exc:
                message = f"round {server_round}: rejected the model of client {node}: {exc}"
                log.error(message)
                record["rejected"].append(message)
        record["accepted"] = len(accepted)
        record["dropped"] = max(record.get("sampled", 0) - len(results), 0)
        if not accepted:
            return None, {}
        parameters, metrics = self.strategy.aggregate_fit(server_round, accepted, failures)
        record["seconds"] = time.monotonic() - record.get("started", time.monotonic())
        record["metrics"] = dict(metrics)
        return parameters, metrics

    def configure_evaluate(self, server_round: int, parameters: Parameters,
                           client_manager: Any) -> list[tuple[Any, Any]]:
        return self.strategy.configure_evaluate(server_round, parameters, client_manager)

    def aggregate_evaluate(self, server_round: int, results: list[Any],
                           failures: list[Any]) -> tuple[Optional[float], dict[str, Any]]:
        return self.strategy.aggregate_evaluate(server_round, results, failures)

    def evaluate(self, server_round: int, parameters: Parameters
                 ) -> Optional[tuple[float, dict[str, Any]]]:
        return self.strategy.evaluate(server_round, parameters)
