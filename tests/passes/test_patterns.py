"""The pattern machinery passes are written in: multi-node patterns as data (:class:`Pat`),
read counts in the scope a pattern sees, removal of what a rewrite leaves unread, the region
walk (:func:`map_regions`) and running a named pipeline (:func:`run_pipeline`)."""

import numpy as np
import pytest

from mskernel.ir import GraphBuilder, tensor_type
from mskernel.ops.registry import OpDef, OpRegistry
from mskernel.passes import (
    FUSED_TRAIT, SIMPLIFY, Pat, PassContext, PatternPass, Patterns, Replacement, Scope,
    make_node, map_regions, rewrite_nodes, run_pipeline,
)
from mskernel.runtime import CompileOptions

F32 = tensor_type("f32", (4,))

#: ``relu(add(mul(x, y), z))`` → ``relu(fma)``: a two-node pattern with an absorbed product
FMA = Pat("add", (Pat("mul", (Pat.var("x"), Pat.var("y")), name="product", single_use=True),
                  Pat.var("z")), name="add", any_order=True)


def fma_as_tanh(context, add, product, x, y, z):
    """Stands for a fused op: a node of the right type shows the rewrite happened."""
    return make_node(context, "tanh", z)


def test_a_pattern_binds_nodes_and_values_in_any_operand_order():
    b = GraphBuilder()
    x, y, z = b.input(F32, "x"), b.input(F32, "y"), b.input(F32, "z")
    product = b.op("mul", x, y)
    g = b.build([b.op("add", z, product)])  # the product on the right
    (mul, add) = g.nodes
    scope = Scope.of(g)
    bound = FMA.match(add, scope)
    assert bound == {"add": add, "product": mul, "x": x, "y": y, "z": z}
    assert FMA.match(mul, scope) is None  # the root's op must match


def test_attribute_values_and_predicates_and_repeated_names():
    b = GraphBuilder()
    x = b.input(tensor_type("f32", (2, 3)), "x")
    s = b.op("sum", x, axes=(1,), keepdims=True)
    d = b.op("mul", x, x)
    g = b.build([s, d])
    scope = Scope.of(g)
    summed, squared = g.nodes
    assert Pat("sum", attrs={"keepdims": True}).match(summed, scope) == {}
    assert Pat("sum", attrs={"keepdims": False}).match(summed, scope) is None
    assert Pat("sum", attrs={"axes": lambda a: a == (1,)}).match(summed, scope) == {}
    assert Pat("sum", where=lambda n: n.output.type.rank == 2).match(summed, scope) == {}
    square = Pat("mul", (Pat.var("v"), Pat.var("v")))  # one name: the same value twice
    assert square.match(squared, scope) == {"v": x}
    assert square.match(g.nodes[0], scope) is None
    with pytest.raises(ValueError, match="matches any value"):
        Pat(None, (Pat.var(),))


def run_fma(graph, context):
    return PatternPass("fma", Patterns([(FMA, fma_as_tanh)])).run(graph, context)


def test_an_absorbed_intermediate_must_have_no_other_reader(checker):
    b = GraphBuilder()
    x, y, z = b.input(F32), b.input(F32), b.input(F32)
    product = b.op("mul", x, y)
    shared = b.build([b.op("add", product, z), product])  # the product is also an output
    assert run_fma(shared, checker.context).graph is shared
    b = GraphBuilder()
    x, y, z = b.input(F32), b.input(F32), b.input(F32)
    product = b.op("mul", x, y)
    read_twice = b.build([b.op("add", product, z), b.op("neg", product)])
    assert run_fma(read_twice, checker.context).graph is read_twice


def test_what_a_rewrite_leaves_unread_is_removed_with_it(checker):
    b = GraphBuilder()
    x, y, z = b.input(F32), b.input(F32), b.input(F32)
    unused = b.op("exp", x)  # unread before the pass: left to dce
    graph = b.build([b.op("add", b.op("mul", x, y), z)])
    result = run_fma(graph, checker.context).graph
    assert [n.op for n in result.nodes] == ["exp", "tanh"]
    assert result.nodes[0].output is unused
    assert result.outputs == graph.outputs  # the new node defines the old value


def test_read_counts_follow_the_rewrites_so_far(checker):
    """Once ``neg(neg(p))`` is rewritten to ``p``, ``p`` has two readers, so the later add
    may not absorb it; the inner neg, left unread, is gone before the add is matched."""
    seen = []

    def count(context, add, product, **_):
        seen.append(context_scope[0].uses(product.output))
        return None

    def watch(node, scope, context):
        context_scope[:] = [scope]
        return None

    context_scope = []
    b = GraphBuilder()
    x, y = b.input(F32), b.input(F32)
    p = b.op("mul", x, y)
    twice = b.op("neg", b.op("neg", p))
    g = b.build([b.op("add", p, twice)])
    table = Patterns([("neg", lambda n, s, c: _double_negation(n, s)), ("add", watch),
                      (Pat("add", (Pat("mul", name="product"), Pat.var()), name="add",
                           any_order=True), count)])
    result = PatternPass("t", table).run(g, checker.context).graph
    assert seen == [2]
    assert [n.op for n in result.nodes] == ["mul", "add"]


