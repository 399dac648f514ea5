"""One measurement in its own process; prints one JSON object on stdout.  ``run.py`` starts
it with the thread environment of the configuration (``OMP_NUM_THREADS``,
``MSKERNEL_NUM_THREADS``, ``OMP_WAIT_POLICY`` …) already set, so that every thread pool is
sized before the framework loads.

    python -m workloads.measure step FRAMEWORK MODE WORKLOAD --threads N [--steps ...]
                                                       # FRAMEWORK: torch, jax or mskernel
    python -m workloads.measure check WORKLOAD MODE      # mskernel against PyTorch in float64
    python -m workloads.measure sgemm --threads N        # the machine's SGEMM GFLOP/s

``step``: ``--warmup`` untimed steps (the first compiles), then steps timed one by one — at
least ``--steps``, more while fewer than ``--min-seconds`` have passed (at most 300), fewer
(but at least 3) once ``--max-seconds`` have passed; the record holds the median step time
and the memory: the resident set after the framework's import (``rss_import_mib``) and its
peak while the timed steps ran (``peak_rss_mib``: the high-water mark is reset after the
warm-up, so compilation does not count), their difference ``step_memory_mib`` being what the
model, its step and the framework's caches hold.  JAX runs on at most ``--threads`` CPUs
(its thread flags bound only some of XLA's pools, so the process is pinned as well).

``check``: mskernel's model (``MODE`` eager or graph) and PyTorch's eager model in float32
and in float64, all with mskernel's initial weights, run :data:`CHECK_STEPS` steps on the
same batch.  Against the float64 run, mskernel's losses (the logits for inference) must
agree within float32 tolerance, and so must every parameter's change over those steps (the
gradients and the optimizer's update); PyTorch's float32 errors are recorded beside them
as the yardstick.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import statistics
import time
import traceback
import warnings
from typing import Any, Callable

import numpy as np

from .spec import ALL_WORKLOADS, Workload

CHECK_STEPS = 2
#: float32 tolerances for a loss (against the float64 result)
CHECK_RTOL, CHECK_ATOL = 1e-4, 1e-5
#: the error allowed in each parameter's change over the checked steps, relative to the
#: largest change of that parameter (plus float32 rounding).  Gradients through batch norm
#: lose digits to cancellation: PyTorch's own float32 updates of resnet_small are off by up
#: to 2e-3; a wrong gradient or update is off by far more than 1e-2.
CHECK_UPDATE_RTOL = 1e-2
MAX_TIMED_STEPS = 300
MIN_TIMED_STEPS = 3


def run_timed(step: Callable[[], Any], warmup: int, steps: int, min_seconds: float,
              max_seconds: float) -> dict[str, Any]:
    """Warm up, then time steps one by one; the step's first and last results come back as
    ``first`` and ``last``."""
    start = time.perf_counter()
    first = step()
    first_s = time.perf_counter() - start
    for _ in range(warmup - 1):
        step()
    warmup_s = time.perf_counter() - start
    _reset_peak_rss()
    times: list[float] = []
    timed_start = time.perf_counter()
    while True:
        t = time.perf_counter()
        last = step()
        times.append(time.perf_counter() - t)
        elapsed = time.perf_counter() - timed_start
        if len(times) >= MIN_TIMED_STEPS and elapsed > max_seconds:
            break
        if len(times) >= steps and (elapsed >= min_seconds or len(times) >= MAX_TIMED_STEPS):
            break
    return {"times": times, "first_step_s": first_s, "warmup_s": warmup_s,
            "first": first, "last": last, "peak_rss_mib": _status_mib("VmHWM")}


def _status_mib(field: str) -> float:
    """A memory figure of this process from ``/proc/self/status`` (``VmRSS``, ``VmHWM``), MiB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _reset_peak_rss() -> None:
    """Start the resident set's high-water mark (``VmHWM``) again from the current size."""
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")


def _torch_step(workload: Workload, graph: bool, threads: int) -> tuple[Callable, Callable]:
    from . import torch_models

    torch_models.set_threads(threads)
    step = torch_models.make_step(workload, torch_models.build_model(workload), graph)
    return step, lambda caught_warnings: torch_models.describe()


def _jax_step(workload: Workload, graph: bool, threads: int) -> tuple[Callable, Callable]:
    from . import jax_models

    return jax_models.make_step(workload), lambda caught_warnings: jax_models.describe()


