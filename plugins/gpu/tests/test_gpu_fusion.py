"""Fusion decisions of ``gpu.fuse`` and that fused graphs compute what the unfused ones do
(the fused op's reference semantics run its region)."""

from __future__ import annotations

import numpy as np
import pytest

from mskernel.hooks.host import host
from mskernel_sdk import (
    GraphBuilder, PassContext, assert_close, dtype, op_registry, random_array, run_reference,
    samples_for, tensor_type, verify,
)

from mskernel_gpu.fused_op import FUSED_OP
from mskernel_gpu.fusion import FUSE


@pytest.fixture(autouse=True)
def plugins():
    host().load_external()


def fuse(graph):
    return FUSE.run(graph, PassContext(registry=op_registry())).graph


def ops(graph):
    return [n.op for n in graph.nodes]


def same_results(graph, fused, *shapes, dt="float32"):
    rng = np.random.default_rng(0)
    args = [random_array(rng, s, dt) for s in shapes]
    for got, want in zip(run_reference(fused, args), run_reference(graph, args)):
        assert_close(got, want, dtype(dt))


def test_a_chain_with_a_broadcast_operand_becomes_one_kernel():
    b = GraphBuilder("chain")
    x = b.input(tensor_type("f32", (8, 16)), "x")
    bias = b.input(tensor_type("f32", (16,)), "bias")
    y = b.op("tanh", b.op("mul", b.op("add", x, bias), x))
    graph = b.build([b.op("exp", y)])
    fused = fuse(graph)
    verify(fused)
    assert ops(fused) == [FUSED_OP]
    (node,) = fused.nodes
    assert [v.type.shape for v in node.inputs] == [(8, 16), (16,)]  # bias read by broadcast
    assert ops(node.regions[0]) == ["add", "mul", "tanh", "exp"]
    same_results(graph, fused, (8, 16), (16,))


def test_an_intermediate_read_elsewhere_stays_in_memory():
    b = GraphBuilder("shared")
    x = b.input(tensor_type("f32", (4, 4)), "x")
    e = b.op("exp", b.op("neg", x))
    graph = b.build([b.op("add", e, x), b.op("mul", e, e)])
    fused = fuse(graph)
    assert ops(fused) == [FUSED_OP, "add", "mul"]  # neg and exp in one kernel, e kept
    assert ops(fused.nodes[0].regions[0]) == ["neg", "exp"]
    same_results(graph, fused, (4, 4))


def test_softmax_fuses_its_reductions_with_the_elementwise_work():
    b = GraphBuilder("softmax")
    x = b.input(tensor_type("f32", (6, 10)), "x")
    graph = b.build([b.op("softmax", x, axis=-1)])
    expanded = host().ops.get("softmax")  # the decomposition the backend runs
    assert expanded is not None
    from mskernel_sdk import CompileOptions, run_pipeline

    decomposed = run_pipeline("gpu.O2", _decomposed(graph), CompileOptions(), backend="gpu").graph
    kinds = [(n.op, n.attrs.get("reduce")) for n in decomposed.nodes]
    assert (FUSED_OP, "sum") in kinds  # exp(x - max) is summed as it is computed
    same_results(graph, decomposed, (6, 10))


def _decomposed(graph):
    """``graph`` with the composites the gpu backend does not claim expanded, as the
    partitioner does."""
    from mskernel_gpu.backend import GpuBackend

    claimed = GpuBackend().capabilities()
    b = GraphBuilder(graph.name)
    env = {v: b.input(v.type, v.name) for v in graph.inputs}

    def emit(op, *inputs, **attrs):
        opdef = op_registry().get(op)
        if op in claimed or opdef.decomposition is None:
            return b.op(op, *inputs, **attrs)
        return opdef.decomposition(_Emitter(), *inputs, **attrs)

    class _Emitter:
        def op(self, op, *inputs, **attrs):
            return emit(op, *inputs, **attrs)

    for node in graph.nodes:
        outs = emit(node.op, *[env[v] for v in node.inputs], **node.attrs)
        env.update(zip(node.outputs, outs if isinstance(outs, (tuple, list)) else (outs,)))
    return b.build([env[v] for v in graph.outputs])


def test_a_reduction_over_leading_axes_is_left_to_its_library_kernel():
    b = GraphBuilder("columns")
    x = b.input(tensor_type("f32", (5, 7)), "x")
    graph = b.build([b.op("sum", b.op("exp", x), axes=(0,))])
    assert ops(fuse(graph)) == ["exp", "sum"]


def test_integers_fuse_without_reductions():
    b = GraphBuilder("ints")
    x, y = (b.input(tensor_type("i32", (3, 3)), n) for n in "xy")
    graph = b.build([b.op("sum", b.op("maximum", b.op("mul", x, y), b.op("add", x, y)),
                          axes=(1,))])
    fused = fuse(graph)
    assert ops(fused) == [FUSED_OP, "sum"]
    same_results(graph, fused, (3, 3), (3, 3), dt="int32")


