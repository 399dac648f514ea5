"""Gate fusion: blocks of consecutive gates on one or two qubits against the gates applied
one by one (NumPy reference), with every kernel build; and the adjoint gradient through fused
blocks, parameters shared across the gates of a block, several Hamiltonians in one sweep."""

import numpy as np
import pytest

from mskernel import complex128, complex64
from mskernel_sdk import assert_close
from mskernel_quantum.api import CNOT, RX, RY, RZ, Circuit, Hamiltonian, Simulator, X
from mskernel_quantum.fusion import fuse
from mskernel_quantum.native_kernels import NativeKernels
from mskernel_quantum.reference_kernels import NumpyKernels

from circuits import random_circuit, random_hamiltonian

VALUES = {"a": 0.37, "b": -1.21, "c": 2.05}


def _layers(n, layers, rng):
    """Rotations on every qubit, then CNOTs on a random pairing (the benchmark's shape)."""
    circuit = Circuit()
    for layer in range(layers):
        for q in range(n):
            rotation = [RX, RY, RZ][rng.integers(3)]
            circuit += rotation(f"p{layer}_{q}").on(q)
        order = rng.permutation(n).tolist()
        for c, t in zip(order[::2], order[1::2]):
            circuit += CNOT.on(t, c)
    return circuit


def _gate_by_gate(circuit, values, n, dtype):
    psi = np.zeros(2 ** n, dtype)
    psi[0] = 1
    for gate in circuit:
        NumpyKernels().apply_matrix(psi, gate.matrix(values), gate.obj_qubits, gate.ctrl_qubits)
    return psi


def test_a_layer_becomes_one_block_per_pair(rng):
    circuit = _layers(8, 3, rng)
    values = dict.fromkeys(circuit.params_name, 0.4)
    blocks = fuse(list(circuit), values)
    assert len(blocks) == 4 * 3 and all(len(b.targets) == 2 for b in blocks)
    assert all(len(b.derivatives) == 0 for b in blocks)
    differentiated = fuse(list(circuit), values, differentiate=True)
    assert sum(len(b.derivatives) for b in differentiated) == len(circuit.params_name)


def test_gates_on_three_qubits_stay_whole_and_order_is_kept():
    circuit = Circuit([RX("a").on(0), X.on(2, [0, 1]), RY("b").on(0), CNOT.on(1, 0)])
    blocks = fuse(list(circuit), VALUES)
    assert [(b.targets, b.controls) for b in blocks] == [((0,), ()), ((2,), (0, 1)),
                                                         ((1, 0), ())]


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("n,threads", [(3, 1), (9, 1), (14, 2)])
def test_fused_blocks_equal_the_gates_one_by_one(rng, isa, dtype, n, threads):
    circuit = random_circuit(rng, n, 60)
    expected = _gate_by_gate(circuit, VALUES, n, dtype)
    sim = Simulator(n, dtype=dtype, threads=threads)
    sim.apply_circuit(circuit, VALUES)
    dt = complex128 if dtype == np.complex128 else complex64
    assert_close(sim.get_qs(), expected, dt, atol=None if dtype == np.complex128 else 1e-5)


def test_gradient_through_blocks_sharing_parameters(backend, isa):
    """One parameter in several gates of one block, and a block mixing two parameters: the
    block derivatives carry each angle, so the gradient matches finite differences."""
    circuit = Circuit([RX("a").on(0), RY("2*a + b").on(0), RZ("a - b").on(1), CNOT.on(1, 0),
                       RX("b").on(1), RY("3*a").on(0), CNOT.on(2, 1), RZ("0.5*b").on(2),
                       RX("a + b").on(3), X.on(3, [0, 2]), RY("b").on(3)])
    ham = Hamiltonian("0.7 Z0 Z1 + 0.2 X2 + Y3 Z1")
    f = Simulator(4, backend=backend).get_expectation_with_grad(ham, circuit)
    params = np.array([0.3, -0.8])
    energy, grad = f(params)
    step = 1e-6
    for i in range(2):
        e = np.eye(2)[i] * step
        assert grad[i] == pytest.approx((f(params + e)[0] - f(params - e)[0]) / (2 * step),
                                        abs=1e-7)
    reference = Simulator(4, backend="numpy")
    reference.apply_circuit(circuit, params)
    assert energy == pytest.approx(reference.get_expectation(ham), abs=1e-12)


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_observables_in_one_sweep_match_one_at_a_time(rng, isa, dtype):
    n = 10
    circuit = random_circuit(rng, n, 50)
    hams = [random_hamiltonian(rng, n) for _ in range(3)]
    params = rng.uniform(-np.pi, np.pi, len(circuit.params_name))
    sim = Simulator(n, dtype=dtype, threads=2)
    energies, grads = sim.get_expectation_with_grad(hams, circuit)(params)
    assert energies.shape == (3,) and grads.shape == (3, len(params))
    tol = 1e-10 if dtype == "complex128" else 2e-4
    for h, ham in enumerate(hams):
        e, g = Simulator(n, backend="numpy").get_expectation_with_grad(ham, circuit)(params)
        assert energies[h] == pytest.approx(e, abs=tol)
        np.testing.assert_allclose(grads[h], g, atol=tol)
