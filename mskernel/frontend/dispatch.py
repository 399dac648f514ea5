"""Applying an op to tensors: recorded into the active trace, or run at once (eager mode).

Eager mode compiles a one-node graph per (backend, op, input types, attributes) the first time
it is seen and caches the executable, so a repeated op costs a dictionary lookup and one
``Executable.run``.  A composite op the tensors' backend does not claim runs there as its
decomposition when the backend runs every op of it.  Another op the backend cannot run runs on
its plugin's host kernel beside that backend when it has one
(:mod:`mskernel.runtime.host_kernels`), else on the next capable backend under the fallback
policy (``MSKERNEL_FALLBACK`` = allow / warn / deny, default warn), with its inputs and outputs
transferred — the same rules the partitioner applies to graphs.

An effectful op (``OpDef.effectful``: a collective, an I/O op) whose ``!token`` is its last
input and last output is applied to its tensors alone: under a trace the token is the trace's
(:meth:`~mskernel.frontend.trace.Trace.record`), so effects are recorded in program order; in
eager mode each call runs at once, in order.  The result is its tensor outputs (the token
left out); interposers see the op without its token too.
"""

from __future__ import annotations

import os
import warnings
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator, Optional, Protocol, Sequence, Union

from ..errors import BackendError, OpError
from ..hooks.host import host
from ..ir.builder import GraphBuilder
from ..ir.graph import Graph, attr_key
from ..ir.types import TOKEN
from ..runtime.backend import Backend, CompileOptions, DeviceArray
from ..runtime.executor import installed_host_kernels, transfer
from ..runtime.expand import expand_composites
from ..runtime.host_kernels import HostKernelExecutable
from ..runtime.partition import FallbackWarning
from ..runtime.state import TOKEN_VALUE
from .device import current_device
from ..ir.source import user_location
from .tensor import Tensor
from .trace import EscapedTracerError, active_trace

FALLBACK_ENV = "MSKERNEL_FALLBACK"
_EAGER_OPTIONS = CompileOptions(opt_level=0)

Result = Union[Tensor, tuple[Tensor, ...]]


class Interposer(Protocol):
    """An object that sees every op applied while it is active — how transforms such as
    autodiff tapes, forward-mode tangents or batching plug into the frontend without the
    frontend knowing them.

    ``apply`` receives the op, its tensors, attributes and regions, and ``inner``: call
    ``inner(op, args, attrs, regions)`` to apply the op at the next level down (the next
    interposer, then the active trace or eager execution) and return its result, possibly
    after recording it.  Interposers nest; the most recently entered one sees the op first.
    """

    def apply(self, op: str, args: tuple[Tensor, ...], attrs: dict[str, Any],
              regions: tuple[Graph, ...], inner: Callable[..., Result]) -> Result: ...


_interposers: ContextVar[tuple[Interposer, ...]] = ContextVar("mskernel_interposers", default=())


@contextmanager
def interpose(interposer: Interposer) -> Iterator[Interposer]:
    """Make ``interposer`` see every op applied inside the ``with`` block."""
    token = _interposers.set(_interposers.get() + (interposer,))
    try:
        yield interposer
    finally:
        _interposers.reset(token)


def interposing() -> bool:
    """Whether any interposer is active (then ops must be applied one by one through it,
    e.g. a jitted function called under ``grad`` is traced again rather than run compiled)."""
    return bool(_interposers.get())


def apply(op: str, *args: Tensor, regions: Sequence[Graph] = (), **attrs: Any) -> Result:
    """Apply ``op`` to tensors: record it when a trace is active, else run it now.  Returns a
    tensor, or a tuple of tensors for a multi-output op.

    An effectful op (``OpDef.effectful``) is applied without its ``!token``: the trace
    threads its state token through it (:meth:`~.trace.Trace.record`), so effects keep the
    order in which they were applied; eagerly it runs at once, as every op does."""
    stack = _interposers.get()
    if stack:
        return _through(stack, len(stack) - 1, op, args, attrs, tuple(regions))
    return _apply_base(op, args, attrs, regions)


