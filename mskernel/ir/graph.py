"""The IR: values, nodes and graphs in SSA form.

- A :class:`Value` is defined once — as a graph input or as an output of one node — and has a
  type.  Values compare by identity.
- A :class:`Node` applies an op (a name resolved in the op registry) to input values, with
  attributes (plain Python data: numbers, strings, booleans, ``None``, dtypes, tuples of
  those, and NumPy arrays for constants), produces output values, may own sub-graphs
  (``regions``, for structured control flow) and carries the user's source location.
- A :class:`Graph` has typed inputs, nodes in a valid execution order, and outputs.  Regions
  are graphs too and are *closed*: a region reads only its own inputs, so every value a
  branch or loop body needs is passed to the owning node explicitly.

All three are frozen.  Passes build new graphs (see :class:`~mskernel.ir.builder.GraphBuilder`)
instead of editing old ones, so a graph handed to a backend never changes under it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterator, Mapping, Optional

import numpy as np

from .printer import print_graph
from .types import Type

_ids = itertools.count()


@dataclass(frozen=True)
class SourceLoc:
    """Where in the user's code a node came from."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, eq=False)
class Value:
    """An SSA value.  ``name`` is an optional label (graph inputs use it for parameter
    names such as ``"fc1.weight"``); it has no meaning to passes."""

    type: Type
    name: Optional[str] = None
    uid: int = field(default_factory=lambda: next(_ids), repr=False)

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"<Value #{self.uid}{label}: {self.type}>"


def freeze_attr(value: Any) -> Any:
    """Normalise an attribute value to an immutable form: lists become tuples and arrays
    become read-only copies."""
    if isinstance(value, np.ndarray):
        frozen = np.array(value, copy=True)
        frozen.setflags(write=False)
        return frozen
    if isinstance(value, (list, tuple)):
        return tuple(freeze_attr(v) for v in value)
    return value


def attr_key(value: Any) -> Any:
    """A hashable key for an attribute value (arrays hash by dtype, shape and bytes)."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, tuple):
        return tuple(attr_key(v) for v in value)
    if isinstance(value, float):  # exact: -0.0 differs from 0.0, NaN equals itself
        return ("float", value.hex())
    if isinstance(value, complex):
        return ("complex", value.real.hex(), value.imag.hex())
    return (type(value).__name__, value)


@dataclass(frozen=True, eq=False)
class Node:
    op: str
    inputs: tuple[Value, ...]
    outputs: tuple[Value, ...]
    attrs: Mapping[str, Any] = field(default_factory=dict)
    regions: tuple["Graph", ...] = ()
    loc: Optional[SourceLoc] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "outputs", tuple(self.outputs))
        object.__setattr__(self, "regions", tuple(self.regions))
        frozen = {k: freeze_attr(v) for k, v in self.attrs.items()}
        object.__setattr__(self, "attrs", MappingProxyType(frozen))

    @property
    def output(self) -> Value:
        """The single output of a one-output node."""
        if len(self.outputs) != 1:
            raise ValueError(f"node '{self.op}' has {len(self.outputs)} outputs, not 1")
        return self.outputs[0]

    def attrs_key(self) -> tuple:
        return tuple((k, attr_key(v)) for k, v in sorted(self.attrs.items()))

    def where(self) -> str:
        """``" at file:line"`` when the location is known, else ``""`` (for messages)."""
        return f" at {self.loc}" if self.loc else ""

    def __repr__(self) -> str:
        return f"<Node {self.op}{self.where()}>"


@dataclass(frozen=True, eq=False)
class Graph:
    inputs: tuple[Value, ...]
    nodes: tuple[Node, ...]
    outputs: tuple[Value, ...]
    name: str = "main"

    def __post_init__(self) -> None:
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "nodes", tuple(self.nodes))
        object.__setattr__(self, "outputs", tuple(self.outputs))

    @property
    def input_types(self) -> tuple[Type, ...]:
        return tuple(v.type for v in self.inputs)

    @property
    def output_types(self) -> tuple[Type, ...]:
        return tuple(v.type for v in self.outputs)

    def walk(self) -> Iterator[Node]:
        """Every node, including those inside regions (a region's nodes follow its owner)."""
        for node in self.nodes:
            yield node
            for region in node.regions:
                yield from region.walk()

    def producers(self) -> dict[Value, Node]:
        """Map from each node output of this graph (not of regions) to its node."""
        return {v: n for n in self.nodes for v in n.outputs}

    def users(self) -> dict[Value, list[Node]]:
        """Map from each value to the nodes of this graph (not of regions) that read it."""
        out: dict[Value, list[Node]] = {}
        for node in self.nodes:
            for v in node.inputs:
                out.setdefault(v, []).append(node)
        return out

    def ops_used(self) -> set[str]:
        return {n.op for n in self.walk()}

    def __str__(self) -> str:
        return print_graph(self)

    def __repr__(self) -> str:
        return f"<Graph @{self.name}: {len(self.inputs)} inputs, {len(self.nodes)} nodes>"
