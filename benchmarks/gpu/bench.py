"""The anchor workloads on an NVIDIA GPU: mskernel's gpu backend (graph mode: the whole
training step compiled with ``mskernel.jit``) beside PyTorch CUDA eager, ``torch.compile``
and ``torch.compile(mode="reduce-overhead")`` (CUDA graphs), in one process, one after the
other, with the ratio to the best PyTorch configuration.

    python benchmarks/gpu/bench.py                 # the default set, ~5 minutes on an H200
    python benchmarks/gpu/bench.py --quick         # a few steps each: the harness end to end
    python benchmarks/gpu/bench.py --workloads mlp_b1024,gpt2_layer --json

Workloads (batch >= 256, as the targets ask, and a GPT-2-small-sized layer):

- ``mlp_b256``, ``mlp_b1024``, ``lenet5_b256``, ``resnet_small_b256``, ``transformer_b256``:
  the CPU anchors of ``benchmarks/workloads`` (same layers, loss and update) at GPU batches;
- ``gpt2_layer``: one post-LN encoder layer of GPT-2 small's width (d 768, 12 heads, FFN
  3072, no dropout) on 16 sequences of 512 tokens, mean squared error, SGD with momentum;
- ``host_overhead``: a cached small jitted step (``relu(x @ w)``, 8x16 @ 16x16) called in a
  loop without waiting for the device: microseconds of host time per call (target <= 30).

Both frameworks compute in float32 with full-precision float32 GEMMs (PyTorch's default
``highest``; mskernel's default): TF32 changes the numerics, so it is compared only when
asked (``--tf32`` sets both frameworks to TF32).  Each step ends with the loss on the host.
Figures are medians of the timed steps; the targets: graph-mode training >= 1.0x the best
PyTorch configuration.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from workloads.measure import run_timed  # noqa: E402
from workloads.spec import LEARNING_RATE, MOMENTUM, Workload  # noqa: E402

TRAINING_TARGET = 1.0
OVERHEAD_TARGET_US = 30.0
GPT2 = {"d_model": 768, "heads": 12, "d_ff": 3072, "batch": 16, "seq": 512}
ANCHORS = {w.key: w for w in (Workload("mlp", 256), Workload("mlp", 1024),
                              Workload("lenet5", 256), Workload("resnet_small", 256),
                              Workload("transformer", 256))}
WORKLOADS = [*ANCHORS, "gpt2_layer", "host_overhead"]
#: what a plain run measures (within run_on_gpu.sh's time; torch.compile takes most of it)
DEFAULT = ["mlp_b1024", "resnet_small_b256", "transformer_b256", "gpt2_layer", "host_overhead"]


def gpt2_arrays() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    shape = (GPT2["batch"], GPT2["seq"], GPT2["d_model"])
    return rng.standard_normal(shape, np.float32), rng.standard_normal(shape, np.float32)


def samples_of(key: str) -> int:
    return GPT2["batch"] * GPT2["seq"] if key == "gpt2_layer" else ANCHORS[key].batch


# --- PyTorch CUDA ---------------------------------------------------------------------------

def torch_step(key: str, mode: str) -> Callable[[], float]:
    import torch
    import torch.nn.functional as F

    device = torch.device("cuda")
    if key == "gpt2_layer":
        torch.manual_seed(0)
        model = torch.nn.TransformerEncoderLayer(GPT2["d_model"], GPT2["heads"], GPT2["d_ff"],
                                                 dropout=0.0, batch_first=True)
        arrays, loss_fn = gpt2_arrays(), F.mse_loss
    else:
        from workloads import torch_models

        workload = ANCHORS[key]
        model = torch_models.build_model(workload)
        arrays, loss_fn = workload.batch_arrays(), torch_models.loss_function(workload)
    model = model.to(device).train()
    x, y = (torch.from_numpy(a).to(device) for a in arrays)
    forward = {"eager": model, "compile": torch.compile(model),
               "compile_cudagraphs": torch.compile(model, mode="reduce-overhead")}[mode]
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE, momentum=MOMENTUM)

    def step() -> float:
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(forward(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


# --- mskernel on the gpu backend ------------------------------------------------------------

def mskernel_step(key: str) -> tuple[Callable[[], float], dict[str, Any]]:
    import mskernel
    from mskernel import nn

    if key == "gpt2_layer":
        mskernel.random.set_seed(0)
        net = nn.TransformerEncoderLayer(GPT2["d_model"], GPT2["heads"], GPT2["d_ff"],
                                         dropout=0.0, batch_first=True)
        cell = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                                   nn.Momentum(net.trainable_params(), LEARNING_RATE, MOMENTUM))
        x, y = (mskernel.Tensor(a) for a in gpt2_arrays())
        jitted = mskernel.jit(cell.set_train(True))
        return (lambda: float(jitted(x, y))), {}
    from workloads import mskernel_models

    workload = ANCHORS[key]
    cell = mskernel_models.step_cell(workload, mskernel_models.build_model(workload))
    return (mskernel_models.make_step(workload, cell, graph=True),
            mskernel_models.placement(workload, cell, graph=True))


def host_overhead(calls: int) -> dict[str, float]:
    """Host microseconds per call of a cached jitted step, and of PyTorch CUDA eager's two
    launches for the same step, without waiting for the device between calls."""
    import mskernel
    import torch

    rng = np.random.default_rng(0)
    xs, ws = rng.standard_normal((8, 16), np.float32), rng.standard_normal((16, 16), np.float32)
    step = mskernel.jit(lambda x, w: mskernel.ops.relu(mskernel.ops.matmul(x, w)))
    x, w = mskernel.Tensor(xs), mskernel.Tensor(ws)
    for _ in range(20):
        out = step(x, w)
    out.numpy()
    start = time.perf_counter()
    for _ in range(calls):
        out = step(x, w)
    ours = (time.perf_counter() - start) / calls * 1e6
    out.numpy()
    tx, tw = torch.from_numpy(xs).cuda(), torch.from_numpy(ws).cuda()
    for _ in range(20):
        torch.relu(tx @ tw)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        torch.relu(tx @ tw)
    theirs = (time.perf_counter() - start) / calls * 1e6
    torch.cuda.synchronize()
    return {"mskernel_us": ours, "torch_eager_us": theirs}


# --- the run --------------------------------------------------------------------------------

def timed(step: Callable[[], float], quick: bool) -> dict[str, Any]:
    result = run_timed(step, warmup=2 if quick else 5, steps=3 if quick else 20,
                       min_seconds=0.0 if quick else 1.0, max_seconds=5.0 if quick else 10.0)
    median = statistics.median(result["times"])
    return {"step_ms": median * 1e3, "first_step_s": result["first_step_s"],
            "loss_first": result["first"], "loss_last": result["last"]}


def run(keys: list[str], quick: bool, emit: Callable[[dict[str, Any]], None]) -> list[dict]:
    rows = []
    for key in keys:
        if key == "host_overhead":
            record = {"workload": key, **host_overhead(200 if quick else 5000)}
            emit(record)
            rows.append(record)
            continue
        record: dict[str, Any] = {"workload": key, "samples": samples_of(key)}
        for mode in ("eager", "compile", "compile_cudagraphs"):
            try:
                record[f"torch_{mode}"] = timed(torch_step(key, mode), quick)
            except Exception as exc:  # one configuration failing leaves the others
                record[f"torch_{mode}"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        try:
            step, placement = mskernel_step(key)
            record["mskernel_graph"] = {**timed(step, quick), "placement": placement}
        except Exception as exc:
            record["mskernel_graph"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        emit(record)
        rows.append(record)
    return rows


def summary(rows: list[dict]) -> str:
    lines = [f"{'workload':<20}{'torch eager':>13}{'compile':>11}{'cudagraphs':>12}"
             f"{'mskernel':>11}{'ratio':>8}  target"]
    for row in rows:
        if row["workload"] == "host_overhead":
            lines.append(f"host overhead of a cached jitted step: {row['mskernel_us']:.1f} us "
                         f"per call (target <= {OVERHEAD_TARGET_US:.0f}); PyTorch CUDA eager, "
                         f"2 launches: {row['torch_eager_us']:.1f} us")
            continue
        ms = {k: row[k].get("step_ms") for k in ("torch_eager", "torch_compile",
                                                   "torch_compile_cudagraphs", "mskernel_graph")}
        best = min((v for k, v in ms.items() if k != "mskernel_graph" and v), default=None)
        ours = ms["mskernel_graph"]
        ratio = best / ours if best and ours else None
        cells = [f"{v:>10.2f}ms" if v else f"{'failed':>12}" for v in ms.values()]
        verdict = "-" if ratio is None else ("met" if ratio >= TRAINING_TARGET else "NOT met")
        lines.append(f"{row['workload']:<20}{''.join(cells)}"
                     f"{(f'{ratio:.2f}x' if ratio else '-'):>8}  >= {TRAINING_TARGET}x {verdict}")
        for k in ms:
            if "error" in row[k]:
                lines.append(f"    {k}: {row[k]['error']}")
    lines.append("ratio = best PyTorch step time / mskernel step time (higher is better)")
    return "\n".join(lines)


def main(argv: Any = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workloads", default=",".join(DEFAULT),
                        help=f"comma-separated, of: {', '.join(WORKLOADS)}")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--tf32", action="store_true")
    parser.add_argument("--json", action="store_true", help="one JSON line per workload")
    args = parser.parse_args(argv)
    from mskernel_gpu.probe import probe

    found = probe()
    if not found.available:
        print(f"the gpu backend is unavailable: {found.summary()}", file=sys.stderr)
        return 2
    if args.tf32:
        import mskernel_gpu
        import torch

        torch.set_float32_matmul_precision("high")
        mskernel_gpu.set_float32_matmul_precision("high")
    print("; ".join(found.lines()), file=sys.stderr)

    def emit(record: dict[str, Any]) -> None:
        print(json.dumps(record) if args.json else f"done: {record['workload']}",
              file=sys.stdout if args.json else sys.stderr, flush=True)

    rows = run([k for k in args.workloads.split(",") if k], args.quick, emit)
    if not args.json:
        print(summary(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
