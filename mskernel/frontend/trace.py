"""Tracing Python functions into IR graphs.

While a :class:`Trace` is active (``with trace:``), every op applied through the frontend is
recorded into its graph instead of running.  Traces nest: a control-flow op traces each branch
or loop body in a child trace whose graph becomes a *closed* region.  When a child trace meets
a tensor of an enclosing trace (a closure variable), it *captures* it: the region gets an extra
input and the owning node passes the outer value explicitly.  A concrete tensor met by a trace
becomes a ``constant`` node.

*Runtime checks* are errors a program raises when it runs: a ``raise`` in a branch that runs
only when a traced condition holds, or an ``assert`` on a traced value (the statements of
``@jit`` code, converted by :mod:`.autograph`).  A trace that accepts them (the top-level
trace of ``@jit``, and the branch and loop-body regions of its converted statements) lists
each as a bool flag with the error to raise when it is true; the owning ``If``/``While``
hands a region's flags out to its parent, and the top-level program returns them beside its
result, so the run raises the first that is set — before writing back the parameters.
"""

from __future__ import annotations

import copy
from contextvars import Token
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from ..errors import MskernelError
from ..hooks.host import host
from ..ir.builder import GraphBuilder
from ..ir.graph import Graph, SourceLoc, Value
from ..ir.source import return_site
from ..ir.types import TOKEN, RefType, TensorType
from ..runtime.state import TOKEN_VALUE, RefCell
from .parameter import Parameter
from .pytree import TreeDef, flatten, unflatten
from .tensor import Tensor
from .trace_context import active_trace, enter, leave

__all__ = ["EscapedTracerError", "Program", "RuntimeCheck", "Trace", "active_trace",
           "as_result_tensor", "trace_function", "trace_program"]


class EscapedTracerError(MskernelError, TypeError):
    """A traced tensor was used outside the trace that created it."""


@dataclass(frozen=True)
class RuntimeCheck:
    """An error a program raises at run time (see the module docs): ``error`` as it was made
    while tracing, raised anew at each failing run; ``where`` is the user's ``file:line``."""

    error: BaseException
    where: str

    def fail(self, graph_name: str) -> BaseException:
        """A fresh copy of the error, with a note saying where it was staged."""
        try:
            error = type(self.error)(*self.error.args)
        except Exception:  # an exception class whose constructor takes other arguments
            error = copy.copy(self.error)
            error.__notes__ = []
        error.add_note(f"raised at run time by the graph of @{graph_name}: the statement at "
                       f"{self.where}")
        return error


