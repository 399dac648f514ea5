"""Expectation values of one circuit and Hamiltonian for a *batch* of parameter vectors, and
their gradients by the adjoint method, in NumPy and vectorised over the batch.

This is what the ops ``quantum.expectation`` and ``quantum.expectation_grad`` compute, and so
what :class:`~mskernel_quantum.layer.MQLayer` trains through: ``B`` states of ``2^n``
amplitudes evolve together, and each gate's matrices are built for the whole batch at once
(one per batch entry, since its angles may depend on per-entry encoder data), so the cost in
Python calls does not grow with the batch.  The algorithm is the one of
:func:`mskernel_quantum.gradients.adjoint_gradient` (which serves one state with either
kernel set); the conventions are the simulator's: qubit 0 is the least significant bit of a
state index and a gate matrix's index bit ``j`` is target ``obj_qubits[j]``.
"""

from __future__ import annotations

from math import prod
from typing import Mapping, Sequence, Union

import numpy as np

from .circuit import Circuit
from .errors import QuantumError
from .gates import Gate, ParameterizedGate
from .hamiltonian import Hamiltonian
from .parameters import ParameterExpression
from .reference_kernels import signs

Columns = Mapping[str, np.ndarray]


def batch_angle(expression: ParameterExpression, columns: Columns) -> Union[float, np.ndarray]:
    """The expression's value for every batch entry (a number when it is constant)."""
    value: Union[float, np.ndarray] = expression.const
    for name, c in expression.coeffs.items():
        value = value + c * columns[name]
    return value


def _angles(gate: ParameterizedGate, columns: Columns) -> list[Union[float, np.ndarray]]:
    return [batch_angle(p, columns) for p in gate.params]


def gate_matrices(gate: Gate, columns: Columns) -> np.ndarray:
    """The gate's matrix, ``d x d``, or one per batch entry, ``B x d x d``."""
    if isinstance(gate, ParameterizedGate):
        return gate.kind.matrix(_angles(gate, columns))
    return gate.matrix()


def _target_view(states: np.ndarray, targets: Sequence[int],
                 controls: Sequence[int]) -> tuple[np.ndarray, list[int]]:
    """``states`` (``B x 2^n``) as a ``B x 2 x ... x 2`` view restricted to the controls being
    1 (writable), and the view's axes holding ``targets[k-1], ..., targets[0]``."""
    n = states.shape[1].bit_length() - 1
    index: list = [slice(None)] * (n + 1)
    for c in controls:
        index[n - c] = 1
    view = states.reshape((states.shape[0],) + (2,) * n)[tuple(index)]
    removed = sorted(n - c for c in controls)

    def axis(q: int) -> int:
        full = n - q
        return full - sum(r < full for r in removed)

    return view, [axis(q) for q in reversed(targets)]


def _matvec(matrix: np.ndarray, view: np.ndarray, axes: list[int]) -> np.ndarray:
    """``matrix`` (shared or one per batch entry) applied to the ``axes`` of ``view``."""
    k = len(axes)
    last = list(range(view.ndim - k, view.ndim))
    moved = np.moveaxis(view, axes, last)
    flat = moved.reshape(moved.shape[0], prod(moved.shape[1:-k] if k else ()), 1 << k)
    out = flat @ np.swapaxes(matrix, -1, -2)
    return np.moveaxis(out.reshape(moved.shape), last, axes)


def apply_gate(states: np.ndarray, matrix: np.ndarray, gate: Gate) -> None:
    """states <- M states for every batch entry (in place); M acts where the controls are 1."""
    view, axes = _target_view(states, gate.obj_qubits, gate.ctrl_qubits)
    view[...] = _matvec(matrix, view, axes)


def _inner(bra: np.ndarray, ket: np.ndarray, matrix: np.ndarray, gate: Gate) -> np.ndarray:
    """<bra_b| M_b |ket_b> for every batch entry b, M acting as 0 where a control is 0."""
    ket_view, axes = _target_view(ket, gate.obj_qubits, gate.ctrl_qubits)
    bra_view, _ = _target_view(bra, gate.obj_qubits, gate.ctrl_qubits)
    product = np.conj(bra_view) * _matvec(matrix, ket_view, axes)
    return product.sum(axis=tuple(range(1, product.ndim)))


def apply_hamiltonian(states: np.ndarray, hamiltonian: Hamiltonian) -> np.ndarray:
    """H |state_b> for every batch entry, as a new array."""
    size = states.shape[1]
    k = np.arange(size)
    out = np.zeros_like(states)
    for term in hamiltonian.terms:
        source = k ^ term.xmask
        out += (term.phased_coeff * signs(size, term.zmask)[source]) * states[:, source]
    return out


def _columns(circuit: Circuit, params: np.ndarray) -> dict[str, np.ndarray]:
    names = circuit.params_name
    if params.ndim != 2 or params.shape[1] != len(names):
        raise QuantumError(f"params must have shape [batch, {len(names)}] (one column per "
                           f"circuit parameter), got {list(params.shape)}")
    values = params.astype(np.float64)
    return {name: values[:, j] for j, name in enumerate(names)}


def _evolved(circuit: Circuit, matrices: list[np.ndarray], batch: int,
             n_qubits: int) -> np.ndarray:
    states = np.zeros((batch, 1 << n_qubits), dtype=np.complex128)
    states[:, 0] = 1
    for gate, m in zip(circuit, matrices):
        if not gate.unitary:
            raise QuantumError(f"the circuit must be unitary; it holds {gate}")
        apply_gate(states, m, gate)
    return states


def expectations(circuit: Circuit, hamiltonian: Hamiltonian, params: np.ndarray,
                 n_qubits: int) -> np.ndarray:
    """``<0| U(p_b)^dag H U(p_b) |0>`` for each row ``p_b`` of ``params`` (``B x P``, columns
    ordered as ``circuit.params_name``) on ``n_qubits`` qubits: a vector of ``B`` floats."""
    columns = _columns(circuit, params)
    states = _evolved(circuit, [gate_matrices(g, columns) for g in circuit], params.shape[0],
                      n_qubits)
    return np.einsum("bj,bj->b", np.conj(states), apply_hamiltonian(states, hamiltonian)).real


def expectation_gradients(circuit: Circuit, hamiltonian: Hamiltonian, params: np.ndarray,
                          n_qubits: int) -> tuple[np.ndarray, np.ndarray]:
    """The expectations (``B``) and their gradients (``B x P``) by the adjoint method."""
    columns = _columns(circuit, params)
    gates = list(circuit)
    matrices = [gate_matrices(g, columns) for g in gates]
    psi = _evolved(circuit, matrices, params.shape[0], n_qubits)
    lam = apply_hamiltonian(psi, hamiltonian)
    energy = np.einsum("bj,bj->b", np.conj(psi), lam).real
    index = {name: j for j, name in enumerate(circuit.params_name)}
    grad = np.zeros(params.shape)
    differentiated = {i for i, g in enumerate(gates)
                      if isinstance(g, ParameterizedGate) and g.parameterized}
    for i in range(len(gates) - 1, min(differentiated, default=len(gates)) - 1, -1):
        gate = gates[i]
        inverse = np.conj(np.swapaxes(matrices[i], -1, -2))
        apply_gate(psi, inverse, gate)
        if i in differentiated:
            derivatives = gate.kind.derivatives(_angles(gate, columns))
            for p, d in zip(gate.params, derivatives):
                if p.is_constant:
                    continue
                s = _inner(lam, psi, d, gate).real
                for name, c in p.coeffs.items():
                    grad[:, index[name]] += 2 * c * s
        apply_gate(lam, inverse, gate)
    return energy, grad
