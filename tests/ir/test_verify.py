"""The IR verifier: valid graphs pass; each kind of broken graph — built directly from
Node/Graph/Value, bypassing GraphBuilder — is reported with its location and types."""

import re

import numpy as np
import pytest

from mskernel.errors import VerifyError
from mskernel.ir import TOKEN, Graph, GraphBuilder, Node, RefType, SourceLoc, Value, tensor_type
from mskernel.ir.verify import verify
from mskernel.ops.registry import OpDef, OpRegistry
from mskernel.testing import region, sample_graph, samples_for

F23 = tensor_type("f32", (2, 3))
F24 = tensor_type("f32", (2, 4))
PRED = tensor_type("bool", ())
LOC = SourceLoc("model.py", 12)


def exp_node(x, out_type=F23, **kw):
    return Node("exp", (x,), (Value(out_type),), **kw)


def fails(graph, message, registry=None):
    with pytest.raises(VerifyError, match=message):
        verify(graph, registry)


def chain(x, n):
    """n exp nodes applied one after the other to x."""
    nodes = []
    for _ in range(n):
        nodes.append(exp_node(x))
        x = nodes[-1].outputs[0]
    return nodes


# -- graphs that are valid ----------------------------------------------------------------------

@pytest.mark.parametrize("op", ["If", "While", "ref_load", "ref_store", "random_normal",
                                "random_categorical", "random_key", "add", "cast", "clip"])
def test_sample_graphs_verify(op):
    for sample in samples_for(op):
        verify(sample_graph(sample))


def test_a_graph_with_effects_in_a_loop_verifies():
    i32 = tensor_type("i32", ())
    types = (i32, i32, RefType(F23), TOKEN)

    def body(b, v):
        value, token = b.op("ref_load", v[2], v[3])
        return v[0], v[1], v[2], b.op("ref_store", v[2], b.op("exp", value), token)

    b = GraphBuilder()
    inputs = [b.input(t) for t in types]
    cond = region("cond", types, lambda b, v: (b.op("less", v[0], v[1]),))
    outputs = b.op("While", *inputs, regions=(cond, region("body", types, body)))
    verify(b.build([outputs[3]]))


# -- the op's rule ------------------------------------------------------------------------------

def test_wrong_output_type_names_graph_node_op_location_and_types():
    x = Value(F23)
    nodes = chain(x, 3)
    bad = exp_node(nodes[-1].outputs[0], F24, loc=LOC)
    graph = Graph((x,), (*nodes, bad), bad.outputs, "main")
    fails(graph, re.escape("graph @main, node 3 'exp' at model.py:12: output 0 has type "
                           "f32[2,4] but the op's rule gives f32[2,3]"))


def test_wrong_number_of_outputs():
    x = Value(F23)
    node = Node("exp", (x,), (Value(F23), Value(F23)))
    fails(Graph((x,), (node,), node.outputs),
          re.escape("node 0 'exp': the node has 2 output(s) but the op's rule gives 1 (f32[2,3])"))


def test_inputs_the_rule_rejects():
    x, y = Value(F23), Value(tensor_type("i32", (2, 3)))
    node = Node("add", (x, y), (Value(F23),), loc=LOC)
    fails(Graph((x, y), (node,), node.outputs),
          re.escape("graph @main, node 0 'add' at model.py:12: operands must have the same "
                    "dtype, got float32, int32"))


def test_unknown_op_is_named_with_suggestions():
    x = Value(F23)
    node = Node("expp", (x,), (Value(F23),))
    fails(Graph((x,), (node,), node.outputs),
          r"node 0 'expp': unknown op 'expp'.*did you mean 'exp'")


def test_missing_regions():
    pred, x = Value(PRED), Value(F23)
    node = Node("If", (pred, x), (Value(F23),))
    fails(Graph((pred, x), (node,), node.outputs), r"node 0 'If': expects 2 region\(s\), got 0")


