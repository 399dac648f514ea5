"""Noise channels: gates that are quantum channels given by Kraus operators.

``PauliChannel(px, py, pz)``, ``BitFlipChannel(p)``, ``PhaseFlipChannel(p)``,
``DepolarizingChannel(p)`` (``rho -> (1 - p) rho + p I/2``, so ``p`` may go up to 4/3) and
``AmplitudeDampingChannel(gamma)``, each on one qubit::

    circuit += DepolarizingChannel(0.05).on(2)

A density-matrix simulator applies the channel exactly; a state-vector simulator samples one
Kraus operator per application (a quantum trajectory), so averages over shots converge to the
density-matrix result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, ClassVar, Optional

import numpy as np

from .errors import QuantumError
from .gates import FIXED_MATRICES, Gate, Qubits
from .parameters import format_number


@dataclass(frozen=True)
class ChannelKind:
    """A family of channels: its short label, probability names, the check of their values,
    and the Kraus operators they give."""

    short: str
    prob_names: tuple[str, ...]
    valid: Callable[[tuple[float, ...]], bool]
    rule: str
    kraus: Callable[[tuple[float, ...]], list[np.ndarray]]


def _pauli_kraus(px: float, py: float, pz: float) -> list[np.ndarray]:
    weights = {"I": 1 - px - py - pz, "X": px, "Y": py, "Z": pz}
    return [math.sqrt(w) * FIXED_MATRICES[p].astype(np.complex128)
            for p, w in weights.items() if w > 0]


def _amplitude_damping(gamma: float) -> list[np.ndarray]:
    return [np.array([[1, 0], [0, math.sqrt(1 - gamma)]], dtype=np.complex128),
            np.array([[0, math.sqrt(gamma)], [0, 0]], dtype=np.complex128)]


def _in_unit(values: tuple[float, ...]) -> bool:
    return all(0 <= v <= 1 for v in values) and sum(values) <= 1 + 1e-12


CHANNELS: dict[str, ChannelKind] = {
    "PauliChannel": ChannelKind("PC", ("px", "py", "pz"), _in_unit,
                                "px, py, pz >= 0 and px + py + pz <= 1",
                                lambda p: _pauli_kraus(*p)),
    "BitFlipChannel": ChannelKind("BF", ("p",), _in_unit, "0 <= p <= 1",
                                  lambda p: _pauli_kraus(p[0], 0, 0)),
    "PhaseFlipChannel": ChannelKind("PF", ("p",), _in_unit, "0 <= p <= 1",
                                    lambda p: _pauli_kraus(0, 0, p[0])),
    "DepolarizingChannel": ChannelKind("Dep", ("p",), lambda p: 0 <= p[0] <= 4 / 3,
                                       "0 <= p <= 4/3",
                                       lambda p: _pauli_kraus(*(p[0] / 4,) * 3)),
    "AmplitudeDampingChannel": ChannelKind("AD", ("gamma",), _in_unit, "0 <= gamma <= 1",
                                           lambda p: _amplitude_damping(p[0])),
}


@dataclass(frozen=True)
class NoiseChannel(Gate):
    """A channel of :data:`CHANNELS` on one qubit."""

    probs: tuple[float, ...] = ()
    unitary: ClassVar[bool] = False

    def __post_init__(self) -> None:
        kind = CHANNELS.get(self.name)
        if kind is None:
            raise QuantumError(f"unknown channel {self.name!r}; known: {', '.join(CHANNELS)}")
        if len(self.probs) != len(kind.prob_names) or not kind.valid(self.probs):
            raise QuantumError(f"{self.name}({', '.join(kind.prob_names)}) needs {kind.rule}, "
                               f"got {', '.join(map(format_number, self.probs))}")

    @property
    def n_targets(self) -> int:
        return 1

    def on(self, obj_qubits: Qubits, ctrl_qubits: Optional[Qubits] = None) -> "NoiseChannel":
        if ctrl_qubits:
            raise QuantumError(f"{self.name} cannot be controlled")
        return super().on(obj_qubits)  # type: ignore[return-value]

    @property
    def label(self) -> str:
        return f"{CHANNELS[self.name].short}({', '.join(map(format_number, self.probs))})"

    def kraus(self) -> list[np.ndarray]:
        """The Kraus operators ``K_i`` (``sum_i K_i^dag K_i = I``)."""
        return CHANNELS[self.name].kraus(self.probs)


def _channel(name: str) -> Callable[..., NoiseChannel]:
    kind = CHANNELS[name]

    def make(*probs: float) -> NoiseChannel:
        return NoiseChannel(name, probs=tuple(float(p) for p in probs))

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"{name}({', '.join(kind.prob_names)}) with {kind.rule}."
    return make


PauliChannel = _channel("PauliChannel")
BitFlipChannel = _channel("BitFlipChannel")
PhaseFlipChannel = _channel("PhaseFlipChannel")
DepolarizingChannel = _channel("DepolarizingChannel")
AmplitudeDampingChannel = _channel("AmplitudeDampingChannel")
