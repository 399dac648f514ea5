"""Constant folding: what is evaluated at compile time, and what is left for run time."""

import numpy as np
import pytest

from mskernel.ir import GraphBuilder, tensor_type
from mskernel.ir.dtypes import round_to_bfloat16
from mskernel.passes import ConstantFolding
from mskernel.runtime.interpreter import run_graph

FOLD = ConstantFolding()


def ops_of(graph):
    return [n.op for n in graph.nodes]


def test_folds_a_chain_of_constants_into_one_constant(checker):
    b = GraphBuilder()
    x = b.input(tensor_type("f32", (2, 3)))
    c = b.op("constant", value=np.arange(6, dtype=np.float32).reshape(2, 3))
    ones = b.op("full", shape=(2, 3), value=1.0, dtype="f32")
    folded = b.op("exp", b.op("add", c, ones))
    result = checker.apply(FOLD, b.build([b.op("mul", x, folded)]))
    graph = result.graph
    # the sources stay (dce removes them); add and exp became constants
    assert ops_of(graph) == ["constant", "full", "constant", "constant", "mul"]
    np.testing.assert_array_equal(graph.nodes[3].attrs["value"],
                                  np.exp(np.arange(6, dtype=np.float32).reshape(2, 3) + 1))
    assert graph.nodes[-1].inputs[1] is graph.nodes[3].output


def test_iota_and_shape_ops_fold(checker):
    b = GraphBuilder()
    iota = b.op("iota", shape=(2, 3), axis=1, dtype="i32")
    moved = b.op("reshape", b.op("transpose", iota, perm=(1, 0)), shape=(6,))
    result = checker.apply(FOLD, b.build([moved]))
    out = result.graph.nodes[-1]
    assert out.op == "constant"
    np.testing.assert_array_equal(out.attrs["value"], [0, 0, 1, 1, 2, 2])


def test_sources_alone_are_not_rewritten(checker):
    b = GraphBuilder()
    g = b.build([b.op("full", shape=(1000,), value=2.0, dtype="f32"),
                 b.op("iota", shape=(5,), axis=0, dtype="f32")])
    result = checker.apply(FOLD, g)
    assert result.graph is g


def test_bfloat16_results_keep_their_declared_dtype(checker):
    b = GraphBuilder()
    c = b.op("constant", value=round_to_bfloat16(np.array([0.1, 1.7, -3.3], np.float32)),
             dtype="bf16")
    g = b.build([b.op("exp", c)])
    result = checker.apply(FOLD, g)
    constant = result.graph.nodes[-1]
    assert constant.op == "constant" and constant.attrs["dtype"].name == "bfloat16"
    assert result.graph.output_types == g.output_types
    value = constant.attrs["value"]
    assert value.dtype == np.float32 and np.all(value.view(np.uint32) & 0xFFFF == 0)


def test_multi_output_ops_fold_into_one_constant_per_output(checker):
    b = GraphBuilder()
    c = b.op("constant", value=np.arange(5, dtype=np.int64))
    left, right = b.op("split", c, axis=0, sizes=(2, 3))
    result = checker.apply(FOLD, b.build([right, left]))
    values = [result.graph.producers()[v].attrs["value"] for v in result.graph.outputs]
    assert [v.tolist() for v in values] == [[2, 3, 4], [0, 1]]


def test_results_larger_than_the_cap_are_not_folded(checker):
    b = GraphBuilder()
    c = b.op("constant", value=np.ones(3, np.float32))
    small = b.op("neg", c)
    big = b.op("broadcast_to", c, shape=(4, 3))
    g = b.build([small, big])
    result = checker.apply(ConstantFolding(max_elements=10), g)
    assert ops_of(result.graph) == ["constant", "constant", "broadcast_to"]
    assert ops_of(checker.apply(ConstantFolding(max_elements=12), g).graph) == [
        "constant", "constant", "constant"]


def test_huge_sources_are_never_materialised(checker):
    b = GraphBuilder()
    huge = b.op("full", shape=(1 << 16, 1 << 16), value=1.0, dtype="f32")  # 16 GiB if built
    g = b.build([b.op("reshape", huge, shape=(-1,))])
    assert FOLD.run(g, checker.context).graph is g


def test_errors_are_left_for_run_time(checker):
    b = GraphBuilder()
    num = b.op("constant", value=np.array([4, 5], np.int32))
    den = b.op("constant", value=np.array([2, 0], np.int32))
    g = b.build([b.op("floor_divide", num, den)])
    result = FOLD.run(g, checker.context)
    assert result.graph is g
    with pytest.raises(ZeroDivisionError):
        run_graph(result.graph, [])


def test_random_and_effectful_nodes_are_not_folded(checker):
    b = GraphBuilder()
    key = b.op("random_key", seed=0)
    draw = b.op("random_uniform", key, shape=(3,))
    g = b.build([b.op("exp", draw)])
    assert FOLD.run(g, checker.context).graph is g


def test_region_owners_are_not_evaluated_but_their_regions_fold(checker, region):
    def branch(b, x):
        two = b.op("full", shape=(3,), value=2.0, dtype="f32")
        return (b.op("mul", x, b.op("sqrt", two)),)

    b = GraphBuilder()
    pred = b.op("constant", value=np.array(True))
    x = b.op("constant", value=np.ones(3, np.float32))
    (out,) = b.op("If", pred, x, regions=(region(branch, x.type), region(branch, x.type)))
    result = checker.apply(FOLD, b.build([out]))
    node = result.graph.nodes[-1]
    assert node.op == "If"
    assert ops_of(node.regions[0]) == ["full", "constant", "mul"]
