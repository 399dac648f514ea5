"""The npfuse backend beyond the conformance kit: what its pass fuses, where nodes run, and
that fused graphs compute what the unfused ones do.

Agreement of every claimed op (``npfuse.dense`` included) with the reference semantics is
the kit's job: ``pytest --mskernel-backend npfuse``.
"""

import numpy as np
import pytest
from mskernel_npfuse.fusion import DENSE, PIPELINE
from mskernel_sdk import (
    CompileOptions, GraphBuilder, PassContext, PassManager, assert_close, compile_graph, dtype,
    op_registry, run_reference, tensor_type,
)


def layer(activation, *, bias_first=False, bias_shape=(3,), dt="f32"):
    """``activation(x @ w + b)`` (``None``: no activation), then a log-softmax."""
    b = GraphBuilder("layer")
    x = b.input(tensor_type(dt, (4, 8)), "x")
    w = b.input(tensor_type(dt, (8, 3)), "w")
    bias = b.input(tensor_type(dt, bias_shape), "b")
    product = b.op("matmul", x, w)
    out = b.op("add", *((bias, product) if bias_first else (product, bias)))
    if activation:
        out = b.op(activation, out)
    graph = b.build([b.op("log_softmax", out, axis=-1)])
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(v.type.shape).astype(v.type.dtype.storage) for v in graph.inputs]
    return graph, args


def fused_ops(graph):
    context = PassContext(registry=op_registry(), backend="npfuse")
    return [n.op for n in PassManager.from_pipeline(PIPELINE).run(graph, context).graph.nodes]


@pytest.mark.parametrize("activation", [None, "relu", "tanh"])
def test_matmul_bias_and_activation_become_one_dense_node(activation):
    graph, _ = layer(activation)
    assert fused_ops(graph) == [DENSE, "log_softmax"]


def test_bias_on_either_side_of_the_add_is_fused():
    graph, _ = layer("relu", bias_first=True)
    assert fused_ops(graph) == [DENSE, "log_softmax"]


def test_shapes_the_fused_op_does_not_take_are_left_alone():
    graph, _ = layer("relu", bias_shape=(4, 3))
    assert fused_ops(graph) == ["matmul", "add", "relu", "log_softmax"]


@pytest.mark.parametrize("activation", [None, "relu", "tanh"])
def test_fused_graph_equals_the_reference_and_unclaimed_ops_fall_back(activation):
    graph, args = layer(activation)
    compiled = compile_graph(graph, backends=["npfuse"], options=CompileOptions(fallback="allow"))
    placed = {p.node.op: p.backend for p in compiled.plan.placements}
    assert placed["matmul"] == placed["add"] == "npfuse"
    assert placed["log_softmax"] != "npfuse"
    (out,) = compiled(*args)
    assert_close(out, run_reference(graph, args)[0], dtype("f32"))


def test_a_dtype_it_does_not_claim_falls_back_entirely():
    graph, args = layer("relu", dt="f16")
    compiled = compile_graph(graph, backends=["npfuse"], options=CompileOptions(fallback="allow"))
    assert "npfuse" not in {p.backend for p in compiled.plan.placements}
    (out,) = compiled(*args)
    assert_close(out, run_reference(graph, args)[0], dtype("f16"))


def test_dense_refuses_mismatched_shapes_in_the_users_terms():
    b = GraphBuilder("bad")
    x, w = b.input(tensor_type("f32", (4, 8))), b.input(tensor_type("f32", (7, 3)))
    bias = b.input(tensor_type("f32", (3,)))
    with pytest.raises(TypeError, match=r"npfuse.dense.*expects x \[n, k\], w \[k, m\] and b"):
        b.op(DENSE, x, w, bias)
