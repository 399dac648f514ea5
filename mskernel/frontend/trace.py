"""Tracing Python functions into IR graphs.

While a :class:`Trace` is active (``with trace:``), every op applied through the frontend is
recorded into its graph instead of running.  Traces nest: a control-flow op traces each branch
or loop body in a child trace whose graph becomes a *closed* region.  When a child trace meets
a tensor of an enclosing trace (a closure variable), it *captures* it: the region gets an extra
input and the owning node passes the outer value explicitly.  A concrete tensor met by a trace
becomes a ``constant`` node.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Callable, Optional, Sequence

from ..errors import MskernelError
from ..ir.builder import GraphBuilder
from ..ir.graph import Graph, Value
from ..ir.types import TensorType
from .pytree import TreeDef, flatten
from .tensor import Tensor

_active: ContextVar[Optional["Trace"]] = ContextVar("mskernel_trace", default=None)


class EscapedTracerError(MskernelError, TypeError):
    """A traced tensor was used outside the trace that created it."""


class Trace:
    def __init__(self, name: str, parent: Optional["Trace"] = None) -> None:
        self.builder = GraphBuilder(name)
        self.parent = parent
        #: outer tensors captured by this trace, in capture order, and their inner values
        self.captured: list[Tensor] = []
        self._capture_values: dict[int, Value] = {}
        self._constants: dict[int, Value] = {}
        self._token = None

    def __enter__(self) -> "Trace":
        self._token = _active.set(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _active.reset(self._token)

    def input(self, type: TensorType, name: Optional[str] = None) -> Tensor:
        return Tensor._traced(self.builder.input(type, name), self)

    def value_of(self, tensor: Tensor) -> Value:
        """The value standing for ``tensor`` in this trace (capturing or embedding it)."""
        owner = tensor._trace
        if owner is self:
            return tensor._value  # type: ignore[return-value]
        if owner is None:
            return self._constant(tensor)
        if not self._encloses(owner):
            raise EscapedTracerError(
                f"a traced {tensor.type} tensor from @{owner.builder.name} is used in "
                f"@{self.builder.name}, outside the trace that created it; return it from the "
                "traced function instead of storing it"
            )
        key = id(tensor)
        if key not in self._capture_values:
            self._capture_values[key] = self.builder.input(tensor.type)
            self.captured.append(tensor)
        return self._capture_values[key]

    def _encloses(self, other: "Trace") -> bool:
        t = self.parent
        while t is not None:
            if t is other:
                return True
            t = t.parent
        return False

    def _constant(self, tensor: Tensor) -> Value:
        key = id(tensor)
        if key not in self._constants:
            value = tensor._data.to_host()  # type: ignore[union-attr]
            self._constants[key] = self.builder.op(
                "constant", value=value, dtype=tensor.dtype if tensor.dtype.name == "bfloat16" else None
            )  # type: ignore[assignment]
        return self._constants[key]


def active_trace() -> Optional[Trace]:
    return _active.get()


def trace_function(fn: Callable[..., Any], types: Sequence[TensorType], name: str,
                   parent: Optional[Trace] = None) -> tuple[Graph, TreeDef, list[Tensor]]:
    """Trace ``fn`` on symbolic inputs of ``types``; return the graph (its inputs: the
    declared ones, then one per captured outer tensor), the structure of ``fn``'s result, and
    the captured tensors (to be passed as the extra operands)."""
    trace = Trace(name, parent if parent is not None else active_trace())
    with trace:
        inputs = [trace.input(t) for t in types]
        result = fn(*inputs)
        leaves, treedef = flatten(result, lambda x: isinstance(x, Tensor))
        values = [trace.value_of(as_result_tensor(leaf, name)) for leaf in leaves]
    return trace.builder.build(values), treedef, trace.captured


def as_result_tensor(leaf: Any, where: str) -> Tensor:
    if isinstance(leaf, Tensor):
        return leaf
    from .functional import asarray

    try:
        return asarray(leaf)
    except (TypeError, ValueError):
        raise MskernelError(
            f"@{where} returned a {type(leaf).__name__}; traced functions may return tensors, "
            "numbers and tuples/lists/dicts of them"
        ) from None
