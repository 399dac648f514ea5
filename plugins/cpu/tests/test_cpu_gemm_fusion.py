"""GEMM epilogue fusion: the ``cpu.fuse_gemm_epilogue`` pass and its private ops
``cpu.conv_bias_act`` and ``cpu.matmul_bias_act``.  Fused plans (opt level 2) are checked
against the unfused plan (opt level 0), the reference interpreter on the original graph, and
the private ops' own references on the optimised graph."""

from __future__ import annotations

import numpy as np
import pytest

import mskernel
from mskernel import nn
from mskernel_sdk import (
    CompileOptions, GraphBuilder, assert_close, compile_graph, dtype as as_dtype, random_array,
    run_reference, tensor_type, tolerance,
)

from mskernel_cpu.gemm_ops import CONV_OP, MATMUL_OP

ACTIVATIONS = {  # the activation attribute → the core op and attributes it fuses
    "none": None,
    "relu": ("relu", {}),
    "sigmoid": ("sigmoid", {}),
    "tanh": ("tanh", {}),
    "gelu": ("gelu", {}),
    "gelu_tanh": ("gelu", {"approximate": "tanh"}),
    "silu": ("silu", {}),
}
PRIVATE = (CONV_OP, MATMUL_OP)


def compile_at(graph, opt_level):
    (executable,) = compile_graph(
        graph, backends=["cpu"],
        options=CompileOptions(opt_level=opt_level, fallback="deny", debug=True)).executables
    return executable


def private_ops(graph):
    return [n for n in graph.walk() if n.op in PRIVATE]


def run(executable, cpu, graph, arrays):
    args = [cpu.to_device(a, v.type) for v, a in zip(graph.inputs, arrays)]
    return [out.to_host() for out in executable.run(args)]


def check_fused(cpu, graph, arrays, fused_ops):
    """``graph`` at opt level 2 has ``fused_ops`` private ops and agrees with opt level 0,
    the reference, and the reference of the optimised graph."""
    fused, unfused = compile_at(graph, 2), compile_at(graph, 0)
    assert [n.op for n in private_ops(fused.optimized_graph)] == fused_ops
    with np.errstate(all="ignore"):
        expected = run_reference(graph, arrays)
        optimized_reference = run_reference(fused.optimized_graph, arrays)
    dt = graph.outputs[0].type.dtype
    rtol, atol = tolerance(dt)
    if dt.name in ("float16", "bfloat16"):
        # Rounded once fused, after each op unfused: the product's rounding error, relative to
        # the largest value, survives the bias add.
        rtol = 2 * rtol
        atol = rtol * float(np.max(np.abs(expected[0]), initial=1.0))
    got, plain = run(fused, cpu, graph, arrays)[0], run(unfused, cpu, graph, arrays)[0]
    assert got.dtype == expected[0].dtype and got.shape == expected[0].shape
    assert_close(got, plain, dt, rtol=rtol, atol=atol, what="fused vs unfused")
    assert_close(got, expected[0], dt, rtol=rtol, atol=atol, what="fused vs reference")
    assert_close(got, optimized_reference[0], dt, rtol=rtol, atol=atol,
                 what="fused vs its reference")
    return fused


def activate(b, y, activation):
    if ACTIVATIONS[activation] is None:
        return y
    op, attrs = ACTIVATIONS[activation]
    return b.op(op, y, **attrs)


def conv_graph(dt, x_shape, w_shape, activation, *, bias=True, **attrs):
    rng = np.random.default_rng(len(x_shape) * 7 + attrs.get("groups", 1))
    b = GraphBuilder("conv_bias_act")
    x = b.input(tensor_type(dt, x_shape), "x")
    w = b.input(tensor_type(dt, w_shape), "w")
    inputs = [x, w]
    y = b.op("conv", x, w, **attrs)
    if bias:
        c = b.input(tensor_type(dt, (w_shape[0],)), "bias")
        inputs.append(c)
        y = b.op("add", y, b.op("reshape", c, shape=(w_shape[0],) + (1,) * (len(x_shape) - 2)))
    graph = b.build([activate(b, y, activation)])
    return graph, [random_array(rng, v.type.shape, dt) for v in inputs]


