"""Per-call overhead of the frontend, side by side with PyTorch eager and ``jax.jit``.

Two measurements, on tensors so small (4 float32 elements) that the time is the framework's
own bookkeeping, not arithmetic:

- **eager op**: ``x + y`` — mskernel eager (PyNative) dispatch, PyTorch eager, JAX eager, and
  NumPy as the floor;
- **cached jit call** of a 5-op function ``((x + y) * x - y) * 0.5 + 1.0`` — mskernel
  ``@jit`` (after its first call compiled it), ``jax.jit`` (with ``block_until_ready``, since
  mskernel's call returns finished results; the asynchronous dispatch alone is shown too),
  and the same function run eagerly by PyTorch and NumPy.

Everything runs in one process on one thread, frameworks interleaved round by round; each
figure is the median over rounds of the mean time of a batch of calls.  Time is the process's
CPU time by default (on a shared machine, wall-clock time also counts the time other jobs
hold the CPU); ``--wall`` uses ``time.perf_counter`` instead.  JAX and PyTorch are optional
(``pip install jax jaxlib``); a missing one is reported and skipped.

    python benchmarks/frontend_overhead.py [--rounds 7] [--batch 2000] [--wall] [--profile]

``--profile`` also prints where mskernel's time goes (cProfile, top functions by own time).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("XLA_FLAGS",
                      "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import mskernel  # noqa: E402
from mskernel.frontend.jit import jit  # noqa: E402


def five_ops(x: Any, y: Any) -> Any:
    a = x + y
    b = a * x
    c = b - y
    d = c * 0.5
    return d + 1.0


def add(x: Any, y: Any) -> Any:
    return x + y


Case = tuple[str, str, Callable[[], Any]]  # (measurement, framework, one call)


def mskernel_cases() -> list[Case]:
    x = mskernel.Tensor(np.arange(4, dtype=np.float32))
    y = mskernel.Tensor(np.ones(4, np.float32))
    jitted = jit(five_ops)
    jitted(x, y)  # compile
    return [("eager op", "mskernel", lambda: x + y),
            ("cached jit call", "mskernel", lambda: jitted(x, y))]


def numpy_cases() -> list[Case]:
    x, y = np.arange(4, dtype=np.float32), np.ones(4, np.float32)
    return [("eager op", "numpy", lambda: x + y),
            ("cached jit call", "numpy (eager, 5 ops)", lambda: five_ops(x, y))]


def torch_cases() -> list[Case]:
    import torch

    torch.set_num_threads(1)
    x, y = torch.arange(4, dtype=torch.float32), torch.ones(4)
    return [("eager op", "torch", lambda: x + y),
            ("cached jit call", "torch (eager, 5 ops)", lambda: five_ops(x, y))]


def jax_cases() -> list[Case]:
    import jax
    import jax.numpy as jnp

    x, y = jnp.arange(4, dtype=jnp.float32), jnp.ones(4, jnp.float32)
    jitted = jax.jit(five_ops)
    jitted(x, y).block_until_ready()
    return [("eager op", "jax", lambda: (x + y).block_until_ready()),
            ("cached jit call", "jax.jit", lambda: jitted(x, y).block_until_ready()),
            ("cached jit call", "jax.jit (dispatch only)", lambda: jitted(x, y))]


def versions() -> dict[str, str]:
    found = {"python": platform.python_version(), "numpy": np.__version__,
             "mskernel": mskernel.__version__}
    for name in ("torch", "jax"):
        try:
            found[name] = __import__(name).__version__
        except ImportError:
            pass
    return found


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            names = [line.split(":", 1)[1] for line in info if line.startswith("model name")]
        return names[0].strip()
    except (OSError, IndexError):
        return platform.processor() or platform.machine()


def batch_mean(call: Callable[[], Any], batch: int, clock: Callable[[], float]) -> float:
    start = clock()
    for _ in range(batch):
        call()
    return (clock() - start) / batch


def measure(cases: list[Case], rounds: int, batch: int,
            clock: Callable[[], float]) -> dict[tuple[str, str], float]:
    """Median over rounds of each case's mean call time (seconds), cases interleaved."""
    samples: dict[tuple[str, str], list[float]] = {(m, f): [] for m, f, _ in cases}
    for _ in range(3):  # warm-up
        for _, _, call in cases:
            batch_mean(call, batch // 10 or 1, clock)
    for r in range(rounds):
        order = cases if r % 2 == 0 else cases[::-1]
        for measurement, framework, call in order:
            samples[(measurement, framework)].append(batch_mean(call, batch, clock))
    return {key: statistics.median(times) for key, times in samples.items()}


def report(results: dict[tuple[str, str], float]) -> None:
    for measurement, reference in (("eager op", "torch"), ("cached jit call", "jax.jit")):
        print(f"\n{measurement}")
        ours = results[(measurement, "mskernel")]
        base = results.get((measurement, reference))
        for (m, framework), seconds in results.items():
            if m != measurement:
                continue
            ratio = f"   mskernel / this = {ours / seconds:5.2f}" if framework != "mskernel" else ""
            print(f"  {framework:26s} {seconds * 1e6:8.2f} µs{ratio}")
        if base is not None:
            print(f"  → mskernel is {ours / base:.2f}× {reference}")


def profile(cases: list[Case], batch: int) -> None:
    import cProfile
    import pstats

    for measurement, framework, call in cases:
        if framework != "mskernel":
            continue
        print(f"\nprofile of mskernel {measurement} ({batch} calls), by own time:")
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(batch):
            call()
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batch", type=int, default=2000, help="calls per timed batch")
    parser.add_argument("--wall", action="store_true", help="wall-clock instead of CPU time")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    cases = mskernel_cases() + numpy_cases()
    for name, make in (("torch", torch_cases), ("jax", jax_cases)):
        try:
            cases += make()
        except ImportError as exc:
            print(f"skipping {name}: {exc}")
    found = ", ".join(f"{k} {v}" for k, v in versions().items())
    print(f"{cpu_name()}, {os.cpu_count()} logical CPUs, {platform.system()} "
          f"{platform.release()}, 1 thread; {found}")
    clock = time.perf_counter if args.wall else time.process_time
    print(f"backend: {mskernel.get_device()}; {args.rounds} rounds × {args.batch} calls, "
          f"median of rounds, {'wall-clock' if args.wall else 'CPU'} time")
    report(measure(cases, args.rounds, args.batch, clock))
    if args.profile:
        profile(cases, args.batch)


if __name__ == "__main__":
    main()