# -- attributes ---------------------------------------------------------------------------------

def test_unknown_attribute():
    x = Value(F23)
    node = Node("exp", (x,), (Value(F23),), {"axis": 1})
    fails(Graph((x,), (node,), node.outputs), r"node 0 'exp': unknown attribute\(s\) axis")


def test_attributes_must_include_defaults():
    x = Value(F23)
    node = Node("clip", (x,), (Value(F23),), {"min": 0.0})
    fails(Graph((x,), (node,), node.outputs),
          r"node 0 'clip': attribute 'max' is missing; bound attributes include every default")


def test_attributes_must_be_canonical():
    x = Value(F23)
    node = Node("clip", (x,), (Value(F23),), {"min": 0, "max": None})
    fails(Graph((x,), (node,), node.outputs),
          r"node 0 'clip': attribute 'min' is 0, not in the schema's canonical form 0\.0")


def test_attribute_of_the_wrong_kind():
    x = Value(F23)
    node = Node("cast", (x,), (Value(F23),), {"dtype": "no_such_type"})
    fails(Graph((x,), (node,), node.outputs),
          r"node 0 'cast': attribute 'dtype' expects dtype, got 'no_such_type'")


# -- definitions and uses -----------------------------------------------------------------------

def test_use_before_definition():
    x = Value(F23)
    first, second = chain(x, 2)
    fails(Graph((x,), (second, first), second.outputs),
          rf"node 0 'exp': input 0: value #{first.outputs[0].uid} \(f32\[2,3\]\) is used before "
          r"node 1 defines it")


def test_undefined_value():
    x, stray = Value(F23), Value(F23, "stray")
    node = exp_node(stray)
    fails(Graph((x,), (node,), node.outputs),
          rf"node 0 'exp': input 0: value #{stray.uid} 'stray' \(f32\[2,3\]\) is not defined "
          "in this graph")


def test_undefined_graph_output():
    x = Value(F23)
    node = exp_node(x)
    fails(Graph((x,), (node,), (Value(F24),)), r"graph @main: output 0: value #\d+ \(f32\[2,4\]\) "
                                                 "is not defined in this graph")


def test_value_defined_twice():
    x = Value(F23)
    node = Node("exp", (x,), (x,))
    fails(Graph((x,), (node,), (x,)),
          r"node 0 'exp': output 0: value #\d+ \(f32\[2,3\]\) is already defined as input 0 of "
          "graph @main; every value is defined exactly once")
    first, second = chain(x, 2)
    again = Node("exp", (x,), first.outputs)
    fails(Graph((x,), (first, again), again.outputs), r"node 1 'exp': output 0: .* already "
                                                      r"defined as output 0 of graph @main, node 0")


def test_node_inputs_must_be_values():
    x = Value(F23)
    node = Node("exp", (np.zeros((2, 3), np.float32),), (Value(F23),))
    fails(Graph((x,), (node,), node.outputs),
          r"node 0 'exp': input 0 is a ndarray, not an IR value")


# -- regions ------------------------------------------------------------------------------------

def if_node(pred, operands, then_region, else_region, loc=None):
    return Node("If", (pred, *operands), tuple(Value(t) for t in then_region.output_types),
                regions=(then_region, else_region), loc=loc)


def test_regions_are_closed():
    pred, x, y = Value(PRED), Value(F23), Value(F23, "y")
    inner_x = Value(F23)
    captures = exp_node(y)  # uses the outer y instead of a region input
    then_region = Graph((inner_x,), (captures,), captures.outputs, "then")
    else_x = Value(F23)
    else_region = Graph((else_x,), (), (else_x,), "else")
    node = if_node(pred, (x,), then_region, else_region, LOC)
    fails(Graph((pred, x, y), (node,), node.outputs),
          re.escape("graph @main, node 0 'If' at model.py:12, region 0 @then, node 0 'exp': "
                    f"input 0: value #{y.uid} 'y' (f32[2,3]) is defined outside this region; "
                    "regions are closed, so pass it to the owning node as an operand"))


