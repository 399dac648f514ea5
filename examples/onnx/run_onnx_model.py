"""Run an ONNX model on mskernel through ONNX's standard backend API, beside onnxruntime.

    python examples/onnx/run_onnx_model.py [MODEL.onnx]

Without an argument the model is built here: a small network with a data-dependent ``If``
and a ``Loop`` with a scan output, which the importer turns into the core's structured
``If`` and ``While`` (the imported graph is printed).  With a file, its inputs are filled
with random values of the declared shapes.  Either way the outputs of
``mskernel_onnx.backend`` and ``onnxruntime.backend`` are compared.
"""

from __future__ import annotations

import sys

import numpy as np
import onnx
import onnxruntime.backend
from onnx import TensorProto, helper, numpy_helper

import mskernel_onnx.backend
from mskernel_onnx.importer import import_model


def demo_model() -> onnx.ModelProto:
    f, i64, b = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
    info = helper.make_tensor_value_info
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((4, 4)).astype(
        np.float32), "w")
    body = helper.make_graph(  # h <- tanh(h @ w), and every h kept
        [helper.make_node("MatMul", ["h", "w"], ["hw"]), helper.make_node("Tanh", ["hw"], ["h2"]),
         helper.make_node("Identity", ["cond"], ["cond2"]),
         helper.make_node("Identity", ["h2"], ["seen"])],
        "step", [info("i", i64, []), info("cond", b, []), info("h", f, [2, 4])],
        [info("cond2", b, []), info("h2", f, [2, 4]), info("seen", f, [2, 4])])
    positive = helper.make_graph([helper.make_node("Relu", ["x"], ["r"])], "positive", [],
                                 [info("r", f, [2, 4])])
    negative = helper.make_graph([helper.make_node("Neg", ["x"], ["n"])], "negative", [],
                                 [info("n", f, [2, 4])])
    nodes = [
        helper.make_node("ReduceMean", ["x"], ["m"], keepdims=0),
        helper.make_node("Greater", ["m", "zero"], ["up"]),
        helper.make_node("If", ["up"], ["start"], then_branch=positive, else_branch=negative),
        helper.make_node("Loop", ["steps", "", "start"], ["last", "trace"], body=body),
    ]
    graph = helper.make_graph(
        nodes, "demo", [info("x", f, [2, 4])], [info("last", f, [2, 4]), info("trace", f,
                                                                              [3, 2, 4])],
        [w, numpy_helper.from_array(np.array(0, np.float32), "zero"),
         numpy_helper.from_array(np.array(3, np.int64), "steps")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def random_inputs(model: onnx.ModelProto) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    initializers = {t.name for t in model.graph.initializer}
    feeds = []
    for info in model.graph.input:
        if info.name in initializers:
            continue
        t = info.type.tensor_type
        shape = [d.dim_value or 1 for d in t.shape.dim]
        dt = helper.tensor_dtype_to_np_dtype(t.elem_type)
        feeds.append(rng.standard_normal(shape).astype(dt))
    return feeds


def main(argv: list[str]) -> None:
    model = onnx.load(argv[0]) if argv else demo_model()
    if not argv:
        print(import_model(model).graph)
    inputs = random_inputs(model)
    ours = mskernel_onnx.backend.prepare(model).run(inputs)
    theirs = onnxruntime.backend.prepare(model).run(inputs)
    for name, a, b in zip([o.name for o in model.graph.output], ours, theirs):
        print(f"{name}: shape {list(a.shape)}, max |mskernel - onnxruntime| = "
              f"{np.abs(a - b).max():.2e}")
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


if __name__ == "__main__":
    main(sys.argv[1:])
