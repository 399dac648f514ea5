"""nn.GraphCell: a graph (with weights, as mskernel.load returns it) run as a cell — eagerly,
under jit, and differentiated with respect to its weights."""

from __future__ import annotations

import numpy as np
import pytest

import mskernel
from mskernel import nn
from mskernel.ir import GraphBuilder, tensor_type
from mskernel.ir.fileformat import Model
from mskernel_sdk import MskernelError, run_reference


def affine_graph():
    """tanh(x @ w + b), with w and b weights."""
    b = GraphBuilder("affine")
    x = b.input(tensor_type("f32", (2, 3)), name="x")
    w = b.input(tensor_type("f32", (3, 4)), name="layer.w")
    bias = b.input(tensor_type("f32", (4,)), name="layer.b")
    return b.build([b.op("tanh", b.op("add", b.op("matmul", x, w), bias))])


WEIGHTS = {"layer.w": np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4),
           "layer.b": np.array([0.5, -0.5, 0.25, 0.0], np.float32)}


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def model():
    return Model(affine_graph(), dict(WEIGHTS), 2, "test", {}, {})


def test_runs_the_graph_eagerly_and_under_jit(rng):
    cell = nn.GraphCell(model())
    x = rng.standard_normal((2, 3)).astype(np.float32)
    expected = run_reference(affine_graph(), [x, *WEIGHTS.values()])[0]
    np.testing.assert_allclose(cell(mskernel.Tensor(x)).numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(mskernel.jit(cell)(mskernel.Tensor(x)).numpy(), expected,
                               rtol=1e-6)


def test_weights_are_parameters_under_their_names_and_differentiable(rng):
    cell = nn.GraphCell(model())
    assert [n for n, _ in cell.parameters_and_names()] == ["layer.w", "layer.b"]
    x = mskernel.Tensor(rng.standard_normal((2, 3)).astype(np.float32))
    grads = mskernel.grad(lambda x: cell(x).sum(), None, weights=cell.trainable_params())(x)
    y = np.tanh(x.numpy() @ WEIGHTS["layer.w"] + WEIGHTS["layer.b"])
    np.testing.assert_allclose(grads[1].numpy(), (1 - y**2).sum(0), rtol=1e-5)
    np.testing.assert_allclose(grads[0].numpy(), x.numpy().T @ (1 - y**2), rtol=1e-5)


def test_a_bare_graph_takes_every_input():
    cell = nn.GraphCell(affine_graph())
    assert not list(cell.get_parameters())
    out = cell(np.ones((2, 3), np.float32), WEIGHTS["layer.w"], WEIGHTS["layer.b"])
    assert out.shape == (2, 4)


def test_what_it_refuses():
    with pytest.raises(TypeError, match="GraphCell takes what mskernel.load returns"):
        nn.GraphCell("model.mindir")
    with pytest.raises(MskernelError, match=r"weight 'layer.b' must be f32\[4\], got f32\[5\]"):
        nn.GraphCell(model(), params_init={"layer.b": np.zeros(5, np.float32)})
