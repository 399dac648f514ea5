"""Flower components for the fault tests: the plugin's client app, plus misbehaviour chosen
by a SuperNode's node configuration.

- ``crash=1``: when SecAgg+ asks for the masked vector (the middle of the round, after the
  keys and the shares went out), the whole client — SuperNode, SuperExec, app — is killed
  with SIGKILL, as a machine that vanishes.
- ``malformed=1``: the client answers with its first parameter cut in half.
- ``tampered=1``: the client answers with a NaN in its weights.
"""

from __future__ import annotations

import os
import signal
from typing import Any

import numpy as np
from flwr.client import ClientApp
from flwr.common.secure_aggregation.secaggplus_constants import (
    RECORD_KEY_CONFIGS, Key, Stage,
)

from mskernel_federated.apps import CLIENT_MODS, run_config
from mskernel_federated.client import MskernelClient
from mskernel_federated.task import load_task


class FaultyClient(MskernelClient):
    def __init__(self, *args: Any, fault: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fault = fault

    def fit(self, parameters: list[np.ndarray], config: dict[str, Any]) -> Any:
        arrays, count, metrics = super().fit(parameters, config)
        if self.fault == "malformed":
            arrays[0] = arrays[0].reshape(-1)[: arrays[0].size // 2]
        elif self.fault == "tampered":
            arrays[1] = arrays[1].copy()
            arrays[1].reshape(-1)[0] = np.nan
        return arrays, count, metrics


def client_fn(context: Any) -> Any:
    node = context.node_config
    fault = next((f for f in ("malformed", "tampered") if int(node.get(f, 0))), "")
    config = run_config(context)
    return FaultyClient(load_task(config.task), config, int(node["partition-id"]),
                        int(node["num-partitions"]), context.state, fault=fault).to_client()


def crash_mod(msg: Any, context: Any, call_next: Any) -> Any:
    configs = msg.content.config_records.get(RECORD_KEY_CONFIGS)
    if (int(context.node_config.get("crash", 0)) and configs is not None
            and configs.get(Key.STAGE) == Stage.COLLECT_MASKED_VECTORS):
        os.killpg(os.getpgid(0), signal.SIGKILL)
    return call_next(msg, context)


client_app = ClientApp(client_fn=client_fn,
                       mods=[crash_mod, *CLIENT_MODS])
