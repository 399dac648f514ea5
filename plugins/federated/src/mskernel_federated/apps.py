"""The Flower components of a run: ``server_app`` and ``client_app``, named in the Flower
App that ``mskernel federated`` submits.  Both read the run's :class:`FederatedConfig` from
the run configuration key ``mskernel-config``; a client reads its partition from its
SuperNode's node configuration (``partition-id``, ``num-partitions``)."""

from __future__ import annotations

from typing import Any

from flwr.client import ClientApp
from flwr.client.mod import fixedclipping_mod, secaggplus_mod
from flwr.server import ServerApp

from .config import FederatedConfig

CONFIG_KEY = "mskernel-config"


def run_config(context: Any) -> FederatedConfig:
    return FederatedConfig.from_json(str(context.run_config[CONFIG_KEY]))


def client_fn(context: Any) -> Any:
    from .client import MskernelClient
    from .task import load_task

    config = run_config(context)
    node = context.node_config
    return MskernelClient(load_task(config.task), config, int(node["partition-id"]),
                          int(node["num-partitions"]), context.state).to_client()


def secagg_when_enabled(msg: Any, context: Any, call_next: Any) -> Any:
    """Flower's SecAgg+ mod for runs with ``secagg.enabled`` (a no-op otherwise)."""
    if run_config(context).secagg.enabled:
        return secaggplus_mod(msg, context, call_next)
    return call_next(msg, context)


def clipping_when_central_dp(msg: Any, context: Any, call_next: Any) -> Any:
    """Flower's client-side clipping mod for runs with ``privacy.mode = "central"``."""
    if run_config(context).privacy.mode == "central":
        return fixedclipping_mod(msg, context, call_next)
    return call_next(msg, context)


#: the mods of the client app, outermost first (a client app of one's own that wraps the
#: plugin's client adds its own mods before these)
CLIENT_MODS: list[Any] = [secagg_when_enabled, clipping_when_central_dp]
client_app = ClientApp(client_fn=client_fn, mods=CLIENT_MODS)
server_app = ServerApp()


@server_app.main()
def _main(grid: Any, context: Any) -> None:
    from .server import run_server

    run_server(grid, context, run_config(context))
