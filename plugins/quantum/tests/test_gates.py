"""Gates: matrices, derivatives, adjoints, placement rules and the named controlled forms."""

import numpy as np
import pytest

from mskernel_quantum.api import (
    CNOT, CZ, H, ISWAP, RX, SWAP, S, Sdag, T, Tdag, Toffoli, U3, Measure, Parameter,
    ParameterizedGate, QuantumError, UnivMathGate, X, Z,
)
from mskernel_quantum.gates import FIXED_MATRICES, ROTATIONS, FixedGate

from circuits import random_unitary


@pytest.mark.parametrize("name", sorted(FIXED_MATRICES))
def test_fixed_gates_are_unitary_and_their_adjoint_inverts_them(name):
    gate = FixedGate(name)
    m = gate.matrix()
    np.testing.assert_allclose(m @ m.conj().T, np.eye(m.shape[0]), atol=1e-15)
    np.testing.assert_allclose(gate.hermitian().matrix() @ m, np.eye(m.shape[0]), atol=1e-15)
    assert gate.hermitian().hermitian() == gate


@pytest.mark.parametrize("name", sorted(ROTATIONS))
def test_rotation_derivatives_match_finite_differences(name, rng):
    kind = ROTATIONS[name]
    angles = rng.uniform(-3, 3, len(kind.param_names))
    gate = ParameterizedGate(name, params_=tuple(Parameter(f"p{i}") for i in range(len(angles))))
    values = {f"p{i}": a for i, a in enumerate(angles)}
    m = gate.matrix(values)
    np.testing.assert_allclose(m @ m.conj().T, np.eye(m.shape[0]), atol=1e-14)
    np.testing.assert_allclose(gate.hermitian().matrix(values) @ m, np.eye(m.shape[0]),
                               atol=1e-14)
    step = 1e-6
    for i, derivative in enumerate(gate.derivatives(values)):
        up = gate.matrix({**values, f"p{i}": angles[i] + step})
        down = gate.matrix({**values, f"p{i}": angles[i] - step})
        np.testing.assert_allclose(derivative, (up - down) / (2 * step), atol=1e-9)


@pytest.mark.parametrize("name", sorted(ROTATIONS))
def test_rotation_matrices_broadcast_over_a_batch_of_angles(name, rng):
    """Batched angles (what quantum.expectation evaluates) give one matrix per entry."""
    kind = ROTATIONS[name]
    batch = [rng.uniform(-3, 3, 5) for _ in kind.param_names]
    if len(batch) > 1:
        batch[-1] = batch[-1][0]  # a number mixed with arrays broadcasts
    for make in (kind.matrix, kind.derivatives):
        together = np.array(make(batch))
        one_by_one = np.stack([np.array(make([a[i] if np.ndim(a) else a for a in batch]))
                               for i in range(5)], axis=-3)
        np.testing.assert_allclose(together, one_by_one, atol=1e-15)


def test_known_matrices():
    np.testing.assert_allclose(RX(np.pi).matrix(), -1j * FIXED_MATRICES["X"], atol=1e-15)
    np.testing.assert_allclose(U3(np.pi / 2, 0, np.pi).matrix(), H.matrix(), atol=1e-15)
    np.testing.assert_allclose(S.matrix() @ S.matrix(), Z.matrix())
    np.testing.assert_allclose(T.matrix() @ T.matrix(), S.matrix(), atol=1e-15)
    assert S.hermitian() == Sdag and T.hermitian() == Tdag and Sdag.label == "S†"
    np.testing.assert_allclose(ISWAP.hermitian().matrix(), ISWAP.matrix().conj().T)


def test_placement_and_named_controlled_forms():
    assert CNOT.on(1, 0) == X.on(1, 0)
    assert CZ.on(2, 0) == Z.on(2, [0])
    assert Toffoli.on(2, [0, 1]).ctrl_qubits == (0, 1)
    assert str(X.on(1, [0, 2])) == "X(1 <- 0,2)"
    assert RX("2*a + 1").on(0).params_name == ("a",)
    with pytest.raises(QuantumError, match="CNOT needs 1 control qubit"):
        CNOT.on(1, [0, 2])
    with pytest.raises(QuantumError, match="acts on 2 target qubit"):
        SWAP.on(0)
    with pytest.raises(QuantumError, match="both target and control"):
        X.on(1, 1)
    with pytest.raises(QuantumError, match="repeat a qubit"):
        X.on(1, [0, 0])
    with pytest.raises(QuantumError, match="non-negative integers"):
        H.on(-1)
    with pytest.raises(QuantumError, match="cannot be controlled"):
        Measure().on(0, 1)


def test_univmathgate_checks_its_matrix(rng):
    u = random_unitary(rng, 4)
    gate = UnivMathGate("U", u).on([0, 2], 1)
    assert gate.n_targets == 2 and gate == UnivMathGate("U", u).on([0, 2], 1)
    np.testing.assert_allclose(gate.hermitian().matrix(), u.conj().T)
    assert gate.hermitian().name == "U†"
    with pytest.raises(QuantumError, match="not unitary"):
        UnivMathGate("bad", np.ones((2, 2)))
    with pytest.raises(QuantumError, match="must be 2\\^k x 2\\^k"):
        UnivMathGate("bad", np.eye(3))
