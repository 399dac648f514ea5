"""Per-example gradients — what differential privacy needs — side by side with PyTorch.

One call computes the gradient of a classifier's loss with respect to its parameters for
every example of a batch separately:

- **mskernel vmap(grad)** — ``mskernel.vmap(mskernel.grad(loss), in_axes=(None, 0, 0))``,
  after its first call compiled it (one graph, cached);
- **mskernel loop** — ``mskernel.grad`` under ``@jit`` called once per example (what one
  writes without ``vmap``), for scale;
- **torch.func** — ``torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))``.

Two models: an MLP (784-256-10) and a small CNN (conv 3x3, 16 channels, max-pool, linear) on
28x28 inputs.  Everything runs in one process on one thread, frameworks interleaved round by
round; each figure is the median over rounds of the process CPU time of one call.

    python benchmarks/per_example_grads.py [--batch 64] [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as tF  # noqa: E402

import mskernel  # noqa: E402
from mskernel import ops  # noqa: E402

torch.set_num_threads(1)


def mlp_params(rng: np.random.Generator) -> list[np.ndarray]:
    return [rng.standard_normal((784, 256)).astype(np.float32) * 0.05,
            np.zeros(256, np.float32),
            rng.standard_normal((256, 10)).astype(np.float32) * 0.05,
            np.zeros(10, np.float32)]


def cnn_params(rng: np.random.Generator) -> list[np.ndarray]:
    return [rng.standard_normal((16, 1, 3, 3)).astype(np.float32) * 0.3,
            np.zeros(16, np.float32),
            rng.standard_normal((16 * 14 * 14, 10)).astype(np.float32) * 0.01,
            np.zeros(10, np.float32)]


def mlp_loss(p: Any, x: Any, y: Any) -> Any:
    w1, b1, w2, b2 = p
    logits = ops.relu(ops.reshape(x, (784,)) @ w1 + b1) @ w2 + b2
    return -ops.sum(ops.one_hot(y, 10) * ops.log_softmax(logits))


def cnn_loss(p: Any, x: Any, y: Any) -> Any:
    conv_w, conv_b, w, b = p
    h = ops.relu(ops.conv2d(ops.reshape(x, (1, 1, 28, 28)), conv_w, conv_b, padding=1))
    logits = (ops.reshape(ops.max_pool2d(h, 2), (1, -1)) @ w + b)[0]
    return -ops.sum(ops.one_hot(y, 10) * ops.log_softmax(logits))


def torch_mlp_loss(p: Any, x: Any, y: Any) -> Any:
    w1, b1, w2, b2 = p
    return tF.cross_entropy((torch.relu(x.reshape(1, 784) @ w1 + b1) @ w2 + b2), y[None])


def torch_cnn_loss(p: Any, x: Any, y: Any) -> Any:
    conv_w, conv_b, w, b = p
    h = torch.relu(tF.conv2d(x.reshape(1, 1, 28, 28), conv_w, conv_b, padding=1))
    return tF.cross_entropy(tF.max_pool2d(h, 2).reshape(1, -1) @ w + b, y[None])


Calls = dict[str, Callable[[], Any]]


def calls(params: list[np.ndarray], loss: Callable[..., Any], torch_loss: Callable[..., Any],
          x: np.ndarray, y: np.ndarray) -> Calls:
    p = tuple(mskernel.Tensor(a) for a in params)
    mx, my = mskernel.Tensor(x), mskernel.Tensor(y)
    batched = mskernel.vmap(mskernel.grad(loss), in_axes=(None, 0, 0))
    one = mskernel.jit(mskernel.grad(loss))
    examples = [(mskernel.Tensor(x[b]), mskernel.Tensor(y[b])) for b in range(len(x))]
    tp = tuple(torch.tensor(a) for a in params)
    tx, ty = torch.tensor(x), torch.tensor(y)
    per_example = torch.func.vmap(torch.func.grad(torch_loss), in_dims=(None, 0, 0))
    ours, theirs = batched(p, mx, my), per_example(tp, tx, ty)
    for a, b in zip(ours, theirs):  # the same numbers before timing anything
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-3, atol=2e-5)
    for ex in examples[:1]:
        one(p, *ex)
    return {"mskernel vmap(grad)": lambda: batched(p, mx, my),
            "mskernel loop of grad": lambda: [one(p, *ex) for ex in examples],
            "torch.func vmap(grad)": lambda: per_example(tp, tx, ty)}


def measure(cases: Calls, rounds: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, call in cases.items():
            start = time.process_time()
            call()
            times[name].append(time.process_time() - start)
    return {name: statistics.median(ts) for name, ts in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    y = rng.integers(0, 10, args.batch).astype(np.int64)
    models = {"MLP 784-256-10": (mlp_params, mlp_loss, torch_mlp_loss,
                                 rng.standard_normal((args.batch, 784)).astype(np.float32)),
              "CNN conv16-pool-linear": (cnn_params, cnn_loss, torch_cnn_loss,
                                         rng.standard_normal((args.batch, 28, 28))
                                         .astype(np.float32))}
    print(f"per-example gradients, batch {args.batch}, median CPU time of one call over "
          f"{args.rounds} rounds; mskernel on {mskernel.get_device()}")
    print(f"{'model':24} {'implementation':24} {'ms':>9} {'÷ torch.func':>13}")
    for model, (make, loss, torch_loss, x) in models.items():
        result = measure(calls(make(rng), loss, torch_loss, x, y), args.rounds)
        base = result["torch.func vmap(grad)"]
        for name, seconds in result.items():
            print(f"{model:24} {name:24} {seconds * 1e3:9.2f} {seconds / base:12.2f}x")


if __name__ == "__main__":
    main()
