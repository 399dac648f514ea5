"""The Simulator's MindQuantum-style API: state access and ordering, reset, measurement,
seeded sampling, backend and dtype choice, and its error messages."""

import numpy as np
import pytest

from mskernel_quantum.api import (
    RX, Circuit, H, Hamiltonian, Measure, ParameterError, QuantumError, Simulator, X,
)


def test_qubit_zero_is_the_least_significant_bit(backend):
    sim = Simulator(3, backend=backend)
    sim.apply_circuit(Circuit([X.on(0)]))
    assert np.argmax(np.abs(sim.get_qs())) == 1
    sim.apply_circuit(Circuit([X.on(2)]))
    assert np.argmax(np.abs(sim.get_qs())) == 5
    sim.reset()
    np.testing.assert_array_equal(sim.get_qs(), np.eye(8)[0])


def test_parameters_by_name_or_by_position():
    circuit = Circuit([RX("a").on(0), RX("2*b").on(1)])
    by_name, by_position = Simulator(2), Simulator(2)
    by_name.apply_circuit(circuit, {"b": 0.2, "a": 0.5})
    by_position.apply_circuit(circuit, np.array([0.5, 0.2]))
    np.testing.assert_array_equal(by_name.get_qs(), by_position.get_qs())
    with pytest.raises(ParameterError, match="no value for circuit parameter\\(s\\) b"):
        Simulator(2).apply_circuit(circuit, {"a": 1.0})
    with pytest.raises(ParameterError, match="has 2 parameter\\(s\\) \\(a, b\\); got values "
                                             "of shape \\(3,\\)"):
        Simulator(2).apply_circuit(circuit, [1, 2, 3])


def test_dtype_backend_and_method_choices():
    sim = Simulator(2, dtype="complex64", backend="numpy")
    assert sim.get_qs().dtype == np.complex64
    assert "complex64" in repr(sim) and "numpy" in repr(sim)
    with pytest.raises(QuantumError, match="complex64 or complex128, got float32"):
        Simulator(2, dtype="float32")
    with pytest.raises(QuantumError, match="unknown simulator backend 'gpu'"):
        Simulator(2, backend="gpu")
    with pytest.raises(QuantumError, match="unknown method 'mps'"):
        Simulator(2, method="mps")
    with pytest.raises(QuantumError, match="acts on 3 qubits but the simulator has 2"):
        Simulator(2).apply_circuit(Circuit([X.on(2)]))


def test_set_qs_normalises_and_checks_the_shape():
    sim = Simulator(1)
    sim.set_qs(np.array([1, 1j]))
    np.testing.assert_allclose(sim.get_qs(), np.array([1, 1j]) / np.sqrt(2))
    assert sim.get_expectation(Hamiltonian("Y0")) == pytest.approx(1.0)
    with pytest.raises(QuantumError, match="has 2 amplitudes"):
        sim.set_qs(np.ones(4))
    dm = Simulator(1, method="density_matrix")
    dm.set_qs(np.array([1, 1j]))
    np.testing.assert_allclose(dm.get_qs(), np.array([[1, -1j], [1j, 1]]) / 2)


def test_measurement_collapses_with_the_simulators_seed():
    outcomes = []
    for _ in range(2):
        sim = Simulator(2, seed=11)
        result = sim.apply_circuit(Circuit([H.on(0), X.on(1, 0), Measure("m").on(0)]))
        outcomes.append(result["m"])
        np.testing.assert_allclose(np.abs(sim.get_qs()) ** 2, np.eye(4)[3 * result["m"]])
    assert outcomes[0] == outcomes[1]


def test_sampling_is_seeded_and_leaves_the_state_alone(backend):
    circuit = Circuit([H.on(0), X.on(1, 0), RX(0.5).on(2), Measure().on(2), Measure().on(0)])
    sim = Simulator(3, backend=backend)
    first = sim.sampling(circuit, shots=2000, seed=5)
    again = sim.sampling(circuit, shots=2000, seed=5)
    np.testing.assert_array_equal(first.samples, again.samples)
    np.testing.assert_array_equal(sim.get_qs(), np.eye(8)[0])
    assert first.keys == ("q2", "q0") and first.qubits == (2, 0) and first.shots == 2000
    counts = first.counts()
    assert set(counts) <= {"00", "01", "10", "11"} and sum(counts.values()) == 2000
    p_one = np.sin(0.25) ** 2  # RX(0.5) on qubit 2
    assert first.samples[:, 0].mean() == pytest.approx(p_one, abs=5 * np.sqrt(p_one / 2000))
    assert first.samples[:, 1].mean() == pytest.approx(0.5, abs=5 * np.sqrt(0.25 / 2000))


def test_sampling_without_measurements_measures_every_qubit():
    result = Simulator(2).sampling(Circuit([X.on(1)]), shots=3, seed=0)
    assert result.keys == ("q0", "q1")
    assert result.counts() == {"10": 3}


def test_sampling_needs_terminal_measurements():
    with pytest.raises(QuantumError, match="acts on a measured qubit"):
        Simulator(1).sampling(Circuit([Measure().on(0), H.on(0)]))
    with pytest.raises(QuantumError, match="measured twice"):
        Simulator(1).sampling(Circuit([Measure().on(0), Measure("b").on(0)]))
    with pytest.raises(QuantumError, match="at least 1"):
        Simulator(1).sampling(Circuit([H.on(0)]), shots=0)
