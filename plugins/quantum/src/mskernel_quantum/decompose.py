"""Rewriting any unitary gate of this library into qelib1.inc instructions, for OpenQASM
export.

A gate with a name in the specification's qelib1.inc
(:func:`~mskernel_quantum.qelib.qelib_name`) is one instruction.  Otherwise:

- a one-target gate with ``k`` controls and matrix ``M``: ``M = e^{i a} U3(theta, phi, lam)``
  (:func:`zyz`); no control gives ``u3``, one control ``cu3`` plus ``u1(a)`` on the control
  (the phase becomes relative), several controls the recursion of Barenco et al. (1995,
  lemma 7.2) with ``V = sqrt(M)``;
- SWAP, ISWAP, Rxx, Ryy and Rzz are first split into one-target gates
  (:func:`split_targets`), the controls kept on the part that needs them.

Custom unitaries on two or more targets have no decomposition here and raise
:class:`~mskernel_quantum.errors.QasmError`.
"""

from __future__ import annotations

import cmath
import math
from typing import Sequence

import numpy as np

from .errors import QasmError
from .gates import (
    FIXED_MATRICES, RX, RZ, FixedGate, Gate, H, ParameterizedGate, Rxx, Ryy, X,
)
from .qelib import FAMILIES, STANDARD, qelib_name

Instruction = tuple[str, tuple[float, ...], tuple[int, ...]]  # (name, angles, qubits)

# standard names of X with 1 and 2 controls (index: number of controls; 0 unused)
_MCX = tuple(n for n in FAMILIES[("X", False)] if n in STANDARD)


def zyz(m: np.ndarray) -> tuple[float, float, float, float]:
    """``(a, theta, phi, lam)`` with ``m = e^{i a} U3(theta, phi, lam)`` for a 2x2 unitary."""
    m00, m01, m10, m11 = m[0, 0], m[0, 1], m[1, 0], m[1, 1]
    theta = 2 * math.atan2(abs(m10), abs(m00))
    tiny = 1e-12
    if abs(m10) < tiny:  # diagonal: the split between phi and lam is free
        alpha = cmath.phase(m00)
        return alpha, theta, 0.0, cmath.phase(m11) - alpha
    if abs(m00) < tiny:  # anti-diagonal: the same freedom, taken as lam = 0
        alpha = cmath.phase(-m01)
        return alpha, theta, cmath.phase(m10) - alpha, 0.0
    alpha = cmath.phase(m00)
    return alpha, theta, cmath.phase(m10) - alpha, cmath.phase(-m01) - alpha


def _sqrt_unitary(m: np.ndarray) -> np.ndarray:
    """A square root of a 2x2 unitary (through its eigenbasis)."""
    w, v = np.linalg.eig(np.asarray(m, dtype=np.complex128))
    return v @ np.diag(np.sqrt(w)) @ np.linalg.inv(v)


def controlled_one_qubit(m: np.ndarray, controls: Sequence[int],
                         target: int) -> list[Instruction]:
    """Instructions for ``m`` on ``target`` where every control is 1."""
    controls = list(controls)
    if not controls:
        _, theta, phi, lam = zyz(m)
        return [("u3", (theta, phi, lam), (target,))]
    if len(controls) < len(_MCX) and np.allclose(m, FIXED_MATRICES["X"], atol=1e-14):
        return [(_MCX[len(controls)], (), (*controls, target))]
    if len(controls) == 1:
        alpha, theta, phi, lam = zyz(m)
        out: list[Instruction] = [("cu3", (theta, phi, lam), (controls[0], target))]
        return out + ([("u1", (alpha,), (controls[0],))] if alpha else [])
    v = _sqrt_unitary(m)
    *rest, last = controls
    flip = controlled_one_qubit(FIXED_MATRICES["X"], rest, last)
    return (controlled_one_qubit(v, [last], target) + flip
            + controlled_one_qubit(v.conj().T, [last], target) + flip
            + controlled_one_qubit(v, rest, target))


def split_targets(gate: Gate) -> list[Gate]:
    """An equivalent sequence of one-target gates for SWAP, ISWAP, Rxx, Ryy and Rzz (with
    any controls): SWAP is three CNOTs, ``Rzz = CX . RZ . CX``, ``Rxx`` and ``Ryy`` are
    ``Rzz`` in the X and Y bases, ``ISWAP = Rxx(-pi/2) Ryy(-pi/2)``.  Only the middle part
    of each needs the controls."""
    a, b = gate.obj_qubits
    controls = gate.ctrl_qubits
    if isinstance(gate, FixedGate) and gate.name == "SWAP":
        return [X.on(a, b), X.on(b, (a, *controls)), X.on(a, b)]
    if isinstance(gate, FixedGate) and gate.name == "ISWAP":
        angle = math.pi / 2 if gate.daggered else -math.pi / 2
        return [Rxx(angle).on([a, b], controls or None), Ryy(angle).on([a, b], controls or None)]
    if isinstance(gate, ParameterizedGate) and gate.name in ("Rxx", "Ryy", "Rzz"):
        core = [X.on(b, a), RZ(gate.params[0]).on(b, controls or None), X.on(b, a)]
        basis = {"Rxx": ([H.on(a), H.on(b)], [H.on(a), H.on(b)]),
                 "Ryy": ([RX(-math.pi / 2).on(a), RX(-math.pi / 2).on(b)],
                         [RX(math.pi / 2).on(a), RX(math.pi / 2).on(b)]),
                 "Rzz": ([], [])}[gate.name]
        return basis[0] + core + basis[1]
    raise QasmError(f"{gate} has no OpenQASM 2.0 form: only gates on one target qubit, "
                    f"SWAP, ISWAP, Rxx, Ryy and Rzz (with any controls) can be written")


def to_qelib(gate: Gate) -> list[Instruction]:
    """qelib1.inc instructions for a unitary gate whose parameters are all bound."""
    name = qelib_name(gate)
    if name is not None:
        angles = tuple(p.value for p in gate.params)
        return [(name, angles, gate.ctrl_qubits + gate.obj_qubits)]
    if len(gate.obj_qubits) == 1:
        return controlled_one_qubit(gate.matrix(), gate.ctrl_qubits, gate.obj_qubits[0])
    return [ins for part in split_targets(gate) for ins in to_qelib(part)]
