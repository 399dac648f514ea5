"""States, expectations and gradients against Qiskit (an independent simulator) on random
circuits of every gate kind, up to 12 qubits, with both kernel sets and both precisions."""

import numpy as np
import pytest
from qiskit import transpile
from qiskit_aer import AerSimulator

from mskernel import complex128, complex64
from mskernel_sdk import assert_close
from mskernel_quantum.api import Simulator

from circuits import (
    named_gate_circuit, qiskit_expectation, qiskit_state, random_circuit, random_hamiltonian,
    to_qiskit,
)

DTYPES = {"complex128": complex128, "complex64": complex64}


def _values(rng, names):
    return {n: float(v) for n, v in zip(names, rng.uniform(-np.pi, np.pi, len(names)))}


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("n_qubits,n_gates", [(1, 10), (3, 40), (6, 60), (12, 80)])
def test_state_vector_matches_qiskit(backend, dtype, n_qubits, n_gates, rng):
    circuit = random_circuit(rng, n_qubits, n_gates)
    values = _values(rng, circuit.params_name)
    sim = Simulator(n_qubits, backend=backend, dtype=dtype)
    sim.apply_circuit(circuit, values)
    assert sim.get_qs().dtype == np.dtype(dtype)
    assert_close(sim.get_qs(), qiskit_state(circuit, values, n_qubits), DTYPES[dtype],
                 atol=1e-5 if dtype == "complex64" else 1e-12)


def test_named_gates_match_qiskit(backend):
    circuit = named_gate_circuit()
    sim = Simulator(3, backend=backend)
    sim.apply_circuit(circuit)
    assert_close(sim.get_qs(), qiskit_state(circuit, {}, 3), complex128)


def test_aer_statevector_agrees_on_twelve_qubits(rng):
    circuit = random_circuit(rng, 12, 60, max_controls=1)
    values = _values(rng, circuit.params_name)
    qc = to_qiskit(circuit, values, 12)
    qc.save_statevector()
    aer = AerSimulator(method="statevector")
    expected = np.asarray(aer.run(transpile(qc, aer, optimization_level=0)).result().get_statevector())
    sim = Simulator(12)
    sim.apply_circuit(circuit, values)
    assert_close(sim.get_qs(), expected, complex128, atol=1e-10)


@pytest.mark.parametrize("n_qubits", [2, 5, 12])
def test_expectation_and_gradient_match_qiskit(backend, n_qubits, rng):
    circuit = random_circuit(rng, n_qubits, 30 if n_qubits > 5 else 25)
    hamiltonian = random_hamiltonian(rng, n_qubits)
    names = circuit.params_name
    values = _values(rng, names)
    energy, grad = Simulator(n_qubits, backend=backend).get_expectation_with_grad(
        hamiltonian, circuit)([values[n] for n in names])
    assert energy == pytest.approx(qiskit_expectation(circuit, values, hamiltonian, n_qubits),
                                   abs=1e-10)
    step = 1e-6
    for i, name in enumerate(names):
        up = qiskit_expectation(circuit, {**values, name: values[name] + step}, hamiltonian,
                                n_qubits)
        down = qiskit_expectation(circuit, {**values, name: values[name] - step}, hamiltonian,
                                  n_qubits)
        assert grad[i] == pytest.approx((up - down) / (2 * step), abs=1e-7), name


def test_complex64_gradient_is_accurate_to_single_precision(rng):
    circuit = random_circuit(rng, 8, 40)
    hamiltonian = random_hamiltonian(rng, 8)
    params = rng.uniform(-1, 1, len(circuit.params_name))
    e64, g64 = Simulator(8, dtype="complex64").get_expectation_with_grad(hamiltonian, circuit)(
        params)
    e128, g128 = Simulator(8).get_expectation_with_grad(hamiltonian, circuit)(params)
    assert e64 == pytest.approx(e128, abs=1e-5)
    np.testing.assert_allclose(g64, g128, atol=1e-5)
