"""Gate fusion: consecutive gates on the same one or two qubits merged into one 2x2 or 4x4
matrix before simulation (as qsim and lightning do), so a layer of rotations and CNOTs costs
one pass over the state per qubit pair instead of one per gate.

A block is built greedily in circuit order.  A gate joins the block that last touched all of
its qubits when that block covers them; otherwise a two-qubit gate opens a block on its pair
that takes in the one-qubit blocks that last touched either qubit, and a one-qubit gate opens
a block of its own.  Moving a gate into an earlier block is exact: no block after
it touches the gate's qubits.  Gates on three or more qubits (targets and controls) stay
blocks of their own, controls kept.

Each block carries, beside its matrix ``B = G_m ... G_1``, the derivative of ``B`` with
respect to every differentiated angle inside it (``G_m ... dG_j ... G_1``) and the angle's
linear coefficients, so the adjoint method differentiates fused blocks exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from .gates import Gate, ParameterizedGate

_SWAP = np.eye(4)[[0, 2, 1, 3]]


@dataclass
class Block:
    """``matrix`` on ``targets`` (index bit j is ``targets[j]``) where every control is 1;
    ``derivatives[i]`` is d(matrix)/d(angle i), and ``coeffs[i]`` maps the parameter names
    entering angle i to their coefficients."""

    targets: tuple[int, ...]
    controls: tuple[int, ...]
    matrix: np.ndarray
    derivatives: list[np.ndarray] = field(default_factory=list)
    coeffs: list[Mapping[str, float]] = field(default_factory=list)

    def left_multiply(self, g: np.ndarray, derivatives: Sequence[np.ndarray],
                      coeffs: Sequence[Mapping[str, float]]) -> None:
        """Append a gate (``g`` and its angle derivatives, embedded in this block's space)."""
        self.derivatives = [g @ d for d in self.derivatives] + [d @ self.matrix
                                                                 for d in derivatives]
        self.coeffs = list(self.coeffs) + list(coeffs)
        self.matrix = g @ self.matrix


def differentiated_angles(gate: Gate) -> list[int]:
    """The indices of the gate's angles that depend on a named parameter."""
    if not isinstance(gate, ParameterizedGate):
        return []
    return [k for k, p in enumerate(gate.params) if not p.is_constant]


def _controlled(m: np.ndarray, n_controls: int) -> np.ndarray:
    """``m`` acting where the controls (the high index bits) are all 1; identity elsewhere."""
    if not n_controls:
        return m
    full = np.eye(m.shape[0] << n_controls, dtype=np.complex128)
    full[-m.shape[0]:, -m.shape[0]:] = m
    return full


def _embed(m: np.ndarray, qubits: tuple[int, ...], targets: tuple[int, ...]) -> np.ndarray:
    """A matrix on ``qubits`` (one or two of ``targets``) as a matrix on ``targets``."""
    if qubits == targets:
        return m
    if len(qubits) == 2:  # the same pair in the other order
        return _SWAP @ m @ _SWAP
    if len(targets) == 1:
        return m
    eye = np.eye(2)
    return np.kron(eye, m) if qubits[0] == targets[0] else np.kron(m, eye)


def _gate_block(gate: Gate, values: Mapping[str, float], fuse: bool,
                differentiate: bool) -> Block:
    """The gate as a block: controls folded into the matrix when it is to be fused."""
    angles = differentiated_angles(gate) if differentiate else []
    derivatives = ([gate.derivatives(values)[k] for k in angles]  # type: ignore[attr-defined]
                   if angles else [])
    coeffs = [gate.params[k].coeffs for k in angles]
    if not fuse:
        return Block(gate.obj_qubits, gate.ctrl_qubits, gate.matrix(values), derivatives,
                     coeffs)
    c = len(gate.ctrl_qubits)
    return Block(gate.qubits, (), _controlled(gate.matrix(values), c),
                 [_derivative_controlled(d, c) for d in derivatives], coeffs)


def _derivative_controlled(d: np.ndarray, n_controls: int) -> np.ndarray:
    """The derivative of a controlled matrix: ``d`` where the controls are 1, 0 elsewhere."""
    if not n_controls:
        return d
    full = np.zeros((d.shape[0] << n_controls,) * 2, dtype=np.complex128)
    full[-d.shape[0]:, -d.shape[0]:] = d
    return full


def _fusable(block: Block) -> bool:
    return not block.controls and len(block.targets) <= 2


def fuse(gates: Sequence[Gate], values: Mapping[str, float],
         differentiate: bool = False) -> list[Block]:
    """The unitary ``gates`` as fused blocks, in the order to apply them; with
    ``differentiate``, each block carries its angle derivatives."""
    blocks: list[Block | None] = []
    last: dict[int, int] = {}  # qubit -> index of the latest block touching it
    for gate in gates:
        qubits = gate.qubits
        if len(qubits) > 2:
            blocks.append(_gate_block(gate, values, False, differentiate))
            for q in qubits:
                last[q] = len(blocks) - 1
            continue
        g = _gate_block(gate, values, True, differentiate)
        owners = {last[q] for q in qubits if q in last}
        if len(owners) == 1:
            (i,) = owners
            block = blocks[i]
            if (block is not None and _fusable(block) and set(qubits) <= set(block.targets)):
                block.left_multiply(_embed(g.matrix, qubits, block.targets),
                                    [_embed(d, qubits, block.targets) for d in g.derivatives],
                                    g.coeffs)
                continue
        if len(qubits) == 2:  # take in the one-qubit blocks that last touched its qubits
            merged = Block(qubits, (), np.eye(4, dtype=np.complex128))
            for i in sorted(owners):
                old = blocks[i]
                if old is None or not _fusable(old) or len(old.targets) != 1:
                    continue
                blocks[i] = None
                # blocks on different qubits commute: each enters next to the others
                merged.left_multiply(_embed(old.matrix, old.targets, qubits),
                                     [_embed(d, old.targets, qubits) for d in old.derivatives],
                                     old.coeffs)
            merged.left_multiply(g.matrix, g.derivatives, g.coeffs)
            blocks.append(merged)
        else:
            blocks.append(g)
        for q in qubits:
            last[q] = len(blocks) - 1
    return [b for b in blocks if b is not None]
