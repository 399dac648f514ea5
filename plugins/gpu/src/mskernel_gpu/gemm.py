"""GEMM epilogues: ``gpu.matmul_bias_act`` and the pass ``gpu.fuse_gemm_epilogue`` making it.

``act(x @ w + bias)`` for ``x [M, K]``, ``w [K, N]``, ``bias [N]`` of one float dtype, with
``activation`` "none" or "relu".  On the device the bias is broadcast into the output, which
cuBLAS's GEMM then accumulates into (``beta = 1``: the add is the GEMM's own epilogue, no
extra pass over the output), and ``relu`` runs in place on the result; float16 accumulates in
float32.  The pass rewrites ``add(matmul(x, w), bias)`` (the product read only by the add),
then ``relu`` of such a node.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

import numpy as np

from mskernel_sdk import (
    Accumulation, Attr, InferError, Node, OpDef, OpSample, PassContext, Pat, PatternPass,
    Patterns, TensorType, Type, Value, make_node, on_magnitudes, random_array,
)


MATMUL_BIAS_ACT = "gpu.matmul_bias_act"
ACTIVATIONS = ("none", "relu")
FLOAT_TYPES = ("float16", "bfloat16", "float32", "float64")


def _infer(x: Type, w: Type, bias: Type, *, activation: str) -> Type:
    if not all(isinstance(t, TensorType) for t in (x, w, bias)):
        raise InferError(f"expects three tensors, got {x}, {w}, {bias}")
    assert isinstance(x, TensorType) and isinstance(w, TensorType) and isinstance(bias, TensorType)
    if not (x.dtype == w.dtype == bias.dtype and x.dtype.name in FLOAT_TYPES):
        raise InferError(f"expects one float dtype, got {x}, {w}, {bias}")
    if x.rank != 2 or w.rank != 2 or x.shape[1] != w.shape[0] or bias.shape != w.shape[1:]:
        raise InferError(f"expects x [M, K], w [K, N] and bias [N], got {x}, {w}, {bias}")
    if activation not in ACTIVATIONS:
        raise InferError(f"activation must be one of {', '.join(ACTIVATIONS)}, got "
                         f"{activation!r}")
    return x.with_shape((x.shape[0], w.shape[1]))


def widened(x: Any) -> Any:
    """float16 accumulates in float32 (cuBLAS's compute type for half GEMMs)."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _reference(x: np.ndarray, w: np.ndarray, bias: np.ndarray, *, activation: str) -> np.ndarray:
    y = (np.matmul(widened(x), widened(w)) + widened(bias)).astype(x.dtype)
    return np.maximum(y, np.zeros((), y.dtype)) if activation == "relu" else y


OPDEF = OpDef(MATMUL_BIAS_ACT, ("x", "w", "bias"), _infer, _reference,
              attrs=(Attr("activation", "str", "none"),),
              doc="act(x @ w + bias): a GEMM with the bias added by cuBLAS (beta = 1) and the "
                  "activation applied in place (made by the gpu GEMM epilogue pass)")


def kernel(lib: Any, x: Any, w: Any, bias: Any, activation: str) -> Any:
    xp = lib.np
    if xp is not np and x.dtype in (np.float32, np.float64):
        import cupy.cublas

        y = xp.empty((x.shape[0], w.shape[1]), x.dtype)
        y[...] = bias
        cupy.cublas.gemm("N", "N", x, w, out=y, alpha=1.0, beta=1.0)
    else:
        y = (xp.matmul(widened(x), widened(w)) + widened(bias)).astype(x.dtype)
    if activation == "relu":
        xp.maximum(y, 0, out=y)
    return y


def samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt in FLOAT_TYPES:
        for m, k, n in ((3, 4, 5), (1, 7, 2), (0, 3, 4)):
            args = (random_array(rng, (m, k), dt), random_array(rng, (k, n), dt),
                    random_array(rng, (n,), dt))
            for activation in ACTIVATIONS:
                yield OpSample(MATMUL_BIAS_ACT, args, {"activation": activation},
                               dtypes=(dt, dt, dt))


def accumulation(sample: OpSample) -> Accumulation:
    """``K`` products and the bias per element (relu shrinks no error)."""
    x, w, bias = sample.args
    (products,) = on_magnitudes(OpSample("matmul", (x, w)))
    return Accumulation(np.shape(x)[1] + 1,
                        (products + np.abs(np.asarray(bias, np.float64)),))


def _bias_of(product: Node, bias: Value) -> bool:
    y, t = product.outputs[0].type, bias.type
    return (isinstance(y, TensorType) and isinstance(t, TensorType) and y.rank == 2
            and product.inputs[0].type.rank == 2 and product.inputs[1].type.rank == 2  # type: ignore[union-attr]
            and t.shape == y.shape[1:] and t.dtype == y.dtype and y.dtype.name in FLOAT_TYPES)


def fuse_bias(context: PassContext, add: Node, product: Node, bias: Value) -> Optional[Node]:
    if add.outputs[0].type != product.outputs[0].type or not _bias_of(product, bias):
        return None
    return make_node(context, MATMUL_BIAS_ACT, *product.inputs, bias, activation="none")


def fuse_relu(context: PassContext, act: Node, gemm: Node) -> Optional[Node]:
    if gemm.attrs.get("activation", "none") != "none":
        return None
    return make_node(context, MATMUL_BIAS_ACT, *gemm.inputs, activation="relu")


FUSE_GEMM_EPILOGUE = PatternPass("gpu.fuse_gemm_epilogue", Patterns([
    (Pat("add", (Pat("matmul", name="product", single_use=True), Pat.var("bias")), name="add",
         any_order=True), fuse_bias),
    (Pat("relu", (Pat(MATMUL_BIAS_ACT, name="gemm", single_use=True),), name="act"), fuse_relu),
]))
