"""Drawings: the text layout, and SVG that parses as XML with one shape per gate part."""

import xml.etree.ElementTree as ET

import numpy as np

from mskernel_quantum.api import (
    RX, RY, SWAP, Circuit, DepolarizingChannel, H, Measure, UnivMathGate, X,
)

SVG = "{http://www.w3.org/2000/svg}"


def test_text_drawing():
    circuit = Circuit([H.on(0), X.on(1, 0), RX("theta").on(2), RY("2*a").on(2, 0),
                       SWAP.on([0, 1]), Measure().on(1)])
    assert str(circuit) == "\n".join([
        "q0: ──────H──────●─────●─────×─────",
        "                 │     │     │",
        "q1: ─────────────X─────┼─────×──M──",
        "                       │",
        "q2: ──RX(theta)─────RY(2*a)────────",
    ])
    assert str(Circuit()) == "(empty circuit)"


def test_gates_skip_columns_only_where_their_line_would_cross():
    drawing = str(Circuit([H.on(0), H.on(2), X.on(2, 0), H.on(1)])).splitlines()
    assert drawing[0].index("H") == drawing[4].index("H")        # same column
    assert drawing[2].index("┼") == drawing[0].index("●")        # the line crosses q1
    assert drawing[2].index("H") > drawing[2].index("┼")         # so H on q1 comes after


def test_svg_is_valid_xml_with_every_gate_drawn():
    circuit = Circuit([H.on(0), X.on(1, 0), RX("theta").on(2), SWAP.on([0, 2], 1),
                       UnivMathGate("U<&>", np.eye(2)).on(1), DepolarizingChannel(0.1).on(0),
                       Measure().on(2)])
    svg = circuit._repr_svg_()
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert texts[:3] == ["q0", "q1", "q2"]
    assert {"H", "RX(theta)", "U<&>", "Dep(0.1)", "M"} <= set(texts)
    assert len(list(root.iter(f"{SVG}circle"))) == 3  # the CNOT's dot and ⊕, SWAP's control
    assert len(list(root.iter(f"{SVG}path"))) == 2    # the two crosses of SWAP
    assert float(root.get("width")) > 0 and float(root.get("height")) > 0
    ET.fromstring(Circuit().svg())