def _mskernel_step(workload: Workload, graph: bool, threads: int) -> tuple[Callable, Callable]:
    """The step, and what to add to its record: the version, the thread count, where the
    step's ops ran and how many distinct fallback warnings it raised (``threads`` came in
    ``MSKERNEL_NUM_THREADS``)."""
    from mskernel.runtime.partition import FallbackWarning

    from . import mskernel_models

    cell = mskernel_models.step_cell(workload, mskernel_models.build_model(workload))

    def describe(caught: list[warnings.WarningMessage]) -> dict[str, Any]:
        fallbacks = {str(w.message) for w in caught if issubclass(w.category, FallbackWarning)}
        return (mskernel_models.describe() | mskernel_models.placement(workload, cell, graph)
                | {"fallback_warnings": len(fallbacks)})

    return mskernel_models.make_step(workload, cell, graph), describe


def measure_step(args: argparse.Namespace) -> dict[str, Any]:
    workload = ALL_WORKLOADS[args.workload]
    if args.framework == "jax":
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:args.threads])
    importlib.import_module(f".{args.framework}_models", __package__)
    rss_import = _status_mib("VmRSS")
    prepare = {"torch": _torch_step, "jax": _jax_step, "mskernel": _mskernel_step}[
        args.framework]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")  # each distinct warning once: none while timing
        step, describe = prepare(workload, args.mode == "graph", args.threads)
        result = run_timed(step, args.warmup, args.steps, args.min_seconds, args.max_seconds)
    times = result["times"]
    median = statistics.median(times)
    q1, _, q3 = (statistics.quantiles(times, n=4, method="inclusive") if len(times) > 1
                 else (median,) * 3)
    record = {"framework": args.framework, "mode": args.mode, "workload": workload.key,
              "batch": workload.batch, "samples_per_s": workload.batch / median,
              "threads": args.threads, "step_ms_median": median * 1e3,
              "step_ms_p25": q1 * 1e3, "step_ms_p75": q3 * 1e3,
              "gflops": workload.step_flop / median / 1e9, "n_timed": len(times),
              "first_step_s": result["first_step_s"], "warmup_s": result["warmup_s"],
              "rss_import_mib": rss_import, "peak_rss_mib": result["peak_rss_mib"],
              "step_memory_mib": result["peak_rss_mib"] - rss_import}
    if workload.training:
        losses = (result["first"], result["last"])
        record |= {"loss_first": losses[0], "loss_last": losses[1],
                   "loss_decreased": all(map(math.isfinite, losses)) and losses[1] < losses[0]}
    return record | describe(caught)


def check(args: argparse.Namespace) -> dict[str, Any]:
    import copy

    from mskernel_nn.testing import copy_to_torch

    from . import mskernel_models, torch_models

    workload = ALL_WORKLOADS[args.workload]
    net = mskernel_models.build_model(workload)
    module = torch_models.build_model(workload)
    names = mskernel_models.torch_names(net)
    copy_to_torch(net, module, names)
    oracle = copy.deepcopy(module).double()
    weights = {names.get(n, n): p for n, p in net.parameters_and_names() if p.requires_grad}
    start = {n: np.array(p, np.float64) for n, p in weights.items()}
    steps = {"mskernel": mskernel_models.make_step(
                 workload, mskernel_models.step_cell(workload, net), args.mode == "graph"),
             "torch": torch_models.make_step(workload, module, graph=False),
             "float64": torch_models.make_step(workload, oracle, graph=False, double=True)}
    count = CHECK_STEPS if workload.training else 1
    results = {name: np.array([step() for _ in range(count)], np.float64)
               for name, step in steps.items()}
    want = results.pop("float64")
    errors = {name: _relative_error(got, want) for name, got in results.items()}
    record = {"framework": "mskernel", "mode": args.mode, "workload": workload.key,
              "batch": workload.batch, "max_rel_error": errors["mskernel"],
              "torch_max_rel_error": errors["torch"], "tolerance": [CHECK_RTOL, CHECK_ATOL]}
    ok = bool(np.allclose(results["mskernel"], want, CHECK_RTOL, CHECK_ATOL))
    if workload.training:
        exact = {n: p.detach().numpy() for n, p in oracle.named_parameters()}
        after = {"mskernel": {n: np.array(p, np.float64) for n, p in weights.items()},
                 "torch": {n: p.detach().numpy().astype(np.float64)
                           for n, p in module.named_parameters()}}
        mismatch = {who: max(_update_mismatch(values[n] - start[n], exact[n] - start[n],
                                              start[n]) for n in start)
                    for who, values in after.items()}
        ok = ok and mismatch["mskernel"] <= 1
        record |= {"losses": results["mskernel"].tolist(), "float64_losses": want.tolist(),
                   "update_mismatch": mismatch["mskernel"],
                   "torch_update_mismatch": mismatch["torch"]}
    return record | {"ok": ok}


