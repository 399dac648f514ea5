"""The pseudo-spectral Burgers solver against the Cole–Hopf solution, the random initial
conditions, and the Fourier neural operator: shapes, resolution independence, training."""

from __future__ import annotations

import numpy as np

import mskernel
from mskernel import Tensor
from mskernel_science import fno, problems


def test_solver_matches_the_cole_hopf_solution():
    nu, n = 0.05 / np.pi, 256
    x = np.linspace(-1, 1, n, endpoint=False)
    u = fno.solve_burgers(-np.sin(np.pi * x), nu, 0.5, length=2.0)
    np.testing.assert_allclose(u[0], problems.burgers_reference(x, 0.5, nu), atol=1e-5)


def test_random_initial_conditions_are_smooth_periodic_fields():
    u0 = fno.random_initial_conditions(200, 128, seed=1)
    assert u0.shape == (200, 128)
    assert 0.5 < u0.std() < 3
    spectrum = np.mean(np.abs(np.fft.rfft(u0)) ** 2, axis=0)
    assert spectrum[1] > 100 * spectrum[20]  # decays as k^-4


def test_fno_is_resolution_independent_and_learns():
    mskernel.random.set_seed(0)
    net = fno.FNO1d(modes=6, width=12, layers=2)
    u0, u1 = fno.burgers_dataset(40, 64, seed=2)
    coarse = fno.predict(net, u0[:, ::2])
    fine = fno.predict(net, u0)
    assert coarse.shape == (40, 32) and fine.shape == (40, 64)
    history = fno.train(net, u0, u1, epochs=8, batch_size=10, learning_rate=1e-2)
    assert history[-1] < 0.75 * history[0]
    assert fno.relative_l2_per_sample(fno.predict(net, u0), u1) < history[0]


def _spectral_conv2d_numpy(layer, x):
    """The 2-D Fourier layer in NumPy with the layer's weights."""
    m1, m2 = layer.modes1, layer.modes2
    n1, n2 = x.shape[-2:]
    spectrum = np.fft.rfft2(x)
    low = layer.low_real.numpy() + 1j * layer.low_imag.numpy()
    high = layer.high_real.numpy() + 1j * layer.high_imag.numpy()
    out = np.zeros((x.shape[0], low.shape[1], n1, n2 // 2 + 1), complex)
    out[:, :, :m1, :m2] = np.einsum("bixy,ioxy->boxy", spectrum[:, :, :m1, :m2], low)
    out[:, :, n1 - m1:, :m2] = np.einsum("bixy,ioxy->boxy", spectrum[:, :, n1 - m1:, :m2], high)
    return np.fft.irfft2(out, s=(n1, n2))


def test_spectral_conv2d_matches_numpy_at_two_resolutions():
    layer = fno.SpectralConv2d(3, 4, modes1=3, modes2=4)
    rng = np.random.default_rng(3)
    for shape in [(2, 3, 16, 12), (2, 3, 8, 7)]:
        x = rng.normal(size=shape).astype(np.float32)
        out = layer(Tensor(x)).numpy()
        assert out.shape == (2, 4) + shape[2:]
        np.testing.assert_allclose(out, _spectral_conv2d_numpy(layer, x), rtol=1e-4, atol=1e-5)


def test_spectral_conv2d_gradient_reaches_both_weight_blocks():
    layer = fno.SpectralConv2d(2, 2, modes1=2, modes2=3)
    x = Tensor(np.random.default_rng(4).normal(size=(1, 2, 8, 8)).astype(np.float32))
    grads = mskernel.grad(lambda t: mskernel.ops.sum(layer(t) ** 2), None,
                          layer.trainable_params())(x)
    assert len(grads) == 4 and all(np.abs(g.numpy()).max() > 0 for g in grads)
