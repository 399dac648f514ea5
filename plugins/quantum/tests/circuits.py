"""Random circuits for the tests, and their translation to Qiskit (the independent oracle)."""

from __future__ import annotations

import numpy as np
from qiskit import QuantumCircuit
from qiskit.circuit import library as qlib
from qiskit.circuit.library import UnitaryGate
from qiskit.quantum_info import SparsePauliOp, Statevector

from mskernel_quantum.api import (
    CNOT, CZ, H, I, ISWAP, RX, RY, RZ, S, SWAP, SX, T, U3, Circuit, FixedGate, Hamiltonian,
    ParameterizedGate, PhaseShift, Rxx, Ryy, Rzz, Toffoli, UnivMathGate, X, Y, Z,
)

FIXED_1Q = [I, X, Y, Z, H, S, T, SX, S.hermitian(), T.hermitian(), SX.hermitian()]
ROTATIONS_1Q = [RX, RY, RZ, PhaseShift]
ROTATIONS_2Q = [Rxx, Ryy, Rzz]


def random_unitary(rng: np.random.Generator, dim: int) -> np.ndarray:
    z = rng.normal(size=(dim, dim)) + 1j * rng.normal(size=(dim, dim))
    q, r = np.linalg.qr(z)
    return q * (np.diag(r) / np.abs(np.diag(r)))


def random_expression(rng: np.random.Generator, names: list[str]) -> str:
    """A number, or a linear expression of one or two names such as '1.3*a - 0.7*b + 0.2'."""
    if rng.random() < 0.25:
        return str(round(rng.uniform(-3, 3), 6))
    chosen = rng.choice(names, size=rng.integers(1, 3), replace=False)
    terms = " + ".join(f"{rng.uniform(-2, 2):.4f}*{n}" for n in chosen)
    return f"{terms} + {rng.uniform(-1, 1):.4f}"


def random_circuit(rng: np.random.Generator, n_qubits: int, n_gates: int,
                   names: tuple[str, ...] = ("a", "b", "c"), max_controls: int = 2,
                   custom_targets: int = 2) -> Circuit:
    """Every kind of unitary gate, random targets, up to ``max_controls`` controls, custom
    unitaries on up to ``custom_targets`` qubits."""
    names = list(names)
    circuit = Circuit()
    while len(circuit) < n_gates:
        gate = _random_gate(rng, names)
        too_big = isinstance(gate, UnivMathGate) and gate.n_targets > custom_targets
        if gate.n_targets > n_qubits or too_big:
            continue
        free = n_qubits - gate.n_targets
        n_ctrl = int(rng.integers(0, min(max_controls, free) + 1)) if free > 0 else 0
        qubits = rng.choice(n_qubits, size=gate.n_targets + n_ctrl, replace=False).tolist()
        circuit += gate.on(qubits[:gate.n_targets], qubits[gate.n_targets:] or None)
    return circuit


def _random_gate(rng: np.random.Generator, names: list[str]):
    kind = rng.integers(7)
    if kind == 0:
        return FIXED_1Q[rng.integers(len(FIXED_1Q))]
    if kind == 1:
        return ROTATIONS_1Q[rng.integers(len(ROTATIONS_1Q))](random_expression(rng, names))
    if kind == 2:
        return U3(*(random_expression(rng, names) for _ in range(3)))
    if kind == 3:
        return ROTATIONS_2Q[rng.integers(len(ROTATIONS_2Q))](random_expression(rng, names))
    if kind == 4:
        return [SWAP, ISWAP, ISWAP.hermitian()][rng.integers(3)]
    if kind == 5:
        k = 1 + int(rng.random() < 0.3)
        return UnivMathGate(f"U{k}", random_unitary(rng, 2 ** k))
    return X


def named_gate_circuit(n_qubits: int = 3) -> Circuit:
    """One of each named gate form: CNOT, CZ, Toffoli and friends."""
    assert n_qubits >= 3
    return Circuit([H.on(0), CNOT.on(1, 0), CZ.on(2, 1), Toffoli.on(2, [0, 1]), RX(0.3).on(1)])


def random_hamiltonian(rng: np.random.Generator, n_qubits: int, n_terms: int = 4) -> Hamiltonian:
    terms = []
    for _ in range(n_terms):
        k = int(rng.integers(1, min(3, n_qubits) + 1))
        qubits = rng.choice(n_qubits, size=k, replace=False)
        word = " ".join(f"{'XYZ'[rng.integers(3)]}{q}" for q in qubits)
        terms.append((round(float(rng.uniform(-1, 1)), 6), word))
    return Hamiltonian(terms + [(0.25, "")])


# ---------------------------------------------------------------------------------------------
# translation to Qiskit
# ---------------------------------------------------------------------------------------------

_QISKIT_FIXED = {"I": qlib.IGate, "X": qlib.XGate, "Y": qlib.YGate, "Z": qlib.ZGate,
                 "H": qlib.HGate, "S": qlib.SGate, "T": qlib.TGate, "SX": qlib.SXGate,
                 "SWAP": qlib.SwapGate, "ISWAP": qlib.iSwapGate}
_QISKIT_ROTATIONS = {"RX": qlib.RXGate, "RY": qlib.RYGate, "RZ": qlib.RZGate,
                     "PhaseShift": qlib.PhaseGate, "U3": qlib.UGate, "Rxx": qlib.RXXGate,
                     "Ryy": qlib.RYYGate, "Rzz": qlib.RZZGate}


def to_qiskit(circuit: Circuit, values: dict[str, float], n_qubits: int) -> QuantumCircuit:
    """The same circuit built from Qiskit's own gate classes (no QASM involved)."""
    qc = QuantumCircuit(n_qubits)
    for gate in circuit:
        if isinstance(gate, FixedGate):
            op = _QISKIT_FIXED[gate.name]()
            op = op.inverse() if gate.daggered else op
        elif isinstance(gate, ParameterizedGate):
            op = _QISKIT_ROTATIONS[gate.name](*gate.angles(values))
        else:
            op = UnitaryGate(gate.matrix())
        if gate.ctrl_qubits:
            op = op.control(len(gate.ctrl_qubits), annotated=False)
        qc.append(op, list(gate.ctrl_qubits) + list(gate.obj_qubits))
    return qc


def qiskit_state(circuit: Circuit, values: dict[str, float], n_qubits: int) -> np.ndarray:
    return np.asarray(Statevector(to_qiskit(circuit, values, n_qubits)).data)


def qiskit_observable(hamiltonian: Hamiltonian, n_qubits: int) -> SparsePauliOp:
    terms = [("".join(p for _, p in t.pauli), [q for q, _ in t.pauli], t.coeff)
             for t in hamiltonian.terms]
    return SparsePauliOp.from_sparse_list(terms, num_qubits=n_qubits)


def qiskit_expectation(circuit: Circuit, values: dict[str, float], hamiltonian: Hamiltonian,
                       n_qubits: int) -> float:
    state = Statevector(to_qiskit(circuit, values, n_qubits))
    return float(state.expectation_value(qiskit_observable(hamiltonian, n_qubits)).real)


def same_up_to_phase(a: np.ndarray, b: np.ndarray, atol: float) -> bool:
    """|<a|b>| = |a| |b| (equal states up to a global phase)."""
    overlap = abs(np.vdot(a, b))
    return abs(overlap - np.linalg.norm(a) * np.linalg.norm(b)) < atol
