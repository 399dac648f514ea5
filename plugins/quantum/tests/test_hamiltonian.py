"""Hamiltonians: the text form, building from terms and QubitOperator algebra, Hermiticity,
and expectation values against dense matrices built independently with np.kron."""

import functools

import numpy as np
import pytest

from mskernel_quantum.api import Hamiltonian, QuantumError, QubitOperator, Simulator

PAULI = {"I": np.eye(2), "X": np.array([[0, 1], [1, 0]]), "Y": np.array([[0, -1j], [1j, 0]]),
         "Z": np.diag([1, -1])}


def dense(hamiltonian: Hamiltonian, n: int) -> np.ndarray:
    """sum_t c_t (x)_q P_q with qubit n-1 the leftmost factor (qubit 0 least significant)."""
    total = np.zeros((2 ** n, 2 ** n), complex)
    for term in hamiltonian.terms:
        ops = dict(term.pauli)
        factors = [PAULI[ops.get(q, "I")] for q in reversed(range(n))]
        total += term.coeff * functools.reduce(np.kron, factors)
    return total


@pytest.mark.parametrize("text", ["0.5 Z0 Z1 + 0.3 X2", "-1.5 Y0 - 2 + X1 Z3", "Z0Z1",
                                  "1e-3 X0 + 2*Y1", "0"])
def test_text_form_reads_back(text):
    h = Hamiltonian(text)
    assert Hamiltonian(str(h)) == h


def test_three_ways_to_build_the_same_hamiltonian():
    text = Hamiltonian("0.5 Z0 Z1 + 0.3 X2")
    terms = Hamiltonian([(0.5, "Z0 Z1"), (0.3, "X2")])
    algebra = Hamiltonian(QubitOperator("Z0 Z1", 0.5) + QubitOperator("X2", 0.3))
    assert text == terms == algebra
    assert text.n_qubits == 3
    assert str(2 * text + Hamiltonian("X2")) == "1 Z0 Z1 + 1.6 X2"


def test_qubit_operator_products_follow_the_pauli_algebra():
    assert QubitOperator("X0") * QubitOperator("Y0") == QubitOperator("Z0", 1j)
    assert QubitOperator("Z1 X0") * QubitOperator("X0") == QubitOperator("Z1")
    with pytest.raises(QuantumError, match="not Hermitian: term 'Z0' has coefficient 1j"):
        Hamiltonian(QubitOperator("X0") * QubitOperator("Y0"))
    assert Hamiltonian(1j * QubitOperator("X0") * QubitOperator("Y0")) == Hamiltonian("-1 Z0")


@pytest.mark.parametrize("text,message", [
    ("0.5 Q1", "at column 5"), ("Z0 Z0", "names a qubit twice"), ("0.5 Z0 0.3", "column 8"),
    ("", "at least one term"),
])
def test_bad_text_is_refused(text, message):
    with pytest.raises(QuantumError, match=message):
        Hamiltonian(text)


@pytest.mark.parametrize("method", ["statevector", "density_matrix"])
def test_expectation_matches_dense_matrices(backend, method, rng):
    n = 4
    h = Hamiltonian("0.7 X0 Y1 Z3 - 0.2 Y2 + 1.1 Z0 Z1 + 0.4 X3 X2 - 0.5")
    psi = rng.normal(size=2 ** n) + 1j * rng.normal(size=2 ** n)
    psi /= np.linalg.norm(psi)
    sim = Simulator(n, backend=backend, method=method)
    sim.set_qs(psi)
    assert sim.get_expectation(h) == pytest.approx(np.vdot(psi, dense(h, n) @ psi).real,
                                                   abs=1e-12)
