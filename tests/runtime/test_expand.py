"""Composite ops on a backend that claims only primitives: expanded before placement so they
run there (no fallback), kept whole where the backend claims them or cannot run their
decomposition, and shown by ``explain``."""

import numpy as np
import pytest

from mskernel.errors import BackendError, OpError
from mskernel.ir import GraphBuilder, SourceLoc, tensor_type
from mskernel.ir.types import TensorType
from mskernel.ops import OpDef, OpRegistry, op_registry
from mskernel.ops.core import mskernel_register_ops
from mskernel.runtime import CompiledGraph, partition
from mskernel.runtime.expand import decompose, expand_composites
from mskernel.runtime.interpreter import run_graph
from mskernel.runtime.reference import ReferenceBackend
from mskernel.testing import assert_close, random_array

PRIMITIVES = sorted(op.name for op in op_registry() if op.primitive)


def block_graph(dt="f32"):
    """gelu(x @ w) → layer_norm → softmax, and the variance of x's rows."""
    b = GraphBuilder("block")
    x = b.input(tensor_type(dt, (4, 8)), "x")
    w = b.input(tensor_type(dt, (8, 6)), "w")
    scale, bias = b.input(tensor_type(dt, (6,)), "scale"), b.input(tensor_type(dt, (6,)), "bias")
    hidden = b.op("gelu", b.op("matmul", x, w), loc=SourceLoc("model.py", 3))
    normed, _, _ = b.op("layer_norm", hidden, scale, bias)
    probs = b.op("softmax", normed, axis=-1, loc=SourceLoc("model.py", 5))
    spread = b.op("var", x, axes=(1,), correction=1)
    return b.build([probs, spread])


def arguments(graph, seed=0):
    rng = np.random.default_rng(seed)
    return [random_array(rng, v.type.shape, v.type.dtype) for v in graph.inputs]


def run_plan(plan, backends, args):
    by_name = {b.name: b for b in backends}
    executables = [by_name[s.backend].compile(s.graph, None) for s in plan.segments]
    return CompiledGraph(plan, by_name, executables)(*args)


def test_a_backend_claiming_only_primitives_runs_every_composite(subset_backend):
    primitives = subset_backend("prims", PRIMITIVES)
    graph = block_graph()
    backends = [primitives, ReferenceBackend()]
    plan = partition(graph, backends, "deny")
    assert not plan.fallbacks
    assert {p.backend for p in plan.placements} == {"prims"}
    assert sorted(e.node.op for e in plan.expansions) == ["gelu", "layer_norm", "softmax", "var"]
    assert all(n.op in PRIMITIVES for n in plan.graph.nodes)
    args = arguments(graph)
    for actual, expected, value in zip(run_plan(plan, backends, args), run_graph(graph, args),
                                       graph.outputs):
        assert_close(actual, expected, value.type.dtype, rtol=1e-5, atol=1e-6)


def test_explain_shows_which_nodes_each_composite_became(subset_backend):
    plan = partition(block_graph(), [subset_backend("prims", PRIMITIVES), ReferenceBackend()],
                     "deny")
    text = plan.explain()
    assert "decomposed: 4 composite node(s) for 'prims'" in text
    assert "'softmax' at model.py:5 -> 6 node(s): max, neg, add, exp, sum, div" in text
    erf_row = next(line for line in text.splitlines() if " erf " in line)
    assert "from gelu [model.py:3]" in erf_row
    assert "fallbacks: 0" in text


def test_a_backend_claiming_a_composite_keeps_its_kernel(subset_backend):
    fused = subset_backend("fused", [*PRIMITIVES, "softmax", "layer_norm"])
    plan = partition(block_graph(), [fused, ReferenceBackend()], "deny")
    ops = [n.op for n in plan.graph.nodes]
    assert "softmax" in ops and "layer_norm" in ops
    assert sorted(e.node.op for e in plan.expansions) == ["gelu", "var"]


def test_a_composite_whose_decomposition_needs_an_unclaimed_op_falls_back_whole(subset_backend):
    no_exp = subset_backend("no_exp", [op for op in PRIMITIVES if op != "exp"])
    plan = partition(block_graph(), [no_exp, ReferenceBackend()], "allow")
    fallen = {p.node.op: p.backend for p in plan.fallbacks}
    assert fallen == {"softmax": "reference"}  # softmax needs exp; gelu, layer_norm, var don't
    assert "no kernel for 'softmax'" in plan.fallbacks[0].fallback_reason
    with pytest.raises(BackendError, match="cannot run 1 node"):
        partition(block_graph(), [no_exp, ReferenceBackend()], "deny")


