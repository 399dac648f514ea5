"""Drawing circuits as text (``print(circuit)``) and as SVG (``circuit.svg()``, shown by
Jupyter through ``_repr_svg_``).

Both drawings share one layout: each gate takes the first column after every gate it would
overlap, where a gate occupies the qubit range between its lowest and highest qubit (its
vertical line must not cross another gate).  Targets show the gate's label (``×`` for SWAP,
``⊕`` in SVG for a controlled X), controls a dot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable
from xml.sax.saxutils import escape

from .gates import FixedGate, Gate

CONTROL = "●"
SWAP_MARK = "×"


@dataclass(frozen=True)
class Placement:
    gate: Gate
    column: int

    @property
    def span(self) -> range:
        return range(min(self.gate.qubits), max(self.gate.qubits) + 1)


def layout(gates: Iterable[Gate], n_qubits: int) -> tuple[list[Placement], int]:
    """Each gate's column, and the number of columns."""
    free_from = [0] * n_qubits
    placements = []
    for gate in gates:
        qubits = range(min(gate.qubits), max(gate.qubits) + 1)
        column = max(free_from[q] for q in qubits)
        for q in qubits:
            free_from[q] = column + 1
        placements.append(Placement(gate, column))
    return placements, max(free_from, default=0)


def target_label(gate: Gate) -> str:
    if isinstance(gate, FixedGate) and gate.name == "SWAP":
        return SWAP_MARK
    return "M" if gate.name == "Measure" else gate.label


def _column_widths(placements: list[Placement], n_columns: int) -> list[int]:
    widths = [1] * n_columns
    for p in placements:
        widths[p.column] = max(widths[p.column], len(target_label(p.gate)))
    return widths


# ---------------------------------------------------------------------------------------------
# text
# ---------------------------------------------------------------------------------------------


def draw_text(circuit) -> str:
    """Rows ``q0: ──H────●──`` with connector rows between them."""
    n = circuit.n_qubits
    if n == 0:
        return "(empty circuit)"
    placements, n_columns = layout(circuit, n)
    widths = _column_widths(placements, n_columns)
    # wire[q][c] / link[q][c]: what column c shows on qubit q's row and below it
    wire = [[""] * n_columns for _ in range(n)]
    link = [[False] * n_columns for _ in range(n)]
    for p in placements:
        gate = p.gate
        for q in p.span:
            if q in gate.obj_qubits:
                wire[q][p.column] = target_label(gate)
            elif q in gate.ctrl_qubits:
                wire[q][p.column] = CONTROL
            else:
                wire[q][p.column] = "┼"
            link[q][p.column] = q != p.span[-1]
    prefix = [f"q{q}: " for q in range(n)]
    pad = max(map(len, prefix))
    lines = []
    for q in range(n):
        cells = [wire[q][c].center(widths[c], "─") for c in range(n_columns)]
        lines.append(prefix[q].rjust(pad) + "──" + "──".join(cells) + "──")
        if q < n - 1:
            gaps = [("│" if link[q][c] else " ").center(widths[c]) for c in range(n_columns)]
            lines.append((" " * (pad + 2) + "  ".join(gaps)).rstrip())
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# SVG
# ---------------------------------------------------------------------------------------------

ROW = 48          # vertical distance between qubit wires
CHAR = 8.4        # width of one character of the 14px monospace font
PAD = 10          # space around a label inside its box
LEFT = 56         # room for the qubit names
BOX_H = 30
COLORS = {"fixed": "#5b8def", "rotation": "#f2994a", "custom": "#9b51e0",
          "measure": "#828282", "noise": "#eb5757"}


def _color(gate: Gate) -> str:
    if gate.name == "Measure":
        return COLORS["measure"]
    if not gate.unitary:
        return COLORS["noise"]
    if gate.params:
        return COLORS["rotation"]
    return COLORS["fixed"] if isinstance(gate, FixedGate) else COLORS["custom"]


def _text(x: float, y: float, text: str, fill: str = "#ffffff") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" fill="{fill}" font-family="monospace" '
            f'font-size="14" text-anchor="middle" dominant-baseline="central">'
            f'{escape(text)}</text>')


def _target(x: float, y: float, gate: Gate) -> list[str]:
    if isinstance(gate, FixedGate) and gate.name == "X" and gate.ctrl_qubits:
        return [f'<circle cx="{x:.1f}" cy="{y}" r="11" fill="#ffffff" stroke="#333333" '
                f'stroke-width="2"/>',
                f'<line x1="{x - 11:.1f}" y1="{y}" x2="{x + 11:.1f}" y2="{y}" '
                f'stroke="#333333" stroke-width="2"/>',
                f'<line x1="{x:.1f}" y1="{y - 11}" x2="{x:.1f}" y2="{y + 11}" '
                f'stroke="#333333" stroke-width="2"/>']
    if isinstance(gate, FixedGate) and gate.name == "SWAP":
        return [f'<path d="M{x - 7:.1f},{y - 7} l14,14 M{x - 7:.1f},{y + 7} l14,-14" '
                f'stroke="#333333" stroke-width="2"/>']
    label = target_label(gate)
    width = len(label) * CHAR + 2 * PAD
    return [f'<rect x="{x - width / 2:.1f}" y="{y - BOX_H / 2}" width="{width:.1f}" '
            f'height="{BOX_H}" rx="4" fill="{_color(gate)}"/>', _text(x, y, label)]


def draw_svg(circuit) -> str:
    """A standalone SVG document."""
    n = max(circuit.n_qubits, 1)
    placements, n_columns = layout(circuit, circuit.n_qubits)
    widths = [w * CHAR + 2 * PAD + 12 for w in _column_widths(placements, n_columns)]
    centers, x = [], LEFT + 16
    for w in widths:
        centers.append(x + w / 2)
        x += w
    width, height = x + 16, n * ROW + 8
    y_of = [ROW / 2 + 4 + q * ROW for q in range(n)]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
             f'viewBox="0 0 {width:.1f} {height:.1f}">',
             '<rect width="100%" height="100%" fill="#ffffff"/>']
    for q in range(circuit.n_qubits):
        parts.append(f'<line x1="{LEFT}" y1="{y_of[q]}" x2="{width - 8:.1f}" y2="{y_of[q]}" '
                     f'stroke="#333333" stroke-width="1.5"/>')
        parts.append(_text(LEFT / 2, y_of[q], f"q{q}", fill="#333333"))
    for p in placements:
        cx, gate = centers[p.column], p.gate
        if len(gate.qubits) > 1:
            parts.append(f'<line x1="{cx:.1f}" y1="{y_of[min(gate.qubits)]}" x2="{cx:.1f}" '
                         f'y2="{y_of[max(gate.qubits)]}" stroke="#333333" stroke-width="2"/>')
        for q in gate.ctrl_qubits:
            parts.append(f'<circle cx="{cx:.1f}" cy="{y_of[q]}" r="5" fill="#333333"/>')
        for q in gate.obj_qubits:
            parts.extend(_target(cx, y_of[q], gate))
    parts.append("</svg>")
    return "\n".join(parts)
