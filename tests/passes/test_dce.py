"""Dead code elimination: what is removed, what is kept."""

from mskernel.ir import TOKEN, GraphBuilder, RefType, tensor_type
from mskernel.passes import DeadCodeElimination

DCE = DeadCodeElimination()
F32 = tensor_type("f32", (3,))


def test_removes_nodes_whose_results_are_unused(checker):
    b = GraphBuilder()
    x = b.input(F32)
    used = b.op("exp", x)
    dead = b.op("sin", x)
    b.op("mul", dead, dead)
    result = checker.apply(DCE, b.build([used]))
    assert [n.op for n in result.graph.nodes] == ["exp"]
    assert result.graph.inputs == (x,)


def test_a_graph_without_dead_code_is_returned_as_is(checker):
    b = GraphBuilder()
    x = b.input(F32)
    g = b.build([b.op("exp", x)])
    result = checker.apply(DCE, g)
    assert result.graph is g and not result.changed


def test_keeps_effects_whose_results_are_unused(checker):
    b = GraphBuilder()
    ref, token, x = b.input(RefType(F32)), b.input(TOKEN), b.input(F32)
    loaded, token = b.op("ref_load", ref, token)  # the loaded value is never used
    b.op("ref_store", ref, b.op("neg", x), token)  # nor is the token after the store
    g = b.build([x])
    result = checker.apply(DCE, g)
    assert [n.op for n in result.graph.nodes] == ["ref_load", "neg", "ref_store"]
    assert result.graph is g


def test_removes_unused_random_draws(checker):
    b = GraphBuilder()
    x = b.input(F32)
    key = b.op("random_key", seed=3)
    b.op("random_uniform", key, shape=(3,), dtype="f32")
    result = checker.apply(DCE, b.build([x]))
    assert result.graph.nodes == ()


def test_removes_dead_nodes_inside_regions_but_keeps_their_signature(checker, region):
    then = region(lambda b, x, y: (b.op("exp", x), b.op("add", x, b.op("sin", y))), F32, F32)

    def other_branch(b, x, y):
        b.op("cos", y)  # dead
        return b.op("neg", x), y

    other = region(other_branch, F32, F32)
    b = GraphBuilder()
    pred, x, y = b.input(tensor_type("bool", ())), b.input(F32), b.input(F32)
    first, _unused_output = b.op("If", pred, x, y, regions=(then, other))
    b.op("If", pred, x, y, regions=(then, other))  # a whole dead If
    result = checker.apply(DCE, b.build([first]))
    (node,) = result.graph.nodes
    assert [n.op for n in node.regions[0].nodes] == ["exp", "sin", "add"]
    assert [n.op for n in node.regions[1].nodes] == ["neg"]
    assert node.regions[1].input_types == (F32, F32)
    assert node.regions[1].output_types == (F32, F32)
    assert len(node.outputs) == 2


def test_keeps_a_region_node_whose_region_has_effects(checker, region):
    def store(b, ref, x, token):
        return (b.op("ref_store", ref, x, token),)

    def keep(b, ref, x, token):
        return (token,)

    types = (RefType(F32), F32, TOKEN)
    b = GraphBuilder()
    pred, ref, x, token = (b.input(tensor_type("bool", ())), b.input(RefType(F32)),
                           b.input(F32), b.input(TOKEN))
    b.op("If", pred, ref, x, token, regions=(region(store, *types), region(keep, *types)))
    g = b.build([x])
    result = checker.apply(DCE, g, seeds=range(4))
    assert result.graph is g


def test_removes_dead_nodes_in_a_loop_body(checker, region):
    i32 = tensor_type("i32", ())
    cond = region(lambda b, i, x: (b.op("less", i, b.op("full", shape=(), value=3, dtype="i32")),),
                  i32, F32)

    def body(b, i, x):
        b.op("exp", x)  # dead
        one = b.op("full", shape=(), value=1, dtype="i32")
        return b.op("add", i, one), b.op("mul", x, x)

    b = GraphBuilder()
    i, x = b.input(i32), b.input(F32)
    _, out = b.op("While", i, x, regions=(cond, region(body, i32, F32)))
    result = checker.apply(DCE, b.build([out]))
    (loop,) = result.graph.nodes
    assert [n.op for n in loop.regions[1].nodes] == ["full", "add", "mul"]
