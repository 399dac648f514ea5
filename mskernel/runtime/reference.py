"""The reference backend: runs any graph with the ops' NumPy semantics.

It is the oracle every other backend is tested against and the backend of last resort for
nodes no other backend claims.  It registers through ``mskernel_register_backends`` like any
plugin's backend, with the lowest priority.

Compiling a graph generates one straight-line Python function for it (as torch.fx's code
generation does): each node is a direct call of its op's reference function with its
attributes bound, followed by a cheap check that the result has the inferred storage dtype
and shape (anything else goes through the interpreter's coercion, which rounds bfloat16 and
reports a reference that disagrees with its rule).  Nodes with regions or state (refs,
tokens) and bfloat16 results run through the interpreter's :func:`run_node`.  The meaning
is the interpreter's; only the per-node bookkeeping is gone, which is what a small graph's
run time is made of.
"""

from __future__ import annotations

import functools
import keyword
import typing
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..defaults import op_registry
from ..hooks.markers import hookimpl
from ..ir.dtypes import as_storage, bfloat16
from ..ir.graph import Graph, Node, Value
from ..ir.lookup import OpLookup
from ..ir.types import TensorType
from ..ops.registry import OpDef, OpRegistry
from .backend import Availability, Backend, Capabilities, CompileOptions, DeviceArray, Executable
from .interpreter import _coerce, run_graph, run_node
from .state import RefCell

NAME = "reference"
PRIORITY = -1000

try:  # NumPy 2: the floating-point error state is a context variable; setting it is cheap
    from numpy._core._ufunc_config import (  # type: ignore[attr-defined]
        _extobj_contextvar, _make_extobj,
    )

    #: Enter "ignore all floating-point errors" and return a token; leave it with the token.
    _quiet: Callable[[], Any] = functools.partial(_extobj_contextvar.set,
                                                  _make_extobj(all="ignore"))
    _loud: Callable[[Any], None] = _extobj_contextvar.reset
except ImportError:  # older NumPy: the public context manager
    def _quiet() -> Any:
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    def _loud(token: Any) -> None:
        token.__exit__(None, None, None)


class ReferenceExecutable(Executable):
    def __init__(self, backend: "ReferenceBackend", graph: Graph) -> None:
        super().__init__(graph)
        self.backend = backend
        self._generated = (generate(graph, backend.registry, backend)
                           if all(isinstance(v.type, TensorType) for v in graph.inputs) else None)

    def run(self, args: Sequence[Any]) -> list[Any]:
        if self._generated is not None:  # device arrays of this backend (the contract)
            return self._generated(args)
        host_cells: list[tuple[RefCell, RefCell]] = []
        host_args: list[Any] = []
        for arg in args:
            if isinstance(arg, DeviceArray):
                host_args.append(arg.data)
            elif isinstance(arg, RefCell):
                cell = RefCell(arg.type, arg.value.data)
                host_cells.append((arg, cell))
                host_args.append(cell)
            else:
                host_args.append(arg)
        results = run_graph(self.graph, host_args, self.backend.registry)
        for outer, inner in host_cells:
            outer.value = DeviceArray(self.backend, outer.type, inner.value)
        return [
            DeviceArray(self.backend, v.type, r) if isinstance(v.type, TensorType) else r
            for v, r in zip(self.graph.outputs, results)
        ]


def generate(graph: Graph, registry: OpLookup[OpDef],
             backend: Backend) -> Callable[[Sequence[DeviceArray]], list[DeviceArray]]:
    """A function of the device arrays of ``graph``'s inputs returning its outputs as device
    arrays of ``backend`` (only for graphs whose inputs are all tensors)."""
    code = _Code(registry)
    params = [code.name_input(i, v) for i, v in enumerate(graph.inputs)]
    labels: dict[int, str] = {}  # line of the generated source → the node it runs
    for index, node in enumerate(graph.nodes):
        first = len(code.lines)
        code.node(node)
        label = f"node {index} '{node.op}'{node.where()} of @{graph.name}"
        labels.update((line, label) for line in range(first, len(code.lines)))
    results = ", ".join(code.wrapped(v, backend) for v in graph.outputs)
    header = ["def run(args):", *([f"    {', '.join(params)}, = args"] if params else []),
              "    token = _quiet()", "    try:"]
    source = "\n".join([
        *header,
        *(f"        {line}" for line in code.lines or ["pass"]),
        "    except Exception as exc:",
        "        raise _located(exc) from exc.__cause__",
        "    finally:",
        "        _loud(token)",
        f"    return [{results}]",
    ])
    filename = f"<reference @{graph.name}>"
    lines = {len(header) + 1 + line: label for line, label in labels.items()}
    namespace = dict(code.namespace, _quiet=_quiet, _loud=_loud,
                     _located=functools.partial(_located, filename, lines))
    exec(compile(source, filename, "exec"), namespace)
    return namespace["run"]  # type: ignore[no-any-return]


def _located(filename: str, labels: dict[int, str], exc: Exception) -> Exception:
    """``exc`` raised by a generated function, as the same kind of error with the failing
    node (index, op, the user's line) in front of its message, as the cpu backend names it."""
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    if line not in labels:
        return exc
    try:
        located = type(exc)(f"{labels[line]}: {exc}")
    except Exception:  # an exception type with another constructor: a note instead
        exc.add_note(labels[line])
        return exc
    return located.with_traceback(exc.__traceback__)


