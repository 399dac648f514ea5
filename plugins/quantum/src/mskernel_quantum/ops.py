"""The quantum ops of the op registry.

``quantum.expectation(params: f[..., P]) -> f[...]`` is ``<0| U(p)^dag H U(p) |0>`` for each
parameter vector ``p`` along the last axis of ``params`` (ordered as the circuit's
``params_name``; leading axes are a batch), and ``quantum.expectation_grad(params) ->
f[..., P]`` its gradient by the adjoint method.  The attributes are plain text: ``circuit`` is
:meth:`Circuit.to_json` of a unitary circuit and ``hamiltonian`` is ``str(Hamiltonian)``.
Results have the dtype of ``params``; the reference computes in complex128, vectorised over
the batch (:mod:`mskernel_quantum.batch`), and is also the ops' host kernel
(:data:`HOST_KERNELS`): with any backend installed, these nodes run on the host beside it.

The vector-Jacobian product of ``quantum.expectation`` is therefore
``cotangent[..., None] * quantum.expectation_grad(params)`` with the same attributes — the
rule :mod:`mskernel_quantum.rules` registers.  :func:`expectation` applies the op to a tensor
from circuit and Hamiltonian objects.
"""

from __future__ import annotations

from functools import lru_cache
from math import prod
from typing import Any

import numpy as np
from mskernel_sdk import (
    Attr, HostKernel, InferError, OpDef, TensorType, apply, require_kind, require_tensor,
)

from .errors import QuantumError

EXPECTATION = "quantum.expectation"
EXPECTATION_GRAD = "quantum.expectation_grad"


@lru_cache(maxsize=128)
def read_attributes(circuit: str, hamiltonian: str):
    """The circuit, the Hamiltonian and the qubit count the attributes describe."""
    from .circuit import Circuit
    from .hamiltonian import Hamiltonian

    c, h = Circuit.from_json(circuit), Hamiltonian(hamiltonian)
    for gate in c:
        if not gate.unitary:
            raise QuantumError(f"the circuit must be unitary; it holds {gate}")
    return c, h, max(c.n_qubits, h.n_qubits, 1)


def _infer(params: TensorType, circuit: str, hamiltonian: str, *, gradient: bool) -> TensorType:
    params = require_tensor(params, "params")
    require_kind(params, "f", "a floating-point params")
    try:
        c, _, _ = read_attributes(circuit, hamiltonian)
    except QuantumError as exc:
        raise InferError(str(exc)) from None
    names = c.params_name
    if params.rank == 0 or params.shape[-1] != len(names):
        raise InferError(f"params must have shape [..., {len(names)}] (one value per circuit "
                         f"parameter: {', '.join(names) or 'none'}; leading axes are a batch), "
                         f"got {list(params.shape)}")
    return params if gradient else params.with_shape(params.shape[:-1])


def _evaluate(params: np.ndarray, circuit: str, hamiltonian: str, *, gradient: bool):
    from .batch import expectation_gradients, expectations

    c, h, n = read_attributes(circuit, hamiltonian)
    batch = params.shape[:-1]
    rows = params.reshape(prod(batch), params.shape[-1])
    if gradient:
        result = expectation_gradients(c, h, rows, n)[1].reshape(params.shape)
    else:
        result = expectations(c, h, rows, n).reshape(batch)
    return result.astype(params.dtype)


def apply_expectation(params: Any, circuit: str, hamiltonian: str, *,
                      gradient: bool = False) -> Any:
    """Apply ``quantum.expectation`` (or ``_grad``) to a tensor, with the attributes as text."""
    return apply(EXPECTATION_GRAD if gradient else EXPECTATION, params, circuit=circuit,
                 hamiltonian=hamiltonian)


def expectation(params: Any, circuit: Any, hamiltonian: Any) -> Any:
    """``quantum.expectation`` of ``params`` (a tensor ``[..., P]`` ordered as
    ``circuit.params_name``) for a :class:`Circuit` and a :class:`Hamiltonian` (or its text):
    differentiable by ``mskernel.grad`` and friends, eagerly and under ``@jit``."""
    from .hamiltonian import Hamiltonian

    return apply_expectation(params, circuit.to_json(), str(Hamiltonian(hamiltonian)))


def expectation_values(params: np.ndarray, circuit: str, hamiltonian: str) -> np.ndarray:
    """The reference semantics and host kernel of ``quantum.expectation``."""
    return _evaluate(params, circuit, hamiltonian, gradient=False)


def expectation_gradients(params: np.ndarray, circuit: str, hamiltonian: str) -> np.ndarray:
    """The reference semantics and host kernel of ``quantum.expectation_grad``."""
    return _evaluate(params, circuit, hamiltonian, gradient=True)


_ATTRS = (Attr("circuit", "str"), Attr("hamiltonian", "str"))

OPS: list[OpDef] = [
    OpDef(EXPECTATION, ("params",),
          lambda params, circuit, hamiltonian: _infer(params, circuit, hamiltonian,
                                                      gradient=False),
          expectation_values, attrs=_ATTRS, owner="mskernel-quantum",
          doc="<H> after the circuit (JSON attribute) from |0...0>, per parameter vector"),
    OpDef(EXPECTATION_GRAD, ("params",),
          lambda params, circuit, hamiltonian: _infer(params, circuit, hamiltonian,
                                                      gradient=True),
          expectation_gradients, attrs=_ATTRS, owner="mskernel-quantum",
          doc="d<H>/d(params) of quantum.expectation, by the adjoint method"),
]

#: The ops' host kernels: the batched NumPy simulation (:mod:`mskernel_quantum.batch`) runs on
#: the host beside whichever backend runs the rest of a model (no fallback to the reference
#: backend, no transfer on the host-memory backends).
HOST_KERNELS: dict[str, HostKernel] = {
    EXPECTATION: HostKernel(expectation_values),
    EXPECTATION_GRAD: HostKernel(expectation_gradients),
}
