"""The simulator users drive, in MindQuantum's style::

    sim = Simulator(3)                          # C++ kernels, complex128, a state vector
    sim.apply_circuit(circuit, {"theta": 0.3})
    sim.get_qs()                                # amplitudes; qubit 0 = least significant bit
    sim.get_expectation(Hamiltonian("Z0 Z1"))
    grad_ops = sim.get_expectation_with_grad(Hamiltonian("Z0"), ansatz)
    energy, gradient = grad_ops(np.array([0.1, 0.2]))   # ordered as ansatz.params_name
    sim.sampling(circuit, shots=1000, seed=7).counts()

Choices: ``backend`` ``"native"`` (C++/OpenMP) or ``"numpy"`` (the reference kernels);
``dtype`` ``complex128`` or ``complex64``; ``method`` ``"statevector"`` or
``"density_matrix"`` (exact noise channels; ``get_qs`` then returns the density matrix).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import numpy as np
from mskernel_sdk import dtype as to_dtype

from .circuit import Circuit
from .density import DensityMatrix
from .errors import ParameterError, QuantumError
from .fusion import fuse
from .gates import Gate, Measure
from .gradients import adjoint_gradient, parameter_shift_gradient
from .hamiltonian import Hamiltonian
from .reference_kernels import NumpyKernels
from .statevector import StateVector

ParamsLike = Union[None, Mapping[str, float], Sequence[float], np.ndarray]
METHODS = {"statevector": StateVector, "density_matrix": DensityMatrix}


def make_kernels(backend: str, threads: Optional[int] = None):
    """The kernel set named ``backend`` (``"native"`` or ``"numpy"``)."""
    if backend == "numpy":
        return NumpyKernels()
    if backend == "native":
        from .native_kernels import NativeKernels

        return NativeKernels(threads)
    raise QuantumError(f"unknown simulator backend {backend!r}; choose 'native' or 'numpy'")


def resolve_values(circuit: Circuit, params: ParamsLike) -> dict[str, float]:
    """Parameter values by name from a mapping, or from a vector ordered as
    ``circuit.params_name``; every parameter of the circuit needs a value."""
    names = circuit.params_name
    if params is None:
        values: dict[str, float] = {}
    elif isinstance(params, Mapping):
        values = {str(k): float(v) for k, v in params.items()}
    else:
        vector = np.asarray(params, dtype=np.float64)
        if vector.shape != (len(names),):
            raise ParameterError(f"the circuit has {len(names)} parameter(s) "
                                 f"({', '.join(names) or 'none'}); got values of shape "
                                 f"{vector.shape}")
        values = dict(zip(names, vector.tolist()))
    missing = [n for n in names if n not in values]
    if missing:
        raise ParameterError(f"no value for circuit parameter(s) {', '.join(missing)}; pass "
                             f"params as {{name: value}} or a vector ordered as params_name")
    return values


@dataclass(frozen=True)
class SamplingResult:
    """Measurement samples: ``samples[s, i]`` is the bit measured for ``keys[i]`` (on
    ``qubits[i]``) in shot ``s``."""

    keys: tuple[str, ...]
    qubits: tuple[int, ...]
    samples: np.ndarray

    @property
    def shots(self) -> int:
        return int(self.samples.shape[0])

    def counts(self) -> dict[str, int]:
        """Bit string → number of shots; the string's last character is ``keys[0]`` (the
        first measurement), as MindQuantum and Qiskit print them."""
        strings = ["".join(map(str, row[::-1])) for row in self.samples]
        keys, counts = np.unique(strings, return_counts=True)
        return {str(k): int(c) for k, c in zip(keys, counts)}


class Simulator:
    """A state (vector or density matrix) of ``n_qubits`` qubits and the kernels evolving it.
    ``seed`` seeds the generator used by measurements and noise trajectories."""

    def __init__(self, n_qubits: int, *, backend: str = "native",
                 dtype: Any = "complex128", method: str = "statevector",
                 seed: Optional[int] = None, threads: Optional[int] = None) -> None:
        if not isinstance(n_qubits, int) or n_qubits < 0:
            raise QuantumError(f"n_qubits must be a non-negative integer, got {n_qubits!r}")
        dt = to_dtype(dtype)
        if not dt.is_complex:
            raise QuantumError(f"a simulator's dtype is complex64 or complex128, got {dt}")
        if method not in METHODS:
            raise QuantumError(f"unknown method {method!r}; choose from {', '.join(METHODS)}")
        self.backend, self.method = backend, method
        self.kernels = make_kernels(backend, threads)
        self._state = METHODS[method](n_qubits, dt.storage, self.kernels)
        self._rng = np.random.default_rng(seed)

    @property
    def n_qubits(self) -> int:
        return self._state.n_qubits

    @property
    def dtype(self) -> np.dtype:
        return self._state.dtype

    def __repr__(self) -> str:
        return (f"Simulator({self.n_qubits}, backend={self.backend!r}, "
                f"dtype={self.dtype.name!r}, method={self.method!r})")

    # -- state -------------------------------------------------------------------------------

    def reset(self) -> None:
        """Back to |0...0>."""
        self._state = type(self._state)(self.n_qubits, self.dtype, self.kernels)

    def get_qs(self) -> np.ndarray:
        """A copy of the amplitudes (or of the density matrix)."""
        return self._state.get()

    def set_qs(self, values: np.ndarray) -> None:
        """Replace the state (normalised); a density-matrix simulator also takes a vector."""
        self._state.set(values)

    # -- evolution ---------------------------------------------------------------------------

    def _check_fits(self, circuit: Circuit) -> None:
        if circuit.n_qubits > self.n_qubits:
            raise QuantumError(f"the circuit acts on {circuit.n_qubits} qubits but the "
                               f"simulator has {self.n_qubits}")

    def _run(self, state, circuit: Circuit, values: Mapping[str, float],
             rng: np.random.Generator, outcomes: dict[str, int]) -> None:
        """Evolve ``state`` through ``circuit``: runs of unitary gates as fused blocks."""
        unitary: list[Gate] = []
        for gate in [*circuit, None]:
            if gate is not None and gate.unitary:
                unitary.append(gate)
                continue
            state.apply_blocks(fuse(unitary, values))
            unitary = []
            if isinstance(gate, Measure):
                outcomes[gate.key] = _measure(state, gate.obj_qubits[0], rng)
            elif gate is not None:
                state.apply_channel(gate.kraus(), gate.obj_qubits[0], rng)  # type: ignore[attr-defined]

    def apply_gate(self, gate: Gate, params: ParamsLike = None) -> Optional[int]:
        """Apply one placed gate; a measurement returns its outcome."""
        outcomes = self.apply_circuit(Circuit(gate), params)
        return next(iter(outcomes.values())) if outcomes else None

    def apply_circuit(self, circuit: Circuit,
                      params: ParamsLike = None) -> Optional[dict[str, int]]:
        """Evolve the state through ``circuit``.  Measurements collapse the state (their
        outcomes are returned by key); noise channels act exactly on a density matrix and
        as a sampled trajectory on a state vector."""
        self._check_fits(circuit)
        values = resolve_values(circuit, params)
        outcomes: dict[str, int] = {}
        self._run(self._state, circuit, values, self._rng, outcomes)
        return outcomes or None

    # -- measurement -------------------------------------------------------------------------

    def sampling(self, circuit: Circuit, shots: int = 1, seed: Optional[int] = None,
                 params: ParamsLike = None) -> SamplingResult:
        """Run ``circuit`` from the current state ``shots`` times and measure; the state is
        not changed.  The circuit's ``Measure`` gates choose the qubits (they must come after
        every gate on their qubit); without any, every qubit is measured."""
        if shots < 1:
            raise QuantumError(f"shots must be at least 1, got {shots}")
        self._check_fits(circuit)
        values = resolve_values(circuit, params)
        body, keys, qubits = _split_measurements(circuit, self.n_qubits)
        rng = np.random.default_rng(seed)
        if body.noisy and self.method == "statevector":
            indices = np.empty(shots, dtype=np.int64)
            for shot in range(shots):
                state = self._evolved(self._state, body, values, rng)
                indices[shot] = _draw(state.probabilities(), 1, rng)[0]
        else:
            state = self._evolved(self._state, body, values, rng)
            indices = _draw(state.probabilities(), shots, rng)
        bits = (indices[:, None] >> np.array(qubits, dtype=np.int64)[None, :]) & 1
        return SamplingResult(keys, qubits, bits.astype(np.uint8))

    def _evolved(self, start, circuit: Circuit, values: Mapping[str, float],
                  rng: np.random.Generator):
        """A copy of the state ``start`` after ``circuit`` (measurements not recorded)."""
        state = start.copy()
        self._run(state, circuit, values, rng, {})
        return state

    # -- observables -------------------------------------------------------------------------

    def get_expectation(self, hamiltonian: Hamiltonian) -> float:
        """<H> in the current state."""
        self._check_fits_hamiltonian(hamiltonian)
        return self._state.expectation(hamiltonian)

    def _check_fits_hamiltonian(self, hamiltonian: Hamiltonian) -> None:
        if hamiltonian.n_qubits > self.n_qubits:
            raise QuantumError(f"the Hamiltonian acts on {hamiltonian.n_qubits} qubits but the "
                               f"simulator has {self.n_qubits}")

    def get_expectation_with_grad(self, hamiltonian: Union[Hamiltonian, Sequence[Hamiltonian]],
                                  circuit: Circuit, *, grad_method: Optional[str] = None
                                  ) -> Callable[[ParamsLike], tuple[Any, np.ndarray]]:
        """A function ``f(params) -> (expectation, gradient)`` for ``circuit`` applied to the
        current state (which ``f`` does not change); ``params`` is ordered as
        ``circuit.params_name`` (or a mapping).  One Hamiltonian gives a float and a vector;
        a list gives arrays of shape ``(n_hams,)`` and ``(n_hams, n_params)``.

        ``grad_method``: ``"adjoint"`` (the default for state vectors) or
        ``"parameter_shift"`` (the default, and the only choice, for density matrices).
        """
        single = isinstance(hamiltonian, Hamiltonian)
        hams = [hamiltonian] if single else list(hamiltonian)
        for ham in hams:
            self._check_fits_hamiltonian(ham)
        self._check_fits(circuit)
        method = grad_method or ("adjoint" if self.method == "statevector" else
                                 "parameter_shift")
        if method not in ("adjoint", "parameter_shift"):
            raise QuantumError(f"unknown grad_method {method!r}; choose 'adjoint' or "
                               f"'parameter_shift'")
        if method == "adjoint" and self.method != "statevector":
            raise QuantumError("the adjoint method needs a state vector; use "
                               "grad_method='parameter_shift' with a density matrix")
        if circuit.noisy and self.method == "statevector":
            raise QuantumError("gradients of a noisy circuit need exact channels: use "
                               "Simulator(..., method='density_matrix')")
        if circuit.has_measure:
            raise QuantumError("an expectation circuit cannot hold measurements")
        start = self._state.copy()

        def evaluate(params: ParamsLike) -> tuple[Any, np.ndarray]:
            values = resolve_values(circuit, params)
            if method == "adjoint":  # every Hamiltonian in one backward sweep
                energies, grads = adjoint_gradient(self.kernels, start.data, circuit, hams,
                                                   values)
            else:
                results = [self._parameter_shift(start, circuit, ham, values) for ham in hams]
                energies = np.array([e for e, _ in results])
                grads = np.stack([g for _, g in results])
            if single:
                return float(energies[0]), grads[0]
            return energies, grads

        return evaluate

    def _parameter_shift(self, start, circuit: Circuit, hamiltonian: Hamiltonian,
                         values: Mapping[str, float]) -> tuple[float, np.ndarray]:
        def expectation_of(c: Circuit) -> float:
            return self._evolved(start, c, values, self._rng).expectation(hamiltonian)

        energy = expectation_of(circuit)
        return energy, parameter_shift_gradient(expectation_of, circuit)


def _measure(state, qubit: int, rng: np.random.Generator) -> int:
    probabilities = state.probabilities()
    p_one = float(probabilities.reshape(-1, 2, 1 << qubit)[:, 1, :].sum())
    bit = int(rng.random() < p_one)
    state.project(qubit, bit, p_one if bit else 1.0 - p_one)
    return bit


def _draw(probabilities: np.ndarray, shots: int, rng: np.random.Generator) -> np.ndarray:
    return rng.choice(probabilities.size, size=shots, p=probabilities / probabilities.sum())


def _split_measurements(circuit: Circuit,
                        n_qubits: int) -> tuple[Circuit, tuple[str, ...], tuple[int, ...]]:
    """The circuit without its measurements, and the measured keys and qubits in order."""
    body, keys, qubits = Circuit(), [], []
    for gate in circuit:
        if isinstance(gate, Measure):
            q = gate.obj_qubits[0]
            if q in qubits:
                raise QuantumError(f"qubit {q} is measured twice; sampling needs terminal "
                                   f"measurements")
            keys.append(gate.key)
            qubits.append(q)
        elif set(gate.qubits) & set(qubits):
            raise QuantumError(f"{gate} acts on a measured qubit; sampling needs terminal "
                               f"measurements")
        else:
            body += gate
    if not qubits:
        keys, qubits = [f"q{q}" for q in range(n_qubits)], list(range(n_qubits))
    return body, tuple(keys), tuple(qubits)


def circuit_unitary(circuit: Circuit, values: Optional[Mapping[str, float]] = None) -> np.ndarray:
    """The ``2^n x 2^n`` unitary of a unitary circuit on its ``n_qubits`` qubits.

    The identity, stored column by column, is a state of ``2n`` qubits whose low ``n`` index
    the rows; applying the gates to those qubits turns column ``c`` into ``U e_c``.
    """
    n = circuit.n_qubits
    values = resolve_values(circuit, values)
    state = StateVector(2 * n, np.complex128, make_kernels("native"))
    state.data[:: (1 << n) + 1] = 1
    state.data[0] = 1
    for gate in circuit:
        if not gate.unitary:
            raise QuantumError(f"{gate} has no unitary matrix")
        state.apply_matrix(gate.matrix(values), gate.obj_qubits, gate.ctrl_qubits)
    return state.data.reshape(1 << n, 1 << n).T.copy()
