"""Common subexpression elimination: what merges and what must not."""

import numpy as np

from mskernel.ir import TOKEN, GraphBuilder, RefType, tensor_type
from mskernel.passes import CommonSubexpressionElimination

CSE = CommonSubexpressionElimination()
F32 = tensor_type("f32", (2, 3))


def ops_of(graph):
    return [n.op for n in graph.nodes]


def test_merges_equal_nodes_and_their_users(checker):
    b = GraphBuilder()
    x, y = b.input(F32), b.input(F32)
    first = b.op("exp", b.op("add", x, y))
    second = b.op("exp", b.op("add", x, y))
    result = checker.apply(CSE, b.build([b.op("sub", first, second)]))
    sub = result.graph.nodes[-1]
    assert sub.inputs[0] is sub.inputs[1] is first
    assert ops_of(result.graph) == ["add", "exp", "sub"]


def test_commutative_ops_match_with_swapped_inputs(checker):
    b = GraphBuilder()
    x, y = b.input(F32), b.input(F32)
    outputs = [b.op("mul", x, y), b.op("mul", y, x), b.op("sub", x, y), b.op("sub", y, x)]
    result = checker.apply(CSE, b.build(outputs))
    merged = result.graph.outputs
    assert merged[0] is merged[1]
    assert merged[2] is not merged[3]


def test_commutative_swap_keeps_the_broadcast_type(checker):
    b = GraphBuilder()
    x, y = b.input(tensor_type("f32", (2, 1))), b.input(tensor_type("f32", (3,)))
    result = checker.apply(CSE, b.build([b.op("add", x, y), b.op("add", y, x)]))
    assert result.graph.outputs[0] is result.graph.outputs[1]


def test_attributes_must_be_equal(checker):
    b = GraphBuilder()
    x = b.input(F32)
    c1 = b.op("constant", value=np.arange(6, dtype=np.float32).reshape(2, 3))
    c2 = b.op("constant", value=np.arange(6, dtype=np.float32).reshape(2, 3))
    c3 = b.op("constant", value=np.ones((2, 3), np.float32))
    t1 = b.op("transpose", x, perm=(1, 0))
    t2 = b.op("transpose", x, perm=None)
    r1 = b.op("reshape", x, shape=(3, 2))
    outputs = [c1, c2, c3, t1, t2, r1]
    result = checker.apply(CSE, b.build(outputs))
    out = result.graph.outputs
    assert out[0] is out[1] and out[0] is not out[2]
    assert out[3] is not out[4] and out[3] is not out[5]  # perm (1, 0) and None are spelled apart


def test_never_merges_effects(checker):
    b = GraphBuilder()
    ref, token = b.input(RefType(F32)), b.input(TOKEN)
    # Two loads after the same token would break token linearity; CSE must still not merge them.
    first, _ = b.op("ref_load", ref, token)
    second, _ = b.op("ref_load", ref, token)
    g = b.build([first, second])
    result = CSE.run(g, checker.context)
    assert result.graph is g and not result.changed


def test_merges_draws_from_the_same_key(checker):
    b = GraphBuilder()
    key = b.op("random_key", seed=7)
    draws = [b.op("random_normal", key, shape=(4,)) for _ in range(2)]
    other = b.op("random_normal", b.op("random_key", seed=8), shape=(4,))
    result = checker.apply(CSE, b.build([*draws, other]))
    out = result.graph.outputs
    assert out[0] is out[1] and out[0] is not out[2]


def test_regions_are_scopes_of_their_own(checker, region):
    zeros = np.zeros((2, 3), np.float32)

    def branch(b, x):
        inner = [b.op("add", x, b.op("constant", value=zeros)) for _ in range(2)]
        return (b.op("mul", *inner),)

    b = GraphBuilder()
    pred, x = b.input(tensor_type("bool", ())), b.input(F32)
    outer = b.op("constant", value=zeros)
    (first,) = b.op("If", pred, x, regions=(region(branch, F32), region(branch, F32)))
    (second,) = b.op("If", pred, x, regions=(region(branch, F32), region(branch, F32)))
    result = checker.apply(CSE, b.build([first, second, outer]))
    graph = result.graph
    assert graph.outputs[0] is not graph.outputs[1]  # region owners are never merged
    mul = graph.nodes[1].regions[0].nodes[-1]
    assert mul.inputs[0] is mul.inputs[1]
    # the region's constant equals the outer one, but regions are closed: it stays inside
    assert ops_of(graph.nodes[1].regions[0]) == ["constant", "add", "mul"]


def test_signed_zero_constants_are_not_merged():
    from mskernel.ir import GraphBuilder
    from mskernel.passes import PassManager
    from mskernel.runtime.interpreter import run_graph

    b = GraphBuilder()
    one = b.op("full", shape=(), value=1.0, dtype="f32")
    pos = b.op("div", one, b.op("full", shape=(), value=0.0, dtype="f32"))
    neg = b.op("div", one, b.op("full", shape=(), value=-0.0, dtype="f32"))
    graph = b.build([pos, neg])
    out = run_graph(PassManager.from_pipeline("O2").run(graph).graph, [])
    assert out[0] == float("inf") and out[1] == float("-inf")
