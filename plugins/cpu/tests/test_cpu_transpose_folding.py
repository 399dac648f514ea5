"""Transposes folded into matrix products (``cpu.fold_matmul_transpose``): the BLAS call reads
the operand transposed.  Folded plans (opt level 2) are checked against the unfolded plan (opt
level 0), the reference interpreter on the original graph and the private op's reference on
the optimised graph; and the pass leaves alone what it must not fold."""

from __future__ import annotations

import numpy as np
import pytest

from mskernel_sdk import (
    CompileOptions, GraphBuilder, assert_close, compile_graph, random_array, run_reference,
    tensor_type, tolerance,
)

from mskernel_cpu.gemm_ops import MATMUL_OP


def compile_at(graph, opt_level):
    (executable,) = compile_graph(
        graph, backends=["cpu"],
        options=CompileOptions(opt_level=opt_level, fallback="deny", debug=True)).executables
    return executable


def run(executable, cpu, graph, arrays):
    return [out.to_host() for out in executable.run(
        [cpu.to_device(a, v.type) for v, a in zip(graph.inputs, arrays)])]


def products(graph):
    return [(n.op, n.attrs.get("transpose_a", False), n.attrs.get("transpose_b", False))
            for n in graph.walk() if n.op in ("matmul", MATMUL_OP)]