def _relative_error(got: np.ndarray, want: np.ndarray) -> float:
    """The largest error relative to the expected value (to ``CHECK_ATOL / CHECK_RTOL`` near
    zero, where the absolute tolerance takes over)."""
    floor = CHECK_ATOL / CHECK_RTOL
    return float((np.abs(got - want) / np.maximum(np.abs(want), floor)).max())


def _update_mismatch(ours: np.ndarray, exact: np.ndarray, start: np.ndarray) -> float:
    """How far one parameter's change over the checked steps is from the float64 one, as a
    fraction of what is allowed: :data:`CHECK_UPDATE_RTOL` of the largest change, plus the
    float32 rounding of the parameter at each step (small updates of large weights are mostly
    rounding).  At most 1 passes."""
    rounding = CHECK_STEPS * float(np.finfo(np.float32).eps) * float(np.abs(start).max())
    allowed = CHECK_UPDATE_RTOL * float(np.abs(exact).max()) + rounding
    difference = float(np.abs(ours - exact).max())
    return difference / allowed if allowed else float(difference > 0)


def sgemm(args: argparse.Namespace) -> dict[str, Any]:
    """float32 ``n × n`` GEMM through NumPy (its BLAS, with ``OPENBLAS_NUM_THREADS`` set by
    the caller): the median of repetitions over at least ``min_seconds``."""
    n = args.size
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    out = np.empty((n, n), np.float32)
    np.matmul(a, b, out=out)
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < 5 or time.perf_counter() - start < args.min_seconds:
        t = time.perf_counter()
        np.matmul(a, b, out=out)
        times.append(time.perf_counter() - t)
    median = statistics.median(times)
    blas = np.show_config(mode="dicts").get("Build Dependencies", {}).get("blas", {})
    return _blas_kernel() | {"framework": "numpy", "mode": "sgemm", "workload": f"sgemm_{n}", "threads":
            args.threads, "gflops": 2 * n ** 3 / median / 1e9,
            "gflops_best": 2 * n ** 3 / min(times) / 1e9, "n_timed": len(times),
            "blas": f"{blas.get('name', '?')} {blas.get('version', '')}".strip()}


def _blas_kernel() -> dict[str, str]:
    """The kernel family OpenBLAS runs (threadpoolctl's ``architecture``: Haswell, SkylakeX,
    Zen ...), when threadpoolctl is installed."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return {}
    found = [i.get("architecture", "?") for i in threadpool_info()
             if i.get("internal_api") == "openblas"]
    return {"blas_kernel": ", ".join(sorted(set(found)))} if found else {}


def parse(argv: Any = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    kinds = parser.add_subparsers(dest="kind", required=True)
    step = kinds.add_parser("step")
    step.add_argument("framework", choices=("torch", "jax", "mskernel"))
    step.add_argument("mode", choices=("eager", "graph"))
    step.add_argument("workload", choices=sorted(ALL_WORKLOADS))
    step.add_argument("--warmup", type=int, default=5)
    step.add_argument("--steps", type=int, default=30)
    step.add_argument("--min-seconds", type=float, default=3.0)
    step.add_argument("--max-seconds", type=float, default=60.0)
    checked = kinds.add_parser("check")
    checked.add_argument("workload", choices=sorted(ALL_WORKLOADS))
    checked.add_argument("mode", choices=("eager", "graph"))
    gemm = kinds.add_parser("sgemm")
    gemm.add_argument("--size", type=int, default=2048)
    gemm.add_argument("--min-seconds", type=float, default=2.0)
    for sub in (step, checked, gemm):
        sub.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS",
                                                                           "1")))
        sub.add_argument("--round", type=int, default=0)
    return parser.parse_args(argv)


def main(argv: Any = None) -> None:
    args = parse(argv)
    measure = {"step": measure_step, "check": check, "sgemm": sgemm}[args.kind]
    try:
        record = measure(args)
    except Exception as exc:  # reported as a record: the run goes on with the next one
        traceback.print_exc()
        record = {"framework": getattr(args, "framework", "mskernel"),
                  "mode": getattr(args, "mode", "sgemm"),
                  "workload": getattr(args, "workload", "sgemm"),
                  "error": f"{type(exc).__name__}: {exc}"[:800]}
    record |= {"kind": args.kind, "threads": args.threads, "round": args.round,
               "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "default")}
    print(json.dumps(record, default=_plain), flush=True)


def _plain(value: Any) -> Any:
    """NumPy scalars as Python numbers, for JSON."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


if __name__ == "__main__":
    main()
