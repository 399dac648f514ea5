"""The npfuse backend: NumPy kernels for a subset of the core ops in float32 and float64,
plus the fused ``npfuse.dense``; every other node falls back to the next backend.

Its own way of running graphs: ``compile`` first runs the backend's pass pipeline
(:data:`~mskernel_npfuse.fusion.PIPELINE`: dense fusion, then dead-code elimination), and its
kernels work in place where the reference semantics allow (the fused dense kernel adds the
bias and applies the activation in the matmul's output buffer; softmax normalises in its
own).  Results equal the reference semantics to the last bit on the claimed ops.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np
from mskernel_sdk import (
    Availability, Backend, Capabilities, CompileOptions, DeviceArray, Executable, Graph,
    OpSupport, TensorType, as_storage, dtype, run_pipeline,
)

from .fusion import DENSE, PIPELINE


def _axes(axes: Optional[Sequence[int]]) -> Optional[tuple[int, ...]]:
    return None if axes is None else tuple(axes)


def _sum(x: np.ndarray, axes: Optional[Sequence[int]], keepdims: bool) -> np.ndarray:
    return np.sum(x, axis=_axes(axes), keepdims=keepdims)


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    out = x - np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    np.exp(out, out=out)
    out /= np.sum(out, axis=axis, keepdims=True)
    return out


def _dense(x: np.ndarray, w: np.ndarray, b: np.ndarray, activation: str) -> np.ndarray:
    out = np.matmul(x, w)
    out += b
    if activation == "relu":
        np.maximum(out, 0, out=out)
    elif activation == "tanh":
        np.tanh(out, out=out)
    return out


#: op name → kernel: the node's input arrays as arguments, its attributes as keywords.
KERNELS: dict[str, Callable[..., Any]] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "maximum": np.maximum, "minimum": np.minimum, "neg": np.negative, "abs": np.abs,
    "square": np.square, "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, x.dtype.type(0)),
    "matmul": np.matmul, "sum": _sum, "softmax": _softmax, DENSE: _dense,
}

#: The dtypes the kernels are claimed for; the same ops in other dtypes fall back.
DTYPES = frozenset({dtype("float32"), dtype("float64")})


class NpfuseExecutable(Executable):
    """A fused graph of claimed nodes, run one kernel per node on the backend's arrays."""

    def __init__(self, backend: "NpfuseBackend", graph: Graph) -> None:
        super().__init__(graph)
        self.backend = backend

    def run(self, args: Sequence[Any]) -> list[Any]:
        env = {value: arg.data for value, arg in zip(self.graph.inputs, args)}
        for node in self.graph.nodes:
            (out,) = node.outputs
            result = KERNELS[node.op](*(env[v] for v in node.inputs), **node.attrs)
            env[out] = np.asarray(result, dtype=out.type.dtype.storage)
        return [DeviceArray(self.backend, v.type, env[v]) for v in self.graph.outputs]


class NpfuseBackend(Backend):
    """Host memory is this backend's device memory; arrays are copied in and out."""

    name = "npfuse"

    def availability(self) -> Availability:
        return Availability(available=True, reason=f"NumPy {np.__version__} on the host")

    def capabilities(self) -> Capabilities:
        return Capabilities.uniform(KERNELS, OpSupport(dtypes=DTYPES))

    def to_device(self, host: np.ndarray, type: TensorType) -> DeviceArray:
        return DeviceArray(self, type, np.array(as_storage(host, type.dtype), copy=True))

    def to_host(self, array: DeviceArray) -> np.ndarray:
        return np.array(array.data, copy=True)

    def compile(self, graph: Graph, options: CompileOptions) -> Executable:
        fused = run_pipeline(PIPELINE, graph, options, backend=self.name)
        return NpfuseExecutable(self, fused.graph)