def matmul_graph(dt, a_shape, b_shape, activation, *, bias=True):
    rng = np.random.default_rng(len(a_shape) + len(b_shape))
    g = GraphBuilder("matmul_bias_act")
    a = g.input(tensor_type(dt, a_shape), "a")
    w = g.input(tensor_type(dt, b_shape), "b")
    inputs = [a, w]
    y = g.op("matmul", a, w)
    if bias:
        c = g.input(tensor_type(dt, (b_shape[-1],)), "bias")
        inputs.append(c)
        y = g.op("add", c, y)  # the bias first: either operand order fuses
    graph = g.build([activate(g, y, activation)])
    return graph, [random_array(rng, v.type.shape, dt) for v in inputs]


# -- every activation, every float dtype ----------------------------------------------------


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("dt", ["f32", "f64", "f16", "bf16"])
def test_conv_bias_activation(cpu, dt, activation):
    graph, arrays = conv_graph(dt, (2, 4, 9, 8), (6, 4, 3, 3), activation, padding=(1, 1, 1, 1))
    check_fused(cpu, graph, arrays, [CONV_OP])


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("dt", ["f32", "f64", "f16", "bf16"])
def test_matmul_bias_activation(cpu, dt, activation):
    graph, arrays = matmul_graph(dt, (7, 12), (12, 5), activation)
    check_fused(cpu, graph, arrays, [MATMUL_OP])


# -- geometry ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dt", ["f32", "f64"])
@pytest.mark.parametrize("x_shape, w_shape, attrs", [
    ((2, 4, 17), (6, 2, 3), {"stride": (2,), "padding": (1, 2), "groups": 2}),
    ((1, 3, 20), (5, 3, 1), {}),
    ((2, 6, 11, 10), (6, 1, 3, 3), {"stride": (2, 1), "padding": (1, 1, 0, 2), "groups": 6}),
    ((1, 8, 7, 7), (4, 8, 1, 1), {}),
    ((2, 4, 12, 12), (8, 2, 5, 5), {"stride": (3, 3), "dilation": (1, 2), "groups": 2}),
    ((1, 2, 4, 5, 6), (3, 2, 2, 3, 3), {"padding": (1, 1, 0, 1, 1, 0)}),
    ((0, 3, 5, 5), (4, 3, 3, 3), {}),  # no images
])
def test_conv_geometries(cpu, dt, x_shape, w_shape, attrs):
    graph, arrays = conv_graph(dt, x_shape, w_shape, "relu", **attrs)
    check_fused(cpu, graph, arrays, [CONV_OP])


@pytest.mark.parametrize("dt", ["f32", "f64", "bf16"])
@pytest.mark.parametrize("a_shape, b_shape", [
    ((3, 6, 10), (10, 4)),        # a linear layer over a batch of sequences
    ((2, 3, 5, 8), (3, 8, 9)),    # batched, b broadcast over the first batch dim
    ((4, 1, 7), (4, 7, 6)),
    ((300, 64), (64, 96)),        # rows split over threads
    ((5, 0), (0, 3)),             # an empty inner dim: the bias alone
])
def test_matmul_shapes(cpu, dt, a_shape, b_shape):
    graph, arrays = matmul_graph(dt, a_shape, b_shape, "silu")
    check_fused(cpu, graph, arrays, [MATMUL_OP])


@pytest.mark.parametrize("activation", ["relu", "gelu_tanh"])
def test_products_without_bias_fuse_their_activation(cpu, activation):
    graph, arrays = conv_graph("f32", (2, 3, 8, 8), (4, 3, 3, 3), activation, bias=False)
    fused = check_fused(cpu, graph, arrays, [CONV_OP])
    (node,) = private_ops(fused.optimized_graph)
    assert len(node.inputs) == 2 and node.attrs["activation"] == activation
    graph, arrays = matmul_graph("f64", (4, 6), (6, 3), activation, bias=False)
    check_fused(cpu, graph, arrays, [MATMUL_OP])


# -- when the pass must not fire --------------------------------------------------------------


