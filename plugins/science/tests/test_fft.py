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


ND = ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn"]
ND_CASES = [{}, {"s": (6, 5)}, {"axes": (0, 2)}, {"s": (3, 8), "axes": (2, 0)},
            {"s": (4, 3, 6), "axes": (0, 1, 2)}, {"axes": (1,)}]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", ND)
def test_nd_transforms_match_numpy(name, norm):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(4, 5, 7))
    arg = x if name.startswith("r") else x + 1j * rng.normal(size=x.shape)
    for case in ND_CASES:
        if name.endswith("2") and len(case.get("axes", case.get("s", (0, 0)))) != 2:
            continue
        numpy_case = case if "axes" in case or "s" not in case or name.endswith("2") else \
            {**case, "axes": tuple(range(-len(case["s"]), 0))}  # NumPy 2 wants them explicit
        expected = getattr(np.fft, name)(arg, norm=norm, **numpy_case)
        got = getattr(ops, name)(arg, norm=norm, **case).numpy()
        assert got.shape == expected.shape, (name, case)
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12, err_msg=f"{name} {case}")


def test_nd_transforms_take_mindspore_dim_and_float32():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(3, 4, 6)).astype(np.float32)
    np.testing.assert_allclose(ops.rfftn(x, dim=(0, 2)).numpy(), np.fft.rfftn(x, axes=(0, 2)),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ops.fft2(x, dim=(0, 1), norm="ortho").numpy(),
                               np.fft.fft2(x, axes=(0, 1), norm="ortho"), rtol=1e-4, atol=1e-4)
    assert ops.fft(x, dim=0).shape == (3, 4, 6) and ops.fftn(x).dtype == mskernel.complex64
    assert ops.irfft2(ops.rfft2(x)).dtype == mskernel.float32
    np.testing.assert_allclose(ops.irfftn(ops.rfftn(x), s=x.shape).numpy(), x, atol=1e-5)


@pytest.mark.parametrize("norm", NORMS)
def test_nd_gradients_match_finite_differences(norm):
    rng = np.random.default_rng(6)
    x = rng.normal(size=(3, 4, 5))
    w = rng.normal(size=(3, 4, 3)) + 1j * rng.normal(size=(3, 4, 3))
    _check_gradient(lambda t: ops.sum(ops.real(ops.rfftn(t, (4, 6), (0, 2), norm)
                                               * Tensor(np.resize(w, (4, 4, 4))))), x)
    _check_gradient(lambda t: ops.sum(ops.abs(ops.fft2(t, (5, 3), norm=norm)) ** 2), x)
    z = rng.normal(size=(3, 4, 3)) + 1j * rng.normal(size=(3, 4, 3))
    v = rng.normal(size=(3, 4, 4))
    _check_gradient(lambda t: ops.sum(ops.irfft2(t, norm=norm) * Tensor(v)), z)
    _check_gradient(lambda t: ops.sum(ops.real(ops.ifftn(t, axes=(0, 1), norm=norm) ** 2)), z)


def test_nd_bad_arguments_name_the_function():
    with pytest.raises(ValueError, match=r"fftn: s=\(4,\) and axes=\(0, 1\)"):
        ops.fftn(np.ones((2, 3)), s=(4,), axes=(0, 1))