def _through(stack: tuple[Interposer, ...], level: int, op: str, args: tuple[Tensor, ...],
             attrs: dict[str, Any], regions: tuple[Graph, ...]) -> Result:
    if level < 0:
        return _apply_base(op, args, attrs, regions)

    def inner(op: str, args: tuple[Tensor, ...], attrs: dict[str, Any],
              regions: tuple[Graph, ...] = ()) -> Result:
        return _through(stack, level - 1, op, tuple(args), attrs, tuple(regions))

    return stack[level].apply(op, args, attrs, regions, inner)


def _apply_base(op: str, args: Sequence[Tensor], attrs: dict[str, Any],
                regions: Sequence[Graph]) -> Result:
    trace = active_trace()
    if trace is not None:
        values = [trace.value_of(a) for a in args]
        out = trace.record(op, values, attrs, regions, user_location())
        if isinstance(out, tuple):
            return tuple(Tensor._traced(v, trace) for v in out)
        return Tensor._traced(out, trace)
    for a in args:
        if a._trace is not None:
            raise _escaped(op, a)
    return _run_eager(op, args, attrs, regions)


def cached_binary(op: str, a: Tensor, b: Tensor) -> Optional[Tensor]:
    """The eager fast path of an attribute-free binary op: the result when both tensors are
    concrete on one backend, no transform or trace is active and the kernel for these types
    is already cached; ``None`` otherwise (the caller takes the full path, which fills the
    cache)."""
    da, db = a._data, b._data
    if da is None or db is None or _interposers.get() or active_trace() is not None:
        return None
    kernel = _cache.get((op, id(da.backend), (da.type, db.type), ()))
    if kernel is None or da.backend is not db.backend or kernel.runs_on is not kernel.home:
        return None
    return Tensor._concrete(kernel.executable.run([da, db])[0])


def _escaped(op: str, tensor: Tensor) -> Exception:
    return EscapedTracerError(
        f"op '{op}' got a traced {tensor.type} tensor outside its trace "
        f"(@{tensor._trace.builder.name}); return it from the traced function instead of "  # type: ignore[union-attr]
        "keeping it in a variable that outlives the trace"
    )


class _EagerKernel:
    """One cached eager op: its executable, the backend it runs on, output arity, and
    whether it is effectful (then its graph takes and returns a token after the tensors)."""

    __slots__ = ("executable", "runs_on", "home", "multi", "effectful")

    def __init__(self, executable: Any, runs_on: Backend, home: Backend, multi: bool,
                 effectful: bool = False) -> None:
        self.executable = executable
        self.runs_on = runs_on
        self.home = home
        self.multi = multi
        self.effectful = effectful

    def __call__(self, arrays: list[DeviceArray]) -> list[DeviceArray]:
        if self.effectful:
            return self._run_effect(arrays)
        if self.runs_on is self.home:
            return self.executable.run(arrays)
        outs = self.executable.run([transfer(a, self.runs_on) for a in arrays])
        return [transfer(o, self.home) for o in outs]

    def _run_effect(self, arrays: list[DeviceArray]) -> list[DeviceArray]:
        moved = [transfer(a, self.runs_on) for a in arrays]
        outs = self.executable.run([*moved, TOKEN_VALUE])[:-1]
        return [transfer(o, self.home) for o in outs]


_cache: dict[tuple, _EagerKernel] = {}


def _key(op: str, backend: Backend, args: Sequence[Tensor], attrs: dict[str, Any]) -> tuple:
    items = tuple(sorted(attrs.items()))
    try:
        hash(items)
    except TypeError:  # arrays or lists in attributes
        items = tuple((k, attr_key(v)) for k, v in items)
    return (op, id(backend), tuple(a._data.type for a in args), items)  # type: ignore[union-attr]


