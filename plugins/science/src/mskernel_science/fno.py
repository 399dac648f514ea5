"""A 1-D Fourier neural operator (Li et al. 2021) and the Burgers data it learns from, made by
this module's own pseudo-spectral solver.

:func:`solve_burgers` integrates ``u_t + (u^2/2)_x = nu u_xx`` on a periodic interval of
``length`` with the integrating-factor RK4 scheme in Fourier space (the viscous term exact, the
nonlinear term 2/3-dealiased).  :func:`random_initial_conditions` draws the FNO paper's
Gaussian random fields ``N(0, 625 (-Laplace + 25 I)^-2)``; :func:`burgers_dataset` pairs them
with their solutions at ``t = 1``.

:class:`FNO1d` lifts ``(u0(x), x)`` to ``width`` channels, applies ``layers`` Fourier layers —
``rfft`` along x, the lowest ``modes`` frequencies multiplied by learned complex matrices,
``irfft`` (the core op ``fft`` and its derivative rules), plus a pointwise linear map, GELU —
and projects back to one channel.  :class:`SpectralConv2d` is the 2-D Fourier layer (over
``rfft2``/``irfft2``) for operators on 2-D fields.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

import mskernel
from mskernel import Tensor, nn, ops


def solve_burgers(u0: np.ndarray, nu: float, t_final: float, length: float = 1.0,
                  steps: Optional[int] = None) -> np.ndarray:
    """Solutions at ``t_final`` of initial conditions ``u0`` (``[batch, n]``, periodic grid of
    ``length``), float64, with ``steps`` RK4 steps (default: a CFL-safe count)."""
    u0 = np.atleast_2d(np.asarray(u0, np.float64))
    n = u0.shape[-1]
    k = 2 * np.pi * np.fft.rfftfreq(n, length / n)
    dealias = np.abs(np.fft.rfftfreq(n, 1 / n)) < n / 3
    if steps is None:
        dx = length / n
        steps = int(np.ceil(t_final / min(0.2 * dx / max(np.abs(u0).max(), 1e-6), 0.05)))
    dt = t_final / steps
    half = np.exp(-nu * k ** 2 * dt / 2)

    def nonlinear(v_hat: np.ndarray) -> np.ndarray:
        u = np.fft.irfft(v_hat * dealias, n)
        return -0.5j * k * np.fft.rfft(u * u) * dealias

    u_hat = np.fft.rfft(u0)
    for _ in range(steps):
        a = nonlinear(u_hat)
        b = nonlinear(half * (u_hat + dt / 2 * a))
        c = nonlinear(half * u_hat + dt / 2 * b)
        d = nonlinear(half ** 2 * u_hat + dt * half * c)
        u_hat = half ** 2 * (u_hat + dt / 6 * a) + dt / 3 * half * (b + c) + dt / 6 * d
    return np.fft.irfft(u_hat, n)


def random_initial_conditions(count: int, n: int, seed: int = 0) -> np.ndarray:
    """``count`` periodic fields on ``n`` points of ``[0, 1)`` drawn from
    ``N(0, 625 (-Laplace + 25 I)^-2)``, ``[count, n]``."""
    rng = np.random.default_rng(seed)
    m = n // 2 + 1
    scale = 25.0 / (4 * np.pi ** 2 * np.arange(m) ** 2 + 25.0)
    coef = (rng.normal(size=(count, m)) + 1j * rng.normal(size=(count, m))) * scale
    coef[:, 0] = coef[:, 0].real * np.sqrt(2)
    return np.fft.irfft(coef, n) * n / np.sqrt(2)


def burgers_dataset(count: int, n: int = 256, nu: float = 0.1, seed: int = 0
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Initial conditions and their Burgers solutions at ``t = 1`` on ``[0, 1)``."""
    u0 = random_initial_conditions(count, n, seed)
    return u0, solve_burgers(u0, nu, 1.0)


def _complex_weights(shape: tuple[int, ...], seed: int, name: str
                     ) -> tuple[mskernel.Parameter, mskernel.Parameter]:
    """A learned complex tensor as its real and imaginary parts, uniform in ``[0, 1 / (in *
    out))`` (the FNO reference implementation's scale)."""
    bound = 1.0 / (shape[0] * shape[1])
    rng = np.random.default_rng(seed)
    return tuple(mskernel.Parameter(rng.uniform(0, bound, shape).astype(np.float32),
                                    name=f"{name}_{part}") for part in ("real", "imag"))


def _mix(spectrum: Tensor, weight_real: Tensor, weight_imag: Tensor, equation: str) -> Tensor:
    """``einsum(equation, spectrum, W)`` for complex ``W = weight_real + i weight_imag``, in
    real arithmetic; complex64."""
    re, im = ops.real(spectrum), ops.imag(spectrum)
    out_re = ops.einsum(equation, re, weight_real) - ops.einsum(equation, im, weight_imag)
    out_im = ops.einsum(equation, re, weight_imag) + ops.einsum(equation, im, weight_real)
    return ops.cast(out_re, mskernel.complex64) + ops.cast(out_im, mskernel.complex64) * \
        Tensor(np.complex64(1j))


class SpectralConv1d(nn.Cell):
    """``irfft(W * rfft(x)[:modes])`` over the last axis of ``[batch, channels, n]``, ``W`` a
    learned complex ``[in, out, modes]`` tensor held as its real and imaginary parts."""

    def __init__(self, channels_in: int, channels_out: int, modes: int) -> None:
        super().__init__()
        self.modes = modes
        self.weight_real, self.weight_imag = _complex_weights(
            (channels_in, channels_out, modes), channels_in * 31 + modes, "weight")

    def construct(self, x: Tensor) -> Tensor:
        n = x.shape[-1]
        spectrum = ops.rfft(x)[..., :self.modes]
        out = _mix(spectrum, self.weight_real, self.weight_imag, "bim,iom->bom")
        return ops.irfft(out, n)  # frequencies above `modes` are zero


