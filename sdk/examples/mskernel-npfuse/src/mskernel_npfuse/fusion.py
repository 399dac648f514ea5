"""Fusing ``activation(matmul(x, w) + b)`` into one op, ``npfuse.dense``, run by one kernel.

The fused op is an op like any other: defined once, here, with its shape rule and its
reference semantics — exactly the core ops it replaces, in the same order — so the
conformance kit checks the kernel against it, and the kit's graph stage checks the pass
(an MLP compiled on this backend is fused).  The pass is a pattern table of two rules:

- ``add(matmul(x, w), b)`` → ``dense(x, w, b, activation="none")``;
- ``relu(dense(..., "none"))`` / ``tanh(...)`` → ``dense(..., activation="relu" / "tanh")``.

Nodes the rewrite leaves unused are removed by the generic ``dce`` pass, run after it in the
backend's pipeline :data:`PIPELINE`.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping, Optional

import numpy as np
from mskernel_sdk import (
    Attr, InferError, Node, OpDef, OpSample, PassContext, PatternPass, Patterns, TensorType,
    Value, make_node, random_array,
)

DENSE = "npfuse.dense"
PIPELINE = "npfuse.fuse"

ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "none": lambda v: v,
    "relu": lambda v: np.maximum(v, np.zeros((), v.dtype)),  # as the core's relu
    "tanh": np.tanh,
}


def _dense_infer(x: TensorType, w: TensorType, b: TensorType, activation: str) -> TensorType:
    if activation not in ACTIVATIONS:
        raise InferError(f"activation must be one of {', '.join(ACTIVATIONS)}, "
                         f"got {activation!r}")
    if not all(isinstance(t, TensorType) and t.dtype.is_floating for t in (x, w, b)):
        raise InferError(f"expects floating-point tensors, got {x}, {w}, {b}")
    if not x.dtype == w.dtype == b.dtype:
        raise InferError(f"x, w and b must have one dtype, got {x}, {w}, {b}")
    if x.rank != 2 or w.rank != 2 or b.shape != (w.shape[-1:]) or x.shape[1] != w.shape[0]:
        raise InferError(f"expects x [n, k], w [k, m] and b [m], got {x}, {w}, {b}")
    return x.with_shape((x.shape[0], w.shape[1]))


def _widened(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32) if a.dtype == np.float16 else a  # as the core's matmul


def _dense(x: np.ndarray, w: np.ndarray, b: np.ndarray, activation: str) -> np.ndarray:
    out = np.matmul(_widened(x), _widened(w)).astype(x.dtype) + b
    return ACTIVATIONS[activation](out).astype(x.dtype, copy=False)


DENSE_OP = OpDef(DENSE, ("x", "w", "b"), _dense_infer, _dense,
                 attrs=(Attr("activation", "str", "none"),),
                 doc="activation(x @ w + b), for x [n, k], w [k, m], b [m]")


def dense_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    """Each float dtype and activation; a single row and column, empty batch and depth."""
    for dt in ("float32", "float64", "float16"):
        for n, k, m in ((4, 8, 3), (1, 5, 1), (0, 4, 2), (3, 0, 2)):
            args = tuple(random_array(rng, s, dt) for s in ((n, k), (k, m), (m,)))
            for activation in ACTIVATIONS:
                yield OpSample(DENSE, args, {"activation": activation}, dtypes=(dt,) * 3)


def _producer(producers: Mapping[Value, Node], value: Value, op: str) -> Optional[Node]:
    node = producers.get(value)
    return node if node is not None and node.op == op else None


def _fuse_bias(node: Node, producers: Mapping[Value, Node], context: PassContext) -> Any:
    for product, bias in (node.inputs, node.inputs[::-1]):
        matmul = _producer(producers, product, "matmul")
        if matmul is None:
            continue
        try:  # only the shapes the fused op takes: x [n, k] @ w [k, m] + b [m]
            return make_node(context, DENSE, *matmul.inputs, bias)
        except (TypeError, ValueError):
            continue
    return None


def _fuse_activation(node: Node, producers: Mapping[Value, Node], context: PassContext) -> Any:
    dense = _producer(producers, node.inputs[0], DENSE)
    if dense is None or dense.attrs["activation"] != "none":
        return None
    return make_node(context, DENSE, *dense.inputs, activation=node.op)


FUSE_DENSE = PatternPass("npfuse.fuse_dense", Patterns([
    ("add", _fuse_bias),
    (("relu", "tanh"), _fuse_activation),
]))
