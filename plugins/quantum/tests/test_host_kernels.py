"""The quantum ops' host kernels: registered by the plugin, so a graph mixing quantum and
classical ops compiles on the preferred backend (the cpu backend when installed) with no
fallback, no transfer and no warning, eagerly and under ``@jit``; ``explain`` shows where each
node runs; results equal the simulator's."""

import warnings

import numpy as np
import pytest

import mskernel
from mskernel.ir import GraphBuilder, tensor_type
from mskernel.ops import rule_registry
from mskernel.cli import main
from mskernel.ir import save_model
from mskernel.runtime import (
    HOST_KERNEL_RULE, CompileOptions, FallbackWarning, compile_graph, explain, partition,
)
from mskernel.runtime.host_kernels import host_kernels
from mskernel.runtime.reference import ReferenceBackend
from mskernel_quantum.api import RX, RY, Circuit, Hamiltonian, Simulator, expectation
from mskernel_quantum.ops import EXPECTATION, EXPECTATION_GRAD

CIRCUIT = Circuit([RY("a").on(0), RX("b").on(1, 0)])


def test_the_plugin_registers_a_host_kernel_for_each_op():
    for op in (EXPECTATION, EXPECTATION_GRAD):
        assert rule_registry().owner(HOST_KERNEL_RULE, op) == "mskernel-quantum"


def hybrid_graph():
    """tanh(<H>(params) * w + bias), and the gradient of <H>: classical around quantum."""
    b = GraphBuilder("hybrid")
    params = b.input(tensor_type("f32", (3, 2)), "params")
    w = b.input(tensor_type("f32", (3,)), "w")
    attrs = {"circuit": CIRCUIT.to_json(), "hamiltonian": "Z0 + 0.5 Z1"}
    energy = b.op(EXPECTATION, b.op("mul", params, b.op("constant", value=np.array(2, np.float32))),
                  **attrs)
    grad = b.op(EXPECTATION_GRAD, params, **attrs)
    return b.build([b.op("tanh", b.op("add", b.op("mul", energy, w), w)), grad])


def simulated(params):
    f = Simulator(2).get_expectation_with_grad(Hamiltonian("Z0 + 0.5 Z1"), CIRCUIT)
    rows = [f(p.astype(np.float64)) for p in params]
    return np.array([e for e, _ in rows]), np.array([g for _, g in rows])


class Classical(ReferenceBackend):
    """A host-memory backend claiming every op but the quantum ones (what the cpu backend
    claims of this graph), so the host-kernel path runs whichever backends are installed."""

    name = "classical"

    def capabilities(self):
        caps = super().capabilities()
        return type(caps)({op: s for op, s in caps.ops.items() if not op.startswith("quantum.")})


def test_quantum_nodes_run_beside_a_backend_that_does_not_claim_them():
    graph = hybrid_graph()
    plan = partition(graph, [Classical(), ReferenceBackend()], "deny",
                     host_kernels(rule_registry()))
    quantum = [p for p in plan.placements if p.node.op.startswith("quantum.")]
    assert [(p.backend, p.host_kernel) for p in quantum] == [("classical", "mskernel-quantum")] * 2
    assert not plan.transfers and not plan.fallbacks
    assert "host kernel of mskernel-quantum, beside classical" in plan.explain()


def test_a_hybrid_graph_compiles_without_fallback_on_the_preferred_backend():
    graph = hybrid_graph()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = compile_graph(graph, options=CompileOptions(fallback="deny"))
    plan = compiled.plan
    preferred = plan.backends[0]
    assert {p.backend for p in plan.placements} == {preferred} and not plan.transfers
    on_host = {p.node.op for p in plan.placements if p.host_kernel == "mskernel-quantum"}
    claimed = {op for op in (EXPECTATION, EXPECTATION_GRAD)
               if op in compiled._backends[preferred].capabilities()}
    assert on_host == {EXPECTATION, EXPECTATION_GRAD} - claimed
    params = np.random.default_rng(3).uniform(-2, 2, (3, 2)).astype(np.float32)
    w = np.array([0.5, -1.0, 2.0], np.float32)
    out, grad = compiled(params, w)
    energies, _ = simulated(2 * params)
    np.testing.assert_allclose(out, np.tanh(energies * w + w), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad, simulated(params)[1], rtol=1e-5, atol=1e-6)


def test_eager_and_jit_calls_stay_on_the_tensors_device_without_warnings():
    params = mskernel.Tensor(np.array([[0.3, -0.7], [1.1, 0.2]], np.float32))

    def f(p):
        return mskernel.ops.tanh(expectation(p, CIRCUIT, "Z0 Z1"))

    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        eager = f(params)
        jitted = mskernel.jit(f)(params)
        grad = mskernel.grad(lambda p: mskernel.ops.sum(f(p)))(params)
    assert eager.device == params.device == jitted.device == grad.device
    want = np.tanh(simulated_zz(params.numpy()))
    np.testing.assert_allclose(eager.numpy(), want, rtol=1e-5)
    np.testing.assert_allclose(jitted.numpy(), want, rtol=1e-5)


def simulated_zz(params):
    f = Simulator(2).get_expectation_with_grad(Hamiltonian("Z0 Z1"), CIRCUIT)
    return np.array([f(p.astype(np.float64))[0] for p in params])


@pytest.mark.parametrize("dtype", ["float64", "bfloat16"])
def test_the_host_kernel_converts_to_the_inferred_dtype(dtype):
    b = GraphBuilder()
    p = b.input(tensor_type(dtype, (2,)))
    graph = b.build([b.op(EXPECTATION, p, circuit=CIRCUIT.to_json(), hamiltonian="Z1")])
    (out,) = compile_graph(graph)(np.array([0.4, 0.9]))
    assert out.dtype == np.dtype(dtype if dtype != "bfloat16" else "float32")
    assert out == pytest.approx(1 - np.sin(0.2) ** 2 * (1 - np.cos(0.9)),
                                abs=1e-12 if dtype == "float64" else 1e-2)


def test_mskernel_explain_shows_where_a_saved_hybrid_model_runs(tmp_path, capsys):
    path = tmp_path / "hybrid.mskm"
    save_model(path, hybrid_graph())
    assert main(["explain", str(path)]) == 0
    printed = capsys.readouterr().out
    assert printed == explain(hybrid_graph())
    preferred = compile_graph(hybrid_graph()).plan.backends[0]
    rows = [line for line in printed.splitlines() if line[:1].isdigit() and "quantum." in line]
    assert len(rows) == 2
    for row in rows:  # on the host beside the preferred backend, unless it claims the op
        placed = row.split()[2]
        assert placed == preferred or (placed == "host" and
                                       f"mskernel-quantum, beside {preferred}" in row), row
    assert "fallbacks: 0" in printed and "transfers: 0 (0 B)" in printed
