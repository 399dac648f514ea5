"""The privacy accountant against closed forms: the exact ε of the Gaussian mechanism
(Balle & Wang, 2018) and the Rényi-DP of the Gaussian mechanism with its conversion to
(ε, δ) (Canonne, Kamath & Steinke, 2020)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from mskernel_federated.privacy import PrivacyAccountant, noise_for_epsilon


def exact_gaussian_epsilon(sigma: float, rounds: int, delta: float) -> float:
    """ε of ``rounds`` Gaussian mechanisms of noise multiplier ``sigma`` at ``delta``:
    their composition is one Gaussian mechanism of noise ``sigma / sqrt(rounds)``."""
    s = sigma / math.sqrt(rounds)

    def delta_of(eps: float) -> float:
        return norm.cdf(-eps * s + 1 / (2 * s)) - math.exp(eps) * norm.cdf(-eps * s - 1 / (2 * s))

    return brentq(lambda e: delta_of(e) - delta, 0.0, 500.0)


def rdp_gaussian_epsilon(sigma: float, rounds: int, delta: float) -> float:
    """min over α of RDP(α) + log((α−1)/α) − (log δ + log α)/(α − 1), with the Gaussian's
    RDP(α) = rounds·α/(2σ²), on a fine grid of orders."""
    alphas = np.linspace(1.01, 256, 200_000)
    rdp = rounds * alphas / (2 * sigma**2)
    eps = rdp + np.log1p(-1 / alphas) - (np.log(delta) + np.log(alphas)) / (alphas - 1)
    return float(eps.min())


@pytest.mark.parametrize("sigma, rounds", [(1.0, 1), (2.0, 10)])
def test_pld_epsilon_is_the_exact_gaussian_epsilon(sigma: float, rounds: int) -> None:
    delta = 1e-5
    got = PrivacyAccountant(sigma, 1.0, method="pld").epsilon(delta, rounds)
    assert got == pytest.approx(exact_gaussian_epsilon(sigma, rounds, delta), rel=1e-2)


@pytest.mark.parametrize("sigma, rounds", [(1.0, 1), (2.0, 10), (5.0, 100), (1.1, 30)])
def test_rdp_epsilon_is_the_gaussians_rdp_conversion(sigma: float, rounds: int) -> None:
    delta = 1e-5
    got = PrivacyAccountant(sigma, 1.0).epsilon(delta, rounds)
    reference = rdp_gaussian_epsilon(sigma, rounds, delta)
    # the accountant minimises over a coarser grid of orders: never below the fine grid's
    assert reference <= got + 1e-9
    assert got == pytest.approx(reference, rel=2e-2)
    assert got >= exact_gaussian_epsilon(sigma, rounds, delta)  # RDP is an upper bound


def test_subsampling_amplifies_privacy_and_both_accountants_agree() -> None:
    delta, rounds, sigma = 1e-5, 20, 1.0
    full = PrivacyAccountant(sigma, 1.0).epsilon(delta, rounds)
    rdp = PrivacyAccountant(sigma, 0.1).epsilon(delta, rounds)
    pld = PrivacyAccountant(sigma, 0.1, method="pld").epsilon(delta, rounds)
    assert rdp < full / 3
    assert pld <= rdp * 1.001 and pld > 0.6 * rdp


def test_rounds_are_counted() -> None:
    accountant = PrivacyAccountant(2.0, 0.5)
    assert accountant.epsilon(1e-5) == 0.0
    accountant.step(3)
    assert accountant.epsilon(1e-5) == PrivacyAccountant(2.0, 0.5).epsilon(1e-5, 3)


def test_noise_for_epsilon_meets_the_target() -> None:
    sigma = noise_for_epsilon(8.0, 1e-5, rounds=20, sampling_rate=0.5)
    assert PrivacyAccountant(sigma, 0.5).epsilon(1e-5, 20) <= 8.0
    assert PrivacyAccountant(sigma - 0.01, 0.5).epsilon(1e-5, 20) > 8.0


def test_bad_parameters_are_named() -> None:
    with pytest.raises(ValueError, match="positive noise multiplier"):
        PrivacyAccountant(0.0, 0.5)
    with pytest.raises(ValueError, match="sampling rate"):
        PrivacyAccountant(1.0, 1.5)
