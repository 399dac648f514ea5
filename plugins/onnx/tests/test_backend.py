"""``mskernel_onnx.backend``: ONNX's backend interface (the node suite exercises ``prepare``
and ``run``; here the rest of the interface and the per-value compilation)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import mskernel_onnx.backend as backend
from onnx_models import model, tensor


def test_run_node_runs_one_node_of_any_domain():
    relu = helper.make_node("Relu", ["x"], ["y"])
    (y,) = backend.run_node(relu, [np.array([-1.0, 2.0], np.float32)])
    np.testing.assert_array_equal(y, [0.0, 2.0])
    binarizer = helper.make_node("Binarizer", ["x"], ["y"], domain="ai.onnx.ml", threshold=0.5)
    (y,) = backend.run_node(binarizer, {"x": np.array([0.1, 2.0], np.float32)})
    np.testing.assert_array_equal(y, [0.0, 1.0])


def test_run_model_from_a_file_with_named_outputs(tmp_path):
    m = model([helper.make_node("Add", ["a", "b"], ["sum"]),
               helper.make_node("Mul", ["a", "b"], ["product"])],
              [tensor("a", [2]), tensor("b", [2])], [tensor("sum", [2]), tensor("product", [2])])
    path = tmp_path / "m.onnx"
    path.write_bytes(m.SerializeToString())
    outputs = backend.run_model(str(path), {"a": np.array([1, 2], np.float32),
                                            "b": np.array([3, 4], np.float32)})
    np.testing.assert_array_equal(outputs["sum"], [4, 6])
    np.testing.assert_array_equal(outputs.product, [3, 8])


def test_an_input_that_decides_a_shape_compiles_once_per_value():
    m = model([helper.make_node("Reshape", ["x", "shape"], ["y"])],
              [tensor("x", [2, 6]), tensor("shape", [2], TensorProto.INT64)], [tensor("y", None)])
    rep = backend.prepare(m)
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    for target in ([3, 4], [4, 3], [3, 4]):
        (y,) = rep.run([x, np.array(target)])
        assert y.shape == tuple(target)
    assert rep.static == {"shape"}
    assert len(rep._cache) == 2


def test_bfloat16_goes_in_and_out_as_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    m = model([helper.make_node("Add", ["x", "x"], ["y"])], [tensor("x", [3], TensorProto.BFLOAT16)],
              [tensor("y", [3], TensorProto.BFLOAT16)])
    x = np.array([1.5, -2.0, 3.25], ml_dtypes.bfloat16)
    (y,) = backend.prepare(m).run([x])
    assert y.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(y.astype(np.float32), [3.0, -4.0, 6.5])


def test_only_the_cpu_device_is_supported():
    assert backend.supports_device("CPU") and not backend.supports_device("CUDA")
    with pytest.raises(ValueError, match="runs on CPU"):
        backend.prepare(model([], [], []), "CUDA")
