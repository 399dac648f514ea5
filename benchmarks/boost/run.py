"""Mixed precision against float32 and PyTorch, and the Boost levels' speed-ups, in one run.

    python benchmarks/boost/run.py [--steps 20] [--workloads mlp_b128 transformer_b16]

For each anchor workload (``benchmarks/workloads``: the MLP and the transformer encoder
layer, a training step of forward, loss, backward and momentum SGD on a fixed batch) it times,
interleaved round by round so that the load of a shared host hits every column alike:

- ``fp32``: mskernel's graph-mode step (``mskernel.jit`` of the whole step);
- ``O1``/``O2``: the same step with ``mskernel.amp.auto_mixed_precision(net, level,
  bfloat16)`` — what ``Model(amp_level=...)`` trains;
- ``torch``: PyTorch eager in float32, and ``torch autocast``: the same under
  ``torch.autocast("cpu", dtype=torch.bfloat16)``.

It prints the median step time of each and the ratios the targets are stated in (O2 against
fp32 in the same run, O2 against PyTorch's autocast).  Then, for resnet_small and LeNet, the
mean step time of each Boost level (``mskernel.amp.build_train_network(...,
boost_level=...)``: LessBN, gradient freezing; O2 adds AdaSum, which changes nothing in one
process) against O0, over whole freezing cycles.  Last, THOR's mean step time (refreshing
its inverses every ``frequency`` steps) against momentum SGD's on the same workloads.  The
host's load average is printed beside.
OpenMP's threads (PyTorch's) wait passively (``OMP_WAIT_POLICY=passive``, set before torch loads):
spinning ones would steal the CPUs from the steps timed after them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ["OMP_WAIT_POLICY"] = "passive"

import mskernel  # noqa: E402
import torch  # noqa: E402
from mskernel import nn  # noqa: E402

from workloads import mskernel_models, torch_models  # noqa: E402
from workloads.spec import WORKLOADS, Workload  # noqa: E402

AMP_LEVELS = ("O1", "O2")
BOOST_LEVELS = ("O0", "O1", "O2")
#: steps before timing a Boost level: the freezing schedule visits its groups (one graph
#: each) within them
WARMUP_STEPS = 40
#: THOR's inverse refresh periods measured (mean over one period of the longest)
THOR_FREQUENCIES = (20, 50)


def mskernel_step(workload: Workload, level: str) -> Callable[[], float]:
    net = mskernel_models.build_model(workload)
    if level != "fp32":
        net = mskernel.amp.auto_mixed_precision(net, level, mskernel.bfloat16)
    cell = mskernel_models.step_cell(workload, net)
    return mskernel_models.make_step(workload, cell, graph=True)


def torch_step(workload: Workload, autocast: bool) -> Callable[[], float]:
    model = torch_models.build_model(workload)
    step = torch_models.make_step(workload, model, graph=False)
    if not autocast:
        return step

    def under_autocast() -> float:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return step()
    return under_autocast


def boost_step(workload: Workload, level: str) -> Callable[[], float]:
    net = mskernel_models.build_model(workload)
    loss = nn.MSELoss() if workload.name == "transformer" else nn.CrossEntropyLoss()
    optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    cell = mskernel.amp.build_train_network(net, optimizer, loss, boost_level=level)
    return mskernel_models.make_step(workload, cell.set_train(True), graph=True)


def thor_step(workload: Workload, frequency: int) -> Callable[[], float]:
    net = mskernel_models.build_model(workload)
    loss = nn.MSELoss() if workload.name == "transformer" else nn.CrossEntropyLoss()
    optimizer = mskernel.boost.thor(net, 0.01, 0.05, 0.9, frequency=frequency)
    cell = mskernel.boost.ThorTrainOneStepCell(net, loss, optimizer)
    return mskernel_models.make_step(workload, cell.set_train(True), graph=True)


def measure_mean(steps: dict[str, Callable[[], Any]], rounds: int, per_round: int
                 ) -> dict[str, float]:
    """The mean step time of each (freezing alternates cheaper and dearer steps), after
    ``WARMUP_STEPS`` steps that compile the graphs of the freezing groups, round-robin."""
    for step in steps.values():
        for _ in range(WARMUP_STEPS):
            step()
    totals = dict.fromkeys(steps, 0.0)
    for _ in range(rounds):
        for name, step in steps.items():
            start = time.perf_counter()
            for _ in range(per_round):
                step()
            totals[name] += time.perf_counter() - start
    return {name: total / (rounds * per_round) for name, total in totals.items()}


def measure(steps: dict[str, Callable[[], Any]], rounds: int, per_round: int
            ) -> dict[str, float]:
    """The median step time of each, timed ``per_round`` steps at a time, round-robin."""
    for step in steps.values():  # compile and warm up
        step()
        step()
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(rounds):
        for name, step in steps.items():
            for _ in range(per_round):
                start = time.perf_counter()
                step()
                times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def run(workload: Workload, rounds: int, per_round: int) -> dict[str, float]:
    steps: dict[str, Callable[[], Any]] = {"fp32": mskernel_step(workload, "fp32")}
    for level in AMP_LEVELS:
        steps[level] = mskernel_step(workload, level)
    steps["torch"] = torch_step(workload, autocast=False)
    steps["torch autocast"] = torch_step(workload, autocast=True)
    return measure(steps, rounds, per_round)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", nargs="+", default=["mlp_b128", "transformer_b16"],
                        choices=sorted(WORKLOADS))
    parser.add_argument("--boost-workloads", nargs="*",
                        default=["resnet_small_b64", "lenet5_b256"], choices=sorted(WORKLOADS))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--per-round", type=int, default=4)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    torch_models.set_threads(args.threads)
    print(f"load average before: {os.getloadavg()[0]:.1f} (host of {os.cpu_count()} CPUs), "
          f"{args.threads} thread(s)")
    header = f"{'workload':<16}" + "".join(f"{c:>16}" for c in
                                           ("fp32", *AMP_LEVELS, "torch", "torch autocast"))
    print(header + f"{'O2 vs fp32':>12}{'O2 vs autocast':>16}")
    for key in args.workloads:
        ms = run(WORKLOADS[key], args.rounds, args.per_round)
        cells = "".join(f"{ms[c] * 1e3:>13.2f} ms" for c in
                        ("fp32", *AMP_LEVELS, "torch", "torch autocast"))
        print(f"{key:<16}{cells}{ms['fp32'] / ms['O2']:>11.2f}x"
              f"{ms['torch autocast'] / ms['O2']:>15.2f}x", flush=True)
    print(f"\n{'boost level':<20}" + "".join(f"{lv:>14}" for lv in BOOST_LEVELS)
          + "".join(f"{lv + ' speed-up':>14}" for lv in BOOST_LEVELS[1:]))
    for key in args.boost_workloads:
        workload = WORKLOADS[key]
        ms = measure_mean({lv: boost_step(workload, lv) for lv in BOOST_LEVELS}, args.rounds,
                          args.per_round * 3)
        print(f"{key:<20}" + "".join(f"{ms[lv] * 1e3:>11.2f} ms" for lv in BOOST_LEVELS)
              + "".join(f"{ms['O0'] / ms[lv]:>13.2f}x" for lv in BOOST_LEVELS[1:]), flush=True)
    print(f"\n{'THOR':<20}{'momentum':>14}" + "".join(f"{'THOR f=' + str(f):>14}"
                                                   for f in THOR_FREQUENCIES))
    for key in args.boost_workloads:
        workload = WORKLOADS[key]
        steps = {"momentum": mskernel_step(workload, "fp32")}
        steps.update({f"f={f}": thor_step(workload, f) for f in THOR_FREQUENCIES})
        ms = measure_mean(steps, 1, max(THOR_FREQUENCIES))
        print(f"{key:<20}" + "".join(f"{v * 1e3:>11.2f} ms" for v in ms.values()), flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
