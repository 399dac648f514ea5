"""Collectives are ordered by the state token: the O3 pass pipeline (DCE, CSE, folding,
simplification, repeated to a fixed point) never drops a collective whose result is unused,
never merges two identical ones and never reorders them — any of which would leave the ranks
calling different collectives."""

from __future__ import annotations

import numpy as np
from mskernel.ir import verify
from mskernel_sdk import CompileOptions, GraphBuilder, compile_graph, tensor_type

import mskernel
from mskernel import communication as comm
from mskernel_parallel import ops

ONE = {"group": "world", "group_size": 1}


def collectives(graph):
    return [(n.op, n.attrs.get("reduction")) for n in graph.nodes if n.op.startswith("parallel.")]


def test_o3_keeps_every_collective_in_order(rng):
    sequence = [(ops.ALL_REDUCE, "sum"), (ops.ALL_REDUCE, "sum"), (ops.ALL_REDUCE, "max"),
                (ops.ALL_GATHER, None), (ops.ALL_REDUCE, "sum"), (ops.BARRIER, None)]
    for _ in range(5):
        order = [sequence[i] for i in rng.permutation(len(sequence))]
        b = GraphBuilder("steps")
        x, token = b.input(tensor_type("f32", (4,))), b.input(ops.TOKEN)
        doubled = b.op("mul", x, b.op("constant", value=np.full(4, 2, np.float32)))
        results = []
        for op, reduction in order:  # identical ops on one operand; most results unused
            extra = {"reduction": reduction} if reduction else {}
            if op == ops.BARRIER:
                token = b.op(op, token, **ONE)
            else:
                value, token = b.op(op, doubled, token, **ONE, **extra)
                results.append(value)
        graph = b.build([results[0], token])
        optimized = compile_graph(graph, options=CompileOptions(opt_level=3)).graph
        verify(optimized)
        assert collectives(optimized) == order


def test_jit_orders_collectives_as_the_program_calls_them():
    @mskernel.jit(opt_level=3)
    def step(x):
        total = comm.all_reduce(x)
        comm.all_reduce(x)                     # unused
        comm.barrier()
        return total + comm.all_reduce(x, "max")

    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(step(x).numpy(), 2 * x)
    graph = step.lower(x).optimized_graph
    assert collectives(graph) == [(ops.ALL_REDUCE, "sum"), (ops.ALL_REDUCE, "sum"),
                                  (ops.BARRIER, None), (ops.ALL_REDUCE, "max")]
    tokens = [n.inputs[-1] for n in graph.nodes if n.op.startswith("parallel.")]
    produced = [n.outputs[-1] for n in graph.nodes if n.op.startswith("parallel.")]
    assert tokens[1:] == produced[:-1]  # each collective follows the previous one's token


def test_collective_inside_a_branch_is_refused():
    from mskernel_sdk import MskernelError

    @mskernel.jit
    def branchy(x):
        if x.sum() > 0:
            x = comm.all_reduce(x)
        return x

    try:
        branchy(np.ones(2, np.float32))
    except MskernelError as exc:
        assert "side effects" in str(exc) and "parallel.all_reduce" in str(exc)
    else:
        raise AssertionError("a collective inside a converted branch was accepted")
