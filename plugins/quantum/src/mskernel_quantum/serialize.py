"""The JSON form of circuits: plain data that keeps parameters symbolic and reads back to an
equal circuit.  It is how a circuit travels as an op attribute (``quantum.expectation``)::

    {"format": "mskernel-quantum.circuit", "version": 1, "gates": [
        {"kind": "fixed", "name": "H", "obj": [0], "ctrl": [], "dagger": false},
        {"kind": "rotation", "name": "RX", "obj": [1], "ctrl": [0],
         "params": [{"coeffs": {"theta": 2.0}, "const": 0.5}]}, ...]}

Gate kinds: ``fixed``, ``rotation``, ``unitary`` (``real``/``imag`` matrix rows),
``measure`` (``key``), ``channel`` (``probs``).
"""

from __future__ import annotations

import json
from typing import Any, Callable

import numpy as np

from .circuit import Circuit
from .errors import QuantumError
from .gates import FixedGate, Gate, Measure, ParameterizedGate, UnivMathGate
from .noise import NoiseChannel
from .parameters import ParameterExpression

FORMAT = "mskernel-quantum.circuit"
VERSION = 1


def gate_to_dict(gate: Gate) -> dict[str, Any]:
    data: dict[str, Any] = {"name": gate.name, "obj": list(gate.obj_qubits),
                            "ctrl": list(gate.ctrl_qubits)}
    if isinstance(gate, FixedGate):
        data.update(kind="fixed", dagger=gate.daggered)
    elif isinstance(gate, ParameterizedGate):
        data.update(kind="rotation", params=[p.to_dict() for p in gate.params])
    elif isinstance(gate, UnivMathGate):
        data.update(kind="unitary", real=gate.matrix_value.real.tolist(),
                    imag=gate.matrix_value.imag.tolist())
    elif isinstance(gate, Measure):
        data.update(kind="measure", key=gate.key)
    elif isinstance(gate, NoiseChannel):
        data.update(kind="channel", probs=list(gate.probs))
    else:
        raise QuantumError(f"cannot serialise {gate!r}: unknown gate type")
    return data


_READERS: dict[str, Callable[[dict[str, Any]], Gate]] = {
    "fixed": lambda d: FixedGate(d["name"], daggered=bool(d["dagger"])),
    "rotation": lambda d: ParameterizedGate(
        d["name"], params_=tuple(ParameterExpression.from_dict(p) for p in d["params"])),
    "unitary": lambda d: UnivMathGate(d["name"], np.array(d["real"]) + 1j * np.array(d["imag"])),
    "measure": lambda d: Measure(d["key"]),
    "channel": lambda d: NoiseChannel(d["name"], probs=tuple(float(p) for p in d["probs"])),
}


def gate_from_dict(data: dict[str, Any]) -> Gate:
    reader = _READERS.get(data.get("kind", ""))
    if reader is None:
        raise QuantumError(f"unknown gate kind {data.get('kind')!r} in circuit JSON; known: "
                           f"{', '.join(_READERS)}")
    try:
        return reader(data).on(data["obj"], data["ctrl"] or None)
    except KeyError as exc:
        raise QuantumError(f"gate {data.get('name')!r} in circuit JSON lacks {exc}") from None


def circuit_to_json(circuit: Circuit) -> str:
    """Compact JSON, keys in a fixed order (the same circuit always gives the same text).
    Keys are not sorted: the order of an expression's names decides ``params_name``, which
    must read back unchanged (it orders the ``params`` of ``quantum.expectation``)."""
    document = {"format": FORMAT, "version": VERSION,
                "gates": [gate_to_dict(g) for g in circuit]}
    return json.dumps(document, separators=(",", ":"))


def circuit_from_json(text: str) -> Circuit:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise QuantumError(f"circuit JSON is malformed: {exc}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise QuantumError(f"not a circuit document (expected \"format\": \"{FORMAT}\")")
    if document.get("version") != VERSION:
        raise QuantumError(f"circuit JSON version {document.get('version')!r} is not supported "
                           f"(this mskernel-quantum reads version {VERSION})")
    return Circuit(gate_from_dict(g) for g in document["gates"])
