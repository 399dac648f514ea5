"""The generic ``fold_batch_norm`` pass: a frozen batch norm after a conv or a matmul (with or
without a bias add) moves into the weights, the result agreeing with the reference; nothing
else is folded."""

import numpy as np
import pytest

from mskernel.ir import GraphBuilder, tensor_type
from mskernel.passes import PassContext, PassManager
from mskernel.passes.bn_folding import FOLD_BATCH_NORM
from mskernel.runtime.interpreter import run_graph
from mskernel.testing import random_array


def conv_bn_graph(parameters_as_constants):
    rng = np.random.default_rng(6)
    b = GraphBuilder("conv_bn")
    x = b.input(tensor_type("f32", (2, 3, 6, 6)), "x")
    w = b.input(tensor_type("f32", (4, 3, 3, 3)), "w")
    params = [rng.uniform(0.5, 1.5, 4).astype(np.float32) for _ in range(4)]
    if parameters_as_constants:
        values = [b.op("constant", value=p) for p in params]
    else:
        values = [b.input(tensor_type("f32", (4,)), name) for name in ("s", "b", "m", "v")]
    y = b.op("conv", x, w, padding=(1, 1, 1, 1))
    out, mean, var = b.op("batch_norm", y, *values, eps=1e-3)
    graph = b.build([b.op("relu", out), mean, var])
    arrays = [random_array(rng, (2, 3, 6, 6), "f32"), random_array(rng, (4, 3, 3, 3), "f32")]
    if not parameters_as_constants:
        arrays += params
    return graph, arrays


def fold_bn(graph, context):
    return PassManager([FOLD_BATCH_NORM]).run(graph, context).graph


@pytest.mark.parametrize("constants", [False, True])
def test_conv_batch_norm_folds_into_the_conv(checker, context, constants):
    graph, arrays = conv_bn_graph(constants)
    folded = fold_bn(graph, context)
    ops = [n.op for n in folded.nodes]
    assert "batch_norm" not in ops and ops.count("conv") == 1  # the old conv went with it
    for got, want in zip(run_graph(folded, arrays), run_graph(graph, arrays)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_o2_turns_frozen_parameters_into_constants(context):
    graph, arrays = conv_bn_graph(True)
    folded = PassManager.from_pipeline("O2").run(
        graph, PassContext(registry=context.registry, opt_level=2)).graph
    ops = sorted(n.op for n in folded.nodes)  # mean, var, the gain and the shift: constants
    assert ops == ["add", "constant", "constant", "constant", "constant", "conv", "mul", "relu"]
    for got, want in zip(run_graph(folded, arrays), run_graph(graph, arrays)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_folding_needs_a_conv_read_only_by_the_batch_norm(context):
    graph, _ = conv_bn_graph(False)
    b = GraphBuilder("shared_conv")
    x, w = (b.input(v.type, v.name) for v in graph.inputs[:2])
    params = [b.input(tensor_type("f32", (4,)), n) for n in "sbmv"]
    y = b.op("conv", x, w)
    out, _, _ = b.op("batch_norm", y, *params)
    shared = b.build([out, y])
    assert fold_bn(shared, context) is shared
    b2 = GraphBuilder("training")
    x2, w2 = (b2.input(v.type, v.name) for v in graph.inputs[:2])
    params2 = [b2.input(tensor_type("f32", (4,)), n) for n in "sbmv"]
    out2, _, _ = b2.op("batch_norm", b2.op("conv", x2, w2), *params2, training=True)
    training = b2.build([out2])
    assert fold_bn(training, context) is training


def test_half_precision_is_not_folded(context):
    b = GraphBuilder("half")
    x, w = b.input(tensor_type("f16", (2, 3, 4, 4))), b.input(tensor_type("f16", (4, 3, 1, 1)))
    params = [b.input(tensor_type("f16", (4,))) for _ in range(4)]
    out, _, _ = b.op("batch_norm", b.op("conv", x, w), *params)
    graph = b.build([out])
    assert fold_bn(graph, context) is graph


@pytest.mark.parametrize("with_bias", [False, True])
def test_matmul_batch_norm_folds_into_the_weight(context, with_bias):
    rng = np.random.default_rng(7)
    b = GraphBuilder("dense_bn")
    a = b.input(tensor_type("f64", (5, 3)), "a")
    w = b.input(tensor_type("f64", (3, 4)), "w")
    params = [b.input(tensor_type("f64", (4,)), n) for n in "sbmv"]
    y = b.op("matmul", a, w)
    if with_bias:
        y = b.op("add", b.input(tensor_type("f64", (4,)), "bias"), y)
    out, _, _ = b.op("batch_norm", y, *params)
    graph = b.build([out])
    folded = fold_bn(graph, context)
    assert "batch_norm" not in {n.op for n in folded.nodes}
    assert [n.op for n in folded.nodes].count("matmul") == 1
    arrays = [rng.uniform(0.5, 1.5, v.type.shape) for v in graph.inputs]
    np.testing.assert_allclose(run_graph(folded, arrays)[0], run_graph(graph, arrays)[0],
                               rtol=1e-12)


def test_folding_inside_a_region(context, region):
    t = tensor_type("f64", (5, 3))
    wt, pt = tensor_type("f64", (3, 4)), tensor_type("f64", (4,))

    def body(rb, a, w, s, bias, m, v):
        out, _, _ = rb.op("batch_norm", rb.op("matmul", a, w), s, bias, m, v)
        return (out,)

    then = region(body, t, wt, pt, pt, pt, pt)
    other = region(lambda rb, a, w, *p: (rb.op("matmul", a, w),), t, wt, pt, pt, pt, pt)
    b = GraphBuilder("branchy")
    pred = b.input(tensor_type("bool", ()))
    args = [b.input(x) for x in (t, wt, pt, pt, pt, pt)]
    (out,) = b.op("If", pred, *args, regions=(then, other))
    graph = b.build([out])
    folded = fold_bn(graph, context)
    assert "batch_norm" not in {n.op for n in folded.walk()}
    rng = np.random.default_rng(8)
    arrays = [np.array(True)] + [rng.uniform(0.5, 1.5, v.type.shape) for v in graph.inputs[1:]]
    np.testing.assert_allclose(run_graph(folded, arrays)[0], run_graph(graph, arrays)[0],
                               rtol=1e-12)