def test_no_fusion_when_an_intermediate_has_another_user(cpu):
    rng = np.random.default_rng(3)
    b = GraphBuilder("shared")
    x = b.input(tensor_type("f32", (2, 3, 6, 6)), "x")
    w = b.input(tensor_type("f32", (4, 3, 3, 3)), "w")
    c = b.input(tensor_type("f32", (4, 1, 1)), "bias")
    y = b.op("conv", x, w)
    biased = b.op("add", y, c)
    graph = b.build([b.op("relu", biased), b.op("mul", y, y)])  # y read twice
    arrays = [random_array(rng, v.type.shape, "f32") for v in graph.inputs]
    check_fused(cpu, graph, arrays, [])
    b = GraphBuilder("returned")
    a = b.input(tensor_type("f32", (4, 5)), "a")
    m = b.input(tensor_type("f32", (5, 3)), "m")
    c = b.input(tensor_type("f32", (3,)), "bias")
    biased = b.op("add", b.op("matmul", a, m), c)
    graph = b.build([b.op("relu", biased), biased])  # the biased product is an output
    arrays = [random_array(rng, v.type.shape, "f32") for v in graph.inputs]
    fused = check_fused(cpu, graph, arrays, [MATMUL_OP])
    (node,) = private_ops(fused.optimized_graph)
    assert len(node.inputs) == 3 and node.attrs["activation"] == "none"


def test_no_fusion_of_a_bias_that_is_not_per_channel(cpu):
    rng = np.random.default_rng(4)
    b = GraphBuilder("full_add")
    x = b.input(tensor_type("f32", (2, 3, 6, 6)), "x")
    w = b.input(tensor_type("f32", (4, 3, 1, 1)), "w")
    r = b.input(tensor_type("f32", (1, 1, 6, 6)), "r")  # per pixel, not per channel
    graph = b.build([b.op("add", b.op("conv", x, w), r)])
    arrays = [random_array(rng, v.type.shape, "f32") for v in graph.inputs]
    check_fused(cpu, graph, arrays, [])


# -- the graphs the nn layers produce -----------------------------------------------------------


def jitted(cell, x, opt_level):
    cell.set_train(False)
    compiled = mskernel.jit(cell, backend="cpu", opt_level=opt_level).lower(x).compile()
    (executable,) = compiled.executable.executables
    return compiled, executable


@pytest.mark.parametrize("layer, x_shape, fused_op", [
    (lambda: nn.Conv2d(3, 8, 3, has_bias=True), (2, 3, 10, 10), CONV_OP),
    (lambda: nn.Dense(12, 7), (5, 12), MATMUL_OP),
])
def test_nn_layers_with_relu_fuse(layer, x_shape, fused_op):
    x = np.random.default_rng(5).standard_normal(x_shape).astype(np.float32)
    cell = nn.SequentialCell([layer(), nn.ReLU()])
    compiled, executable = jitted(cell, x, 2)
    (node,) = private_ops(executable.optimized_graph)
    assert node.op == fused_op and len(node.inputs) == 3 and node.attrs["activation"] == "relu"
    assert not {"add", "relu", "reshape"} & {n.op for n in executable.optimized_graph.nodes}
    plain, _ = jitted(cell, x, 0)
    assert_close(np.asarray(compiled(x)), np.asarray(plain(x)), as_dtype("float32"))


def test_a_folded_batch_norm_fuses_into_the_conv_epilogue():
    x = np.random.default_rng(7).standard_normal((2, 3, 9, 9)).astype(np.float32)
    cell = nn.SequentialCell([nn.Conv2d(3, 5, 3), nn.BatchNorm2d(5), nn.ReLU()])
    compiled, executable = jitted(cell, x, 2)
    (node,) = private_ops(executable.optimized_graph)
    assert node.op == CONV_OP and len(node.inputs) == 3 and node.attrs["activation"] == "relu"
    assert "batch_norm" not in {n.op for n in executable.optimized_graph.nodes}
    plain, _ = jitted(cell, x, 0)
    assert_close(np.asarray(compiled(x)), np.asarray(plain(x)), as_dtype("float32"),
                 rtol=1e-5, atol=1e-5)


class LeNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, pad_mode="same", has_bias=True)
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid", has_bias=True)
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(16 * 5 * 5, 120)
        self.fc2 = nn.Dense(120, 84)
        self.fc3 = nn.Dense(84, 10)

    def construct(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        x = self.relu(self.fc1(self.flatten(x)))
        return self.fc3(self.relu(self.fc2(x)))


def test_lenet_forward_fused_equals_unfused():
    x = np.random.default_rng(6).standard_normal((4, 1, 28, 28)).astype(np.float32)
    net = LeNet()
    fused, executable = jitted(net, x, 2)
    assert [n.op for n in private_ops(executable.optimized_graph)] == [CONV_OP] * 2 + \
        [MATMUL_OP] * 3
    plain, _ = jitted(net, x, 0)
    assert_close(np.asarray(fused(x)), np.asarray(plain(x)), as_dtype("float32"))