def test_fused_samples_agree_with_their_unfused_regions():
    for sample in samples_for(FUSED_OP):
        (region,) = sample.regions
        (value,) = run_reference(region, list(sample.args))
        assert value.shape == region.outputs[0].type.shape


def test_forged_regions_are_refused():
    b = GraphBuilder("bad")
    x = b.input(tensor_type("f32", (1,)), "x")
    region = b.build([b.op("sum", x, axes=(0,), keepdims=True)])  # not elementwise
    node_type = op_registry().get(FUSED_OP)
    with pytest.raises(Exception, match="not an op the generated kernel computes"):
        node_type.infer_types([tensor_type("f32", (1,))],
                              node_type.bind_attrs({"reduce": "none", "inner": 0}),
                              regions=(region,))


def test_matmul_bias_relu_becomes_one_gemm_with_its_epilogue():
    from mskernel_sdk import CompileOptions, run_pipeline

    b = GraphBuilder("dense")
    x = b.input(tensor_type("f32", (8, 4)), "x")
    w = b.input(tensor_type("f32", (4, 3)), "w")
    bias = b.input(tensor_type("f32", (3,)), "bias")
    graph = b.build([b.op("relu", b.op("add", b.op("matmul", x, w), bias))])
    fused = run_pipeline("gpu.O2", graph, CompileOptions(), backend="gpu").graph
    assert [(n.op, n.attrs.get("activation")) for n in fused.nodes] == [
        ("gpu.matmul_bias_act", "relu")]
    same_results(graph, fused, (8, 4), (4, 3), (3,))


def test_a_product_read_twice_keeps_its_own_gemm():
    from mskernel_sdk import CompileOptions, run_pipeline

    b = GraphBuilder("dense")
    x = b.input(tensor_type("f32", (8, 4)), "x")
    w = b.input(tensor_type("f32", (4, 3)), "w")
    bias = b.input(tensor_type("f32", (3,)), "bias")
    y = b.op("matmul", x, w)
    graph = b.build([b.op("add", y, bias), y])
    fused = run_pipeline("gpu.O2", graph, CompileOptions(), backend="gpu").graph
    assert ops(fused) == ["matmul", "add"]


def weight_gradient_graph(groups):
    """The cotangent of w in conv(x, w) as mskernel-autodiff writes it."""
    b = GraphBuilder("wgrad")
    x = b.input(tensor_type("f32", (2, 4, 9, 9)), "x")
    g = b.input(tensor_type("f32", (2, 8, 5, 5)), "g")
    per = 4 // groups
    xs = b.op("reshape", x, shape=(2, groups, per, 9, 9))
    xs = b.op("transpose", xs, perm=(2, 1, 0, 3, 4))
    xs = b.op("reshape", xs, shape=(per, groups * 2, 9, 9))
    taps = b.op("conv", xs, b.op("transpose", g, perm=(1, 0, 2, 3)), stride=(1, 1),
                padding=(1, 1, 1, 1), dilation=(2, 2), groups=groups)
    return b.build([b.op("transpose", taps, perm=(1, 0, 2, 3))])


@pytest.mark.parametrize("groups", [1, 2])
def test_a_convolutions_weight_gradient_becomes_one_backward_filter(groups):
    from mskernel_sdk import CompileOptions, run_pipeline

    graph = weight_gradient_graph(groups)
    fused = run_pipeline("gpu.O2", graph, CompileOptions(), backend="gpu").graph
    (node,) = fused.nodes
    assert node.op == "gpu.conv_wgrad"
    assert dict(node.attrs, kernel=tuple(node.attrs["kernel"])) == dict(
        stride=(2, 2), padding=(1, 1, 1, 1), dilation=(1, 1), groups=groups, kernel=(3, 3))
    same_results(graph, fused, (2, 4, 9, 9), (2, 8, 5, 5))


def test_the_weight_gradient_of_autodiff_is_recognised():
    autodiff = pytest.importorskip("mskernel_autodiff")
    del autodiff
    import mskernel
    from mskernel_sdk import CompileOptions, run_pipeline

    w = mskernel.Tensor(np.ones((8, 4, 3, 3), np.float32))
    x = mskernel.Tensor(np.ones((2, 4, 9, 9), np.float32))

    def loss(w, x):
        y = mskernel.ops.conv2d(x, w, stride=2, padding=1)
        return (y * y).sum()

    lowered = mskernel.jit(mskernel.grad(loss)).lower(w, x)
    fused = run_pipeline("gpu.O2", lowered.optimized_graph, CompileOptions(), backend="gpu")
    assert "gpu.conv_wgrad" in ops(fused.graph)
