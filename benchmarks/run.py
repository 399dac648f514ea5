"""The anchor workloads of the CPU backend, mskernel side by side with PyTorch and JAX, in
one run.

    python benchmarks/run.py [--rounds 3] [--workloads lenet5_b32,mlp_b128] [--json]
    python benchmarks/run.py --jax-python /path/to/jax-venv/bin/python   # JAX from its venv
    python benchmarks/run.py --sweep                   # MLP width and transformer sequence sweep
    python benchmarks/run.py --native-blas             # OPENBLAS_CORETYPE/_L2_SIZE unset
    python benchmarks/run.py --quick                   # tiny step counts: the harness end to end
    python benchmarks/run.py --summarize results.jsonl # the tables again from saved records

Configurations, each (with each workload) in its own process:

- PyTorch eager and ``torch.compile``, each at 1 thread, 2 threads, and 2 threads with
  ``OMP_WAIT_POLICY=passive`` (on a shared 2-vCPU machine OpenMP's spinning threads can make
  2 threads many times slower than 1; the best setting is the one compared);
- JAX, the whole step under ``jax.jit`` with optax's SGD, on 1 and 2 CPUs, run by the
  interpreter ``--jax-python`` names (JAX rarely shares a virtual environment with PyTorch);
- mskernel eager (PyNative) and graph (the ``mskernel.jit``-compiled step) with
  ``MSKERNEL_NUM_THREADS`` 1 and 2, on whatever backend is installed (``cpu`` with
  mskernel-cpu); every record says which backends ran the step's ops.

Each round measures the machine's SGEMM GFLOP/s (NumPy's BLAS) at 1 and 2 threads, then runs
every workload under every configuration, the configurations reversed in every other round,
so that a change in the machine's load hits all of them alike.  Every step record holds the
process's peak resident memory while the timed steps ran.  Before the first round,
every mskernel workload is checked against PyTorch run in float64 (same initial weights and
batch: losses and parameter updates within float32 tolerance, ``workloads.measure check``); a
workload that fails is not timed.

``--json`` prints one JSON object per measurement per line (``kind`` ``step``, ``check`` or
``sgemm``; a step has ``framework``, ``mode`` (eager/graph), ``workload``, ``batch``,
``samples_per_s``, ``threads``, ``step_ms_median`` …).  Otherwise the progress goes to stderr
and the summary tables to stdout: per workload the best peer (PyTorch or JAX, any
configuration), mskernel's best thread setting in each mode, the ratios and the CPU backend's
targets; with ``--sweep``, step time and memory per framework as the work grows.
Figures are medians over rounds; a ratio compares such medians from the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional, TextIO

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from workloads.spec import ALL_WORKLOADS, SWEEP, WORKLOADS  # noqa: E402  (framework-free)

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                    "MSKERNEL_NUM_THREADS")
#: what ``--native-blas`` removes: set on some hosts to keep old OpenBLAS builds off
#: kernels they mis-detect, never on users' machines
BLAS_OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
#: graph mode ÷ best peer: training workloads and batch-256 inference; batch-1 latency
GRAPH_TARGET, LATENCY_TARGET = 1.25, 3.0
#: eager mode ÷ best PyTorch eager
EAGER_TARGET = 0.8
#: share of the machine's SGEMM GFLOP/s at the same thread count (GEMM-bound workloads)
GEMM_TARGET = 0.88
#: the peers' frameworks (mskernel is compared with the best of them)
PEERS = ("torch", "jax")


@dataclass(frozen=True)
class Config:
    """One way to run a workload: framework, mode, threads, OpenMP wait policy."""

    framework: str
    mode: str
    threads: int
    passive: bool = False

    @property
    def label(self) -> str:
        name = {("torch", "eager"): "torch eager", ("torch", "graph"): "torch.compile",
                ("jax", "graph"): "jax.jit", ("mskernel", "eager"): "mskernel eager",
                ("mskernel", "graph"): "mskernel graph"}[self.framework, self.mode]
        return f"{name} {self.threads}t" + (" passive" if self.passive else "")

    def environment(self, native_blas: bool = False) -> dict[str, str]:
        """The measurement process's environment (``native_blas``: without
        :data:`BLAS_OVERRIDES`)."""
        dropped = {*THREAD_VARIABLES, "OMP_WAIT_POLICY", "XLA_FLAGS",
                   *(BLAS_OVERRIDES if native_blas else ())}
        env = {k: v for k, v in os.environ.items() if k not in dropped}
        env |= {k: str(self.threads) for k in THREAD_VARIABLES}
        if self.passive:
            env["OMP_WAIT_POLICY"] = "passive"
        if self.framework == "jax":
            env["XLA_FLAGS"] = (f"--xla_cpu_multi_thread_eigen={str(self.threads > 1).lower()}"
                                f" intra_op_parallelism_threads={self.threads}")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
        return env


TORCH_THREADS = ((1, False), (2, False), (2, True))
JAX_THREADS = MSKERNEL_THREADS = (1, 2)
CONFIGS = ([Config("torch", mode, t, passive) for mode in ("eager", "graph")
            for t, passive in TORCH_THREADS]
           + [Config("jax", "graph", t) for t in JAX_THREADS]
           + [Config("mskernel", mode, t) for mode in ("eager", "graph")
              for t in MSKERNEL_THREADS])


def config_of(record: dict[str, Any]) -> Config:
    return Config(record["framework"], record["mode"], record["threads"],
                  record.get("omp_wait_policy") == "passive")


def workload_and_config(record: dict[str, Any]) -> tuple[str, Config]:
    return record["workload"], config_of(record)


# -- running ------------------------------------------------------------------------------------


class Runner:
    """Starts measurement processes and hands their records on (printed, saved, kept)."""

    def __init__(self, args: argparse.Namespace, out: Optional[TextIO]) -> None:
        self.args = args
        self.records: list[dict[str, Any]] = []
        self.out = out

    def measure(self, kind: str, config: Config, workload: str, round_: int,
                arguments: list[str]) -> dict[str, Any]:
        """Run ``workloads.measure KIND ARGUMENTS`` under ``config``; its record, completed
        (or an error record when the process gave none)."""
        python = self.args.jax_python if config.framework == "jax" else sys.executable
        command = [python, "-m", "workloads.measure", kind, *arguments,
                   "--threads", str(config.threads), "--round", str(round_)]
        what = {"kind": kind, "round": round_, "framework": config.framework,
                "mode": config.mode, "workload": workload,
                "native_blas": self.args.native_blas}
        if workload in ALL_WORKLOADS:
            what["batch"] = ALL_WORKLOADS[workload].batch
        start = time.perf_counter()
        try:
            done = subprocess.run(command, env=config.environment(self.args.native_blas),
                                  capture_output=True, text=True, timeout=self.args.timeout,
                                  check=False)
            lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
            record = json.loads(lines[-1]) if lines else {
                "error": f"exit status {done.returncode}: {done.stderr.strip()[-800:]}"}
        except subprocess.TimeoutExpired:
            record = {"error": f"timed out after {self.args.timeout} s"}
        record = what | {"threads": config.threads,
                         "omp_wait_policy": "passive" if config.passive else "default"} | record
        record["process_s"] = time.perf_counter() - start
        self.keep(record)
        return record

    def keep(self, record: dict[str, Any]) -> None:
        self.records.append(record)
        line = json.dumps(record)
        if self.args.json:
            print(line, flush=True)
        if self.out:
            self.out.write(line + "\n")
            self.out.flush()
        log(progress_line(record))


def progress_line(record: dict[str, Any]) -> str:
    head = f"round {record.get('round', 0)} {record['kind']:5s} {record['workload']:20s}"
    if record["kind"] == "sgemm":
        head = f"round {record.get('round', 0)} sgemm {record['threads']} thread(s)"
    else:
        head += f" {config_of(record).label:27s}"
    if "error" in record:
        return f"{head} ERROR {record['error'].splitlines()[-1][:200]}"
    if record["kind"] == "sgemm":
        return f"{head}: {record['gflops']:.1f} GFLOP/s"
    if record["kind"] == "check":
        return f"{head} {'ok' if record['ok'] else 'FAILED'} ({check_figures(record)})"
    return (f"{head} {record['samples_per_s']:10.1f} samples/s, "
            f"{record['step_ms_median']:.2f} ms/step ({record['process_s']:.0f} s)")


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    if args.out:
        with open(args.out, "a") as out:
            return run_rounds(Runner(args, out))
    return run_rounds(Runner(args, None))


def run_rounds(runner: Runner) -> list[dict[str, Any]]:
    """The checks, then every round; returns the records."""
    args = runner.args
    configs = [c for c in CONFIGS if c.framework in args.frameworks]
    step_options = ["--warmup", str(args.warmup), "--steps", str(args.steps),
                    "--min-seconds", str(args.min_seconds),
                    "--max-seconds", str(args.max_seconds)]
    checked: dict[tuple[str, str], bool] = {}
    for key in args.workloads:
        for mode in sorted({c.mode for c in configs if c.framework == "mskernel"}):
            record = runner.measure("check", Config("mskernel", mode, max(MSKERNEL_THREADS)),
                                    key, 0, [key, mode])
            checked[key, mode] = bool(record.get("ok"))
    for round_ in range(1, args.rounds + 1):
        measure_sgemm(runner, sorted({c.threads for c in configs}), round_)
        order = configs if round_ % 2 else configs[::-1]
        for key in args.workloads:
            for config in order:
                if config.framework == "mskernel" and not checked[key, config.mode]:
                    continue
                runner.measure("step", config, key, round_,
                               [config.framework, config.mode, key, *step_options])
        measure_sgemm(runner, sorted({c.threads for c in configs}), round_)
    return runner.records


def measure_sgemm(runner: Runner, thread_counts: list[int], round_: int) -> None:
    """The machine's SGEMM rate at each thread count (at both ends of every round: the host's
    load changes while a round runs)."""
    size = runner.args.sgemm_size
    for threads in thread_counts:
        runner.measure("sgemm", Config("numpy", "sgemm", threads), f"sgemm_{size}", round_,
                       ["--size", str(size), "--min-seconds", str(runner.args.sgemm_seconds)])


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- summarising --------------------------------------------------------------------------------


def medians(records: Iterable[dict[str, Any]], kind: str, key: Any, field: str) -> dict:
    """``{key(record): median of record[field]}`` over the error-free records of ``kind``."""
    groups: dict[Any, list[float]] = defaultdict(list)
    for r in records:
        if r.get("kind") == kind and "error" not in r and field in r:
            groups[key(r)].append(r[field])
    return {k: statistics.median(v) for k, v in groups.items()}


@dataclass(frozen=True)
class Best:
    """A configuration's figures for one workload, medians over rounds."""

    config: Config
    samples_per_s: float
    gflops: float
    #: peak resident memory while the timed steps ran, less the framework's import (MiB)
    memory_mib: Optional[float] = None
    step_ms: Optional[float] = None


