"""``MQLayer``: a circuit as a layer of an mskernel.nn model — outputs equal the simulator's,
gradients reach the weights and the encoder inputs (equal to parameter shift), eagerly and
under ``@jit``, and a small hybrid model trained by an nn optimizer lowers its loss."""

import json
import subprocess
import sys

import numpy as np
import pytest

import mskernel
from mskernel import nn, ops
from mskernel.quantum import (
    CNOT, RX, RY, RZ, Circuit, Hamiltonian, MQLayer, QuantumError, Simulator, U3,
)
from mskernel.train import Model

HAMILTONIANS = [Hamiltonian("Z0"), Hamiltonian("0.5 X1 + Z0 Z2"), Hamiltonian("Y2")]


def _circuit() -> Circuit:
    """Encoder parameters x0, x1 interleaved with the ansatz (and in an expression)."""
    return Circuit([RY("w0").on(0), RX("x1").on(1), RY("2*x0 + 0.3").on(2), CNOT.on(1, 0),
                    RZ("w1").on(1), U3("w2", "x0", "w0").on(2, 1), RY("x1 - w1").on(0),
                    CNOT.on(2, 1)])


def _layer(weight: np.ndarray) -> MQLayer:
    return MQLayer(_circuit(), HAMILTONIANS, encoder_params_name=["x0", "x1"],
                   weight=weight, dtype="float64")


def _shift_reference(x: np.ndarray, w: np.ndarray, cotangent: np.ndarray):
    """Loss sum(cotangent * outputs) and its gradients, by the simulator's parameter-shift
    rules on the full parameter vectors."""
    circuit = _circuit()
    sim = Simulator(3)
    fs = [sim.get_expectation_with_grad(h, circuit, grad_method="parameter_shift")
          for h in HAMILTONIANS]
    loss, gx, gw = 0.0, np.zeros_like(x), np.zeros_like(w)
    for b in range(x.shape[0]):
        values = {"x0": x[b, 0], "x1": x[b, 1], "w0": w[0], "w1": w[1], "w2": w[2]}
        for k, f in enumerate(fs):
            energy, grad = f(values)
            by_name = dict(zip(circuit.params_name, grad))
            loss += cotangent[b, k] * energy
            gx[b] += cotangent[b, k] * np.array([by_name["x0"], by_name["x1"]])
            gw += cotangent[b, k] * np.array([by_name["w0"], by_name["w1"], by_name["w2"]])
    return loss, gx, gw


@pytest.mark.parametrize("run", [lambda fn: fn, mskernel.jit], ids=["eager", "jit"])
def test_gradients_reach_weights_and_encoder_inputs(rng, run):
    x, w = rng.uniform(-2, 2, (4, 2)), rng.uniform(-2, 2, 3)
    cotangent = rng.normal(size=(4, 3))
    layer = _layer(w)
    assert layer.ansatz_params_name == ["w0", "w1", "w2"]
    loss_fn = lambda x: ops.sum(layer(x) * mskernel.Tensor(cotangent))
    (loss, (gx, (gw,))) = run(mskernel.value_and_grad(loss_fn, argnums=0,
                                                      weights=[layer.weight]))(
        mskernel.Tensor(x))
    expected_loss, expected_gx, expected_gw = _shift_reference(x, w, cotangent)
    assert float(loss.numpy()) == pytest.approx(expected_loss, abs=1e-12)
    np.testing.assert_allclose(gx.numpy(), expected_gx, atol=1e-10)
    np.testing.assert_allclose(gw.numpy(), expected_gw, atol=1e-10)

    step = 1e-6  # and finite differences in the weights
    for i in range(3):
        e = np.eye(3)[i] * step
        up = _shift_reference(x, w + e, cotangent)[0]
        down = _shift_reference(x, w - e, cotangent)[0]
        assert gw.numpy()[i] == pytest.approx((up - down) / (2 * step), abs=1e-7)


