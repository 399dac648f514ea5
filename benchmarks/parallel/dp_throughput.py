"""Data-parallel training throughput: mskernel (``mskernel run``, MPI) beside PyTorch DDP
(``gloo``), on the anchor MLP and LeNet-5 of ``benchmarks/workloads``, in one run.

    python benchmarks/parallel/dp_throughput.py [--workloads mlp_b128,lenet5_b32] [--steps 30]
        [--configs 1x1,1x2,2x1,4x1] [--bucket-mb 25] [--rounds 1]
        [--frameworks mskernel,torch] [--json]

For each framework and workload (per-rank batch B, a training step as ``benchmarks/run.py``
defines it: forward, loss, backward, SGD with momentum), the configurations of ``--configs``:

- ``1x1``: one process, one thread, batch B;
- ``1x2``: one process, two threads, batch 2B (the samples of one data-parallel step);
- ``2x1``: two ranks of one thread each, batch B each, gradients averaged over the ranks
  in buckets of ``--bucket-mb`` (mskernel: ``set_auto_parallel_context(parallel_mode=
  "data_parallel", comm_fusion=...)`` and its compiled training step; PyTorch:
  ``DistributedDataParallel(bucket_cap_mb=...)`` on ``gloo`` over loopback, eager);
- ``4x1``: four ranks of one thread each, likewise (oversubscribed on fewer than 4 cores).

Each configuration runs in fresh processes: ``--warmup`` untimed steps (mskernel's first
compiles), then ``--steps`` steps between two barriers, timed on rank 0.  Reported:
samples per second (all ranks' samples), the step time, rank 0's CPU time per step (every
thread's: less sensitive than wall time to other jobs on a shared host), the bytes each rank
hands to the gradient all-reduce per step (mskernel: its process group's count; PyTorch: a
DDP communication hook summing its buckets) and, for mskernel, the time per step its rank 0
spent in MPI on its communication thread (waiting for the other ranks included), which
overlaps the backward pass from each bucket's start to its wait.  The ratios are N ranks
over 1x1 (target for 2 ranks: at least 1.7) and mskernel's N ranks over PyTorch's (target:
at least 1).

``worker`` is the per-process entry point the orchestrator starts.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BENCHMARKS = HERE.parent
#: name: (ranks, threads per rank, batch multiple of the one process)
CONFIGS = {"1x1": (1, 1, 1), "1x2": (1, 2, 2), "2x1": (2, 1, 1), "4x1": (4, 1, 1)}


def _workload(key: str, scale: int) -> Any:
    sys.path.insert(0, str(BENCHMARKS))
    from workloads.spec import WORKLOADS, Workload

    base = WORKLOADS[key]
    return Workload(base.name, base.batch * scale)


def _timed(step: Any, barrier: Any, warmup: int, steps: int) -> tuple[float, float]:
    """Seconds per step: wall time (rank 0's, between barriers) and this process's CPU time
    (every thread's; less sensitive than wall time to other jobs on a shared host)."""
    for _ in range(warmup):
        step()
    barrier()
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        step()
    cpu = time.process_time() - cpu
    barrier()
    return (time.perf_counter() - start) / steps, cpu / steps


def worker_mskernel(key: str, scale: int, warmup: int, steps: int,
                    bucket_mb: float) -> dict[str, Any]:
    from mskernel import communication

    communication.init()
    size = communication.get_group_size()
    if size > 1:
        from mskernel.parallel import set_auto_parallel_context

        set_auto_parallel_context(parallel_mode="data_parallel", gradients_mean=True,
                                  comm_fusion={"allreduce": {"mode": "size",
                                                             "config": bucket_mb}})
    from workloads import mskernel_models

    workload = _workload(key, scale)
    cell = mskernel_models.step_cell(workload, mskernel_models.build_model(workload))
    step = mskernel_models.make_step(workload, cell, graph=True)
    step()
    before = communication.statistics()
    seconds, cpu = _timed(step, communication.barrier, warmup, steps)
    after = communication.statistics()
    steps_run = steps + warmup
    sent = (after["payload_bytes"] - before["payload_bytes"]) / steps_run
    in_mpi = (after["seconds"] - before["seconds"]) / steps_run
    return {"rank": communication.get_rank(), "ranks": size, "step_s": seconds, "cpu_s": cpu,
            "bytes_per_step": sent, "mpi_s_per_step": in_mpi, "batch": workload.batch}


def worker_torch(key: str, scale: int, warmup: int, steps: int,
                 bucket_mb: float) -> dict[str, Any]:
    import torch
    import torch.distributed as dist

    size = int(os.environ.get("WORLD_SIZE", "1"))
    sys.path.insert(0, str(BENCHMARKS))
    from workloads import torch_models

    workload = _workload(key, scale)
    torch_models.set_threads(int(os.environ["OMP_NUM_THREADS"]))
    model = torch_models.build_model(workload)
    counted = [0]
    if size > 1:
        from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

        dist.init_process_group("gloo")
        model = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=bucket_mb)

        def counting_hook(state, bucket):  # type: ignore[no-untyped-def]
            counted[0] += bucket.buffer().numel() * bucket.buffer().element_size()
            return allreduce_hook(state, bucket)

        # DDP checks the hook's annotations (strings under `from __future__ import annotations`)
        counting_hook.__annotations__ = {"bucket": dist.GradBucket,
                                         "return": torch.futures.Future[torch.Tensor]}
        model.register_comm_hook(None, counting_hook)
    step = torch_models.make_step(workload, model, graph=False)
    barrier = dist.barrier if size > 1 else (lambda: None)
    step()
    counted[0] = 0
    seconds, cpu = _timed(step, barrier, warmup, steps)
    rank = dist.get_rank() if size > 1 else 0
    if size > 1:
        dist.destroy_process_group()
    return {"rank": rank, "ranks": size, "step_s": seconds, "cpu_s": cpu,
            "bytes_per_step": counted[0] / (steps + warmup), "batch": workload.batch}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_config(framework: str, key: str, ranks: int, threads: int, scale: int,
               args: argparse.Namespace) -> dict[str, Any]:
    """Start one configuration's processes and return rank 0's record."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MSKERNEL_NUM_THREADS=str(threads),
               PYTHONPATH=os.pathsep.join([str(BENCHMARKS), os.environ.get("PYTHONPATH", "")]))
    worker = [str(Path(__file__)), "worker", framework, key, str(scale), str(args.warmup),
              str(args.steps), str(args.bucket_mb)]
    if framework == "mskernel" and ranks > 1:
        commands = [[sys.executable, "-m", "mskernel.cli", "run", "-n", str(ranks), *worker]]
        envs = [env]
    else:
        port = _free_port()
        commands = [[sys.executable, *worker] for _ in range(ranks)]
        envs = [dict(env, RANK=str(r), WORLD_SIZE=str(ranks), MASTER_ADDR="127.0.0.1",
                     MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo") for r in range(ranks)]
    processes = [subprocess.Popen(c, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for c, e in zip(commands, envs)]
    outputs = [p.communicate(timeout=args.timeout) for p in processes]
    for p, (out, err) in zip(processes, outputs):
        if p.returncode != 0:
            raise RuntimeError(f"{framework} {key} {ranks}x{threads} failed:\n{out}\n{err}")
    records = [json.loads(line.split("RESULT ", 1)[1]) for out, _ in outputs
               for line in out.splitlines() if "RESULT " in line]
    return next(r for r in records if r["rank"] == 0)


def orchestrate(args: argparse.Namespace) -> None:
    load = os.getloadavg()
    rows = []
    for key in args.workloads.split(","):
        for framework in args.frameworks.split(","):
            for name in args.configs.split(","):
                ranks, threads, scale = CONFIGS[name]
                samples = []
                for _ in range(args.rounds):
                    record = run_config(framework, key, ranks, threads, scale, args)
                    samples.append(record)
                step_s = statistics.median(r["step_s"] for r in samples)
                cpu_s = statistics.median(r["cpu_s"] for r in samples)
                batch = samples[0]["batch"] * ranks
                in_mpi = statistics.median(r.get("mpi_s_per_step", 0.0) for r in samples)
                rows.append({"workload": key, "framework": framework, "config": name,
                             "samples_per_s": batch / step_s, "step_ms": step_s * 1e3,
                             "cpu_ms_per_step": cpu_s * 1e3,
                             "bytes_per_step": samples[0]["bytes_per_step"],
                             "mpi_ms_per_step": in_mpi * 1e3})
                print(f"{key:12} {framework:9} {name}: {batch / step_s:9.1f} samples/s, "
                      f"step {step_s * 1e3:7.1f} ms (rank 0 CPU {cpu_s * 1e3:7.1f} ms), "
                      f"all-reduce "
                      f"{samples[0]['bytes_per_step'] / 2**20:6.2f} MiB/step/rank"
                      + (f", {in_mpi * 1e3:.1f} ms/step in MPI" if in_mpi else ""), flush=True)
    summary = _ratios(rows)
    print(f"\nload average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} "
          f"(before), {os.getloadavg()[0]:.1f} (after); {os.cpu_count()} cpus")
    for line in summary:
        print(line)
    if args.json:
        print(json.dumps({"rows": rows, "load": load}))


def _ratios(rows: list[dict[str, Any]]) -> list[str]:
    lines = []
    by = {(r["workload"], r["framework"], r["config"]): r["samples_per_s"] for r in rows}
    for key in dict.fromkeys(r["workload"] for r in rows):
        for framework in dict.fromkeys(r["framework"] for r in rows):
            one = by.get((key, framework, "1x1"))
            for ranks, other in (("2 ranks", "2x1"), ("4 ranks", "4x1"),
                                 ("1 process x 2 threads", "1x2")):
                if one and (key, framework, other) in by:
                    lines.append(f"{key} {framework}: {ranks} / 1 rank = "
                                 f"{by[key, framework, other] / one:.2f}x")
        for config in ("2x1", "4x1"):
            if (key, "mskernel", config) in by and (key, "torch", config) in by:
                lines.append(f"{key}: mskernel {config} / PyTorch DDP {config} = "
                             f"{by[key, 'mskernel', config] / by[key, 'torch', config]:.2f}x")
    return lines


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "worker":
        framework, key, scale, warmup, steps, bucket_mb = sys.argv[2:8]
        run = worker_mskernel if framework == "mskernel" else worker_torch
        record = run(key, int(scale), int(warmup), int(steps), float(bucket_mb))
        print("RESULT " + json.dumps(record), flush=True)
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="mlp_b128,lenet5_b32")
    parser.add_argument("--frameworks", default="mskernel,torch")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--configs", default="1x1,1x2,2x1",
                        help=f"of {', '.join(CONFIGS)} (4x1: four ranks, oversubscribed on "
                             "fewer than 4 cores)")
    parser.add_argument("--bucket-mb", type=float, default=25.0,
                        help="gradient bucket size, both frameworks (DDP's bucket_cap_mb)")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--json", action="store_true")
    orchestrate(parser.parse_args())


if __name__ == "__main__":
    main()