#: (workload, configuration) → its figures
Figures = dict[tuple[str, Config], Best]


def figures_of(records: list[dict[str, Any]]) -> Figures:
    fields = {field: medians(records, "step", workload_and_config, field)
              for field in ("samples_per_s", "gflops", "step_memory_mib", "step_ms_median")}
    return {key: Best(key[1], samples, fields["gflops"][key],
                      fields["step_memory_mib"].get(key), fields["step_ms_median"].get(key))
            for key, samples in fields["samples_per_s"].items()}


def best(figures: Figures, workload: str, frameworks: Iterable[str] | str,
         mode: Optional[str] = None) -> Optional[Best]:
    """The fastest configuration of ``frameworks`` (one name or several) on ``workload``."""
    names = {frameworks} if isinstance(frameworks, str) else set(frameworks)
    found = [b for (w, c), b in figures.items()
             if w == workload and c.framework in names and mode in (None, c.mode)]
    return max(found, key=lambda b: b.samples_per_s, default=None)


def fmt(value: Optional[float]) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def verdict(ratio: Optional[float], target: Optional[float], unit: str = "×") -> str:
    """``ratio`` with ``target`` met or not (``unit`` "%" shows both as percentages)."""
    if ratio is None:
        return "-"
    scale = 100 if unit == "%" else 1
    text = f"{scale * ratio:.0f}%" if unit == "%" else f"{ratio:.2f}×"
    if target is None:
        return text
    return f"{text} ({'met' if ratio >= target else 'NOT met'}, ≥ {scale * target:g}{unit})"