class Trace:
    """The graph being recorded.  ``parent`` is the enclosing trace, whose tensors are
    captured as inputs.  ``checks``: the trace accepts runtime checks (see the module docs).
    With ``capture_concrete`` concrete tensors and parameters become inputs too, instead of
    constants and ref loads: the graph is then closed over nothing, for a transform that
    replays it on the tensors themselves (``vmap``), so that the transforms recording those
    tensors (an autodiff tape) see them used."""

    def __init__(self, name: str, parent: Optional["Trace"] = None, checks: bool = False, *,
                 capture_concrete: bool = False) -> None:
        self.builder = GraphBuilder(name, host().ops)
        self.parent = parent
        #: the runtime checks staged in this trace, if it accepts them: (flag, check)
        self.checks: Optional[list[tuple[Tensor, RuntimeCheck]]] = [] if checks else None
        self.capture_concrete = capture_concrete
        #: whether the graph is a sub-graph of another computation (a region): it captures
        #: parameters and cannot order effects of its own
        self.closed = parent is not None or capture_concrete
        #: outer tensors captured by this trace, in capture order, and their inner values
        self.captured: list[Tensor] = []
        self._capture_values: dict[int, Value] = {}
        # keyed by id(): the tensor is kept alive so its id cannot be reused by another
        self._constants: dict[int, tuple[Tensor, Value]] = {}
        self._token: Optional[Token[Optional[Trace]]] = None
        #: parameters read or written by this trace, in ref-input order, with their ref inputs
        self.params: list[Parameter] = []
        self._refs: dict[int, Value] = {}
        self._loaded: dict[int, Value] = {}
        self.state_token: Optional[Value] = None  # the token input, created on first effect
        self._current_token: Optional[Value] = None

    def __enter__(self) -> "Trace":
        self._token = enter(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._token is not None
        leave(self._token)

    def input(self, type: TensorType, name: Optional[str] = None) -> Tensor:
        return Tensor._traced(self.builder.input(type, name), self)

    def value_of(self, tensor: Tensor) -> Value:
        """The value standing for ``tensor`` in this trace (capturing or embedding it)."""
        owner = tensor._trace
        if owner is self:
            return tensor._value  # type: ignore[return-value]
        if isinstance(tensor, Parameter):
            return self._load(tensor)
        if owner is None and not self.capture_concrete:
            return self._constant(tensor)
        if owner is not None and not self._encloses(owner):
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

    # -- ops: recorded, effectful ones ordered by the state token ----------------------------

    def record(self, op: str, values: Sequence[Value], attrs: dict[str, Any],
               regions: Sequence[Graph] = (), loc: Optional[SourceLoc] = None
               ) -> Union[Value, tuple[Value, ...]]:
        """Append a node of ``op``; return its output, or the tuple of its outputs.  An
        effectful op takes the trace's state token as its last input and returns the next
        one as its last output, which is not returned: effects happen in the order they are
        recorded (see :mod:`mskernel.ops.state`)."""
        if not self.builder.registry.get(op).effectful:
            return self.builder.op(op, *values, regions=regions, loc=loc, **attrs)
        if self.closed:
            raise MskernelError(
                f"op '{op}'{f' at {loc}' if loc else ''} has side effects, which a branch, "
                "loop body or vmapped function cannot have: apply it before or after")
        out = self.builder.op(op, *values, self._token_value(), regions=regions, loc=loc,
                              **attrs)
        outs = out if isinstance(out, tuple) else (out,)
        self._current_token = outs[-1]
        return outs[0] if len(outs) == 2 else outs[:-1]

    # -- parameters: ref inputs read and written in token order ------------------------------

    def _load(self, param: "Parameter") -> Value:
        key = id(param)
        if key in self._loaded:
            return self._loaded[key]
        if self.closed:
            # A region captures the parameter itself: the owning node then takes it as an
            # operand, so the enclosing trace loads it and transforms (autodiff tapes, which
            # track parameters by identity) see it flow into the region.
            if key not in self._capture_values:
                self._capture_values[key] = self.builder.input(param.type)
                self.captured.append(param)
            self._loaded[key] = self._capture_values[key]
            return self._loaded[key]
        loaded = self.record("ref_load", [self._ref(param)], {})
        assert isinstance(loaded, Value)
        self._loaded[key] = loaded
        return loaded

    def assign(self, param: "Parameter", value: Tensor) -> None:
        """Record ``param``'s new value (``ref_store``)."""
        if self.closed:
            raise MskernelError(
                f"assigning parameter {param.name or param.type} inside a branch, loop body or "
                "vmapped function is not supported; compute the new value there and assign it "
                "after"
            )
        new = self.value_of(value)
        self.record("ref_store", [self._ref(param), new], {})
        self._loaded[id(param)] = new

    def _ref(self, param: "Parameter") -> Value:
        key = id(param)
        if key not in self._refs:
            self._refs[key] = self.builder.input(RefType(param.type), param.name)
            self.params.append(param)
        return self._refs[key]

    def _token_value(self) -> Value:
        if self._current_token is None:
            self.state_token = self.builder.input(TOKEN, "token")
            self._current_token = self.state_token
        return self._current_token

    @property
    def final_token(self) -> Optional[Value]:
        """The token after the last effect (a graph output when the trace had effects)."""
        return self._current_token

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
            declared = tensor.dtype if tensor.dtype.name == "bfloat16" else None
            self._constants[key] = (tensor, self.builder.op("constant", value=value, dtype=declared))  # type: ignore[assignment]
        return self._constants[key][1]


def trace_function(fn: Callable[..., Any], types: Sequence[TensorType], name: str,
                   parent: Optional[Trace] = None, *, capture_concrete: bool = False
                   ) -> tuple[Graph, TreeDef, list[Tensor]]:
    """Trace ``fn`` on symbolic inputs of ``types``; return the graph (its inputs: the
    declared ones, then one per captured outer tensor), the structure of ``fn``'s result, and
    the captured tensors (to be passed as the extra operands).  ``capture_concrete``: see
    :class:`Trace`."""
    trace = Trace(name, parent if parent is not None else active_trace(),
                  capture_concrete=capture_concrete)
    with trace:
        inputs = [trace.input(t) for t in types]
        result = fn(*inputs)
        leaves, treedef = flatten(result, lambda x: isinstance(x, Tensor))
        values = [trace.value_of(as_result_tensor(leaf, name, fn)) for leaf in leaves]
    return trace.builder.build(values), treedef, trace.captured


@dataclass(frozen=True)
class Program:
    """A traced top-level function, ready to compile.

    ``graph.inputs`` are the ``num_inputs`` declared inputs, then — in the order first used —
    one ``!ref`` input per parameter in ``params`` and the state token.  The graph's outputs
    are the result's tensors, then one bool flag per runtime check in ``checks``, then, when
    ``has_state``, the final token.  ``constants`` holds the result's leaves that are Python
    values (``None`` for a tensor leaf), returned as they are, as MindSpore returns constants.
    :meth:`state_arguments` gives the run-time values of the extra inputs and
    :meth:`write_back` stores the updated cells into the parameters after a run.
    """

    graph: Graph
    out_tree: TreeDef
    num_inputs: int
    params: tuple[Parameter, ...]
    has_state: bool
    checks: tuple[RuntimeCheck, ...] = ()
    constants: tuple[Any, ...] = ()

    def result(self, outputs: Sequence[Any]) -> Any:
        """The function's result from the graph outputs of one run (as tensors); raises the
        error of the first runtime check whose flag is set."""
        tensors = len(outputs) - len(self.checks) - self.has_state
        for check, flag in zip(self.checks, outputs[tensors:]):
            if bool(np.asarray(flag.to_host())):
                raise check.fail(self.graph.name)
        it = iter(outputs[:tensors])
        leaves = [Tensor._concrete(next(it)) if c is None else c for c in self.constants]
        return unflatten(self.out_tree, leaves)

    def state_arguments(self) -> tuple[list[Any], list[RefCell]]:
        cells = [RefCell(p.type, p._data) for p in self.params]
        pending = iter(cells)
        args = [next(pending) if isinstance(v.type, RefType) else TOKEN_VALUE
                for v in self.graph.inputs[self.num_inputs:]]
        return args, cells

    def write_back(self, cells: Sequence[RefCell]) -> None:
        for param, cell in zip(self.params, cells):
            param._data = cell.value


def trace_program(fn: Callable[..., Any], types: Sequence[TensorType], name: str) -> Program:
    """Trace ``fn`` as a top-level program (for ``@jit``): parameters it reads or assigns
    become ref inputs ordered by a state token."""
    if active_trace() is not None:
        raise MskernelError("trace_program starts a top-level trace; a trace is already active")
    trace = Trace(name, checks=True)
    with trace:
        inputs = [trace.input(t) for t in types]
        result = fn(*inputs)
        leaves, treedef = flatten(result, lambda x: isinstance(x, Tensor))
        constants = tuple(leaf if isinstance(leaf, _CONSTANTS) else None for leaf in leaves)
        values = [trace.value_of(as_result_tensor(leaf, name, fn))
                  for leaf in leaves if not isinstance(leaf, _CONSTANTS)]
        values += [trace.value_of(flag) for flag, _ in trace.checks or ()]
    if trace.final_token is not None:
        values.append(trace.final_token)
    return Program(trace.builder.build(values), treedef, len(types), tuple(trace.params),
                   trace.final_token is not None,
                   tuple(check for _, check in trace.checks or ()), constants)


#: Python values a traced program returns as they are (MindSpore returns them as constants).
_CONSTANTS = (bool, int, float, complex, str)


def as_result_tensor(leaf: Any, where: str, fn: Callable[..., Any]) -> Tensor:
    """``leaf``, a leaf of what the traced function ``fn`` (``@where``) returned, as a tensor;
    the error for anything else names the return statement."""
    if isinstance(leaf, Tensor):
        return leaf
    try:
        return Tensor(leaf)
    except (TypeError, ValueError):
        site = return_site(fn)
        raise MskernelError(
            f"@{where} returned a value of type {type(leaf).__name__}"
            f"{f' {site}' if site else ''}; traced functions may return tensors, numbers and "
            "tuples/lists/dicts of them"
        ) from None