def check(cpu, graph, expected_products, *, transposes_left=0, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [random_array(rng, v.type.shape, v.type.dtype) for v in graph.inputs]
    folded, plain = compile_at(graph, 2), compile_at(graph, 0)
    optimized = folded.optimized_graph
    assert products(optimized) == expected_products
    assert sum(n.op == "transpose" for n in optimized.walk()) == transposes_left
    dt = graph.outputs[0].type.dtype
    rtol, atol = tolerance(dt)
    with np.errstate(all="ignore"):
        want, own = run_reference(graph, arrays), run_reference(optimized, arrays)
    if dt.name in ("float16", "bfloat16"):
        rtol = 2 * rtol
        atol = rtol * float(np.max(np.abs(want[0]), initial=1.0))
    got, unfolded = run(folded, cpu, graph, arrays), run(plain, cpu, graph, arrays)
    for g, u, w, o in zip(got, unfolded, want, own):
        assert g.shape == w.shape and g.dtype == w.dtype
        assert_close(g, u, dt, rtol=rtol, atol=atol, what="folded vs unfolded")
        assert_close(g, w, dt, rtol=rtol, atol=atol, what="folded vs reference")
        assert_close(g, o, dt, rtol=rtol, atol=atol, what="folded vs its reference")
    return folded


def product_graph(dt, a_shape, b_shape, *, perm_a=False, perm_b=False, bias=False,
                  activation=None):
    """matmul(A, B) [+ bias] [-> activation], A = transpose(a) when ``perm_a`` (the perm, or
    True for None: reverse the axes), B likewise."""
    g = GraphBuilder("product")
    a = g.input(tensor_type(dt, a_shape), "a")
    b = g.input(tensor_type(dt, b_shape), "b")
    if perm_a is not False:
        a = g.op("transpose", a, perm=None if perm_a is True else perm_a)
    if perm_b is not False:
        b = g.op("transpose", b, perm=None if perm_b is True else perm_b)
    y = g.op("matmul", a, b)
    if bias:
        y = g.op("add", y, g.input(tensor_type(dt, (y.type.shape[-1],)), "bias"))
    if activation:
        y = g.op(activation, y)
    return g.build([y])


@pytest.mark.parametrize("dt", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("a_shape, b_shape, perm_a, perm_b", [
    ((9, 7), (9, 5), True, False),
    ((7, 9), (5, 9), False, True),
    ((9, 7), (5, 9), (1, 0), (-1, -2)),
])
def test_transposes_of_2d_operands_fold(cpu, dt, a_shape, b_shape, perm_a, perm_b):
    graph = product_graph(dt, a_shape, b_shape, perm_a=perm_a, perm_b=perm_b)
    check(cpu, graph, [(MATMUL_OP, perm_a is not False, perm_b is not False)])


@pytest.mark.parametrize("dt", ["f32", "bf16"])
def test_a_linear_layer_with_a_transposed_weight_keeps_its_epilogue(cpu, dt):
    graph = product_graph(dt, (6, 12), (10, 12), perm_b=True, bias=True, activation="relu")
    folded = check(cpu, graph, [(MATMUL_OP, False, True)])
    (node,) = [n for n in folded.optimized_graph.walk() if n.op == MATMUL_OP]
    assert node.attrs["activation"] == "relu" and len(node.inputs) == 3


@pytest.mark.parametrize("a_shape, b_shape, perm_a, perm_b", [
    ((3, 8, 5), (8, 4), (0, 2, 1), False),      # batched x read transposed, shared y
    ((2, 3, 6, 5), (3, 7, 5), False, (0, 2, 1)),  # y broadcast over the first batch dim
    ((4, 9, 6), (4, 7, 9), (0, 2, 1), (0, 2, 1)),
    ((300, 64), (96, 64), False, True),          # rows split over threads
    ((64, 300), (64, 96), True, False),
    ((0, 5), (3, 5), False, True),               # no rows
    ((0, 5), (0, 3), True, False),               # an empty inner dim
])
def test_batched_and_threaded_shapes(cpu, a_shape, b_shape, perm_a, perm_b):
    graph = product_graph("f32", a_shape, b_shape, perm_a=perm_a, perm_b=perm_b)
    check(cpu, graph, [(MATMUL_OP, perm_a is not False, perm_b is not False)])


def transposed_product_graph(dt, a_shape, b_shape, *, perm_a=False, bias=False,
                             activation=None):
    """transpose(product_graph(...)), the last two axes swapped."""
    g = GraphBuilder("transposed")
    a = g.input(tensor_type(dt, a_shape), "a")
    b = g.input(tensor_type(dt, b_shape), "b")
    if perm_a:
        a = g.op("transpose", a)
    y = g.op("matmul", a, b)
    if bias:
        y = g.op("add", y, g.input(tensor_type(dt, (y.type.shape[-1],)), "bias"))
    if activation:
        y = g.op(activation, y)
    rank = y.type.rank
    return g.build([g.op("transpose", y, perm=(*range(rank - 2), rank - 1, rank - 2))])


@pytest.mark.parametrize("dt", ["f32", "f64", "bf16"])
def test_a_transposed_product_swaps_its_operands(cpu, dt):
    # a weight's gradient: transpose(transpose(x) @ dy) = dy^T @ x
    graph = transposed_product_graph(dt, (16, 7), (16, 5), perm_a=True)
    folded = check(cpu, graph, [(MATMUL_OP, True, False)])
    (node,) = [n for n in folded.optimized_graph.walk() if n.op == MATMUL_OP]
    assert [v.type.shape for v in node.inputs] == [(16, 5), (16, 7)]
    graph = transposed_product_graph(dt, (2, 6, 4), (4, 3), activation="relu")
    check(cpu, graph, [(MATMUL_OP, True, True)])


def test_a_transposed_product_with_a_bias_keeps_its_transpose(cpu):
    graph = transposed_product_graph("f32", (6, 4), (4, 3), bias=True)
    check(cpu, graph, [(MATMUL_OP, False, False)], transposes_left=1)


def batch_summed_graph(dt, a_shape, b_shape, *, keepdims=True, shared=False, axes=None):
    """sum over the batch axes of transpose(a) @ b (the transpose read by a second product
    too when ``shared``)."""
    g = GraphBuilder("summed")
    a = g.input(tensor_type(dt, a_shape), "a")
    b = g.input(tensor_type(dt, b_shape), "b")
    rank = len(a_shape)
    t = g.op("transpose", a, perm=(*range(rank - 2), rank - 1, rank - 2))
    axes = tuple(range(rank - 2)) if axes is None else axes
    outs = [g.op("sum", g.op("matmul", t, b), axes=axes, keepdims=keepdims)]
    if shared:
        outs.append(g.op("sum", g.op("matmul", t, g.op("neg", b)), axes=axes,
                         keepdims=keepdims))
    return g.build(outs)


@pytest.mark.parametrize("dt", ["f32", "f64"])
@pytest.mark.parametrize("a_shape, b_shape, keepdims", [
    ((4, 16, 6), (4, 16, 5), True),    # a weight's gradient over a batch of sequences
    ((4, 16, 6), (4, 16, 5), False),
    ((2, 3, 8, 6), (2, 3, 8, 5), True),
    ((3, 0, 6), (3, 0, 5), False),     # empty sequences: zeros
])
def test_a_batch_summed_product_becomes_one_product(cpu, dt, a_shape, b_shape, keepdims):
    graph = batch_summed_graph(dt, a_shape, b_shape, keepdims=keepdims)
    folded = check(cpu, graph, [(MATMUL_OP, True, False)])
    (node,) = [n for n in folded.optimized_graph.walk() if n.op == MATMUL_OP]
    rows = int(np.prod(a_shape[:-1]))
    assert [v.type.shape for v in node.inputs] == [(rows, a_shape[-1]), (rows, b_shape[-1])]
    assert not [n for n in folded.optimized_graph.walk() if n.op == "sum"]


def test_batch_summed_products_sharing_a_transpose_read_around_it(cpu):
    graph = batch_summed_graph("f32", (3, 10, 4), (3, 10, 7), shared=True)
    check(cpu, graph, [(MATMUL_OP, True, False)] * 2)


def test_a_partial_batch_sum_stays(cpu):
    graph = batch_summed_graph("f32", (2, 3, 8, 6), (2, 3, 8, 5), axes=(0,))
    folded = check(cpu, graph, [(MATMUL_OP, True, False)])  # the transpose alone folds
    assert [n.op for n in folded.optimized_graph.walk() if n.op == "sum"] == ["sum"]


# -- when the pass must not fold ----------------------------------------------------------------


def test_a_transpose_with_another_user_stays(cpu):
    g = GraphBuilder("shared")
    a = g.input(tensor_type("f32", (6, 4)), "a")
    b = g.input(tensor_type("f32", (6, 3)), "b")
    t = g.op("transpose", a)
    graph = g.build([g.op("matmul", t, b), g.op("exp", t)])
    check(cpu, graph, [("matmul", False, False)], transposes_left=1)


def test_a_returned_transpose_stays(cpu):
    g = GraphBuilder("returned")
    a = g.input(tensor_type("f32", (6, 4)), "a")
    b = g.input(tensor_type("f32", (6, 3)), "b")
    t = g.op("transpose", a)
    graph = g.build([g.op("matmul", t, b), t])
    check(cpu, graph, [("matmul", False, False)], transposes_left=1)


def test_other_permutations_and_integers_stay(cpu):
    graph = product_graph("f32", (5, 3, 4), (3, 4, 2), perm_a=(1, 0, 2))  # not the last two
    check(cpu, graph, [("matmul", False, False)], transposes_left=1)
    graph = product_graph("i32", (4, 3), (4, 5), perm_a=True)
    check(cpu, graph, [("matmul", False, False)], transposes_left=1)


def test_a_transpose_read_twice_by_one_product_stays(cpu):
    g = GraphBuilder("square")
    a = g.input(tensor_type("f32", (5, 5)), "a")
    t = g.op("transpose", a)
    graph = g.build([g.op("matmul", t, t)])
    check(cpu, graph, [("matmul", False, False)], transposes_left=1)
