"""Observables as sums of Pauli strings.

:class:`QubitOperator` is the algebra (MindQuantum's name): ``QubitOperator("Z0 Z1", 0.5) +
QubitOperator("X2", 0.3)``, products multiply Pauli strings with their phases.
:class:`Hamiltonian` is what simulators measure: a Hermitian Pauli sum with real
coefficients, written and read in one text form::

    Hamiltonian("0.5 Z0 Z1 + 0.3 X2 - 1")       # a constant term is a bare number
    Hamiltonian([(0.5, "Z0 Z1"), (0.3, "X2")])  # (coefficient, Pauli string) pairs
    Hamiltonian(QubitOperator("Z0 Z1", 0.5) + QubitOperator("X2", 0.3))

``str(hamiltonian)`` gives text that reads back to an equal Hamiltonian (it is the form the
``quantum.expectation`` op carries as an attribute).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Union

import numpy as np

from .errors import QuantumError
from .parameters import format_number

Pauli = tuple[tuple[int, str], ...]  # ((qubit, "X"|"Y"|"Z"), ...) sorted by qubit

_PAULI_WORD = re.compile(r"([XYZ])(\d+)")
# (a, b) -> (phase, c) with a*b = phase * c for single-qubit Paulis.
_PRODUCT = {
    ("X", "Y"): (1j, "Z"), ("Y", "Z"): (1j, "X"), ("Z", "X"): (1j, "Y"),
    ("Y", "X"): (-1j, "Z"), ("Z", "Y"): (-1j, "X"), ("X", "Z"): (-1j, "Y"),
}


def parse_pauli(text: str) -> Pauli:
    """``"X0 Y3"`` (spaces optional, any order) → ``((0, "X"), (3, "Y"))``."""
    compact = text.replace(" ", "").replace("*", "")
    words = _PAULI_WORD.findall(compact)
    if "".join(p + q for p, q in words) != compact:
        raise QuantumError(f"cannot read Pauli string {text!r}: expected words like 'X0 Z3'")
    qubits = [int(q) for _, q in words]
    if len(set(qubits)) != len(qubits):
        raise QuantumError(f"Pauli string {text!r} names a qubit twice")
    return tuple(sorted((int(q), p) for p, q in words))


def pauli_text(pauli: Pauli) -> str:
    return " ".join(f"{p}{q}" for q, p in pauli)


def _multiply(a: Pauli, b: Pauli) -> tuple[complex, Pauli]:
    phase: complex = 1
    out = dict(a)
    for q, p in b:
        if q not in out:
            out[q] = p
        elif out[q] == p:
            del out[q]
        else:
            factor, out[q] = _PRODUCT[(out[q], p)]
            phase *= factor
    return phase, tuple(sorted(out.items()))


class QubitOperator:
    """A linear combination of Pauli strings with complex coefficients."""

    def __init__(self, term: str = "", coeff: complex = 1.0) -> None:
        self.terms: dict[Pauli, complex] = {}
        if coeff != 0:
            self.terms[parse_pauli(term)] = complex(coeff)

    @classmethod
    def _of(cls, terms: Mapping[Pauli, complex]) -> "QubitOperator":
        op = cls()
        op.terms = {p: c for p, c in terms.items() if c != 0}
        return op

    def __add__(self, other: Union["QubitOperator", complex]) -> "QubitOperator":
        other = other if isinstance(other, QubitOperator) else QubitOperator("", other)
        terms = dict(self.terms)
        for p, c in other.terms.items():
            terms[p] = terms.get(p, 0) + c
        return QubitOperator._of(terms)

    __radd__ = __add__

    def __neg__(self) -> "QubitOperator":
        return self * -1

    def __sub__(self, other: Union["QubitOperator", complex]) -> "QubitOperator":
        return self + (-other)

    def __rsub__(self, other: complex) -> "QubitOperator":
        return (-self) + other

    def __mul__(self, other: Union["QubitOperator", complex]) -> "QubitOperator":
        if not isinstance(other, QubitOperator):
            return QubitOperator._of({p: c * other for p, c in self.terms.items()})
        terms: dict[Pauli, complex] = {}
        for pa, ca in self.terms.items():
            for pb, cb in other.terms.items():
                phase, p = _multiply(pa, pb)
                terms[p] = terms.get(p, 0) + phase * ca * cb
        return QubitOperator._of(terms)

    def __rmul__(self, other: complex) -> "QubitOperator":
        return self * other

    def __eq__(self, other: object) -> bool:
        return isinstance(other, QubitOperator) and self.terms == other.terms

    def __repr__(self) -> str:
        body = " + ".join(f"({c}) [{pauli_text(p)}]" for p, c in self.terms.items())
        return f"QubitOperator({body or '0'})"


@dataclass(frozen=True)
class PauliTerm:
    """``coeff * P`` for a Pauli string ``P`` (empty: the identity)."""

    coeff: float
    pauli: Pauli

    @property
    def xmask(self) -> int:
        """Qubits where P flips the bit (X and Y)."""
        return sum(1 << q for q, p in self.pauli if p in "XY")

    @property
    def zmask(self) -> int:
        """Qubits where P applies a sign (Z and Y)."""
        return sum(1 << q for q, p in self.pauli if p in "ZY")

    @property
    def phased_coeff(self) -> complex:
        """``coeff * i^(number of Y)``: with it, ``P|j> = (-1)^|j & zmask| |j ^ xmask>``."""
        return self.coeff * 1j ** sum(p == "Y" for _, p in self.pauli)


_TERM = re.compile(r"\s*([-+])?\s*((?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)?\s*\*?\s*"
                   r"((?:[XYZ]\d+\s*\*?\s*)*)")


def _parse_terms(text: str) -> dict[Pauli, float]:
    terms: dict[Pauli, float] = {}
    pos, first = 0, True
    text = text.strip()
    while pos < len(text):
        match = _TERM.match(text, pos)
        sign, number, word = match.group(1), match.group(2), match.group(3).strip()
        if match.end() == pos or (number is None and not word) or (sign is None and not first):
            raise QuantumError(f"cannot read Hamiltonian {text!r} at column {pos + 1}: expected "
                               f"a term like '0.5 Z0 Z1' (terms joined by + or -)")
        coeff = float(number) if number is not None else 1.0
        pauli = parse_pauli(word)
        terms[pauli] = terms.get(pauli, 0.0) + (-coeff if sign == "-" else coeff)
        pos, first = match.end(), False
    if first:
        raise QuantumError("a Hamiltonian needs at least one term (write '0' for zero)")
    return terms


class Hamiltonian:
    """A Hermitian Pauli sum with real coefficients (see the module docstring)."""

    def __init__(self, source: Union[str, QubitOperator, "Hamiltonian",
                                     Iterable[tuple[float, str]]]) -> None:
        if isinstance(source, Hamiltonian):
            terms = {t.pauli: t.coeff for t in source.terms}
        elif isinstance(source, str):
            terms = _parse_terms(source)
        elif isinstance(source, QubitOperator):
            terms = {}
            scale = max((abs(c) for c in source.terms.values()), default=0.0)
            for p, c in source.terms.items():
                if abs(c.imag) > 1e-12 * max(scale, 1.0):
                    raise QuantumError(f"the operator is not Hermitian: term {pauli_text(p)!r} "
                                       f"has coefficient {c}")
                terms[p] = c.real
        else:
            terms = {}
            for coeff, word in source:
                if isinstance(coeff, complex) or np.iscomplexobj(coeff):
                    raise QuantumError(f"Hamiltonian coefficients must be real, got {coeff!r}")
                pauli = parse_pauli(word)
                terms[pauli] = terms.get(pauli, 0.0) + float(coeff)
        self.terms: tuple[PauliTerm, ...] = tuple(
            PauliTerm(float(c), p) for p, c in terms.items() if c != 0.0)

    @property
    def n_qubits(self) -> int:
        """One more than the highest qubit a term acts on (0 for a constant)."""
        return max((q + 1 for t in self.terms for q, _ in t.pauli), default=0)

    def by_xmask(self) -> dict[int, list[PauliTerm]]:
        """The terms grouped by X mask (terms of one group share their memory access
        pattern, so a kernel measures a group in one sweep)."""
        groups: dict[int, list[PauliTerm]] = {}
        for term in self.terms:
            groups.setdefault(term.xmask, []).append(term)
        return groups

    def __add__(self, other: "Hamiltonian") -> "Hamiltonian":
        return Hamiltonian([(t.coeff, pauli_text(t.pauli)) for t in (*self.terms, *other.terms)])

    def __mul__(self, scale: float) -> "Hamiltonian":
        return Hamiltonian([(t.coeff * float(scale), pauli_text(t.pauli)) for t in self.terms])

    __rmul__ = __mul__

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Hamiltonian):
            return NotImplemented
        return dict((t.pauli, t.coeff) for t in self.terms) == dict(
            (t.pauli, t.coeff) for t in other.terms)

    def __hash__(self) -> int:
        return hash(frozenset((t.pauli, t.coeff) for t in self.terms))

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        parts = []
        for t in self.terms:
            word = pauli_text(t.pauli)
            number = format_number(abs(t.coeff))
            parts.append(("- " if t.coeff < 0 else "+ ") + (f"{number} {word}" if word
                                                              else number))
        text = " ".join(parts)
        return text[2:] if text.startswith("+") else "-" + text[2:]

    def __repr__(self) -> str:
        return f"Hamiltonian('{self}')"
