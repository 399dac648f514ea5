"""Gradients of an expectation value <psi(params)| H |psi(params)> with respect to the named
parameters of a circuit, ordered as ``circuit.params_name``.

- :func:`adjoint_gradient` — the adjoint method: one forward pass, then one backward sweep
  that un-computes the state block by block (fused gates) while carrying
  ``lam = U_{k+1}^dag ... H psi`` for each Hamiltonian; for each block,
  ``dE/d(angle) = 2 Re <lam| dU |psi_{k-1}>``.  Cost: about three state passes per block,
  independent of the number of parameters.  Pure states only.
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
from typing import Callable, Mapping, Sequence

import numpy as np

from .circuit import Circuit
from .errors import QuantumError
from .fusion import differentiated_angles, fuse
from .hamiltonian import Hamiltonian
from .statevector import apply_hamiltonian, expectation, overlap

# Four-term rule for E(x) = a + sum over frequencies {1/2, 1} (Anselmetti et al. 2021).
_C1 = (math.sqrt(2) + 1) / (4 * math.sqrt(2))
_C2 = (math.sqrt(2) - 1) / (4 * math.sqrt(2))


def adjoint_gradient(kernels, initial: np.ndarray, circuit: Circuit,
                     hamiltonians: Sequence[Hamiltonian],
                     values: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Expectations, shape ``(len(hamiltonians),)``, and gradients, ``(len(hamiltonians),
    n_params)``, for the pure state ``circuit |initial>`` (``initial`` is not modified).

    The circuit runs as fused blocks (:mod:`.fusion`) forward and backward; the backward sweep
    un-computes psi once per block and carries one co-state per Hamiltonian beside it, so the
    memory is psi plus one state per Hamiltonian, and each block's derivative sums come from
    the same pass."""
    gates = list(circuit)
    for gate in gates:
        if not gate.unitary:
            raise QuantumError(f"the adjoint method needs a unitary circuit; {gate} is not "
                               f"(remove measurements, or use a density-matrix simulator "
                               f"for noise)")
    index = {name: i for i, name in enumerate(circuit.params_name)}
    blocks = fuse(gates, values, differentiate=True)
    psi = initial.copy()
    kernels.apply_blocks(psi, blocks)
    grads = np.zeros((len(hamiltonians), len(index)))
    differentiated = [i for i, b in enumerate(blocks) if b.derivatives]
    if not differentiated:
        return np.array([expectation(kernels, psi, h) for h in hamiltonians]), grads
    lams = [apply_hamiltonian(kernels, psi, h) for h in hamiltonians]
    energies = np.array([overlap(kernels, psi, lam).real for lam in lams])
    for block in reversed(blocks[differentiated[0]:]):
        inverse = block.matrix.conj().T
        if not block.derivatives:  # nothing to measure: plain passes beat the fused sweep
            for state in [psi, *lams]:
                kernels.apply_matrix(state, inverse, block.targets, block.controls)
            continue
        sums = kernels.adjoint_step(psi, lams, inverse, np.stack(block.derivatives),
                                    block.targets, block.controls)
        for k, coeffs in enumerate(block.coeffs):
            for name, c in coeffs.items():
                grads[:, index[name]] += 2 * c * sums[:, k].real
    return energies, grads


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
        for k in differentiated_angles(gate):
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
