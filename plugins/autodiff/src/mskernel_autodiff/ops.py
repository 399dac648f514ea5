"""The op this plugin defines: ``autodiff.stop_gradient``.

``autodiff.stop_gradient(x)`` is the identity, registered as ``"nondifferentiable"``, so no
derivative flows through it in either mode.  It appears in traced graphs — where a region
may later be differentiated by replaying it — and carries the ``"identity"`` trait, so the
generic ``simplify`` pass removes it before any backend sees the graph; eager
code never applies it (:func:`mskernel_autodiff.api.stop_gradient` only hides the tensor
from the active transforms there).
"""

from __future__ import annotations

import numpy as np
from mskernel_sdk import OpDef, TensorType, require_tensor

STOP_GRADIENT = "autodiff.stop_gradient"


def _infer(x: TensorType) -> TensorType:
    return require_tensor(x, "x")


def _reference(x: np.ndarray) -> np.ndarray:
    return np.array(x, copy=True)


OPS = [
    OpDef(STOP_GRADIENT, ("x",), _infer, _reference, traits=frozenset({"elementwise", "identity"}),
          owner="mskernel-autodiff", doc="the identity; derivatives do not flow through it"),
]
