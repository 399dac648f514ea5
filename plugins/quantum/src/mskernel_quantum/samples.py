"""Samples of the quantum ops in the form of the core's op samples (what
:func:`mskernel_sdk.samples_for` draws): op name → function of a seeded generator yielding
:class:`~mskernel_sdk.OpSample`.  They drive this plugin's op-table tests and can drive a
backend's conformance run."""

from __future__ import annotations

from typing import Iterator

import numpy as np
from mskernel_sdk import OpSample, SampleFn, random_array

from .circuit import Circuit
from .gates import CNOT, RX, RY, RZ, U3, H, Rzz, X
from .ops import EXPECTATION, EXPECTATION_GRAD

_FLOATS = ("float64", "float32", "float16", "bfloat16")
#: Leading batch shapes of ``params`` (besides none): rows of parameter vectors, an empty batch.
_BATCHES = (((2, 3), "float64"), ((4,), "float32"), ((0,), "float64"))


def _problems() -> list[tuple[Circuit, str]]:
    """(circuit, Hamiltonian text) pairs: parameterised, shared parameters, none at all."""
    ansatz = Circuit([H.on(0), RY("a").on(1), CNOT.on(1, 0), RX("2*b - 0.5").on(0),
                      Rzz("a").on([0, 2]), U3("b", 0.3, "c").on(2, 1)])
    fixed = Circuit([H.on(0), X.on(1, 0)])
    single = Circuit([RZ("t").on(0), RX("t").on(0)])
    return [(ansatz, "0.5 Z0 Z1 + 0.3 X2 - 0.2 Y1"), (fixed, "Z0 Z1"), (single, "Y0 + 1")]


def _samples(op: str) -> SampleFn:
    def fn(rng: np.random.Generator) -> Iterator[OpSample]:
        for circuit, hamiltonian in _problems():
            attrs = {"circuit": circuit.to_json(), "hamiltonian": hamiltonian}
            shapes = [((), dt) for dt in _FLOATS] + list(_BATCHES)
            for batch, dt in shapes:
                params = random_array(rng, batch + (len(circuit.params_name),), dt, -3.0, 3.0)
                yield OpSample(op, (params,), attrs, dtypes=(dt,))
    return fn


SAMPLES: dict[str, SampleFn] = {EXPECTATION: _samples(EXPECTATION),
                                EXPECTATION_GRAD: _samples(EXPECTATION_GRAD)}
