"""A mixed state held as a density matrix, evolved with the state-vector kernels.

The ``2^n x 2^n`` matrix ``rho`` is stored column by column as a vector of ``4^n`` entries,
``data[r + 2^n c] = rho[r, c]``: a state of ``2n`` "qubits" whose low ``n`` are the row
index and high ``n`` the column index.  Then ``U rho U^dag`` is ``U`` on the row qubits and
``conj(U)`` on the column qubits, and a channel ``sum_i K_i rho K_i^dag`` is the
superoperator ``sum_i conj(K_i) (x) K_i`` on (row qubit, column qubit): two kernel calls.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .errors import QuantumError
from .fusion import Block
from .hamiltonian import Hamiltonian
from .reference_kernels import signs


class DensityMatrix:
    """The density matrix of ``n_qubits`` qubits (starts as ``|0...0><0...0|``)."""

    def __init__(self, n_qubits: int, dtype: np.dtype, kernels) -> None:
        self.n_qubits, self.dtype, self.kernels = n_qubits, np.dtype(dtype), kernels
        self.dim = 1 << n_qubits
        self.data = np.zeros(self.dim * self.dim, dtype=self.dtype)
        self.data[0] = 1

    def copy(self) -> "DensityMatrix":
        clone = DensityMatrix.__new__(DensityMatrix)
        clone.n_qubits, clone.dtype, clone.kernels = self.n_qubits, self.dtype, self.kernels
        clone.dim, clone.data = self.dim, self.data.copy()
        return clone

    def get(self) -> np.ndarray:
        return self.data.reshape(self.dim, self.dim).T.copy()

    def set(self, values: np.ndarray) -> None:
        """Set ``rho`` (a ``2^n x 2^n`` matrix, normalised to trace 1) or the pure state of a
        ``2^n`` vector."""
        values = np.asarray(values)
        if values.shape == (self.dim,):
            values = np.outer(values, values.conj())
        if values.shape != (self.dim, self.dim):
            raise QuantumError(f"a density matrix of {self.n_qubits} qubits is "
                               f"{self.dim}x{self.dim}, got shape {values.shape}")
        if not np.allclose(values, values.conj().T, atol=1e-8):
            raise QuantumError("a density matrix must be Hermitian")
        trace = np.trace(values).real
        if trace <= 0:
            raise QuantumError(f"a density matrix needs a positive trace, got {trace}")
        self.data[...] = (values / trace).T.reshape(-1)

    def _columns(self, qubits: Sequence[int]) -> list[int]:
        return [q + self.n_qubits for q in qubits]

    def apply_matrix(self, matrix: np.ndarray, targets: Sequence[int],
                     controls: Sequence[int]) -> None:
        self.kernels.apply_matrix(self.data, matrix, targets, controls)
        self.kernels.apply_matrix(self.data, np.conj(matrix), self._columns(targets),
                                  self._columns(controls))

    def apply_blocks(self, blocks: Sequence[Block]) -> None:
        for block in blocks:
            self.apply_matrix(block.matrix, block.targets, block.controls)

    def apply_channel(self, kraus: list[np.ndarray], qubit: int,
                      rng: np.random.Generator) -> None:
        superop = sum(np.kron(k.conj(), k) for k in kraus)
        self.kernels.apply_matrix(self.data, superop, [qubit, qubit + self.n_qubits], [])

    def probabilities(self) -> np.ndarray:
        return self.data[:: self.dim + 1].real.astype(np.float64)

    def project(self, qubit: int, bit: int, probability: float) -> None:
        projector = np.diag([1.0 - bit, float(bit)]) / np.sqrt(probability)
        self.apply_matrix(projector, [qubit], [])

    def expectation(self, hamiltonian: Hamiltonian) -> float:
        """Tr(rho H) = sum_t c_t sum_j phase_t(j ^ x_t) rho[j ^ x_t, j]."""
        j = np.arange(self.dim)
        total = 0j
        for term in hamiltonian.terms:
            k = j ^ term.xmask
            total += term.phased_coeff * np.sum(signs(self.dim, term.zmask)[k]
                                                * self.data[k + self.dim * j])
        return float(total.real)
