"""The ops this plugin defines: ``autodiff.stop_gradient`` and ``autodiff.depend``.

``autodiff.stop_gradient(x)`` is the identity, registered as ``"nondifferentiable"``, so no
derivative flows through it in either mode.  It appears in traced graphs — where a region
may later be differentiated by replaying it — and carries the ``"identity"`` trait, so the
generic ``simplify`` pass removes it before any backend sees the graph; eager
code never applies it (:func:`mskernel_autodiff.api.stop_gradient` only hides the tensor
from the active transformations there).

``autodiff.depend(value, expr, token) -> (value, token)`` returns ``value`` once ``expr`` has
been computed (MindSpore's ``ops.depend``).  It is *effectful*: the trace threads its state
token through it, so dead-code elimination keeps it — and with it ``expr`` — even where
nothing reads ``expr``, and it is ordered after the effects recorded before it (parameter
updates) and before those recorded after.  Once the generic passes have run, a backend that
does not claim it runs its decomposition, which is nothing: ``value`` and the token pass
through, the order of the effects around it already being fixed by the token chain.  Eager
code never applies it: there, every op has already run when it returns.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from mskernel_sdk import (
    TOKEN_VALUE, Emitter, OpDef, TensorType, TokenType, Type, Value, require_tensor,
)

STOP_GRADIENT = "autodiff.stop_gradient"
DEPEND = "autodiff.depend"


def _infer(x: TensorType) -> TensorType:
    return require_tensor(x, "x")


def _reference(x: np.ndarray) -> np.ndarray:
    return np.array(x, copy=True)


def _depend_infer(value: Type, expr: Type, token: Type) -> tuple[Type, Type]:
    return require_tensor(value, "value"), TokenType()


def _depend_reference(value: np.ndarray, expr: Any, token: Any) -> tuple[np.ndarray, Any]:
    return np.array(value, copy=True), TOKEN_VALUE


def _depend_decomposition(b: Emitter, value: Value, expr: Value,
                          token: Value) -> tuple[Value, Value]:
    return value, token


def depend_vjp(primals: Any, outputs: Any, cotangents: Any) -> tuple[Any, None]:
    """The cotangent of ``value`` is the output's; ``expr`` gets none."""
    return cotangents[0], None


def depend_jvp(primals: Any, tangents: Any, outputs: Any) -> tuple[Any]:
    return (tangents[0],)


OPS = [
    OpDef(STOP_GRADIENT, ("x",), _infer, _reference, traits=frozenset({"elementwise", "identity"}),
          owner="mskernel-autodiff", doc="the identity; derivatives do not flow through it"),
    OpDef(DEPEND, ("value", "expr", "token"), _depend_infer, _depend_reference, effectful=True,
          owner="mskernel-autodiff", decomposition=_depend_decomposition,
          doc="value, ordered after expr and after the effects the token follows"),
]
