"""The NumPy reference kernels: the specification the native kernels are tested against.

A kernel set is an object with the six methods below; :class:`NumpyKernels` and
:class:`~mskernel_quantum.native_kernels.NativeKernels` are interchangeable.  States are 1-D
complex arrays of length ``2^n`` with qubit 0 the least significant bit of the index; a gate
matrix's index bit ``j`` is ``targets[j]``; a matrix acts where every control qubit is 1.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .fusion import Block

Qubits = Sequence[int]


def _view(state: np.ndarray, controls: Qubits) -> tuple[np.ndarray, int]:
    """The state as an n-axis tensor restricted to the controls being 1 (a writable view),
    and its qubit count.  Axis ``n - 1 - q`` of the full tensor is qubit ``q``."""
    n = state.size.bit_length() - 1
    index: list = [slice(None)] * n
    for c in controls:
        index[n - 1 - c] = 1
    return state.reshape((2,) * n)[tuple(index)], n


def _axes(targets: Qubits, controls: Qubits, n: int) -> list[int]:
    """Axes of the control-restricted view holding targets[k-1], ..., targets[0] (the row
    order of a reshaped gate matrix)."""
    removed = sorted(n - 1 - c for c in controls)
    def axis(q: int) -> int:
        full = n - 1 - q
        return full - sum(r < full for r in removed)
    return [axis(q) for q in reversed(targets)]


def _matvec(matrix: np.ndarray, view: np.ndarray, axes: list[int]) -> np.ndarray:
    """Apply ``matrix`` to the ``axes`` of ``view``; the result has view's axis order."""
    k = len(axes)
    m = np.asarray(matrix, dtype=view.dtype).reshape((2,) * (2 * k))
    out = np.tensordot(m, view, axes=(list(range(k, 2 * k)), axes))
    return np.moveaxis(out, list(range(k)), axes)


def signs(size: int, zmask: int) -> np.ndarray:
    """(-1)^popcount(j & zmask) for j in range(size)."""
    j = np.arange(size, dtype=np.uint64)
    return 1 - 2 * (np.bitwise_count(j & np.uint64(zmask)) & 1).astype(np.int8)


class NumpyKernels:
    """State-vector kernels in NumPy (single-threaded; any qubit count NumPy can reshape)."""

    name = "numpy"

    def apply_matrix(self, state: np.ndarray, matrix: np.ndarray, targets: Qubits,
                     controls: Qubits) -> None:
        """state <- M state (in place)."""
        view, n = _view(state, controls)
        view[...] = _matvec(matrix, view, _axes(targets, controls, n))

    def apply_blocks(self, state: np.ndarray, blocks: Sequence[Block]) -> None:
        """state <- B_m ... B_1 state for fused blocks (:mod:`.fusion`), in order."""
        for block in blocks:
            self.apply_matrix(state, block.matrix, block.targets, block.controls)

    def inner_matrix(self, bra: np.ndarray, ket: np.ndarray, matrix: np.ndarray,
                     targets: Qubits, controls: Qubits) -> complex:
        """<bra| M |ket>, M acting as 0 where a control is 0."""
        kv, n = _view(ket, controls)
        bv, _ = _view(bra, controls)
        return complex(np.vdot(bv, _matvec(matrix, kv, _axes(targets, controls, n))))

    def adjoint_step(self, psi: np.ndarray, lams: Sequence[np.ndarray], inverse: np.ndarray,
                     derivatives: np.ndarray, targets: Qubits,
                     controls: Qubits) -> np.ndarray:
        """psi <- U^dag psi;  sums[h, q] = <lams[h]| dU_q |psi>;  lams[h] <- U^dag lams[h]."""
        self.apply_matrix(psi, inverse, targets, controls)
        sums = np.array([[self.inner_matrix(lam, psi, d, targets, controls)
                          for d in derivatives] for lam in lams],
                        dtype=np.complex128).reshape(len(lams), len(derivatives))
        for lam in lams:
            self.apply_matrix(lam, inverse, targets, controls)
        return sums

    def pauli_expectation(self, state: np.ndarray, xmask: int, zmasks: Sequence[int],
                          coeffs: Sequence[complex]) -> complex:
        """sum_t c_t <state| P_t |state> for Pauli strings sharing the X mask."""
        j = np.arange(state.size)
        weight = sum(c * signs(state.size, z) for z, c in zip(zmasks, coeffs))
        return complex(np.sum(np.conj(state[j ^ xmask]) * state * weight))

    def apply_pauli_sum(self, state: np.ndarray, out: np.ndarray, xmasks: Sequence[int],
                        zmasks: Sequence[int], coeffs: Sequence[complex]) -> None:
        """out <- sum_t c_t P_t state."""
        k = np.arange(state.size)
        out[...] = 0
        for x, z, c in zip(xmasks, zmasks, coeffs):
            out += (c * signs(state.size, z)[k ^ x] * state[k ^ x]).astype(out.dtype)
