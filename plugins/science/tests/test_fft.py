"""The core ``fft`` op through ``mskernel.ops``: NumPy's results on the cpu backend, and
gradients of real losses against central finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import mskernel
from mskernel import Tensor, ops

NORMS = [None, "ortho", "forward"]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 6, 13])
def test_transforms_match_numpy(norm, n):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 10, 4))
    z = x + 1j * rng.normal(size=x.shape)
    for axis in (1, -1):
        for ours, theirs, arg in [(ops.fft, np.fft.fft, z), (ops.ifft, np.fft.ifft, z),
                                  (ops.rfft, np.fft.rfft, x), (ops.irfft, np.fft.irfft, z)]:
            np.testing.assert_allclose(ours(arg, n, axis, norm).numpy(),
                                       theirs(arg, n, axis, norm), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ops.rfft(x.astype(np.float32), n, 1, norm).numpy(),
                               np.fft.rfft(x, n, 1, norm), rtol=1e-4, atol=1e-4)


def _check_gradient(loss, x, h=1e-6):
    g = np.asarray(mskernel.grad(loss)(Tensor(x)).numpy())
    rng = np.random.default_rng(1)
    for _ in range(4):
        d = rng.normal(size=x.shape)
        if np.iscomplexobj(x):
            d = d + 1j * rng.normal(size=x.shape)
        fd = (float(loss(Tensor(x + h * d)).numpy()) - float(loss(Tensor(x - h * d)).numpy())) / (2 * h)
        # JAX's convention (grad |z|^2 = 2 conj(z)): the derivative along d is Re(sum(g * d))
        pairing = np.real(np.sum(g * d))
        assert pairing == pytest.approx(fd, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 7, 12])
def test_rfft_and_irfft_gradients_match_finite_differences(norm, n):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 9))
    w = rng.normal(size=(2, (n or 9) // 2 + 1)) + 1j * rng.normal(size=(2, (n or 9) // 2 + 1))
    _check_gradient(lambda t: ops.sum(ops.real(ops.rfft(t, n, -1, norm) * Tensor(w))), x)
    _check_gradient(lambda t: ops.sum(ops.abs(ops.rfft(t, n, -1, norm)) ** 2), x)
    z = rng.normal(size=(2, 6)) + 1j * rng.normal(size=(2, 6))
    v = rng.normal(size=(2, n or 10))
    _check_gradient(lambda t: ops.sum(ops.irfft(t, n, -1, norm) * Tensor(v)), z)


def test_complex_fft_gradient_matches_finite_differences():
    rng = np.random.default_rng(3)
    z = rng.normal(size=(5, 3)) + 1j * rng.normal(size=(5, 3))
    _check_gradient(lambda t: ops.sum(ops.abs(ops.fft(t, 8, 0, "ortho")) ** 2), z)
    _check_gradient(lambda t: ops.sum(ops.real(ops.ifft(t, 4, 0) ** 2)), z)


def test_spectral_derivative_through_fft_and_its_gradient():
    """d/dx sin(kx) by rfft -> multiply by ik -> irfft, and the gradient of its energy."""
    n = 32
    x = np.linspace(0, 2 * np.pi, n, endpoint=False)
    ik = Tensor(1j * np.fft.rfftfreq(n, 1 / n))

    def derivative(u):
        return ops.irfft(ops.rfft(u) * ik, n)

    np.testing.assert_allclose(derivative(Tensor(np.sin(3 * x))).numpy(), 3 * np.cos(3 * x),
                               atol=1e-12)
    _check_gradient(lambda u: ops.sum(derivative(u) ** 2), np.sin(x) + 0.1 * np.cos(5 * x))


def test_bad_input_names_the_op():
    with pytest.raises(Exception, match="fft.*norm"):
        ops.rfft(np.ones(4), norm="both")
    with pytest.raises(Exception, match="n=0"):
        ops.irfft(np.ones(1, np.complex64))
