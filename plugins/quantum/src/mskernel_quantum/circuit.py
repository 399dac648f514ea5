"""Circuits: ordered lists of placed gates, in MindQuantum's style::

    circuit = Circuit()
    circuit += H.on(0)
    circuit += X.on(1, 0)
    circuit += RX("theta").on(1)
    circuit.params_name                     # ['theta']
    bound = circuit.apply_value({"theta": 0.3})
    inverse = circuit.dagger()
    print(circuit)                          # a text drawing; circuit.svg() draws SVG

OpenQASM 2.0 and JSON forms: :meth:`Circuit.from_qasm`, :meth:`Circuit.to_qasm`,
:meth:`Circuit.from_json`, :meth:`Circuit.to_json` (the JSON form keeps parameters symbolic).
"""

from __future__ import annotations

from typing import Iterable, Iterator, Mapping, Optional, Union, overload

import numpy as np

from .errors import ParameterError, QuantumError
from .gates import Gate

CircuitLike = Union[Gate, "Circuit", Iterable[Gate]]


class Circuit:
    """An ordered, mutable list of placed gates (``+=`` appends in place)."""

    def __init__(self, gates: CircuitLike = ()) -> None:
        self._gates: list[Gate] = []
        self += gates

    # -- building ----------------------------------------------------------------------------

    def append(self, gate: Gate) -> "Circuit":
        if not isinstance(gate, Gate):
            hint = " (call .on(targets, controls) first)" if hasattr(gate, "on") else ""
            raise QuantumError(f"a circuit holds placed gates, got {gate!r}{hint}")
        if not gate.placed:
            raise QuantumError(f"gate {gate.label} is not placed on qubits: use "
                               f"{gate.label}.on(targets, controls)")
        self._gates.append(gate)
        return self

    def extend(self, gates: CircuitLike) -> "Circuit":
        if isinstance(gates, Gate) or not isinstance(gates, Iterable):
            return self.append(gates)  # type: ignore[arg-type]
        for gate in list(gates):
            self.append(gate)
        return self

    def __iadd__(self, other: CircuitLike) -> "Circuit":
        return self.extend(other)

    def __add__(self, other: CircuitLike) -> "Circuit":
        return Circuit(self).extend(other)

    def __radd__(self, other: CircuitLike) -> "Circuit":
        return Circuit(other).extend(self)

    # -- the list ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._gates)

    def __iter__(self) -> Iterator[Gate]:
        return iter(self._gates)

    @overload
    def __getitem__(self, index: int) -> Gate: ...
    @overload
    def __getitem__(self, index: slice) -> "Circuit": ...

    def __getitem__(self, index: Union[int, slice]) -> Union[Gate, "Circuit"]:
        if isinstance(index, slice):
            return Circuit(self._gates[index])
        return self._gates[index]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Circuit) and self._gates == other._gates

    __hash__ = None  # type: ignore[assignment] - mutable

    # -- properties --------------------------------------------------------------------------

    @property
    def n_qubits(self) -> int:
        """One more than the highest qubit any gate touches (0 when empty)."""
        return max((q + 1 for g in self._gates for q in g.qubits), default=0)

    @property
    def params_name(self) -> list[str]:
        """Parameter names in order of first appearance: the order of gradient entries and of
        a parameter vector given to a simulator."""
        return list(dict.fromkeys(n for g in self._gates for n in g.params_name))

    @property
    def parameterized(self) -> bool:
        return any(g.parameterized for g in self._gates)

    @property
    def has_measure(self) -> bool:
        return any(g.name == "Measure" for g in self._gates)

    @property
    def noisy(self) -> bool:
        """Whether the circuit holds noise channels."""
        return any(not g.unitary and g.name != "Measure" for g in self._gates)

    # -- transformations ---------------------------------------------------------------------

    def apply_value(self, values: Mapping[str, float]) -> "Circuit":
        """A copy with the named parameters replaced by numbers (names left out stay
        symbolic); naming a parameter the circuit does not have is an error."""
        unknown = sorted(set(values) - set(self.params_name))
        if unknown:
            raise ParameterError(f"the circuit has no parameter(s) {', '.join(unknown)}; "
                                 f"it has {', '.join(self.params_name) or 'none'}")
        return Circuit(g.bind(values) for g in self._gates)

    def dagger(self) -> "Circuit":
        """The inverse circuit: the adjoint gates in reverse order."""
        for gate in self._gates:
            if not gate.unitary:
                raise QuantumError(f"cannot invert a circuit holding {gate}: it is not unitary")
        return Circuit(g.hermitian() for g in reversed(self._gates))

    hermitian = dagger

    def matrix(self, values: Optional[Mapping[str, float]] = None) -> np.ndarray:
        """The circuit's unitary on its ``n_qubits`` qubits (a dense ``2^n x 2^n`` matrix)."""
        from .simulator import circuit_unitary

        return circuit_unitary(self, values)

    # -- forms -------------------------------------------------------------------------------

    @classmethod
    def from_qasm(cls, text: str) -> "Circuit":
        """Read OpenQASM 2.0 (``include "qelib1.inc";`` gates, ``gate`` definitions,
        ``measure``, ``barrier``)."""
        from .qasm import read_qasm

        return read_qasm(text)

    def to_qasm(self) -> str:
        """OpenQASM 2.0 text over the qelib1.inc gate set (parameters must be bound)."""
        from .qasm import write_qasm

        return write_qasm(self)

    @classmethod
    def from_json(cls, text: str) -> "Circuit":
        from .serialize import circuit_from_json

        return circuit_from_json(text)

    def to_json(self) -> str:
        """A JSON form (plain data, parameters symbolic) that :meth:`from_json` reads back."""
        from .serialize import circuit_to_json

        return circuit_to_json(self)

    # -- display -----------------------------------------------------------------------------

    def svg(self) -> str:
        """An SVG drawing of the circuit."""
        from .draw import draw_svg

        return draw_svg(self)

    def _repr_svg_(self) -> str:
        return self.svg()

    def __str__(self) -> str:
        from .draw import draw_text

        return draw_text(self)

    def __repr__(self) -> str:
        body = ", ".join(str(g) for g in self._gates[:8])
        more = f", ... ({len(self._gates)} gates)" if len(self._gates) > 8 else ""
        return f"Circuit([{body}{more}])"
