"""The quantum ops of the op registry.

``quantum.expectation(params) -> f[]`` is ``<0| U(params)^dag H U(params) |0>`` and
``quantum.expectation_grad(params) -> f[P]`` its gradient (by the adjoint method).  ``params``
is a float vector ordered as the circuit's ``params_name``; the attributes are plain text:
``circuit`` is :meth:`Circuit.to_json` of a unitary circuit and ``hamiltonian`` is
``str(Hamiltonian)``.  Results have the dtype of ``params``; the reference computes in
complex128 with the NumPy kernels.

The vector-Jacobian product of ``quantum.expectation`` is therefore
``cotangent * quantum.expectation_grad(params)`` with the same attributes, which is all an
autodiff rule needs.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from mskernel.errors import InferError
from mskernel.ir.types import TensorType
from mskernel.ops.registry import Attr, OpDef
from mskernel.ops.rules import require_kind, tensor

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
    params = tensor(params, "params")
    require_kind(params, "f", "a floating-point params")
    try:
        c, _, _ = read_attributes(circuit, hamiltonian)
    except QuantumError as exc:
        raise InferError(str(exc)) from None
    names = c.params_name
    if params.shape != (len(names),):
        raise InferError(f"params must have shape [{len(names)}] (one value per circuit "
                         f"parameter: {', '.join(names) or 'none'}), got {list(params.shape)}")
    return params if gradient else params.with_shape(())


def _evaluate(params: np.ndarray, circuit: str, hamiltonian: str, *, gradient: bool):
    from .gradients import adjoint_gradient
    from .reference_kernels import NumpyKernels
    from .statevector import StateVector

    c, h, n = read_attributes(circuit, hamiltonian)
    kernels = NumpyKernels()
    start = StateVector(n, np.complex128, kernels)
    values = dict(zip(c.params_name, np.asarray(params, dtype=np.float64).tolist()))
    energy, grad = adjoint_gradient(kernels, start.data, c, h, values)
    return (grad if gradient else np.asarray(energy)).astype(params.dtype)


_ATTRS = (Attr("circuit", "str"), Attr("hamiltonian", "str"))

OPS: list[OpDef] = [
    OpDef(EXPECTATION, ("params",),
          lambda params, circuit, hamiltonian: _infer(params, circuit, hamiltonian,
                                                      gradient=False),
          lambda params, circuit, hamiltonian: _evaluate(params, circuit, hamiltonian,
                                                         gradient=False),
          attrs=_ATTRS, owner="mskernel-quantum",
          doc="<H> after the circuit (JSON attribute) with these parameters, from |0...0>"),
    OpDef(EXPECTATION_GRAD, ("params",),
          lambda params, circuit, hamiltonian: _infer(params, circuit, hamiltonian,
                                                      gradient=True),
          lambda params, circuit, hamiltonian: _evaluate(params, circuit, hamiltonian,
                                                         gradient=True),
          attrs=_ATTRS, owner="mskernel-quantum",
          doc="d<H>/d(params) of quantum.expectation, by the adjoint method"),
]
