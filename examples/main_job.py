"""Train a two-layer perceptron on Fashion-MNIST with mskernel's core alone.

The training step is one IR graph — forward, backward (written out by hand: the autodiff
plugin is not needed for this demonstration) and SGD updates stored into parameter refs
through the state token — optimised by the generic pass pipeline, partitioned and run by the
runtime.  ``--data DIR`` takes any folder of MNIST-format IDX files (gzipped or not).
"""

from __future__ import annotations

import argparse
import gzip
import time
from pathlib import Path

import numpy as np

from mskernel.ir import TOKEN, GraphBuilder, RefType, tensor_type
from mskernel.runtime import TOKEN_VALUE, RefCell, compile_graph

HIDDEN = 256
CLASSES = 10


def read_idx(path: Path) -> np.ndarray:
    """An IDX file (the MNIST format): magic, dims as big-endian u32, then uint8 data."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        raw = f.read()
    if raw[:2] != b"\x00\x00" or raw[2] != 0x08:
        raise ValueError(f"{path} is not an unsigned-byte IDX file")
    ndim = raw[3]
    dims = np.frombuffer(raw, ">u4", count=ndim, offset=4)
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(tuple(int(d) for d in dims))


def load_split(data: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    def find(stem: str) -> Path:
        for name in (stem, stem + ".gz"):
            if (data / name).exists():
                return data / name
        raise FileNotFoundError(f"{data} has no {stem}[.gz]")

    images = read_idx(find(f"{split}-images-idx3-ubyte"))
    labels = read_idx(find(f"{split}-labels-idx1-ubyte"))
    x = images.reshape(len(images), -1).astype(np.float32) / 255.0
    return (x - 0.2860) / 0.3530, labels.astype(np.int64)


def mlp_forward(b: GraphBuilder, x, w1, b1, w2, b2):
    pre = b.op("add", b.op("matmul", x, w1), b1)
    hidden = b.op("relu", pre)
    logits = b.op("add", b.op("matmul", hidden, w2), b2)
    return pre, hidden, logits


def train_step_graph(batch: int, lr: float):
    """(params as refs, token, x, labels) → (loss, token): one SGD step, in place."""
    b = GraphBuilder("train_step")
    shapes = {"w1": (784, HIDDEN), "b1": (HIDDEN,), "w2": (HIDDEN, CLASSES), "b2": (CLASSES,)}
    refs = {k: b.input(RefType(tensor_type("f32", s)), k) for k, s in shapes.items()}
    token = b.input(TOKEN, "token")
    x = b.input(tensor_type("f32", (batch, 784)), "x")
    labels = b.input(tensor_type("i64", (batch,)), "labels")

    params = {}
    for k, ref in refs.items():
        params[k], token = b.op("ref_load", ref, token)
    pre, hidden, logits = mlp_forward(b, x, params["w1"], params["b1"], params["w2"], params["b2"])

    onehot = b.op("one_hot", labels, depth=CLASSES, dtype="f32")
    logp = b.op("log_softmax", logits, axis=-1)
    loss = b.op("neg", b.op("mean", b.op("sum", b.op("mul", onehot, logp), axes=(1,))))

    inv_batch = b.op("full", shape=(), value=1.0 / batch, dtype="f32")
    d_logits = b.op("mul", b.op("sub", b.op("exp", logp), onehot), inv_batch)
    grads = {
        "w2": b.op("matmul", b.op("transpose", hidden), d_logits),
        "b2": b.op("sum", d_logits, axes=(0,)),
    }
    d_hidden = b.op("matmul", d_logits, b.op("transpose", params["w2"]))
    zero = b.op("full", shape=(), value=0.0, dtype="f32")
    d_pre = b.op("where", b.op("greater", pre, zero), d_hidden, zero)
    grads["w1"] = b.op("matmul", b.op("transpose", x), d_pre)
    grads["b1"] = b.op("sum", d_pre, axes=(0,))

    step = b.op("full", shape=(), value=lr, dtype="f32")
    for k, ref in refs.items():
        updated = b.op("sub", params[k], b.op("mul", grads[k], step))
        token = b.op("ref_store", ref, updated, token)
    return b.build([loss, token])


def predict_graph(batch: int):
    b = GraphBuilder("predict")
    x = b.input(tensor_type("f32", (batch, 784)), "x")
    weights = [b.input(tensor_type("f32", s), k) for k, s in
               (("w1", (784, HIDDEN)), ("b1", (HIDDEN,)), ("w2", (HIDDEN, CLASSES)), ("b2", (CLASSES,)))]
    _, _, logits = mlp_forward(b, x, *weights)
    return b.build([b.op("argmax", logits, axis=1)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/usr/share/datasets/fashion-mnist"))
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    x_train, y_train = load_split(args.data, "train")
    x_test, y_test = load_split(args.data, "t10k")
    print(f"Fashion-MNIST from {args.data}: {len(x_train)} train, {len(x_test)} test images")

    rng = np.random.default_rng(args.seed)
    init = {
        "w1": rng.normal(0, np.sqrt(2 / 784), (784, HIDDEN)), "b1": np.zeros(HIDDEN),
        "w2": rng.normal(0, np.sqrt(2 / HIDDEN), (HIDDEN, CLASSES)), "b2": np.zeros(CLASSES),
    }
    step = compile_graph(train_step_graph(args.batch, args.lr))
    backend = step.plan.segments[0].backend
    cells = {k: RefCell(tensor_type("f32", v.shape), v) for k, v in init.items()}
    print(step.explain().splitlines()[0])

    start = time.perf_counter()
    steps = len(x_train) // args.batch
    for epoch in range(args.epochs):
        order = rng.permutation(len(x_train))
        losses = []
        for i in range(steps):
            idx = order[i * args.batch:(i + 1) * args.batch]
            loss, _ = step.run([*cells.values(), TOKEN_VALUE, x_train[idx], y_train[idx]])
            losses.append(float(loss.to_host()))
        print(f"epoch {epoch + 1}/{args.epochs}: mean loss {np.mean(losses):.4f}")
    train_time = time.perf_counter() - start

    predict = compile_graph(predict_graph(len(x_test)))
    weights = [cells[k].value.to_host() for k in ("w1", "b1", "w2", "b2")]
    (pred,) = predict(x_test, *weights)
    accuracy = float(np.mean(pred == y_test))
    print(f"test accuracy: {accuracy:.4f} ({len(x_test)} images), "
          f"training time {train_time:.1f} s on backend '{backend}'")


if __name__ == "__main__":
    main()
