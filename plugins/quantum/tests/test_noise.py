"""Noise channels: Kraus completeness, trace and positivity of density matrices, agreement
with Qiskit Aer's density-matrix simulator, and trajectories converging to the exact result."""

import numpy as np
import pytest
from qiskit import QuantumCircuit, transpile
from qiskit_aer import AerSimulator
from qiskit_aer.noise import amplitude_damping_error, depolarizing_error, pauli_error

from mskernel import complex128
from mskernel_sdk import assert_close
from mskernel_quantum.api import (
    AmplitudeDampingChannel, BitFlipChannel, Circuit, DepolarizingChannel, H, Hamiltonian,
    PauliChannel, PhaseFlipChannel, QuantumError, Simulator, X,
)

from circuits import random_circuit, to_qiskit


def _random_channel(rng):
    p = float(rng.uniform(0, 0.3))
    return [PauliChannel(p / 2, p / 3, p / 4), BitFlipChannel(p), PhaseFlipChannel(p),
            DepolarizingChannel(p), AmplitudeDampingChannel(p)][rng.integers(5)]


def _noisy_circuit(rng, n_qubits, n_gates):
    circuit = Circuit()
    for gate in random_circuit(rng, n_qubits, n_gates):
        circuit += gate
        if rng.random() < 0.5:
            circuit += _random_channel(rng).on(int(rng.integers(n_qubits)))
    return circuit


def _values(rng, circuit):
    return {n: float(v) for n, v in zip(circuit.params_name, rng.uniform(-2, 2, 3))}


@pytest.mark.parametrize("channel", [PauliChannel(0.1, 0.2, 0.3), BitFlipChannel(0.4),
                                     PhaseFlipChannel(1.0), DepolarizingChannel(4 / 3),
                                     AmplitudeDampingChannel(0.7)])
def test_kraus_operators_are_complete(channel):
    total = sum(k.conj().T @ k for k in channel.kraus())
    np.testing.assert_allclose(total, np.eye(2), atol=1e-15)


@pytest.mark.parametrize("make,args,rule", [
    (PauliChannel, (0.5, 0.4, 0.2), "px \\+ py \\+ pz <= 1"),
    (BitFlipChannel, (-0.1,), "0 <= p <= 1"),
    (DepolarizingChannel, (1.5,), "0 <= p <= 4/3"),
    (AmplitudeDampingChannel, (1.1,), "0 <= gamma <= 1"),
])
def test_channel_probabilities_are_checked(make, args, rule):
    with pytest.raises(QuantumError, match=rule):
        make(*args)


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_density_matrices_stay_valid_states(backend, dtype, rng):
    circuit = _noisy_circuit(rng, 5, 40)
    sim = Simulator(5, backend=backend, dtype=dtype, method="density_matrix")
    sim.apply_circuit(circuit, _values(rng, circuit))
    rho = sim.get_qs().astype(np.complex128)
    tol = 1e-5 if dtype == "complex64" else 1e-12
    assert np.trace(rho).real == pytest.approx(1.0, abs=tol)
    np.testing.assert_allclose(rho, rho.conj().T, atol=tol)
    assert np.linalg.eigvalsh(rho).min() > -tol


def _aer_error(channel):
    p = channel.probs
    if channel.name == "AmplitudeDampingChannel":
        return amplitude_damping_error(p[0])
    if channel.name == "DepolarizingChannel":
        return depolarizing_error(p[0], 1)
    px, py, pz = {"PauliChannel": p, "BitFlipChannel": (p[0], 0, 0),
                  "PhaseFlipChannel": (0, 0, p[0])}[channel.name]
    return pauli_error([("X", px), ("Y", py), ("Z", pz), ("I", 1 - px - py - pz)])


def test_density_matrix_matches_qiskit_aer(rng):
    n = 4
    circuit = _noisy_circuit(rng, n, 30)
    values = _values(rng, circuit)
    qc = QuantumCircuit(n)
    for gate in circuit:
        if gate.unitary:
            qc.compose(to_qiskit(Circuit([gate]), values, n), inplace=True)
        else:
            qc.append(_aer_error(gate), [gate.obj_qubits[0]])
    qc.save_density_matrix()
    aer = AerSimulator(method="density_matrix")
    expected = np.asarray(aer.run(transpile(qc, aer, optimization_level=0)).result()
                          .data()["density_matrix"])
    sim = Simulator(n, method="density_matrix")
    sim.apply_circuit(circuit, values)
    assert_close(sim.get_qs(), expected, complex128, atol=1e-12)


def test_amplitude_damping_and_depolarizing_exactly():
    sim = Simulator(2, method="density_matrix")
    sim.apply_circuit(Circuit([X.on(0), AmplitudeDampingChannel(0.3).on(0),
                               H.on(1), DepolarizingChannel(1.0).on(1)]))
    assert sim.get_expectation(Hamiltonian("Z0")) == pytest.approx(1 - 2 * 0.7, abs=1e-14)
    assert sim.get_expectation(Hamiltonian("X1")) == pytest.approx(0.0, abs=1e-14)
    np.testing.assert_allclose(sim.get_qs().diagonal().real, [0.15, 0.35, 0.15, 0.35],
                               atol=1e-14)


def test_trajectories_converge_to_the_density_matrix(rng):
    circuit = _noisy_circuit(rng, 3, 12)
    values = _values(rng, circuit)
    shots = 3000
    exact = Simulator(3, method="density_matrix").sampling(circuit, shots, seed=1,
                                                           params=values)
    dm = Simulator(3, method="density_matrix")
    dm.apply_circuit(circuit, values)
    probabilities = dm.get_qs().diagonal().real
    sampled = Simulator(3).sampling(circuit, shots, seed=2, params=values)
    for result in (exact, sampled):
        indices = result.samples @ (1 << np.arange(3))
        frequencies = np.bincount(indices, minlength=8) / shots
        sigma = np.sqrt(probabilities * (1 - probabilities) / shots)
        assert np.all(np.abs(frequencies - probabilities) <= 5 * sigma + 1e-9)


def test_noisy_gradients_by_parameter_shift_match_finite_differences(rng):
    circuit = _noisy_circuit(rng, 3, 15)
    hamiltonian = Hamiltonian("Z0 + 0.5 X1 Y2")
    params = rng.uniform(-1, 1, len(circuit.params_name))
    f = Simulator(3, method="density_matrix").get_expectation_with_grad(hamiltonian, circuit)
    _, grad = f(params)
    for i in range(params.size):
        e = np.zeros_like(params)
        e[i] = 1e-6
        assert grad[i] == pytest.approx((f(params + e)[0] - f(params - e)[0]) / 2e-6, abs=1e-7)
