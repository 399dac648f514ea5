"""Round trips through ONNX keep a model's outputs.

- ONNX → mskernel → ONNX: the anchor models written in PyTorch (LeNet-5, the MLP,
  resnet_small, the transformer encoder layer, from ``benchmarks/workloads``) exported by
  ``torch.onnx.export``, imported, exported again: the second file passes ONNX's checker
  with strict shape inference, keeps the ``state_dict`` names of the weights, and gives
  PyTorch's outputs under ONNX Runtime and when imported once more.
- mskernel → ONNX → mskernel: the same anchors written in mskernel, a jitted function with a
  tensor-dependent ``if`` and a ``while``, and a cell whose branches and loop read its
  parameters, exported and imported back: the imported graph gives the network's outputs.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch

import mskernel
from mskernel_onnx.capture import capture
from mskernel_onnx.export import check_onnx, to_onnx
from mskernel_onnx.importer import ImportedModel, import_model
from mskernel_onnx.migration import torch_to_onnx
from mskernel_sdk import assert_close, dtype
from models import ANCHORS, Gate, branchy, build, example, float32_tolerance
from onnx_checks import run_ort
from torch_helpers import randomise_batch_norm
from workloads import torch_models
from workloads.spec import WORKLOADS

F32 = dtype("float32")

#: anchor name → its PyTorch builder (shapes and tolerances: ``models.ANCHORS``)
TORCH_ANCHORS = {"lenet": torch_models.LeNet5,
                 "mlp": lambda: torch_models.mlp(WORKLOADS["mlp_b128"]),
                 "resnet_small": torch_models.ResNetSmall,
                 "transformer": torch_models.transformer}


def reexport(imported: ImportedModel) -> onnx.ModelProto:
    """The imported graph written as ONNX again, its weights as initializers."""
    return to_onnx(imported.graph, imported.weights, weight_dtypes=imported.weight_dtypes())


def run_imported(model: onnx.ModelProto, *inputs: np.ndarray) -> list[np.ndarray]:
    return import_model(model).compile()(*inputs)


# --- ONNX → mskernel → ONNX ---------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(TORCH_ANCHORS))
def test_a_torch_model_keeps_its_outputs_through_import_and_export(name, rng):
    torch.manual_seed(0)
    module = TORCH_ANCHORS[name]().eval()
    randomise_batch_norm(module)
    x = example(name, rng)
    with torch.no_grad():
        expected = module(torch.from_numpy(x)).numpy()
    tolerance = float32_tolerance(name, expected)

    imported = import_model(torch_to_onnx(module, [torch.from_numpy(x)]),
                            weight_names=set(module.state_dict()))
    model = reexport(imported)
    check_onnx(model)
    assert {t.name for t in model.graph.initializer} >= set(imported.weights)
    assert set(imported.weights) == {k for k in module.state_dict()
                                     if not k.endswith("num_batches_tracked")}
    (got,) = run_ort(model, [x])
    assert_close(got, expected, F32, what=f"{name} under ONNX Runtime", **tolerance)
    (again,) = run_imported(model, x)
    assert_close(again, expected, F32, what=f"{name} imported again", **tolerance)


# --- mskernel → ONNX → mskernel -----------------------------------------------------------------


@pytest.fixture(scope="module")
def reference():
    with mskernel.device("reference"):
        yield


@pytest.mark.parametrize("name", sorted(ANCHORS))
def test_an_mskernel_network_keeps_its_outputs_through_export_and_import(name, rng,
                                                                         reference):
    net = build(name)
    x = example(name, rng)
    expected = net(mskernel.Tensor(x)).numpy()
    captured = capture(net, [mskernel.Tensor(x)])
    model = to_onnx(captured.graph, captured.weights, weight_dtypes=captured.weight_dtypes)
    imported = import_model(model)
    assert list(imported.weights) == [name for name, _ in net.parameters_and_names()]
    (got,) = imported.compile()(x)
    assert_close(got, expected, F32, what=name, **float32_tolerance(name, expected))


def test_if_and_while_come_back_as_regions(rng):
    x = rng.standard_normal((2, 3)).astype(np.float32)
    captured = capture(branchy, [mskernel.Tensor(x), mskernel.Tensor(np.array(3))])
    imported = import_model(to_onnx(captured.graph))
    assert {"If", "While"} <= {n.op for n in imported.graph.nodes}
    run = imported.compile()
    for sign, trips in ((1, 3), (-1, 0), (-1, 5)):
        arguments = [sign * np.abs(x), np.array(trips)]
        expected = branchy(*(mskernel.Tensor(a) for a in arguments))
        for got, want in zip(run(*arguments), expected):
            assert_close(got, want.numpy(), dtype(str(got.dtype)),
                         what=f"x sign {sign}, n={trips}")


def test_parameters_read_in_branches_and_loops_come_back_as_weights(rng):
    net = Gate()
    x = np.abs(rng.standard_normal((2, 4))).astype(np.float32)
    captured = capture(net, [mskernel.Tensor(x)])
    imported = import_model(to_onnx(captured.graph, captured.weights))
    assert set(imported.weights) == {"scale", "fc.weight", "fc.bias"}
    run = imported.compile()
    for sign in (1, -1):
        (got,) = run(sign * x)
        assert_close(got, net(mskernel.Tensor(sign * x)).numpy(), F32, rtol=1e-6, atol=1e-6)
