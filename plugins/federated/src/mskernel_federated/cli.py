"""``mskernel federated server|client|simulate``.

- ``server --config FILE [--port P]``: a SuperLink on this machine, then the run of
  ``FILE``; prints the history's last round when it ends.
- ``client --superlink HOST:PORT --partition-id I --num-partitions N``: a SuperNode
  serving runs until stopped.
- ``simulate --clients N --config FILE``: both, with N SuperNodes on the loopback interface.

``--rounds`` overrides the file's ``rounds``; ``--output DIR`` its ``server.output_dir``.
"""

from __future__ import annotations

import argparse
import json
import signal
from typing import Any

from .config import FederatedConfig, load_config


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="federated_command", required=True)
    for name, help_text in (("server", "run a federation's server (SuperLink + run)"),
                            ("simulate", "a server and N clients on this machine")):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("--config", required=True, help="TOML, YAML or JSON configuration")
        p.add_argument("--rounds", type=int, default=None)
        p.add_argument("--output", default=None, help="server.output_dir")
        p.add_argument("--timeout", type=float, default=3600.0, help="seconds for the run")
        if name == "server":
            p.add_argument("--port", type=int, default=9092)
        else:
            p.add_argument("--clients", type=int, required=True)
    p = sub.add_parser("client", help="a client (SuperNode) of a federation")
    p.add_argument("--superlink", required=True, help="HOST:PORT of the server")
    p.add_argument("--partition-id", type=int, required=True)
    p.add_argument("--num-partitions", type=int, required=True)


def _config(args: argparse.Namespace, clients: int | None = None) -> FederatedConfig:
    overrides: dict[str, Any] = {}
    if args.rounds is not None:
        overrides["rounds"] = args.rounds
    try:
        config = load_config(args.config, **overrides)
    except (OSError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
        raise SystemExit(f"mskernel federated: {args.config}: {exc}") from None
    server = config.server
    if args.output is not None:
        server = server.model_copy(update={"output_dir": args.output})
    strategy = config.strategy
    if clients is not None:
        if clients < strategy.min_fit_clients:
            raise SystemExit(f"mskernel federated simulate: --clients {clients} is fewer than "
                             f"strategy.min_fit_clients = {strategy.min_fit_clients}")
        strategy = strategy.model_copy(update={"min_available_clients": clients})
    return config.model_copy(update={"server": server, "strategy": strategy})


def _report(history: dict[str, Any]) -> None:
    for record in history["rounds"]:
        print(json.dumps(record))


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)  # unwinds the `with Federation` blocks: children end too


def run(args: argparse.Namespace) -> int:
    from .runtime import Federation, simulate

    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    command = args.federated_command
    if command == "simulate":
        _report(simulate(_config(args, args.clients), args.clients, timeout=args.timeout))
        return 0
    if command == "server":
        with Federation(port=args.port) as federation:
            federation.start_server()
            print(f"SuperLink listening on 127.0.0.1:{federation.port}", flush=True)
            _report(federation.run(_config(args), timeout=args.timeout))
        return 0
    host, _, port = args.superlink.rpartition(":")
    with Federation(port=int(port), host=host or "127.0.0.1") as federation:
        return federation.start_client(args.partition_id, args.num_partitions).wait()
