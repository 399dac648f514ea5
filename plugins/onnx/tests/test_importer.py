"""ONNX → IR: what the import produces (regions for control flow, weights as named inputs,
static inputs), checked against onnxruntime, and the errors it gives."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from mskernel_onnx.errors import NeedsValue, OnnxFileError, OnnxImportError
from mskernel_onnx.importer import import_model
from onnx_models import model, tensor

F = TensorProto.FLOAT


def onnxruntime_outputs(m, feeds):
    session = onnxruntime.InferenceSession(m.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def assert_like_onnxruntime(m, feeds, **import_options):
    imported = import_model(m, **import_options)
    ours = imported.compile()(*[feeds[p.name] for p in imported.inputs])
    for got, want in zip(ours, onnxruntime_outputs(m, feeds)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    return imported


# --- what the import builds ---------------------------------------------------------------------


def test_a_small_network_matches_onnxruntime_and_keeps_weights_as_named_inputs():
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "conv.w")
    b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "conv.b")
    shape = numpy_helper.from_array(np.array([2, -1], np.int64), "shape")
    m = model([helper.make_node("Conv", ["x", "conv.w", "conv.b"], ["c"], pads=[1, 1, 1, 1]),
               helper.make_node("Relu", ["c"], ["r"]),
               helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
               helper.make_node("Reshape", ["p", "shape"], ["y"])],
              [tensor("x", [2, 3, 8, 8])], [tensor("y", [2, 64])], [w, b, shape])
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    imported = assert_like_onnxruntime(m, {"x": x})
    assert list(imported.weights) == ["conv.w", "conv.b"]  # the int64 shape is a constant
    assert [v.name for v in imported.graph.inputs] == ["x", "conv.w", "conv.b"]
    assert {n.op for n in imported.graph.nodes} == {"conv", "add", "relu", "max_pool",
                                                    "reshape"}


def test_an_if_on_a_runtime_condition_becomes_a_core_if_with_closed_regions():
    then = helper.make_graph([helper.make_node("Add", ["x", "x"], ["t"])], "then", [],
                             [tensor("t", [3])])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                              [tensor("e", [3])])
    m = model([helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
               helper.make_node("Greater", ["s", "zero"], ["c"]),
               helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
              [tensor("x", [3])], [tensor("y", [3])],
              [numpy_helper.from_array(np.array(0, np.float32), "zero")])
    imported = import_model(m)
    (node,) = [n for n in imported.graph.nodes if n.op == "If"]
    assert all(len(r.inputs) == 1 for r in node.regions)  # x passed in explicitly
    for x in (np.array([1, 2, 3], np.float32), np.array([-1, -2, 0], np.float32)):
        assert_like_onnxruntime(m, {"x": x})


def test_a_loop_with_scan_outputs_becomes_a_while():
    body = helper.make_graph(
        [helper.make_node("Add", ["acc", "x"], ["acc_out"]),
         helper.make_node("Identity", ["cond"], ["cond_out"]),
         helper.make_node("Mul", ["acc_out", "acc_out"], ["sq"])],
        "body", [tensor("i", [], TensorProto.INT64), tensor("cond", [], TensorProto.BOOL),
                 tensor("acc", [2])],
        [tensor("cond_out", [], TensorProto.BOOL), tensor("acc_out", [2]), tensor("sq", [2])])
    trips = numpy_helper.from_array(np.array(4, np.int64), "trips")
    m = model([helper.make_node("Loop", ["trips", "", "a0"], ["final", "squares"], body=body)],
              [tensor("a0", [2]), tensor("x", [2])], [tensor("final", [2]), tensor("squares",
                                                                                 [4, 2])],
              [trips])
    imported = assert_like_onnxruntime(m, {"a0": np.array([1, 2], np.float32),
                                           "x": np.array([0.5, -1], np.float32)})
    assert [n.op for n in imported.graph.nodes if n.regions] == ["While"]


def test_a_scan_in_reverse_becomes_a_while():
    body = helper.make_graph([helper.make_node("Add", ["s", "v"], ["s2"]),
                              helper.make_node("Identity", ["s2"], ["o"])],
                             "body", [tensor("s", [2]), tensor("v", [2])],
                             [tensor("s2", [2]), tensor("o", [2])])
    m = model([helper.make_node("Scan", ["init", "xs"], ["last", "all"], body=body,
                                num_scan_inputs=1, scan_input_directions=[1])],
              [tensor("init", [2]), tensor("xs", [5, 2])], [tensor("last", [2]),
                                                            tensor("all", [5, 2])])
    xs = np.arange(10, dtype=np.float32).reshape(5, 2)
    assert_like_onnxruntime(m, {"init": np.zeros(2, np.float32), "xs": xs})


def test_a_shape_taken_from_an_input_needs_a_static_input():
    m = model([helper.make_node("Reshape", ["x", "shape"], ["y"])],
              [tensor("x", [2, 6]), tensor("shape", [2], TensorProto.INT64)], [tensor("y", None)])
    with pytest.raises(NeedsValue, match="static_inputs") as caught:
        import_model(m)
    assert caught.value.inputs == ("shape",)
    imported = import_model(m, static_inputs={"shape": np.array([3, 4])})
    assert [p.name for p in imported.inputs] == ["x"]
    assert imported.graph.outputs[0].type.shape == (3, 4)


def test_open_dims_take_their_types_from_input_types():
    from mskernel_sdk import tensor_type

    m = model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", ["N", 4])],
              [tensor("y", ["N", 4])])
    with pytest.raises(OnnxImportError, match="dimension 'N' without a value"):
        import_model(m)
    imported = import_model(m, input_types={"x": tensor_type("f32", (7, 4))})
    assert imported.graph.outputs[0].type.shape == (7, 4)


def test_constants_computed_from_shapes_are_folded_away():
    m = model([helper.make_node("Shape", ["x"], ["s"]),
               helper.make_node("Gather", ["s", "one"], ["n"], axis=0),
               helper.make_node("Unsqueeze", ["n", "zero"], ["n1"]),
               helper.make_node("Concat", ["minus", "n1"], ["target"], axis=0),
               helper.make_node("Reshape", ["x", "target"], ["y"])],
              [tensor("x", [2, 3, 4])], [tensor("y", None)],
              [numpy_helper.from_array(np.array(1, np.int64), "one"),
               numpy_helper.from_array(np.array([0], np.int64), "zero"),
               numpy_helper.from_array(np.array([-1], np.int64), "minus")])
    imported = import_model(m)
    assert [n.op for n in imported.graph.nodes] == ["reshape"]
    assert imported.graph.outputs[0].type.shape == (8, 3)


def test_a_model_function_is_expanded():
    function = helper.make_function("local", "Double", ["a"], ["b"],
                                    [helper.make_node("Add", ["a", "a"], ["b"])],
                                    [helper.make_opsetid("", 18)])
    m = model([helper.make_node("Double", ["x"], ["y"], domain="local")],
              [tensor("x", [2])], [tensor("y", [2])], functions=[function])
    m.opset_import.extend([helper.make_opsetid("local", 1)])
    imported = import_model(m)
    np.testing.assert_array_equal(imported.compile()(np.array([1, 2], np.float32))[0], [2, 4])


# --- errors name the node, op and opset --------------------------------------------------------


def test_an_unknown_op_names_node_op_and_opset():
    m = model([helper.make_node("FooBar", ["x"], ["y"], name="mystery")], [tensor("x", [2])],
              [tensor("y", [2])])
    with pytest.raises(OnnxImportError, match=r"ONNX node 'mystery' \(FooBar, opset 18\): no "
                                              r"op 'FooBar'"):
        import_model(m)


def test_an_op_without_translation_names_node_op_and_opset():
    m = model([helper.make_node("BitCast", ["x"], ["y"], name="bits", to=TensorProto.INT32)],
              [tensor("x", [2])], [tensor("y", [2], TensorProto.INT32)], opset=26)
    with pytest.raises(OnnxImportError, match=r"ONNX node 'bits' \(BitCast, opset 26\): the "
                                              r"op has no translation"):
        import_model(m)


def test_a_bad_attribute_names_the_node():
    m = model([helper.make_node("Transpose", ["x"], ["y"], name="t", perm=[0, 0])],
              [tensor("x", [2, 3])], [tensor("y", [3, 2])])
    with pytest.raises(OnnxImportError, match=r"ONNX node 't' \(Transpose, opset 18\)"):
        import_model(m)


def test_a_dtype_mskernel_lacks_is_named():
    m = model([helper.make_node("Identity", ["x"], ["y"])],
              [tensor("x", [2], TensorProto.STRING)], [tensor("y", [2], TensorProto.STRING)])
    with pytest.raises(OnnxFileError, match="ONNX element type STRING has no mskernel dtype"):
        import_model(m)


def test_an_opset_beyond_the_known_ones_is_refused():
    m = model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", [2])], [tensor("y", [2])],
              opset=onnx.defs.onnx_opset_version() + 1)
    with pytest.raises(OnnxImportError, match="opset"):
        import_model(m)


def test_a_name_used_before_it_is_defined_is_an_error():
    m = model([helper.make_node("Relu", ["later"], ["y"]),
               helper.make_node("Relu", ["x"], ["later"])],
              [tensor("x", [2])], [tensor("y", [2])])
    with pytest.raises(OnnxImportError, match="'later' is not defined before it is used"):
        import_model(m)


def test_a_cast_to_a_dtype_mskernel_lacks_names_the_node():
    m = model([helper.make_node("Cast", ["x"], ["y"], name="to8", to=TensorProto.FLOAT8E4M3FN)],
              [tensor("x", [2])], [tensor("y", [2], TensorProto.FLOAT8E4M3FN)], opset=19)
    with pytest.raises(OnnxFileError, match=r"ONNX node 'to8' \(Cast, opset 19\): ONNX element "
                                            r"type FLOAT8E4M3FN has no mskernel dtype"):
        import_model(m)


def test_an_initializer_read_as_a_constant_is_not_a_weight():
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    m = model([helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest")],
              [tensor("x", [1, 1, 2, 2])], [tensor("y", [1, 1, 4, 4])], [scales])
    imported = assert_like_onnxruntime(m, {"x": np.arange(4, dtype=np.float32).reshape(
        1, 1, 2, 2)})
    assert imported.weights == {}
    assert [v.name for v in imported.graph.inputs] == ["x"]