class _Code:
    """The lines and the namespace of a generated function."""

    def __init__(self, registry: OpLookup[OpDef]) -> None:
        self.registry = registry
        self.lines: list[str] = []
        self.names: dict[Value, str] = {}
        self.namespace: dict[str, Any] = {"_nd": np.ndarray, "_coerce": _coerce,
                                          "_as_storage": as_storage, "_DeviceArray": DeviceArray}
        self._count = 0

    def bind(self, value: Any, prefix: str) -> str:
        """A global name of the generated function for ``value``."""
        self._count += 1
        name = f"{prefix}{self._count}"
        self.namespace[name] = value
        return name

    def name_input(self, index: int, value: Value) -> str:
        name = self.names[value] = f"a{index}"
        storage = self.bind(value.type.dtype.storage, "d")  # type: ignore[union-attr]
        self.lines.append(f"{name} = {name}.data")
        self.lines.append(f"if {name}.__class__ is not _nd or {name}.dtype is not {storage}: "
                          f"{name} = _as_storage({name}, {self.bind(value.type.dtype, 't')})")  # type: ignore[union-attr]
        return name

    def wrapped(self, value: Value, backend: Backend) -> str:
        if not isinstance(value.type, TensorType):
            return self.names[value]
        backend_name, type_name = self.bind(backend, "b"), self.bind(value.type, "t")
        return f"_DeviceArray({backend_name}, {type_name}, {self.names[value]})"

    def node(self, node: Node) -> None:
        args = ", ".join(self.names[v] for v in node.inputs)
        if node.op == "constant" and not node.inputs:  # computed once, here
            (value,) = run_node(node, [], self.registry)
            self.names[node.outputs[0]] = self.bind(value, "c")
            return
        if not self._direct(node, self.registry):
            outs = [self._fresh(v) for v in node.outputs]
            runner = self.bind(lambda arrays, node=node: run_node(node, arrays, self.registry), "r")
            target = f"({', '.join(outs)},)" if outs else "_"
            self.lines.append(f"{target} = {runner}([{args}])")
            return
        reference = self.bind(self.registry.get(node.op).reference, "f")
        attrs = [f"{k}={self.bind(v, 'k')}" for k, v in node.attrs.items()]
        out = self._fresh(node.output)
        t = typing.cast(TensorType, node.output.type)
        storage, shape = self.bind(t.dtype.storage, "d"), self.bind(t.shape, "s")
        self.lines.append(f"{out} = {reference}({', '.join(filter(None, [args, *attrs]))})")
        coerce = f"_coerce({self.bind(node, 'n')}, {self.bind(node.output, 'v')}, {out})"
        self.lines.append(f"if {out}.__class__ is not _nd or {out}.dtype is not {storage} or "
                          f"{out}.shape != {shape}: {out} = {coerce}")

    def _fresh(self, value: Value) -> str:
        self._count += 1
        name = self.names[value] = f"v{self._count}"
        return name

    @staticmethod
    def _direct(node: Node, registry: OpLookup[OpDef]) -> bool:
        """Whether ``node`` can be a plain call: a one-output op (not a tuple of one) with a
        tensor result not needing rounding, tensor inputs, no regions, and attribute names
        usable as keywords."""
        if (len(node.outputs) != 1 or node.regions
                or not isinstance(node.output.type, TensorType)
                or node.output.type.dtype is bfloat16
                or not all(isinstance(v.type, TensorType) for v in node.inputs)
                or not all(k.isidentifier() and not keyword.iskeyword(k) for k in node.attrs)):
            return False
        _, multi = registry.get(node.op).infer_outputs([v.type for v in node.inputs], node.attrs)
        return not multi


class ReferenceBackend(Backend):
    """Runs every op ``registry`` defines (default: the process's op registry) with its
    reference semantics.  Plugin authors subclass it for a backend of their own."""

    name = NAME
    host_memory = True

    def __init__(self, registry: Optional[OpRegistry] = None) -> None:
        self.registry = op_registry() if registry is None else registry

    def availability(self) -> Availability:
        return Availability(available=True, reason=f"NumPy {np.__version__} on the host")

    def capabilities(self) -> Capabilities:
        return Capabilities.uniform(self.registry.names())

    def to_device(self, host: np.ndarray, type: TensorType) -> DeviceArray:
        data = as_storage(host, type.dtype)
        if np.may_share_memory(data, host):  # the caller may write to its array later
            data = data.copy()
        return DeviceArray(self, type, data)

    def share(self, host: np.ndarray, type: TensorType) -> Optional[DeviceArray]:
        if type.dtype is bfloat16 or host.dtype != type.dtype.storage:
            return None
        return DeviceArray(self, type, host)

    def to_host(self, array: DeviceArray) -> np.ndarray:
        return array.data

    def compile(self, graph: Graph, options: CompileOptions) -> Executable:
        return ReferenceExecutable(self, graph)


@hookimpl
def mskernel_register_backends(backends: Any) -> None:
    backends.register(NAME, ReferenceBackend, priority=PRIORITY)
