"""The intermediate representation: dtypes, types, values/nodes/graphs, building, verifying,
printing, parsing and the model file format."""

from .dtypes import (
    ALL_DTYPES, DType, bfloat16, bool_, complex64, complex128, dtype, float16, float32,
    float64, int8, int16, int32, int64, promote_types, result_type, uint8, uint16, uint32, uint64,
)
from .graph import Graph, Node, SourceLoc, Value
from .types import TOKEN, RefType, TensorType, TokenType, Type, tensor_type
from .builder import GraphBuilder

__all__ = [
    "ALL_DTYPES", "DType", "Graph", "GraphBuilder", "Node", "RefType", "SourceLoc", "TOKEN",
    "TensorType", "TokenType", "Type", "Value", "bfloat16", "bool_", "complex64", "complex128",
    "dtype", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
    "promote_types", "result_type", "tensor_type", "uint8", "uint16", "uint32", "uint64",
]
