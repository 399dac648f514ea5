"""The shared rewriting machinery: substitution and node-by-node rewriting."""

import pytest

from mskernel.errors import VerifyError
from mskernel.ir import GraphBuilder, tensor_type
from mskernel.passes import Replacement, rewrite_nodes, substitute

F32 = tensor_type("f32", (3,))


def test_substitute_rebuilds_only_the_readers_of_replaced_values():
    b = GraphBuilder()
    x, y = b.input(F32), b.input(F32)
    a = b.op("exp", x)
    c = b.op("sin", y)
    d = b.op("add", a, c)
    g = b.build([d, a])
    new = substitute(g, {a: y})
    exp, sin, add = new.nodes
    assert exp is g.nodes[0] and sin is g.nodes[1]  # untouched nodes are shared
    assert add is not g.nodes[2] and add.inputs == (y, c) and add.outputs == (d,)
    assert new.outputs == (d, y)


def test_substitute_reaches_into_regions(region):
    b = GraphBuilder()
    pred, x = b.input(tensor_type("bool", ())), b.input(F32)
    then = region(lambda rb, v: (rb.op("exp", v),), F32)
    other = region(lambda rb, v: (v,), F32)
    (out,) = b.op("If", pred, x, regions=(then, other))
    g = b.build([out])
    new = substitute(g, {then.outputs[0]: then.inputs[0]})
    assert new.nodes[0].regions[0].outputs == then.inputs
    assert new.nodes[0].regions[1] is other and new.nodes[0].outputs == (out,)


def test_substitute_with_nothing_to_do_returns_the_graph():
    b = GraphBuilder()
    x = b.input(F32)
    g = b.build([b.op("exp", x)])
    assert substitute(g, {}) is g
    assert substitute(g, {b.input(F32): x}) is g


def test_substitution_must_keep_types():
    b = GraphBuilder()
    x, y = b.input(F32), b.input(tensor_type("f64", (3,)))
    g = b.build([b.op("exp", x)])
    with pytest.raises(VerifyError, match=r"from f32\[3\] to f64\[3\]"):
        substitute(g, {x: y})


def test_a_replacement_must_use_values_defined_before_it():
    b = GraphBuilder()
    x = b.input(F32)
    a = b.op("exp", x)
    later = b.op("sin", x)
    g = b.build([b.op("neg", a), later])

    def use_later(node, producers):
        return Replacement((), (later,)) if node.op == "exp" else None

    with pytest.raises(VerifyError, match="not defined before"):
        rewrite_nodes(g, lambda: use_later)


def test_visitors_start_fresh_in_every_region(region):
    scopes = []

    def make_visit():
        seen = []
        scopes.append(seen)
        return lambda node, producers: seen.append(node.op)

    b = GraphBuilder()
    pred, x = b.input(tensor_type("bool", ())), b.input(F32)
    then = region(lambda rb, v: (rb.op("exp", v),), F32)
    other = region(lambda rb, v: (rb.op("neg", v),), F32)
    (out,) = b.op("If", pred, x, regions=(then, other))
    g = b.build([b.op("sin", out)])
    assert rewrite_nodes(g, make_visit) is g
    assert scopes == [["exp"], ["neg"], ["If", "sin"]]  # regions first, innermost first
