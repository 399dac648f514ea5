"""Building IR graphs from ONNX: :class:`Emitter` appends core ops to one graph (the main
graph or a region), evaluating at import time what the model already determines.

- **Folding.**  An op whose inputs are all known (constants, initializers that are not
  weights, shapes of static tensors) is evaluated with the core ops' reference semantics
  when it is emitted; its outputs are *known values*, which stay out of the graph until an
  op that does run needs them (then a ``constant`` node is added).  Shape arithmetic
  (``Shape → Gather → Concat → Reshape``) thus leaves nothing behind.  Random ops, ops with
  regions and results over :data:`FOLD_LIMIT` elements are never folded.
- **Closed regions.**  A region reads only its own inputs.  An emitter for a region has a
  parent; using a value of an enclosing graph makes it a region input (a *capture*) that the
  op owning the region passes in.  Known values are copied into the region instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np

from mskernel_sdk import Graph, GraphBuilder, Node, TensorType, Value, op_registry, run_reference

#: Results with more elements than this are computed by the graph, not at import time.
FOLD_LIMIT = 1 << 22

Outputs = Union[Value, tuple[Value, ...]]


@dataclass
class Knowledge:
    """What an import knows about values, shared by the main graph and its regions:
    ``consts`` (values the import computed or read, foldable), ``weights`` (weight inputs:
    readable by an op that needs a value, never folded) and ``producers`` (the node
    that computed each value and the graph inputs, so an unknown value can be traced to the
    inputs it depends on)."""

    consts: dict[Value, np.ndarray] = field(default_factory=dict)
    weights: dict[Value, np.ndarray] = field(default_factory=dict)
    producers: dict[Value, Node] = field(default_factory=dict)

    def known(self, value: Value) -> Optional[np.ndarray]:
        found = self.consts.get(value)
        return self.weights.get(value) if found is None else found


class Emitter:
    """Appends nodes to one graph (see the module doc)."""

    def __init__(self, name: str, knowledge: Knowledge, parent: Optional["Emitter"] = None):
        self.builder = GraphBuilder(name)
        self.knowledge = knowledge
        self.parent = parent
        self._owned: set[Value] = set()
        self._materialised: dict[Value, Value] = {}
        #: outer value → (the parent's value passed in, this region's input)
        self.captures: dict[Value, tuple[Value, Value]] = {}

    @property
    def name(self) -> str:
        return self.builder.name

    # --- values ----------------------------------------------------------------------------

    def input(self, type: TensorType, name: Optional[str] = None) -> Value:
        value = self.builder.input(type, name)
        self._owned.add(value)
        return value

    def known(self, value: Value) -> Optional[np.ndarray]:
        return self.knowledge.known(value)

    def constant(self, array: Any, type: TensorType) -> Value:
        """A known value holding ``array`` (converted to ``type``'s storage by the caller)."""
        value = Value(type)
        self.knowledge.consts[value] = np.asarray(array)
        return value

    def local(self, value: Value) -> Value:
        """``value`` as this graph sees it: itself, a ``constant`` node for a known value, or
        a region input capturing a value of an enclosing graph."""
        if value in self._owned:
            return value
        known = self.knowledge.consts.get(value)
        if known is not None:
            if value not in self._materialised:
                node, _ = self.builder.make_node("constant", (), _constant_attrs(known, value.type))
                self.builder.append(node)
                self._owned.add(node.outputs[0])
                self._materialised[value] = node.outputs[0]
            return self._materialised[value]
        if value in self.captures:
            return self.captures[value][1]
        if self.parent is None:
            raise ValueError(f"{value!r} is not a value of graph @{self.name}")
        outer = self.parent.local(value)
        inner = Value(value.type, value.name)
        self._owned.add(inner)
        self.captures[value] = (outer, inner)
        return inner

    # --- ops -------------------------------------------------------------------------------

    def op(self, op: str, *inputs: Value, regions: Sequence[Graph] = (), **attrs: Any) -> Outputs:
        """Append (or fold) one core op; return its output or tuple of outputs."""
        consts = self.knowledge.consts
        if not regions and all(v in consts for v in inputs) and _foldable(op):
            node, multi = self.builder.make_node(op, inputs, attrs)
            if all(isinstance(v.type, TensorType) and v.type.size <= FOLD_LIMIT
                   for v in node.outputs):
                graph = Graph(node.inputs, (node,), node.outputs, f"fold_{op}")
                results = run_reference(graph, [consts[v] for v in node.inputs])
                consts.update(zip(node.outputs, results))
                return node.outputs if multi else node.outputs[0]
        local = [self.local(v) for v in inputs]
        node, multi = self.builder.make_node(op, local, attrs, regions=regions)
        self.builder.append(node)
        self._owned.update(node.outputs)
        for out in node.outputs:
            self.knowledge.producers[out] = node
        return node.outputs if multi else node.outputs[0]

    def build(self, outputs: Sequence[Value], inputs: Optional[Sequence[Value]] = None) -> Graph:
        """The graph returning ``outputs``; ``inputs`` orders (and may extend) its inputs."""
        results = [self.local(v) for v in outputs]
        graph = self.builder.build(results)
        if inputs is not None:
            graph = Graph(tuple(inputs), graph.nodes, graph.outputs, graph.name)
        return graph

    def depends_on(self, value: Value, candidates: Mapping[Value, str]) -> list[str]:
        """The names of the ``candidates`` (graph inputs) that ``value`` is computed from."""
        found: list[str] = []
        seen: set[Value] = set()
        stack = [value]
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            if v in candidates and candidates[v] not in found:
                found.append(candidates[v])
            node = self.knowledge.producers.get(v)
            if node is not None:
                stack.extend(node.inputs)
        for outer, inner in self.captures.values():
            if inner in seen and self.parent is not None:
                found += [n for n in self.parent.depends_on(outer, candidates) if n not in found]
        return found


def _constant_attrs(array: np.ndarray, type: TensorType) -> dict[str, Any]:
    return {"value": np.array(array, order="C"), "dtype": type.dtype}


def _foldable(op: str) -> bool:
    opdef = op_registry().get(op)
    return not (opdef.num_regions or opdef.effectful or "random" in opdef.traits)