def graph_target(workload: str) -> Optional[float]:
    """Graph mode's target ÷ the best peer: latency at batch 1, throughput otherwise."""
    return LATENCY_TARGET if ALL_WORKLOADS[workload].batch == 1 else GRAPH_TARGET


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def ratio(ours: Optional[Best], theirs: Optional[Best]) -> Optional[float]:
    return ours.samples_per_s / theirs.samples_per_s if ours and theirs else None


def comparison_row(key: str, figures: Figures, checks: dict) -> list[str]:
    """The workload's best configurations and mskernel's ratios with their targets."""
    peer, torch_eager = best(figures, key, PEERS), best(figures, key, "torch", "eager")
    graph = best(figures, key, "mskernel", "graph")
    eager = best(figures, key, "mskernel", "eager")

    def cell(b: Optional[Best], mode: str = "") -> str:
        if b is None and (key, mode) in checks and not checks[key, mode].get("ok"):
            return "check failed"
        return "-" if b is None else f"{fmt(b.samples_per_s)} ({b.config.label})"

    return [key, cell(peer), cell(best(figures, key, "torch")), cell(best(figures, key, "jax")),
            cell(torch_eager), cell(graph, "graph"), cell(eager, "eager"),
            verdict(ratio(graph, peer), graph_target(key)),
            verdict(ratio(eager, torch_eager), EAGER_TARGET)]


