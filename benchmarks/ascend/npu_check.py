"""LeNet-5 on a real Ascend NPU against its emulation and float32, in each precision mode.

For each of ATC's precision modes: the main job's LeNet-5 (seeded initial weights, or a
checkpoint) is traced at a batch of Fashion-MNIST test images, compiled for the ``ascend``
backend (ONNX → ATC → offline model → ACL) and for ``ascend-emulate``, and run by both and
by the float32 reference.  Prints, per mode, the relative error of the NPU against float32
and against the emulator (how faithful the emulation is), and the median time of an
inference on the NPU; appends the figures to ``results_npu.jsonl``.  Exits with status 2,
printing what is missing, where the ascend backend is unavailable.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import mskernel
import mskernel_ascend
from mskernel_sdk import CompileOptions, compile_graph, run_reference

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from lenet_fashion_mnist import DEFAULT_DATA, LeNet5, fashion_mnist  # noqa: E402

RESULTS = Path(__file__).with_name("results_npu.jsonl")


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--checkpoint", type=Path, default=None)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()

    from mskernel_ascend.npu import AscendBackend
    from mskernel_onnx.capture import capture

    availability = AscendBackend().availability()
    print(f"ascend backend: {'available' if availability.available else 'UNAVAILABLE'}: "
          f"{availability.reason}")
    if not availability.available:
        return 2
    mskernel.random.set_seed(0)
    net = LeNet5()
    if args.checkpoint:
        mskernel.load_checkpoint(str(args.checkpoint), net)
    images = next(fashion_mnist(args.data, "test", args.batch_size, 1)
                  .create_dict_iterator())["image"]
    captured = capture(net, [images])
    graph = captured.graph
    arrays = [images.asnumpy()] + [captured.weights[v.name] for v in graph.inputs[1:]]
    (exact,) = run_reference(graph, arrays)
    options = CompileOptions(fallback="deny")
    for mode in mskernel_ascend.PRECISION_MODES:
        with mskernel_ascend.precision_mode(mode):
            npu = compile_graph(graph, backends=["ascend"], options=options)
            emulated = compile_graph(graph, backends=["ascend-emulate"], options=options)
            (on_npu,), (emulation,) = npu(*arrays), emulated(*arrays)
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                npu(*arrays)
                times.append(time.perf_counter() - start)
        row = {"mode": mode, "batch": args.batch_size,
               "npu_vs_float32": relative_error(on_npu, exact),
               "emulated_vs_float32": relative_error(emulation, exact),
               "npu_vs_emulated": relative_error(on_npu, emulation),
               "npu_ms": 1e3 * float(np.median(times)),
               "soc": AscendBackend().soc_version(), "when": time.strftime("%Y-%m-%d %H:%M")}
        print(json.dumps(row))
        with RESULTS.open("a") as f:
            f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
