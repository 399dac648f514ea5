"""If and While: evaluation through the interpreter (only the taken branch runs, loops carry
state, tokens and refs travel through regions) and region signature errors."""

import numpy as np
import pytest

from mskernel.errors import MskernelError, OpError
from mskernel.ir import TOKEN, GraphBuilder, RefType, tensor_type
from mskernel.runtime.interpreter import run_graph
from mskernel.runtime.state import TOKEN_VALUE, RefCell
from mskernel.testing import region

F3 = tensor_type("f32", (3,))
I32 = tensor_type("i32", ())
PRED = tensor_type("bool", ())


def if_graph(then_body, else_body, *types):
    b = GraphBuilder("f")
    pred = b.input(PRED)
    operands = [b.input(t) for t in types]
    regions = (region("then", types, then_body), region("else", types, else_body))
    return b.build(list(b.op("If", pred, *operands, regions=regions)))


def test_if_returns_the_taken_branch():
    g = if_graph(lambda b, v: (b.op("exp", v[0]), v[1]),
                 lambda b, v: (b.op("neg", v[0]), b.op("add", v[1], v[1])), F3, I32)
    x, n = np.array([0.0, 1.0, -1.0], np.float32), np.array(4, np.int32)
    then_out = run_graph(g, [np.array(True), x, n])
    np.testing.assert_allclose(then_out[0], np.exp(x))
    assert then_out[1] == 4
    else_out = run_graph(g, [np.array(False), x, n])
    np.testing.assert_array_equal(else_out[0], -x)
    assert else_out[1] == 8


def test_if_evaluates_only_the_taken_branch():
    i3 = tensor_type("i32", (3,))
    g = if_graph(lambda b, v: (v[0],), lambda b, v: (b.op("floor_divide", v[0], v[1]),), i3, i3)
    x, zeros = np.arange(3, dtype=np.int32), np.zeros(3, np.int32)
    np.testing.assert_array_equal(run_graph(g, [np.array(True), x, zeros])[0], x)
    with pytest.raises(ZeroDivisionError):
        run_graph(g, [np.array(False), x, zeros])


def test_if_carries_refs_and_tokens_into_its_regions():
    ref = RefType(F3)
    g = if_graph(lambda b, v: (b.op("ref_store", v[0], v[1], v[2]),), lambda b, v: (v[2],),
                 ref, F3, TOKEN)
    new = np.array([7.0, 8.0, 9.0], np.float32)
    for pred, expected in ((False, np.zeros(3, np.float32)), (True, new)):
        cell = RefCell(F3, np.zeros(3, np.float32))
        (token,) = run_graph(g, [np.array(pred), cell, new, TOKEN_VALUE])
        assert token is TOKEN_VALUE
        np.testing.assert_array_equal(cell.value, expected)


def counting_loop(extra_types, step, **attrs):
    """A loop carrying (i, limit, *extra) that adds 1 to i while i < limit; one is a graph
    input (regions are closed, so the constant is carried)."""
    types = (I32, I32, I32, *extra_types)
    cond = region("cond", types, lambda b, v: (b.op("less", v[0], v[1]),))
    body = region("body", types, lambda b, v: (b.op("add", v[0], v[2]), v[1], v[2],
                                               *step(b, v[3:])))
    b = GraphBuilder("loop")
    inputs = [b.input(t) for t in types]
    return b.build(list(b.op("While", *inputs, regions=(cond, body), **attrs)))


def ints(*values):
    return [np.array(v, np.int32) for v in values]


def test_while_runs_its_body_until_cond_is_false():
    g = counting_loop([I32], lambda b, e: (b.op("add", e[0], e[0]),))
    i, limit, one, x = run_graph(g, ints(0, 10, 1, 1))
    assert (i, limit, one, x) == (10, 10, 1, 2**10)


def test_while_with_false_cond_returns_its_inputs():
    g = counting_loop([F3], lambda b, e: (b.op("exp", e[0]),))
    x = np.array([1.0, 2.0, 3.0], np.float32)
    out = run_graph(g, [*ints(5, 3, 1), x])
    assert out[0] == 5
    np.testing.assert_array_equal(out[3], x)


def test_while_threads_a_token_through_effects_in_its_body():
    def accumulate(b, extra):
        ref, token = extra
        value, token = b.op("ref_load", ref, token)
        return ref, b.op("ref_store", ref, b.op("add", value, value), token)

    g = counting_loop([RefType(F3), TOKEN], accumulate)
    cell = RefCell(F3, np.array([1.0, -2.0, 0.5], np.float32))
    out = run_graph(g, [*ints(0, 4, 1), cell, TOKEN_VALUE])
    assert out[0] == 4 and out[3] is cell and out[4] is TOKEN_VALUE
    np.testing.assert_array_equal(cell.value, np.array([16.0, -32.0, 8.0], np.float32))