def memory_row(key: str, figures: Figures) -> list[str]:
    """Memory of mskernel graph's training step beside the peers' (each at its fastest
    configuration); the target: no more than PyTorch's."""
    graph, torch = best(figures, key, "mskernel", "graph"), best(figures, key, "torch")
    jax = best(figures, key, "jax")

    def cell(b: Optional[Best]) -> str:
        return "-" if b is None or b.memory_mib is None else \
            f"{b.memory_mib:,.0f} ({b.config.label})"

    met = "-"
    if graph and torch and graph.memory_mib is not None and torch.memory_mib is not None:
        met = "met" if graph.memory_mib <= torch.memory_mib else "NOT met"
        met = f"{graph.memory_mib / torch.memory_mib:.2f}× ({met}, ≤ 1×)"
    return [key, cell(graph), cell(torch), cell(jax), met]


def gemm_rows(key: str, figures: Figures, sgemm: dict[int, float]) -> list[list[str]]:
    """mskernel graph's and the best peers' GFLOP/s as a share of SGEMM at their thread
    counts (the target applies to mskernel; ``sgemm`` from :func:`fastest_sgemm`)."""
    rows = []
    for framework, target in (("mskernel", GEMM_TARGET), *((p, None) for p in PEERS)):
        b = best(figures, key, framework, "graph" if framework == "mskernel" else None)
        if b is not None and b.config.threads in sgemm:
            peak = sgemm[b.config.threads]
            rows.append([key, b.config.label, fmt(b.gflops), fmt(peak),
                         verdict(b.gflops / peak, target, "%")])
    return rows


