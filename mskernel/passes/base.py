"""The one pass contract.

A pass is an object with a ``name`` and ``run(graph, context) -> PassResult``.  It returns a
new graph (graphs are immutable) and whether anything changed; it must never change what the
graph computes — the property tests check every registered generic pass against the reference
interpreter.  Passes that rewrite local patterns can be written as a
:class:`~mskernel.passes.patterns.PatternPass`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..ir.graph import Graph
from ..ir.lookup import OpLookup
from ..ops.registry import OpDef


#: The op definitions passes consult: traits, effects, reference semantics.
OpDefinitions = OpLookup[OpDef]


@dataclass
class PassContext:
    """What a pass may consult: the op definitions (``registry``: the process's op registry
    when the pipeline compiles for a backend), the opt level, the backend it compiles for
    (``None`` for generic passes) and free-form options of the pipeline."""

    registry: OpDefinitions
    opt_level: int = 2
    backend: str | None = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PassResult:
    graph: Graph
    changed: bool


@runtime_checkable
class Pass(Protocol):
    name: str

    def run(self, graph: Graph, context: PassContext) -> PassResult: ...