def test_max_iterations_stops_a_runaway_loop():
    g = counting_loop([], lambda b, e: (), max_iterations=3)
    assert run_graph(g, ints(0, 3, 1))[0] == 3  # exactly max_iterations is allowed
    with pytest.raises(MskernelError, match=r"While: the loop exceeded max_iterations=3 .*"
                                            r"@cond was still true after 3 iterations"):
        run_graph(g, ints(0, 1, 0))


def test_an_if_inside_a_loop_body_runs_every_iteration():
    branches = (region("then", [F3], lambda b, v: (b.op("neg", v[0]),)),
                region("else", [F3], identity))
    g = counting_loop([PRED, F3], lambda b, e: (e[0], b.op("If", *e, regions=branches)[0]))
    x = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_array_equal(run_graph(g, [*ints(0, 3, 1), np.array(True), x])[4], -x)
    np.testing.assert_array_equal(run_graph(g, [*ints(0, 3, 1), np.array(False), x])[4], x)


def identity(b, v):
    return tuple(v)


# -- region signatures --------------------------------------------------------------------------

def build_if(pred_type, then_types, else_types, then_body, else_body, operand_types):
    b = GraphBuilder()
    regions = (region("then", then_types, then_body), region("else", else_types, else_body))
    return b.op("If", b.input(pred_type), *[b.input(t) for t in operand_types], regions=regions)


@pytest.mark.parametrize("pred", [tensor_type("bool", (1,)), tensor_type("i32", ())])
def test_if_pred_must_be_a_bool_scalar(pred):
    with pytest.raises(OpError, match=rf"op 'If' at .+: pred must be a bool scalar bool\[\], got "):
        build_if(pred, [F3], [F3], identity, identity, [F3])


def test_if_names_a_region_input_mismatch():
    with pytest.raises(OpError, match=r"else region input 0 has type i32\[\], but operand 0 has "
                                      r"type f32\[3\]"):
        build_if(PRED, [F3], [I32], identity, identity, [F3])
    with pytest.raises(OpError, match=r"then region inputs are 2 value\(s\) \(f32\[3\], i32\[\]\), "
                                      r"but operands are 1 \(f32\[3\]\)"):
        build_if(PRED, [F3, I32], [F3], identity, identity, [F3])


def test_if_names_a_branch_output_mismatch():
    with pytest.raises(OpError, match=r"else region output 1 has type f32\[3\], but then region "
                                      r"output 1 has type i32\[\]"):
        build_if(PRED, [F3, I32], [F3, I32], identity, lambda b, v: (v[0], v[0]), [F3, I32])
    with pytest.raises(OpError, match=r"else region outputs are 0 value\(s\)"):
        build_if(PRED, [F3], [F3], identity, lambda b, v: (), [F3])


def build_while(init_types, cond_types, cond_body, body_types, body_body, **attrs):
    b = GraphBuilder()
    regions = (region("cond", cond_types, cond_body), region("body", body_types, body_body))
    return b.op("While", *[b.input(t) for t in init_types], regions=regions, **attrs)


def test_while_cond_must_return_one_bool_scalar():
    with pytest.raises(OpError, match=r"op 'While' at .+: cond region output 0 has type i32\[\], but "
                                      r"the required result 0 has type bool\[\]"):
        build_while([I32], [I32], identity, [I32], identity)
    with pytest.raises(OpError, match=r"cond region outputs are 2 value\(s\)"):
        build_while([PRED, PRED], [PRED, PRED], identity, [PRED, PRED], identity)


def test_while_names_a_body_mismatch():
    with pytest.raises(OpError, match=r"body region output 1 has type f32\[\], but carried "
                                      r"value 1 has type i32\[\]"):
        build_while([PRED, I32], [PRED, I32], lambda b, v: (v[0],), [PRED, I32],
                    lambda b, v: (v[0], b.op("cast", v[1], dtype="f32")))


def test_while_names_a_body_input_mismatch():
    with pytest.raises(OpError, match=r"body region input 0 has type i32\[\], but carried value "
                                      r"0 has type bool\[\]"):
        build_while([PRED], [PRED], identity, [I32], lambda b, v: (b.op("less", v[0], v[0]),))


def test_max_iterations_must_be_non_negative():
    with pytest.raises(OpError, match="max_iterations must be non-negative, got -1"):
        build_while([PRED], [PRED], identity, [PRED], identity, max_iterations=-1)


def test_control_ops_own_two_regions_and_are_not_effectful():
    from mskernel.ops import op_registry

    for name in ("If", "While"):
        op = op_registry().get(name)
        assert op.num_regions == 2 and not op.effectful