def fastest_sgemm(records: list[dict[str, Any]]) -> dict[int, float]:
    """The machine's SGEMM GFLOP/s per thread count in this run: the fastest repetition of
    all measurements, and at ``t`` threads at least the rate of fewer threads.  On a busy
    host, repetitions and whole measurements slow down with the other jobs, OpenBLAS's two
    spinning threads most (below one thread's rate); the fastest is what the machine can do,
    and a share of it never exceeds 100%."""
    fastest: dict[int, float] = {}
    for r in records:
        if r.get("kind") == "sgemm" and "error" not in r:
            fastest[r["threads"]] = max(fastest.get(r["threads"], 0.0), r["gflops_best"])
    return {t: max(rate for u, rate in fastest.items() if u <= t) for t in fastest}


def summary(records: list[dict[str, Any]]) -> str:
    figures = figures_of(records)
    sgemm = fastest_sgemm(records)
    sgemm_median = medians(records, "sgemm", lambda r: r["threads"], "gflops")
    present = {w for w, _ in figures}
    workloads = [k for k in WORKLOADS if k in present]
    swept = [k for k in SWEEP if k in present]
    checks = {(r["workload"], r["mode"]): r for r in records if r.get("kind") == "check"}
    rounds = len({r.get("round") for r in records if r.get("kind") == "step"})
    kernels = sorted({r["blas_kernel"] for r in records if r.get("blas_kernel")})
    out = [machine(records, rounds), "",
           "SGEMM (NumPy's BLAS, float32; the run's fastest repetition, the median of the "
           "measurements' medians in brackets): " + ", ".join(
               f"{t} thread(s) {fmt(g)} GFLOP/s ({fmt(sgemm_median[t])})"
               for t, g in sorted(sgemm.items()))
           + (f"; OpenBLAS kernel {', '.join(kernels)}" if kernels else "")]
    if workloads:
        gemm = [row for key in workloads if WORKLOADS[key].gemm_bound
                for row in gemm_rows(key, figures, sgemm)]
        out += ["", ("samples/s, median over rounds (the configuration in brackets; batch-1 "
                     "inference: 1 / latency)"), "",
                table(["workload", "best peer", "best PyTorch", "best JAX",
                       "best PyTorch eager", "mskernel graph", "mskernel eager",
                       "graph ÷ best peer", "eager ÷ PyTorch eager"],
                      [comparison_row(key, figures, checks) for key in workloads])]
        if gemm:
            out += ["", ("GEMM-bound workloads: counted FLOPs per step ÷ median step time, "
                         "against SGEMM at the same thread count"), "",
                    table(["workload", "configuration", "GFLOP/s", "SGEMM GFLOP/s", "share"],
                          gemm)]
        trained = [k for k in workloads if WORKLOADS[k].training]
        if trained:
            out += ["", ("memory of a training step, MiB: peak resident set while the timed "
                         "steps ran, less the framework's import"), "",
                    table(["workload", "mskernel graph", "best PyTorch", "best JAX",
                           "mskernel ÷ PyTorch"],
                          [memory_row(key, figures) for key in trained])]
    if swept:
        out += ["", sweep_table(figures, swept)]
    out += ["", "every configuration, samples/s (median over rounds)", "",
            configuration_table(figures, [k for k in ALL_WORKLOADS if k in present]), "",
            placement_notes(records, checks)]
    return "\n".join(out).rstrip() + "\n"


