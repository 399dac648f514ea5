"""The quantum ops through the core: registered by the plugin, samples whose reference results
have the inferred types, values equal to the simulator's, errors that name the problem, and a
graph compiled and run by the runtime."""

import numpy as np
import pytest

from mskernel import bfloat16
from mskernel.runtime.interpreter import run_node
from mskernel_sdk import (
    GraphBuilder, OpError, TensorType, compile_graph, op_registry, sample_graph, tensor_type,
)
from mskernel_quantum.api import RX, Circuit, Hamiltonian, Measure, Simulator
from mskernel_quantum.ops import EXPECTATION, EXPECTATION_GRAD
from mskernel_quantum.samples import SAMPLES

ALL = [s for op, fn in sorted(SAMPLES.items()) for s in fn(np.random.default_rng(0))]


def test_ops_are_registered_by_the_plugin():
    for name in (EXPECTATION, EXPECTATION_GRAD):
        assert op_registry().get(name).owner == "mskernel-quantum"


@pytest.mark.parametrize("sample", ALL, ids=str)
def test_reference_agrees_with_inferred_types_and_the_simulator(sample):
    graph = sample_graph(sample)
    (node,) = graph.nodes
    raw = op_registry().get(node.op).reference(*sample.args, **node.attrs)
    (value,) = node.outputs
    assert raw.shape == value.type.shape
    if value.type.dtype is not bfloat16:
        assert raw.dtype == value.type.dtype.storage
    run_node(node, list(sample.args), op_registry())

    circuit = Circuit.from_json(sample.attrs["circuit"])
    hamiltonian = Hamiltonian(sample.attrs["hamiltonian"])
    params = sample.args[0].astype(np.float64)
    n = max(circuit.n_qubits, hamiltonian.n_qubits)
    f = Simulator(n).get_expectation_with_grad(hamiltonian, circuit)
    rows = [f(p) for p in params.reshape(int(np.prod(params.shape[:-1])), params.shape[-1])]
    energies = np.array([e for e, _ in rows]).reshape(params.shape[:-1])
    grads = np.array([g for _, g in rows]).reshape(params.shape)
    expected = grads if sample.op == EXPECTATION_GRAD else energies
    tolerance = {"float64": 1e-12, "float32": 1e-6, "float16": 2e-3, "bfloat16": 2e-2}
    np.testing.assert_allclose(raw.astype(np.float64), expected,
                               atol=tolerance[value.type.dtype.name] * 4)


def test_samples_cover_batches_and_empty_batches():
    shapes = {s.args[0].shape[:-1] for s in ALL}
    assert {(), (2, 3), (0,)} <= shapes


def _build(params_type, circuit, hamiltonian="Z0", op=EXPECTATION):
    b = GraphBuilder()
    p = b.input(params_type)
    return b, b.op(op, p, circuit=circuit, hamiltonian=hamiltonian)


@pytest.mark.parametrize("params_type,circuit,hamiltonian,message", [
    (tensor_type("f64", (2,)), Circuit([RX("a").on(0)]).to_json(), "Z0",
     r"params must have shape \[\.\.\., 1\] \(one value per circuit parameter: a; leading "
     r"axes are a batch\), got \[2\]"),
    (tensor_type("f64", ()), Circuit([RX("a").on(0)]).to_json(), "Z0",
     r"params must have shape \[\.\.\., 1\].*got \[\]"),
    (tensor_type("i64", (1,)), Circuit([RX("a").on(0)]).to_json(), "Z0",
     "expects a floating-point params input"),
    (tensor_type("f64", (0,)), "{not json", "Z0", "circuit JSON is malformed"),
    (tensor_type("f64", (0,)), Circuit([Measure().on(0)]).to_json(), "Z0",
     "the circuit must be unitary"),
    (tensor_type("f64", (0,)), Circuit().to_json(), "0.5 Q1", "cannot read Hamiltonian"),
])
def test_bad_inputs_are_op_errors(params_type, circuit, hamiltonian, message):
    with pytest.raises(OpError, match=f"op 'quantum.expectation'.*{message}"):
        _build(params_type, circuit, hamiltonian)


def test_a_graph_with_both_ops_compiles_and_runs():
    circuit = Circuit([RX("a").on(0), RX("b").on(1, 0)]).to_json()
    b = GraphBuilder()
    p = b.input(tensor_type("f32", (2,)))
    e = b.op(EXPECTATION, p, circuit=circuit, hamiltonian="Z0 + Z1")
    g = b.op(EXPECTATION_GRAD, p, circuit=circuit, hamiltonian="Z0 + Z1")
    energy, grad = compile_graph(b.build([e, g]))(np.array([0.4, 0.9], np.float32))
    a, c = 0.4, 0.9  # <Z0> = cos a, <Z1> = 1 - sin^2(a/2) (1 - cos c)
    assert energy == pytest.approx(np.cos(a) + 1 - np.sin(a / 2) ** 2 * (1 - np.cos(c)), abs=1e-6)
    assert grad.dtype == np.float32 and grad.shape == (2,)
    assert isinstance(e.type, TensorType) and e.type.shape == ()
