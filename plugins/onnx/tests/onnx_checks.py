"""Checking exported models against the reference: ONNX's checker with strict shape
inference, then ONNX Runtime (the test oracle) on the same inputs.

ONNX Runtime has no kernel for some types an ONNX op takes (float64 trigonometry and
convolutions, ``Where`` on bool and uint8, ...), and where it expands an op
it lacks into the op's ONNX function it may build nodes its own type check rejects (``Clip``
on bfloat16 at opset 13 becomes a ``Where`` that opset 13 does not allow on bfloat16).  A
model it cannot run for those reasons is a *runtime gap*, reported as such: the model has
still passed ONNX's checker.  Any other failure of ONNX Runtime is a failure of the export.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np
import onnx
import onnxruntime as ort

from mskernel_onnx.export import check_onnx, complex_pairs
from mskernel_sdk import GraphBuilder, assert_close, dtype, run_reference

ort.set_default_logger_severity(3)

#: what ONNX Runtime says when it has no kernel for a type the ONNX op takes
_GAPS = ("NOT_IMPLEMENTED", "is not currently registered or supported",
         "data type is not supported")


@dataclass
class Outcome:
    """What became of one model: ``ran`` (ONNX Runtime agreed with the reference) or
    ``gap`` (ONNX Runtime has no kernel for it; the reason)."""

    ran: bool = False
    gap: Optional[str] = None


#: what became of the models checked in this session: "ran", "gap", "refused" (for the summary)
TALLY: Counter[str] = Counter()


@dataclass
class OrtCache:
    """ONNX Runtime's result for each distinct model: models that differ only in their opset
    import, with every node resolving to the same operator version, run the same kernels."""

    results: dict[bytes, Any] = field(default_factory=dict)


def run_ort(model: onnx.ModelProto, feeds: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run ``model`` on ONNX Runtime's CPU provider, on one thread that never spins."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, feeds)))


def _kernel_key(model: onnx.ModelProto, feeds: Sequence[np.ndarray]) -> bytes:
    """The graph and the operator version each of its nodes resolves to at the model's
    opset (subgraphs included), and the inputs."""
    opset = model.opset_import[0].version
    versions = sorted({(n.op_type, onnx.defs.get_schema(n.op_type, opset, "").since_version)
                       for n in _all_nodes(model.graph)})
    digest = hashlib.sha256(model.graph.SerializeToString())
    digest.update(repr(versions).encode())
    for array in feeds:
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.digest()


def _all_nodes(graph: onnx.GraphProto) -> Any:
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _all_nodes(attr.g)


def check_against_reference(model: onnx.ModelProto, graph: Any, args: Sequence[np.ndarray], *,
                            rtol: Optional[float] = None, atol: Optional[float] = None,
                            cache: Optional[OrtCache] = None, what: str = "") -> Outcome:
    """Check ``model`` (the export of IR ``graph``) with ONNX's checker, run it under ONNX
    Runtime on ``args`` and compare with the reference's outputs of ``graph``."""
    check_onnx(model)
    feeds = [complex_pairs(a) for a in args]  # complex values travel as (real, imag) pairs
    key = _kernel_key(model, feeds)
    if cache is not None and key in cache.results:
        got = cache.results[key]
    else:
        try:
            got = run_ort(model, feeds)
        except Exception as exc:  # ONNX Runtime raises its own exception types
            message = str(exc)
            if not (any(marker in message for marker in _GAPS)
                    or _expanded_function_rejected(model, message)):
                raise
            got = _Gap(message.splitlines()[0])
        if cache is not None:
            cache.results[key] = got
    if isinstance(got, _Gap):
        TALLY["gap"] += 1
        return Outcome(gap=got.reason)
    want = run_reference(graph, list(args))
    assert len(got) == len(want), what
    got = [g[..., 0] + 1j * g[..., 1] if v.type.dtype.is_complex else g
           for g, v in zip(got, graph.outputs)]
    for i, (g, w, v) in enumerate(zip(got, want, graph.outputs)):
        assert g.shape == np.shape(w), f"{what}: output {i} has shape {g.shape}, want {np.shape(w)}"
        assert_close(g, w, v.type.dtype, rtol=rtol, atol=atol, what=f"{what}: output {i}")
    TALLY["ran"] += 1
    return Outcome(ran=True)


def _expanded_function_rejected(model: onnx.ModelProto, message: str) -> bool:
    """ONNX Runtime's type check failed on an operator the model does not contain: one it
    made by expanding a function op."""
    found = re.search(r"INVALID_GRAPH .* of operator \((\w+)\)", message)
    return found is not None and found[1] not in {n.op_type for n in _all_nodes(model.graph)}


@dataclass(frozen=True)
class _Gap:
    reason: str


def with_float32_io(graph: Any) -> Any:
    """``graph`` with each bfloat16 input taken as float32 and cast, and each bfloat16 output
    cast to float32: NumPy, and so ONNX Runtime's Python API, has no bfloat16 arrays."""
    bf16, f32 = dtype("bfloat16"), dtype("float32")
    b = GraphBuilder(graph.name)
    env = {}
    for value in graph.inputs:
        if value.type.dtype is bf16:
            outer = b.input(value.type.with_dtype(f32), value.name)
            env[value] = b.op("cast", outer, dtype=bf16)
        else:
            env[value] = b.input(value.type, value.name)
    for node in graph.nodes:
        out = b.op(node.op, *(env[v] for v in node.inputs), regions=node.regions,
                   **dict(node.attrs))
        for value, new in zip(node.outputs, out if isinstance(out, tuple) else (out,)):
            env[value] = new
    outputs = [b.op("cast", env[v], dtype=f32) if v.type.dtype is bf16 else env[v]
               for v in graph.outputs]
    return b.build(outputs)

