"""Circuits: building, parameter names, binding, inversion, JSON form, unitary."""

import numpy as np
import pytest

from mskernel_quantum.api import (
    CNOT, RX, RY, Circuit, DepolarizingChannel, H, Measure, ParameterError, QuantumError, X,
)

from circuits import random_circuit


def test_building_like_mindquantum():
    circuit = Circuit()
    circuit += H.on(0)
    circuit += X.on(1, 0)
    circuit += [RX("theta").on(1), RY("2*phi + theta").on(0)]
    assert len(circuit) == 4 and circuit.n_qubits == 2
    assert circuit.params_name == ["theta", "phi"]
    assert (H.on(2) + circuit)[0] == H.on(2) and len(circuit + H.on(2)) == 5
    assert circuit[1:3] == Circuit([X.on(1, 0), RX("theta").on(1)])
    with pytest.raises(QuantumError, match="not placed on qubits"):
        circuit += H
    with pytest.raises(QuantumError, match=r"call \.on\(targets, controls\) first"):
        circuit += CNOT


def test_apply_value_binds_by_name():
    circuit = Circuit([RX("theta").on(0), RY("2*phi + theta").on(1)])
    bound = circuit.apply_value({"phi": 0.5})
    assert bound.params_name == ["theta"]
    assert bound[1] == RY("theta + 1").on(1)
    with pytest.raises(ParameterError, match="has no parameter\\(s\\) psi"):
        circuit.apply_value({"psi": 1.0})


def test_dagger_inverts(rng):
    circuit = random_circuit(rng, 4, 30)
    values = {n: float(v) for n, v in zip(circuit.params_name, rng.uniform(-2, 2, 3))}
    product = (circuit + circuit.dagger()).matrix(values)
    np.testing.assert_allclose(product, np.eye(16), atol=1e-12)
    with pytest.raises(QuantumError, match="not unitary"):
        Circuit([DepolarizingChannel(0.1).on(0)]).dagger()


def test_json_round_trip_keeps_everything(rng):
    circuit = random_circuit(rng, 5, 40) + [DepolarizingChannel(0.2).on(1), Measure("m").on(3)]
    text = circuit.to_json()
    again = Circuit.from_json(text)
    assert again == circuit and again.to_json() == text
    with pytest.raises(QuantumError, match="not a circuit document"):
        Circuit.from_json('{"gates": []}')
    with pytest.raises(QuantumError, match="version 9 is not supported"):
        Circuit.from_json(text.replace('"version":1', '"version":9'))


def test_json_round_trip_keeps_the_parameter_order():
    """params_name orders the params of quantum.expectation, so it must survive the text."""
    circuit = Circuit([RX("2*b + a").on(0), RX("c").on(1)])
    assert circuit.params_name == ["b", "a", "c"]
    assert Circuit.from_json(circuit.to_json()).params_name == ["b", "a", "c"]


def test_matrix_of_a_bell_circuit():
    bell = Circuit([H.on(0), X.on(1, 0)]).matrix()
    np.testing.assert_allclose(bell[:, 0], [2 ** -0.5, 0, 0, 2 ** -0.5], atol=1e-15)
