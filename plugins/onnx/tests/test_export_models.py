"""The anchor models and a function with control flow, exported to ONNX at every opset:
ONNX's checker with strict shape inference passes and ONNX Runtime gives the reference
backend's outputs."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

import mskernel
from mskernel_onnx.capture import capture
from mskernel_onnx.export import DEFAULT_OPSET, OPSETS, check_onnx, to_onnx
from mskernel_sdk import assert_close, dtype
from models import ANCHORS, Gate, branchy, build, example, float32_tolerance
from onnx_checks import run_ort


@pytest.fixture(scope="module")
def reference():
    with mskernel.device("reference"):
        yield


@pytest.mark.parametrize("name", sorted(ANCHORS))
def test_anchor_model_on_onnx_runtime_matches_the_reference_backend(name, rng, reference):
    net = build(name)
    x = example(name, rng)
    expected = net(mskernel.Tensor(x)).numpy()
    captured = capture(net, [mskernel.Tensor(x)])
    for opset in OPSETS:
        model = to_onnx(captured.graph, captured.weights, opset=opset,
                        weight_dtypes=captured.weight_dtypes)
        check_onnx(model)
        (got,) = run_ort(model, [x])
        assert_close(got, expected, dtype("float32"), what=f"{name} at opset {opset}",
                     **float32_tolerance(name, expected))


def test_weights_are_initializers_named_by_their_cell_path(rng, tmp_path):
    net = build("lenet")
    path = mskernel.export(net, mskernel.Tensor(example("lenet", rng)),
                           file_name=tmp_path / "lenet", file_format="ONNX")
    model = onnx.load(path)
    initializers = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    assert list(initializers) == [name for name, _ in net.parameters_and_names()]  # only them
    for name, param in net.parameters_and_names():
        np.testing.assert_array_equal(initializers[name], param.numpy())
    assert [i.name for i in model.graph.input] == ["x"]
    assert [o.name for o in model.graph.output] == ["output_0"]
    assert model.opset_import[0].version == DEFAULT_OPSET
    conv = next(n for n in model.graph.node if n.op_type == "Conv")
    assert conv.doc_string.endswith("mskernel_models.py:42")  # the user's line


@pytest.mark.parametrize("opset", list(OPSETS))
def test_if_and_while_become_if_and_loop(opset, rng):
    x = rng.standard_normal((2, 3)).astype(np.float32)
    captured = capture(branchy, [mskernel.Tensor(x), mskernel.Tensor(np.array(3))])
    model = to_onnx(captured.graph, opset=opset)
    check_onnx(model)
    assert {"If", "Loop"} <= {n.op_type for n in model.graph.node}
    for sign, trips in ((1, 3), (-1, 0), (-1, 5)):
        arguments = [sign * np.abs(x), np.array(trips)]
        got = run_ort(model, arguments)
        expected = branchy(*(mskernel.Tensor(a) for a in arguments))
        for g, e in zip(got, expected):
            assert_close(g, e.numpy(), dtype(str(g.dtype)), what=f"x sign {sign}, n={trips}")


@pytest.mark.parametrize("opset", [13, 18, 23])
def test_parameters_read_in_branches_and_loops_become_initializers(opset, rng):
    net = Gate()
    for sign in (1, -1):
        x = (sign * np.abs(rng.standard_normal((2, 4)))).astype(np.float32)
        captured = capture(net, [mskernel.Tensor(x)])
        model = to_onnx(captured.graph, captured.weights, opset=opset)
        check_onnx(model)
        assert {t.name for t in model.graph.initializer} == {"scale", "fc.weight", "fc.bias"}
        (got,) = run_ort(model, [x])
        assert_close(got, net(mskernel.Tensor(x)).numpy(), dtype("float32"), rtol=1e-6,
                     atol=1e-6)


def test_the_file_keeps_the_networks_ops_for_its_consumer_to_fold(rng):
    captured = capture(build("resnet_small"), [mskernel.Tensor(example("resnet_small", rng))])
    ops = [n.op_type for n in to_onnx(captured.graph, captured.weights).graph.node]
    assert ops.count("BatchNormalization") == ops.count("Conv") == 9