def sweep_table(figures: Figures, workloads: list[str]) -> str:
    """Step time and memory per framework (its fastest configuration, eager and graph apart)
    as the MLP widens and the transformer's sequence grows."""
    columns = [("torch", "eager"), ("torch", "graph"), ("jax", "graph"), ("mskernel", "eager"),
               ("mskernel", "graph")]
    names = {("torch", "eager"): "PyTorch eager", ("torch", "graph"): "torch.compile",
             ("jax", "graph"): "jax.jit", ("mskernel", "eager"): "mskernel eager",
             ("mskernel", "graph"): "mskernel graph"}
    rows = []
    for key in workloads:
        w = ALL_WORKLOADS[key]
        size = f"hidden {w.hidden}" if w.name == "mlp" else f"sequence {w.seq}"
        row = [w.name, size, f"{w.step_flop / 1e9:.2f}"]
        for framework, mode in columns:
            b = best(figures, key, framework, mode)
            row.append("-" if b is None or b.step_ms is None else
                       f"{b.step_ms:.3g} ms, {fmt(b.memory_mib)} MiB")
        graph, peer = best(figures, key, "mskernel", "graph"), best(figures, key, PEERS)
        row.append(verdict(ratio(graph, peer), None))
        rows.append(row)
    return ("scaling sweep: step time (median) and memory (peak resident set while the timed "
            "steps ran, less the framework's import) at each framework's fastest thread "
            "setting\n\n" + table(["model", "size", "GFLOP/step", *(names[c] for c in columns),
                                   "graph ÷ best peer"], rows))


def configuration_table(figures: Figures, workloads: list[str]) -> str:
    configs = [c for c in CONFIGS if any(cf == c for _, cf in figures)]
    rows = [[key] + [fmt(b.samples_per_s) if (b := figures.get((key, c))) else "-"
                     for c in configs] for key in workloads]
    return table(["workload"] + [c.label for c in configs], rows)


def placement_notes(records: list[dict[str, Any]], checks: dict) -> str:
    """Where mskernel's steps ran, the checks against PyTorch, and anything suspicious."""
    notes = ["mskernel: checks against PyTorch and the backends that ran each step"]
    seen = set()
    for r in records:
        if r.get("kind") != "step" or r["framework"] != "mskernel" or "error" in r:
            continue
        where = (r["workload"], r["mode"])
        if where in seen:
            continue
        seen.add(where)
        check = checks.get(where, {})
        ops = ", ".join(f"{b} {n}" for b, n in sorted(r.get("backends", {}).items()))
        fallback = r.get("fallback_ops") or []
        line = (f"- {r['workload']} {r['mode']}: check "
                f"{'ok' if check.get('ok') else 'missing/failed'} ({check_figures(check)}); "
                f"ops per backend: {ops or '?'}")
        if fallback:
            line += f"; fell back: {', '.join(fallback)}"
        notes.append(line)
    for r in records:
        if r.get("kind") == "check" and not r.get("ok"):
            notes.append(f"- {r['workload']} {r['mode']}: NOT TIMED, check against PyTorch "
                         f"failed: {r.get('error') or check_figures(r)}")
        if r.get("kind") == "step" and r.get("loss_decreased") is False:
            notes.append(f"- round {r['round']} {r['workload']} {config_of(r).label}: the loss "
                         f"did not decrease ({r['loss_first']:.4g} → {r['loss_last']:.4g})")
        if r.get("kind") == "step" and "error" in r:
            notes.append(f"- round {r['round']} {r['workload']} {config_of(r).label}: "
                         f"{r['error'].splitlines()[-1][:300]}")
    return "\n".join(notes)


def check_figures(check: dict[str, Any]) -> str:
    """A check's errors against float64, mskernel's then PyTorch float32's."""
    if "max_rel_error" not in check:
        return "no check"
    what = "loss" if "update_mismatch" in check else "logits"
    text = (f"{what} error {check['max_rel_error']:.1e}, PyTorch float32 "
            f"{check.get('torch_max_rel_error', float('nan')):.1e}")
    if "update_mismatch" in check:
        text += (f"; update error {check['update_mismatch']:.2f} of the tolerance, PyTorch "
                 f"float32 {check.get('torch_update_mismatch', float('nan')):.2f}")
    return text


