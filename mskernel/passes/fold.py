"""Constant folding: the generic ``fold`` pass.

A node whose inputs all have known values is evaluated at compile time with the reference
interpreter (the ops' own semantics, so the folded value is bit-identical to what the
reference backend computes) and replaced by ``constant`` nodes.  Values are known for the
outputs of nodes without inputs — ``constant``, ``full``, ``iota`` and any other pure op
that takes none — and for folded results.  Nodes without inputs are evaluated only when a
user needs their value and are kept as they are (``full`` is smaller than its data).

Never folded: effectful ops, random ops (their values are drawn from a key at run time),
nodes owning regions (a ``while`` loop could run forever), nodes with a token or ref input or
output, and nodes with an output of more than ``max_elements`` elements (checked from the
types before evaluating, so folding never allocates a huge array).  An error raised while
evaluating (integer division by zero, say) leaves the node in place: it is reported when the
graph runs, not when it compiles.
"""

from __future__ import annotations

from typing import Mapping, Optional, cast

import numpy as np

from ..ir.builder import GraphBuilder
from ..ir.graph import Graph, Node, Value
from ..ir.types import TensorType
from ..runtime.interpreter import run_node
from .base import OpDefinitions, PassContext, PassResult
from .rewrite import Replacement, Visit, rewrite_nodes

DEFAULT_MAX_ELEMENTS = 1 << 20


class ConstantFolding:
    name = "fold"

    def __init__(self, max_elements: int = DEFAULT_MAX_ELEMENTS) -> None:
        self.max_elements = max_elements

    def run(self, graph: Graph, context: PassContext) -> PassResult:
        def make_visit() -> Visit:
            return _Folder(context.registry, self.max_elements).visit

        new = rewrite_nodes(graph, make_visit)
        return PassResult(new, new is not graph)


def make_constant(registry: OpDefinitions, array: np.ndarray, type: TensorType) -> Node:
    """A ``constant`` node holding ``array`` (in the reference storage of ``type``)."""
    node, _ = GraphBuilder(registry=registry).make_node(
        "constant", (), {"value": array, "dtype": type.dtype})
    return node


class _Folder:
    """Folds the nodes of one graph scope, remembering the values it knows."""

    def __init__(self, registry: OpDefinitions, max_elements: int) -> None:
        self.registry = registry
        self.max_elements = max_elements
        self.known: dict[Value, np.ndarray] = {}
        self.sources: dict[Value, Node] = {}  # outputs of input-less nodes, not evaluated yet

    def visit(self, node: Node, producers: Mapping[Value, Node]) -> Optional[Replacement]:
        if not self._foldable(node):
            return None
        if not node.inputs:
            self.sources.update((v, node) for v in node.outputs)
            return None
        args = [a for a in map(self._value, node.inputs) if a is not None]
        if len(args) < len(node.inputs):
            return None
        results = self._evaluate(node, args)
        if results is None:
            return None
        constants = tuple(make_constant(self.registry, r, cast(TensorType, v.type))
                          for v, r in zip(node.outputs, results))  # _foldable: all tensors
        for constant, result in zip(constants, results):
            self.known[constant.output] = result
        return Replacement(constants, tuple(c.output for c in constants))

    def _foldable(self, node: Node) -> bool:
        opdef = self.registry.get(node.op)
        if opdef.effectful or opdef.has_trait("random") or node.regions:
            return False
        if not all(isinstance(v.type, TensorType) for v in node.inputs):
            return False
        return all(isinstance(v.type, TensorType) and v.type.size <= self.max_elements
                   for v in node.outputs)

    def _value(self, value: Value) -> Optional[np.ndarray]:
        source = self.sources.pop(value, None)
        if source is not None:
            results = self._evaluate(source, [])
            for v in source.outputs:
                self.sources.pop(v, None)
            if results is not None:
                self.known.update(zip(source.outputs, results))
        return self.known.get(value)

    def _evaluate(self, node: Node, args: list[np.ndarray]) -> Optional[list[np.ndarray]]:
        try:
            return run_node(node, args, self.registry)
        except Exception:  # noqa: BLE001 - the error belongs to run time, not compile time
            return None
