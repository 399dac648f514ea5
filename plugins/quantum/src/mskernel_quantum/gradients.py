"""Gradients of an expectation value <psi(params)| H |psi(params)> with respect to the named
parameters of a circuit, ordered as ``circuit.params_name``.

- :func:`adjoint_gradient` — the adjoint method: one forward pass, then one backward sweep
  that un-computes the state gate by gate while carrying ``lam = U_{k+1}^dag ... H psi``;
  for each gate, ``dE/d(angle) = 2 Re <lam| dU |psi_{k-1}>``.  Cost: about three state
  passes per gate, independent of the number of parameters.  Pure states only.
- :func:`parameter_shift_gradient` — exact differences of shifted circuits (two evaluations
  per differentiated angle, four for controlled Pauli rotations, whose expectation has the
  frequencies 1/2 and 1).  A check on the adjoint method, and the method for density
  matrices.

A named parameter enters gate angles through linear expressions, so its derivative is the
sum over angles of (coefficient x angle derivative).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable, Mapping

import numpy as np

from .circuit import Circuit
from .errors import QuantumError
from .gates import Gate, ParameterizedGate
from .hamiltonian import Hamiltonian
from .statevector import apply_hamiltonian, expectation, overlap

# Four-term rule for E(x) = a + sum over frequencies {1/2, 1} (Anselmetti et al. 2021).
_C1 = (math.sqrt(2) + 1) / (4 * math.sqrt(2))
_C2 = (math.sqrt(2) - 1) / (4 * math.sqrt(2))


def _differentiated_angles(gate: Gate) -> list[int]:
    if not isinstance(gate, ParameterizedGate):
        return []
    return [k for k, p in enumerate(gate.params) if not p.is_constant]


def adjoint_gradient(kernels, initial: np.ndarray, circuit: Circuit, hamiltonian: Hamiltonian,
                     values: Mapping[str, float]) -> tuple[float, np.ndarray]:
    """Expectation and gradient for the pure state ``circuit |initial>`` (``initial`` is not
    modified)."""
    gates = list(circuit)
    for gate in gates:
        if not gate.unitary:
            raise QuantumError(f"the adjoint method needs a unitary circuit; {gate} is not "
                               f"(remove measurements, or use a density-matrix simulator "
                               f"for noise)")
    index = {name: i for i, name in enumerate(circuit.params_name)}
    matrices = [g.matrix(values) for g in gates]
    psi = initial.copy()
    for gate, m in zip(gates, matrices):
        kernels.apply_matrix(psi, m, gate.obj_qubits, gate.ctrl_qubits)
    grad = np.zeros(len(index))
    differentiated = [i for i, g in enumerate(gates) if _differentiated_angles(g)]
    if not differentiated:
        return expectation(kernels, psi, hamiltonian), grad
    lam = apply_hamiltonian(kernels, psi, hamiltonian)
    energy = overlap(kernels, psi, lam).real
    for i in range(len(gates) - 1, differentiated[0] - 1, -1):
        gate, inverse = gates[i], matrices[i].conj().T
        angles = _differentiated_angles(gate)
        if not angles:  # nothing to measure: two plain passes beat the fused sweep
            kernels.apply_matrix(psi, inverse, gate.obj_qubits, gate.ctrl_qubits)
            kernels.apply_matrix(lam, inverse, gate.obj_qubits, gate.ctrl_qubits)
            continue
        all_derivatives = gate.derivatives(values)  # type: ignore[attr-defined]
        derivatives = np.stack([all_derivatives[k] for k in angles])
        sums = kernels.adjoint_step(psi, [lam], inverse, derivatives, gate.obj_qubits,
                                    gate.ctrl_qubits)[0]
        for k, s in zip(angles, sums):
            for name, c in gate.params[k].coeffs.items():
                grad[index[name]] += 2 * c * s.real
    return energy, grad


def _shifted(circuit: Circuit, position: int, angle: int, shift: float) -> Circuit:
    gates = list(circuit)
    gate = gates[position]
    params = list(gate.params)
    params[angle] = params[angle] + shift
    gates[position] = replace(gate, params_=tuple(params))
    return Circuit(gates)


def parameter_shift_gradient(evaluate: Callable[[Circuit], float],
                             circuit: Circuit) -> np.ndarray:
    """The gradient by the parameter-shift rules; ``evaluate(c)`` returns the expectation of
    circuit ``c`` (with the parameter values bound by the caller)."""
    index = {name: i for i, name in enumerate(circuit.params_name)}
    grad = np.zeros(len(index))
    for position, gate in enumerate(circuit):
        for k in _differentiated_angles(gate):
            def difference(shift: float, position: int = position, k: int = k) -> float:
                return (evaluate(_shifted(circuit, position, k, shift))
                        - evaluate(_shifted(circuit, position, k, -shift)))

            if gate.ctrl_qubits and gate.kind.pauli_generator[k]:  # type: ignore[attr-defined]
                derivative = _C1 * difference(math.pi / 2) - _C2 * difference(3 * math.pi / 2)
            else:
                derivative = difference(math.pi / 2) / 2
            for name, c in gate.params[k].coeffs.items():
                grad[index[name]] += c * derivative
    return grad
