"""How long ``import mskernel`` takes, as the median over fresh interpreters.

Each run starts a new Python process and times only the statement (not the interpreter's own
start-up).  For scale, the same is measured for the core's first real use (creating the
plugin host: the op registry, the reference backend, plugin discovery), for NumPy, and for
PyTorch when it is installed, and the ratios to PyTorch's import are printed.

    python benchmarks/import_time.py [--runs 20]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

TIMED = """
import time
start = time.perf_counter()
{statement}
print(time.perf_counter() - start)
"""

CASES = [
    ("import mskernel", "import mskernel"),
    ("mskernel first use", "import mskernel.ops; mskernel.ops.op_registry()"),
    ("import numpy", "import numpy"),
    ("import torch", "import torch"),
]


def time_once(statement: str) -> float:
    """Seconds ``statement`` takes in a fresh interpreter."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    out = subprocess.run([sys.executable, "-c", TIMED.format(statement=statement)], env=env,
                         capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL)
    return float(out.stdout.strip().splitlines()[-1])


def median_time(statement: str, runs: int) -> float:
    return statistics.median(time_once(statement) for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="fresh interpreters per case")
    args = parser.parse_args()
    cases = [(label, stmt) for label, stmt in CASES
             if label != "import torch" or importlib.util.find_spec("torch") is not None]
    medians = {label: median_time(stmt, args.runs) for label, stmt in cases}
    torch_time = medians.get("import torch")
    print(f"median of {args.runs} fresh interpreters (Python {sys.version.split()[0]})")
    for label, seconds in medians.items():
        ratio = f"{seconds / torch_time:10.3g}x torch" if torch_time else ""
        print(f"  {label:<20} {seconds * 1000:9.2f} ms  {ratio}")


if __name__ == "__main__":
    main()
