"""Quantum gates, in MindQuantum's style: a gate object is placed on qubits with ``.on``::

    X.on(1, 0)                  # X on qubit 1 controlled by qubit 0 (a CNOT)
    RX("theta").on(2)           # a parameterised rotation
    RY(2 * Parameter("a") + 0.5).on(0, [1, 2])   # any gate takes any number of controls
    SWAP.on([0, 3])

A gate's *matrix* acts on its target qubits only; controls are applied by the simulator (the
matrix acts where every control is 1).  Matrix index bit ``j`` is target ``obj_qubits[j]``,
and qubit 0 is the least significant bit of a state index (as in MindQuantum and Qiskit).

Kinds of gates:

- :class:`FixedGate` — ``I, X, Y, Z, H, S, T, SX, SWAP, ISWAP`` and their adjoints (``Sdag``,
  ``Tdag``, ``SXdag``; ``gate.hermitian()`` in general).
- :class:`ParameterizedGate` — ``RX, RY, RZ, PhaseShift, Rxx, Ryy, Rzz`` (one parameter) and
  ``U3`` (three), each parameter a :class:`~mskernel_quantum.parameters.ParameterExpression`.
- :class:`UnivMathGate` — a named custom unitary on any number of qubits.
- :class:`Measure` — a terminal measurement in the computational basis.
- Noise channels live in :mod:`mskernel_quantum.noise`.

``CNOT``, ``CZ`` and ``Toffoli`` are X and Z with a required number of controls.  Gates are
immutable and compare by value.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field, replace
from typing import Callable, ClassVar, Mapping, Optional, Sequence, Union

import numpy as np

from .errors import QuantumError
from .parameters import ExpressionLike, ParameterExpression

Qubits = Union[int, Sequence[int]]
Values = Optional[Mapping[str, float]]


def qubit_tuple(qubits: Optional[Qubits], what: str) -> tuple[int, ...]:
    """Normalise ``3`` / ``[0, 2]`` / ``None`` to a tuple of qubit indices, checked."""
    if qubits is None:
        return ()
    items = [qubits] if isinstance(qubits, (int, np.integer)) else list(qubits)
    out: list[int] = []
    for q in items:
        if isinstance(q, (bool, np.bool_)) or not isinstance(q, (int, np.integer)) or q < 0:
            raise QuantumError(f"{what} must be non-negative integers, got {q!r}")
        out.append(int(q))
    if len(set(out)) != len(out):
        raise QuantumError(f"{what} {out} repeat a qubit")
    return tuple(out)


@dataclass(frozen=True)
class Gate:
    """Base of all gates: a name, the target qubits and the control qubits."""

    name: str
    obj_qubits: tuple[int, ...] = ()
    ctrl_qubits: tuple[int, ...] = ()

    #: Unitary gates can be inverted, differentiated and exported; channels and measurements
    #: cannot.
    unitary: ClassVar[bool] = True

    @property
    def n_targets(self) -> int:
        raise NotImplementedError

    def on(self, obj_qubits: Qubits, ctrl_qubits: Optional[Qubits] = None) -> "Gate":
        """This gate on ``obj_qubits`` (targets) controlled by ``ctrl_qubits``."""
        obj = qubit_tuple(obj_qubits, f"{self.label}: target qubits")
        ctrl = qubit_tuple(ctrl_qubits, f"{self.label}: control qubits")
        if len(obj) != self.n_targets:
            raise QuantumError(f"{self.label} acts on {self.n_targets} target qubit(s), "
                               f"got {list(obj)}")
        if set(obj) & set(ctrl):
            raise QuantumError(f"{self.label}: qubit(s) {sorted(set(obj) & set(ctrl))} are "
                               f"both target and control")
        placed = copy.copy(self)  # works for subclasses with their own constructors
        object.__setattr__(placed, "obj_qubits", obj)
        object.__setattr__(placed, "ctrl_qubits", ctrl)
        return placed

    @property
    def qubits(self) -> tuple[int, ...]:
        return self.obj_qubits + self.ctrl_qubits

    @property
    def placed(self) -> bool:
        return bool(self.obj_qubits)

    @property
    def params(self) -> tuple[ParameterExpression, ...]:
        return ()

    @property
    def params_name(self) -> tuple[str, ...]:
        """Names of the parameters the gate depends on, in order of first appearance."""
        return tuple(dict.fromkeys(n for p in self.params for n in p.names))

    @property
    def parameterized(self) -> bool:
        return bool(self.params_name)

    @property
    def label(self) -> str:
        """The text drawings and messages show: ``RX(2*theta)``, ``S†``."""
        return self.name

    def matrix(self, values: Values = None) -> np.ndarray:
        """The matrix on the targets (complex128, ``2^k x 2^k``)."""
        raise NotImplementedError

    def hermitian(self) -> "Gate":
        """The inverse gate on the same qubits."""
        raise QuantumError(f"{self.label} has no inverse")

    def bind(self, values: Mapping[str, float]) -> "Gate":
        """The gate with the parameters that ``values`` names replaced by numbers."""
        return self

    def __str__(self) -> str:
        if not self.placed:
            return self.label
        where = ",".join(map(str, self.obj_qubits))
        if self.ctrl_qubits:
            where += " <- " + ",".join(map(str, self.ctrl_qubits))
        return f"{self.label}({where})"


# ---------------------------------------------------------------------------------------------
# fixed gates
# ---------------------------------------------------------------------------------------------

_SQRT_HALF = 1 / math.sqrt(2)

FIXED_MATRICES: dict[str, np.ndarray] = {
    "I": np.eye(2),
    "X": np.array([[0, 1], [1, 0]]),
    "Y": np.array([[0, -1j], [1j, 0]]),
    "Z": np.diag([1, -1]),
    "H": np.array([[1, 1], [1, -1]]) * _SQRT_HALF,
    "S": np.diag([1, 1j]),
    "T": np.diag([1, np.exp(1j * math.pi / 4)]),
    "SX": np.array([[1 + 1j, 1 - 1j], [1 - 1j, 1 + 1j]]) / 2,
    "SWAP": np.array([[1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 1]]),
    "ISWAP": np.array([[1, 0, 0, 0], [0, 0, 1j, 0], [0, 1j, 0, 0], [0, 0, 0, 1]]),
}
for _m in FIXED_MATRICES.values():
    _m.setflags(write=False)


@dataclass(frozen=True)
class FixedGate(Gate):
    """A gate without parameters, named in :data:`FIXED_MATRICES`; ``daggered`` marks its
    adjoint (printed with ``†``)."""

    daggered: bool = False

    def __post_init__(self) -> None:
        if self.name not in FIXED_MATRICES:
            raise QuantumError(f"unknown fixed gate {self.name!r}; known: "
                               f"{', '.join(FIXED_MATRICES)}")

    @property
    def n_targets(self) -> int:
        return FIXED_MATRICES[self.name].shape[0].bit_length() - 1

    @property
    def self_inverse(self) -> bool:
        m = FIXED_MATRICES[self.name]
        return bool(np.allclose(m, m.conj().T))

    @property
    def label(self) -> str:
        return self.name + ("†" if self.daggered else "")

    def matrix(self, values: Values = None) -> np.ndarray:
        m = FIXED_MATRICES[self.name].astype(np.complex128)
        return m.conj().T.copy() if self.daggered else m

    def hermitian(self) -> "FixedGate":
        return self if self.self_inverse else replace(self, daggered=not self.daggered)


I = FixedGate("I")  # noqa: E741 - the identity's conventional name
X = FixedGate("X")
Y = FixedGate("Y")
Z = FixedGate("Z")
H = FixedGate("H")
S = FixedGate("S")
T = FixedGate("T")
SX = FixedGate("SX")
SWAP = FixedGate("SWAP")
ISWAP = FixedGate("ISWAP")
Sdag = S.hermitian()
Tdag = T.hermitian()
SXdag = SX.hermitian()


class ControlledForm:
    """A gate that needs a fixed number of controls: ``CNOT.on(target, control)``."""

    def __init__(self, name: str, gate: Gate, n_controls: int) -> None:
        self.name, self.gate, self.n_controls = name, gate, n_controls

    def on(self, obj_qubits: Qubits, ctrl_qubits: Qubits) -> Gate:
        ctrl = qubit_tuple(ctrl_qubits, f"{self.name}: control qubits")
        if len(ctrl) != self.n_controls:
            raise QuantumError(f"{self.name} needs {self.n_controls} control qubit(s), "
                               f"got {list(ctrl)}")
        return self.gate.on(obj_qubits, ctrl)

    def __repr__(self) -> str:
        return self.name


CNOT = ControlledForm("CNOT", X, 1)
CZ = ControlledForm("CZ", Z, 1)
Toffoli = ControlledForm("Toffoli", X, 2)


# ---------------------------------------------------------------------------------------------
# parameterised gates
# ---------------------------------------------------------------------------------------------

Angles = Sequence[Union[float, np.ndarray]]


@dataclass(frozen=True)
class RotationKind:
    """How a parameterised gate depends on its angles.

    ``matrix(angles)`` and ``derivatives(angles)`` (one matrix per angle) define it; each
    angle is a number or an array of a batch shape ``S`` (angles broadcast together), and the
    matrices then have shape ``S + (2^k, 2^k)`` — one per batch entry, which the batched
    evaluation of :mod:`mskernel_quantum.batch` relies on.  ``inverse(params)`` gives the
    parameters of its adjoint; ``pauli_generator[k]`` says whether angle ``k`` enters as
    ``exp(-i angle P / 2)`` for a Pauli string P (generator eigenvalues +-1/2) rather than as a
    phase ``exp(i angle |1><1|)`` (eigenvalues 0, 1), which decides the parameter-shift rule.
    """

    n_targets: int
    param_names: tuple[str, ...]
    matrix: Callable[[Angles], np.ndarray]
    derivatives: Callable[[Angles], list[np.ndarray]]
    inverse: Callable[[tuple[ParameterExpression, ...]], tuple[ParameterExpression, ...]]
    pauli_generator: tuple[bool, ...]


def _entry(angle: Union[float, np.ndarray]) -> np.ndarray:
    """An angle (or a batch of angles) shaped to scale ``d x d`` matrices."""
    return np.asarray(angle, dtype=np.float64)[..., None, None]


def _assemble(rows: Sequence[Sequence[Union[complex, np.ndarray]]]) -> np.ndarray:
    """A matrix from rows of entries that are numbers or arrays of one batch shape ``S``:
    shape ``S + (len(rows), len(rows))``."""
    entries = np.broadcast_arrays(*(np.asarray(x, dtype=np.complex128)
                                    for row in rows for x in row))
    d = len(rows)
    return np.stack(entries, axis=-1).reshape(entries[0].shape + (d, d))


def _pauli_rotation(pauli: np.ndarray) -> RotationKind:
    """exp(-i theta P / 2) = cos(theta/2) I - i sin(theta/2) P."""
    eye = np.eye(pauli.shape[0])

    def matrix(a: Angles) -> np.ndarray:
        half = _entry(a[0]) / 2
        return np.cos(half) * eye - 1j * np.sin(half) * pauli

    def derivatives(a: Angles) -> list[np.ndarray]:
        half = _entry(a[0]) / 2
        return [-0.5 * np.sin(half) * eye - 0.5j * np.cos(half) * pauli]

    n = pauli.shape[0].bit_length() - 1
    return RotationKind(n, ("theta",), matrix, derivatives, lambda p: (-p[0],), (True,))


def _phase_shift() -> RotationKind:
    def matrix(a: Angles) -> np.ndarray:
        return _assemble([[1, 0], [0, np.exp(1j * np.asarray(a[0]))]])

    def derivatives(a: Angles) -> list[np.ndarray]:
        return [_assemble([[0, 0], [0, 1j * np.exp(1j * np.asarray(a[0]))]])]

    return RotationKind(1, ("theta",), matrix, derivatives, lambda p: (-p[0],), (False,))


def _u3() -> RotationKind:
    """U3(theta, phi, lam) = [[c, -e^{i lam} s], [e^{i phi} s, e^{i(phi+lam)} c]]."""

    def parts(a: Angles) -> tuple[np.ndarray, ...]:
        theta, phi, lam = (np.asarray(x, dtype=np.float64) for x in a)
        return (np.cos(theta / 2), np.sin(theta / 2), np.exp(1j * phi), np.exp(1j * lam),
                np.exp(1j * (phi + lam)))

    def matrix(a: Angles) -> np.ndarray:
        c, s, ep, el, epl = parts(a)
        return _assemble([[c, -el * s], [ep * s, epl * c]])

    def derivatives(a: Angles) -> list[np.ndarray]:
        c, s, ep, el, epl = parts(a)
        return [_assemble([[-s / 2, -el * c / 2], [ep * c / 2, -epl * s / 2]]),
                _assemble([[0, 0], [1j * ep * s, 1j * epl * c]]),
                _assemble([[0, -1j * el * s], [0, 1j * epl * c]])]

    return RotationKind(1, ("theta", "phi", "lam"), matrix, derivatives,
                        lambda p: (-p[0], -p[2], -p[1]), (True, False, False))


_PX, _PY, _PZ = FIXED_MATRICES["X"], FIXED_MATRICES["Y"], FIXED_MATRICES["Z"]

ROTATIONS: dict[str, RotationKind] = {
    "RX": _pauli_rotation(_PX),
    "RY": _pauli_rotation(_PY),
    "RZ": _pauli_rotation(_PZ),
    "PhaseShift": _phase_shift(),
    "U3": _u3(),
    "Rxx": _pauli_rotation(np.kron(_PX, _PX)),
    "Ryy": _pauli_rotation(np.kron(_PY, _PY)),
    "Rzz": _pauli_rotation(np.kron(_PZ, _PZ)),
}


@dataclass(frozen=True)
class ParameterizedGate(Gate):
    """A gate of :data:`ROTATIONS` with one expression per angle."""

    params_: tuple[ParameterExpression, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        kind = ROTATIONS.get(self.name)
        if kind is None:
            raise QuantumError(f"unknown parameterised gate {self.name!r}; known: "
                               f"{', '.join(ROTATIONS)}")
        if len(self.params_) != len(kind.param_names):
            raise QuantumError(f"{self.name} takes {len(kind.param_names)} parameter(s) "
                               f"({', '.join(kind.param_names)}), got {len(self.params_)}")

    @property
    def kind(self) -> RotationKind:
        return ROTATIONS[self.name]

    @property
    def n_targets(self) -> int:
        return self.kind.n_targets

    @property
    def params(self) -> tuple[ParameterExpression, ...]:
        return self.params_

    @property
    def label(self) -> str:
        return f"{self.name}({', '.join(str(p) for p in self.params_)})"

    def angles(self, values: Values = None) -> list[float]:
        return [p.evaluate(values or {}) for p in self.params_]

    def matrix(self, values: Values = None) -> np.ndarray:
        return np.asarray(self.kind.matrix(self.angles(values)), dtype=np.complex128)

    def derivatives(self, values: Values = None) -> list[np.ndarray]:
        """d(matrix)/d(angle k) for each angle k (not yet scaled by the chain rule)."""
        return [np.asarray(d, dtype=np.complex128)
                for d in self.kind.derivatives(self.angles(values))]

    def hermitian(self) -> "ParameterizedGate":
        return replace(self, params_=self.kind.inverse(self.params_))

    def bind(self, values: Mapping[str, float]) -> "ParameterizedGate":
        return replace(self, params_=tuple(p.bind(values) for p in self.params_))


def _rotation(name: str) -> Callable[..., ParameterizedGate]:
    kind = ROTATIONS[name]

    def make(*params: ExpressionLike) -> ParameterizedGate:
        return ParameterizedGate(name, params_=tuple(ParameterExpression.coerce(p)
                                                     for p in params))

    args = ", ".join(kind.param_names)
    make.__name__ = make.__qualname__ = name
    make.__doc__ = (f"{name}({args}): each angle a number, a parameter name or a linear "
                    f"expression such as '2*theta + 0.5'.")
    return make


RX = _rotation("RX")
RY = _rotation("RY")
RZ = _rotation("RZ")
PhaseShift = _rotation("PhaseShift")
U3 = _rotation("U3")
Rxx = _rotation("Rxx")
Ryy = _rotation("Ryy")
Rzz = _rotation("Rzz")


# ---------------------------------------------------------------------------------------------
# custom unitaries and measurement
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class UnivMathGate(Gate):
    """A named unitary given by its matrix (``2^k x 2^k`` on ``k`` targets)::

        UnivMathGate("sqrtSWAP", m).on([0, 1])
    """

    matrix_value: np.ndarray = field(default_factory=lambda: np.eye(2), repr=False)

    def __init__(self, name: str, matrix: np.ndarray, obj_qubits: tuple[int, ...] = (),
                 ctrl_qubits: tuple[int, ...] = ()) -> None:
        m = np.array(matrix, dtype=np.complex128)
        d = m.shape[0] if m.ndim == 2 else 0
        if m.ndim != 2 or m.shape != (d, d) or d < 2 or d & (d - 1):
            raise QuantumError(f"UnivMathGate {name!r}: the matrix must be 2^k x 2^k, "
                               f"got shape {m.shape}")
        if not np.allclose(m @ m.conj().T, np.eye(d), atol=1e-8):
            raise QuantumError(f"UnivMathGate {name!r}: the matrix is not unitary")
        m.setflags(write=False)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "obj_qubits", tuple(obj_qubits))
        object.__setattr__(self, "ctrl_qubits", tuple(ctrl_qubits))
        object.__setattr__(self, "matrix_value", m)

    @property
    def n_targets(self) -> int:
        return self.matrix_value.shape[0].bit_length() - 1

    def matrix(self, values: Values = None) -> np.ndarray:
        return self.matrix_value.copy()

    def hermitian(self) -> "UnivMathGate":
        name = self.name[:-1] if self.name.endswith("†") else self.name + "†"
        return UnivMathGate(name, self.matrix_value.conj().T, self.obj_qubits, self.ctrl_qubits)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, UnivMathGate):
            return NotImplemented
        return (self.name, self.obj_qubits, self.ctrl_qubits) == (
            other.name, other.obj_qubits, other.ctrl_qubits) and np.array_equal(
            self.matrix_value, other.matrix_value)

    def __hash__(self) -> int:
        return hash((self.name, self.obj_qubits, self.ctrl_qubits, self.matrix_value.tobytes()))


@dataclass(frozen=True)
class Measure(Gate):
    """A measurement of one qubit in the computational basis, recorded under ``key``
    (default ``q<qubit>``).  Sampling requires measurements to be terminal: no gate may act
    on a qubit after it is measured."""

    key: str = ""
    unitary: ClassVar[bool] = False

    def __init__(self, key: str = "", obj_qubits: tuple[int, ...] = (),
                 ctrl_qubits: tuple[int, ...] = ()) -> None:
        object.__setattr__(self, "name", "Measure")
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "obj_qubits", tuple(obj_qubits))
        object.__setattr__(self, "ctrl_qubits", tuple(ctrl_qubits))

    @property
    def n_targets(self) -> int:
        return 1

    def on(self, obj_qubits: Qubits, ctrl_qubits: Optional[Qubits] = None) -> "Measure":
        if ctrl_qubits:
            raise QuantumError("a measurement cannot be controlled")
        placed = super().on(obj_qubits)
        object.__setattr__(placed, "key", self.key or f"q{placed.obj_qubits[0]}")
        return placed

    @property
    def label(self) -> str:
        return f"M({self.key})" if self.key else "M"
