"""The quantum ops under mskernel-autodiff: their rules come from this plugin's
``mskernel_register_rules`` hook, and ``mskernel.grad`` of an expectation equals the adjoint
method, the parameter-shift rules and finite differences — eagerly, under ``@jit``, in
forward mode and over a batch of parameter vectors."""

import numpy as np
import pytest

import mskernel
from mskernel import ops
from mskernel.hooks import plugin_host
from mskernel_sdk import rule_registry
from mskernel_autodiff.lookup import MissingRuleError
from mskernel_autodiff.testing import check_grads
from mskernel_quantum.api import Simulator, expectation
from mskernel_quantum.ops import EXPECTATION, EXPECTATION_GRAD

from circuits import random_circuit, random_hamiltonian

N_QUBITS = 4


@pytest.fixture
def problem(rng):
    """A random circuit of every gate kind (controls, shared parameters in linear
    expressions), a random Pauli sum, and its reference function by the simulator."""
    circuit = random_circuit(rng, N_QUBITS, 24, names=("a", "b", "c", "d"))
    hamiltonian = random_hamiltonian(rng, N_QUBITS)
    sim = Simulator(N_QUBITS)
    return circuit, hamiltonian, sim


def _tensor(a):
    return mskernel.Tensor(np.asarray(a, np.float64))


def test_rules_are_registered_by_the_quantum_plugin_through_the_hooks():
    assert rule_registry().has("vjp", EXPECTATION)  # runs the rules hooks
    assert plugin_host().rules_registered_by("quantum") == [
        ("host_kernel", EXPECTATION), ("host_kernel", EXPECTATION_GRAD),
        ("jvp", EXPECTATION), ("samples", EXPECTATION), ("samples", EXPECTATION_GRAD),
        ("vjp", EXPECTATION)]  # samples: for the SDK's conformance kit


@pytest.mark.parametrize("run", [lambda fn: fn, mskernel.jit], ids=["eager", "jit"])
def test_grad_equals_adjoint_parameter_shift_and_finite_differences(problem, rng, run):
    circuit, hamiltonian, sim = problem
    params = rng.uniform(-np.pi, np.pi, len(circuit.params_name))
    value, grad = run(mskernel.value_and_grad(
        lambda p: expectation(p, circuit, hamiltonian)))(_tensor(params))
    energy, adjoint = sim.get_expectation_with_grad(hamiltonian, circuit)(params)
    _, shift = sim.get_expectation_with_grad(hamiltonian, circuit,
                                             grad_method="parameter_shift")(params)
    f = sim.get_expectation_with_grad(hamiltonian, circuit)
    step = 1e-6
    differences = np.array([(f(params + step * e)[0] - f(params - step * e)[0]) / (2 * step)
                            for e in np.eye(params.size)])
    assert float(value.numpy()) == pytest.approx(energy, abs=1e-12)
    np.testing.assert_allclose(grad.numpy(), adjoint, atol=1e-12)
    np.testing.assert_allclose(grad.numpy(), shift, atol=1e-10)
    np.testing.assert_allclose(grad.numpy(), differences, atol=1e-7)


def test_batched_params_get_one_gradient_row_per_vector(problem, rng):
    circuit, hamiltonian, sim = problem
    params = rng.uniform(-np.pi, np.pi, (2, 3, len(circuit.params_name)))
    weights = rng.normal(size=(2, 3))
    loss = lambda p: ops.sum(expectation(p, circuit, hamiltonian) * _tensor(weights))
    grad = mskernel.grad(loss)(_tensor(params)).numpy()
    f = sim.get_expectation_with_grad(hamiltonian, circuit)
    for index in np.ndindex(2, 3):
        np.testing.assert_allclose(grad[index], weights[index] * f(params[index])[1],
                                   atol=1e-12)


def test_forward_and_reverse_mode_agree_with_differences(problem, rng):
    circuit, hamiltonian, _ = problem
    params = _tensor(rng.uniform(-np.pi, np.pi, (3, len(circuit.params_name))))
    check_grads(lambda p: expectation(p, circuit, hamiltonian), (params,), order=1,
                rtol=1e-6, atol=1e-8)
    jacobian = mskernel.jacfwd(lambda p: expectation(p, circuit, hamiltonian))(params[0])
    np.testing.assert_allclose(
        jacobian.numpy(), mskernel.grad(lambda p: expectation(p, circuit, hamiltonian))(
            params[0]).numpy(), atol=1e-12)


def test_single_precision_gradients_are_single_precision(problem, rng):
    circuit, hamiltonian, sim = problem
    params = rng.uniform(-np.pi, np.pi, len(circuit.params_name)).astype(np.float32)
    grad = mskernel.grad(lambda p: expectation(p, circuit, hamiltonian))(
        mskernel.Tensor(params))
    assert grad.numpy().dtype == np.float32
    _, expected = sim.get_expectation_with_grad(hamiltonian, circuit)(params)
    np.testing.assert_allclose(grad.numpy(), expected, atol=1e-5)


def test_second_derivatives_name_the_op_without_a_rule(problem, rng):
    circuit, hamiltonian, _ = problem
    params = _tensor(rng.uniform(-np.pi, np.pi, len(circuit.params_name)))
    first = mskernel.grad(lambda p: expectation(p, circuit, hamiltonian))
    with pytest.raises(MissingRuleError, match=f"op '{EXPECTATION_GRAD}' has no 'vjp' rule.*"
                                               "defined by mskernel-quantum"):
        mskernel.grad(lambda p: ops.sum(first(p)))(params)
