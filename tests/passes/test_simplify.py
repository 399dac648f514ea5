"""The simplify rules one by one, and the pattern-table machinery behind them."""

import numpy as np
import pytest

from mskernel.errors import VerifyError
from mskernel.ir import GraphBuilder, SourceLoc, tensor_type
from mskernel.passes import SIMPLIFY, PatternPass, Patterns, make_node


def simplify(checker, dtype, shape, build, *, pass_=SIMPLIFY):
    """Simplify the graph ``build(builder, x)`` of one input ``x``; return (result, x)."""
    b = GraphBuilder()
    x = b.input(tensor_type(dtype, shape))
    g = b.build([build(b, x)])
    return checker.apply(pass_, g), x


def splat(b, value, dtype="f32", shape=(2, 3)):
    return b.op("full", shape=shape, value=value, dtype=dtype)


def array(b, value, dtype=np.float32):
    return b.op("constant", value=np.asarray(value, dtype))


IDENTITIES = {
    "x*1": lambda b, x: b.op("mul", x, splat(b, 1.0)),
    "1*x": lambda b, x: b.op("mul", array(b, 1.0), x),
    "x*[1,1,1]": lambda b, x: b.op("mul", x, array(b, [1, 1, 1])),
    "x+0": lambda b, x: b.op("add", x, array(b, [[0, 0, 0]])),
    "0+x": lambda b, x: b.op("add", splat(b, 0.0), x),
    "x+(-0)": lambda b, x: b.op("add", x, array(b, -0.0)),
    "x-0": lambda b, x: b.op("sub", x, splat(b, 0.0, shape=(3,))),
    "x/1": lambda b, x: b.op("div", x, array(b, 1.0)),
    "neg(neg(x))": lambda b, x: b.op("neg", b.op("neg", x)),
    "cast(x, f32)": lambda b, x: b.op("cast", x, dtype="f32"),
    "broadcast_to(x, (2,3))": lambda b, x: b.op("broadcast_to", x, shape=(2, 3)),
    "reshape(x, (2,3))": lambda b, x: b.op("reshape", x, shape=(2, -1)),
    "squeeze(x)": lambda b, x: b.op("squeeze", x),
    "expand_dims(x, ())": lambda b, x: b.op("expand_dims", x, axes=()),
    "squeeze(expand_dims(x))": lambda b, x: b.op("squeeze", b.op("expand_dims", x, axes=(0,))),
    "reshape(reshape(x))": lambda b, x: b.op("reshape", b.op("reshape", x, shape=(6,)),
                                             shape=(2, 3)),
    "transpose(x, (0,1))": lambda b, x: b.op("transpose", x, perm=(0, 1)),
    "transpose(transpose(x))": lambda b, x: b.op("transpose", b.op("transpose", x), perm=(1, 0)),
}


@pytest.mark.parametrize("case", IDENTITIES)
def test_identities_become_the_operand(checker, case):
    result, x = simplify(checker, "f32", (2, 3), IDENTITIES[case])
    assert result.graph.outputs == (x,)


NOT_IDENTITIES = {
    "x*1 broadcasting x": lambda b, x: b.op("mul", x, splat(b, 1.0, shape=(4, 2, 3))),
    "x*2": lambda b, x: b.op("mul", x, splat(b, 2.0)),
    "x*[1,2,1]": lambda b, x: b.op("mul", x, array(b, [1, 2, 1])),
    "x*0": lambda b, x: b.op("mul", x, splat(b, 0.0)),
    "0-x": lambda b, x: b.op("sub", splat(b, 0.0), x),
    "1/x": lambda b, x: b.op("div", splat(b, 1.0), x),
    "x*y": lambda b, x: b.op("mul", x, b.op("exp", x)),
    "neg(x)": lambda b, x: b.op("neg", x),
    "cast(x, f64)": lambda b, x: b.op("cast", x, dtype="f64"),
    "broadcast_to(x, (4,2,3))": lambda b, x: b.op("broadcast_to", x, shape=(4, 2, 3)),
    "transpose(x)": lambda b, x: b.op("transpose", x),
}


@pytest.mark.parametrize("case", NOT_IDENTITIES)
def test_non_identities_stay(checker, case):
    result, x = simplify(checker, "f32", (2, 3), NOT_IDENTITIES[case])
    assert not result.changed


@pytest.mark.parametrize("dtype", ["i32", "u8", "f16", "bf16", "f64"])
def test_multiplying_by_one_is_dropped_for_every_real_dtype(checker, dtype):
    result, x = simplify(checker, dtype, (2, 3),
                         lambda b, x: b.op("mul", splat(b, 1.0, dtype), x))
    assert result.graph.outputs == (x,)


