"""The native (C++/OpenMP) kernels, with the interface of
:class:`~mskernel_quantum.reference_kernels.NumpyKernels`.

Threads: ``NativeKernels(threads)`` uses that many; by default the ``MSKERNEL_NUM_THREADS``
environment variable (read at each call) or else the CPUs this process may run on.  OpenMP's
idle threads sleep instead of spinning (``OMP_WAIT_POLICY=PASSIVE``, set by the package
before the OpenMP runtime loads unless the user set it).

Instruction set: the kernels are built for several (``_native.isas()``: baseline, AVX2/FMA,
AVX-512) and the best this CPU runs is used; ``MSKERNEL_QUANTUM_ISA=<name>`` at import time
forces another (for tests and benchmarks).
"""

from __future__ import annotations

import os
from typing import Optional, Sequence

import numpy as np

from .errors import QuantumError
from .fusion import Block

THREADS_ENV = "MSKERNEL_NUM_THREADS"
ISA_ENV = "MSKERNEL_QUANTUM_ISA"  # read by _native when it loads

from . import _native  # the package set the OpenMP wait policy before this loads

Qubits = Sequence[int]


def default_threads() -> int:
    raw = os.environ.get(THREADS_ENV, "").strip()
    if raw:
        try:
            value = int(raw)
        except ValueError:
            raise QuantumError(f"{THREADS_ENV}={raw!r} is not an integer") from None
        if value < 1:
            raise QuantumError(f"{THREADS_ENV} must be at least 1, got {value}")
        return value
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)


def _matrix(m: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(m, dtype=np.complex128)


class NativeKernels:
    """The C++ kernels; states must be C-contiguous complex64 or complex128 vectors."""

    name = "native"
    openmp: bool = _native.openmp

    def __init__(self, threads: Optional[int] = None) -> None:
        if threads is not None and threads < 1:
            raise QuantumError(f"threads must be at least 1, got {threads}")
        self._threads = threads

    @property
    def threads(self) -> int:
        return self._threads or default_threads()

    def apply_matrix(self, state: np.ndarray, matrix: np.ndarray, targets: Qubits,
                     controls: Qubits) -> None:
        _native.apply_matrix(state, _matrix(matrix), list(targets), list(controls),
                             self.threads)

    def apply_blocks(self, state: np.ndarray, blocks: Sequence[Block]) -> None:
        """state <- B_m ... B_1 state: runs of blocks on one or two targets without controls
        in one cache-blocked call (a tile of the state takes every gate of a run while it is
        in cache), the others one by one."""
        run: list[Block] = []
        for block in [*blocks, None]:
            if block is not None and not block.controls and len(block.targets) <= 2:
                run.append(block)
                continue
            if run:
                _native.apply_run(state, [_matrix(b.matrix) for b in run],
                                  [list(b.targets) for b in run], self.threads)
                run = []
            if block is not None:
                self.apply_matrix(state, block.matrix, block.targets, block.controls)

    def inner_matrix(self, bra: np.ndarray, ket: np.ndarray, matrix: np.ndarray,
                     targets: Qubits, controls: Qubits) -> complex:
        return _native.inner_matrix(bra, ket, _matrix(matrix), list(targets), list(controls),
                                    self.threads)

    def adjoint_step(self, psi: np.ndarray, lams: Sequence[np.ndarray], inverse: np.ndarray,
                     derivatives: np.ndarray, targets: Qubits,
                     controls: Qubits) -> np.ndarray:
        d = 1 << len(targets)
        stack = _matrix(derivatives).reshape(-1, d, d)
        return _native.adjoint_step(psi, list(lams), _matrix(inverse), stack, list(targets),
                                    list(controls), self.threads)

    def pauli_expectation(self, state: np.ndarray, xmask: int, zmasks: Sequence[int],
                          coeffs: Sequence[complex]) -> complex:
        return _native.pauli_expectation(state, int(xmask), [int(z) for z in zmasks],
                                         [complex(c) for c in coeffs], self.threads)

    def apply_pauli_sum(self, state: np.ndarray, out: np.ndarray, xmasks: Sequence[int],
                        zmasks: Sequence[int], coeffs: Sequence[complex]) -> None:
        _native.apply_pauli_sum(state, out, [int(x) for x in xmasks], [int(z) for z in zmasks],
                                [complex(c) for c in coeffs], self.threads)
