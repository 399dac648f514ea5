"""Gradients: the adjoint method against parameter shift (two- and four-term rules) and
finite differences, through linear parameter expressions."""

import numpy as np
import pytest

from mskernel_quantum.api import (
    RX, RY, U3, BitFlipChannel, Circuit, Hamiltonian, Measure, PhaseShift, QuantumError, Rzz, Simulator, X,
)

from circuits import random_circuit, random_hamiltonian


def _finite_difference(f, params, step=1e-6):
    grad = np.zeros_like(params)
    for i in range(params.size):
        e = np.zeros_like(params)
        e[i] = step
        grad[i] = (f(params + e)[0] - f(params - e)[0]) / (2 * step)
    return grad


@pytest.mark.parametrize("n_qubits", [2, 4, 6])
def test_adjoint_matches_parameter_shift_and_finite_differences(backend, n_qubits, rng):
    circuit = random_circuit(rng, n_qubits, 30, max_controls=2)
    hamiltonian = random_hamiltonian(rng, n_qubits)
    params = rng.uniform(-np.pi, np.pi, len(circuit.params_name))
    sim = Simulator(n_qubits, backend=backend)
    adjoint = sim.get_expectation_with_grad(hamiltonian, circuit)
    shift = sim.get_expectation_with_grad(hamiltonian, circuit, grad_method="parameter_shift")
    energy, grad = adjoint(params)
    energy_shift, grad_shift = shift(params)
    assert energy == pytest.approx(energy_shift, abs=1e-12)
    np.testing.assert_allclose(grad, grad_shift, atol=1e-10)
    np.testing.assert_allclose(grad, _finite_difference(adjoint, params), atol=1e-7)


@pytest.mark.parametrize("gate", [RX("2*a - 1"), RY("a"), PhaseShift("-a"), U3("a", "2*a", 0.3)])
def test_controlled_rotation_rules(gate):
    """Controlled Pauli rotations need the four-term rule; phases and U3's phase angles do not."""
    circuit = Circuit([RY(0.7).on(0), RX(0.4).on(1), gate.on(1, 0)])
    hamiltonian = Hamiltonian("X1 + 0.5 Y1 + 0.3 Z1 Z0")
    sim = Simulator(2)
    adjoint = sim.get_expectation_with_grad(hamiltonian, circuit)
    shift = sim.get_expectation_with_grad(hamiltonian, circuit, grad_method="parameter_shift")
    for a in (-2.0, 0.3, 1.9):
        np.testing.assert_allclose(adjoint([a])[1], shift([a])[1], atol=1e-12)
        np.testing.assert_allclose(adjoint([a])[1], _finite_difference(adjoint, np.array([a])),
                                   atol=1e-8)


def test_chain_rule_through_shared_parameters():
    circuit = Circuit([RX("theta").on(0), RX("2*theta + 0.5").on(0), Rzz("-theta").on([0, 1])])
    f = Simulator(2).get_expectation_with_grad(Hamiltonian("Z0"), circuit)
    # RX angles add up on one qubit and Rzz leaves <Z0> alone: <Z0> = cos(3 theta + 0.5)
    for theta in (0.1, 1.2):
        energy, grad = f([theta])
        assert energy == pytest.approx(np.cos(3 * theta + 0.5), abs=1e-14)
        assert grad[0] == pytest.approx(-3 * np.sin(3 * theta + 0.5), abs=1e-12)


def test_several_hamiltonians_and_the_starting_state(rng):
    circuit = random_circuit(rng, 3, 15)
    hams = [random_hamiltonian(rng, 3), Hamiltonian("Z0 Z1 Z2")]
    params = rng.uniform(-1, 1, len(circuit.params_name))
    sim = Simulator(3)
    sim.apply_circuit(Circuit([X.on(1)]))
    energies, grads = sim.get_expectation_with_grad(hams, circuit)(params)
    assert energies.shape == (2,) and grads.shape == (2, len(params))
    for i, ham in enumerate(hams):
        start = Simulator(3)
        start.apply_circuit(Circuit([X.on(1)]) + circuit, params)
        assert energies[i] == pytest.approx(start.get_expectation(ham), abs=1e-12)
        single = sim.get_expectation_with_grad(ham, circuit)(params)
        np.testing.assert_allclose(grads[i], single[1])
    np.testing.assert_allclose(sim.get_qs()[2], 1)  # f leaves the simulator's state alone


def test_gradient_requests_that_cannot_work():
    sim = Simulator(2)
    with pytest.raises(QuantumError, match="cannot hold measurements"):
        sim.get_expectation_with_grad(Hamiltonian("Z0"), Circuit([RX("a").on(0),
                                                                 Measure().on(0)]))
    with pytest.raises(QuantumError, match="adjoint method needs a state vector"):
        Simulator(2, method="density_matrix").get_expectation_with_grad(
            Hamiltonian("Z0"), Circuit([RX("a").on(0)]), grad_method="adjoint")
    with pytest.raises(QuantumError, match="noisy circuit need exact channels"):
        sim.get_expectation_with_grad(Hamiltonian("Z0"), Circuit([RX("a").on(0),
                                                                 BitFlipChannel(0.1).on(0)]))
    with pytest.raises(QuantumError, match="acts on 3 qubits but the simulator has 2"):
        sim.get_expectation_with_grad(Hamiltonian("Z2"), Circuit([RX("a").on(0)]))
