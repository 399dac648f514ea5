"""The OpenQASM 2.0 ``qelib1.inc`` gate set and how its names map to this library's gates,
in both directions.

A qelib name stands for a gate with a fixed number of leading control qubits: ``cx`` is X
with one control, ``c3sqrtx`` SX with three.  :data:`FAMILIES` lists, for each gate of this
library, its names by number of controls; the reader also knows the aliases and composite
names (``U``, ``CX``, ``u``, ``p``, ``cp``, ``u2``, ``u0``, ``cu``) and reads ``rccx`` and
``rc3x`` from their qelib1.inc definitions (:data:`DEFINITIONS`).

The reader accepts the extended qelib1.inc that Qiskit writes (``swap``, ``crx``, ``rxx``,
``sx``, ``c3x``, ...); the writer uses only the 23 gates of the specification's qelib1.inc
(:data:`STANDARD`), so any OpenQASM 2.0 reader reads its output.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from .gates import ROTATIONS, U3, FixedGate, Gate, I, ParameterizedGate, PhaseShift
from .parameters import ParameterExpression

Params = Sequence[ParameterExpression]

#: family key → names by number of controls (None: no name for that many controls)
FAMILIES: dict[tuple[str, bool], tuple[Optional[str], ...]] = {
    ("I", False): ("id",), ("X", False): ("x", "cx", "ccx", "c3x", "c4x"),
    ("Y", False): ("y", "cy"), ("Z", False): ("z", "cz"), ("H", False): ("h", "ch"),
    ("S", False): ("s",), ("S", True): ("sdg",), ("T", False): ("t",), ("T", True): ("tdg",),
    ("SX", False): ("sx", "csx", None, "c3sqrtx"), ("SX", True): ("sxdg",),
    ("SWAP", False): ("swap", "cswap"),
    ("RX", False): ("rx", "crx"), ("RY", False): ("ry", "cry"), ("RZ", False): ("rz", "crz"),
    ("PhaseShift", False): ("u1", "cu1"), ("U3", False): ("u3", "cu3"),
    ("Rxx", False): ("rxx",), ("Rzz", False): ("rzz",),
}


#: The gates of qelib1.inc as the OpenQASM 2.0 specification (Cross et al. 2017) defines it.
STANDARD = frozenset({
    "u3", "u2", "u1", "cx", "id", "x", "y", "z", "h", "s", "sdg", "t", "tdg", "rx", "ry", "rz",
    "cz", "cy", "ch", "ccx", "crz", "cu1", "cu3",
})


def _make(key: tuple[str, bool], params: Params) -> Gate:
    name, daggered = key
    if name in ROTATIONS:
        return ParameterizedGate(name, params_=tuple(params))
    return FixedGate(name, daggered=daggered)


def _param_count(key: tuple[str, bool]) -> int:
    return len(ROTATIONS[key[0]].param_names) if key[0] in ROTATIONS else 0


#: qelib1.inc's definitions of the relative-phase Toffolis (read as user gates).
DEFINITIONS = """
gate rccx a,b,c { u2(0,pi) c; u1(pi/4) c; cx b,c; u1(-pi/4) c; cx a,c; u1(pi/4) c; cx b,c;
                  u1(-pi/4) c; u2(0,pi) c; }
gate rc3x a,b,c,d { u2(0,pi) d; u1(pi/4) d; cx c,d; u1(-pi/4) d; u2(0,pi) d; cx a,d;
                    u1(pi/4) d; cx b,d; u1(-pi/4) d; cx a,d; u1(pi/4) d; cx b,d; u1(-pi/4) d;
                    u2(0,pi) d; u1(pi/4) d; cx c,d; u1(-pi/4) d; u2(0,pi) d; }
"""


@dataclass(frozen=True)
class QelibGate:
    """A name the reader knows: its parameter and qubit counts and the gates it stands for
    (``build(params, qubits)``)."""

    name: str
    n_params: int
    n_qubits: int
    build: Callable[[Params, Sequence[int]], list[Gate]]


def _family_key(gate: Gate) -> Optional[tuple[str, bool]]:
    if isinstance(gate, FixedGate):
        return (gate.name, gate.daggered)
    if isinstance(gate, ParameterizedGate):
        return (gate.name, False)
    return None


def qelib_name(gate: Gate) -> Optional[str]:
    """The :data:`STANDARD` name of ``gate`` with its number of controls, if there is one
    (its qubits are then written controls first, then targets)."""
    key = _family_key(gate)
    names = FAMILIES.get(key, ()) if key else ()
    k = len(gate.ctrl_qubits)
    name = names[k] if k < len(names) else None
    return name if name in STANDARD else None


def _placed(key: tuple[str, bool], n_controls: int) -> Callable[[Params, Sequence[int]],
                                                                   list[Gate]]:
    def build(params: Params, qubits: Sequence[int]) -> list[Gate]:
        controls = list(qubits[:n_controls]) or None
        return [_make(key, params).on(list(qubits[n_controls:]), controls)]
    return build


def _reader_table() -> dict[str, QelibGate]:
    table: dict[str, QelibGate] = {}
    for key, names in FAMILIES.items():
        base = _make(key, [ParameterExpression()] * _param_count(key))
        for k, name in enumerate(names):
            if name is not None:
                table[name] = QelibGate(name, _param_count(key), base.n_targets + k,
                                        _placed(key, k))
    aliases = {"u": "u3", "p": "u1", "cp": "cu1"}
    for alias, name in aliases.items():
        table[alias] = QelibGate(alias, table[name].n_params, table[name].n_qubits,
                                 table[name].build)
    half_pi = ParameterExpression(const=math.pi / 2)
    table["u2"] = QelibGate("u2", 2, 1, lambda p, q: [U3(half_pi, p[0], p[1]).on(q[0])])
    table["u0"] = QelibGate("u0", 1, 1, lambda p, q: [I.on(q[0])])
    table["cu"] = QelibGate("cu", 4, 2, lambda p, q: [PhaseShift(p[3]).on(q[0]),
                                                      U3(p[0], p[1], p[2]).on(q[1], q[0])])
    return table


#: Names usable after ``include "qelib1.inc";`` (besides :data:`DEFINITIONS`).
QELIB: dict[str, QelibGate] = _reader_table()

#: The gates OpenQASM 2.0 defines without any include.
BUILTINS: dict[str, QelibGate] = {
    "U": QelibGate("U", 3, 1, QELIB["u3"].build),
    "CX": QelibGate("CX", 0, 2, QELIB["cx"].build),
}
