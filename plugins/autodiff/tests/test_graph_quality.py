"""The traced forward + backward program after the generic pass pipeline: the backward pass
reuses the forward values (no forward op is computed twice), leaves nothing for DCE, and the
loop derivatives have the structure documented in mskernel_autodiff.control."""

from collections import Counter

import numpy as np
import pytest

import mskernel
from mskernel import jit, ops
from mskernel.ops import cond, fori_loop
from mskernel.passes.dce import eliminate_dead_code
from mskernel_sdk import op_registry
from mskernel_autodiff.control import emit_while


def optimized(fn, *args):
    """``fn`` under @jit for ``args``, after the generic pipeline; also checks it runs."""
    lowered = jit(fn).lower(*args)
    lowered.compile()(*args)
    return lowered.optimized_graph


def op_counts(graph):
    return Counter(node.op for node in graph.walk())


def assert_clean(graph):
    assert eliminate_dead_code(graph, op_registry()) is graph, "DCE would still remove nodes"
    for node in graph.walk():
        assert not (node.op == "cast" and node.inputs[0].type == node.outputs[0].type), node
        assert node.op != "autodiff.stop_gradient", node


def mlp_arguments(widths, batch=5, seed=0):
    rng = np.random.default_rng(seed)
    layers = [(mskernel.Tensor(rng.standard_normal((a, b)).astype(np.float32)),
               mskernel.Tensor(np.zeros(b, np.float32))) for a, b in zip(widths, widths[1:])]
    x = mskernel.Tensor(rng.standard_normal((batch, widths[0])).astype(np.float32))
    y = mskernel.Tensor(rng.standard_normal((batch, widths[-1])).astype(np.float32))
    return layers, x, y


def mlp_loss(layers, x, y):
    for k, (w, b) in enumerate(layers):
        x = x @ w + b
        if k < len(layers) - 1:
            x = ops.relu(x)
    return ops.mean((x - y) ** 2)


@pytest.mark.parametrize("widths, with_value", [
    ((4, 8, 3), True), ((4, 8, 3), False), ((4, 16, 8, 3), True)])
def test_mlp_gradient_reuses_the_forward_pass(widths, with_value):
    layers, x, y = mlp_arguments(widths)
    flat = [t for layer in layers for t in layer]

    def step(*args):
        params = [tuple(args[i:i + 2]) for i in range(0, len(flat), 2)]
        value, grads = mskernel.value_and_grad(mlp_loss)(params, args[-2], args[-1])
        return (value, grads) if with_value else grads

    graph = optimized(step, *flat, x, y)
    counts = op_counts(graph)
    depth = len(layers)
    # forward: one matmul per layer; backward: a weight gradient per layer and an input
    # gradient for every layer but the first (x is not differentiated)
    assert counts["matmul"] == depth + depth + (depth - 1), counts
    assert counts["relu"] == depth - 1, counts
    assert counts["mean"] == (1 if with_value else 0), counts  # the loss itself is dead code
    assert_clean(graph)


def test_input_gradients_add_one_matmul():
    layers, x, y = mlp_arguments((4, 8, 3))
    (w1, b1), (w2, b2) = layers
    graph = optimized(mskernel.grad(lambda x, *p: mlp_loss([p[:2], p[2:]], x, y),
                                    argnums=(0, 1, 2, 3, 4)), x, w1, b1, w2, b2)
    assert op_counts(graph)["matmul"] == 6
    assert_clean(graph)


def test_cond_gradient_keeps_only_what_is_used():
    x = mskernel.Tensor(np.array([0.5, -1.0]))

    def f(x):
        return ops.sum(cond(ops.sum(x) > 0, ops.sin, ops.exp, x))

    grad_only = optimized(mskernel.grad(f), x)
    with_value = optimized(mskernel.value_and_grad(f), x)
    assert op_counts(grad_only)["If"] == 1  # the forward If is dead: its value is unused
    assert op_counts(with_value)["If"] == 2
    assert_clean(grad_only)
    assert_clean(with_value)


def _top_level_loops(graph):
    return [node for node in graph.nodes if node.op == "While"]


def _nested_loops(node):
    return sum(1 for region in node.regions for inner in region.walk() if inner.op == "While")


@pytest.mark.parametrize("bound", [None, 8], ids=["unbounded", "bounded"])
def test_while_gradient_structure(bound):
    def f(x, w):
        def body(s):
            return [s[0] + 1, ops.tanh(s[1] * s[2]), s[2]]

        _, v, _ = emit_while(lambda s: s[0] < 5, body, [mskernel.Tensor(np.int64(0)), x, w],
                             bound)
        return ops.sum(v)

    x, w = mskernel.Tensor(np.array([0.5, -1.0])), mskernel.Tensor(np.array([1.5, 0.5]))
    graph = optimized(mskernel.grad(f, argnums=(0, 1)), x, w)
    loops = _top_level_loops(graph)
    backward = loops[-1]
    if bound is None:
        # trip count, then a reverse loop recomputing each iteration's state from the start
        assert len(loops) == 2
        assert _nested_loops(backward) == 1
    else:
        # states recorded into [max_iterations, ...] buffers, read back in reverse
        assert len(loops) == 2
        assert _nested_loops(backward) == 0
        assert any(v.type.shape == (bound, 2) for v in backward.inputs)
    assert all(node.attrs["max_iterations"] == bound for node in loops)
    assert_clean(graph)


def test_fori_loop_gradient_runs_and_is_clean():
    x = mskernel.Tensor(np.array([0.5, -1.0, 2.0]))
    graph = optimized(mskernel.grad(
        lambda x: ops.sum(fori_loop(0, 4, lambda i, v: ops.sin(v) * 1.1, x))), x)
    assert_clean(graph)
