"""Run the quantum benchmarks of every framework side by side and print the ratios.

Each round runs every (framework, thread count) once, in turn, so all frameworks see the
same machine state; the summary takes the median over rounds.  Interpreters (each needs its
framework installed, see setup_envs.sh):

    MSKERNEL_PYTHON     default: this interpreter (with mskernel-quantum installed)
    MINDQUANTUM_PYTHON  default: $ANCHORS/venv_mindquantum/bin/python
    QISKIT_PYTHON       default: $ANCHORS/venv_qiskit/bin/python
    LIGHTNING_PYTHON    default: $ANCHORS/venv_lightning/bin/python

    python run_all.py --rounds 3 --threads 1,2 --out results.jsonl
    python run_all.py --summarize results.jsonl        # only print the tables again
    python run_all.py --only mskernel,lightning        # a subset of the frameworks

Ratios are (other framework's time) / (mskernel's time): above 1, mskernel is faster; the
lightning ratio is marked against the target of 1.25.  MindQuantum and lightning run twice
with two threads: with OpenMP's default (spinning) wait policy and with
OMP_WAIT_POLICY=passive; the better one is compared.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ANCHORS = Path(os.environ.get("ANCHORS", Path(os.environ.get("TMPDIR", "/tmp")) / "anchors"))


def configurations(threads: int) -> list[tuple[str, str, str, dict]]:
    """(label, interpreter, script, extra environment) for one thread count."""
    python = {
        "mskernel": os.environ.get("MSKERNEL_PYTHON", sys.executable),
        "mindquantum": os.environ.get("MINDQUANTUM_PYTHON",
                                      str(ANCHORS / "venv_mindquantum/bin/python")),
        "qiskit": os.environ.get("QISKIT_PYTHON", str(ANCHORS / "venv_qiskit/bin/python")),
        "lightning": os.environ.get("LIGHTNING_PYTHON",
                                    str(ANCHORS / "venv_lightning/bin/python")),
    }
    configs = [("mskernel", python["mskernel"], "bench_mskernel.py", {}),
               ("lightning", python["lightning"], "bench_lightning.py", {}),
               ("mindquantum", python["mindquantum"], "bench_mindquantum.py", {}),
               ("qiskit-aer", python["qiskit"], "bench_qiskit.py", {})]
    if threads > 1:
        passive = {"OMP_WAIT_POLICY": "passive"}
        configs.insert(2, ("lightning[passive]", python["lightning"], "bench_lightning.py",
                           passive))
        configs.insert(4, ("mindquantum[passive]", python["mindquantum"],
                           "bench_mindquantum.py", passive))
    return configs


def run_round(round_index: int, thread_counts: list[int], out: Path,
              only: set[str] | None = None) -> None:
    for threads in thread_counts:
        for label, python, script, extra in configurations(threads):
            if only and label.split("[")[0] not in only:
                continue
            if not Path(python).exists():
                print(f"skip {label}: no interpreter at {python}", file=sys.stderr)
                continue
            env = {**os.environ, **extra, "BENCH_THREADS": str(threads)}
            proc = subprocess.run([python, str(HERE / script)], env=env, capture_output=True,
                                  text=True)
            if proc.returncode != 0:
                print(f"{label} failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
                continue
            with out.open("a") as f:
                for line in proc.stdout.splitlines():
                    row = json.loads(line)
                    row.update(config=label, round=round_index)
                    f.write(json.dumps(row) + "\n")
                    print(f"round {round_index} {label:22s} {row['task']:11s} "
                          f"{row['n_qubits']}q {threads}t {row['seconds']:.3f} s", flush=True)


TARGET = 1.25  # lightning's time / mskernel's, on every row


def _cell(theirs: list[float], ours: float, note: str = "", target: bool = False) -> str:
    if not theirs:
        return "- | -"
    ratio = min(theirs) / ours
    mark = (" met" if ratio >= TARGET else " **not met**") if target else ""
    return f"{min(theirs):.3f}{note} | {ratio:.2f}x{mark}"


def _table(title: str, seconds: dict[tuple, float]) -> list[str]:
    lines = [title, "",
             "| task | qubits | threads | mskernel | lightning | ratio (target 1.25x) | "
             "MindQuantum | ratio | Qiskit Aer | ratio |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    keys = sorted({(k[1], k[2], k[3]) for k in seconds if k[0] == "mskernel"},
                  key=lambda k: (k[1], k[0] != "evolve", k[2]))

    def times(framework: str, task: str, n: int, threads: int) -> list[float]:
        return [s for k, s in seconds.items()
                if k[0].split("[")[0] == framework and k[1:] == (task, n, threads)]

    for task, n, threads in keys:
        ours = seconds[("mskernel", task, n, threads)]
        aer_task = "expectation" if task == "grad" else task
        aer_note = " (expectation only)" if task == "grad" else ""
        lines.append(f"| {task} | {n} | {threads} | {ours:.3f} | "
                     f"{_cell(times('lightning', task, n, threads), ours, target=True)} | "
                     f"{_cell(times('mindquantum', task, n, threads), ours)} | "
                     f"{_cell(times('qiskit-aer', aer_task, n, threads), ours, aer_note)} |")
    return lines


def summarize(path: Path) -> str:
    """Two tables: the median over rounds of each run's median, and the fastest call seen."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    medians: dict[tuple, list[float]] = defaultdict(list)
    cpu: dict[tuple, list[float]] = defaultdict(list)
    best: dict[tuple, float] = {}
    for r in rows:
        key = (r["config"], r["task"], r["n_qubits"], r["threads"])
        medians[key].append(r["seconds"])
        cpu[key].append(r["cpu_seconds"])
        best[key] = min(best.get(key, float("inf")), r["min_seconds"])
    rounds = max((r["round"] for r in rows), default=0) + 1
    load = statistics.mean(r["load"] for r in rows) if rows else 0.0
    lines = _table(f"Median over {rounds} round(s) of each run's median, seconds; "
                   f"ratio = other / mskernel (above 1: mskernel is faster).  Mean host load "
                   f"average during the runs: {load:.1f}.",
                   {k: statistics.median(v) for k, v in medians.items()})
    lines += [""] + _table("Fastest single call over all rounds, seconds.", best)
    lines += [""] + _table("CPU seconds per call (all threads), median over rounds: the work "
                           "done, which other jobs on a shared host do not inflate as they do "
                           "the wall time; on one thread, the speed ratio of a quiet host.",
                           {k: statistics.median(v) for k, v in cpu.items()})
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--out", type=Path, default=HERE / "results.jsonl")
    parser.add_argument("--summarize", type=Path, help="only summarize this results file")
    parser.add_argument("--only", help="comma-separated frameworks to run (mskernel, lightning, "
                                       "mindquantum, qiskit-aer); default all")
    args = parser.parse_args()
    if args.summarize:
        print(summarize(args.summarize))
        return
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"{platform.platform()}", flush=True)
    thread_counts = [int(t) for t in args.threads.split(",")]
    only = set(args.only.split(",")) if args.only else None
    for r in range(args.rounds):
        run_round(r, thread_counts, args.out, only)
    print(summarize(args.out))


if __name__ == "__main__":
    main()