def test_outputs_have_the_batch_shape_and_one_column_per_hamiltonian(rng):
    w = rng.uniform(-2, 2, 3)
    x = rng.uniform(-2, 2, (2, 5, 2))
    out = _layer(w)(mskernel.Tensor(x)).numpy()
    assert out.shape == (2, 5, 3)
    circuit, sim = _circuit(), Simulator(3)
    values = {"x0": x[1, 4, 0], "x1": x[1, 4, 1], "w0": w[0], "w1": w[1], "w2": w[2]}
    expected = [sim.get_expectation_with_grad(h, circuit)(values)[0] for h in HAMILTONIANS]
    np.testing.assert_allclose(out[1, 4], expected, atol=1e-12)


def test_a_layer_without_encoder_is_called_without_input(rng):
    circuit = Circuit([RY("a").on(0), RX("b").on(0, 1), RY("c").on(1)])
    layer = MQLayer(circuit, "Z0 + X1", weight=np.array([0.3, 0.2, -0.4]), dtype="float64")
    energy, grad = Simulator(2).get_expectation_with_grad(
        Hamiltonian("Z0 + X1"), circuit)([0.3, 0.2, -0.4])
    assert layer().numpy() == pytest.approx([energy], abs=1e-12)
    gw = mskernel.grad(lambda: ops.sum(layer()), argnums=None, weights=[layer.weight])()
    np.testing.assert_allclose(gw[0].numpy(), grad, atol=1e-12)
    with pytest.raises(QuantumError, match="no encoder parameters; call it without input"):
        layer(mskernel.Tensor(np.zeros((1, 1))))


def test_bad_configurations_say_what_is_wrong():
    with pytest.raises(QuantumError, match=r"encoder_params_name must name distinct circuit "
                                           r"parameters \(w0, x1, x0, w1, w2\); got \['z'\]"):
        MQLayer(_circuit(), HAMILTONIANS, encoder_params_name=["z"])
    layer = MQLayer(_circuit(), HAMILTONIANS, encoder_params_name=["x0", "x1"])
    with pytest.raises(QuantumError, match=r"input must have shape \[\.\.\., 2\].*got \[4, 3\]"):
        layer(mskernel.Tensor(np.zeros((4, 3), np.float32)))
    with pytest.raises(QuantumError, match="needs the encoder input x"):
        layer()


def _hybrid(seed: int):
    mskernel.random.set_seed(seed)
    return nn.SequentialCell(MQLayer(_circuit(), HAMILTONIANS, encoder_params_name=["x0", "x1"],
                                     weight=nn.Uniform(np.pi)),
                             nn.Dense(3, 1))


def _regression_data(rng):
    x = rng.uniform(-1.5, 1.5, (32, 2)).astype(np.float32)
    y = (np.sin(x[:, :1]) * np.cos(x[:, 1:])).astype(np.float32)
    return x, y


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_a_hybrid_model_trained_by_an_nn_optimizer_lowers_its_loss(rng, jit):
    x, y = _regression_data(rng)
    net = _hybrid(seed=3)
    loss_fn = nn.MSELoss()
    before = float(loss_fn(net(mskernel.Tensor(x)), mskernel.Tensor(y)).numpy())
    model = Model(net, loss_fn, nn.Adam(net.trainable_params(), 0.05), jit=jit)
    model.train(15, [(x[i:i + 8], y[i:i + 8]) for i in range(0, 32, 8)])
    after = float(loss_fn(net(mskernel.Tensor(x)), mskernel.Tensor(y)).numpy())
    assert after < 0.2 * before, (before, after)


def test_the_plugin_imports_without_mskernel_nn():
    """mskernel-nn is optional: the namespace loads without it, MQLayer says what to install."""
    probe = ("import sys; sys.modules['mskernel_nn'] = None\n"
             "import mskernel, json\n"
             "from mskernel.quantum import Circuit, expectation\n"
             "try:\n"
             "    from mskernel.quantum import MQLayer\n"
             "except ImportError as exc:\n"
             "    print(json.dumps(str(exc)))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout
    assert "needs mskernel-nn" in json.loads(out)