def _run_eager(op: str, args: Sequence[Tensor], attrs: dict[str, Any],
               regions: Sequence[Graph]) -> Result:
    home = _home_backend(op, args)
    key = _key(op, home, args, attrs)
    kernel = _cache.get(key)
    if kernel is None:
        kernel = _compile_eager(op, home, args, attrs, regions)
        if not regions:
            _cache[key] = kernel
    try:
        outs = kernel([a._data for a in args])  # type: ignore[misc]
    except (ArithmeticError, IndexError, ValueError) as exc:
        loc = user_location()
        exc.add_note(f"in op '{op}'{f' at {loc}' if loc else ''}")
        raise
    if kernel.multi:
        return tuple(Tensor._concrete(o) for o in outs)
    return Tensor._concrete(outs[0])


def _home_backend(op: str, args: Sequence[Tensor]) -> Backend:
    """The backend holding the inputs (they must agree), or the current device."""
    if not args:
        return current_device()
    home = args[0]._data.backend  # type: ignore[union-attr]
    for a in args[1:]:
        if a._data.backend is not home:  # type: ignore[union-attr]
            names = ", ".join(f"{a.type} on {a.device}" for a in args)
            raise BackendError(
                f"op '{op}' got tensors on different devices ({names}); move them to one "
                "device first"
            )
    return home


def _compile_eager(op: str, home: Backend, args: Sequence[Tensor], attrs: dict[str, Any],
                   regions: Sequence[Graph]) -> _EagerKernel:
    builder = GraphBuilder(op, host().ops)
    inputs = [builder.input(a.type) for a in args]
    effectful = not regions and builder.registry.get(op).effectful
    if effectful:  # ordered after everything so far: the caller's token
        inputs.append(builder.input(TOKEN, "token"))
    try:
        node, multi = builder.make_node(op, inputs, attrs, regions=regions)
    except OpError:  # rebuild the message with the user's line
        node, multi = builder.make_node(op, inputs, attrs, regions=regions, loc=user_location())
    if effectful:
        multi = len(node.outputs) != 2
    builder.append(node)
    graph = builder.build(list(node.outputs))
    capabilities = home.capabilities()
    if not capabilities.supports(node):
        expanded = expand_composites(graph, capabilities, host().ops)
        if expanded.expansions:  # a composite running on home as its decomposition
            return _EagerKernel(home.compile(expanded.graph, _EAGER_OPTIONS), home, home, multi,
                                effectful)
        kernel = installed_host_kernels().get(op)  # a plugin's host kernel?
        if kernel is not None and kernel.reason_unsupported(node) is None:
            executable = HostKernelExecutable(graph, home, {op: kernel})
            return _EagerKernel(executable, home, home, multi, effectful)
    runs_on = _capable_backend(home, node, op)
    return _EagerKernel(runs_on.compile(graph, _EAGER_OPTIONS), runs_on, home, multi, effectful)


_warned: set[tuple[str, str]] = set()


def _capable_backend(home: Backend, node: Any, op: str) -> Backend:
    reason = home.capabilities().reason_unsupported(node)
    if reason is None:
        return home
    policy = os.environ.get(FALLBACK_ENV, "warn")
    for other in host().backends.available():
        if other is not home and other.capabilities().supports(node):
            if policy == "deny":
                break
            if policy == "warn" and (home.name, op) not in _warned:
                _warned.add((home.name, op))
                loc = user_location()
                warnings.warn(
                    f"op '{op}'{f' at {loc}' if loc else ''} runs on '{other.name}' because "
                    f"'{home.name}' cannot run it ({reason}); set {FALLBACK_ENV}=allow to "
                    "silence this or deny to make it an error", FallbackWarning, stacklevel=5)
            return other
    raise BackendError(
        f"backend '{home.name}' cannot run op '{op}' ({reason}) and "
        + ("the fallback policy is 'deny'" if policy == "deny" else "no other backend can")
    )
