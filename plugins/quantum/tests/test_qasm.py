"""OpenQASM 2.0: reading every qelib1.inc name (checked against Qiskit's reader), writing
text Qiskit's strict reader accepts, round trips of random circuits, and errors that name the
line and column."""

import math

import numpy as np
import pytest
from qiskit import qasm2
from qiskit.circuit.random import random_circuit as qiskit_random_circuit
from qiskit.quantum_info import Operator, Statevector

from mskernel_quantum.api import (
    RX, SWAP, Circuit, DepolarizingChannel, H, Measure, QasmError, Simulator, UnivMathGate, X,
)
from mskernel_quantum.qelib import QELIB, STANDARD

from circuits import random_circuit, random_unitary, same_up_to_phase

HEADER = 'OPENQASM 2.0;\ninclude "qelib1.inc";\n'


def _state(circuit: Circuit, n_qubits: int) -> np.ndarray:
    sim = Simulator(n_qubits)
    sim.apply_circuit(circuit)
    return sim.get_qs()


def _equal_up_to_phase(u: np.ndarray, v: np.ndarray) -> bool:
    return abs(abs(np.trace(u.conj().T @ v)) - u.shape[0]) < 1e-9


@pytest.mark.parametrize("name", sorted(QELIB))
def test_every_qelib_name_reads_as_qiskit_reads_it(name):
    spec = QELIB[name]
    params = ",".join(str(0.3 + 0.4 * i) for i in range(spec.n_params))
    params = "2" if name == "u0" else params  # Qiskit reads u0's argument as a delay count
    qubits = ",".join(f"q[{q}]" for q in reversed(range(spec.n_qubits)))
    text = f"{HEADER}qreg q[{spec.n_qubits}];\n{name}{f'({params})' if params else ''} {qubits};"
    ours = Circuit.from_qasm(text).matrix()
    theirs = Operator(qasm2.loads(text, custom_instructions=qasm2.LEGACY_CUSTOM_INSTRUCTIONS))
    assert _equal_up_to_phase(ours, theirs.data)


def test_relative_phase_toffolis_are_read_from_their_definitions():
    text = f"{HEADER}qreg q[4];\nrccx q[0],q[1],q[2];\nrc3x q[0],q[1],q[2],q[3];"
    theirs = Operator(qasm2.loads(text, custom_instructions=qasm2.LEGACY_CUSTOM_INSTRUCTIONS))
    assert _equal_up_to_phase(Circuit.from_qasm(text).matrix(), theirs.data)


@pytest.mark.parametrize("n_qubits", [3, 7, 12])
def test_written_text_is_read_by_qiskit_and_by_us_to_the_same_state(n_qubits, rng):
    circuit = random_circuit(rng, n_qubits, 40, max_controls=3, custom_targets=1)
    bound = circuit.apply_value({n: float(rng.uniform(-3, 3)) for n in circuit.params_name})
    text = bound.to_qasm()
    names = {line.split("(")[0].split(" ")[0] for line in text.splitlines()[3:]}
    assert names <= STANDARD, names - STANDARD
    expected = _state(bound, n_qubits)
    theirs = np.asarray(Statevector(qasm2.loads(text)).data)
    assert same_up_to_phase(theirs, expected, 1e-10)
    ours = Circuit.from_qasm(text)
    assert same_up_to_phase(_state(ours, n_qubits), expected, 1e-10)
    assert Circuit.from_qasm(ours.to_qasm()).to_qasm() == ours.to_qasm()


@pytest.mark.parametrize("seed", range(4))
def test_qiskit_written_text_reads_to_qiskits_state(seed):
    qc = qiskit_random_circuit(6, 12, max_operands=3, seed=seed)
    text = qasm2.dumps(qc)
    expected = np.asarray(Statevector(qc).data)
    assert same_up_to_phase(_state(Circuit.from_qasm(text), 6), expected, 1e-10)


def test_definitions_registers_broadcast_and_measurements():
    text = HEADER + """
    // a user gate with parameters, used on two registers
    gate twist(theta, phi) a, b { rx(theta / 2) a; cx a, b; rz(-phi + pi) b; }
    qreg a[2]; qreg b[2];
    creg m[2];
    h a;                     // broadcast over the register
    twist(0.4, 2^2) a, b;    // element by element: (a[0], b[0]) and (a[1], b[1])
    barrier a, b;
    measure b -> m;
    """
    circuit = Circuit.from_qasm(text)
    assert circuit.n_qubits == 4
    assert [g.key for g in circuit if isinstance(g, Measure)] == ["m0", "m1"]
    assert [g.obj_qubits[0] for g in circuit if isinstance(g, Measure)] == [2, 3]
    expected = Circuit([H.on(0), H.on(1)])
    for a, b in ((0, 2), (1, 3)):
        expected += [RX(0.2).on(a), X.on(b, a)]
        expected += Circuit.from_qasm(f"{HEADER}qreg q[4]; rz({math.pi - 4}) q[{b}];")
    unitary = Circuit([g for g in circuit if not isinstance(g, Measure)])
    np.testing.assert_allclose(unitary.matrix(), expected.matrix(), atol=1e-12)


@pytest.mark.parametrize("text,message", [
    ("qreg q[2];\nh q[0];", r"2:1: unknown gate 'h' \(missing include"),
    (HEADER + "qreg q[2];\ncx q[0];", r"4:1: cx takes 0 parameter\(s\) and 2 qubit\(s\)"),
    (HEADER + "qreg q[2];\nrx(0.1) q[0]\nh q[1];", r"5:1: expected ';', found 'h'"),
    (HEADER + "qreg q[2];\nh q[2];", r"4:3: q\[2\] is outside register q\[2\]"),
    (HEADER + "qreg q[2];\nrx(theta) q[0];", r"4:1: .*unknown name 'theta'"),
    (HEADER + "qreg q[2];\ncx q[0], q[0];", "applied to a qubit twice"),
    (HEADER + "qreg q[2];\nqreg r[3];\ncx q, r;", "registers of different sizes"),
    (HEADER + "qreg q[1];\nopaque g a;", "'opaque' is not supported"),
    ('OPENQASM 2.0;\ninclude "other.inc";', r"2:1: cannot include 'other.inc'"),
    ("OPENQASM 3.0;", "OpenQASM 3.0 is not supported"),
    (HEADER + "qreg q[1];\nh q[0]; @", r"4:9: unexpected character '@'"),
])
def test_read_errors_name_line_and_column(text, message):
    with pytest.raises(QasmError, match=message):
        Circuit.from_qasm(text)


def test_write_errors_say_what_has_no_qasm_form():
    with pytest.raises(QasmError, match="bind theta with circuit.apply_value"):
        Circuit([RX("theta").on(0)]).to_qasm()
    with pytest.raises(QasmError, match="noise channels are not gates"):
        Circuit([DepolarizingChannel(0.1).on(0)]).to_qasm()
    with pytest.raises(QasmError, match="has no OpenQASM 2.0 form"):
        Circuit([UnivMathGate("U", random_unitary(np.random.default_rng(0), 4)).on([0, 1])
                 ]).to_qasm()


def test_measurements_are_written_in_order():
    text = Circuit([H.on(1), SWAP.on([0, 1]), Measure().on(1), Measure().on(0)]).to_qasm()
    assert "creg c[2];" in text
    assert text.strip().endswith("measure q[1] -> c[0];\nmeasure q[0] -> c[1];")
