"""Graphs built by hand with GraphBuilder point at the user's lines: a node made by user code
is located where it was made, so the builder's errors, the verifier's and the printed graph
name that line; nodes mskernel makes itself (the parser, passes) get no such line."""

import inspect

import pytest

from mskernel.errors import OpError, VerifyError
from mskernel.ir import GraphBuilder, SourceLoc, parse_graph, print_graph, tensor_type, verify

HERE = __file__


def line_of(marker):
    """The line of this file that ends with the comment ``marker``."""
    lines, _ = inspect.findsource(inspect.getmodule(line_of))
    (number,) = [i + 1 for i, line in enumerate(lines) if line.rstrip().endswith(marker)]
    return number


def test_a_rejected_node_names_the_line_that_made_it():
    b = GraphBuilder("f")
    x = b.input(tensor_type("f32", (2, 3)))
    y = b.input(tensor_type("f32", (4, 3)))
    with pytest.raises(OpError) as caught:
        b.op("add", x, y)  # op line
    assert str(caught.value) == (
        f"op 'add' at {HERE}:{line_of('# op line')}: shapes [2, 3] and [4, 3] cannot be "
        "broadcast together (inputs: f32[2,3], f32[4,3])")
    with pytest.raises(OpError, match=rf"op 'add' at {HERE}:{line_of('# make line')}: "):
        b.make_node("add", [x, y], {})  # make line


def test_nodes_carry_the_users_line_into_the_text_and_the_verifiers_errors():
    stray = GraphBuilder("other").input(tensor_type("f32", (2,)))
    b = GraphBuilder("g")
    x = b.input(tensor_type("f32", (2,)))
    y = b.op("add", x, stray)  # node line
    graph = b.build([y])
    line = line_of("# node line")
    assert graph.nodes[0].loc == SourceLoc(HERE, line)
    assert f'loc("{HERE}":{line})' in print_graph(graph)
    with pytest.raises(VerifyError, match=rf"graph @g, node 0 'add' at {HERE}:{line}: input 1"):
        verify(graph)


def test_an_explicit_location_wins():
    b = GraphBuilder("h")
    x = b.input(tensor_type("f32", (2,)))
    y = b.op("exp", x, loc=SourceLoc("model.py", 7))
    assert b.build([y]).nodes[0].loc == SourceLoc("model.py", 7)


def test_nodes_mskernel_makes_itself_get_no_user_line():
    graph = parse_graph("graph @p(%0: f32[2]) {\n  %1 = exp(%0) : f32[2]\n  return %1\n}\n")
    assert graph.nodes[0].loc is None
