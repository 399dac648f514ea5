"""A pure state held as a vector of ``2^n`` amplitudes, evolved by a kernel set."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .errors import QuantumError
from .fusion import Block
from .hamiltonian import Hamiltonian


class StateVector:
    """Amplitudes ``data[j]`` of basis state ``|j>`` (qubit 0 the least significant bit)."""

    def __init__(self, n_qubits: int, dtype: np.dtype, kernels) -> None:
        self.n_qubits, self.dtype, self.kernels = n_qubits, np.dtype(dtype), kernels
        self.data = np.zeros(1 << n_qubits, dtype=self.dtype)
        self.data[0] = 1

    def copy(self) -> "StateVector":
        clone = StateVector.__new__(StateVector)
        clone.n_qubits, clone.dtype, clone.kernels = self.n_qubits, self.dtype, self.kernels
        clone.data = self.data.copy()
        return clone

    def get(self) -> np.ndarray:
        return self.data.copy()

    def set(self, values: np.ndarray) -> None:
        values = np.asarray(values)
        if values.shape != self.data.shape:
            raise QuantumError(f"a state of {self.n_qubits} qubits has {self.data.size} "
                               f"amplitudes, got shape {values.shape}")
        norm = np.linalg.norm(values)
        if norm == 0:
            raise QuantumError("the zero vector is not a quantum state")
        self.data[...] = values / norm

    def apply_matrix(self, matrix: np.ndarray, targets: Sequence[int],
                     controls: Sequence[int]) -> None:
        self.kernels.apply_matrix(self.data, matrix, targets, controls)

    def apply_blocks(self, blocks: Sequence[Block]) -> None:
        self.kernels.apply_blocks(self.data, blocks)

    def apply_channel(self, kraus: list[np.ndarray], qubit: int,
                      rng: np.random.Generator) -> None:
        """One quantum trajectory step: pick K_i with probability ||K_i psi||^2."""
        weights = np.array([self.kernels.inner_matrix(self.data, self.data, k.conj().T @ k,
                                                      [qubit], []).real for k in kraus])
        weights = np.clip(weights, 0, None)
        i = rng.choice(len(kraus), p=weights / weights.sum())
        self.apply_matrix(kraus[i] / np.sqrt(weights[i]), [qubit], [])

    def probabilities(self) -> np.ndarray:
        return np.square(np.abs(self.data), dtype=np.float64)

    def project(self, qubit: int, bit: int, probability: float) -> None:
        projector = np.diag([1.0 - bit, float(bit)]) / np.sqrt(probability)
        self.apply_matrix(projector, [qubit], [])

    def expectation(self, hamiltonian: Hamiltonian) -> float:
        return expectation(self.kernels, self.data, hamiltonian)


def expectation(kernels, state: np.ndarray, hamiltonian: Hamiltonian) -> float:
    """<state| H |state>, one sweep per group of terms sharing an X mask."""
    total = 0j
    for xmask, terms in hamiltonian.by_xmask().items():
        total += kernels.pauli_expectation(state, xmask, [t.zmask for t in terms],
                                           [t.phased_coeff for t in terms])
    return float(total.real)


def overlap(kernels, a: np.ndarray, b: np.ndarray) -> complex:
    """<a|b>, accumulated in double precision (the identity's inner product kernel)."""
    if a.size == 1:
        return complex(np.vdot(a.astype(np.complex128), b.astype(np.complex128)))
    return kernels.inner_matrix(a, b, np.eye(2), [0], [])


def apply_hamiltonian(kernels, state: np.ndarray, hamiltonian: Hamiltonian) -> np.ndarray:
    """H |state> as a new vector."""
    out = np.empty_like(state)
    terms = hamiltonian.terms
    kernels.apply_pauli_sum(state, out, [t.xmask for t in terms], [t.zmask for t in terms],
                            [t.phased_coeff for t in terms])
    return out
