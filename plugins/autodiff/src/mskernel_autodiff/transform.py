"""What the reverse-mode tape and the forward-mode tangent map share: being an interposer at
one trace level, pausing, and the stack of active transforms that custom rules consult.

A transform is created at a *trace level* — the trace active when it is created (``None``
when eager).  It sees only the ops applied at that level: ops applied while a control-flow
function is traced into a region belong to the region, whose owning ``If``/``While`` node is
what the transform records (and differentiates through its region rules).

Tensors are tracked by identity.  Tensors are immutable, and a transform keeps every tensor
it tracks alive, so an ``id`` is never reused while the transform may look it up.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator, Optional

from mskernel_sdk import ApplyResult, Graph, Tensor, TensorType, active_trace, apply, interpose

_active: ContextVar[tuple["Transform", ...]] = ContextVar("mskernel_autodiff_transforms",
                                                          default=())


def differentiable(t: Any) -> bool:
    """Whether derivatives flow through ``t``: a floating-point or complex tensor."""
    return isinstance(t, Tensor) and isinstance(t.type, TensorType) and t.dtype.is_inexact


def alias(x: Tensor) -> Tensor:
    """A new tensor object equal to ``x``, made by an op so that every enclosing transform
    sees it as depending on ``x``: the variable a transform differentiates with respect to is
    then distinct from ``x`` even when the caller passes the same tensor twice or closes over
    it (what JAX calls perturbation confusion).  Under a trace the identity cast is removed
    by the ``simplify`` pass."""
    return apply("cast", x, dtype=x.dtype)  # type: ignore[return-value]


def as_outputs(result: ApplyResult) -> tuple[Tensor, ...]:
    return result if isinstance(result, tuple) else (result,)


class Transform(ABC):
    """Base of :class:`~mskernel_autodiff.tape.Tape` and
    :class:`~mskernel_autodiff.forward.ForwardMode`: an interposer bound to the trace level
    it was created at, which can be paused and which knows the tensors it tracks."""

    def __init__(self) -> None:
        self.trace = active_trace()
        self._paused = 0

    def sees(self) -> bool:
        """Whether an op applied now is this transform's to record."""
        return not self._paused and active_trace() is self.trace

    @abstractmethod
    def tracks(self, t: Any) -> bool:
        """Whether ``t`` is a tensor this transform follows."""

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Let ops pass without recording them (the transform's own rule computations, or
        the inside of a function whose derivative a custom rule gives)."""
        self._paused += 1
        try:
            yield
        finally:
            self._paused -= 1

    @contextmanager
    def active(self) -> Iterator["Transform"]:
        """See every op applied inside the ``with`` block."""
        token = _active.set(_active.get() + (self,))
        try:
            with interpose(self):
                yield self
        finally:
            _active.reset(token)

    @abstractmethod
    def apply(self, op: str, args: tuple[Tensor, ...], attrs: dict[str, Any],
              regions: tuple[Graph, ...], inner: Callable[..., ApplyResult]) -> ApplyResult:
        """Run ``op`` through ``inner`` and record what the transform needs of it."""


def innermost_tracking(tensors: list[Any]) -> Optional[Transform]:
    """The most recently entered active transform that sees the current level and tracks one
    of ``tensors`` — the one that handles a call of a function with a custom rule."""
    for transform in reversed(_active.get()):
        if transform.sees() and any(transform.tracks(t) for t in tensors):
            return transform
    return None


def active_transforms() -> tuple[Transform, ...]:
    return _active.get()