def test_complex_operands_keep_multiplication_by_one(checker):
    # (inf + 1j) * (1 + 0j) is inf + nanj under IEEE arithmetic: not the operand
    def times_one(b, x):
        return b.op("mul", x, array(b, np.ones((2, 3)), np.complex64))

    def plus_zero(b, x):
        return b.op("add", x, array(b, np.zeros((2, 3)), np.complex64))

    result, x = simplify(checker, "c64", (2, 3), times_one)
    assert not result.changed
    result, x = simplify(checker, "c64", (2, 3), plus_zero)
    assert result.graph.outputs == (x,)


def test_transposes_compose_into_one(checker):
    def build(b, x):
        return b.op("transpose", b.op("transpose", x, perm=(1, 2, 0)), perm=(0, 2, 1))

    result, x = simplify(checker, "f32", (2, 3, 4), build)
    node = result.graph.producers()[result.graph.outputs[0]]
    assert node.op == "transpose" and node.inputs == (x,) and node.attrs["perm"] == (1, 0, 2)


def test_reshape_like_chains_become_one_reshape(checker):
    def build(b, x):
        y = b.op("expand_dims", b.op("reshape", x, shape=(6,)), axes=(0,))
        return b.op("squeeze", b.op("reshape", y, shape=(3, 1, 2)), axes=(1,))

    result, x = simplify(checker, "f32", (2, 3), build)
    node = result.graph.producers()[result.graph.outputs[0]]
    assert node.op == "reshape" and node.inputs == (x,) and node.attrs["shape"] == (3, 2)


def test_rules_apply_inside_regions(checker, region):
    def branch(b, x):
        return (b.op("neg", b.op("neg", x)),)

    t = tensor_type("f32", (3,))
    b = GraphBuilder()
    pred, x = b.input(tensor_type("bool", ())), b.input(t)
    (out,) = b.op("If", pred, x, regions=(region(branch, t), region(branch, t)))
    result = checker.apply(SIMPLIFY, b.build([out]))
    for r in result.graph.nodes[0].regions:
        assert r.outputs == r.inputs


# --- the pattern machinery -------------------------------------------------------------------


def exp_to_neg(node, producers, context):
    return make_node(context, "neg", node.inputs[0])


def drop_neg(node, producers, context):
    return node.inputs[0]


def never(node, producers, context):
    return None


def test_tables_combine_with_plus_and_the_first_match_wins(checker):
    table = Patterns([("exp", never), ("exp", exp_to_neg)]) + Patterns([("exp", drop_neg)])
    assert table.ops() == {"exp"}
    b = GraphBuilder()
    x = b.input(tensor_type("f32", (3,)))
    g = b.build([b.op("exp", x, loc=SourceLoc("model.py", 7))])
    result = PatternPass("t", table).run(g, checker.context)
    (node,) = result.graph.nodes
    assert node.op == "neg" and node.loc == SourceLoc("model.py", 7)


def test_rules_that_undo_each_other_stop_at_the_cap(checker):
    def neg_to_exp(node, producers, context):
        return make_node(context, "exp", node.inputs[0])

    table = Patterns([("exp", exp_to_neg), ("neg", neg_to_exp)])
    b = GraphBuilder()
    x = b.input(tensor_type("f32", (3,)))
    g = b.build([b.op("exp", x)])
    result = PatternPass("loop", table, max_rewrites=3).run(g, checker.context)
    assert [n.op for n in result.graph.nodes] == ["neg"]


def test_a_rule_changing_the_type_is_refused(checker):
    def to_f64(node, producers, context):
        return make_node(context, "cast", node.inputs[0], dtype="f64")

    b = GraphBuilder()
    x = b.input(tensor_type("f32", (3,)))
    g = b.build([b.op("exp", x)])
    with pytest.raises(VerifyError, match=r"'exp'.*from f32\[3\] to f64\[3\]"):
        PatternPass("bad", Patterns([("exp", to_f64)])).run(g, checker.context)


def test_ops_with_the_identity_trait_are_removed():
    import numpy as np

    from mskernel.ir import GraphBuilder, tensor_type
    from mskernel.ops import OpDef, OpRegistry, op_registry
    from mskernel.passes import PassContext
    from mskernel.passes.simplify import SIMPLIFY

    reg = OpRegistry()
    for op in op_registry():
        reg.define(op)
    reg.define(OpDef("marker", ("x",), lambda x: x, lambda x: np.array(x, copy=True),
                     traits=frozenset({"identity"})))
    b = GraphBuilder("g", reg)
    x = b.input(tensor_type("f32", (2,)))
    graph = b.build([b.op("exp", b.op("marker", x))])
    result = SIMPLIFY.run(graph, PassContext(registry=reg))
    assert [n.op for n in result.graph.nodes] == ["exp"]
    assert result.graph.nodes[0].inputs[0] is x
