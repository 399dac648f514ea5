"""The benchmark workload, defined once and built by every framework's script.

A random layered circuit on n qubits: each layer puts a rotation (RX, RY or RZ, drawn at
random) with its own parameter on every qubit, then CNOTs on a random pairing of the qubits.
The observable is ``sum_q Z_q Z_{q+1}``.  Two measurements per framework and qubit count:

- ``evolve``: the state after the circuit, from |0...0> (parameters bound);
- ``grad``: the expectation and its gradient with respect to every parameter.

Pure Python (no framework imports), so each script imports it before its framework.
"""

from __future__ import annotations

import json
import os
import random
import resource
import statistics
import time
from typing import Callable, Optional

#: qubits -> layers (chosen so that one 24-qubit gradient takes seconds, not minutes)
LAYERS = {20: 8, 24: 4}
SEED = 2024
THREADS = int(os.environ.get("BENCH_THREADS", "2"))

Gate = tuple[str, int, Optional[int], Optional[int]]  # (name, target, control, parameter)


def layered_circuit(n_qubits: int, layers: int, seed: int = SEED) -> list[Gate]:
    rng = random.Random(seed + n_qubits)
    gates: list[Gate] = []
    for _ in range(layers):
        for q in range(n_qubits):
            gates.append((rng.choice(["RX", "RY", "RZ"]), q, None, len(gates)))
        order = list(range(n_qubits))
        rng.shuffle(order)
        for control, target in zip(order[::2], order[1::2]):
            gates.append(("CNOT", target, control, None))
    # renumber parameters 0..P-1 in order of appearance
    count = 0
    numbered: list[Gate] = []
    for name, target, control, param in gates:
        if param is not None:
            param, count = count, count + 1
        numbered.append((name, target, control, param))
    return numbered


def parameter_count(gates: list[Gate]) -> int:
    return sum(p is not None for *_, p in gates)


def parameter_values(count: int, seed: int = SEED) -> list[float]:
    rng = random.Random(seed)
    return [rng.uniform(-3.14, 3.14) for _ in range(count)]


def zz_pairs(n_qubits: int) -> list[tuple[int, int]]:
    return [(q, q + 1) for q in range(n_qubits - 1)]


def measure(step: Callable[[], object], repeats: int) -> dict:
    """Median wall time of ``repeats`` calls after one warm-up call, and the CPU time per
    call (CPU/wall shows how many threads did work)."""
    step()
    walls, cpus = [], []
    for _ in range(repeats):
        cpu0 = _cpu()
        t0 = time.perf_counter()
        step()
        walls.append(time.perf_counter() - t0)
        cpus.append(_cpu() - cpu0)
    return {"seconds": statistics.median(walls), "min_seconds": min(walls),
            "cpu_seconds": statistics.median(cpus), "repeats": repeats}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def report(framework: str, task: str, n_qubits: int, result: dict, **extra) -> None:
    """One JSON line; ``load`` is the host's 1-minute load average when the run ended (the
    machine is shared: above its CPU count, every framework was slowed by other jobs)."""
    print(json.dumps({"framework": framework, "task": task, "n_qubits": n_qubits,
                      "layers": LAYERS[n_qubits], "threads": THREADS,
                      "load": os.getloadavg()[0], **result, **extra}), flush=True)


def repeats_for(n_qubits: int) -> int:
    return int(os.environ.get("BENCH_REPEATS", "5" if n_qubits <= 20 else "3"))


def qubit_counts() -> list[int]:
    return [int(q) for q in os.environ.get("BENCH_QUBITS", "20,24").split(",")]
