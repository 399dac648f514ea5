"""Differential privacy of the global model: Flower's DP strategy wrappers, and the privacy
spent, from Google's ``dp-accounting`` (its RDP accountant by default, PLD on request).

Each round is a Gaussian mechanism on the mean of the sampled clients' clipped updates:
one client's update moves the mean by at most ``clipping_norm / m`` (``m`` sampled clients)
and the noise has standard deviation ``noise_multiplier * clipping_norm / m``, so the round
is the Gaussian mechanism with noise multiplier ``noise_multiplier``, subsampled with rate
``q = m / clients`` (accounted as Poisson sampling, as DP-FedAvg does: McMahan et al., 2018).
"""

from __future__ import annotations

from typing import Any, Literal

import dp_accounting
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant

from .config import PrivacyConfig

Method = Literal["rdp", "pld"]


class PrivacyAccountant:
    """ε at a given δ after some rounds of the subsampled Gaussian mechanism."""

    def __init__(self, noise_multiplier: float, sampling_rate: float,
                 method: Method = "rdp") -> None:
        if noise_multiplier <= 0:
            raise ValueError(f"privacy accounting needs a positive noise multiplier, got "
                             f"{noise_multiplier}")
        if not 0 < sampling_rate <= 1:
            raise ValueError(f"sampling rate must be in (0, 1], got {sampling_rate}")
        self.noise_multiplier = noise_multiplier
        self.sampling_rate = sampling_rate
        self.method = method
        self.rounds = 0

    def _event(self, rounds: int) -> Any:
        gaussian = dp_accounting.GaussianDpEvent(self.noise_multiplier)
        step = (gaussian if self.sampling_rate == 1.0
                else dp_accounting.PoissonSampledDpEvent(self.sampling_rate, gaussian))
        return dp_accounting.SelfComposedDpEvent(step, rounds)

    def step(self, rounds: int = 1) -> None:
        self.rounds += rounds

    def epsilon(self, delta: float, rounds: int | None = None) -> float:
        """ε after ``rounds`` rounds (default: the rounds stepped so far)."""
        count = self.rounds if rounds is None else rounds
        if count == 0:
            return 0.0
        accountant: Any = (rdp_privacy_accountant.RdpAccountant() if self.method == "rdp"
                           else pld_privacy_accountant.PLDAccountant())
        accountant.compose(self._event(count))
        return float(accountant.get_epsilon(delta))


def noise_for_epsilon(target_epsilon: float, delta: float, rounds: int,
                      sampling_rate: float) -> float:
    """The smallest noise multiplier (to 1e-2) whose ε after ``rounds`` is at most
    ``target_epsilon`` (bisection over the accountant)."""
    low, high = 1e-2, 1.0
    while PrivacyAccountant(high, sampling_rate).epsilon(delta, rounds) > target_epsilon:
        low, high = high, high * 2
        if high > 1e4:
            raise ValueError(f"ε = {target_epsilon} is out of reach for {rounds} rounds")
    while high - low > 1e-2:
        mid = (low + high) / 2
        if PrivacyAccountant(mid, sampling_rate).epsilon(delta, rounds) > target_epsilon:
            low = mid
        else:
            high = mid
    return high


def wrap_strategy(strategy: Any, privacy: PrivacyConfig, sampled_clients: int) -> Any:
    """``strategy`` inside Flower's DP wrapper for ``privacy.mode`` (unchanged when off)."""
    from flwr.server.strategy import (
        DifferentialPrivacyClientSideFixedClipping, DifferentialPrivacyServerSideFixedClipping,
    )

    if privacy.mode == "off":
        return strategy
    wrapper = (DifferentialPrivacyClientSideFixedClipping if privacy.mode == "central"
               else DifferentialPrivacyServerSideFixedClipping)
    return wrapper(strategy, noise_multiplier=privacy.noise_multiplier,
                   clipping_norm=privacy.clipping_norm, num_sampled_clients=sampled_clients)
