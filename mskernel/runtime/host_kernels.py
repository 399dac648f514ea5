"""Host kernels: kernels a feature plugin provides for its own ops, run on host memory beside
whichever backend runs the rest of the graph.

A plugin that defines ops of its own (``quantum.expectation``) and computes them on the CPU
registers a kernel for each with its rules, under the rule kind :data:`HOST_KERNEL_RULE`::

    @hookimpl
    def mskernel_register_rules(rules):
        rules.register(HOST_KERNEL_RULE, "quantum.expectation",
                       HostKernel(expectation_kernel, dtypes=("float32", "float64")))

What a host kernel receives and returns — the calling convention of an op's reference
semantics, so a plugin's NumPy implementation serves as both:

- ``fn(*arrays, **attrs)``: one NumPy array per input of the node, in the reference storage of
  its dtype (:mod:`mskernel.ir.dtypes`: ``bfloat16`` as ``float32``), read-only (a kernel
  must not write into its inputs); the node's attributes as keywords;
- it returns one array, or a tuple of arrays exactly when the op has several outputs, each of
  the shape the op's rule inferred; results are converted to the inferred dtype (a wrong
  shape is an error naming the op and the plugin) and may become the backend's arrays as
  they are, so a kernel must not keep or change them;
- it is a pure function of its inputs and attributes, callable from any thread.

Only nodes whose inputs and outputs are tensors, without regions, of the ``dtypes`` given
(``None``: any) run on a host kernel — and ``!token`` s, for an effectful op (a collective, a
file write): the kernel receives ``TOKEN_VALUE`` for its token and returns ``TOKEN_VALUE`` for
the token it produces, as the op's reference semantics does; the token orders the node among
the graph's other effects wherever the partitioner places it.

Where it runs.  The partitioner gives a node to the preferred backend when that backend claims
its op (a GPU backend with its own kernel for it wins).  Otherwise, when the op has a host
kernel, the node is placed *beside* the preferred backend, in a segment of host-kernel nodes
that the backend's arrays flow into and out of, before any fallback to another backend and
without a ``FallbackWarning``: the plugin has said where its op runs.  A backend whose arrays
live in host memory (:attr:`Backend.host_memory <mskernel.runtime.Backend.host_memory>`: the
reference and cpu backends) hands them over with no device transfer; for any other backend
(a GPU) the inputs are copied to the host and the results back, and the plan counts those
transfers (``explain()`` lists them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

import numpy as np

from ..errors import PluginError
from ..ir.dtypes import DType, dtype as to_dtype
from ..ir.graph import Graph, Node, Value
from ..ir.types import TensorType, TokenType
from .backend import Backend, Executable, OpSupport
from .interpreter import call_kernel
from .state import TOKEN_VALUE

#: The rule kind under which a plugin registers the :class:`HostKernel` of one of its ops.
HOST_KERNEL_RULE = "host_kernel"


@dataclass(frozen=True)
class HostKernel:
    """A plugin's kernel for one of its ops, run on host memory beside any backend: ``fn``
    (the calling convention is the module's), the ``dtypes`` of the tensors it takes and
    returns (``None``: any; names or :class:`~mskernel.ir.DType` s).  ``owner`` is the
    distribution that registered it (filled in by :func:`host_kernels`)."""

    fn: Callable[..., Any]
    dtypes: Optional[Iterable[Any]] = None
    owner: str = "unknown"

    def __post_init__(self) -> None:
        if not callable(self.fn):
            raise PluginError(f"a host kernel must be callable, got {self.fn!r}")
        if self.dtypes is not None:
            object.__setattr__(self, "dtypes", frozenset(to_dtype(d) for d in self.dtypes))

    def reason_unsupported(self, node: Node) -> Optional[str]:
        """``None`` when this kernel runs ``node``, else why not."""
        if node.regions:
            return "a host kernel does not run nodes with regions"
        if not all(isinstance(v.type, (TensorType, TokenType))
                   for v in (*node.inputs, *node.outputs)):
            return "a host kernel takes and returns tensors and tokens only"
        dtypes: Optional[frozenset[DType]] = self.dtypes  # type: ignore[assignment]
        return OpSupport(dtypes=dtypes).reason_unsupported(node)


def host_kernels(rules: Any) -> dict[str, HostKernel]:
    """The host kernels registered in ``rules`` (a :class:`~mskernel.ops.RuleRegistry`), by
    op name, each with the distribution that registered it as ``owner``."""
    kernels = {}
    for op in rules.ops_with(HOST_KERNEL_RULE):
        kernel, owner = rules.get(HOST_KERNEL_RULE, op), rules.owner(HOST_KERNEL_RULE, op)
        if not isinstance(kernel, HostKernel):
            raise PluginError(f"{owner} registered a '{HOST_KERNEL_RULE}' rule for op '{op}' "
                              f"that is not a HostKernel: {kernel!r}")
        kernels[op] = HostKernel(kernel.fn, kernel.dtypes, owner or "unknown")
    return kernels


class HostKernelExecutable(Executable):
    """Runs a segment of host-kernel nodes for ``backend``: takes and returns the backend's
    device arrays, converting them to host arrays around the kernels — a host-memory
    backend's arrays that are NumPy arrays in reference storage as they are (read-only, no
    copy), any other through the backend's ``to_host``; results that the backend can hold as
    they are (:meth:`Backend.share`: a new, writeable array in its layout) without a copy, any
    other through ``to_device``."""

    def __init__(self, graph: Graph, backend: Backend, kernels: Mapping[str, HostKernel]) -> None:
        super().__init__(graph)
        self.backend = backend
        self.kernels = {node: kernels[node.op] for node in graph.nodes}

    def run(self, args: Sequence[Any]) -> list[Any]:
        env: dict[Value, Any] = {v: _on_host(self.backend, a)
                                 for v, a in zip(self.graph.inputs, args)}
        for node, kernel in self.kernels.items():
            arrays = [_read_only(env[v]) for v in node.inputs]
            what = f"host kernel ({kernel.owner})"
            env.update(zip(node.outputs, call_kernel(node, kernel.fn, arrays, what=what)))
        return [_on_device(self.backend, env[v], v.type) if isinstance(v.type, TensorType)
                else env[v] for v in self.graph.outputs]


def _on_host(backend: Backend, array: Any) -> Any:
    if array is TOKEN_VALUE:
        return array
    data = array.data
    if backend.host_memory and isinstance(data, np.ndarray) and (
            data.dtype == array.type.dtype.storage):
        return data
    return backend.to_host(array)


def _on_device(backend: Backend, array: np.ndarray, type: TensorType) -> Any:
    shared = backend.share(array, type) if array.flags.writeable else None  # not an input
    return shared if shared is not None else backend.to_device(array, type)


def _read_only(array: Any) -> Any:
    if array is TOKEN_VALUE:
        return array
    view = array.view()
    view.flags.writeable = False
    return view
