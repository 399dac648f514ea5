"""Building small ONNX models in tests."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import onnx
from onnx import TensorProto, helper


def tensor(name: str, dims: Optional[Sequence[Any]], elem: int = TensorProto.FLOAT
           ) -> onnx.ValueInfoProto:
    """A graph input or output of element type ``elem`` and shape ``dims``."""
    return helper.make_tensor_value_info(name, elem, dims)


def model(nodes: Sequence[onnx.NodeProto], inputs: Sequence[onnx.ValueInfoProto],
          outputs: Sequence[onnx.ValueInfoProto], initializers: Sequence[onnx.TensorProto] = (),
          opset: int = 18, **kwargs: Any) -> onnx.ModelProto:
    """A model of one graph importing ``opset`` of the default domain."""
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], **kwargs)