def machine(records: list[dict[str, Any]], rounds: int) -> str:
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        cpuinfo = []
    cpu = next((ln.split(":", 1)[1].strip() for ln in cpuinfo if ln.startswith("model name")),
               "?")
    versions = {r["framework"]: r.get("version") for r in records
                if r.get("kind") == "step" and "version" in r}
    devices = sorted({r["device"] for r in records if r.get("device")})
    blas = next((r["blas"] for r in records if r.get("blas")), "?")
    return (f"machine: {cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}; "
            f"Python {platform.python_version()}, PyTorch {versions.get('torch', '-')}, "
            f"mskernel {versions.get('mskernel', '-')} on backend {', '.join(devices) or '-'}, "
            f"NumPy BLAS {blas}; {rounds} round(s)")


# -- command line -------------------------------------------------------------------------------


def parse(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default=None,
                        help="comma-separated subset of " + ", ".join(ALL_WORKLOADS)
                        + " (default: the anchors, or the sweep's with --sweep)")
    parser.add_argument("--sweep", action="store_true",
                        help="the scaling sweep: " + ", ".join(SWEEP))
    parser.add_argument("--frameworks", default="torch,jax,mskernel",
                        help="comma-separated subset of torch, jax, mskernel (default all)")
    parser.add_argument("--jax-python", default=os.environ.get("JAX_PYTHON", sys.executable),
                        help="the interpreter with jax and optax installed (default $JAX_PYTHON"
                        ", else this one)")
    parser.add_argument("--native-blas", action="store_true",
                        help="run every measurement without " + " and ".join(BLAS_OVERRIDES)
                        + " (as users' machines do), so OpenBLAS picks its own kernel")
    parser.add_argument("--rounds", type=int, default=None, help="default 3 (1 with --quick)")
    parser.add_argument("--warmup", type=int, default=None,
                        help="untimed steps, the first compiles (default 5; 1 with --quick)")
    parser.add_argument("--steps", type=int, default=None,
                        help="at least this many timed steps (default 30; 2 with --quick)")
    parser.add_argument("--min-seconds", type=float, default=None,
                        help="time steps for at least this long (default 3; 0 with --quick)")
    parser.add_argument("--max-seconds", type=float, default=60.0,
                        help="stop timing a configuration after this long (at least 3 steps)")
    parser.add_argument("--sgemm-size", type=int, default=None, help="default 2048 (512 quick)")
    parser.add_argument("--quick", action="store_true",
                        help="tiny step counts and one round: checks the harness end to end")
    parser.add_argument("--json", action="store_true", help="print one JSON record per line")
    parser.add_argument("--out", help="also append the JSON records to this file")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per process")
    parser.add_argument("--summarize", metavar="JSONL",
                        help="print the tables for records saved with --out; run nothing")
    args = parser.parse_args(argv)
    quick = args.quick
    defaults = {"rounds": (3, 1), "warmup": (5, 1), "steps": (30, 2), "min_seconds": (3.0, 0.0),
                "sgemm_size": (2048, 512)}
    for name, (full, small) in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, small if quick else full)
    args.sgemm_seconds = 0.3 if quick else 2.0
    if args.workloads is None:
        args.workloads = ",".join(SWEEP if args.sweep else WORKLOADS)
    args.workloads = [k for k in args.workloads.split(",") if k]
    unknown = [k for k in args.workloads if k not in ALL_WORKLOADS]
    if unknown:
        parser.error(f"unknown workload(s) {', '.join(unknown)}; "
                     f"known: {', '.join(ALL_WORKLOADS)}")
    args.frameworks = {f for f in args.frameworks.split(",") if f}
    if not args.frameworks <= {"torch", "jax", "mskernel"}:
        parser.error("--frameworks takes a subset of torch, jax, mskernel")
    return args


def main(argv: Optional[list[str]] = None) -> None:
    args = parse(argv)
    if args.summarize:
        with open(args.summarize) as saved:
            records = [json.loads(line) for line in saved if line.startswith("{")]
    else:
        start = time.perf_counter()
        records = run(args)
        log(f"done in {time.perf_counter() - start:.0f} s")
    if not args.json:
        print(summary(records))


if __name__ == "__main__":
    main()
