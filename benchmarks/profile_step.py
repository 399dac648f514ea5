"""Where one workload's compiled mskernel step spends its time on the cpu backend: every plan
step timed in C++ (``mskernel_cpu.profile``), then the time per op, and the step's wall time.

    python benchmarks/profile_step.py mlp_b128 [--threads 1] [--repeats 10] [--top 25]
"""

from __future__ import annotations

import argparse
import time

import mskernel
import mskernel_cpu
from workloads import mskernel_models, spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", choices=sorted(spec.WORKLOADS))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--top", type=int, default=25, help="lines per table")
    args = parser.parse_args()
    mskernel_cpu.set_num_threads(args.threads)
    workload = spec.WORKLOADS[args.workload]
    cell = mskernel_models.step_cell(workload, mskernel_models.build_model(workload))
    arrays = workload.batch_arrays() if workload.training else workload.batch_arrays()[:1]
    inputs = [mskernel.Tensor(a) for a in arrays]
    jitted = mskernel.jit(cell)
    report = mskernel_cpu.profile(jitted, *inputs, repeats=args.repeats)
    print(report.table(top=args.top))
    jitted(*inputs)
    start = time.perf_counter()
    for _ in range(args.repeats):
        jitted(*inputs)
    step_ms = (time.perf_counter() - start) / args.repeats * 1e3
    print(f"step wall time {step_ms:.3f} ms at {args.threads} thread(s)")


if __name__ == "__main__":
    main()