def test_errors_inside_regions_name_the_path():
    pred, x = Value(PRED), Value(F23)
    then_x, else_x = Value(F23), Value(F23)
    wrong = exp_node(else_x, F24, loc=SourceLoc("model.py", 30))
    else_region = Graph((else_x,), (wrong,), (then_x,), "else")
    then_region = Graph((then_x,), (), (then_x,), "then")
    node = if_node(pred, (x,), then_region, else_region)
    fails(Graph((pred, x), (node,), node.outputs),
          re.escape("graph @main, node 0 'If', region 1 @else, node 0 'exp' at model.py:30: "
                    "output 0 has type f32[2,4] but the op's rule gives f32[2,3]"))


def test_region_values_are_invisible_outside():
    pred, x = Value(PRED), Value(F23)
    then_x, else_x = Value(F23), Value(F23)
    inner = exp_node(then_x)
    then_region = Graph((then_x,), (inner,), inner.outputs, "then")
    node = if_node(pred, (x,), then_region, Graph((else_x,), (), (else_x,), "else"))
    leak = exp_node(inner.outputs[0])
    fails(Graph((pred, x), (node, leak), leak.outputs),
          r"node 1 'exp': input 0: .* is output 0 of graph @main, node 0 'If', region 0 @then, "
          "node 0 'exp', which this graph cannot see")


def test_region_signature_mismatch_comes_from_the_rule():
    pred, x = Value(PRED), Value(F23)
    then_x, else_x = Value(F23), Value(F24)
    node = if_node(pred, (x,), Graph((then_x,), (), (then_x,), "then"),
                   Graph((else_x,), (), (else_x,), "else"))
    fails(Graph((pred, x), (node,), node.outputs),
          re.escape("node 0 'If': else region input 0 has type f32[2,4], but operand 0 has type "
                    "f32[2,3]"))


# -- effects and tokens -------------------------------------------------------------------------

def test_effectful_ops_take_and_return_one_token():
    registry = OpRegistry()
    registry.define(OpDef("print", ("x",), lambda x: x, lambda x: x, effectful=True))
    x = Value(F23)
    node = Node("print", (x,), (Value(F23),), loc=LOC)
    fails(Graph((x,), (node,), node.outputs),
          re.escape("graph @main, node 0 'print' at model.py:12: an effectful op takes one "
                    "!token and returns one, but this node has 0 token input(s)"), registry)


def store(ref, value, token, loc=None):
    return Node("ref_store", (ref, value, token), (Value(TOKEN),), loc=loc)


def test_a_token_may_be_consumed_only_once():
    ref, x, token = Value(RefType(F23)), Value(F23), Value(TOKEN, "t0")
    first = store(ref, x, token)
    second = store(ref, x, token, LOC)
    fails(Graph((ref, x, token), (first, second), second.outputs),
          re.escape(f"graph @main, node 1 'ref_store' at model.py:12: input 2: value "
                    f"#{token.uid} 't0' (!token) is already consumed by graph @main, node 0 "
                    "'ref_store' (input 2); a token orders one effect"))


def test_a_consumed_token_may_not_be_returned():
    ref, x, token = Value(RefType(F23)), Value(F23), Value(TOKEN)
    node = store(ref, x, token)
    fails(Graph((ref, x, token), (node,), (token,)),
          r"graph @main: output 0: value #\d+ \(!token\) is already consumed by graph @main, "
          r"node 0 'ref_store' \(input 2\)")
    fails(Graph((ref, x, token), (), (token, token)),
          r"graph @main: output 1: .* already consumed by output 0 of graph @main")


def test_threaded_tokens_verify():
    ref, x, token = Value(RefType(F23)), Value(F23), Value(TOKEN)
    first = store(ref, x, token)
    second = store(ref, x, first.outputs[0])
    verify(Graph((ref, x, token), (first, second), second.outputs))
