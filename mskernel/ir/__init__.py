"""The intermediate representation: dtypes, types, values/nodes/graphs, building, verifying,
printing, parsing and the model file format.  It finds op definitions through an
:class:`OpLookup` it is given (see :mod:`.lookup`), so it imports nothing above it."""

from .dtypes import (
    ALL_DTYPES, DType, bfloat16, bool_, complex64, complex128, dtype, float16, float32,
    float64, int8, int16, int32, int64, promote_types, result_type, uint8, uint16, uint32, uint64,
)
from .graph import Graph, Node, SourceLoc, Value
from .lookup import OpLookup, OpSchema
from .types import TOKEN, RefType, TensorType, TokenType, Type, tensor_type
from .builder import GraphBuilder
from .parser import parse_graph
from .printer import print_graph
from .verify import verify

__all__ = [
    "ALL_DTYPES", "DType", "Graph", "GraphBuilder", "Node", "OpLookup", "OpSchema", "RefType",
    "SourceLoc", "TOKEN",
    "TensorType", "TokenType", "Type", "Value", "bfloat16", "bool_", "complex64", "complex128",
    "dtype", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
    "promote_types", "result_type", "tensor_type", "uint8", "uint16", "uint32", "uint64",
    "parse_graph", "print_graph", "verify", "save_model", "load_model", "Model",
]

_FILE_FORMAT = {"save_model", "load_model", "Model"}


def __getattr__(name: str):
    # The file format pulls in version metadata handling; load it only when used.
    if name in _FILE_FORMAT:
        from . import fileformat

        return getattr(fileformat, name)
    raise AttributeError(f"module 'mskernel.ir' has no attribute {name!r}")