def test_dtype_claims_hold_for_the_decomposition(subset_backend):
    f32_only = subset_backend("f32", PRIMITIVES, dtypes=frozenset({tensor_type("f32", ()).dtype}))
    plan = partition(block_graph("f16"), [f32_only, ReferenceBackend()], "allow")
    assert not plan.expansions  # each decomposition starts by casting the float16 input
    assert {p.backend for p in plan.placements} == {"reference"}


def softmax_region(name):
    b = GraphBuilder(name)
    x = b.input(tensor_type("f32", (2, 3)))
    return b.build([b.op("softmax", x, axis=1)])


def if_graph():
    b = GraphBuilder("branchy")
    pred = b.input(tensor_type("bool", ()), "pred")
    x = b.input(tensor_type("f32", (2, 3)), "x")
    (out,) = b.op("If", pred, x, regions=(softmax_region("then"), softmax_region("else")))
    return b.build([out])


def test_regions_are_expanded_with_the_node_that_owns_them(subset_backend):
    with_if = subset_backend("with_if", [*PRIMITIVES])
    graph = if_graph()
    plan = partition(graph, [with_if, ReferenceBackend()], "deny")
    (node,) = plan.graph.nodes
    assert [n.op for r in node.regions for n in r.nodes].count("softmax") == 0
    assert [e.node.op for e in plan.expansions] == ["softmax", "softmax"]
    args = [np.array(False), arguments(graph)[1]]
    assert_close(run_plan(plan, [with_if, ReferenceBackend()], args)[0],
                 run_graph(graph, args)[0], tensor_type("f32", ()).dtype)


def test_a_region_node_the_backend_cannot_run_keeps_its_regions(subset_backend):
    without_if = subset_backend("no_if", [op for op in PRIMITIVES if op != "If"])
    graph = if_graph()
    plan = partition(graph, [without_if, ReferenceBackend()], "allow")
    assert plan.graph is graph and not plan.expansions
    assert [p.backend for p in plan.placements] == ["reference"]


def test_an_unchanged_graph_is_the_same_object(subset_backend):
    graph = block_graph()
    expanded = expand_composites(graph, ReferenceBackend().capabilities(), op_registry())
    assert expanded.graph is graph and expanded.expansions == ()


# -- decompositions that break their contract are reported with the op's name ----------------


def _registry_with(decomposition):
    ops = OpRegistry()
    mskernel_register_ops(registry=ops)
    ops.define(OpDef("acme.twice", ("x",), lambda x: x, lambda x: 2 * x, owner="mskernel-acme",
                     decomposition=decomposition))
    return ops


def _twice_node(ops):
    b = GraphBuilder("g", ops)
    x = b.input(tensor_type("f32", (3,)))
    b.op("acme.twice", x)
    return b.nodes[0]


def test_a_decomposition_of_the_wrong_type_is_reported():
    ops = _registry_with(lambda b, x: b.op("cast", x, dtype="f64"))
    with pytest.raises(OpError, match=r"decomposition of op 'acme.twice' \(mskernel-acme\) "
                                      r"at .*test_expand.py:\d+ returns \(f64\[3\]\) for "
                                      r"outputs \(f32\[3\]\)"):
        decompose(_twice_node(ops), ops)


def test_a_decomposition_that_raises_is_reported_with_the_op_and_its_plugin():
    def broken(b, x):
        raise ValueError("no such case")

    ops = _registry_with(broken)
    with pytest.raises(OpError, match=r"decomposition of op 'acme.twice' \(mskernel-acme\) .*"
                                      r"failed on \(f32\[3\]\): ValueError: no such case"):
        decompose(_twice_node(ops), ops)


def test_a_decomposition_emitting_its_own_op_is_reported():
    ops = _registry_with(lambda b, x: b.op("acme.twice", x))
    with pytest.raises(OpError, match="emits 'acme.twice'"):
        decompose(_twice_node(ops), ops)


def test_a_plugin_op_with_a_decomposition_runs_on_a_backend_that_never_heard_of_it(
        subset_backend):
    ops = _registry_with(lambda b, x: b.op("add", x, x))
    node = _twice_node(ops)
    graph = GraphBuilder("g", ops)
    x = graph.input(node.inputs[0].type)
    out = graph.op("acme.twice", x)
    built = graph.build([out])
    plan = partition(built, [subset_backend("prims", PRIMITIVES), ReferenceBackend()], "deny",
                     registry=ops)
    assert [n.op for n in plan.graph.nodes] == ["add"]
    assert isinstance(plan.graph.outputs[0].type, TensorType)
