"""Fourier transforms exported as ONNX ``DFT`` (opset 17 and later): whole functions built from
the 1-D and n-D transforms, complex values in the pair layout at the model's inputs and
outputs, run under ONNX Runtime against the reference; complex arithmetic ONNX cannot express
is refused with the reason."""

from __future__ import annotations

import numpy as np
import pytest

import mskernel
from mskernel import ops
from mskernel_onnx.capture import capture
from mskernel_onnx.export import ExportError, complex_pairs, to_onnx
from mskernel_sdk import GraphBuilder, tensor_type
from onnx_checks import run_ort


def _spectrum_magnitude(x):
    return ops.abs(ops.rfft2(x, norm="ortho"))


def _round_trip(x):
    return ops.real(ops.ifftn(ops.fftn(x, s=(6, 8), axes=(0, 2)), axes=(0, 2), norm="forward"))


def _smoothed(x):
    return ops.irfft2(ops.rfft2(x, s=(4, 6)), s=(5, 7), norm="backward")


def _parts(z):
    return ops.real(ops.fft(z, 9, axis=0)), ops.imag(ops.conj(ops.ifft(z, norm="ortho")))


@pytest.mark.parametrize("opset", [17, 18, 20, 23])
@pytest.mark.parametrize("fn, dtype", [(_spectrum_magnitude, np.float32),
                                       (_round_trip, np.float64), (_smoothed, np.float64),
                                       (_parts, np.complex128)])
def test_functions_of_transforms_agree_with_the_reference(fn, dtype, opset):
    rng = np.random.default_rng(opset)
    x = rng.normal(size=(5, 4, 7))
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.normal(size=x.shape)
    x = x.astype(dtype)
    captured = capture(fn, [mskernel.Tensor(x)])
    model = to_onnx(captured.graph, captured.weights, opset=opset)
    assert "DFT" in {node.op_type for node in model.graph.node}
    got = run_ort(model, [complex_pairs(x)])
    want = fn(mskernel.Tensor(x))
    for g, w in zip(got, want if isinstance(want, tuple) else (want,)):
        tol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(g, w.numpy(), rtol=tol, atol=tol)


def test_complex_outputs_come_as_pairs():
    z = np.random.default_rng(0).normal(size=(3, 8))
    model = to_onnx(capture(lambda t: ops.rfft(t), [mskernel.Tensor(z)]).graph)
    (got,) = run_ort(model, [z])
    assert got.shape == (3, 5, 2)
    np.testing.assert_allclose(got[..., 0] + 1j * got[..., 1], np.fft.rfft(z), atol=1e-12)


def test_before_opset_17_and_complex_arithmetic_are_refused():
    z = np.ones((2, 4))
    with pytest.raises(ExportError, match=r"op 'fft'.*DFT exists from opset 17"):
        to_onnx(capture(lambda t: ops.rfft(t), [mskernel.Tensor(z)]).graph, opset=16)
    b = GraphBuilder("product")
    x = b.input(tensor_type("c64", (3,)), name="x")
    graph = b.build([b.op("mul", x, x)])
    with pytest.raises(ExportError, match=r"op 'mul'.*no complex arithmetic.*\[\.\.\., 2\]"):
        to_onnx(graph)