def _double_negation(node, scope):
    inner = scope.get(node.inputs[0])
    return inner.inputs[0] if inner is not None and inner.op == "neg" else None


def test_a_rule_may_insert_several_nodes(checker):
    def split(context, add, product, x, y, z):
        m = make_node(context, "mul", x, y)
        s = make_node(context, "add", m.output, z)
        return Replacement((m, s), s.outputs)

    b = GraphBuilder()
    x, y, z = b.input(F32), b.input(F32), b.input(F32)
    g = b.build([b.op("add", b.op("mul", x, y), z)])
    result = checker.apply(PatternPass("split", Patterns([(FMA, split)])), g)
    assert [n.op for n in result.graph.nodes] == ["mul", "add"]
    assert result.graph.nodes[0] is not g.nodes[0]


def test_regions_are_rewritten_unless_their_op_is_fused(ops, region):
    fused = OpDef("test.fused", ("*xs",), lambda *ts, regions: regions[0].output_types[0],
                  lambda *xs, regions, run_region: run_region(regions[0], *xs)[0],
                  num_regions=1, traits={FUSED_TRAIT})
    registry = OpRegistry()
    registry.define_all([ops.get(name) for name in ("mul", "add", "tanh", "If")] + [fused])
    body = region(lambda rb, u, v, w: (rb.op("add", rb.op("mul", u, v), w),), F32, F32, F32)
    b = GraphBuilder(registry=registry)
    x, y, z = b.input(F32), b.input(F32), b.input(F32)
    pred = b.input(tensor_type("bool", ()))
    kept = b.op("test.fused", x, y, z, regions=(body,))
    (branch,) = b.op("If", pred, x, y, z, regions=(body, body))
    g = b.build([kept, branch])
    result = run_fma(g, PassContext(registry=registry)).graph
    fused_node, if_node = result.nodes
    assert fused_node.regions[0] is body
    assert [[n.op for n in r.nodes] for r in if_node.regions] == [["tanh"]] * 2


def test_map_regions_visits_innermost_first_and_keeps_what_it_does_not_change(region):
    inner = region(lambda rb, v: (rb.op("exp", v),), F32)
    then = region(lambda rb, p, v: rb.op("If", p, v, regions=(inner, inner)),
                  tensor_type("bool", ()), F32)
    b = GraphBuilder("outer")
    pred, x = b.input(tensor_type("bool", ())), b.input(F32)
    (out,) = b.op("If", pred, pred, x, regions=(then, then))
    g = b.build([out])
    order = []

    def record(scope):
        order.append(scope.name)
        return scope

    assert map_regions(g, record) is g
    assert order == ["region", "region", "region", "region", "region", "region", "outer"]
    assert map_regions(g, record, enter=lambda node: False) is g
    assert order[-1:] == ["outer"] and len(order) == 8

    def drop_exp(scope):
        if scope is not inner:
            return scope
        return rewrite_nodes(scope, lambda: lambda n, s: Replacement((), n.inputs))

    new = map_regions(g, drop_exp)
    (if_node,) = new.nodes
    assert all(r.nodes[0].regions[0].outputs == r.nodes[0].regions[0].inputs
               for r in if_node.regions)


def test_run_pipeline_runs_a_named_pipeline_at_the_options_level():
    b = GraphBuilder("p")
    x = b.input(F32)
    one = b.op("constant", value=np.ones(4, np.float32))
    g = b.build([b.op("mul", x, one)])
    result = run_pipeline("O2", g, CompileOptions(opt_level=2, debug=True))
    assert result.graph.nodes == () and result.graph.outputs == g.inputs
    assert result.report.graph_name == "p" and result.report.converged
    assert run_pipeline("O0", g, CompileOptions(opt_level=0)).graph is g


def test_a_value_standing_for_a_graph_output_is_not_single_use(checker):
    """``y = x * 1`` is the graph output; once it is rewritten to ``x``, ``x`` is that output,
    read by no node: not a value one reader may absorb."""
    seen = []
    b = GraphBuilder()
    u, v, z = b.input(F32), b.input(F32), b.input(F32)
    x = b.op("mul", u, v)
    y = b.op("mul", x, b.op("constant", value=np.ones(4, np.float32)))
    g = b.build([y, b.op("neg", z)])
    watch = Patterns([("neg", lambda node, scope, c: seen.append(
        (scope.uses(x), scope.single_use(x))))])
    PatternPass("t", SIMPLIFY.patterns + watch).run(g, checker.context)
    assert seen == [(1, False)]
