"""The science side by side, in one run: the Burgers and Poisson PINNs against DeepXDE (its
PyTorch backend) — relative L2 error on the grid and training time — and the Lennard-Jones
fluid against jax-md — steps per second at 1,000 and 8,000 particles.  Every measurement runs
in its own process, one at a time; the errors are measured here, against the same references.

    nice -n 19 python benchmarks/science/run_all.py [--steps 200] [--out results.jsonl]

Interpreters: MSKERNEL_PYTHON and DEEPXDE_PYTHON default to this one (mskernel-science and
deepxde installed); JAXMD_PYTHON defaults to /work/venvs/jax/bin/python (jax-md installed).
Ratios: (other framework's time) / (mskernel's time), so above 1 mskernel is faster.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import workload as W

HERE = Path(__file__).resolve().parent
PYTHON = {"mskernel": os.environ.get("MSKERNEL_PYTHON", sys.executable),
          "deepxde": os.environ.get("DEEPXDE_PYTHON", sys.executable),
          "jax-md": os.environ.get("JAXMD_PYTHON", "/work/venvs/jax/bin/python")}
SCRIPT = {"mskernel": "bench_mskernel.py", "deepxde": "bench_deepxde.py", "jax-md": "bench_jaxmd.py"}


def measure(framework: str, *args: str) -> dict:
    """Run one framework's script; its last JSON line, with the load average beside it."""
    done = subprocess.run([PYTHON[framework], str(HERE / SCRIPT[framework]), *args], cwd=HERE,
                          capture_output=True, text=True, timeout=7200)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode or not lines:
        raise RuntimeError(f"{framework} {args} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return {**json.loads(lines[-1]), "load": os.getloadavg()[0]}


def reference(case: str) -> np.ndarray:
    from mskernel_science.problems import burgers_reference

    g = W.grid(case)
    if case == "burgers":
        return burgers_reference(g[:, 0], g[:, 1], W.NU)
    return np.sin(np.pi * g[:, 0]) * np.sin(np.pi * g[:, 1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=200, help="timed LJ steps")
    parser.add_argument("--cases", default="burgers,poisson,lj1000,lj8000")
    parser.add_argument("--out", default=str(HERE / "results.jsonl"))
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.cases.split(","):
            if case.startswith("lj"):
                for framework in ("mskernel", "jax-md"):
                    rows.append(measure(framework, "lj", case[2:], str(args.steps)))
                continue
            exact = reference(case)
            for framework in ("mskernel", "deepxde"):
                out = Path(tmp) / f"{framework}-{case}.npy"
                row = measure(framework, case, str(out))
                predicted = np.load(out)
                row["error"] = float(np.linalg.norm(predicted - exact) / np.linalg.norm(exact))
                rows.append(row)
            print(json.dumps(rows[-2:]), flush=True)
    with open(args.out, "a") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    print(table(rows))


def table(rows: list[dict]) -> str:
    """The README's table: one line per case, the ratio other / mskernel."""
    lines = ["| case | mskernel | other | other / mskernel | load |", "|---|---|---|---|---|"]
    by_case: dict[str, dict[str, dict]] = {}
    for row in rows:
        by_case.setdefault(row["case"], {})[row["framework"]] = row
    for case, found in by_case.items():
        ours = found["mskernel"]
        name, theirs = next((k, v) for k, v in found.items() if k != "mskernel")
        load = f"{ours['load']:.1f} / {theirs['load']:.1f}"
        if "error" in ours:
            lines.append(f"| {case} PINN | error {ours['error']:.2e}, {ours['seconds']:.0f} s | "
                         f"{name}: error {theirs['error']:.2e}, {theirs['seconds']:.0f} s | "
                         f"time {theirs['seconds'] / ours['seconds']:.2f}x, error "
                         f"{theirs['error'] / ours['error']:.2f}x | {load} |")
        else:
            lines.append(f"| LJ fluid, {case[2:]} particles | {ours['steps_per_second']:.1f} steps/s | "
                         f"{name}: {theirs['steps_per_second']:.1f} steps/s | "
                         f"{ours['steps_per_second'] / theirs['steps_per_second']:.2f}x | {load} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