class SpectralConv2d(nn.Cell):
    """The 2-D Fourier layer over the last two axes of ``[batch, channels, n1, n2]``:
    ``irfft2`` of learned complex ``[in, out, modes1, modes2]`` weights times the lowest
    frequencies of ``rfft2(x)`` — ``modes2`` along the halved last axis, and along the first
    ``modes1`` non-negative and ``modes1`` negative ones, each block with its own weights;
    every other frequency is zero.  Needs ``n1 >= 2 * modes1``."""

    def __init__(self, channels_in: int, channels_out: int, modes1: int, modes2: int) -> None:
        super().__init__()
        self.modes1, self.modes2 = modes1, modes2
        shape = (channels_in, channels_out, modes1, modes2)
        self.low_real, self.low_imag = _complex_weights(shape, channels_in * 41 + modes1, "low")
        self.high_real, self.high_imag = _complex_weights(shape, channels_out * 43 + modes2,
                                                          "high")

    def construct(self, x: Tensor) -> Tensor:
        batch, _, n1, n2 = x.shape
        m1, m2 = self.modes1, self.modes2
        if n1 < 2 * m1 or n2 // 2 + 1 < m2:
            raise ValueError(f"SpectralConv2d with modes ({m1}, {m2}) needs a grid of at least "
                             f"({2 * m1}, {2 * m2 - 2}), got {tuple(x.shape)}")
        spectrum = ops.rfft2(x)
        equation = "bixy,ioxy->boxy"
        low = _mix(spectrum[:, :, :m1, :m2], self.low_real, self.low_imag, equation)
        high = _mix(spectrum[:, :, n1 - m1:, :m2], self.high_real, self.high_imag, equation)
        gap = ops.zeros((batch, low.shape[1], n1 - 2 * m1, m2), mskernel.complex64)
        return ops.irfft2(ops.concat([low, gap, high], axis=2), s=(n1, n2))


class FNO1d(nn.Cell):
    """Maps ``u0`` sampled on ``[batch, n]`` points of ``[0, 1)`` to ``[batch, n]``."""

    def __init__(self, modes: int = 16, width: int = 64, layers: int = 4) -> None:
        super().__init__()
        self.lift = nn.Dense(2, width)
        self.spectral = nn.CellList([SpectralConv1d(width, width, modes) for _ in range(layers)])
        self.pointwise = nn.CellList([nn.Dense(width, width) for _ in range(layers)])
        self.project = nn.SequentialCell(nn.Dense(width, 128), nn.GELU(), nn.Dense(128, 1))

    def construct(self, u0: Tensor) -> Tensor:
        batch, n = u0.shape
        grid = ops.broadcast_to(Tensor(np.linspace(0, 1, n, endpoint=False, dtype=np.float32)),
                                (batch, n))
        h = self.lift(ops.stack([u0, grid], axis=-1))            # [batch, n, width]
        for k, (spectral, pointwise) in enumerate(zip(self.spectral, self.pointwise)):
            s = ops.transpose(spectral(ops.transpose(h, (0, 2, 1))), (0, 2, 1))
            h = s + pointwise(h)
            if k < len(self.spectral) - 1:
                h = ops.gelu(h)
        return ops.squeeze(self.project(h), -1)


def relative_l2_per_sample(predicted: np.ndarray, exact: np.ndarray) -> float:
    """The mean over samples of ``||predicted - exact|| / ||exact||`` (the FNO paper's metric)."""
    return float(np.mean(np.linalg.norm(predicted - exact, axis=-1)
                         / np.linalg.norm(exact, axis=-1)))


def train(net: FNO1d, inputs: np.ndarray, targets: np.ndarray, epochs: int,
          batch_size: int = 20, learning_rate: float = 1e-3, seed: int = 0) -> list[float]:
    """Adam on the mean relative L2 loss with the learning rate halved every quarter of the
    epochs (the FNO paper's recipe, scaled); returns each epoch's mean loss."""
    total = max(4, epochs * max(1, len(inputs) // batch_size))
    schedule = nn.PiecewiseConstantLR([total * q // 4 for q in (1, 2, 3)],
                                      [learning_rate * 0.5 ** q for q in range(4)])
    optimizer = nn.Adam(net.trainable_params(), schedule)

    def loss_fn(u0: Tensor, u1: Tensor) -> Tensor:
        diff = ops.sqrt(ops.sum((net(u0) - u1) ** 2, axis=1))
        return ops.mean(diff / ops.sqrt(ops.sum(u1 * u1, axis=1)))

    grad_fn = mskernel.value_and_grad(loss_fn, None, optimizer.parameters)

    @mskernel.jit
    def step(u0: Tensor, u1: Tensor) -> Tensor:
        loss, grads = grad_fn(u0, u1)
        optimizer(grads)
        return loss

    rng = np.random.default_rng(seed)
    history = []
    x, y = inputs.astype(np.float32), targets.astype(np.float32)
    for _ in range(epochs):
        order = rng.permutation(len(x))
        losses = [float(step(Tensor(x[b]), Tensor(y[b])).numpy())
                  for b in np.array_split(order, max(1, len(x) // batch_size))
                  if len(b) == batch_size or len(x) < batch_size]
        history.append(float(np.mean(losses)))
    return history


def predict(net: FNO1d, inputs: np.ndarray, batch_size: int = 100) -> np.ndarray:
    x = inputs.astype(np.float32)
    return np.concatenate([np.asarray(net(Tensor(x[i:i + batch_size])).numpy())
                           for i in range(0, len(x), batch_size)])
