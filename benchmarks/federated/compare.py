"""mskernel vs PyTorch clients in the same federation: Fashion-MNIST non-IID over 10
clients, the same MLP, FedAvg, Flower's deployment runtime on this machine (a SuperLink,
10 SuperNodes), the same mskernel server evaluating the global model.  Prints, per client
framework, the wall time per round (the server's, from sending the global model to
aggregating the replies), the clients' local training time, the bytes each client
receives and sends per round, and the final test accuracy; then the ratios.

    python benchmarks/federated/compare.py --rounds 3
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "examples" / "federated"), str(Path(__file__).parent)]

from mskernel_federated.config import load_config  # noqa: E402
from mskernel_federated.runtime import simulate  # noqa: E402


def summary(history: dict) -> dict[str, float]:
    rounds = history["rounds"]
    return {
        "round_seconds": statistics.median(r["seconds"] for r in rounds),
        "train_seconds": statistics.median(r["metrics"]["train_seconds"] for r in rounds),
        "bytes_received": rounds[-1]["metrics"]["bytes_received"],
        "bytes_sent": rounds[-1]["metrics"]["bytes_sent"],
        "accuracy": rounds[-1].get("accuracy", float("nan")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    args = parser.parse_args()
    # SIGTERM unwinds the federation's `with` block, which ends its processes
    signal.signal(signal.SIGTERM, lambda signum, _: sys.exit(128 + signum))
    base = load_config(ROOT / "examples" / "federated" / "fashion.toml", rounds=args.rounds)
    results = {}
    for name, client_app in (("mskernel", "fashion_task:client_app"),
                             ("pytorch", "torch_client:client_app")):
        config = base.model_copy(update={
            "runtime": base.runtime.model_copy(update={"client_app": client_app}),
            "strategy": base.strategy.model_copy(update={
                "min_available_clients": args.clients, "min_fit_clients": args.clients})})
        start = time.monotonic()
        results[name] = {**summary(simulate(config, args.clients)),
                         "run_seconds": time.monotonic() - start}
        print(name, json.dumps(results[name]), flush=True)
    ms, pt = results["mskernel"], results["pytorch"]
    print(f"round wall time mskernel/pytorch: {ms['round_seconds'] / pt['round_seconds']:.2f}; "
          f"local training mskernel/pytorch: {ms['train_seconds'] / pt['train_seconds']:.2f}; "
          f"bytes per client per round: {ms['bytes_received'] + ms['bytes_sent']:.0f} vs "
          f"{pt['bytes_received'] + pt['bytes_sent']:.0f}")
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
